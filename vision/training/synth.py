"""Synthetic Gizmos tables: a layout of plain ids and colors rendered as a camera would see it.

``render_table(layout, seed, settings)`` draws the table top-down in millimetres (generated
texture, ArUco tiles, cards, glossy marbles, VP tokens), projects it through a pinhole camera
60–120 cm above the table (straight down or tilted), adds hands, lighting, shadows, glare, blur,
sensor noise and JPEG artefacts, and returns the image with its ground truth: an
:class:`~referee.observation.Observation` at confidence 1.0, the object boxes and YOLO labels in
the rectified (canonical) frame the detector works in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Protocol

import cv2
import numpy as np

from referee.gizmos.cards import COLORS, default_cards
from referee.observation import CardSighting, MarbleSighting, Observation, PlayerSighting, SlotSighting
from vision.faces import BAND_MM, CARD_MM, draw_back, face_set
from vision.geometry import (
    CANON_PX_PER_MM,
    CANON_SIZE,
    MARBLE_MM,
    YoloRow,
    canonical_from_image,
    covered_zones,
    yolo_row,
    zone_rects,
)
from vision.zones import (
    COLUMN_ORDER,
    COLUMN_PITCH,
    LOCAL_ARCHIVE,
    STACK_TOP,
    Rect,
    Zones,
    default_zones,
    inside,
)

VP_MM: dict[int, float] = {1: 18.0, 5: 24.0}
CANVAS_PX_PER_MM = 1.6
CANVAS_MARGIN_MM = 100.0
SIZES: tuple[tuple[int, int], ...] = ((1280, 720), (1920, 1080))
ENERGY_ROW_PITCH = 28.0


@dataclass(frozen=True, slots=True)
class PlayerLayout:
    """One player's area by plain ids: five dashboard columns (in COLUMN_ORDER), archive, ring, tokens."""

    seat: int
    columns: tuple[tuple[int, ...], ...] = ((), (), (), (), ())
    archive: tuple[int, ...] = ()
    ring: tuple[str, ...] = ()
    vp_ones: int = 0
    vp_fives: int = 0


@dataclass(frozen=True, slots=True)
class TableLayout:
    """What lies on the table. ``display`` holds (level, slot, card id or None) for every slot."""

    display: tuple[tuple[int, int, int | None], ...]
    energy_row: tuple[str, ...]
    players: tuple[PlayerLayout, ...]
    decks: tuple[int, ...] = (1, 2, 3)  # levels whose deck still has cards
    dispenser: tuple[str, ...] = ()  # marbles visible in the dispenser tray (not part of the observation)
    supply_tokens: int = 0  # VP tokens in the common supply (not part of the observation)


#: Colours a hand: ``look(rng, along, across, palm)`` gives the arm's BGR colour at every pixel of
#: the frame (float32, h x w x 3) from each pixel's place on the arm, ``along`` it from the frame's
#: edge and ``across`` it from its axis, and how far along the palm's centre lies (beyond it the
#: fingers), all in the pixels of a 1280-wide frame and an average hand (the forearm is about 76
#: wide, the palm 110, a finger 70-85 long).
HandLook = Callable[[np.random.Generator, np.ndarray, np.ndarray, float], np.ndarray]


