"""Original card faces drawn from the card data (no publisher art), and the face set in use.

Each of the 112 cards gets a face at real proportions (63 × 88 mm, drawn at 4 px/mm): a frame by
level, the energy color, cost and VP, the type icon and the effect as a pictogram with a short
text. Everything a stacked card leaves visible sits in the top band (the top 20 mm), including a
7-bit collector code, so that visually identical cards (the four Starting Gizmos, #92/#93, #94/#95)
stay distinguishable on drawn faces. Enrolled photos replace drawn faces (see :mod:`vision.enrol`).
"""

from __future__ import annotations

import math
import textwrap
from functools import cache, lru_cache
from pathlib import Path

import cv2
import numpy as np

from referee.gizmos.cards import COLORS, Card, Effect, default_cards

CARD_MM: tuple[float, float] = (63.0, 88.0)
BAND_MM = 20.0  # the part of a stacked card left visible
FACE_PX_PER_MM = 4
FACE_W, FACE_H = int(CARD_MM[0] * FACE_PX_PER_MM), int(CARD_MM[1] * FACE_PX_PER_MM)
BAND_PX = int(BAND_MM * FACE_PX_PER_MM)
N_CARDS = 112
CODE_BITS = 7

Color = tuple[int, int, int]
#: Energy colors in BGR, shared with the marble renderer.
ENERGY_BGR: dict[str, Color] = {
    "red": (40, 35, 205),
    "blue": (205, 110, 25),
    "black": (35, 35, 35),
    "yellow": (25, 205, 235),
}
LEVEL_FRAME: dict[int, Color] = {0: (150, 150, 150), 1: (60, 110, 170), 2: (200, 195, 190), 3: (40, 180, 225)}
WHITE: Color = (255, 255, 255)
INK: Color = (20, 20, 20)
FONT = cv2.FONT_HERSHEY_SIMPLEX
FONT_BOLD = cv2.FONT_HERSHEY_DUPLEX


