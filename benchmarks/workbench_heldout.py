"""The held-out Contrivance tile art: a second drawing of the Component tiles and mats that no
training ever sees (leave-one-style-out, as ``benchmarks/heldout.py`` is for Gizmos; no project
code imports the benchmarks, ``tests/test_vision_heldout.py`` checks that).

It keeps the tiles' conventions (each Builder's mark and initial, the first Rivet's black dot,
a dial showing 0-6 with the value printed) and draws everything else its own way: light card
plates with a colored frame in a palette of its own, outlined icons of other proportions, an
italic serif of its own drawn from polylines (:data:`GLYPHS`: no
OpenCV font, which training draws), a dial of seven dots with the value in a square
window, brass Rivets with a ring, wooden mats with engraved squares and a hatched column 5.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import cv2
import numpy as np

from referee.contrivance.data import BUILDERS, COLUMNS, DEFAULT_EDITION, ROWS_PER_MAT
from vision.training.tiles import TILE_MM, TILE_PX_PER_MM, DamageStyle, Stroke, arc, subpixel_line

BGR = tuple[int, int, int]
#: The font the held-out art drew its letters and numbers in until 2026-11-24 (kept for the test
#: that shows why it went): OpenCV 5 draws COMPLEX with the same pixels as the training fonts
#: DUPLEX and TRIPLEX and ignores FONT_ITALIC, so it was no unseen font (see
#: docs/contrivance_vision.md). The tiles and the Damage token now draw :data:`GLYPHS`.
FONT = cv2.FONT_HERSHEY_COMPLEX | cv2.FONT_ITALIC
FRAMES: tuple[BGR, ...] = (
    (30, 30, 150),
    (120, 60, 10),
    (20, 100, 40),
    (90, 20, 90),
    (10, 110, 150),
    (60, 60, 60),
)


def _p(c: tuple[float, float], r: float, a: float) -> tuple[int, int]:
    return (round(c[0] + r * math.cos(a)), round(c[1] + r * math.sin(a)))


# ------------------------------------------------------------------------- the held-out letters


#: The held-out art's own letters and figures: an italic serif drawn as with a broad pen, as
#: polylines in a box one unit tall (x right, y down; the glyph's width, then its strokes),
#: upright here and slanted by :data:`SLANT` when drawn. A design of this module's own, so no
#: training style has drawn it (OpenCV's fonts are not: see :data:`FONT`); its shapes differ on
#: purpose from ``tiles.STROKE_LETTERS`` (a flat-topped 3, an open 4, a looped 6, an epsilon E,
#: a bowled R with a kicked tail) and ``tests/test_vision_heldout.py`` bounds their overlap with
#: every font and stroke letter training draws.
GLYPHS: dict[str, tuple[float, tuple[Stroke, ...]]] = {
    "E": (
        0.62,
        (
            (*arc((0.34, 0.25), 0.26, 0.25, -20, -270, 10), (0.3, 0.5)),
            arc((0.32, 0.75), 0.3, 0.25, 270, 20, 10),
            ((0.22, 0.5), (0.46, 0.5)),
        ),
    ),
    "M": (
        0.98,
        (
            ((-0.06, 1.0), (0.1, 1.0)),
            ((0.02, 1.0), (0.16, 0.0), (0.46, 1.0), (0.84, 0.0), (0.86, 1.0)),
            ((0.76, 1.0), (0.98, 1.0)),
        ),
    ),
    "R": (
        0.74,
        (
            ((0.12, 0.0), (0.12, 1.0)),
            ((-0.02, 1.0), (0.26, 1.0)),
            ((-0.02, 0.0), (0.4, 0.0), *arc((0.4, 0.26), 0.26, 0.26, -90, 90, 8)[1:], (0.12, 0.52)),
            ((0.36, 0.52), (0.5, 0.9), (0.62, 1.0), (0.78, 0.94)),
        ),
    ),
    "C": (
        0.6,
        (
            (*arc((0.5, 0.14), 0.1, 0.1, 90, -180, 6), *arc((0.36, 0.5), 0.34, 0.5, -90, -250, 12)[1:]),
            (*arc((0.36, 0.5), 0.34, 0.5, 110, 70, 3), (0.6, 0.86), (0.56, 0.72)),
        ),
    ),
    "A": (
        0.86,
        (
            ((-0.04, 1.0), (0.58, 0.0), (0.66, 1.0)),
            ((0.52, 1.0), (0.8, 1.0)),
            ((0.2, 0.68), (0.62, 0.68)),
        ),
    ),
    "I": (
        0.5,
        (
            ((0.0, 0.14), (0.12, 0.0), (0.5, 0.0)),
            ((0.32, 0.0), (0.2, 1.0)),
            ((0.0, 1.0), (0.38, 1.0), (0.5, 0.86)),
        ),
    ),
    "0": (0.56, (arc((0.28, 0.5), 0.27, 0.5, -90, 270, 16),)),
    "1": (0.5, (((0.04, 0.26), (0.34, 0.0), (0.3, 0.86), (0.38, 1.0), (0.52, 0.92)),)),
    "2": (
        0.62,
        ((*arc((0.3, 0.28), 0.26, 0.26, -160, 20, 8), (0.02, 1.0), (0.34, 0.9), (0.62, 1.0)),),
    ),
    "3": (
        0.6,
        (
            (
                (0.06, 0.0),
                (0.56, 0.0),
                (0.26, 0.4),
                *arc((0.26, 0.68), 0.3, 0.3, -80, 140, 10)[1:],
            ),
        ),
    ),
    "4": (0.66, (((0.36, 0.0), (0.0, 0.7), (0.66, 0.7)), ((0.5, 0.32), (0.5, 1.0)))),
    "5": (
        0.6,
        (((0.6, 0.0), (0.14, 0.0), (0.08, 0.44), *arc((0.28, 0.7), 0.3, 0.3, -120, 150, 10)),),
    ),
    "6": (
        0.6,
        (
            (
                (0.56, 0.0),
                (0.3, 0.14),
                (0.08, 0.5),
                *arc((0.3, 0.72), 0.26, 0.28, 180, 540, 14),
            ),
        ),
    ),
    "7": (
        0.62,
        (((0.0, 0.14), (0.1, 0.0), (0.62, 0.0), (0.4, 0.4), (0.28, 1.0)), ((0.22, 0.5), (0.56, 0.5))),
    ),
    "8": (
        0.6,
        (
            (
                *arc((0.32, 0.24), 0.22, 0.24, 20, -200, 12),
                *arc((0.28, 0.72), 0.28, 0.28, -90, 270, 16)[1:],
            ),
        ),
    ),
    "9": (
        0.6,
        ((*arc((0.32, 0.3), 0.26, 0.3, 0, 360, 14), (0.52, 0.62), (0.36, 0.92), (0.06, 1.0)),),
    ),
}
#: The slant of the held-out italic (x moves right by this share of the height above the base).
SLANT = 0.24
#: The broad pen's angle (degrees, y down): strokes along it are hairlines, across it full.
PEN_DEG = -35.0


def draw_glyphs(
    img: np.ndarray, text: str, c: tuple[float, float], height: float, weight: int, col: BGR | int
) -> None:
    """``text`` in the held-out italic (:data:`GLYPHS`), centred on ``c``, ``height`` px tall,
    its strokes ``weight`` px across the pen and a little under half that along it."""
    gap = 0.1
    widths = [GLYPHS[ch][0] + SLANT for ch in text]
    x = c[0] - (sum(widths) + gap * (len(text) - 1)) * height / 2
    y0 = c[1] - height / 2
    pen = math.radians(PEN_DEG)
    for ch, w in zip(text, widths, strict=True):
        for stroke in GLYPHS[ch][1]:
            pts = [(x + (px + SLANT * (1 - py)) * height, y0 + py * height) for px, py in stroke]
            for a, b in itertools.pairwise(pts):
                d = math.atan2(b[1] - a[1], b[0] - a[0])
                across = abs(math.sin(d - pen))
                subpixel_line(img, a, b, col, max(1, round(weight * (0.45 + 0.55 * across))))
        x += (w + gap) * height


def icon(img: np.ndarray, builder: str, c: tuple[float, float], r: float, col: BGR, w: int) -> None:
    """The same six marks as the project's, drawn another way (outlines, other proportions)."""
    ci = (round(c[0]), round(c[1]))
    if builder == "Engineer":  # a ring with six square teeth
        cv2.circle(img, ci, round(0.62 * r), col, w, cv2.LINE_AA)
        for k in range(6):
            a = k * math.pi / 3
            box = cv2.boxPoints(
                (
                    (c[0] + 0.8 * r * math.cos(a), c[1] + 0.8 * r * math.sin(a)),
                    (0.35 * r, 0.3 * r),
                    math.degrees(a),
                )
            )
            cv2.fillConvexPoly(img, np.round(box).astype(np.int32), col, cv2.LINE_AA)
    elif builder == "Mechanic":  # a spanner: a handle and an open ring
        cv2.line(
            img,
            _p(c, 0.95 * r, math.radians(225)),
            _p(c, 0.2 * r, math.radians(45)),
            col,
            max(w, round(0.22 * r)),
            cv2.LINE_AA,
        )
        head = _p(c, 0.5 * r, math.radians(45))
        cv2.ellipse(img, head, (round(0.4 * r), round(0.4 * r)), 45, 40, 320, col, w + 1, cv2.LINE_AA)
    elif builder == "Regulator":  # a valve: two triangles, a stem and a wheel
        for sgn in (-1, 1):
            tri = np.array(
                [
                    (c[0] + sgn * 0.9 * r, c[1] - 0.45 * r),
                    (c[0] + sgn * 0.9 * r, c[1] + 0.45 * r),
                    (c[0], c[1]),
                ]
            )
            cv2.polylines(img, [np.round(tri).astype(np.int32)], True, col, w, cv2.LINE_AA)
        cv2.line(img, ci, (ci[0], round(c[1] - 0.7 * r)), col, w, cv2.LINE_AA)
        cv2.circle(img, (ci[0], round(c[1] - 0.8 * r)), round(0.18 * r), col, w, cv2.LINE_AA)
    elif builder == "Cognicator":  # an eye: two arcs and a pupil
        cv2.ellipse(
            img, (ci[0], round(c[1] + 0.45 * r)), (round(r), round(0.9 * r)), 0, 205, 335, col, w, cv2.LINE_AA
        )
        cv2.ellipse(
            img, (ci[0], round(c[1] - 0.45 * r)), (round(r), round(0.9 * r)), 0, 25, 155, col, w, cv2.LINE_AA
        )
        cv2.circle(img, ci, round(0.3 * r), col, -1, cv2.LINE_AA)
    elif builder == "Assembler":  # a nut, flat side up
        pts = np.array([_p(c, 0.95 * r, k * math.pi / 3) for k in range(6)])
        cv2.polylines(img, [pts.astype(np.int32)], True, col, w, cv2.LINE_AA)
        cv2.circle(img, ci, round(0.38 * r), col, w, cv2.LINE_AA)
    elif builder == "Intendent":  # a crown of three points with balls on them
        pts = np.array(
            [
                (c[0] - r, c[1] + 0.5 * r),
                (c[0] - r, c[1] - 0.4 * r),
                (c[0] - 0.45 * r, c[1] + 0.1 * r),
                (c[0], c[1] - 0.6 * r),
                (c[0] + 0.45 * r, c[1] + 0.1 * r),
                (c[0] + r, c[1] - 0.4 * r),
                (c[0] + r, c[1] + 0.5 * r),
            ]
        )
        cv2.polylines(img, [np.round(pts).astype(np.int32)], True, col, w, cv2.LINE_AA)
        for x, y in pts[[1, 3, 5]]:
            cv2.circle(img, (round(x), round(y)), round(0.13 * r), col, -1, cv2.LINE_AA)


