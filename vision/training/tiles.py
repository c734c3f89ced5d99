"""The project's own drawings of Contrivance Component tiles and Workbench mats (issue 19).

The publisher's art may not be shipped, so the project draws its own, with OpenCV primitives
and its Hershey fonts only (nothing downloaded). A tile is drawn facing north (its first Rivet,
the one with the dark dot, on the top edge; the Double tile's second Rivet on the opposite
edge, ``Edition.double_rivets``) and carries what a reader needs: the Builder's mark (an icon
per Builder and its initial), the Rivets and a Point Marker dial showing 0-6 (a needle, an arc,
a lit tick, dots, wedges or numerals, and the value printed).

:data:`OWN_STYLE` is the project's look (fixed colors per Builder). :func:`random_style`
draws a new look per training scene (domain randomisation of the tile's whole composition,
not only its colors): plate kinds (solid, framed on a light or dark card, bevelled; dark,
light or colored; flat, brushed or speckled), Rivet kinds (studs, flat discs, rings, domes,
hex heads; steel, brass, copper or painted; sizes and insets), six dial designs on several
faces and windows and arc spans, icons filled or outlined at any weight, stretched, turned
and in variants, any training font slanted by a shear, the elements' places (dial above,
below, beside or between the marks), and mats of painted, wooden, felt or card materials
with lined, engraved, recessed, cornered or bare squares, column 5 marked six ways, and faint
printed decorations on squares that are not tiles; and (:func:`_mark_looks`) the marks drawn
like anything: the initial in the project's own stroke letters (:func:`draw_initial`), marks
outlined, thickened, warped, the icon slanted, distractor decorations. The benchmark's held-out art
(``benchmarks/workbench_heldout.py``) is another drawing altogether, never imported here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

import cv2
import numpy as np

from referee.contrivance.data import BUILDERS, COLUMNS, DEFAULT_EDITION, ROWS_PER_MAT
from referee.observation import MAX_DAMAGE

BGR = tuple[int, int, int]
TILE_PX_PER_MM = 4.0
TILE_MM = 60.0
#: OpenCV fonts the training styles may use (slanted, when at all, by a shear of their own). With
#: OpenCV 5 (this venv) SIMPLEX, PLAIN, DUPLEX and TRIPLEX are one built-in sans in three weights
#: and SCRIPT_SIMPLEX its italic; COMPLEX draws DUPLEX's very pixels and FONT_ITALIC changes
#: nothing, so no OpenCV font is unseen: the held-out art draws its letters and figures from
#: polylines of its own (``benchmarks/workbench_heldout.py``; docs/contrivance_vision.md).
TRAIN_FONTS: tuple[int, ...] = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_PLAIN,
    cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
)
#: How a dial marks its value.
DIALS: tuple[str, ...] = ("needle", "arc", "tick", "dots", "wedges", "numerals")
#: The dial's face, and the window its value is printed in ("bare": no window, "none": no printed
#: value, only with the numerals dial).
DIAL_FACES: tuple[str, ...] = ("disc", "square", "none")
WINDOWS: tuple[str, ...] = ("disc", "square", "bare", "none")
PLATES: tuple[str, ...] = ("solid", "framed", "bevel")
PLATE_TEXTURES: tuple[str, ...] = ("noise", "brushed", "speckle")
RIVETS: tuple[str, ...] = ("stud", "flat", "ring", "dome", "hex")
MATS: tuple[str, ...] = ("flat", "wood", "felt", "card")
SQUARE_MARKS: tuple[str, ...] = ("line", "engraved", "recessed", "corners", "none")
COLUMN5_MARKS: tuple[str, ...] = ("star", "fill", "hatch", "dots", "frame", "none")
#: Which of the Builder's two marks a tile shows: both (every real look), the icon alone or the
#: initial alone (training only: the network must read each mark on its own).
MARKS: tuple[str, ...] = ("both", "icon", "letter")


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
    """Every choice of a drawn look; :data:`OWN_STYLE` and :func:`random_style` fill it. The
    defaults of the composition fields draw the project's own look."""

    plates: tuple[BGR, ...]  # per Builder, in BUILDERS order (a framed plate's frame)
    ink: BGR
    icon_fill: bool
    icon_weight: float  # stroke width, mm
    font: int
    letter_scale: float
    dial: str  # one of DIALS
    dial_face: BGR
    dial_ink: BGR
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
    # Composition (where and how each element is drawn); the defaults are the project's look.
    icon_at: tuple[float, float] = (16.0, 17.0)  # mm, the icon's centre
    letter_at: tuple[float, float] = (43.0, 17.0)
    dial_at: tuple[float, float] = (30.0, 40.0)
    dial_r: float = 14.0
    dial_span: float = 270.0  # degrees from 0 to 6, centred on the top
    dial_face_kind: str = "disc"  # one of DIAL_FACES
    window: str = "disc"  # one of WINDOWS
    icon_mm: float = 19.0
    letter_mm: float = 11.0
    #: Drawn through a mask (stretch, turn, shear); False: straight onto the tile (the own look).
    stamped: bool = False
    icon_aspect: float = 1.0  # width / height
    icon_turn: float = 0.0  # degrees
    icon_variant: int = 0
    slant: float = 0.0  # shear of the lettering (x per y)
    plate_kind: str = "solid"  # one of PLATES
    paper: BGR = (230, 235, 235)  # a framed plate's card
    frame_mm: float = 4.0
    inner_line: bool = False
    ink_per_builder: bool = False  # the marks in the Builder's color (framed plates)
    plate_texture: str = "noise"  # one of PLATE_TEXTURES
    rivet_kind: str = "stud"  # one of RIVETS
    rivet_inset: float = 1.0  # mm from the edge to the Rivet's rim
    dot: BGR = (10, 10, 10)
    dot_share: float = 0.42  # the dot's radius over the Rivet's
    mat_kind: str = "flat"  # one of MATS
    square_marks: str = "line"  # one of SQUARE_MARKS
    column5: str = "star"  # one of COLUMN5_MARKS
    decor: float = 0.0  # the chance a square carries a faint printed decoration
    # Widened 2026-11-24 (second run): the marks and the dial drawn further apart from any one
    # family. The defaults draw the project's look (and every earlier random look) unchanged.
    marks: str = "both"  # one of MARKS: the icon and the initial, or only one of them
    letter_aspect: float = 1.0  # the initial's width / height (drawn through a mask when not 1)
    letter_weight: float = 1.2  # the initial's stroke, mm
    dial_weight: float = 1.0  # the dial's strokes (needle, ticks, arc, numbers) times this
    jitter_mm: float = 0.0  # each tile's marks and dial moved up to this far (per tile)
    # Widened 2026-11-24 (third run): what the Builder's marks are drawn *like* randomised, so
    # that only what every drawing of a Builder shares (its icon's shape, its initial) is
    # learned. The defaults draw every earlier look unchanged.
    letter_strokes: bool = False  # the initial drawn by the project's stroke letters, not a font
    letter_serif: float = 0.0  # their serifs' length, a share of the letter's height (0: none)
    letter_contrast: float = 1.0  # their thin strokes (horizontals) over their thick ones
    mark_outline_mm: float = 0.0  # the icon and initial drawn as their outline this wide (0: solid)
    mark_grow_mm: float = 0.0  # the icon's and initial's strokes thickened (or, < 0, thinned)
    mark_warp: float = 0.0  # a smooth random warp of each mark, this share of its size (per tile)
    icon_shear: float = 0.0  # the icon slanted (x per y)
    clutter: int = 0  # distractor decorations (lines, arcs, rings, boxes, dots) on each tile

    @property
    def rivet_centre_mm(self) -> float:
        """How far a Rivet's centre lies from its edge (mm)."""
        return self.rivet_inset + self.rivet_r