def _text(
    img: np.ndarray, s: str, center: tuple[int, int], scale: float, color: Color, thick: int = 2
) -> None:
    """Centred Hershey text (built into OpenCV, so no font file is needed)."""
    (w, h), _ = cv2.getTextSize(s, FONT_BOLD, scale, thick)
    cv2.putText(img, s, (center[0] - w // 2, center[1] + h // 2), FONT_BOLD, scale, color, thick, cv2.LINE_AA)


def _dot(img: np.ndarray, c: tuple[int, int], r: int, color: str) -> None:
    """An energy dot; ``any`` is drawn as four quarters."""
    if color in ENERGY_BGR:
        cv2.circle(img, c, r, ENERGY_BGR[color], -1, cv2.LINE_AA)
    else:
        for i, name in enumerate(COLORS):
            cv2.ellipse(img, c, (r, r), 0, 90 * i, 90 * (i + 1), ENERGY_BGR[name], -1, cv2.LINE_AA)
    cv2.circle(img, c, r, WHITE, 2, cv2.LINE_AA)


def type_icon(img: np.ndarray, kind: str, c: tuple[int, int], r: int, color: Color = INK) -> None:
    """The icon of a dashboard column (or action) drawn with primitives."""
    x, y = c
    t = max(2, r // 6)
    if kind == "upgrade":
        pts = np.array(
            [
                [x, y - r],
                [x + r, y],
                [x + r // 3, y],
                [x + r // 3, y + r],
                [x - r // 3, y + r],
                [x - r // 3, y],
                [x - r, y],
            ],
            np.int32,
        )
        cv2.fillPoly(img, [pts], color, cv2.LINE_AA)
    elif kind == "converter":
        cv2.arrowedLine(img, (x - r, y - r // 3), (x + r, y - r // 3), color, t, cv2.LINE_AA, tipLength=0.4)
        cv2.arrowedLine(img, (x + r, y + r // 3), (x - r, y + r // 3), color, t, cv2.LINE_AA, tipLength=0.4)
    elif kind == "file":
        pts = np.array(
            [
                [x - r * 2 // 3, y - r],
                [x + r // 3, y - r],
                [x + r * 2 // 3, y - r * 2 // 3],
                [x + r * 2 // 3, y + r],
                [x - r * 2 // 3, y + r],
            ],
            np.int32,
        )
        cv2.polylines(img, [pts], True, color, t, cv2.LINE_AA)
        for k in (-1, 0, 1):
            cv2.line(img, (x - r // 3, y + k * r // 3), (x + r // 3, y + k * r // 3), color, max(1, t // 2))
    elif kind == "pick":
        cv2.circle(img, (x, y + r // 3), r * 2 // 3, color, t, cv2.LINE_AA)
        cv2.arrowedLine(img, (x, y - r // 4), (x, y - r), color, t, cv2.LINE_AA, tipLength=0.5)
    elif kind == "build":
        star = []
        for k in range(16):
            rad = r if k % 2 == 0 else r * 2 // 3
            a = k * math.pi / 8
            star.append([x + int(rad * math.cos(a)), y + int(rad * math.sin(a))])
        cv2.fillPoly(img, [np.array(star, np.int32)], color, cv2.LINE_AA)
        cv2.circle(img, c, r // 3, WHITE, -1, cv2.LINE_AA)
    else:  # research: a magnifier
        cv2.circle(img, (x - r // 4, y - r // 4), r * 2 // 3, color, t, cv2.LINE_AA)
        cv2.line(img, (x + r // 4, y + r // 4), (x + r, y + r), color, t + 1, cv2.LINE_AA)


def _reward(img: np.ndarray, e: Effect, c: tuple[int, int], r: int) -> None:
    """The reward half of a triggered effect."""
    x, y = c
    if e.reward == "draw_random":
        cv2.circle(img, c, r, (150, 150, 150), -1, cv2.LINE_AA)
        _text(img, "?", c, r / 14, WHITE, 2)
    elif e.reward == "pick_row":
        type_icon(img, "pick", c, r)
    elif e.reward == "vp_tokens":
        _star(img, c, r, (0, 200, 255))
    elif e.reward == "file_action":
        type_icon(img, "file", c, r)
    elif e.reward == "research_action":
        type_icon(img, "research", c, r)
    else:  # build_free
        type_icon(img, "build", c, r)
        _text(img, "I" * e.level, (x, y + r + 6), 0.5, INK, 1)
    if e.count > 1:
        _text(img, f"x{e.count}", (x + r + 12, y), 0.6, INK, 2)


def _star(img: np.ndarray, c: tuple[int, int], r: int, color: Color) -> None:
    pts = [
        [
            c[0] + int((r if k % 2 == 0 else r // 2) * math.sin(k * math.pi / 5)),
            c[1] - int((r if k % 2 == 0 else r // 2) * math.cos(k * math.pi / 5)),
        ]
        for k in range(10)
    ]
    cv2.fillPoly(img, [np.array(pts, np.int32)], color, cv2.LINE_AA)


def effect_pictogram(img: np.ndarray, e: Effect, box: tuple[int, int, int, int]) -> None:
    """Draw an effect as trigger → reward (or its static form) inside ``box`` (x, y, w, h)."""
    x, y, w, h = box
    cy, r = y + h // 2, h // 2 - 4
    left, right = (x + r + 2, cy), (x + w - r - 26, cy)
    mid = (x + w // 2 - 6, cy)
    arrow = ((left[0] + r + 4, cy), (right[0] - r - 4, cy))
    if e.kind.startswith("on_"):
        trigger = {"on_file": "file", "on_pick": "pick", "on_build_from_archive": "file"}.get(e.kind, "build")
        if e.colors:
            for i, ci in enumerate(e.colors):
                _dot(img, (left[0] - r // 2 + i * r, cy), r * 2 // 3, COLORS[ci])
            type_icon(img, trigger, (left[0] + r // 2, y + 8), 7)
        else:
            type_icon(img, trigger, left, r)
        if e.kind == "on_build_from_archive":
            type_icon(img, "build", (left[0] + r, y + h - 8), 8)
        if e.kind == "on_build_level":
            _text(img, "I" * e.level, (left[0], y + h - 6), 0.5, INK, 1)
        cv2.arrowedLine(img, *arrow, INK, 3, cv2.LINE_AA, tipLength=0.3)
        _reward(img, e, right, r)
    elif e.kind == "convert_to_any":
        src = COLORS[e.source] if e.source >= 0 else "any"
        for u in range(e.uses):
            _dot(img, (left[0] + u * (r // 2), cy - u * 4), r * 3 // 4, src)
        cv2.arrowedLine(img, *arrow, INK, 3, cv2.LINE_AA, tipLength=0.3)
        for u in range(e.uses):
            _dot(img, (right[0] + u * (r // 2), cy - u * 4), r * 3 // 4, "any")
    elif e.kind == "convert_double":
        for i, ci in enumerate(e.colors):
            _dot(img, (left[0] + i * (r // 2 + 4), cy), r * 2 // 3, COLORS[ci])
        cv2.arrowedLine(img, *arrow, INK, 3, cv2.LINE_AA, tipLength=0.3)
        _text(img, "x2", right, 0.9, INK, 2)
    elif e.kind == "upgrade_limits":
        parts = [f"{k}+{v}" for k, v in (("E", e.energy), ("F", e.file), ("R", e.research)) if v]
        _text(img, " ".join(parts) or "+", mid, 0.75, INK, 2)
    elif e.kind == "discount":
        target = {"from_archive": "file", "from_research": "research", "level2": "build"}[e.applies_to]
        type_icon(img, target, left, r)
        _text(img, f"-{e.amount}", mid, 0.9, INK, 2)
        if e.applies_to == "level2":
            _text(img, "II", right, 0.7, INK, 2)
    elif e.kind == "forbid_action":
        type_icon(img, e.action, mid, r)
        cv2.line(img, (mid[0] - r, cy - r), (mid[0] + r, cy + r), (0, 0, 220), 4, cv2.LINE_AA)
        cv2.line(img, (mid[0] - r, cy + r), (mid[0] + r, cy - r), (0, 0, 220), 4, cv2.LINE_AA)
    else:  # end_vp
        _star(img, left, r, (0, 200, 255))
        _text(img, "/", mid, 0.9, INK, 2)
        if e.per == "energy_in_ring":
            _dot(img, right, r * 2 // 3, "any")
        else:
            _star(img, right, r * 2 // 3, (0, 150, 255))


def short_text(card: Card) -> str:
    """A few words for the face, e.g. ``BUILD R/B: 2 VP``."""
    e = card.effect
    cols = "/".join(COLORS[c][0].upper() for c in e.colors)
    reward = {
        "draw_random": "draw",
        "pick_row": "pick",
        "vp_tokens": "VP",
        "file_action": "file",
        "research_action": "research",
        "build_free": "build",
    }.get(e.reward, "")
    trig = {
        "on_file": "FILE",
        "on_pick": f"PICK {cols}",
        "on_build": f"BUILD {cols}",
        "on_build_from_archive": "BUILD FROM ARCHIVE",
        "on_build_level": f"BUILD LV{e.level}",
    }
    if e.kind in trig:
        return f"{trig[e.kind]}: {e.count} {reward}"
    if e.kind == "convert_to_any":
        src = COLORS[e.source].upper() if e.source >= 0 else "ANY"
        return f"{src} -> ANY x{e.uses}"
    if e.kind == "convert_double":
        return f"{cols} COUNTS DOUBLE"
    if e.kind == "upgrade_limits":
        return f"ENERGY+{e.energy} FILE+{e.file} RESEARCH+{e.research}"
    if e.kind == "discount":
        return f"-{e.amount} {e.applies_to.replace('_', ' ').upper()}"
    if e.kind == "forbid_action":
        return f"NO {e.action.upper()}, BONUS"
    return f"VP PER {e.per.replace('_', ' ').upper()}"


def draw_face(card: Card) -> np.ndarray:
    """The drawn face of one card, BGR, FACE_H × FACE_W."""
    img = np.full((FACE_H, FACE_W, 3), LEVEL_FRAME[card.level], np.uint8)
    inset = 10
    energy = ENERGY_BGR.get(card.color, (185, 185, 185))
    body = tuple(int(0.25 * c + 0.75 * 235) for c in energy)
    cv2.rectangle(img, (inset, inset), (FACE_W - inset, FACE_H - inset), body, -1)
    # Top band: energy color, type icon, pictogram, cost and VP, collector code.
    if card.color == "any":
        qw = (FACE_W - 2 * inset) // 4
        for i, name in enumerate(COLORS):
            cv2.rectangle(img, (inset + i * qw, inset), (inset + (i + 1) * qw, BAND_PX), ENERGY_BGR[name], -1)
    else:
        cv2.rectangle(img, (inset, inset), (FACE_W - inset, BAND_PX), energy, -1)
    cv2.rectangle(img, (inset + 38, inset + 4), (FACE_W - inset - 42, BAND_PX - 20), (245, 245, 245), -1)
    cv2.circle(img, (inset + 19, inset + 22), 17, WHITE, -1, cv2.LINE_AA)
    type_icon(img, card.type, (inset + 19, inset + 22), 12)
    effect_pictogram(img, card.effect, (inset + 38, inset + 4, FACE_W - 2 * inset - 80, BAND_PX - inset - 24))
    if card.cost:
        _dot(img, (FACE_W - inset - 21, inset + 16), 14, card.color)
        _text(img, str(card.cost), (FACE_W - inset - 21, inset + 16), 0.6, WHITE, 2)
    _star(img, (FACE_W - inset - 21, inset + 44), 15, (0, 215, 255))
    _text(img, str(card.vp), (FACE_W - inset - 21, inset + 45), 0.5, INK, 2)
    bit_w = (FACE_W - 2 * inset) / CODE_BITS
    for b in range(CODE_BITS):
        on = (card.id >> (CODE_BITS - 1 - b)) & 1
        x0 = int(inset + b * bit_w)
        cv2.rectangle(img, (x0, BAND_PX - 16), (int(x0 + bit_w), BAND_PX), INK if on else WHITE, -1)
    # Body: title, short text, large faint icon, the full rules text, level numeral and number.
    _text(img, card.type.upper(), (FACE_W // 2, BAND_PX + 18), 0.6, INK, 2)
    _text(img, short_text(card)[:26], (FACE_W // 2, BAND_PX + 42), 0.42, INK, 1)
    fb, fg, fr = (int(0.6 * c + 0.4 * 255) for c in body)
    faint = (fb, fg, fr)
    type_icon(img, card.type, (FACE_W // 2, BAND_PX + 130), 60, faint)
    y = BAND_PX + 70
    for line in textwrap.wrap(card.text, 30)[:9]:
        cv2.putText(img, line, (inset + 8, y), FONT, 0.36, INK, 1, cv2.LINE_AA)
        y += 17
    _text(img, ["S", "I", "II", "III"][card.level], (FACE_W // 2, FACE_H - inset - 14), 0.7, INK, 2)
    cv2.putText(img, f"#{card.id}", (inset + 6, FACE_H - inset - 8), FONT, 0.45, INK, 1, cv2.LINE_AA)
    return img


def draw_back(level: int) -> np.ndarray:
    """A card back; decks are stacks of these."""
    base = {1: (70, 110, 60), 2: (110, 70, 60), 3: (60, 60, 120)}.get(level, (90, 90, 90))
    img = np.full((FACE_H, FACE_W, 3), base, np.uint8)
    cv2.rectangle(img, (10, 10), (FACE_W - 10, FACE_H - 10), (210, 210, 210), 3)
    for k in range(-FACE_H, FACE_W, 24):
        cv2.line(img, (k, 0), (k + FACE_H, FACE_H), tuple(min(255, c + 25) for c in base), 2)
    type_icon(img, "build", (FACE_W // 2, FACE_H // 2 - 30), 50, (220, 220, 220))
    _text(img, "GIZMOS", (FACE_W // 2, FACE_H // 2 + 50), 1.0, (235, 235, 235), 2)
    _text(img, "I" * level, (FACE_W // 2, FACE_H // 2 + 95), 1.0, (235, 235, 235), 2)
    return img


@cache
def drawn_faces() -> tuple[np.ndarray, ...]:
    """All 112 drawn faces (cached; treat as read-only)."""
    return tuple(draw_face(c) for c in default_cards())


def face_set(enrol_dir: str | Path | None = None) -> tuple[np.ndarray, ...]:
    """The faces in use: drawn faces, each replaced by its enrolled photo when there is one.

    The folder is read again only when its files change, so renders can ask for every scene.
    """
    if enrol_dir is None:
        return drawn_faces()
    folder = Path(enrol_dir)
    from vision.enrol import folder_signature

    return _enrolled_face_set(folder.resolve(), folder_signature(folder))


@lru_cache(maxsize=4)
def _enrolled_face_set(folder: Path, signature: tuple[tuple[str, int, int], ...]) -> tuple[np.ndarray, ...]:
    from vision.enrol import load_enrolled

    del signature  # part of the cache key only
    enrolled = load_enrolled(folder)
    return tuple(enrolled.get(i, face) for i, face in enumerate(drawn_faces()))


def write_faces(out_dir: str | Path, enrol_dir: str | Path | None = None) -> list[Path]:
    """Write every face in use as ``<id>.png`` (for printing or inspection)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, face in enumerate(face_set(enrol_dir)):
        p = out / f"{i:03d}.png"
        cv2.imwrite(str(p), face)
        paths.append(p)
    return paths