@dataclass(frozen=True, slots=True)
class RenderSettings:
    """Camera and nuisance ranges; the defaults are the training distribution."""

    size: tuple[int, int] = (1280, 720)
    height_mm: tuple[float, float] = (600.0, 1200.0)
    max_tilt_deg: float = 25.0
    max_yaw_deg: float = 4.0
    hand_prob: float = 0.3
    effects: bool = True
    jitter_mm: float = 2.5
    jitter_deg: float = 2.5
    #: Style hooks (None: the project's own look). A style kept out of all training (the
    #: benchmark's held-out style, ``benchmarks/heldout.py``) or a domain-randomised one plugs in
    #: here: the table surface ``texture(rng, w, h) -> BGR``, the camera's processing
    #: ``camera(rng, image) -> image`` (instead of the built-in effects), the VP tokens' fill
    #: colors (1s, 5s), and ring marbles in touching clusters instead of scattered apart.
    texture: Callable[[np.random.Generator, int, int], np.ndarray] | None = None
    camera: Callable[[np.random.Generator, np.ndarray], np.ndarray] | None = None
    token_fills: tuple[tuple[int, int, int], tuple[int, int, int]] = ((200, 170, 60), (40, 120, 230))
    touching_marbles: bool = False
    #: Marble looks (``maker(color, light) -> (BGR, alpha)``, default :func:`marble_sprite`'s
    #: glossy sphere), the VP tokens' printing (rim, digits; default white), and the dispenser
    #: tray's marbles in touching heaps too: hooks of the domain-randomised training scenes.
    marble_look: Callable[[str, np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None
    token_print: TokenPrint | None = None
    tray_heaps: bool = False
    #: Also render the empty table (``RenderedScene.empty_image``): the same surface, markers,
    #: mats and tray, camera and lamp, before anything is put on it (the occlusion stage's
    #: background, vision/occlusion.py).
    empty_table: bool = False
    #: Also render this many other frames of the same table (``RenderedScene.other_images``):
    #: the same camera and lamp, an arm of its own reaching in (or none, half the time), as the
    #: still frames before this one would show it if nothing on the table had moved (the learned
    #: table's benchmark, vision/occlusion.py: LearnedTable).
    other_frames: int = 0
    #: How the hand and forearm are coloured (:data:`HandLook`; default the project's bare arm of
    #: one skin tone): sleeves, gloves, other skin tones (issue 14, item 3).
    hand_look: HandLook | None = None
    #: Another renderer of the same tables (``renderer(layout, seed, settings, zones, faces)``,
    #: default :func:`render_table`): the benchmark's ray-traced condition plugs in here
    #: (``benchmarks/raytrace.py``), drawing the same layouts, placements and cameras in 3-D.
    renderer: Renderer | None = None


class Renderer(Protocol):
    """What draws a layout as one camera frame with its truth (:func:`render_table`, or the ray
    tracer :func:`vision.training.raytrace.render_raytraced`)."""

    def __call__(
        self,
        layout: TableLayout,
        seed: int,
        settings: RenderSettings | None = None,
        zones: Zones | None = None,
        faces: tuple[np.ndarray, ...] | None = None,
    ) -> RenderedScene: ...


#: Draws a token's value: (image, text, centre px, height px, stroke px, color).
Lettering = Callable[[np.ndarray, str, tuple[float, float], float, int, tuple[int, int, int]], None]


@dataclass(frozen=True, slots=True)
class TokenPrint:
    """How a VP token is printed besides its fill: rim color and width, digits' color, font,
    stroke and size (``None`` in :class:`RenderSettings`: white rim and digits, the project's).

    ``lettering`` draws the value instead of the OpenCV ``font`` (``lettering(image, text,
    centre px, height px, stroke px, color)``, the height that of the font's digits): a printing
    in lettering of its own, which no OpenCV font draws (every OpenCV font is a training font;
    the benchmark's held-out printing, ``benchmarks/heldout.py``, uses it)."""

    rim: tuple[int, int, int] = (245, 245, 245)
    rim_px: int = 2
    digits: tuple[int, int, int] = (250, 250, 250)
    font: int = cv2.FONT_HERSHEY_DUPLEX
    stroke: int = 2
    scale: float = 1.0
    lettering: Lettering | None = None


@dataclass(frozen=True, slots=True)
class SceneObject:
    """One labelled object: class, table-frame box (x1, y1, x2, y2 in mm), and what it is."""

    cls: str
    box_mm: tuple[float, float, float, float]
    card: int | None = None
    color: str | None = None
    visible: bool = True  # False when mostly under a hand (then it is not labelled)


@dataclass(frozen=True, slots=True)
class Placed:
    """One thing put on the table as :func:`_draw_table` places it (table mm, degrees): what a
    renderer of another kind needs to build the same table in 3-D. Kinds: ``card`` (``card``: its
    id), ``back`` (a deck's card, ``level``), ``marble`` (``color``), ``token`` (``points``)."""

    kind: str
    center: tuple[float, float]
    angle_deg: float = 0.0
    card: int | None = None
    level: int | None = None
    color: str | None = None
    points: int | None = None


@dataclass(slots=True)
class RenderedScene:
    """A rendered frame with its ground truth."""

    image: np.ndarray
    truth: Observation
    objects: list[SceneObject]
    homography: np.ndarray  # table mm -> image pixels
    layout: TableLayout
    hands_mm: list[tuple[float, float, float, float]] = field(default_factory=list)
    #: The observation with nothing hidden (what is on the table under the hand too).
    uncovered: Observation | None = None
    #: Zones where the hand hides (mostly covers) an object: no reading can be right there.
    hidden: frozenset[str] = frozenset()
    #: The hand's pixels in the canonical table image (CANON_SIZE, 0 or 255); None without a hand.
    hand_mask: np.ndarray | None = None
    #: The empty table under the same camera and lamp (with ``RenderSettings.empty_table``).
    empty_image: np.ndarray | None = None
    #: Other frames of this table, other arms (``RenderSettings.other_frames``).
    other_images: tuple[np.ndarray, ...] = ()

    def yolo_labels(self) -> list[YoloRow]:
        """Labels for the canonical (rectified) image: class, cx, cy, w, h normalised."""
        rows = (
            yolo_row(o.cls, tuple(v * CANON_PX_PER_MM for v in o.box_mm))  # type: ignore[arg-type]
            for o in self.objects
            if o.visible
        )
        return [r for r in rows if r is not None]


# ----------------------------------------------------------------------------------------------- layout


def random_marbles(rng: np.random.Generator, count: int) -> tuple[str, ...]:
    """``count`` marbles of colours drawn uniformly (a ring, the Energy Row, the dispenser)."""
    return tuple(COLORS[int(k)] for k in rng.integers(0, len(COLORS), count))


def random_layout(rng: np.random.Generator, n_players: int | None = None) -> TableLayout:
    """A plausible table: distinct cards, Starting Gizmos in the file columns, marbles and tokens."""
    cards = default_cards()
    n = int(n_players or rng.integers(2, 5))
    pool = {lv: [c.id for c in cards if c.level == lv] for lv in (1, 2, 3)}
    for lv in pool:
        rng.shuffle(pool[lv])
    display = []
    for lv, slots in ((1, 4), (2, 3), (3, 2)):
        for s in range(slots):
            display.append((lv, s, None if rng.random() < 0.05 else pool[lv].pop()))
    players = []
    seats = [0, 1] if n == 2 else list(range(n))
    for seat in seats:
        columns: list[list[int]] = [[] for _ in COLUMN_ORDER]
        columns[COLUMN_ORDER.index("file")].append(seat)  # the Starting Gizmo
        for _ in range(int(rng.integers(0, 11))):
            lv = int(rng.choice([1, 2, 3], p=[0.5, 0.35, 0.15]))
            cid = pool[lv].pop()
            col = COLUMN_ORDER.index(cards[cid].type)
            if len(columns[col]) < 5:
                columns[col].append(cid)
        archive = tuple(pool[int(rng.choice([1, 2, 3]))].pop() for _ in range(int(rng.integers(0, 4))))
        ring = random_marbles(rng, int(rng.integers(0, 8)))
        players.append(
            PlayerLayout(
                seat,
                tuple(tuple(c) for c in columns),
                archive,
                ring,
                int(rng.integers(0, 5)),
                int(rng.integers(0, 3)),
            )
        )
    row_len = 6 if rng.random() < 0.9 else int(rng.integers(3, 6))
    return TableLayout(
        display=tuple(display),
        energy_row=random_marbles(rng, row_len),
        players=tuple(players),
        decks=tuple(lv for lv in (1, 2, 3) if rng.random() < 0.95),
        dispenser=random_marbles(rng, int(rng.integers(0, 14))),
        supply_tokens=int(rng.integers(0, 10)),
    )


# ----------------------------------------------------------------------------------------------- drawing


def _texture(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """A generated table surface: wood grain, cloth or speckled laminate."""
    kind = rng.integers(0, 3)
    base = rng.uniform(70, 200, 3)
    if kind == 0:  # wood: warm hue, stretched noise bands
        base = np.array([rng.uniform(40, 110), rng.uniform(80, 150), rng.uniform(120, 200)])
        noise = cv2.resize(
            rng.normal(0, 1, (h // 40 + 2, 8)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC
        )
        grain = np.sin(np.linspace(0, rng.uniform(40, 120), w)[None, :] + 3 * noise)
        shade = 1 + 0.12 * grain + 0.05 * noise
    elif kind == 1:  # cloth: fine weave
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        shade = (
            1
            + 0.06 * np.sin(xx * 1.3) * np.sin(yy * 1.3)
            + 0.04 * rng.normal(0, 1, (h, w)).astype(np.float32)
        )
    else:  # laminate with blotches
        blot = cv2.resize(
            rng.normal(0, 1, (h // 80 + 2, w // 80 + 2)).astype(np.float32),
            (w, h),
            interpolation=cv2.INTER_CUBIC,
        )
        shade = 1 + 0.08 * blot + 0.03 * rng.normal(0, 1, (h, w)).astype(np.float32)
    img = shade[..., None].astype(np.float32) * base[None, None, :].astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


_SCALED: dict[int, tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]] = {}
_SCALED_KEEP = 4  # face sets kept at canvas scale (drawn, and a few enrolment folders)


def _scaled_faces(faces: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """The faces at canvas scale, cached per face set (a bounded cache: renders run by the thousand)."""
    hit = _SCALED.get(id(faces))
    if hit is not None and hit[0] is faces:
        return hit[1]
    size = (round(CARD_MM[0] * CANVAS_PX_PER_MM), round(CARD_MM[1] * CANVAS_PX_PER_MM))
    scaled = tuple(cv2.resize(f, size, interpolation=cv2.INTER_AREA) for f in faces)
    while len(_SCALED) >= _SCALED_KEEP:
        _SCALED.pop(next(iter(_SCALED)))
    _SCALED[id(faces)] = (faces, scaled)
    return scaled


@cache
def _scaled_back(level: int) -> np.ndarray:
    size = (round(CARD_MM[0] * CANVAS_PX_PER_MM), round(CARD_MM[1] * CANVAS_PX_PER_MM))
    return cv2.resize(draw_back(level), size, interpolation=cv2.INTER_AREA)


class _Canvas:
    """The top-down table at CANVAS_PX_PER_MM with helpers in table millimetres."""

    def __init__(
        self,
        img: np.ndarray,
        light: np.ndarray,
        token_fills: tuple[tuple[int, int, int], tuple[int, int, int]] = ((200, 170, 60), (40, 120, 230)),
        token_print: TokenPrint | None = None,
    ) -> None:
        self.img = img
        self.token_fills = token_fills
        self.token_print = token_print or TokenPrint()
        self.light = light  # unit vector (x, y, z) towards the light, for marble shading and shadows
        self.sprites: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.placed: list[Placed] | None = None  # when a list: every card, marble and token put down

    def px(self, x: float, y: float) -> tuple[float, float]:
        """Table mm to canvas pixel coordinates (OpenCV's convention: pixel i is centred on i)."""
        return ((x + CANVAS_MARGIN_MM) * CANVAS_PX_PER_MM, (y + CANVAS_MARGIN_MM) * CANVAS_PX_PER_MM)

    def paste(self, img: np.ndarray, top_left: tuple[float, float], size_mm: float) -> None:
        """Paste a square image so that its outer edges lie exactly at ``top_left`` + ``size_mm`` (mm).

        Sub-pixel placement: the printed markers are what calibration is measured against.
        """
        a = size_mm * CANVAS_PX_PER_MM / img.shape[1]
        x, y = self.px(*top_left)
        m = np.array([[a, 0, x + 0.5 * a], [0, a, y + 0.5 * a]])  # pixel u: (u + 0.5) * a from the edge
        x0, y0 = math.floor(x) - 1, math.floor(y) - 1
        x1, y1 = math.ceil(x + size_mm * CANVAS_PX_PER_MM) + 1, math.ceil(y + size_mm * CANVAS_PX_PER_MM) + 1
        m[:, 2] -= [x0, y0]
        roi = self.img[y0:y1, x0:x1]
        cv2.warpAffine(
            img, m, (x1 - x0, y1 - y0), dst=roi, flags=cv2.INTER_AREA, borderMode=cv2.BORDER_TRANSPARENT
        )

    def shadow(self, poly_mm: np.ndarray, depth: float = 0.65, offset_mm: float = 1.5) -> None:
        off = -self.light[:2] * offset_mm
        pts = np.array([self.px(x + off[0], y + off[1]) for x, y in poly_mm], np.float32)
        mask = np.zeros(self.img.shape[:2], np.uint8)
        x0, y0 = np.floor(pts.min(0)).astype(int) - 2
        x1, y1 = np.ceil(pts.max(0)).astype(int) + 2
        x0, y0 = max(x0, 0), max(y0, 0)
        roi = self.img[y0:y1, x0:x1]
        m = mask[y0:y1, x0:x1]
        cv2.fillConvexPoly(m, np.round(pts - [x0, y0]).astype(np.int32), 255, cv2.LINE_AA)
        f = 1 - (1 - depth) * (m.astype(np.float32) / 255)
        roi[:] = (roi * f[..., None]).astype(np.uint8)

    def card(
        self, img: np.ndarray, center: tuple[float, float], angle_deg: float, what: Placed | None = None
    ) -> np.ndarray:
        """Paste a card image (already at canvas scale) rotated about its centre; returns its corners (mm).

        ``what``: the card as placed (its id or deck level), recorded in ``placed``."""
        if self.placed is not None and what is not None:
            self.placed.append(replace(what, center=center, angle_deg=angle_deg))
        h, w = img.shape[:2]
        cx, cy = self.px(*center)
        # Pixel i of the card image is centred on i, so its centre is ((w-1)/2, (h-1)/2), its edges at -0.5.
        m = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), -angle_deg, 1.0)
        m[:, 2] += [cx - (w - 1) / 2, cy - (h - 1) / 2]
        edges = [[-0.5, -0.5, 1], [w - 0.5, -0.5, 1], [w - 0.5, h - 0.5, 1], [-0.5, h - 0.5, 1]]
        corners_px = np.array(edges, np.float32) @ m.T
        corners_mm = corners_px / CANVAS_PX_PER_MM - CANVAS_MARGIN_MM
        self.shadow(corners_mm)
        x0, y0 = np.floor(corners_px.min(0)).astype(int) - 1
        x1, y1 = np.ceil(corners_px.max(0)).astype(int) + 1
        roi = self.img[y0:y1, x0:x1]
        m[:, 2] -= [x0, y0]
        cv2.warpAffine(
            img, m, (x1 - x0, y1 - y0), dst=roi, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT
        )
        return corners_mm

    def marble(self, color: str, center: tuple[float, float]) -> None:
        if self.placed is not None:
            self.placed.append(Placed("marble", center, color=color))
        rgb, alpha = self.sprites[color]
        r = MARBLE_MM / 2
        self.shadow(
            np.array(
                [
                    [center[0] + r * math.cos(a), center[1] + r * math.sin(a)]
                    for a in np.linspace(0, 2 * math.pi, 16, endpoint=False)
                ]
            ),
            0.55,
            2.5,
        )
        cx, cy = self.px(*center)
        s = rgb.shape[0]
        x0, y0 = round(cx - (s - 1) / 2), round(cy - (s - 1) / 2)
        roi = self.img[y0 : y0 + s, x0 : x0 + s].astype(np.float32)
        self.img[y0 : y0 + s, x0 : x0 + s] = (roi * (1 - alpha) + rgb * alpha).astype(np.uint8)

    def token(self, points: int, center: tuple[float, float]) -> None:
        if self.placed is not None:
            self.placed.append(Placed("token", center, points=points))
        r = VP_MM[points] / 2
        self.shadow(
            np.array(
                [
                    [center[0] + r * math.cos(a), center[1] + r * math.sin(a)]
                    for a in np.linspace(0, 2 * math.pi, 16, endpoint=False)
                ]
            ),
            0.6,
            1.0,
        )
        c = tuple(round(v) for v in self.px(*center))
        rp = round(r * CANVAS_PX_PER_MM)
        fill = self.token_fills[0] if points == 1 else self.token_fills[1]
        tp = self.token_print
        cv2.circle(self.img, c, rp, fill, -1, cv2.LINE_AA)
        if tp.rim_px > 0:
            cv2.circle(self.img, c, rp - tp.rim_px, tp.rim, tp.rim_px, cv2.LINE_AA)
        txt = str(points)
        if tp.lettering is not None:  # a Hershey digit at this scale is 1.9 radii tall
            tp.lettering(self.img, txt, (float(c[0]), float(c[1])), 1.9 * rp * tp.scale, tp.stroke, tp.digits)
            return
        (tw, th), _ = cv2.getTextSize(txt, tp.font, rp / 14 * tp.scale, tp.stroke)
        cv2.putText(
            self.img,
            txt,
            (c[0] - tw // 2, c[1] + th // 2),
            tp.font,
            rp / 14 * tp.scale,
            tp.digits,
            tp.stroke,
            cv2.LINE_AA,
        )


def marble_bgr(color: str) -> tuple[int, int, int]:
    """A marble's body colour (BGR): its energy colour, a black marble its own near-black (the
    flat renderer's sprite and the ray tracer's spheres share it)."""
    from vision.faces import ENERGY_BGR

    return (28, 26, 30) if color == "black" else ENERGY_BGR[color]


def marble_sprite(
    color: str, light: np.ndarray, px_per_mm: float = CANVAS_PX_PER_MM
) -> tuple[np.ndarray, np.ndarray]:
    """A shaded glossy sphere (BGR float image, alpha) lit from ``light``."""
    s = math.ceil(MARBLE_MM * px_per_mm) + 2
    r = MARBLE_MM * px_per_mm / 2
    yy, xx = (np.mgrid[0:s, 0:s].astype(np.float32) + 0.5 - s / 2) / r
    rr = xx**2 + yy**2
    alpha = np.clip((1 - np.sqrt(rr)) * r + 0.5, 0, 1)
    nz = np.sqrt(np.clip(1 - rr, 0, 1))
    ndotl = np.clip(xx * light[0] + yy * light[1] + nz * light[2], 0, 1)
    refl = 2 * ndotl * nz - light[2]  # reflection towards the camera (view along z)
    spec = np.clip(refl, 0, 1) ** 40
    base = np.array(marble_bgr(color), np.float32)
    body = base[None, None, :] * (0.35 + 0.75 * ndotl[..., None])
    rgb = np.clip(body + 255 * 0.9 * spec[..., None], 0, 255)
    return rgb, alpha[..., None]


def _aruco_tile(marker_id: int, px: int) -> np.ndarray:
    from vision.calibrate import ARUCO_DICT

    d = cv2.aruco.getPredefinedDictionary(ARUCO_DICT)
    return cv2.cvtColor(cv2.aruco.generateImageMarker(d, marker_id, px), cv2.COLOR_GRAY2BGR)


def _scatter(
    rng: np.random.Generator, rect: Rect, radii: list[float], gap: float = 1.5
) -> list[tuple[float, float]]:
    """Non-overlapping centres for discs of the given radii inside a rectangle."""
    for _attempt in range(50):
        placed: list[tuple[float, float, float]] = []
        for r in sorted(radii, reverse=True):
            for _ in range(200):
                x = rng.uniform(rect[0] + r + 2, rect[0] + rect[2] - r - 2)
                y = rng.uniform(rect[1] + r + 2, rect[1] + rect[3] - r - 2)
                if all((x - px) ** 2 + (y - py) ** 2 >= (r + pr + gap) ** 2 for px, py, pr in placed):
                    placed.append((x, y, r))
                    break
        if len(placed) == len(radii):
            order = sorted(range(len(radii)), key=lambda i: -radii[i])
            out: list[tuple[float, float]] = [(0.0, 0.0)] * len(radii)
            for slot, i in enumerate(order):
                out[i] = placed[slot][:2]
            return out
    raise ValueError(f"cannot place {len(radii)} discs in {rect}")


def _cluster(rng: np.random.Generator, rect: Rect, n: int) -> list[tuple[float, float]]:
    """Centres of ``n`` marbles touching in one heap (hexagonal packing, 0.2 mm apart) inside a rectangle."""
    if n == 0:
        return []
    d = MARBLE_MM + 0.2
    cells = [(i + 0.5 * (j % 2), j * math.sqrt(3) / 2) for j in range(-3, 4) for i in range(-3, 4)]
    cells.sort(key=lambda c: c[0] ** 2 + c[1] ** 2 + rng.uniform(0, 0.6))
    pts = np.array(cells[:n]) * d
    a = rng.uniform(0, 2 * math.pi)
    pts = pts @ np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    r = MARBLE_MM / 2 + 1
    lo, hi = pts.min(0) - r, pts.max(0) + r
    room = np.array([rect[2], rect[3]]) - (hi - lo)
    if (room < 0).any():
        return _scatter(rng, rect, [MARBLE_MM / 2] * n)
    off = np.array([rect[0], rect[1]]) - lo + rng.uniform(0, 1, 2) * room
    return [(float(x), float(y)) for x, y in pts + off]


def _box(corners: np.ndarray) -> tuple[float, float, float, float]:
    return (
        float(corners[:, 0].min()),
        float(corners[:, 1].min()),
        float(corners[:, 0].max()),
        float(corners[:, 1].max()),
    )


def _circle_box(c: tuple[float, float], d: float) -> tuple[float, float, float, float]:
    return (c[0] - d / 2, c[1] - d / 2, c[0] + d / 2, c[1] + d / 2)


#: The energy dispenser's tray (x, y, w, h in table mm).
TRAY_MM = (955.0, 285.0, 140.0, 170.0)


def _draw_tray(cv: _Canvas, img: np.ndarray) -> np.ndarray:
    """The dispenser tray drawn onto ``img`` (the canvas's image or a copy of it); returns ``img``."""
    x0, y0 = cv.px(TRAY_MM[0], TRAY_MM[1])
    x1, y1 = cv.px(TRAY_MM[0] + TRAY_MM[2], TRAY_MM[1] + TRAY_MM[3])
    cv2.rectangle(img, (round(x0), round(y0)), (round(x1), round(y1)), (95, 95, 100), -1)
    cv2.rectangle(img, (round(x0), round(y0)), (round(x1), round(y1)), (60, 60, 60), 4)
    return img


def _draw_table(
    layout: TableLayout,
    zones: Zones,
    rng: np.random.Generator,
    s: RenderSettings,
    faces: tuple[np.ndarray, ...],
    empty_out: list[np.ndarray] | None = None,
    placed: list[Placed] | None = None,
) -> tuple[np.ndarray, list[SceneObject], dict[str, list[SceneObject]]]:
    """Draw the top-down table; returns the canvas, all objects, and the objects by ground-truth zone.

    ``empty_out``, when given, receives the same table before any card, marble or token is put
    on it (surface, marker tiles, player mats and the dispenser tray): what a fixed camera sees
    at setup. Drawing it draws no random numbers, so the table itself is unchanged. ``placed``,
    when given, receives every card, marble and token as placed (:class:`Placed`).
    """
    tw, th = zones.size
    cw = round((tw + 2 * CANVAS_MARGIN_MM) * CANVAS_PX_PER_MM)
    ch = round((th + 2 * CANVAS_MARGIN_MM) * CANVAS_PX_PER_MM)
    az, el = rng.uniform(0, 2 * math.pi), rng.uniform(math.radians(45), math.radians(75))
    light = np.array([math.cos(az) * math.cos(el), math.sin(az) * math.cos(el), math.sin(el)], np.float32)
    cv = _Canvas((s.texture or _texture)(rng, cw, ch), light, s.token_fills, s.token_print)
    scaled = _scaled_faces(faces)
    cv.sprites = {c: (s.marble_look or marble_sprite)(c, light) for c in COLORS}
    cv.placed = placed
    objects: list[SceneObject] = []
    by_zone: dict[str, list[SceneObject]] = {}

    def jit() -> tuple[float, float]:
        return rng.uniform(-s.jitter_mm, s.jitter_mm), rng.uniform(-s.jitter_mm, s.jitter_mm)

    # Marker tiles (white paper with the black ArUco square).
    side = round(zones.marker_mm * CANVAS_PX_PER_MM)
    border = round(9 * CANVAS_PX_PER_MM)  # the white quiet zone: one marker cell (52 mm / 6) or more
    for mid, (mx, my) in zones.marker_tiles:
        x, y = (round(v) for v in cv.px(mx, my))
        cv.img[y - border : y + side + border, x - border : x + side + border] = (238, 238, 238)
        cv.paste(_aruco_tile(mid, 6 * 20), (mx, my), zones.marker_mm)
    # Player boards: a light mat under ring and tokens with a printed ring.
    for pl in layout.players:
        sz = zones.seat(pl.seat)
        x0, y0 = cv.px(min(sz.ring[0], sz.vp[0]), min(sz.ring[1], sz.vp[1]))
        x1, y1 = cv.px(
            max(sz.ring[0] + sz.ring[2], sz.vp[0] + sz.vp[2]),
            max(sz.ring[1] + sz.ring[3], sz.vp[1] + sz.vp[3]),
        )
        cv2.rectangle(cv.img, (round(x0), round(y0)), (round(x1), round(y1)), (205, 215, 220), -1)
        rc = cv.px(sz.ring[0] + sz.ring[2] / 2, sz.ring[1] + sz.ring[3] / 2)
        cv2.circle(cv.img, (round(rc[0]), round(rc[1])), round(44 * CANVAS_PX_PER_MM), (150, 160, 170), 3)
    if empty_out is not None:
        empty_out.append(_draw_tray(cv, cv.img.copy()))
    # Decks and the Display.
    for lv, rect in zones.decks:
        if lv in layout.decks:
            for k in range(3):
                cc = (rect[0] + rect[2] / 2 - k * 0.6, rect[1] + rect[3] / 2 - k * 0.6)
                corners = cv.card(_scaled_back(lv), cc, rng.uniform(-1, 1), Placed("back", cc, level=lv))
            objects.append(SceneObject("card_back", _box(corners)))
    slot_rects = {(lv, sl): r for lv, sl, r in zones.display}
    for lv, sl, cid in layout.display:
        if cid is None:
            continue
        r = slot_rects[(lv, sl)]
        dx, dy = jit()
        corners = cv.card(
            scaled[cid],
            (r[0] + r[2] / 2 + dx, r[1] + r[3] / 2 + dy),
            rng.uniform(-s.jitter_deg, s.jitter_deg),
            Placed("card", (0.0, 0.0), card=cid),
        )
        o = SceneObject("card", _box(corners), card=cid)
        objects.append(o)
        by_zone[f"display/{lv}/{sl}"] = [o]
    # Energy Row, dispenser tray and the token supply.
    ex, ey, _, eh = zones.energy_row
    row = []
    for i, col in enumerate(layout.energy_row):
        dx, dy = jit()
        c = (ex + 15 + ENERGY_ROW_PITCH * i + dx / 2, ey + eh / 2 + dy)
        cv.marble(col, c)
        row.append(SceneObject(f"marble_{col}", _circle_box(c, MARBLE_MM), color=col))
    objects += row
    by_zone["energy_row"] = row
    _draw_tray(cv, cv.img)
    tray = TRAY_MM
    inner = (tray[0] + 8, tray[1] + 8, tray[2] - 16, tray[3] - 16)
    n_tray = len(layout.dispenser)
    tray_spots = (
        _cluster(rng, inner, n_tray) if s.tray_heaps else _scatter(rng, inner, [MARBLE_MM / 2] * n_tray)
    )
    for col, c in zip(layout.dispenser, tray_spots, strict=True):
        cv.marble(col, c)
        objects.append(SceneObject(f"marble_{col}", _circle_box(c, MARBLE_MM), color=col))
    kinds = [int(k) for k in rng.choice([1, 5], layout.supply_tokens)]
    for pts, c in zip(
        kinds, _scatter(rng, (70.0, 235.0, 215.0, 290.0), [VP_MM[p] / 2 for p in kinds]), strict=True
    ):
        cv.token(pts, c)
        objects.append(SceneObject(f"vp{pts}", _circle_box(c, VP_MM[pts])))
    # Players.
    for pl in layout.players:
        sz = zones.seat(pl.seat)
        rot = float(sz.rotation)
        stacks = [(f"gizmos/{ci}", 3.0 + COLUMN_PITCH * ci, col) for ci, col in enumerate(pl.columns)]
        stacks.append(("archive", LOCAL_ARCHIVE[0] + (LOCAL_ARCHIVE[2] - CARD_MM[0]) / 2, pl.archive))
        for zone, x_local, ids in stacks:
            seen = []
            for k, cid in enumerate(ids):
                dx, dy = jit()
                lx, ly = x_local + CARD_MM[0] / 2 + dx / 2, STACK_TOP + k * BAND_MM + CARD_MM[1] / 2 + dy / 3
                corners = cv.card(
                    scaled[cid],
                    sz.to_table(lx, ly),
                    rot + rng.uniform(-s.jitter_deg, s.jitter_deg),
                    Placed("card", (0.0, 0.0), card=cid),
                )
                last = k == len(ids) - 1
                band = (
                    corners
                    if last
                    else np.array(
                        [
                            corners[0],
                            corners[1],
                            corners[1] + (corners[2] - corners[1]) * BAND_MM / CARD_MM[1],
                            corners[0] + (corners[3] - corners[0]) * BAND_MM / CARD_MM[1],
                        ]
                    )
                )
                seen.append(SceneObject("card" if last else "card_band", _box(band), card=cid))
            objects += seen
            by_zone[f"{pl.seat}/{zone}"] = seen
        rx, ry, rw, rh = sz.ring
        ring_rect = (rx + 10, ry + 10, rw - 20, rh - 20)
        ms = []
        spots = (
            _cluster(rng, ring_rect, len(pl.ring))
            if s.touching_marbles
            else _scatter(rng, ring_rect, [MARBLE_MM / 2] * len(pl.ring))
        )
        for col, c in zip(pl.ring, spots, strict=True):
            cv.marble(col, c)
            ms.append(SceneObject(f"marble_{col}", _circle_box(c, MARBLE_MM), color=col))
        objects += ms
        by_zone[f"{pl.seat}/ring"] = ms
        kinds = [1] * pl.vp_ones + [5] * pl.vp_fives
        toks = []
        for pts, c in zip(kinds, _scatter(rng, sz.vp, [VP_MM[p] / 2 for p in kinds]), strict=True):
            cv.token(pts, c)
            toks.append(SceneObject(f"vp{pts}", _circle_box(c, VP_MM[pts])))
        objects += toks
        by_zone[f"{pl.seat}/vp"] = toks
    return cv.img, objects, by_zone


# ----------------------------------------------------------------------------------------------- camera


def _look_at(pos: np.ndarray, target: np.ndarray, yaw: float) -> np.ndarray:
    """Rotation (rows: camera x, y, z) of a camera at ``pos`` looking at ``target``; z into the scene."""
    z = target - pos
    z /= np.linalg.norm(z)
    x_hint = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    y = np.cross(z, x_hint)
    y /= np.linalg.norm(y)
    x = np.cross(y, z)
    return np.stack([x, y, z])


def camera_homography(rng: np.random.Generator, zones: Zones, s: RenderSettings) -> np.ndarray:
    """A random pinhole camera over the table, as the homography table mm -> image pixels
    (:func:`random_camera`'s, for the table plane)."""
    return plane_homography(*random_camera(rng, zones, s))


def plane_homography(k: np.ndarray, rot: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The homography table mm -> image px of the camera (K, rotation, translation) for the
    table plane z = 0."""
    return k @ np.column_stack([rot[:, 0], rot[:, 1], t])


def random_camera(
    rng: np.random.Generator, zones: Zones, s: RenderSettings
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random pinhole camera over the table: intrinsics K, rotation (rows: camera x, y, z in
    the world) and translation, so that a world point p (mm) is at K (rot p + t) in the image.

    World: table plane z = 0, x right, y down, z into the table; the camera hangs at z = -height.
    The focal length is chosen so that the whole play area fits the frame (that is the lens a user
    picks for their height), which keeps the markers in view.
    """
    w, h = s.size
    tw, th = zones.size
    height = rng.uniform(*s.height_mm)
    tilt = math.radians(rng.uniform(0, s.max_tilt_deg)) if rng.random() < 0.7 else 0.0
    direction = rng.uniform(0, 2 * math.pi)
    target = np.array([tw / 2 + rng.uniform(-30, 30), th / 2 + rng.uniform(-20, 20), 0.0])
    pos = target + np.array(
        [
            math.cos(direction) * height * math.tan(tilt),
            math.sin(direction) * height * math.tan(tilt),
            -height,
        ]
    )
    rot = _look_at(pos, target, math.radians(rng.uniform(-s.max_yaw_deg, s.max_yaw_deg)))
    t = -rot @ pos
    h0 = np.column_stack([rot[:, 0], rot[:, 1], t])
    corners = np.array([[-8, -8, 1], [tw + 8, -8, 1], [tw + 8, th + 8, 1], [-8, th + 8, 1]], np.float64)
    p = corners @ h0.T
    p = p[:, :2] / p[:, 2:]
    span = p.max(0) - p.min(0)
    fill = rng.uniform(0.82, 0.96)
    f = fill * min(w / span[0], h / span[1])
    mid = (p.max(0) + p.min(0)) / 2
    free = np.array([w, h]) - f * span
    c = np.array([w / 2, h / 2]) - f * mid + rng.uniform(-0.4, 0.4, 2) * free
    k = np.array([[f, 0, c[0]], [0, f, c[1]], [0, 0, 1]])
    return k, rot, t


def _hand(
    rng: np.random.Generator, img: np.ndarray, h_img: np.ndarray, zones: Zones, look: HandLook | None = None
) -> np.ndarray:
    """Draw a hand and forearm reaching in from a frame edge, coloured by ``look`` (default a
    bare arm of the project's skin tones); returns its mask (image pixels)."""
    ih, iw = img.shape[:2]
    tw, th = zones.size
    tgt_mm = np.array([rng.uniform(0.1, 0.9) * tw, rng.uniform(0.1, 0.9) * th, 1.0])
    tp = h_img @ tgt_mm
    tip = tp[:2] / tp[2]
    edge = int(rng.integers(0, 4))
    start = np.array(
        [
            [rng.uniform(0, iw), ih + 40],
            [rng.uniform(0, iw), -40],
            [-40, rng.uniform(0, ih)],
            [iw + 40, rng.uniform(0, ih)],
        ][edge]
    )
    scale = iw / 1280 * rng.uniform(0.8, 1.2)
    d = tip - start
    d /= np.linalg.norm(d)
    n = np.array([-d[1], d[0]])
    palm = tip - d * 45 * scale
    arm_w = 38 * scale
    mask = np.zeros((ih, iw), np.uint8)
    arm = np.array([start + n * arm_w, palm + n * arm_w * 1.1, palm - n * arm_w * 1.1, start - n * arm_w])
    cv2.fillConvexPoly(mask, arm.astype(np.int32), 255, cv2.LINE_AA)
    ang = math.degrees(math.atan2(d[1], d[0]))
    cv2.ellipse(
        mask, tuple(palm.astype(int)), (int(55 * scale), int(48 * scale)), ang, 0, 360, 255, -1, cv2.LINE_AA
    )
    for k, spread in enumerate((-0.9, -0.3, 0.3, 0.9)):
        length = (70 + 15 * (k in (1, 2))) * scale
        base = palm + d * 35 * scale + n * spread * 40 * scale
        fdir = d + n * spread * rng.uniform(0.1, 0.4)
        fdir /= np.linalg.norm(fdir)
        cv2.line(
            mask,
            tuple(base.astype(int)),
            tuple((base + fdir * length).astype(int)),
            255,
            max(2, int(20 * scale)),
            cv2.LINE_AA,
        )
    thumb = palm + n * 55 * scale * rng.choice([-1, 1])
    cv2.line(
        mask, tuple(palm.astype(int)), tuple(thumb.astype(int)), 255, max(2, int(22 * scale)), cv2.LINE_AA
    )
    # Soft shadow first, then the skin with shading.
    sh = cv2.GaussianBlur(np.roll(mask, (int(12 * scale), int(10 * scale)), (0, 1)), (0, 0), 9 * scale)
    img[:] = (img * (1 - 0.45 * sh[..., None].astype(np.float32) / 255)).astype(np.uint8)
    if look is None:  # the project's arm, drawn as it always was: its scenes stay what they were
        skin = np.array([rng.uniform(60, 150), rng.uniform(100, 180), rng.uniform(150, 230)], np.float32)
    else:
        yy, xx = np.mgrid[0:ih, 0:iw].astype(np.float32)
        along = ((xx - start[0]) * d[0] + (yy - start[1]) * d[1]) / scale
        across = ((xx - start[0]) * n[0] + (yy - start[1]) * n[1]) / scale
        skin = look(rng, along, across, float(np.linalg.norm(palm - start)) / scale)
    shade = cv2.GaussianBlur(mask, (0, 0), 12 * scale).astype(np.float32) / 255
    color = (skin if skin.ndim == 3 else skin[None, None, :]) * (0.7 + 0.3 * shade[..., None])
    a = mask[..., None].astype(np.float32) / 255
    img[:] = (img * (1 - a) + color * a).astype(np.uint8)
    return mask


def _effects(rng: np.random.Generator, img: np.ndarray) -> np.ndarray:
    """Lighting gradient, soft shadow, glare, color cast, blur, sensor noise and JPEG artefacts."""
    h, w = img.shape[:2]
    f = img.astype(np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = rng.uniform(0, 2 * math.pi)
    ramp = np.cos(a) * (xx / w - 0.5) + np.sin(a) * (yy / h - 0.5)
    gain = rng.uniform(0.8, 1.15) * (1 + rng.uniform(0, 0.35) * ramp)
    vign = 1 - rng.uniform(0, 0.25) * (((xx / w - 0.5) ** 2 + (yy / h - 0.5) ** 2) * 2)
    f *= (gain * vign)[..., None]
    if rng.random() < 0.4:  # a soft shadow of something out of view
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.15, 0.4) * w
        blob = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))
        f *= (1 - rng.uniform(0.15, 0.4) * blob)[..., None]
    if rng.random() < 0.5:  # glare from a lamp
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.03, 0.12) * w
        f += (rng.uniform(30, 90) * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r)))[..., None]
    f *= rng.uniform(0.92, 1.08, 3)[None, None, :]
    img = np.clip(f, 0, 255).astype(np.uint8)
    sigma = rng.uniform(0, 1.1) * w / 1280
    if sigma > 0.3:
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    if rng.random() < 0.15:  # a little motion blur
        k = int(rng.integers(3, 6)) | 1  # odd, so the kernel is centred and blur shifts nothing
        kern: np.ndarray = np.zeros((k, k), np.float32)
        kern[k // 2, :] = 1 / k
        rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1)
        kern = cv2.warpAffine(kern, rot, (k, k))
        img = cv2.filter2D(img, -1, kern / max(kern.sum(), 1e-6))
    noise = rng.normal(0, rng.uniform(1, 6), img.shape).astype(np.float32)
    img = np.clip(img.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(50, 96))])
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
    return img if decoded is None else decoded