OWN_STYLE = TileStyle(
    plates=((60, 90, 200), (170, 110, 40), (60, 150, 70), (150, 60, 140), (40, 160, 210), (110, 110, 110)),
    ink=(25, 25, 25),
    icon_fill=True,
    icon_weight=2.0,
    font=cv2.FONT_HERSHEY_DUPLEX,
    letter_scale=1.0,
    dial="needle",
    dial_face=(235, 240, 240),
    dial_ink=(20, 20, 20),
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


def _brightness(c: BGR) -> float:
    return sum(c) / 3


def _contrast(rng: np.random.Generator, against: BGR, min_diff: float = 90) -> BGR:
    """A color at least ``min_diff`` away in mean brightness from ``against``."""
    for _ in range(50):
        c = _color(rng)
        if abs(_brightness(c) - _brightness(against)) >= min_diff:
            return c
    return (20, 20, 20) if _brightness(against) > 127 else (235, 235, 235)


def _tone(rng: np.random.Generator) -> BGR:
    """A plate or card color: dark, light or colored."""
    kind = rng.random()
    if kind < 0.3:
        return _color(rng, 5, 80)
    if kind < 0.6:
        return _color(rng, 170, 250)
    return _color(rng, 30, 230)


#: Rivet metals (BGR): steel, brass, copper, gunmetal.
_METALS: tuple[BGR, ...] = ((180, 182, 185), (60, 150, 200), (70, 110, 190), (120, 118, 115))


def _rivet_color(rng: np.random.Generator) -> BGR:
    if rng.random() < 0.6:
        base = _METALS[int(rng.integers(len(_METALS)))]
        return tuple(int(np.clip(v + rng.normal(0, 18), 45, 255)) for v in base)  # type: ignore[return-value]
    while True:  # painted; bright enough that the dark dot shows
        c = _color(rng, 20, 255)
        if max(c) > 90:
            return c


def _layout(rng: np.random.Generator) -> dict[str, object]:
    """Where the icon, the initial and the dial lie (mm), and their sizes."""
    kind = int(rng.integers(4))
    j = lambda lo, hi: float(rng.uniform(lo, hi))  # noqa: E731
    pair = [(j(14, 18), 0.0), (j(42, 46), 0.0)]
    if rng.random() < 0.5:
        pair.reverse()
    if kind == 0:  # the marks above, the dial below (the own look's arrangement)
        y = j(14, 20)
        icon, letter = (pair[0][0], y), (pair[1][0], y)
        dial, r = (j(27, 33), j(37, 42)), j(11, 15)
    elif kind == 1:  # the dial above, the marks below
        y = j(40, 46)
        icon, letter = (pair[0][0], y), (pair[1][0], y)
        dial, r = (j(27, 33), j(25, 31)), j(9.5, 12.5)
    elif kind == 2:  # the dial at one side, the marks stacked at the other
        left = rng.random() < 0.5
        dial, r = (j(20, 24) if left else j(36, 40), j(27, 33)), j(10, 13)
        x = j(45, 48) if left else j(12, 15)
        ys = [j(16, 21), j(39, 44)]
        if rng.random() < 0.5:
            ys.reverse()
        icon, letter = (x, ys[0]), (x, ys[1])
    else:  # the dial in the middle, the marks in opposite corners
        dial, r = (j(28, 32), j(28, 32)), j(9, 11.5)
        a, b = (j(11, 14), j(11, 14)), (j(46, 49), j(46, 49))
        if rng.random() < 0.5:
            a, b = (a[0], b[1]), (b[0], a[1])
        icon, letter = (a, b) if rng.random() < 0.5 else (b, a)
    small = kind == 3 or kind == 2
    return {
        "icon_at": icon,
        "letter_at": letter,
        "dial_at": dial,
        "dial_r": r,
        "icon_mm": j(11, 15) if small else j(13, 20),
        "letter_mm": j(7, 10) if small else j(8, 12),
    }


def random_style(rng: np.random.Generator) -> TileStyle:
    """A new look for one training scene (deterministic per ``rng``): the whole composition of
    the tile and the mat drawn at random, not only its colors."""
    if rng.random() < 0.25:
        plates = tuple(OWN_STYLE.plates[int(i)] for i in rng.permutation(len(BUILDERS)))
    elif rng.random() < 0.4:
        one = _tone(rng)
        plates = tuple(one for _ in BUILDERS)  # all Builders one color: the mark alone tells them
    else:
        plates = tuple(_tone(rng) for _ in BUILDERS)
    plate_kind = str(rng.choice(PLATES, p=[0.45, 0.35, 0.2]))
    paper = _tone(rng)
    ink_per_builder = plate_kind == "framed" and rng.random() < 0.5
    if ink_per_builder:  # the frame's colors must stand out on the card
        plates = tuple(_contrast(rng, paper, 70) for _ in BUILDERS)
    ground = paper if plate_kind == "framed" else tuple(int(v) for v in np.mean(plates, axis=0))
    face_kind = str(rng.choice(DIAL_FACES, p=[0.6, 0.15, 0.25]))
    face = _tone(rng) if face_kind != "none" else ground
    dial = str(rng.choice(DIALS))
    window = str(rng.choice(WINDOWS[:3], p=[0.45, 0.35, 0.2]))
    if dial == "numerals" and rng.random() < 0.5:
        window = "none"
    mat_kind = str(rng.choice(MATS))
    mat = _color(rng, 20, 235)
    if mat_kind == "wood":
        mat = (int(rng.uniform(30, 110)), int(rng.uniform(60, 150)), int(rng.uniform(100, 210)))
    elif mat_kind == "card":
        mat = _color(rng, 150, 245)
    rivet_r = float(rng.uniform(2.5, 6.0))
    style = TileStyle(
        plates=plates,
        ink=_contrast(rng, ground, 70),  # type: ignore[arg-type]
        icon_fill=bool(rng.random() < 0.5),
        icon_weight=float(rng.uniform(0.6, 3.0)),
        font=int(rng.choice(TRAIN_FONTS)),
        letter_scale=1.0,
        dial=dial,
        dial_face=face,  # type: ignore[arg-type]
        dial_ink=_contrast(rng, face, 100),  # type: ignore[arg-type]
        rivet=_rivet_color(rng),
        rivet_r=rivet_r,
        border=_color(rng),
        border_mm=float(rng.uniform(0, 2.5)) if rng.random() < 0.6 else 0.0,
        corner_mm=float(rng.uniform(0, 8)) if rng.random() < 0.7 else 0.0,
        plate_noise=float(rng.uniform(0, 14)),
        mat=mat,
        mat_line=_contrast(rng, mat, 40),
        mark=_color(rng),
        mat_noise=float(rng.uniform(0, 14)),
        **_layout(rng),  # type: ignore[arg-type]
        dial_span=float(rng.uniform(180, 300)),
        dial_face_kind=face_kind,
        window=window,
        stamped=True,
        icon_aspect=float(np.exp(rng.uniform(-0.4, 0.4))),
        icon_turn=float(rng.choice([0.0, 0.0, 30.0, 45.0]) + rng.uniform(-6, 6)),
        icon_variant=int(rng.integers(3)),
        slant=float(rng.uniform(-0.35, 0.35)) if rng.random() < 0.5 else 0.0,
        plate_kind=plate_kind,
        paper=paper,
        frame_mm=float(rng.uniform(1.5, 6.5)),
        inner_line=bool(rng.random() < 0.5),
        ink_per_builder=ink_per_builder,
        plate_texture=str(rng.choice(PLATE_TEXTURES)),
        rivet_kind=str(rng.choice(RIVETS)),
        rivet_inset=float(rng.uniform(0.5, 4.0)),
        dot=_color(rng, 0, 18),
        dot_share=float(rng.uniform(0.3, 0.55)),
        mat_kind=mat_kind,
        square_marks=str(rng.choice(SQUARE_MARKS)),
        column5=str(rng.choice(COLUMN5_MARKS)),
        decor=float(rng.choice([0.0, 0.3, 0.7])),
        # drawn last, so that every field above is the one an earlier version drew for the seed
        marks=str(rng.choice(MARKS, p=[0.7, 0.15, 0.15])),
        letter_aspect=float(np.exp(rng.uniform(-0.35, 0.35))),
        letter_weight=float(rng.uniform(0.5, 2.2)),
        dial_weight=float(rng.uniform(0.5, 1.8)),
        jitter_mm=float(rng.uniform(0.0, 1.5)),
    )
    return _mark_looks(style, rng)


#: The style fields of the third run's widening (:func:`_mark_looks`); off in the own look.
MARK_LOOKS: tuple[str, ...] = (
    "letter_strokes",
    "letter_serif",
    "letter_contrast",
    "mark_outline_mm",
    "mark_grow_mm",
    "mark_warp",
    "icon_shear",
    "clutter",
)


def _mark_looks(style: TileStyle, rng: np.random.Generator) -> TileStyle:
    """The third run's widening of ``style`` (drawn after every earlier choice, so that each
    seed's earlier look is kept): the initial in the project's stroke letters (40 %; serifs on
    half of them, thin horizontals on some), the marks outlined (25 %), thickened or thinned
    (35 %), warped per tile (50 %), the icon slanted (30 %), and distractor decorations (40 %)."""
    strokes = bool(rng.random() < 0.4)
    return replace(
        style,
        letter_strokes=strokes,
        letter_serif=float(rng.uniform(0.12, 0.35)) if strokes and rng.random() < 0.5 else 0.0,
        letter_contrast=float(rng.uniform(0.35, 1.0)) if strokes and rng.random() < 0.5 else 1.0,
        mark_outline_mm=float(rng.uniform(0.25, 0.9)) if rng.random() < 0.25 else 0.0,
        mark_grow_mm=float(rng.uniform(-0.45, 0.7)) if rng.random() < 0.35 else 0.0,
        mark_warp=float(rng.uniform(0.03, 0.09)) if rng.random() < 0.5 else 0.0,
        icon_shear=float(rng.uniform(-0.35, 0.35)) if rng.random() < 0.3 else 0.0,
        clutter=int(rng.integers(1, 5)) if rng.random() < 0.4 else 0,
    )


# ----------------------------------------------------------------------------------------------- icons

WHITE: BGR = (255, 255, 255)


def _pt(c: tuple[float, float], r: float, a: float) -> tuple[float, float]:
    return (c[0] + r * math.cos(a), c[1] + r * math.sin(a))


def _ipt(p: tuple[float, float]) -> tuple[int, int]:
    return (round(p[0]), round(p[1]))


def _poly(img: np.ndarray, pts: list[tuple[float, float]], col: BGR, fill: bool, w: int) -> None:
    arr = np.round(np.array(pts) * 16).astype(np.int32)
    if fill:
        cv2.fillPoly(img, [arr], col, cv2.LINE_AA, shift=4)
    else:
        cv2.polylines(img, [arr], True, col, w, cv2.LINE_AA, shift=4)


def draw_icon(
    img: np.ndarray,
    builder: str,
    c: tuple[float, float],
    s: float,
    col: BGR,
    fill: bool,
    w: int,
    variant: int = 0,
    hole: BGR = WHITE,
) -> None:
    """The Builder's icon centred on ``c`` (px), about ``s`` px across: Engineer a gear, Mechanic
    a wrench, Regulator a valve, Cognicator an eye, Assembler a hex nut, Intendent a crown.
    ``variant`` 0-2 draws the same mark another way (teeth, heads, wheel, lids, band);
    ``hole``: the color of holes cut into a filled mark."""
    r = s / 2
    ci = _ipt(c)
    th = -1 if fill else w
    if builder == "Engineer":
        teeth = (8, 6, 10)[variant]
        depth = (0.72, 0.66, 0.78)[variant]
        spread = 8 / teeth  # the own gear's tooth angles, for 8 teeth
        pts = []
        for k in range(teeth):
            a = 2 * math.pi * k / teeth
            for da, rr in ((-0.22, depth), (-0.12, 1.0), (0.12, 1.0), (0.22, depth)):
                pts.append(_pt(c, rr * r, a + da * spread))
        _poly(img, pts, col, fill, w)
        cv2.circle(img, ci, round(0.3 * r), hole if fill else col, -1 if fill else w, cv2.LINE_AA)
    elif builder == "Mechanic":
        a = math.radians(45)
        p0, p1 = _pt(c, -0.75 * r, a), _pt(c, 0.45 * r, a)
        cv2.line(img, _ipt(p0), _ipt(p1), col, max(w, round(0.3 * r)), cv2.LINE_AA)
        ends = ((0.62, 0.9),) if variant != 1 else ((0.62, 0.9), (-0.62, -0.9))
        for head_at, jaw_at in ends:
            head = _pt(c, head_at * r, a)
            cv2.circle(img, _ipt(head), round(0.38 * r), col, th if fill else w, cv2.LINE_AA)
            if variant == 2:  # a ring spanner: a closed ring
                cv2.circle(img, _ipt(head), round(0.2 * r), hole, -1, cv2.LINE_AA)
            else:
                cv2.circle(img, _ipt(_pt(c, jaw_at * r, a)), round(0.2 * r), hole, -1, cv2.LINE_AA)
    elif builder == "Regulator":
        left = [(c[0] - r, c[1] - 0.55 * r), (c[0] - r, c[1] + 0.55 * r), (c[0], c[1])]
        right = [(c[0] + r, c[1] - 0.55 * r), (c[0] + r, c[1] + 0.55 * r), (c[0], c[1])]
        _poly(img, left, col, fill, w)
        _poly(img, right, col, fill, w)
        top = round(c[1] - 0.8 * r)
        if variant == 2:  # no stem: a hub at the middle
            cv2.circle(img, ci, round(0.22 * r), col, -1, cv2.LINE_AA)
            return
        cv2.line(img, ci, (ci[0], top), col, w, cv2.LINE_AA)
        if variant == 1:  # a handwheel
            cv2.circle(img, (ci[0], top), round(0.2 * r), col, w, cv2.LINE_AA)
        else:
            cv2.line(img, (round(c[0] - 0.45 * r), top), (round(c[0] + 0.45 * r), top), col, w, cv2.LINE_AA)
    elif builder == "Cognicator":
        if variant == 1:  # a lens of two arcs
            cv2.ellipse(
                img, (ci[0], round(c[1] + 0.5 * r)), (round(r), round(r)), 0, 210, 330, col, w, cv2.LINE_AA
            )
            cv2.ellipse(
                img, (ci[0], round(c[1] - 0.5 * r)), (round(r), round(r)), 0, 30, 150, col, w, cv2.LINE_AA
            )
        else:
            cv2.ellipse(img, ci, (round(r), round(0.55 * r)), 0, 0, 360, col, w, cv2.LINE_AA)
        if variant == 2:  # lashes
            for da in (-0.5, 0.0, 0.5):
                a = -math.pi / 2 + da
                cv2.line(img, _ipt(_pt(c, 0.6 * r, a)), _ipt(_pt(c, 0.9 * r, a)), col, w, cv2.LINE_AA)
        cv2.circle(img, ci, round(0.38 * r), col, -1, cv2.LINE_AA)
        if not fill:
            cv2.circle(img, ci, round(0.15 * r), hole, -1, cv2.LINE_AA)
    elif builder == "Assembler":
        pts = [_pt(c, r, math.pi / 6 + k * math.pi / 3) for k in range(6)]
        _poly(img, pts, col, fill, w)
        if variant == 1:  # a hexagonal hole
            inner = [_pt(c, 0.42 * r, k * math.pi / 3) for k in range(6)]
            _poly(img, inner, hole if fill else col, fill, w)
        elif variant == 2:  # a washer ring
            cv2.circle(img, ci, round(0.62 * r), hole if fill else col, max(1, w // 2), cv2.LINE_AA)
            cv2.circle(img, ci, round(0.3 * r), hole if fill else col, -1 if fill else w, cv2.LINE_AA)
        else:
            cv2.circle(img, ci, round(0.42 * r), hole if fill else col, -1 if fill else w, cv2.LINE_AA)
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
        if variant == 1:  # balls on the points
            for x, y in (pts[1], pts[3], pts[5]):
                cv2.circle(img, _ipt((x, y)), round(0.14 * r), col, -1, cv2.LINE_AA)
        elif variant == 2:  # a band
            cv2.rectangle(
                img, _ipt((c[0] - r, c[1] + 0.6 * r)), _ipt((c[0] + r, c[1] + 0.85 * r)), col, th, cv2.LINE_AA
            )
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


#: A change of a mark's mask (``_stamp``'s ``reshape``): outlined, thickened, warped.
Reshape = Callable[[np.ndarray], np.ndarray]


def _stamp(
    img: np.ndarray,
    draw: object,
    c: tuple[float, float],
    size: float,
    col: BGR,
    aspect: float = 1.0,
    turn: float = 0.0,
    shear: float = 0.0,
    reshape: Reshape | None = None,
) -> None:
    """Draw a mark through a mask: ``draw(mask, centre)`` paints it white on a square of about
    2 ``size`` px, which is ``reshape``d (``reshape(mask) -> mask``: outlined, thickened,
    warped), stretched (``aspect``: width over height), sheared, turned (degrees) and laid onto
    ``img`` centred on ``c`` in ``col``."""
    m = max(8, round(2 * size))
    mask = np.zeros((m, m), np.uint8)
    draw(mask, ((m - 1) / 2, (m - 1) / 2))  # type: ignore[operator]
    if reshape is not None:
        mask = reshape(mask)
    sx = math.sqrt(aspect)
    a = np.array([[sx, -shear / sx], [0.0, 1 / sx]])
    t = math.radians(turn)
    a = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]]) @ a
    centre = np.array([(m - 1) / 2, (m - 1) / 2])
    mat = np.hstack([a, (np.array(c) - a @ centre)[:, None]])
    h, w = img.shape[:2]
    alpha = cv2.warpAffine(mask, mat, (w, h), flags=cv2.INTER_LINEAR).astype(np.float32)[..., None] / 255
    img[..., :3] = (img[..., :3] * (1 - alpha) + np.array(col, np.float32) * alpha).astype(np.uint8)