@dataclass(frozen=True, slots=True)
class HeldOutArt:
    """The held-out drawing (an ``Art`` for ``render_workbench``)."""

    seed: int = 0

    def tile(self, builder: str, double: bool, value: int) -> np.ndarray:
        k = TILE_PX_PER_MM
        n = round(TILE_MM * k)
        b = BUILDERS.index(builder)
        rng = np.random.default_rng([self.seed, b, value, int(double), 77])
        paper = np.array((215, 228, 236), np.float32) + rng.normal(0, 3, 3)
        img = np.empty((n, n, 3), np.float32)
        img[:] = paper
        img += rng.normal(0, 4, (n, n, 1)).astype(np.float32)
        img = np.clip(img, 0, 255).astype(np.uint8)
        frame = FRAMES[b]
        cv2.rectangle(img, (0, 0), (n - 1, n - 1), frame, round(4.5 * k))
        cv2.rectangle(
            img,
            (round(6 * k), round(6 * k)),
            (n - 1 - round(6 * k), n - 1 - round(6 * k)),
            frame,
            max(1, round(0.5 * k)),
            cv2.LINE_AA,
        )
        icon(img, builder, (17 * k, 44 * k), 8.5 * k, frame, max(2, round(1.1 * k)))
        # Sized and weighted as the OpenCV font drew it before (about 7.5 mm tall, as much ink).
        draw_glyphs(img, builder[0], (44 * k, 44 * k), 6.2 * k, max(1, round(1.75 * k)), frame)
        # The dial: seven dots on an arc, the value's dot large and filled, the value in a square window.
        c, r = (30 * k, 27 * k), 12 * k
        for i in range(7):
            a = math.radians(150 + 40 * i)
            p = _p(c, r, a)
            if i == value:
                cv2.circle(img, p, round(2.2 * k), (20, 20, 20), -1, cv2.LINE_AA)
            else:
                cv2.circle(img, p, round(1.1 * k), (90, 90, 90), max(1, round(0.3 * k)), cv2.LINE_AA)
        half = round(6.5 * k)
        ci = (round(c[0]), round(c[1]))
        cv2.rectangle(img, (ci[0] - half, ci[1] - half), (ci[0] + half, ci[1] + half), (250, 250, 250), -1)
        cv2.rectangle(
            img,
            (ci[0] - half, ci[1] - half),
            (ci[0] + half, ci[1] + half),
            (20, 20, 20),
            max(1, round(0.4 * k)),
        )
        draw_glyphs(img, str(value), c, 5.3 * k, max(1, round(2.0 * k)), (20, 20, 20))  # ~7 mm
        rivets = DEFAULT_EDITION.double_rivets if double else (0,)
        for i, edge in enumerate(rivets):
            m = 7.5 * k
            at = [(n / 2, m), (n - m, n / 2), (n / 2, n - m), (m, n / 2)][edge]
            pi = (round(at[0]), round(at[1]))
            cv2.circle(img, pi, round(4.2 * k), (40, 140, 190), -1, cv2.LINE_AA)  # brass
            cv2.circle(img, pi, round(4.2 * k), (20, 70, 100), max(1, round(0.6 * k)), cv2.LINE_AA)
            cv2.circle(img, pi, round(2.4 * k), (60, 170, 220), max(1, round(0.5 * k)), cv2.LINE_AA)
            if i == 0:
                cv2.circle(img, pi, round(1.9 * k), (15, 15, 15), -1, cv2.LINE_AA)
        return img

    def mat(self, rng: np.random.Generator, w: int, h: int, pitch_px: float, border_px: float) -> np.ndarray:
        xx = np.mgrid[0:h, 0:w][1].astype(np.float32)
        base = np.array([rng.uniform(50, 70), rng.uniform(90, 115), rng.uniform(130, 160)], np.float32)
        noise = cv2.resize(rng.normal(0, 1, (h // 20 + 2, 5)).astype(np.float32), (w, h))
        grain = np.sin(xx / rng.uniform(2, 4) + 5 * noise)
        img = ((1 + 0.1 * grain)[..., None] * base).clip(0, 255).astype(np.uint8)
        for r in range(ROWS_PER_MAT):
            for c in range(COLUMNS):
                x0, y0 = border_px + c * pitch_px, border_px + r * pitch_px
                p0, p1 = (round(x0 + 2), round(y0 + 2)), (round(x0 + pitch_px - 3), round(y0 + pitch_px - 3))
                cv2.rectangle(img, p0, p1, (30, 45, 60), 2, cv2.LINE_AA)
                cv2.rectangle(
                    img, (p0[0] + 2, p0[1] + 2), (p1[0] + 1, p1[1] + 1), (110, 160, 200), 1, cv2.LINE_AA
                )
                if c == COLUMNS - 1:  # the marked square: hatched, inside its engraving
                    roi = img[p0[1] + 3 : p1[1] - 2, p0[0] + 3 : p1[0] - 2]
                    for d in range(0, 2 * max(roi.shape[:2]), 9):
                        cv2.line(roi, (d, 0), (0, d), (40, 60, 80), 1, cv2.LINE_AA)
        return img


#: The held-out look of the Contrivance tile and its Damage token: a cream token with a dark
#: red rim, numbers in the held-out italic (:func:`draw_glyphs`) marked by a dot, on a ringed
#: dark-green back.
HELD_OUT_DAMAGE = DamageStyle(
    back=(40, 70, 30),
    back_ink=(150, 190, 170),
    back_kind="rings",
    token=(200, 225, 235),
    rim=(30, 30, 140),
    rim_mm=2.5,
    digits=(30, 30, 40),
    font=draw_glyphs,
    digit_mm=12.0,  # about 14 mm tall with the pen (the old font 11 mm), 0.93 of its ink
    weight_mm=2.4,
    underline="dot",
)