# ----------------------------------------------------------------------------------------------- truth


def _marble_key(o: SceneObject) -> int:
    return COLORS.index(o.color or "red")


def ground_truth(
    layout: TableLayout,
    by_zone: dict[str, list[SceneObject]],
    covered: set[str],
    zones: Zones | None = None,
) -> Observation:
    """The observation a perfect pipeline reports for this table (confidence 1.0).

    Every Display slot of the zones is reported: a slot the layout leaves out is seen empty.
    """
    cards = {(lv, sl): cid for lv, sl, cid in layout.display}
    display = tuple(
        SlotSighting(lv, sl, cards.get((lv, sl)), 1.0)
        for lv, sl, _ in sorted((zones or default_zones()).display)
        if f"display/{lv}/{sl}" not in covered
    )
    row = None if "energy_row" in covered else tuple(MarbleSighting(c, 1.0) for c in layout.energy_row)
    players = []
    for pl in layout.players:

        def seen(zone: str, value: object, seat: int = pl.seat) -> object:
            return None if f"{seat}/{zone}" in covered else value

        gizmos = tuple(CardSighting(c, 1.0) for col in pl.columns for c in col)
        ring = tuple(
            MarbleSighting(o.color or "", 1.0)
            for o in sorted(by_zone.get(f"{pl.seat}/ring", []), key=_marble_key)
        )
        players.append(
            PlayerSighting(
                seat=pl.seat,
                ring=seen("ring", ring),  # type: ignore[arg-type]
                archive=seen("archive", tuple(CardSighting(c, 1.0) for c in pl.archive)),  # type: ignore[arg-type]
                gizmos=seen("gizmos", gizmos),  # type: ignore[arg-type]
                vp_tokens=seen("vp", (pl.vp_ones + 5 * pl.vp_fives, 1.0)),  # type: ignore[arg-type]
            )
        )
    return Observation(time=0.0, display=display, energy_row=row, players=tuple(players), source="synthetic")