def _label(
    img: np.ndarray,
    txt: str,
    c: tuple[float, float],
    height: float,
    style: TileStyle,
    col: BGR,
    weight: int,
    aspect: float = 1.0,
    reshape: Reshape | None = None,
) -> None:
    """Text in the style's font, slanted when the style is, stretched by ``aspect`` (width over
    height), its mask ``reshape``d (``_stamp``)."""
    if not style.stamped or (not style.slant and aspect == 1.0 and reshape is None):
        _text(img, txt, c, height, style.font, col, weight)
        return
    _stamp(
        img,
        lambda mk, cc: _text(mk, txt, cc, height, style.font, WHITE, weight),
        c,
        1.3 * height * max(1.0, aspect),
        col,
        aspect=aspect,
        shear=style.slant,
        reshape=reshape,
    )


def subpixel_line(
    img: np.ndarray, a: tuple[float, float], b: tuple[float, float], col: BGR | int, weight: int
) -> None:
    """An anti-aliased line between points at fractions of a pixel (OpenCV's 4 bits of sub-pixel
    shift): letters a few pixels tall drawn from polylines keep their shape."""
    cv2.line(
        img,
        (round(a[0] * 16), round(a[1] * 16)),
        (round(b[0] * 16), round(b[1] * 16)),
        col,
        weight,
        cv2.LINE_AA,
        4,
    )


