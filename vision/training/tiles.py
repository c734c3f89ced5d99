"""The project's own drawings of Contrivance Component tiles and Workbench mats (issue 19).

The publisher's art may not be shipped, so the project draws its own, with OpenCV primitives
and its Hershey fonts only (nothing downloaded). A tile is drawn facing north (its first Rivet,
the one with the black dot, on the top edge; the Double tile's second Rivet on the opposite
edge, ``Edition.double_rivets``) and carries what a reader needs: the Builder's mark (an icon
per Builder and its initial), the Rivets and a Point Marker dial showing 0-6 (a needle, an arc
or a lit tick, and the value in a window).

:data:`OWN_STYLE` is the project's look (fixed colors per Builder). :func:`random_style`
draws a new look per training scene (domain randomisation): Builder colors shuffled or random,
so a network cannot read the Builder from color alone, icons filled or outlined at random
weights, any of the training fonts, the elements' places swapped, plate and mat colors and
textures at random. The benchmark's held-out art (``benchmarks/workbench_heldout.py``) is
another drawing altogether, never imported here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Protocol

import cv2
import numpy as np

from referee.contrivance.data import BUILDERS, COLUMNS, DEFAULT_EDITION, ROWS_PER_MAT

BGR = tuple[int, int, int]
TILE_PX_PER_MM = 4.0
TILE_MM = 60.0
#: OpenCV fonts the training styles may use; the held-out art uses others.
TRAIN_FONTS: tuple[int, ...] = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_PLAIN,
)
DIALS: tuple[str, ...] = ("needle", "arc", "tick")


class Art(Protocol):
    """What a renderer needs of a drawing style: tiles (facing north) and a mat."""

    def tile(self, builder: str, double: bool, value: int) -> np.ndarray:
        """A Component tile facing north, TILE_MM square at TILE_PX_PER_MM (BGR)."""
        ...

    def mat(self, rng: np.random.Generator, w: int, h: int, pitch_px: float, border_px: float) -> np.ndarray:
        """One mat of 3 x 5 squares, ``w`` x ``h`` px, squares ``pitch_px`` apart inside a border."""
        ...


@dataclass(frozen=True, slots=True)
class TileStyle:
    """Every choice of a drawn look; :data:`OWN_STYLE` and :func:`random_style` fill it."""

    plates: tuple[BGR, ...]  # per Builder, in BUILDERS order
    ink: BGR
    icon_fill: bool
    icon_weight: float  # stroke width, mm
    font: int
    letter_scale: float
    swap: bool  # icon at the top right and the initial at the top left
    dial: str  # one of DIALS
    dial_face: BGR
    dial_ink: BGR
    dial_offset: tuple[float, float]  # dial centre offset from (30, 40) mm
    rivet: BGR
    rivet_r: float  # mm
    border: BGR
    border_mm: float
    corner_mm: float
    plate_noise: float
    mat: BGR
    mat_line: BGR
    mark: BGR  # column 5's marking
    mat_noise: float


OWN_STYLE = TileStyle(
    plates=((60, 90, 200), (170, 110, 40), (60, 150, 70), (150, 60, 140), (40, 160, 210), (110, 110, 110)),
    ink=(25, 25, 25),
    icon_fill=True,
    icon_weight=2.0,
    font=cv2.FONT_HERSHEY_DUPLEX,
    letter_scale=1.0,
    swap=False,
    dial="needle",
    dial_face=(235, 240, 240),
    dial_ink=(20, 20, 20),
    dial_offset=(0.0, 0.0),
    rivet=(170, 175, 180),
    rivet_r=5.0,
    border=(40, 40, 40),
    border_mm=1.5,
    corner_mm=4.0,
    plate_noise=4.0,
    mat=(70, 85, 95),
    mat_line=(200, 205, 210),
    mark=(60, 170, 230),
    mat_noise=5.0,
)


def _color(rng: np.random.Generator, lo: float = 0, hi: float = 255) -> BGR:
    return tuple(int(v) for v in rng.uniform(lo, hi, 3))  # type: ignore[return-value]


def _contrast(rng: np.random.Generator, against: BGR, min_diff: float = 90) -> BGR:
    """A color at least ``min_diff`` away in mean brightness from ``against``."""
    for _ in range(50):
        c = _color(rng)
        if abs(sum(c) / 3 - sum(against) / 3) >= min_diff:
            return c
    return (20, 20, 20) if sum(against) / 3 > 127 else (235, 235, 235)


def random_style(rng: np.random.Generator) -> TileStyle:
    """A new look for one training scene (deterministic per ``rng``)."""
    if rng.random() < 0.3:
        plates = tuple(OWN_STYLE.plates[int(i)] for i in rng.permutation(len(BUILDERS)))
    elif rng.random() < 0.5:
        one = _color(rng, 40, 230)
        plates = tuple(one for _ in BUILDERS)  # all Builders one color: the mark alone tells them
    else:
        plates = tuple(_color(rng, 30, 230) for _ in BUILDERS)
    mean = tuple(int(v) for v in np.mean(plates, axis=0))
    face = _color(rng, 150, 255) if rng.random() < 0.8 else _color(rng, 0, 90)
    mat = _color(rng, 20, 235)
    return TileStyle(
        plates=plates,
        ink=_contrast(rng, mean, 70),  # type: ignore[arg-type]
        icon_fill=bool(rng.random() < 0.5),
        icon_weight=float(rng.uniform(1.2, 3.0)),
        font=int(rng.choice(TRAIN_FONTS)),
        letter_scale=float(rng.uniform(0.8, 1.15)),
        swap=bool(rng.random() < 0.5),
        dial=str(rng.choice(DIALS)),
        dial_face=face,
        dial_ink=_contrast(rng, face, 100),
        dial_offset=(float(rng.uniform(-3, 3)), float(rng.uniform(-2, 3))),
        rivet=_color(rng, 60, 230),
        rivet_r=float(rng.uniform(3.5, 6.0)),
        border=_color(rng),
        border_mm=float(rng.uniform(0, 2.5)),
        corner_mm=float(rng.uniform(0, 8)),
        plate_noise=float(rng.uniform(0, 14)),
        mat=mat,
        mat_line=_contrast(rng, mat, 50),
        mark=_color(rng),
        mat_noise=float(rng.uniform(0, 14)),
    )


# ----------------------------------------------------------------------------------------------- icons


def _pt(c: tuple[float, float], r: float, a: float) -> tuple[float, float]:
    return (c[0] + r * math.cos(a), c[1] + r * math.sin(a))


def _poly(img: np.ndarray, pts: list[tuple[float, float]], col: BGR, fill: bool, w: int) -> None:
    arr = np.round(np.array(pts) * 16).astype(np.int32)
    if fill:
        cv2.fillPoly(img, [arr], col, cv2.LINE_AA, shift=4)
    else:
        cv2.polylines(img, [arr], True, col, w, cv2.LINE_AA, shift=4)


def draw_icon(
    img: np.ndarray, builder: str, c: tuple[float, float], s: float, col: BGR, fill: bool, w: int
) -> None:
    """The Builder's icon centred on ``c`` (px), about ``s`` px across: Engineer a gear, Mechanic
    a wrench, Regulator a valve, Cognicator an eye, Assembler a hex nut, Intendent a crown."""
    r = s / 2
    ci = (round(c[0]), round(c[1]))
    th = -1 if fill else w
    if builder == "Engineer":
        pts = []
        for k in range(8):
            a = 2 * math.pi * k / 8
            for da, rr in ((-0.22, 0.72), (-0.12, 1.0), (0.12, 1.0), (0.22, 0.72)):
                pts.append(_pt(c, rr * r, a + da))
        _poly(img, pts, col, fill, w)
        cv2.circle(img, ci, round(0.3 * r), (255, 255, 255) if fill else col, -1 if fill else w, cv2.LINE_AA)
    elif builder == "Mechanic":
        a = math.radians(45)
        p0, p1 = _pt(c, -0.75 * r, a), _pt(c, 0.45 * r, a)
        cv2.line(
            img,
            tuple(round(v) for v in p0),
            tuple(round(v) for v in p1),
            col,
            max(w, round(0.3 * r)),
            cv2.LINE_AA,
        )
        head = _pt(c, 0.62 * r, a)
        cv2.circle(
            img, (round(head[0]), round(head[1])), round(0.38 * r), col, th if fill else w, cv2.LINE_AA
        )
        jaw = _pt(c, 0.9 * r, a)
        cv2.circle(img, (round(jaw[0]), round(jaw[1])), round(0.2 * r), (255, 255, 255), -1, cv2.LINE_AA)
    elif builder == "Regulator":
        left = [(c[0] - r, c[1] - 0.55 * r), (c[0] - r, c[1] + 0.55 * r), (c[0], c[1])]
        right = [(c[0] + r, c[1] - 0.55 * r), (c[0] + r, c[1] + 0.55 * r), (c[0], c[1])]
        _poly(img, left, col, fill, w)
        _poly(img, right, col, fill, w)
        cv2.line(img, ci, (ci[0], round(c[1] - 0.8 * r)), col, w, cv2.LINE_AA)
        cv2.line(
            img,
            (round(c[0] - 0.45 * r), round(c[1] - 0.8 * r)),
            (round(c[0] + 0.45 * r), round(c[1] - 0.8 * r)),
            col,
            w,
            cv2.LINE_AA,
        )
    elif builder == "Cognicator":
        cv2.ellipse(img, ci, (round(r), round(0.55 * r)), 0, 0, 360, col, w, cv2.LINE_AA)
        cv2.circle(img, ci, round(0.38 * r), col, -1, cv2.LINE_AA)
        if not fill:
            cv2.circle(img, ci, round(0.15 * r), (255, 255, 255), -1, cv2.LINE_AA)
    elif builder == "Assembler":
        pts = [_pt(c, r, math.pi / 6 + k * math.pi / 3) for k in range(6)]
        _poly(img, pts, col, fill, w)
        cv2.circle(img, ci, round(0.42 * r), (255, 255, 255) if fill else col, -1 if fill else w, cv2.LINE_AA)
    elif builder == "Intendent":
        pts = [
            (c[0] - r, c[1] + 0.6 * r),
            (c[0] - r, c[1] - 0.6 * r),
            (c[0] - 0.5 * r, c[1]),
            (c[0], c[1] - 0.8 * r),
            (c[0] + 0.5 * r, c[1]),
            (c[0] + r, c[1] - 0.6 * r),
            (c[0] + r, c[1] + 0.6 * r),
        ]
        _poly(img, pts, col, fill, w)
    else:
        raise ValueError(f"no icon for Builder {builder!r}")


# ----------------------------------------------------------------------------------------------- tiles


def _text(
    img: np.ndarray, txt: str, c: tuple[float, float], height: float, font: int, col: BGR, weight: int
) -> None:
    """Text centred on ``c`` about ``height`` px tall."""
    (tw, th), _ = cv2.getTextSize(txt, font, 1.0, weight)
    scale = height / max(th, 1)
    (tw, th), _ = cv2.getTextSize(txt, font, scale, weight)
    cv2.putText(img, txt, (round(c[0] - tw / 2), round(c[1] + th / 2)), font, scale, col, weight, cv2.LINE_AA)


def draw_dial(
    img: np.ndarray, value: int, c: tuple[float, float], r: float, style: TileStyle, k: float
) -> None:
    """The Point Marker: a disc with 7 ticks (0 lower left to 6 lower right), the value marked
    as ``style.dial`` says, and the value printed in a window at the centre."""
    ci = (round(c[0]), round(c[1]))
    cv2.circle(img, ci, round(r), style.dial_face, -1, cv2.LINE_AA)
    cv2.circle(img, ci, round(r), style.dial_ink, max(1, round(0.4 * k)), cv2.LINE_AA)
    angles = [math.radians(135 + 45 * i) for i in range(7)]  # image y down: 135 deg is lower left
    for i, a in enumerate(angles):
        lit = style.dial == "tick" and i == value
        p0, p1 = _pt(c, 0.78 * r, a), _pt(c, 0.98 * r, a)
        cv2.line(
            img,
            tuple(round(v) for v in p0),
            tuple(round(v) for v in p1),
            style.dial_ink,
            max(1, round((1.4 if lit else 0.5) * k)),
            cv2.LINE_AA,
        )
        if lit:
            q = _pt(c, 0.88 * r, a)
            cv2.circle(img, (round(q[0]), round(q[1])), round(0.14 * r), style.dial_ink, -1, cv2.LINE_AA)
    if style.dial == "needle":
        tip = _pt(c, 0.95 * r, angles[value])
        cv2.line(img, ci, (round(tip[0]), round(tip[1])), style.dial_ink, max(1, round(0.9 * k)), cv2.LINE_AA)
    elif style.dial == "arc":
        cv2.ellipse(
            img,
            ci,
            (round(0.86 * r), round(0.86 * r)),
            0,
            135,
            135 + 45 * value + 1,
            style.dial_ink,
            max(1, round(1.3 * k)),
            cv2.LINE_AA,
        )
    cv2.circle(img, ci, round(0.6 * r), style.dial_face, -1, cv2.LINE_AA)
    _text(img, str(value), c, 0.8 * r, style.font, style.dial_ink, max(1, round(0.9 * k)))


def draw_rivet(img: np.ndarray, edge: int, style: TileStyle, k: float, first: bool) -> None:
    """A Rivet at the middle of an edge (0 N, 1 E, 2 S, 3 W) of a north-facing tile; the first
    carries the black dot that tells which way a Double tile faces."""
    size = img.shape[0]
    m = 1.0 + style.rivet_r  # mm from the edge to the rivet's centre
    c = [(size / 2, m * k), (size - m * k, size / 2), (size / 2, size - m * k), (m * k, size / 2)][edge]
    ci = (round(c[0]), round(c[1]))
    rr = round(style.rivet_r * k)
    cv2.circle(img, (ci[0] + round(0.4 * k), ci[1] + round(0.4 * k)), rr, (30, 30, 30), -1, cv2.LINE_AA)
    cv2.circle(img, ci, rr, style.rivet, -1, cv2.LINE_AA)
    cv2.circle(img, ci, rr, tuple(int(v * 0.55) for v in style.rivet), max(1, round(0.4 * k)), cv2.LINE_AA)
    hl = (ci[0] - round(0.3 * rr), ci[1] - round(0.3 * rr))
    cv2.circle(img, hl, max(1, round(0.25 * rr)), (245, 245, 245), -1, cv2.LINE_AA)
    if first:
        cv2.circle(img, ci, max(2, round(0.42 * rr)), (10, 10, 10), -1, cv2.LINE_AA)


@dataclass(frozen=True, slots=True)
class DrawnArt:
    """The project's tile and mat drawing in one :class:`TileStyle` (an :class:`Art`)."""

    style: TileStyle = OWN_STYLE
    seed: int = 0  # the plate's and mat's texture

    def tile(self, builder: str, double: bool, value: int) -> np.ndarray:
        s, k = self.style, TILE_PX_PER_MM
        n = round(TILE_MM * k)
        rng = np.random.default_rng([self.seed, BUILDERS.index(builder), value, int(double)])
        plate = np.array(s.plates[BUILDERS.index(builder)], np.float32)
        img = np.empty((n, n, 3), np.float32)
        img[:] = plate
        if s.plate_noise:
            small = rng.normal(0, s.plate_noise, (8, 8, 1)).astype(np.float32)
            img += cv2.resize(small, (n, n), interpolation=cv2.INTER_CUBIC)[..., None]
        img = np.clip(img, 0, 255).astype(np.uint8)
        b = round(s.border_mm * k)
        if b:
            cv2.rectangle(img, (b // 2, b // 2), (n - 1 - b // 2, n - 1 - b // 2), s.border, b, cv2.LINE_AA)
        w = max(1, round(s.icon_weight * k))
        icon_x, letter_x = (43.0, 16.0) if s.swap else (16.0, 43.0)
        draw_icon(img, builder, (icon_x * k, 17 * k), 19 * k, s.ink, s.icon_fill, w)
        _text(
            img,
            builder[0],
            (letter_x * k, 17 * k),
            11 * k * s.letter_scale,
            s.font,
            s.ink,
            max(1, round(1.2 * k)),
        )
        draw_dial(img, value, ((30 + s.dial_offset[0]) * k, (40 + s.dial_offset[1]) * k), 14 * k, s, k)
        rivets = DEFAULT_EDITION.double_rivets if double else (0,)
        for i, edge in enumerate(rivets):
            draw_rivet(img, edge, s, k, first=i == 0)
        if s.corner_mm > 0:  # rounded corners: the table shows through (transparent on paste)
            mask = np.zeros((n, n), np.uint8)
            rc = round(s.corner_mm * k)
            cv2.rectangle(mask, (rc, 0), (n - 1 - rc, n - 1), 255, -1)
            cv2.rectangle(mask, (0, rc), (n - 1, n - 1 - rc), 255, -1)
            for cx, cy in ((rc, rc), (n - 1 - rc, rc), (rc, n - 1 - rc), (n - 1 - rc, n - 1 - rc)):
                cv2.circle(mask, (cx, cy), rc, 255, -1, cv2.LINE_AA)
            img = np.dstack([img, mask])
        return img

    def mat(self, rng: np.random.Generator, w: int, h: int, pitch_px: float, border_px: float) -> np.ndarray:
        s = self.style
        img = np.empty((h, w, 3), np.float32)
        img[:] = s.mat
        if s.mat_noise:
            small = rng.normal(0, s.mat_noise, (h // 30 + 2, w // 30 + 2, 1)).astype(np.float32)
            img += cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)[..., None]
        img = np.clip(img, 0, 255).astype(np.uint8)
        lw = max(1, round(pitch_px / 45))
        for r in range(ROWS_PER_MAT):
            for c in range(COLUMNS):
                x0, y0 = border_px + c * pitch_px, border_px + r * pitch_px
                p0 = (round(x0 + 2 * lw), round(y0 + 2 * lw))
                p1 = (round(x0 + pitch_px - 2 * lw), round(y0 + pitch_px - 2 * lw))
                if c == COLUMNS - 1:  # the marked square
                    cv2.rectangle(img, p0, p1, s.mark, -1, cv2.LINE_AA)
                    mid = ((p0[0] + p1[0]) / 2, (p0[1] + p1[1]) / 2)
                    _poly(
                        img,
                        [_pt(mid, 0.3 * pitch_px, math.pi / 2 + k * 4 * math.pi / 5) for k in range(5)],
                        s.mat_line,
                        False,
                        lw,
                    )
                cv2.rectangle(img, p0, p1, s.mat_line, lw, cv2.LINE_AA)
        return img


def own_art() -> DrawnArt:
    """The project's own look."""
    return DrawnArt(OWN_STYLE)


def random_art(seed: int) -> DrawnArt:
    """A domain-randomised look (deterministic per seed)."""
    rng = np.random.default_rng([seed, 19])
    return DrawnArt(random_style(rng), seed)


def with_style(art: DrawnArt, **changes: object) -> DrawnArt:
    """The same art with some style fields changed."""
    return DrawnArt(replace(art.style, **changes), art.seed)  # type: ignore[arg-type]