def photograph(canvas: np.ndarray, h_img: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The drawn table (canvas of :func:`_draw_table`) as the camera ``h_img`` (table mm -> image
    px) sees it, softened slightly first (print and paper are never razor sharp)."""
    scale = np.array(
        [
            [CANVAS_PX_PER_MM, 0, CANVAS_MARGIN_MM * CANVAS_PX_PER_MM],
            [0, CANVAS_PX_PER_MM, CANVAS_MARGIN_MM * CANVAS_PX_PER_MM],
            [0, 0, 1],
        ]
    )
    canvas = cv2.GaussianBlur(canvas, (0, 0), 0.7)
    return cv2.warpPerspective(
        canvas, h_img @ np.linalg.inv(scale), size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )


def render_table(
    layout: TableLayout,
    seed: int,
    settings: RenderSettings | None = None,
    zones: Zones | None = None,
    faces: tuple[np.ndarray, ...] | None = None,
) -> RenderedScene:
    """Render a table layout as one camera frame with its ground truth (deterministic per seed),
    by ``settings.renderer`` when another is set (the ray tracer)."""
    s = settings or RenderSettings()
    if s.renderer is not None and s.renderer is not render_table:
        return s.renderer(layout, seed, s, zones, faces)
    z = zones or default_zones()
    rng = np.random.default_rng(seed)
    empty: list[np.ndarray] | None = [] if s.empty_table else None
    canvas, objects, by_zone = _draw_table(
        layout, z, rng, s, faces if faces is not None else face_set(), empty
    )
    h_img = camera_homography(rng, z, s)
    img = photograph(canvas, h_img, s.size)
    unhanded = img.copy() if s.other_frames else None
    hands_mm: list[tuple[float, float, float, float]] = []
    canon = None
    if rng.random() < s.hand_prob:
        mask = _hand(rng, img, h_img, z, s.hand_look)
        canon = cv2.warpPerspective(mask, canonical_from_image(h_img), CANON_SIZE, flags=cv2.INTER_NEAREST)
        ys, xs = np.nonzero(canon > 127)
        if len(xs):
            hands_mm.append(
                (
                    xs.min() / CANON_PX_PER_MM,
                    ys.min() / CANON_PX_PER_MM,
                    (xs.max() + 1) / CANON_PX_PER_MM,
                    (ys.max() + 1) / CANON_PX_PER_MM,
                )
            )
            integ = cv2.integral((canon > 127).astype(np.uint8))
            kept = []
            for o in objects:
                x1, y1, x2, y2 = (
                    int(np.clip(round(v * CANON_PX_PER_MM), 0, lim))
                    for v, lim in zip(o.box_mm, CANON_SIZE * 2, strict=True)
                )
                area = max(1, (x2 - x1) * (y2 - y1))
                cov = (integ[y2, x2] - integ[y1, x2] - integ[y2, x1] + integ[y1, x1]) / area
                kept.append(replace(o, visible=cov < 0.3))
            objects = kept
            objects.append(SceneObject("hand", hands_mm[0]))
    empty_image = None
    if empty:
        empty_image = _as_this_camera(photograph(empty[0], h_img, s.size), seed, rng, s, [seed, 98])
    others = [] if unhanded is None else _other_frames(unhanded, seed, rng, h_img, z, s)
    if s.effects:
        img = (s.camera or _effects)(rng, img)
    seats = tuple(p.seat for p in layout.players)
    covered = covered_zones(z, seats, hands_mm)
    truth = ground_truth(layout, by_zone, covered, z)
    uncovered = ground_truth(layout, by_zone, set(), z) if covered else truth
    rects = zone_rects(z, seats)
    hidden = frozenset(
        key
        for o in objects
        if not o.visible
        for key, r in rects.items()
        if inside(r, (o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2)
    )
    hand_mask = None if canon is None else np.where(canon > 127, 255, 0).astype(np.uint8)
    return RenderedScene(
        img, truth, objects, h_img, layout, hands_mm, uncovered, hidden, hand_mask, empty_image, tuple(others)
    )


#: In the other frames of a table (``RenderSettings.other_frames``), the chance of an arm.
OTHER_HAND_PROB = 0.5


def _other_frames(
    unhanded: np.ndarray,
    seed: int,
    rng: np.random.Generator,
    h_img: np.ndarray,
    zones: Zones,
    s: RenderSettings,
) -> list[np.ndarray]:
    """Other frames of one table: the photograph before any hand, an arm of its own (drawn from
    a stream of its own, so the frame itself stays what it was), through the frame's camera
    (:func:`_as_this_camera`)."""
    out = []
    for k in range(s.other_frames):
        arm = np.random.default_rng([seed, 97, k])
        img = unhanded.copy()
        if arm.random() < OTHER_HAND_PROB:
            _hand(arm, img, h_img, zones, s.hand_look)
        out.append(_as_this_camera(img, seed, rng, s, [seed, 96, k]))
    return out


def _as_this_camera(
    img: np.ndarray, seed: int, rng: np.random.Generator, s: RenderSettings, noise: list[int]
) -> np.ndarray:
    """Another photograph of the frame's table (its empty view, another frame) through the
    frame's own lamp and camera effects (``rng``'s state now, before the frame's effects draw
    from it), with the sensor's noise drawn afresh from the stream ``noise``."""
    if not s.effects:
        return img
    fx = np.random.default_rng([seed, 99])
    fx.bit_generator.state = rng.bit_generator.state
    return _fresh_noise(np.random.default_rng(noise), (s.camera or _effects)(fx, img))


def _fresh_noise(rng: np.random.Generator, img: np.ndarray, sigma: float = 3.0) -> np.ndarray:
    """Another frame of the same camera: sensor noise of its own on top (the effects' noise
    pattern would otherwise repeat the frame's exactly)."""
    return np.clip(img + rng.normal(0, sigma, img.shape), 0, 255).astype(np.uint8)