#: The project's stroke letters: each initial as polylines in a box one unit tall (x right,
#: y down; width as the letter's); drawn with jittered points, any stroke width, optional
#: serifs and thin horizontals (``draw_initial``). No font is involved.
STROKE_LETTERS: dict[str, tuple[float, tuple[tuple[tuple[float, float], ...], ...]]] = {
    "E": (0.72, (((0.72, 0.0), (0.0, 0.0), (0.0, 1.0), (0.72, 1.0)), ((0.0, 0.5), (0.58, 0.5)))),
    "M": (0.95, (((0.0, 1.0), (0.06, 0.0), (0.475, 0.72), (0.89, 0.0), (0.95, 1.0)),)),
    "R": (
        0.78,
        (
            (
                (0.0, 1.0),
                (0.0, 0.0),
                (0.52, 0.0),
                (0.7, 0.07),
                (0.77, 0.25),
                (0.7, 0.43),
                (0.52, 0.5),
                (0.0, 0.5),
            ),
            ((0.38, 0.5), (0.78, 1.0)),
        ),
    ),
    "C": (
        0.8,
        (
            tuple(
                (0.45 + 0.45 * math.cos(math.radians(a)), 0.5 - 0.5 * math.sin(math.radians(a)))
                for a in range(40, 321, 20)
            ),
        ),
    ),
    "A": (0.84, (((0.0, 1.0), (0.42, 0.0), (0.84, 1.0)), ((0.16, 0.64), (0.68, 0.64)))),
    "I": (0.5, (((0.25, 0.0), (0.25, 1.0)),)),
}


def draw_initial(
    img: np.ndarray,
    letter: str,
    c: tuple[float, float],
    height: float,
    weight: int,
    serif: float = 0.0,
    contrast: float = 1.0,
    rng: np.random.Generator | None = None,
) -> None:
    """A Builder's initial in the project's stroke letters (:data:`STROKE_LETTERS`), centred on
    ``c``, ``height`` px tall, strokes ``weight`` px (horizontals times ``contrast``), each point
    moved up to 6 % of the height by ``rng``, and serifs ``serif`` of the height long across
    the ends of its strokes (horizontal at the top and the bottom, vertical elsewhere)."""
    width, strokes = STROKE_LETTERS[letter]
    x0, y0 = c[0] - width * height / 2, c[1] - height / 2

    def at(p: tuple[float, float]) -> tuple[float, float]:
        d = rng.uniform(-0.06, 0.06, 2) if rng is not None else (0.0, 0.0)
        return (x0 + (p[0] + d[0]) * height, y0 + (p[1] + d[1]) * height)

    def line(a: tuple[float, float], b: tuple[float, float], w: int) -> None:
        subpixel_line(img, a, b, WHITE, w)

    for stroke in strokes:
        pts = [at(p) for p in stroke]
        for a, b in itertools.pairwise(pts):
            steep = abs(b[1] - a[1]) / max(math.hypot(b[0] - a[0], b[1] - a[1]), 1e-6)
            line(a, b, max(1, round(weight * (contrast + (1 - contrast) * steep))))
        if serif <= 0 or letter == "C":
            continue
        half = serif * height / 2
        thin = max(1, round(weight * min(1.0, contrast + 0.2)))
        for (_, py), (ux, uy) in ((stroke[0], pts[0]), (stroke[-1], pts[-1])):
            if py <= 0.05 or py >= 0.95:
                line((ux - half, uy), (ux + half, uy), thin)
            else:
                line((ux, uy - half), (ux, uy + half), thin)


def reshaper(style: TileStyle, k: float, rng: np.random.Generator) -> Reshape | None:
    """The mask change a style asks of its Builder's marks (``_stamp``'s ``reshape``), or None:
    thickened or thinned by ``mark_grow_mm``, warped by a smooth random field of ``mark_warp``
    of the mark's size (``rng``: per tile), outlined ``mark_outline_mm`` wide."""
    return mask_reshaper(style.mark_grow_mm, style.mark_warp, style.mark_outline_mm, k, rng)


def mask_reshaper(
    grow_mm: float, warp: float, outline_mm: float, k: float, rng: np.random.Generator
) -> Reshape | None:
    """A mark's mask change (``_stamp``'s ``reshape``), or None when there is none: warped by a
    smooth random field of ``warp`` of the mark's size (drawn from ``rng``), thickened (or, < 0,
    thinned, never away) by ``grow_mm``, outlined ``outline_mm`` wide; ``k``: px per mm."""
    if not (grow_mm or warp or outline_mm):
        return None
    field = rng.normal(0, 1, (2, 4, 4)).astype(np.float32)

    def disc(r: float) -> np.ndarray:
        n = 2 * max(1, round(r)) + 1
        return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (n, n))

    def reshape(mask: np.ndarray) -> np.ndarray:
        m = mask.shape[0]
        if warp:
            amp = warp * m / 2  # the mark spans about half the mask
            dx, dy = (cv2.resize(f, (m, m), interpolation=cv2.INTER_CUBIC) * amp for f in field)
            grid = np.mgrid[0:m, 0:m].astype(np.float32)
            mask = cv2.remap(mask, grid[1] + dx, grid[0] + dy, cv2.INTER_LINEAR)
        grow = grow_mm * k
        if grow >= 0.5:
            mask = cv2.dilate(mask, disc(grow / 2))
        elif grow <= -0.5:
            thinner = cv2.erode(mask, disc(-grow / 2))
            if np.count_nonzero(thinner > 127) >= 0.4 * np.count_nonzero(mask > 127):
                mask = thinner  # never thinned away
        if outline_mm:
            mask = cv2.subtract(cv2.dilate(mask, disc(max(1.0, outline_mm * k))), mask)
        return mask

    return reshape


def draw_clutter(img: np.ndarray, count: int, ink: BGR, k: float, rng: np.random.Generator) -> None:
    """Distractor decorations no Builder owns (lines, arcs, rings, boxes, rows of dots, hatched
    patches), ``count`` of them anywhere inside the Rivets' band, in the tile's ink or a random
    color, more or less faint: the marks are what tell a Builder, not what else is printed."""
    for _ in range(count):
        layer = img.copy()
        col = ink if rng.random() < 0.5 else _color(rng)
        c = (rng.uniform(12, 48) * k, rng.uniform(12, 48) * k)
        r = rng.uniform(2, 7) * k
        w = max(1, round(rng.uniform(0.3, 1.2) * k))
        kind = int(rng.integers(6))
        if kind == 0:
            a = rng.uniform(0, math.pi)
            cv2.line(layer, _ipt(_pt(c, r * 1.6, a)), _ipt(_pt(c, -r * 1.6, a)), col, w, cv2.LINE_AA)
        elif kind == 1:
            a0 = float(rng.uniform(0, 360))
            cv2.ellipse(
                layer,
                _ipt(c),
                (round(r), round(r)),
                0,
                a0,
                a0 + float(rng.uniform(60, 200)),
                col,
                w,
                cv2.LINE_AA,
            )
        elif kind == 2:
            cv2.circle(layer, _ipt(c), round(r), col, w if rng.random() < 0.7 else -1, cv2.LINE_AA)
        elif kind == 3:
            cv2.rectangle(
                layer, _ipt((c[0] - r, c[1] - 0.6 * r)), _ipt((c[0] + r, c[1] + 0.6 * r)), col, w, cv2.LINE_AA
            )
        elif kind == 4:
            for i in range(int(rng.integers(3, 7))):
                cv2.circle(
                    layer, _ipt((c[0] + i * 0.6 * r, c[1])), max(1, round(0.12 * r)), col, -1, cv2.LINE_AA
                )
        else:  # a hatched patch
            x0, y0, side = round(c[0] - r), round(c[1] - r), round(2 * r)
            roi = layer[y0 : y0 + side, x0 : x0 + side]
            for d in range(0, 2 * side, max(3, round(rng.uniform(1, 2.5) * k))):
                cv2.line(roi, (d, 0), (d - side, side), col, 1, cv2.LINE_AA)
        a = float(rng.uniform(0.35, 1.0))
        img[:, :, :3] = cv2.addWeighted(layer[:, :, :3], a, img[:, :, :3], 1 - a, 0)


def _dial_face(img: np.ndarray, ci: tuple[int, int], r: float, style: TileStyle, k: float) -> None:
    line = max(1, round(0.4 * k))
    if style.dial_face_kind == "disc":
        cv2.circle(img, ci, round(r), style.dial_face, -1, cv2.LINE_AA)
        cv2.circle(img, ci, round(r), style.dial_ink, line, cv2.LINE_AA)
    elif style.dial_face_kind == "square":
        p0, p1 = (round(ci[0] - r), round(ci[1] - r)), (round(ci[0] + r), round(ci[1] + r))
        cv2.rectangle(img, p0, p1, style.dial_face, -1, cv2.LINE_AA)
        cv2.rectangle(img, p0, p1, style.dial_ink, line, cv2.LINE_AA)


