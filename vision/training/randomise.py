"""Domain-randomised training scenes: any deck, any table, any lamp (issue 14, item 1).

The committed detector learned the project's drawn faces, not "a card": on a deck of other art
it finds almost no whole card (benchmark condition ``deck``, card mAP50 0.004). Training on
scenes whose look is drawn at random far beyond the project's own teaches it the shapes
instead: a random deck every few scenes (:func:`random_deck`: abstract pictures, printed text,
color frames, from a generator of its own), random table surfaces, random VP-token printings,
ring marbles in touching heaps or apart, hand-placed jitter up to 5 mm and 6 degrees, and a
camera with random color casts, blur, noise and JPEG. Look 2 adds what the
first fine-tune still missed (docs/vision.md, "Real tables"): marbles of other materials
(matte, glass, swirled; :func:`marble_look`), VP tokens of random printings beyond their fill
(rim, digits, font; :func:`token_print`), touching heaps in the dispenser tray as well as the
rings, and tables in a marble's own color (a red marble on red wood, a black one on a dark
cloth). Look 3 (:data:`LATEST_LOOK`) adds arms of any skin tone, sleeves and gloves
(:func:`random_hand_look`; issue 14, item 3). Each look draws after the one before from a stream
of its own, so looks 1 and 2 re-render their training sets exactly.

Leave-one-style-out: the benchmark's held-out style (``benchmarks/heldout.py``: slate, check
cloth, red-stained and planked wood, black-body lamps with fall-off, webcam sharpening, its own
token colors and printing, its own deck generator) is never imported here, token colors near
the held-out ones are redrawn, and the token printings drawn here (:data:`TOKEN_FONTS`, rims,
digits) leave out the held-out printing's lettering, rim width and digit color
(``tests/test_vision_heldout.py`` checks that no project code imports the benchmarks,
``tests/test_vision_randomise.py`` that the printings stay apart).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

import cv2
import numpy as np

from referee.gizmos.cards import default_cards
from vision.faces import BAND_MM, ENERGY_BGR, FACE_H, FACE_PX_PER_MM, FACE_W, drawn_faces
from vision.training.synth import (
    CANVAS_PX_PER_MM,
    HandLook,
    RenderSettings,
    TokenPrint,
    _effects,
    _texture,
    marble_sprite,
)

#: Token fills the held-out style uses (BGR, 1s and 5s): randomised tokens stay this far away.
_HELD_OUT_TOKENS = ((70, 150, 235), (150, 60, 120))
_TOKEN_MIN_DISTANCE = 60.0
#: Scenes that share one random deck (a deck costs ~0.4 s to draw).
SCENES_PER_DECK = 8
#: Share of scenes drawn with the project's own faces (or the user's enrolled ones).
OWN_FACES_SHARE = 0.2
#: The randomised looks: 1 the first round's, 2 with marble materials, token printings, tray
#: heaps and same-color tables, 3 with arms of any skin tone, sleeves and gloves (a dataset names
#: the look it was rendered with).
LOOKS = (1, 2, 3)
LATEST_LOOK = 3
#: Share of look-3 arms in a sleeve, and of hands in a glove.
SLEEVE_SHARE = 0.6
GLOVE_SHARE = 0.15
#: Share of look-2 tables turned to a marble's own color, and with unlabelled things on them.
SAME_COLOR_TABLE_SHARE = 0.3
DISTRACTOR_SHARE = 0.5


def _color(rng: np.random.Generator, lo: float = 0, hi: float = 255) -> tuple[int, int, int]:
    return tuple(int(v) for v in rng.uniform(lo, hi, 3))  # type: ignore[return-value]


#: A random card's frame tint per energy colour (BGR; grey for the others: "any", "none").
ENERGY_TINT = {"red": (40, 40, 190), "blue": (190, 110, 40), "black": (50, 50, 50), "yellow": (40, 190, 220)}


def _tint(color: str) -> np.ndarray:
    return np.array(ENERGY_TINT.get(color, (140, 140, 140)), np.float32)


def _word(rng: np.random.Generator, first: str, n: int) -> str:
    """``n`` random letters of the alphabet that starts at ``first`` ("A" or "a")."""
    return "".join(chr(int(c)) for c in rng.integers(ord(first), ord(first) + 26, n))


def random_face(
    rng: np.random.Generator,
    color: str,
    template: np.random.Generator | None = None,
    cost: int | None = None,
) -> np.ndarray:
    """One card of a random deck: a frame tinted by its energy color (at random strength), a
    title band with printed words and a cost disc, a picture of stripes, noise or blobs, and a
    rules box of printed lines (OpenCV's own Hershey fonts: nothing is downloaded).

    ``template``: where the frame, paper, ink, font, disc and picture come from (default
    ``rng``, which then draws exactly as before): cards drawn from one template look alike, and
    only their title, their text and ``cost`` (printed in the disc when given) tell them apart."""
    t = rng if template is None else template
    frame = np.clip(_tint(color) * t.uniform(0.5, 1.2) + t.normal(0, 35, 3), 0, 255)
    img = np.empty((FACE_H, FACE_W, 3), np.uint8)
    img[:] = frame.astype(np.uint8)
    band = round(BAND_MM * FACE_PX_PER_MM)
    inset = int(t.integers(4, 16))
    paper = _color(t, 150, 255)
    ink = _color(t, 0, 90)
    cv2.rectangle(img, (inset, inset), (FACE_W - inset, band - 2), paper, -1)
    font = int(t.choice([cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_TRIPLEX]))
    word = _word(rng, "A", int(rng.integers(4, 10)))
    cv2.putText(img, word, (inset + 40, band // 2 + 8), font, rng.uniform(0.5, 0.8), ink, 1, cv2.LINE_AA)
    cv2.circle(img, (inset + 18, band // 2), 14, _color(t), -1, cv2.LINE_AA)
    if cost is not None:
        cv2.putText(img, str(cost), (inset + 11, band // 2 + 7), font, 0.6, ink, 2, cv2.LINE_AA)
    top, bottom = band + int(t.integers(2, 10)), FACE_H - int(t.integers(70, 140))
    ph, pw = bottom - top, FACE_W - 2 * inset
    kind = int(t.integers(0, 3))
    if kind == 0:  # stripes
        yy, xx = np.mgrid[0:ph, 0:pw].astype(np.float32)
        a = t.uniform(0, math.pi)
        wave = (np.sin((xx * math.cos(a) + yy * math.sin(a)) / t.uniform(3, 20)) + 1) / 2
        pic = np.array(_color(t), np.float32) * wave[..., None] + np.array(_color(t), np.float32) * (
            1 - wave[..., None]
        )
    elif kind == 1:  # colored noise
        small = t.uniform(0, 255, (int(t.integers(3, 12)), int(t.integers(3, 12)), 3)).astype(np.float32)
        pic = cv2.resize(small, (pw, ph), interpolation=cv2.INTER_CUBIC)
    else:  # blobs on a flat ground
        pic = np.empty((ph, pw, 3), np.float32)
        pic[:] = _color(t)
        for _ in range(int(t.integers(3, 12))):
            c = (int(t.integers(0, pw)), int(t.integers(0, ph)))
            cv2.circle(pic, c, int(t.integers(5, 40)), _color(t), -1, cv2.LINE_AA)
    img[top:bottom, inset : FACE_W - inset] = np.clip(pic, 0, 255).astype(np.uint8)
    cv2.rectangle(img, (inset, bottom + 4), (FACE_W - inset, FACE_H - inset), paper, -1)
    for k in range(int(rng.integers(2, 6))):
        line = _word(rng, "a", int(rng.integers(8, 18)))
        y = bottom + 22 + 18 * k
        if y < FACE_H - inset - 4:
            cv2.putText(img, line, (inset + 6, y), font, 0.4, ink, 1, cv2.LINE_AA)
    return img


@lru_cache(maxsize=4)
def random_deck(deck_seed: int) -> tuple[np.ndarray, ...]:
    """The 112 faces of one random deck (deterministic per seed)."""
    rng = np.random.default_rng(deck_seed)
    return tuple(random_face(rng, c.color) for c in default_cards())


_FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_PLAIN,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
    cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
)


def _picture(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """An abstract picture: stripes, noise, blobs, polygons, rings, a gradient or a checker."""
    kind = int(rng.integers(0, 7))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    c0, c1 = np.array(_color(rng), np.float32), np.array(_color(rng), np.float32)
    if kind == 0:
        a = rng.uniform(0, math.pi)
        t = (np.sin((xx * math.cos(a) + yy * math.sin(a)) / rng.uniform(3, 20)) + 1) / 2
    elif kind == 1:
        small = rng.uniform(0, 255, (int(rng.integers(3, 12)), int(rng.integers(3, 12)), 3)).astype(
            np.float32
        )
        return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    elif kind == 2:
        t = np.zeros((h, w), np.float32)
        pic = np.empty((h, w, 3), np.float32)
        pic[:] = c0
        for _ in range(int(rng.integers(3, 12))):
            c = (int(rng.integers(0, w)), int(rng.integers(0, h)))
            cv2.circle(pic, c, int(rng.integers(5, 40)), _color(rng), -1, cv2.LINE_AA)
        return pic
    elif kind == 3:
        pic = np.empty((h, w, 3), np.float32)
        pic[:] = c0
        for _ in range(int(rng.integers(2, 8))):
            pts = rng.integers(0, (w, h), (int(rng.integers(3, 7)), 2)).astype(np.int32)
            cv2.fillPoly(pic, [pts], _color(rng), cv2.LINE_AA)
        return pic
    elif kind == 4:
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        t = (np.sin(np.hypot(xx - cx, yy - cy) / rng.uniform(3, 15)) + 1) / 2
    elif kind == 5:
        a = rng.uniform(0, math.pi)
        t = xx * math.cos(a) + yy * math.sin(a)
        t = (t - t.min()) / max(1e-6, float(t.max() - t.min()))
    else:
        size = rng.uniform(6, 30)
        t = ((xx // size + yy // size) % 2).astype(np.float32)
    return c0 * t[..., None] + c1 * (1 - t[..., None])


def varied_face(rng: np.random.Generator, color: str, layout: int) -> np.ndarray:
    """One card of a deck of a random *design*: where :func:`random_face` draws every deck in one
    layout (title band, a disc at its left, a picture, a rules box), here the deck's own
    seed ``layout`` (the same for all its cards) draws the design: frame tint and width, the
    title's height, font, size and alignment, a seal left or right (disc, square or none), the
    lower part as printed lines, a row of icons or both, the picture's share of the card; each
    card (``rng``) draws its title, seal colour, picture and text. An embedding trained on such
    decks learns cards, not one design (issue 14: art far beyond the project's own look)."""
    lo = np.random.default_rng(layout)  # the same draws for every card of the deck
    base = _tint(color)
    tint, dark = lo.uniform(0.0, 1.2), lo.random() < 0.3
    neutral = np.array(_color(lo, 0, 80) if dark else _color(lo, 150, 255), np.float32)
    frame = np.clip(tint * base + (1 - min(tint, 1.0)) * neutral + lo.normal(0, 20, 3), 0, 255)
    img = np.empty((FACE_H, FACE_W, 3), np.uint8)
    img[:] = frame.astype(np.uint8)
    inset = int(lo.integers(2, 24))
    band = round(lo.uniform(0.55, 1.0) * BAND_MM * FACE_PX_PER_MM)
    paper, ink = _color(lo, 140, 255), _color(lo, 0, 90)
    title_bg = int(lo.integers(0, 3))  # paper, the frame, or a band of its own colour
    font, italic = int(lo.choice(_FONTS)), bool(lo.random() < 0.3)
    scale, centred = lo.uniform(0.45, 0.9), bool(lo.random() < 0.4)
    seal_side, seal_shape = int(lo.integers(0, 2)), int(lo.integers(0, 3))
    lower, pic_bottom = int(lo.integers(0, 3)), FACE_H - int(lo.integers(50, 150))
    if title_bg == 0:
        cv2.rectangle(img, (inset, inset), (FACE_W - inset, band - 2), paper, -1)
    elif title_bg == 2:
        cv2.rectangle(img, (inset, inset), (FACE_W - inset, band - 2), _color(lo), -1)
    word = _word(rng, "A", int(rng.integers(3, 11)))
    if rng.random() < 0.5:
        word = word.capitalize()
    f = font | (cv2.FONT_ITALIC if italic else 0)
    (tw, th), _ = cv2.getTextSize(word, f, scale, 1)
    seal_x = inset + 18 if seal_side == 0 else FACE_W - inset - 18
    x = (FACE_W - tw) // 2 if centred else (inset + 40 if seal_side == 0 else inset + 8)
    cv2.putText(img, word, (x, band // 2 + th // 2), f, scale, ink, 1 + int(scale > 0.7), cv2.LINE_AA)
    seal = _color(rng)
    if seal_shape == 0:
        cv2.circle(img, (seal_x, band // 2), 13, seal, -1, cv2.LINE_AA)
    elif seal_shape == 1:
        cv2.rectangle(img, (seal_x - 12, band // 2 - 12), (seal_x + 12, band // 2 + 12), seal, -1)
    top = band + int(lo.integers(0, 10))
    ph, pw = pic_bottom - top, FACE_W - 2 * inset
    img[top:pic_bottom, inset : FACE_W - inset] = np.clip(_picture(rng, ph, pw), 0, 255).astype(np.uint8)
    y0 = pic_bottom + 4
    cv2.rectangle(img, (inset, y0), (FACE_W - inset, FACE_H - inset), paper, -1)
    if lower in (0, 2):
        for k in range(int(rng.integers(1, 6))):
            line = _word(rng, "a", int(rng.integers(6, 18)))
            y = y0 + 18 + 16 * k
            if y < FACE_H - inset - 4:
                cv2.putText(img, line, (inset + 6, y), font, 0.4, ink, 1, cv2.LINE_AA)
    if lower in (1, 2):
        y = FACE_H - inset - 16
        for k in range(int(rng.integers(1, 5))):
            cv2.circle(img, (inset + 18 + 30 * k, y), 10, _color(rng), -1, cv2.LINE_AA)
    return img


@lru_cache(maxsize=2)
def varied_random_deck(deck_seed: int) -> tuple[np.ndarray, ...]:
    """The 112 faces of one deck of a random design (:func:`varied_face`; deterministic per seed)."""
    rng = np.random.default_rng(deck_seed)
    layout_seed = int(rng.integers(0, 2**63))
    return tuple(varied_face(rng, c.color, layout_seed) for c in default_cards())


@lru_cache(maxsize=2)
def lookalike_random_deck(deck_seed: int) -> tuple[np.ndarray, ...]:
    """The 112 faces of one random look-alike deck (deterministic per seed): the cards of one
    energy color and type share one template (a printed deck shares its layout), and only their
    title, text and cost tell them apart. What an embedding must learn to tell apart when a
    real deck's cards differ in a few glyphs rather than in their pictures."""
    rng = np.random.default_rng(deck_seed)
    cards = default_cards()
    colors = sorted({c.color for c in cards})
    kinds = sorted({c.type for c in cards})
    return tuple(
        random_face(
            rng,
            c.color,
            np.random.default_rng([deck_seed, colors.index(c.color), kinds.index(c.type)]),
            c.cost,
        )
        for c in cards
    )


def random_hand_look(rng: np.random.Generator) -> HandLook:
    """An arm of any skin tone, bare or in a sleeve of any colour (plain, striped, heathered) with
    a cuff, the hand sometimes in a glove of any colour: the hand network learns "something over
    the table", not one skin colour (issue 14, item 3). Drawn once per scene from ``rng``."""
    t = rng.uniform(0, 1)  # darkest to palest
    skin = np.clip(np.array([35 + 160 * t, 50 + 160 * t, 85 + 150 * t]) + rng.uniform(-15, 15, 3), 0, 255)
    glove = np.array(_color(rng), np.float32) if rng.random() < GLOVE_SHARE else None
    sleeve = rng.random() < SLEEVE_SHARE
    cloth, stripe = np.array(_color(rng), np.float32), np.array(_color(rng), np.float32)
    end, weave, period = float(rng.uniform(0.25, 0.95)), int(rng.integers(0, 3)), float(rng.uniform(6, 24))
    grain = float(rng.uniform(2, 12))

    def paint(draw: np.random.Generator, along: np.ndarray, across: np.ndarray, palm: float) -> np.ndarray:
        h, w = along.shape
        out = np.empty((h, w, 3), np.float32)
        out[:] = skin.astype(np.float32)
        if glove is not None:
            out[along > 0.8 * palm] = glove
        if sleeve:
            fabric = np.broadcast_to(cloth, (h, w, 3)).copy()
            if weave == 1:  # stripes round the arm
                fabric[np.sin(along / period * math.pi) > 0.3] = stripe
            elif weave == 2:  # heathered: two yarns mixed
                mix = cv2.resize(draw.uniform(0, 1, (h // 3 + 1, w // 3 + 1)).astype(np.float32), (w, h))
                fabric = cloth * mix[..., None] + stripe * (1 - mix[..., None])
            cuff = (along > (end - 0.05) * palm) & (along <= end * palm)
            fabric[cuff] = stripe
            out = np.where((along <= end * palm)[..., None], fabric, out)
        noise = cv2.resize(draw.normal(0, grain, (h // 8 + 1, w // 8 + 1)).astype(np.float32), (w, h))
        return np.clip(out + noise[..., None], 0, 255)

    return paint


def scene_hand_look(seed: int) -> HandLook:
    """The look-3 arm of the scene with this seed, from a stream of its own (so the scene's other
    draws, and looks 1 and 2, stay what they were)."""
    return random_hand_look(np.random.default_rng([seed, 9]))


def random_texture(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """The project's wood, cloth or laminate with a random hue, or a random two-color noise."""
    if rng.random() < 0.5:
        img = _texture(rng, w, h)
        hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
        hsv[..., 0] = (hsv[..., 0].astype(np.int32) + int(rng.integers(0, 180))) % 180
        hsv[..., 1] = np.clip(hsv[..., 1] * rng.uniform(0.3, 1.5), 0, 255).astype(np.uint8)
        return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
    cells = rng.uniform(0, 1, (int(rng.integers(4, 40)), int(rng.integers(4, 40)))).astype(np.float32)
    t = cv2.resize(cells, (w, h), interpolation=cv2.INTER_CUBIC)[..., None]
    a, b = np.array(_color(rng, 20, 235), np.float32), np.array(_color(rng, 20, 235), np.float32)
    grain = rng.normal(0, rng.uniform(1, 10), (h, w, 1)).astype(np.float32)
    return np.clip(a * t + b * (1 - t) + grain, 0, 255).astype(np.uint8)


def same_color_texture(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """The project's wood, cloth or laminate in one marble color's hue (red, blue, yellow) or
    darkened towards black: the worst background for that color's marbles."""
    img = _texture(rng, w, h)
    color = str(rng.choice(["red", "blue", "yellow", "black"]))
    if color == "black":
        return np.clip(img.astype(np.float32) * rng.uniform(0.15, 0.45), 0, 255).astype(np.uint8)
    hue = int(cv2.cvtColor(np.array([[ENERGY_BGR[color]]], np.uint8), cv2.COLOR_BGR2HSV)[0, 0, 0])
    hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV).astype(np.float32)
    hsv[..., 0] = (hue + rng.uniform(-6, 6)) % 180
    hsv[..., 1] = np.clip(rng.uniform(110, 230) + (hsv[..., 1] - hsv[..., 1].mean()), 0, 255)
    return cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR)


def with_distractors(
    texture: Callable[[np.random.Generator, int, int], np.ndarray],
) -> Callable[[np.random.Generator, int, int], np.ndarray]:
    """``texture`` with 1-4 unlabelled things lying on the table: printed sheets (some with black
    blocks, like a marker tile), a phone, a coaster. The fine-tunes on look 1 put "card" boxes on
    the white marker tiles and across stacked columns (24-32 extra boxes in 10 frames, none
    before): paper that is not a card is what their data never showed them."""

    def draw(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
        img = np.ascontiguousarray(texture(rng, w, h))
        for _ in range(int(rng.integers(1, 5))):
            kind = str(rng.choice(["sheet", "blocks", "phone", "coaster"]))
            c = (float(rng.uniform(0, w)), float(rng.uniform(0, h)))
            mm = CANVAS_PX_PER_MM
            if kind == "coaster":
                cv2.circle(img, (round(c[0]), round(c[1])), round(rng.uniform(35, 50) * mm), _color(rng), -1)
                continue
            size = {"sheet": (rng.uniform(100, 220), rng.uniform(140, 300)), "phone": (72, 150)}.get(
                kind, (rng.uniform(40, 80), rng.uniform(40, 80))
            )
            box = cv2.boxPoints((c, (size[0] * mm, size[1] * mm), float(rng.uniform(0, 180))))
            paper = _color(rng, 20, 60) if kind == "phone" else _color(rng, 200, 255)
            cv2.fillConvexPoly(img, box.astype(np.int32), paper, cv2.LINE_AA)
            if kind != "sheet" or rng.random() < 0.5:  # a screen, black blocks, or printed lines
                x0, y0 = box.min(0).astype(int)
                x1, y1 = box.max(0).astype(int)
                for _ in range(int(rng.integers(3, 12))):
                    px, py = int(rng.integers(x0, max(x0 + 1, x1))), int(rng.integers(y0, max(y0 + 1, y1)))
                    if cv2.pointPolygonTest(box, (px, py), False) > 0:
                        side = int(rng.uniform(3, 12) * mm)
                        ink = _color(rng, 0, 60) if kind != "phone" else _color(rng, 60, 255)
                        cv2.rectangle(
                            img, (px, py), (px + side, py + side // (1 + int(kind == "sheet"))), ink, -1
                        )
        return img

    return draw


def marble_look(rng: np.random.Generator) -> Callable[[str, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """One scene's marble material, drawn at random: glossy (the project's), matte, glass (the
    table shows through, a bright caustic opposite the highlight) or swirled (streaks of a
    lighter tint); each color's tint varies by up to ±12 % per channel."""
    kind = str(rng.choice(["glossy", "matte", "glass", "swirl"]))
    tints = {c: rng.uniform(0.88, 1.12, 3).astype(np.float32) for c in ("red", "blue", "black", "yellow")}
    opacity = float(rng.uniform(0.55, 0.8))
    twist, streaks = float(rng.uniform(1, 4)), int(rng.integers(2, 5))

    def make(color: str, light: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rgb, alpha = marble_sprite(color, light)
        size = rgb.shape[0]
        yy, xx = (np.mgrid[0:size, 0:size].astype(np.float32) + 0.5 - size / 2) / (size / 2 - 1)
        rr = np.clip(xx**2 + yy**2, 0, 1)
        rgb = rgb * tints.get(color, np.ones(3, np.float32))
        if kind == "matte":  # the highlight spread and dimmed
            rgb = cv2.GaussianBlur(rgb, (0, 0), size / 10) * 0.9
        elif kind == "glass":  # see-through body, darker rim (Fresnel), caustic on the far side
            body = opacity + (1 - opacity) * rr[..., None] ** 2
            alpha = alpha * body
            caustic = np.exp(-((xx + 0.5 * light[0]) ** 2 + (yy + 0.5 * light[1]) ** 2) / 0.08)
            rgb = rgb + 90 * caustic[..., None]
        elif kind == "swirl":  # streaks of a lighter tint wound round the centre
            ang = np.arctan2(yy, xx) + twist * np.sqrt(rr)
            streak = (np.sin(streaks * ang) > 0.3).astype(np.float32)[..., None]
            rgb = rgb * (1 - 0.5 * streak) + 0.5 * streak * np.clip(rgb * 1.6 + 40, 0, 255)
        return np.clip(rgb, 0, 255), alpha

    return make


#: What the token printings of training span (:func:`token_print`, and the project's own,
#: ``TokenPrint()``): these OpenCV fonts, rims up to this width (canvas px), digits light (every
#: channel at least ``TOKEN_DIGITS_LIGHT``) or dark (every channel at most ``TOKEN_DIGITS_DARK``).
#: The benchmark's held-out printing lies outside all three (``tests/test_vision_randomise.py``).
TOKEN_FONTS: tuple[int, ...] = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
)
TOKEN_RIM_PX = 3
TOKEN_DIGITS_LIGHT = 200
TOKEN_DIGITS_DARK = 70


def token_print(rng: np.random.Generator) -> TokenPrint:
    """A random printing of the VP tokens besides the fill: rim color and width (or none),
    light or dark digits, another font, stroke and size."""
    light = rng.random() < 0.6
    return TokenPrint(
        rim=_color(rng, 180, 255) if rng.random() < 0.6 else _color(rng),
        rim_px=int(rng.integers(0, TOKEN_RIM_PX + 1)),
        digits=_color(rng, TOKEN_DIGITS_LIGHT, 255) if light else _color(rng, 0, TOKEN_DIGITS_DARK),
        font=int(rng.choice(list(TOKEN_FONTS))),
        stroke=int(rng.integers(1, 4)),
        scale=float(rng.uniform(0.75, 1.25)),
    )


def random_camera(rng: np.random.Generator, img: np.ndarray) -> np.ndarray:
    """The project's camera effects, then a random color cast of up to ±25 % per channel and a
    random gamma (a lamp and a camera the renderer never drew)."""
    img = _effects(rng, img)
    gains = rng.uniform(0.75, 1.25, 3).astype(np.float32)
    lut = np.clip(255 * (np.arange(256, dtype=np.float32) / 255) ** rng.uniform(0.7, 1.4), 0, 255)
    out = cv2.LUT(img, lut.astype(np.uint8))
    return cv2.transform(out, np.diag(gains)).astype(np.uint8)


#: The player mat under the tokens (vision/training/synth.py): look-2 token fills keep clear of it,
#: or a token without a rim would have no edge to label.
_MAT = (205, 215, 220)


def _token_fill(
    rng: np.random.Generator, avoid: tuple[tuple[int, int, int], ...] = ()
) -> tuple[int, int, int]:
    while True:
        c = _color(rng, 20, 240)
        if all(math.dist(c, h) >= _TOKEN_MIN_DISTANCE for h in (*_HELD_OUT_TOKENS, *avoid)):
            return c


def randomised(
    seed: int,
    base: RenderSettings | None = None,
    own_faces: tuple[np.ndarray, ...] | None = None,
    look: int = LATEST_LOOK,
) -> tuple[RenderSettings, tuple[np.ndarray, ...]]:
    """The render settings and deck of one training scene (deterministic per seed and look);
    ``own_faces`` (default the drawn ones, or a user's enrolled cards) are the deck of a share
    of scenes."""
    if look not in LOOKS:
        raise ValueError(f"randomised: look {look} is not one of {LOOKS}")
    rng = np.random.default_rng([seed, 7])
    s = replace(
        base or RenderSettings(),
        jitter_mm=float(rng.uniform(1, 5)),
        jitter_deg=float(rng.uniform(1, 6)),
        texture=random_texture,
        camera=random_camera,
        token_fills=(_token_fill(rng), _token_fill(rng)),
        touching_marbles=bool(rng.random() < 0.5),
    )
    own = rng.random() < OWN_FACES_SHARE
    if look >= 2:  # drawn after look 1's draws, so look 1 stays exactly what it was
        more = np.random.default_rng([seed, 8])
        fills = (_token_fill(more, (_MAT,)), _token_fill(more, (_MAT,)))
        marbles, tokens, heaps = marble_look(more), token_print(more), bool(more.random() < 0.5)
        table: Callable[[np.random.Generator, int, int], np.ndarray] = (
            same_color_texture if more.random() < SAME_COLOR_TABLE_SHARE else random_texture
        )
        if more.random() < DISTRACTOR_SHARE:
            table = with_distractors(table)
        s = replace(
            s,
            token_fills=fills,
            marble_look=marbles,
            token_print=tokens,
            tray_heaps=heaps,
            texture=table,
        )
    if look >= 3:  # drawn after look 2's draws, so looks 1 and 2 stay exactly what they were
        s = replace(s, hand_look=scene_hand_look(seed))
    if own:
        return s, own_faces if own_faces is not None else drawn_faces()
    return s, random_deck(seed // SCENES_PER_DECK)