def draw_dial(
    img: np.ndarray, value: int, c: tuple[float, float], r: float, style: TileStyle, k: float
) -> None:
    """The Point Marker: seven places on an arc of ``style.dial_span`` degrees centred on the top
    (0 at the lower left, 6 at the lower right), the value marked as ``style.dial`` says (a
    needle, a filled arc, a lit tick, a large dot, lit wedges or a ringed numeral), and printed
    in a window at the centre (``style.window``)."""
    ci = _ipt(c)
    ink, face = style.dial_ink, style.dial_face
    _dial_face(img, ci, r, style, k)
    kw = k * style.dial_weight  # the strokes' scale
    start = 90 + (360 - style.dial_span) / 2  # image y down: 90 deg is straight down
    step = style.dial_span / 6
    angles = [math.radians(start + step * i) for i in range(7)]
    thin = max(1, round(0.5 * kw))
    window_r = 0.6 * r
    if style.dial in ("needle", "arc", "tick"):
        for i, a in enumerate(angles):
            lit = style.dial == "tick" and i == value
            p0, p1 = _pt(c, 0.78 * r, a), _pt(c, 0.98 * r, a)
            cv2.line(img, _ipt(p0), _ipt(p1), ink, max(1, round((1.4 if lit else 0.5) * kw)), cv2.LINE_AA)
            if lit:
                cv2.circle(img, _ipt(_pt(c, 0.88 * r, a)), round(0.14 * r), ink, -1, cv2.LINE_AA)
        if style.dial == "needle":
            cv2.line(
                img, ci, _ipt(_pt(c, 0.95 * r, angles[value])), ink, max(1, round(0.9 * kw)), cv2.LINE_AA
            )
        elif style.dial == "arc":
            cv2.ellipse(
                img,
                ci,
                (round(0.86 * r), round(0.86 * r)),
                0,
                start,
                start + step * value + 1,
                ink,
                max(1, round(1.3 * kw)),
                cv2.LINE_AA,
            )
    elif style.dial == "dots":
        for i, a in enumerate(angles):
            p = _ipt(_pt(c, 0.84 * r, a))
            if i == value:
                cv2.circle(img, p, round(0.16 * r), ink, -1, cv2.LINE_AA)
            else:
                cv2.circle(img, p, max(2, round(0.07 * r)), ink, max(1, round(0.3 * kw)), cv2.LINE_AA)
    elif style.dial == "wedges":
        for i, a in enumerate(angles):
            d = math.radians(0.42 * step)
            pts = [
                _pt(c, 0.72 * r, a - d),
                _pt(c, 0.97 * r, a - d),
                _pt(c, 0.97 * r, a + d),
                _pt(c, 0.72 * r, a + d),
            ]
            _poly(img, pts, ink, i <= value, max(1, round(0.3 * kw)))
    elif style.dial == "numerals":
        window_r = 0.45 * r
        for i, a in enumerate(angles):
            q = _pt(c, 0.76 * r, a)
            if i == value:
                cv2.circle(img, _ipt(q), round(0.21 * r), ink, -1, cv2.LINE_AA)
            _label(img, str(i), q, 0.22 * r, style, face if i == value else ink, max(1, round(0.3 * kw)))
    else:
        raise ValueError(f"no dial {style.dial!r}")
    weight = max(1, round(0.9 * kw))
    if style.window == "disc":
        cv2.circle(img, ci, round(window_r), face, -1, cv2.LINE_AA)
    elif style.window == "square":
        h = round(0.8 * window_r)
        cv2.rectangle(img, (ci[0] - h, ci[1] - h), (ci[0] + h, ci[1] + h), face, -1)
        cv2.rectangle(img, (ci[0] - h, ci[1] - h), (ci[0] + h, ci[1] + h), ink, thin)
    if style.window != "none":
        _label(
            img, str(value), c, (0.8 if style.window == "disc" else 0.65) * window_r / 0.6, style, ink, weight
        )


def draw_rivet(img: np.ndarray, edge: int, style: TileStyle, k: float, first: bool) -> None:
    """A Rivet at the middle of an edge (0 N, 1 E, 2 S, 3 W) of a north-facing tile; the first
    carries the dark dot that tells which way a Double tile faces."""
    size = img.shape[0]
    m = style.rivet_centre_mm
    c = [(size / 2, m * k), (size - m * k, size / 2), (size / 2, size - m * k), (m * k, size / 2)][edge]
    ci = _ipt(c)
    rr = round(style.rivet_r * k)
    col = style.rivet
    dark = tuple(int(v * 0.55) for v in col)
    line = max(1, round(0.4 * k))
    kind = style.rivet_kind
    if kind in ("stud", "dome"):
        cv2.circle(img, (ci[0] + round(0.4 * k), ci[1] + round(0.4 * k)), rr, (30, 30, 30), -1, cv2.LINE_AA)
    if kind == "hex":
        pts = [_pt(c, rr, k6 * math.pi / 3 + math.pi / 6 * (edge % 2)) for k6 in range(6)]
        _poly(img, pts, col, True, line)
        _poly(img, pts, dark, False, line)  # type: ignore[arg-type]
    elif kind == "dome":  # shaded from the top left
        for f in np.linspace(1.0, 0.2, 6):
            shade = tuple(int(min(255, v * (0.7 + 0.5 * (1 - f)))) for v in col)
            off = round((1 - f) * 0.35 * rr)
            cv2.circle(img, (ci[0] - off, ci[1] - off), max(1, round(f * rr)), shade, -1, cv2.LINE_AA)
    else:
        cv2.circle(img, ci, rr, col, -1, cv2.LINE_AA)
        cv2.circle(img, ci, rr, dark, line, cv2.LINE_AA)
    if kind == "stud":
        hl = (ci[0] - round(0.3 * rr), ci[1] - round(0.3 * rr))
        cv2.circle(img, hl, max(1, round(0.25 * rr)), (245, 245, 245), -1, cv2.LINE_AA)
    elif kind == "ring":
        cv2.circle(img, ci, max(2, round(0.65 * rr)), dark, line, cv2.LINE_AA)
    if first:
        cv2.circle(img, ci, max(2, round(style.dot_share * rr)), style.dot, -1, cv2.LINE_AA)


def _grain(rng: np.random.Generator, kind: str, amount: float, h: int, w: int) -> np.ndarray:
    """A texture (h, w, 1) float32 around 0: low-frequency noise, brushed streaks or speckle."""
    if kind == "brushed":
        streaks = rng.normal(0, amount, (h, 1)).astype(np.float32)
        return cv2.resize(streaks, (w, h), interpolation=cv2.INTER_LINEAR)[..., None]
    if kind == "speckle":
        return cv2.GaussianBlur(rng.normal(0, amount, (h, w)).astype(np.float32), (0, 0), 0.8)[..., None]
    small = rng.normal(0, amount, (8, 8, 1)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)[..., None]


def _bevel(img: np.ndarray, width: int, strength: float) -> np.ndarray:
    """Light the top and left edges and shade the bottom and right ones (a raised plate)."""
    n = img.shape[0]
    ramp = np.clip(1 - np.arange(n, dtype=np.float32) / max(width, 1), 0, 1)
    top, left = ramp[:, None], ramp[None, :]
    bottom, right = ramp[::-1][:, None], ramp[::-1][None, :]
    light = np.maximum(top, left) - np.maximum(bottom, right)
    return np.clip(img.astype(np.float32) + strength * light[..., None], 0, 255).astype(np.uint8)


@dataclass(frozen=True, slots=True)
class DrawnArt:
    """The project's tile and mat drawing in one :class:`TileStyle` (an :class:`Art`)."""

    style: TileStyle = OWN_STYLE
    seed: int = 0  # the plate's and mat's texture

    def tile(self, builder: str, double: bool, value: int) -> np.ndarray:
        s, k = self.style, TILE_PX_PER_MM
        n = round(TILE_MM * k)
        b = BUILDERS.index(builder)
        rng = np.random.default_rng([self.seed, b, value, int(double)])
        color = s.plates[b]
        framed = s.plate_kind == "framed"
        img = np.empty((n, n, 3), np.float32)
        img[:] = np.array(s.paper if framed else color, np.float32)
        if s.plate_noise:
            img += _grain(rng, s.plate_texture, s.plate_noise, n, n)
        img = np.clip(img, 0, 255).astype(np.uint8)
        if framed:
            f = round(s.frame_mm * k)
            cv2.rectangle(img, (f // 2, f // 2), (n - 1 - f // 2, n - 1 - f // 2), color, f)
            if s.inner_line:
                g = f + round(1.5 * k)
                cv2.rectangle(img, (g, g), (n - 1 - g, n - 1 - g), color, max(1, round(0.4 * k)), cv2.LINE_AA)
        elif s.plate_kind == "bevel":
            img = _bevel(img, round(s.frame_mm * k), 45.0 if _brightness(color) < 200 else 30.0)
        bw = round(s.border_mm * k)
        if bw:
            cv2.rectangle(
                img, (bw // 2, bw // 2), (n - 1 - bw // 2, n - 1 - bw // 2), s.border, bw, cv2.LINE_AA
            )
        ink = color if s.ink_per_builder else s.ink
        w = max(1, round(s.icon_weight * k))
        moved = np.zeros((3, 2))
        if s.jitter_mm:  # its own stream: the plate's grain stays the one drawn without it
            jit = np.random.default_rng([self.seed, b, value, int(double), 23])
            moved = jit.uniform(-s.jitter_mm, s.jitter_mm, (3, 2)) * k
        icon_c = (s.icon_at[0] * k + moved[0, 0], s.icon_at[1] * k + moved[0, 1])
        letter_c = (s.letter_at[0] * k + moved[1, 0], s.letter_at[1] * k + moved[1, 1])
        dial_c = (s.dial_at[0] * k + moved[2, 0], s.dial_at[1] * k + moved[2, 1])
        if s.clutter:  # under the marks; streams of their own keep every other pixel as before
            draw_clutter(
                img, s.clutter, ink, k, np.random.default_rng([self.seed, b, value, int(double), 37])
            )
        reshape = reshaper(s, k, np.random.default_rng([self.seed, b, value, int(double), 29]))
        if s.marks == "letter":
            pass
        elif s.stamped:
            _stamp(
                img,
                lambda mk, cc: draw_icon(
                    mk, builder, cc, s.icon_mm * k, WHITE, s.icon_fill, w, s.icon_variant, (0, 0, 0)
                ),
                icon_c,
                s.icon_mm * k,
                ink,
                s.icon_aspect,
                s.icon_turn,
                s.icon_shear,
                reshape,
            )
        else:
            draw_icon(img, builder, icon_c, s.icon_mm * k, ink, s.icon_fill, w)
        height, weight = s.letter_mm * k * s.letter_scale, max(1, round(s.letter_weight * k))
        if s.marks == "icon":
            pass
        elif s.letter_strokes:
            strokes = np.random.default_rng([self.seed, b, 31])  # one hand per look and Builder
            _stamp(
                img,
                lambda mk, cc: draw_initial(
                    mk, builder[0], cc, height, weight, s.letter_serif, s.letter_contrast, strokes
                ),
                letter_c,
                1.3 * height * max(1.0, s.letter_aspect),
                ink,
                aspect=s.letter_aspect,
                shear=s.slant,
                reshape=reshape,
            )
        else:
            _label(img, builder[0], letter_c, height, s, ink, weight, s.letter_aspect, reshape)
        draw_dial(img, value, dial_c, s.dial_r * k, s, k)
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

    def _ground(self, rng: np.random.Generator, w: int, h: int) -> np.ndarray:
        """The mat's material, (h, w, 3) float32."""
        s = self.style
        img = np.empty((h, w, 3), np.float32)
        img[:] = s.mat
        if s.mat_kind == "wood":  # growth rings along the mat, bent by slow noise
            along = rng.random() < 0.5
            length, across = (w, h) if along else (h, w)
            bend = cv2.resize(
                rng.normal(0, 1, (across // 25 + 2, 4)).astype(np.float32),
                (length, across),
                interpolation=cv2.INTER_CUBIC,
            )
            ys = np.arange(across, dtype=np.float32)[:, None]
            rings = np.sin(ys / rng.uniform(1.5, 5.0) + rng.uniform(2, 8) * bend)
            shade = 1 + rng.uniform(0.04, 0.15) * rings + 0.04 * bend
            img *= (shade if along else shade.T)[..., None]
        elif s.mat_kind == "felt":
            fibres = cv2.GaussianBlur(
                rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), rng.uniform(0.6, 1.5)
            )
            img += rng.uniform(6, 20) * fibres[..., None]
        elif s.mat_kind == "card":
            img += rng.normal(0, rng.uniform(1, 5), (h, w, 1)).astype(np.float32)
        if s.mat_noise:
            small = rng.normal(0, s.mat_noise, (h // 30 + 2, w // 30 + 2, 1)).astype(np.float32)
            img += cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)[..., None]
        return img

    def mat(self, rng: np.random.Generator, w: int, h: int, pitch_px: float, border_px: float) -> np.ndarray:
        s = self.style
        img = np.clip(self._ground(rng, w, h), 0, 255).astype(np.uint8)
        lw = max(1, round(pitch_px / 45))
        for r in range(ROWS_PER_MAT):
            for c in range(COLUMNS):
                x0, y0 = border_px + c * pitch_px, border_px + r * pitch_px
                p0 = (round(x0 + 2 * lw), round(y0 + 2 * lw))
                p1 = (round(x0 + pitch_px - 2 * lw), round(y0 + pitch_px - 2 * lw))
                mid = ((p0[0] + p1[0]) / 2, (p0[1] + p1[1]) / 2)
                if c == COLUMNS - 1:  # the marked square
                    self._column5(img, p0, p1, mid, pitch_px, lw, rng)
                elif s.decor and rng.random() < s.decor:
                    self._decor(img, mid, pitch_px, lw, rng)
                self._square(img, p0, p1, lw)
        return img

    def _square(self, img: np.ndarray, p0: tuple[int, int], p1: tuple[int, int], lw: int) -> None:
        s = self.style
        kind = s.square_marks
        if kind == "line":
            cv2.rectangle(img, p0, p1, s.mat_line, lw, cv2.LINE_AA)
        elif kind == "engraved":  # a groove: dark, with a lit edge beside it
            dark = tuple(int(v * 0.45) for v in s.mat)
            lit = tuple(int(min(255, v * 1.5 + 30)) for v in s.mat)
            cv2.rectangle(img, p0, p1, dark, lw + 1, cv2.LINE_AA)
            cv2.rectangle(img, (p0[0] + lw + 1, p0[1] + lw + 1), (p1[0] + 1, p1[1] + 1), lit, 1, cv2.LINE_AA)
        elif kind == "recessed":
            roi = img[p0[1] : p1[1], p0[0] : p1[0]]
            roi[:] = np.clip(roi.astype(np.float32) * 0.82, 0, 255).astype(np.uint8)
            cv2.rectangle(img, p0, p1, s.mat_line, 1, cv2.LINE_AA)
        elif kind == "corners":
            arm = round(0.18 * (p1[0] - p0[0]))
            for (x, y), (dx, dy) in (
                (p0, (1, 1)),
                ((p1[0], p0[1]), (-1, 1)),
                ((p0[0], p1[1]), (1, -1)),
                (p1, (-1, -1)),
            ):
                cv2.line(img, (x, y), (x + dx * arm, y), s.mat_line, lw, cv2.LINE_AA)
                cv2.line(img, (x, y), (x, y + dy * arm), s.mat_line, lw, cv2.LINE_AA)

    def _column5(
        self,
        img: np.ndarray,
        p0: tuple[int, int],
        p1: tuple[int, int],
        mid: tuple[float, float],
        pitch_px: float,
        lw: int,
        rng: np.random.Generator,
    ) -> None:
        s = self.style
        kind = s.column5
        if kind in ("star", "fill"):
            cv2.rectangle(img, p0, p1, s.mark, -1, cv2.LINE_AA)
        if kind == "star":
            _poly(
                img,
                [_pt(mid, 0.3 * pitch_px, math.pi / 2 + k * 4 * math.pi / 5) for k in range(5)],
                s.mat_line,
                False,
                lw,
            )
        elif kind == "hatch":
            roi = img[p0[1] : p1[1], p0[0] : p1[0]]
            gap = int(rng.integers(5, 13))
            for d in range(0, 2 * max(roi.shape[:2]), gap):
                cv2.line(roi, (d, 0), (d - roi.shape[0], roi.shape[0]), s.mark, 1, cv2.LINE_AA)
        elif kind == "dots":
            gap = int(rng.integers(6, 12))
            for y in range(p0[1] + gap // 2, p1[1], gap):
                for x in range(p0[0] + gap // 2, p1[0], gap):
                    cv2.circle(img, (x, y), max(1, gap // 5), s.mark, -1, cv2.LINE_AA)
        elif kind == "frame":
            cv2.rectangle(img, p0, p1, s.mark, 3 * lw, cv2.LINE_AA)

    def _decor(
        self, img: np.ndarray, mid: tuple[float, float], pitch_px: float, lw: int, rng: np.random.Generator
    ) -> None:
        """A faint print on a square that is not a tile (a ring, a cross, a number, a small box)."""
        s = self.style
        layer = img.copy()
        kind = int(rng.integers(4))
        r = pitch_px * rng.uniform(0.15, 0.35)
        if kind == 0:
            cv2.circle(layer, _ipt(mid), round(r), s.mat_line, lw, cv2.LINE_AA)
        elif kind == 1:
            for a in (math.pi / 4, 3 * math.pi / 4):
                cv2.line(layer, _ipt(_pt(mid, r, a)), _ipt(_pt(mid, -r, a)), s.mat_line, lw, cv2.LINE_AA)
        elif kind == 2:
            _text(layer, str(int(rng.integers(1, 10))), mid, r, cv2.FONT_HERSHEY_SIMPLEX, s.mat_line, lw)
        else:
            cv2.rectangle(
                layer, _ipt((mid[0] - r, mid[1] - r)), _ipt((mid[0] + r, mid[1] + r)), s.mat_line, lw
            )
        a = rng.uniform(0.2, 0.6)
        img[:] = cv2.addWeighted(layer, a, img, 1 - a, 0)


@dataclass(frozen=True, slots=True)
class PhotoArt:
    """A table's enrolled tile photos (:mod:`vision.tile_enrol`) as an :class:`Art`: a tile
    enrolled for this Builder, Double and value is the photo (with a slight change of light per
    scene), any other is drawn by ``fallback``; the mat is the enrolled mat photo, or the
    fallback's. With ``rng``, each tile and mat laid is the photo seen afresh (:meth:`retake`),
    so that the network learns the tile, not the photo's pixels."""

    tiles: dict[tuple[str, bool, int], np.ndarray]
    mat_photo: np.ndarray | None
    fallback: DrawnArt
    gain: float = 1.0
    rng: np.random.Generator | None = None

    def tile(self, builder: str, double: bool, value: int) -> np.ndarray:
        photo = self.tiles.get((builder, double, value))
        if photo is None:
            return self.fallback.tile(builder, double, value)
        n = round(TILE_MM * TILE_PX_PER_MM)
        img = cv2.resize(photo, (n, n), interpolation=cv2.INTER_AREA).astype(np.float32)
        if self.rng is not None:
            img = self.retake(img, self.rng)
        return np.clip(img * self.gain, 0, 255).astype(np.uint8)

    @staticmethod
    def retake(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The photo as another photo of the tile might have it: cropped up to 1.2 mm otherwise at
        each corner, a ramp of light of up to ±8 %, a colour cast of up to ±6 %, softened (half
        of the time) by up to 0.9 px."""
        h, w = img.shape[:2]
        src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        dst = src + rng.uniform(-1.2, 1.2, (4, 2)).astype(np.float32) * TILE_PX_PER_MM
        out = cv2.warpPerspective(
            img, cv2.getPerspectiveTransform(src, dst), (w, h), borderMode=cv2.BORDER_REPLICATE
        )
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        ramp = 1 + rng.uniform(-0.16, 0.16) * (xx / w - 0.5) + rng.uniform(-0.16, 0.16) * (yy / h - 0.5)
        out = out * ramp[..., None] * rng.uniform(0.94, 1.06, 3).astype(np.float32)
        if rng.random() < 0.5:
            out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.3, 0.9))
        return out

    def mat(self, rng: np.random.Generator, w: int, h: int, pitch_px: float, border_px: float) -> np.ndarray:
        if self.mat_photo is None:
            return self.fallback.mat(rng, w, h, pitch_px, border_px)
        img = cv2.resize(self.mat_photo, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
        if self.rng is not None:  # the mat seen afresh too, from the art's own stream
            img = self.retake(img, self.rng)
        return np.clip(img * rng.uniform(0.85, 1.15), 0, 255).astype(np.uint8)


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


# ----------------------------------------------------------------------------- the Damage token

#: What the Damage track can show (CONTRIVANCE_RULINGS.md ruling 17: it reads 0-10).
DAMAGE_VALUES: tuple[int, ...] = tuple(range(MAX_DAMAGE + 1))
TOKEN_MM = 36.0  #: a Damage token's diameter
#: The Contrivance tile's back: how its face-down side is patterned.
BACKS: tuple[str, ...] = ("plain", "rings", "grid", "gear")
#: How a token tells 6 from 9 (and every other number from its upside-down self): a bar under
#: the number or a dot after it.
UNDERLINES: tuple[str, ...] = ("bar", "dot")


#: Text drawn in a face of its own, not an OpenCV font: ``draw(img, text, centre, height_px,
#: weight_px, colour)`` (a :class:`DamageStyle`'s ``font`` may be one).
Lettering = Callable[[np.ndarray, str, tuple[float, float], float, int, BGR], None]

#: A stroke of a figure: points in a box one unit tall (x right, y down).
Stroke = tuple[tuple[float, float], ...]


def arc(c: tuple[float, float], rx: float, ry: float, a0: float, a1: float, n: int = 12) -> Stroke:
    """Points on an ellipse from ``a0`` to ``a1`` degrees (y down: 90 is straight down)."""
    return tuple(
        (
            c[0] + rx * math.cos(math.radians(a0 + (a1 - a0) * i / n)),
            c[1] + ry * math.sin(math.radians(a0 + (a1 - a0) * i / n)),
        )
        for i in range(n + 1)
    )


def _bend(a: tuple[float, float], ctrl: tuple[float, float], b: tuple[float, float], n: int = 8) -> Stroke:
    """A quadratic curve from ``a`` to ``b`` pulled towards ``ctrl``."""
    t = np.linspace(0, 1, n + 1)
    return tuple(
        (
            float((1 - u) ** 2 * a[0] + 2 * (1 - u) * u * ctrl[0] + u**2 * b[0]),
            float((1 - u) ** 2 * a[1] + 2 * (1 - u) * u * ctrl[1] + u**2 * b[1]),
        )
        for u in t
    )


#: How many ways :func:`figure_strokes` draws each figure (its ``variant`` is taken modulo).
FIGURE_VARIANTS: dict[str, int] = {
    "0": 3, "1": 3, "2": 2, "3": 2, "4": 2, "5": 2, "6": 2, "7": 2, "8": 2, "9": 2,
}  # fmt: skip


def figure_strokes(ch: str, variant: int, w: float, waist: float) -> tuple[float, tuple[Stroke, ...]]:
    """The project's stroke figures (the Damage token's numbers, training only): figure ``ch``
    (0-9) drawn the ``variant``-th way, ``w`` wide (a share of its height, about 0.45-0.8) with
    the waist of a 3, 5 or 8 at ``waist`` of its height; returns its width and its strokes.
    A design of the project's own, kept away on purpose from the held-out italic's
    (``benchmarks/workbench_heldout.GLYPHS``: no flat-topped 3, open 4, crossed 7, open-looped 8
    or tailed 9 here; ``tests/test_vision_workbench.py`` bounds their overlap)."""
    v = variant % FIGURE_VARIANTS[ch]
    h = w / 2
    if ch == "0":
        if v == 1:  # a stadium: straight sides
            r = h
            return w, ((*arc((h, r), h, r, 180, 360, 8), *arc((h, 1 - r), h, r, 0, 180, 8), (0.0, r)),)
        ring = arc((h, 0.5), h, 0.5, -90, 270, 20)
        return w, ((ring,) if v == 0 else (ring, ((0.22 * w, 0.78), (0.78 * w, 0.22))))
    if ch == "1":
        x = 0.6 * w
        strokes: tuple[Stroke, ...] = (((x, 0.0), (x, 1.0)),)
        if v >= 1:
            strokes += (((x - 0.45 * w, 0.16 + 0.1 * (v - 1)), (x, 0.0)),)
        if v == 2:
            strokes += (((x - 0.4 * w, 1.0), (x + 0.4 * w, 1.0)),)
        return w, strokes
    if ch == "2":
        top = arc((h, 0.28), h, 0.28, 195, 375, 10)
        neck = ((0.0, 1.0),) if v == 0 else _bend(top[-1], (0.15 * w, 0.62), (0.0, 1.0))[1:]
        return w, ((*top, *neck, (w, 1.0)),)
    if ch == "3":
        upper = arc((0.47 * w, waist / 2), 0.47 * w, waist / 2, 200, 450, 10)
        lower = arc((h, (1 + waist) / 2), h, (1 - waist) / 2, 270, 510, 12)
        if v == 0:
            return w, ((*upper, *lower[1:]),)
        return w, (upper, ((0.22 * w, waist), (0.47 * w, waist), *lower[1:]))
    if ch == "4":
        x, y = (0.7 * w, 0.66) if v == 0 else (0.78 * w, 0.72)
        return w, (((x, 1.0), (x, 0.0), (0.0, y), (w, y)),)
    if ch == "5":
        stem = ((0.16 * w, 0.0), (0.1 * w, 0.45)) if v == 0 else ((0.1 * w, 0.0), (0.1 * w, 0.42))
        bowl = arc((h, 0.66), h, 0.34, 220, 515, 12)
        return w, (((0.9 * w, 0.0), *stem, *bowl),)
    if ch == "6":
        bowl = arc((h, 0.68), h, 0.32, 180, 540, 16)
        if v == 0:
            return w, ((*_bend((0.85 * w, 0.03), (0.05 * w, 0.1), (0.0, 0.68)), *bowl[1:]),)
        return w, (((0.8 * w, 0.0), (0.04 * w, 0.6)), bowl)
    if ch == "7":
        if v == 0:
            return w, (((0.0, 0.0), (w, 0.0), (0.32 * w, 1.0)),)
        return w, (((0.0, 0.0), *_bend((w, 0.0), (0.45 * w, 0.45), (0.38 * w, 1.0))),)
    if ch == "8":
        ru = (0.42 if v == 0 else 0.5) * w
        return w, (
            arc((h, waist / 2), ru, waist / 2, -90, 270, 14),
            arc((h, (1 + waist) / 2), h, (1 - waist) / 2, -90, 270, 16),
        )
    if ch == "9":
        bowl = arc((h, 0.32), h, 0.32, 0, 360, 16)
        return w, (bowl, ((w, 0.32), (w, 1.0)) if v == 0 else ((w, 0.32), (0.62 * w, 1.0)))
    raise ValueError(f"no stroke figure {ch!r}")


@dataclass(frozen=True, slots=True)
class StrokeFigures:
    """A hand of the project's stroke figures (:func:`figure_strokes`), a :data:`Lettering`:
    which way each figure is drawn, its width and waist, serifs across the ends of its straight
    strokes (a share of its height; 0: none), horizontals thinner (``contrast``), and its points
    moved by a smooth random field of ``wobble`` of its height (from ``seed``)."""

    variants: tuple[int, ...]  # per figure 0-9
    width: float  # a figure's width over its height
    waist: float
    serif: float = 0.0
    contrast: float = 1.0
    wobble: float = 0.0
    seed: int = 0

    def __call__(
        self, img: np.ndarray, text: str, c: tuple[float, float], height: float, weight: int, col: BGR | int
    ) -> None:
        gap = 0.12
        shapes = [
            figure_strokes(ch, self.variants[int(ch)], self.width * (0.7 if ch == "1" else 1), self.waist)
            for ch in text
        ]
        x = c[0] - (sum(s[0] for s in shapes) + gap * (len(text) - 1)) * height / 2
        y0 = c[1] - height / 2
        rng = np.random.default_rng([self.seed, 41])
        phase, freq = rng.uniform(0, 2 * math.pi, (2, 2)), rng.uniform(1.0, 3.0, (2, 2))

        def at(p: tuple[float, float], x0: float) -> tuple[float, float]:
            d = [
                self.wobble * math.sin(freq[i, 0] * 2 * p[0] + freq[i, 1] * 2 * p[1] + phase[i, 0])
                for i in (0, 1)
            ]
            return (x0 + (p[0] + d[0]) * height, y0 + (p[1] + d[1]) * height)

        for w, strokes in shapes:
            for stroke in strokes:
                pts = [at(p, x) for p in stroke]
                for a, b in itertools.pairwise(pts):
                    steep = abs(b[1] - a[1]) / max(math.hypot(b[0] - a[0], b[1] - a[1]), 1e-6)
                    lw = max(1, round(weight * (self.contrast + (1 - self.contrast) * steep)))
                    subpixel_line(img, a, b, col, lw)
                if self.serif <= 0 or len(stroke) > 4:
                    continue  # serifs on straight strokes' ends only, not on bowls
                half, thin = self.serif * height / 2, max(1, round(weight * min(1.0, self.contrast + 0.2)))
                for (_, py), (ux, uy) in ((stroke[0], pts[0]), (stroke[-1], pts[-1])):
                    if py <= 0.05 or py >= 0.95:
                        subpixel_line(img, (ux - half, uy), (ux + half, uy), col, thin)
            x += (w + gap) * height


def random_figures(rng: np.random.Generator) -> StrokeFigures:
    """A new hand of stroke figures: a way per figure, width 0.45-0.8 of the height, waist
    0.4-0.55, serifs on a third, thin horizontals on a third, a wobble of up to 4 %."""
    return StrokeFigures(
        variants=tuple(int(rng.integers(FIGURE_VARIANTS[str(d)])) for d in range(10)),
        width=float(rng.uniform(0.45, 0.8)),
        waist=float(rng.uniform(0.4, 0.55)),
        serif=float(rng.uniform(0.2, 0.45)) if rng.random() < 1 / 3 else 0.0,
        contrast=float(rng.uniform(0.35, 0.9)) if rng.random() < 1 / 3 else 1.0,
        wobble=float(rng.uniform(0.0, 0.04)),
        seed=int(rng.integers(2**31)),
    )


@dataclass(frozen=True, slots=True)
class DamageStyle:
    """A look of the Contrivance tile's back and the round Damage token (seed 004, setup step 2:
    numbered tokens laid on the face-down Contrivance tile to the right of the Workbench)."""

    back: BGR
    back_ink: BGR
    back_kind: str  # one of BACKS
    token: BGR
    rim: BGR
    rim_mm: float  # 0: no rim
    digits: BGR
    font: int | Lettering  # an OpenCV font, or a function drawing the number in a face of its own
    digit_mm: float  # the number's height
    weight_mm: float  # its stroke
    underline: str  # one of UNDERLINES, drawn under 6 and 9 (the numbers a turn confuses)
    slant: float = 0.0
    #: The number's mask warped by a smooth random field of this share of its size (from
    #: ``warp_seed``) and thickened (or, < 0, thinned) by ``grow_mm``: figures as no face draws
    #: them (training only; 0 draws the number as its face does).
    warp: float = 0.0
    grow_mm: float = 0.0
    warp_seed: int = 0


OWN_DAMAGE = DamageStyle(
    back=(60, 45, 40),
    back_ink=(120, 150, 175),
    back_kind="gear",
    token=(40, 40, 190),
    rim=(230, 235, 240),
    rim_mm=2.0,
    digits=(240, 245, 245),
    font=cv2.FONT_HERSHEY_DUPLEX,
    digit_mm=16.0,
    weight_mm=1.8,
    underline="bar",
)


def _damage_look(rng: np.random.Generator) -> DamageStyle:
    """The first random look of the Contrivance tile and its Damage token (tones, back, a
    training font, sizes, bar or dot, slant)."""
    token = _tone(rng)
    back = _tone(rng)
    return DamageStyle(
        back=back,
        back_ink=_contrast(rng, back, 40),
        back_kind=BACKS[int(rng.integers(len(BACKS)))],
        token=token,
        rim=_contrast(rng, token, 60),
        rim_mm=float(rng.choice([0.0, rng.uniform(1.0, 3.5)])),
        digits=_contrast(rng, token, 100),
        font=TRAIN_FONTS[int(rng.integers(len(TRAIN_FONTS)))],
        digit_mm=float(rng.uniform(12.0, 19.0)),
        weight_mm=float(rng.uniform(1.0, 2.6)),
        underline=UNDERLINES[int(rng.integers(len(UNDERLINES)))],
        slant=float(rng.uniform(-0.3, 0.3)) if rng.random() < 0.4 else 0.0,
    )


#: The share of random Damage looks whose numbers are the project's stroke figures (since
#: 2026-11-24, fifth session), and of those drawn warped or thickened.
STROKE_FIGURE_SHARE = 0.5
FIGURE_WARP_SHARE = 0.5
FIGURE_GROW_SHARE = 0.3


def random_damage_style(rng: np.random.Generator) -> DamageStyle:
    """A new look of the Contrivance tile and its Damage token (one per training scene): the
    first look's choices (:func:`_damage_look`), then, drawn after them, the number in the
    project's stroke figures (:data:`STROKE_FIGURE_SHARE`, strokes 0.8-3 mm) and, whatever
    draws it, warped by 2-8 % (:data:`FIGURE_WARP_SHARE`) or thickened or thinned
    (:data:`FIGURE_GROW_SHARE`): a number is told by its shape, not by a face."""
    style = _damage_look(rng)
    if rng.random() < STROKE_FIGURE_SHARE:
        style = replace(style, font=random_figures(rng), weight_mm=float(rng.uniform(0.8, 3.0)))
    return replace(
        style,
        warp=float(rng.uniform(0.02, 0.08)) if rng.random() < FIGURE_WARP_SHARE else 0.0,
        grow_mm=float(rng.uniform(-0.5, 0.7)) if rng.random() < FIGURE_GROW_SHARE else 0.0,
        warp_seed=int(rng.integers(2**31)),
    )


def contrivance_back(style: DamageStyle, side_mm: float, seed: int = 0) -> np.ndarray:
    """The face-down Contrivance tile, ``side_mm`` square at TILE_PX_PER_MM (BGR)."""
    k = TILE_PX_PER_MM
    n = round(side_mm * k)
    rng = np.random.default_rng([seed, 23])
    img = np.empty((n, n, 3), np.float32)
    img[:] = style.back
    img = np.clip(img + _grain(rng, "noise", 5.0, n, n), 0, 255).astype(np.uint8)
    ink, c, w = style.back_ink, ((n - 1) / 2, (n - 1) / 2), max(1, round(0.8 * k))
    if style.back_kind == "rings":
        for r in np.arange(6, side_mm / 2, 7) * k:
            cv2.circle(img, _ipt(c), round(r), ink, w, cv2.LINE_AA)
    elif style.back_kind == "grid":
        for v in np.arange(0, n, 10 * k):
            cv2.line(img, (round(v), 0), (round(v), n - 1), ink, w, cv2.LINE_AA)
            cv2.line(img, (0, round(v)), (n - 1, round(v)), ink, w, cv2.LINE_AA)
    elif style.back_kind == "gear":
        draw_icon(img, "Engineer", c, 0.8 * side_mm * k, ink, False, w)
    cv2.rectangle(img, (w, w), (n - 1 - w, n - 1 - w), ink, w, cv2.LINE_AA)
    return img


def damage_token(style: DamageStyle, value: int) -> np.ndarray:
    """The round Damage token showing ``value`` upright, TOKEN_MM across at TILE_PX_PER_MM,
    BGRA (transparent outside the disc; the renderer turns it at any angle)."""
    if value not in DAMAGE_VALUES:
        raise ValueError(f"damage token: no token shows {value!r} (0-10)")
    k = TILE_PX_PER_MM
    n = round(TOKEN_MM * k)
    c = ((n - 1) / 2, (n - 1) / 2)
    img = np.zeros((n, n, 3), np.uint8)
    img[:] = style.token
    if style.rim_mm:
        cv2.circle(
            img, _ipt(c), round(n / 2 - style.rim_mm * k / 2), style.rim, round(style.rim_mm * k), cv2.LINE_AA
        )
    text, h, w = str(value), style.digit_mm * k, max(1, round(style.weight_mm * k))
    centre = (c[0], c[1] - (0.12 * h if value in (6, 9) else 0.0))
    font = style.font
    if isinstance(font, int):
        draw = lambda mk, cc: _text(mk, text, cc, h, font, WHITE, w)  # noqa: E731
    else:
        draw = lambda mk, cc: font(mk, text, cc, h, w, WHITE)  # noqa: E731
    reshape = mask_reshaper(
        style.grow_mm, style.warp, 0.0, k, np.random.default_rng([style.warp_seed, value])
    )
    _stamp(img, draw, centre, 1.2 * h, style.digits, shear=style.slant, reshape=reshape)
    if value in (6, 9):
        y = centre[1] + 0.68 * h
        if style.underline == "bar":
            half = 0.3 * h
            cv2.line(img, _ipt((c[0] - half, y)), _ipt((c[0] + half, y)), style.digits, w, cv2.LINE_AA)
        else:
            cv2.circle(img, _ipt((c[0] + 0.45 * h, centre[1] + 0.45 * h)), w, style.digits, -1, cv2.LINE_AA)
    mask = np.zeros((n, n), np.uint8)
    cv2.circle(mask, _ipt(c), n // 2, 255, -1, cv2.LINE_AA)
    return np.dstack([img, mask])
