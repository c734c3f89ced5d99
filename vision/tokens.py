"""VP tokens: a token's value from its size, the detector's box and the disc measured in the frame.

A 1 is 18 mm across and a 5 24 mm (:data:`TOKEN_MM`, the renderer's ``VP_MM``) on every
printing, so the value is read from the size, not the detector's class (which a printing it never
saw fooled: three 1s read as 5s). The box's size alone is not enough either: a detector draws a
box of the size of the class it believes, so the committed detector boxed the held-out style's 1s
at 21-25 mm, and the domain-randomised fine-tune boxed a 1 at a player mat's corner 22.5 mm wide.
The pipeline therefore measures the disc itself, through the calibration, and reads the value from
the mean of the two sizes (:func:`token_points`):

* along 48 rays from the detected centre, sampled from the frame in table millimetres, find
  where the ray leaves the table's colour (the median colour of a ring 14.5-16 mm out, beyond
  either token) walking *inwards*: the first point from outside whose colour distance to the
  table reaches :data:`EDGE_SHARE` of the ray's largest (or :data:`EDGE_ABS`, if lower).
  Walking inwards, a printed digit inside the disc is never taken for its edge;
* fit a circle to those edge points (least squares, twice, dropping points more than 1.5 mm
  off: a neighbouring token or a marble the ray ran into first); its diameter is the measure;
* when too few rays see an edge (a token the colour of the table), the box's size alone decides.

The measured disc is biased large (blur and the token's shadow; 1s median about 20.5 mm), and so
are the boxes; the split between 1s and 5s, :data:`VP_SPLIT_MM`, was calibrated on development
frames (seeds 8,900,000+, 9,160,000+ and 9,260,000+ of the three benchmark conditions, never the
benchmark's own) with both the committed detector and the fine-tune (docs/vision.md, "VP tokens").

One token's size is weak evidence (a pale 1 on a pale mat shows no edge to measure, and a box
alone is drawn at the size of the class the detector believes). The tokens of one frame are
read together (:func:`token_values`): where they fall into two groups of clearly different
colour (a 1 and a 5 are printed differently) whose sizes clearly differ, the larger group is the
5s and the other the 1s, each group's size being the median of many tokens. Where the colours do
not tell two groups apart (one value on the table, or a printing whose 1s and 5s look alike),
each token's own size decides, as before.

A token the detector is not sure of (:func:`missed_tokens`) is kept from below the pipeline's
confidence, in the spirit of the heap stage (vision/heaps.py), only where nothing else can be: in
the VP zone of a seat in play, overlapping no object kept, and standing out from the table
round it (a box on bare mat is the detector's guess, not a token).

The token reader (:class:`TokenReader`, ``models/tokens.onnx``) is a small network that reads a
crop round a token's centre, 1 or 5, from the digit and rim as well as the size. It orients a
frame's two printings where the sizes read them backwards (a 5 whose rim is the mat's colour
looks no bigger than a blurred 1) and decides a token's value where it is sure (docs/vision.md,
"Fifteenth round").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.detect import Detection
from vision.geometry import CANON_PX_PER_MM, MARBLE_CLASSES, table_patch
from vision.networks import Network
from vision.zones import Rect, inside

#: The tokens' diameters (mm).
TOKEN_MM: dict[int, float] = {1: 18.0, 5: 24.0}
#: A token whose size (the mean of its box's and its measured disc's, mm) is at least this is a 5.
VP_SPLIT_MM = 21.75

_ANGLES = np.linspace(0, 2 * math.pi, 48, endpoint=False)
_RADII = np.arange(15.0, 4.99, -0.25)  # walked from outside in (mm)
_TABLE_RING = np.arange(14.5, 16.01, 0.5)  # the table around the token (mm)
#: A ray counts when its largest colour distance to the table is at least this (0-255 BGR).
MIN_CONTRAST = 18.0
#: Edge points further than this from the fitted circle are dropped (mm).
OUTLIER_MM = 1.5
#: The fit counts when at least this share of the rays gave an edge close to it (0.6: at 0.5, 1 true
#: 1 of 396 and of 367 on the development frames of `style` and `deck` measured 26 mm and was read a 5).
MIN_INLIERS = 0.6
#: Where a ray leaves the table: its colour distance to the table reaches this share of the ray's largest.
EDGE_SHARE = 0.3
#: ... or this colour distance (0-255 BGR), whichever is lower: a token printed with a light ring
#: inside a darker edge (the held-out printing's 5s) has its largest step at the ring, and 30 % of
#: it was not reached at the edge on some rays, so that the fit fell between edge and ring (no disc
#: for 43 of 133 development 5s of the held-out style, 15 at 40; 30 misread 35 more 1s; the
#: project's tokens: no change but one 5 more measured; docs/vision.md, "Ninth round").
EDGE_ABS = 40.0
#: Two groups of a frame's tokens are two printings when their colours (median CIELAB a*, b* of
#: the token's middle, 8-bit units) are at least this far apart and more than twice as far as
#: any token from its group's mean...
PRINTING_APART = 15.0
#: ... and their median sizes differ by at least this (mm).
PRINTING_SIZE_MM = 1.5
_CHROMA_RADII = np.arange(0.0, 7.01, 1.0)  # the token's middle, inside a 1's 9 mm radius
_CHROMA_ANGLES = np.linspace(0, 2 * math.pi, 16, endpoint=False)
#: A VP-token box this sure, below the pipeline's confidence, may be a token the detector missed
#: (the heap stage's floor, vision/heaps.py: the detector is decoded once at it).
LOW_TOKEN_CONF = 0.1
#: ... when it overlaps no round thing kept (marble or token): their centres are at least this
#: share of the sum of their radii apart (the heap stage's 0.75, vision/heaps.py; a box on a
#: player mat's corner 14 mm from a 5 kept was refused so), and no card box holds its centre ...
TOKEN_APART = 0.75
#: ... and its box is of a token's size (mm, :func:`box_size`: a 1 is 18 mm, a 5 24, with a box's
#: few mm of error; on development frames a 11 mm box at a VP zone's corner lay on no token) ...
TOKEN_BOX_MM = (15.0, 28.0)
#: ... and its middle differs from the table round it (CIELAB, 8-bit units: the medians within 7 mm
#: of its centre and 14.5-16 mm out) by at least this. On development frames the missed tokens
#: differed by 13-21, the boxes on bare mat by 0-7.3 (docs/vision.md, "Sixth round").
TOKEN_CONTRAST = 10.0
#: A marble box in a VP zone down to this sure is a 5 the detector missed when, besides
#: :func:`missed_tokens`' rules, its measured disc has a 5's size (:data:`VP_SPLIT_MM` or more: no
#: marble and no 1 is that big). On development frames the held-out printing's 5s were boxed as
#: marbles at 0.09-0.1 (its light rim fades into a light mat); taking every marble box down to
#: 0.05 gained them but also tokens on no token (docs/vision.md, "Twelfth round").
FAINT_FIVE_CONF = 0.05


@dataclass(frozen=True, slots=True)
class Disc:
    """A measured token disc: centre and diameter (table mm) and the share of rays on its edge."""

    center: tuple[float, float]
    diameter: float
    support: float

    @property
    def box(self) -> tuple[float, float, float, float]:
        """The square round the disc (table mm, x1 y1 x2 y2)."""
        (x, y), r = self.center, self.diameter / 2
        return (x - r, y - r, x + r, y + r)


#: The token reader's crop: this many mm square round the token's centre, cut from the frame
#: through the calibration at ``TOKEN_CROP_PX`` px (4/3 px per mm: about a 720p camera's over a
#: whole table), so a 5 is 32 px across and a 1 24 px whatever the camera.
TOKEN_CROP_MM = 36.0
TOKEN_CROP_PX = 48
#: A token outside two groups is what the reader says where it is at least this sure (P(5) at
#: least this, or at most 1 minus it); else its size decides.
READER_SURE = 0.8
#: Two groups of a frame's tokens: the group whose mean P(5) is this much higher is the 5s.
READER_APART = 0.3


def _sample(frame: np.ndarray, h_img: np.ndarray, pts_mm: np.ndarray) -> np.ndarray:
    """BGR (float) of the frame at table points ``pts_mm`` (..., 2), bilinear."""
    shape = pts_mm.shape[:-1]
    px = cv2.perspectiveTransform(pts_mm.reshape(1, -1, 2).astype(np.float64), h_img).reshape(-1, 2)
    mx = px[:, 0].astype(np.float32).reshape(1, -1)
    my = px[:, 1].astype(np.float32).reshape(1, -1)
    out = cv2.remap(frame, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out.reshape(*shape, -1).astype(np.float32)


def _fit_circle(pts: np.ndarray) -> tuple[float, float, float]:
    """Least-squares circle (cx, cy, r) through points (n, 2) (Kasa's algebraic fit)."""
    x, y = pts[:, 0], pts[:, 1]
    a = np.column_stack([x, y, np.ones_like(x)])
    b = x * x + y * y
    (p, q, c), *_ = np.linalg.lstsq(a, b, rcond=None)
    cx, cy = p / 2, q / 2
    return float(cx), float(cy), float(math.sqrt(max(c + cx * cx + cy * cy, 0.0)))


def measure(frame: np.ndarray, h_img: np.ndarray, center_mm: tuple[float, float]) -> Disc | None:
    """The token disc around ``center_mm`` (homography ``h_img``: table mm -> frame px), or None
    when its edge cannot be told from the table on enough rays."""
    cx, cy = center_mm
    cos, sin = np.cos(_ANGLES), np.sin(_ANGLES)
    ring = np.stack([cx + _TABLE_RING[:, None] * cos, cy + _TABLE_RING[:, None] * sin], axis=-1)
    table = np.median(_sample(frame, h_img, ring).reshape(-1, frame.shape[2]), axis=0)
    rays = np.stack([cx + _RADII[None, :] * cos[:, None], cy + _RADII[None, :] * sin[:, None]], axis=-1)
    dist = np.linalg.norm(_sample(frame, h_img, rays) - table, axis=-1)  # (angles, radii), outside in
    top = dist.max(axis=1)
    edges = []
    for k in np.flatnonzero(top >= MIN_CONTRAST):
        d = dist[k]
        level = min(EDGE_SHARE * top[k], EDGE_ABS)
        i = int(np.argmax(d >= level))
        if i == 0:  # not the table even 15 mm out: something else lies there
            continue
        # interpolate between the last point on the table and the first off it
        f = (level - d[i - 1]) / max(d[i] - d[i - 1], 1e-6)
        r = _RADII[i - 1] + f * (_RADII[i] - _RADII[i - 1])
        edges.append((cx + r * cos[k], cy + r * sin[k]))
    if len(edges) < MIN_INLIERS * len(_ANGLES):
        return None
    pts = np.array(edges)
    keep = np.ones(len(pts), bool)
    fit = _fit_circle(pts)
    for _ in range(2):
        resid = np.abs(np.hypot(pts[:, 0] - fit[0], pts[:, 1] - fit[1]) - fit[2])
        keep = resid <= OUTLIER_MM
        if keep.sum() < MIN_INLIERS * len(_ANGLES):
            return None
        fit = _fit_circle(pts[keep])
    return Disc((fit[0], fit[1]), 2 * fit[2], float(keep.sum()) / len(_ANGLES))


def token_crop(
    frame: np.ndarray,
    h_img: np.ndarray,
    center_mm: tuple[float, float],
    angle: float = 0.0,
    scale: float = 1.0,
) -> np.ndarray:
    """The token reader's crop (``TOKEN_CROP_PX`` square, BGR uint8) round ``center_mm``:
    :data:`TOKEN_CROP_MM` of table turned by ``angle`` (radians) and ``scale``d (training turns and
    scales its crops; the pipeline cuts them square to the table), rectified as a card's patch is
    (:meth:`vision.identify.Identifier._patch`)."""
    side = TOKEN_CROP_MM * scale
    ppm = TOKEN_CROP_PX / side
    return table_patch(frame, h_img, center_mm, (side, side), ppm, 0, math.degrees(angle))[..., :3]


def token_blob(crop: np.ndarray) -> np.ndarray:
    """The reader's input (1, 3, px, px float32) from a crop: each channel less its mean, all over
    the crop's spread, so that neither the lamp's brightness nor its colour is what it reads."""
    x = crop.astype(np.float32)
    x = x - x.reshape(-1, x.shape[2]).mean(axis=0)
    x = x / max(float(x.std()), 1.0)
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None])


class TokenReader:
    """The VP-token network (``models/tokens.onnx``, vision/training/tokens.py): the probability
    that a token is a 5, read from its digit and rim as well as its size. A missing or
    unreadable file is a :class:`~vision.errors.ModelFileError`."""

    def __init__(self, path: Path, threads: int = 1) -> None:
        self.net = Network(path, "VP token model", threads=threads)

    def fives(
        self, frame: np.ndarray, h_img: np.ndarray, centers_mm: Sequence[tuple[float, float]]
    ) -> np.ndarray:
        """P(5) of the tokens centred at ``centers_mm`` (table mm)."""
        return np.array(
            [float(self.net.run(token_blob(token_crop(frame, h_img, c)))[0, 1]) for c in centers_mm],
            np.float32,
        )


def box_size(box: tuple[float, float, float, float]) -> float:
    """A detected box's size (mm): the mean of its width and height."""
    x1, y1, x2, y2 = box
    return (x2 - x1 + y2 - y1) / 2


def token_size(
    frame: np.ndarray | None, h_img: np.ndarray | None, box: tuple[float, float, float, float]
) -> float:
    """A detected token's size (mm): the mean of its box's and its disc's measured in ``frame``
    (homography ``h_img``), or the box's alone without a frame or a clear edge."""
    size = box_size(box)
    if frame is None or h_img is None:
        return size
    disc = measure(frame, h_img, ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2))
    return size if disc is None else (size + disc.diameter) / 2


def token_points(
    frame: np.ndarray | None, h_img: np.ndarray | None, box: tuple[float, float, float, float]
) -> int:
    """1 or 5, from :func:`token_size`."""
    return 1 if token_size(frame, h_img, box) < VP_SPLIT_MM else 5


def token_chroma(frame: np.ndarray, h_img: np.ndarray, center_mm: tuple[float, float]) -> np.ndarray:
    """The colour of a token's middle without its brightness: median CIELAB a*, b* (8-bit units)
    within 7 mm of ``center_mm`` (brightness varies with the lamp across the table, hue less)."""
    return _lab(frame, h_img, center_mm, _CHROMA_RADII)[1:]


def _lab(
    frame: np.ndarray, h_img: np.ndarray, center_mm: tuple[float, float], radii: np.ndarray
) -> np.ndarray:
    """The median CIELAB (8-bit units) of the frame at ``radii`` (mm) round ``center_mm``."""
    cx, cy = center_mm
    r = radii[:, None]
    pts = np.stack([cx + r * np.cos(_CHROMA_ANGLES), cy + r * np.sin(_CHROMA_ANGLES)], axis=-1)
    bgr = np.clip(_sample(frame, h_img, pts).reshape(1, -1, frame.shape[2])[..., :3], 0, 255).astype(np.uint8)
    return np.median(cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB)[0].astype(np.float32), axis=0)


def token_contrast(frame: np.ndarray, h_img: np.ndarray, center_mm: tuple[float, float]) -> float:
    """How much a token's middle differs from the table round it (CIELAB distance): a token
    whose edge is too soft to measure (:func:`measure`) still differs there from bare mat."""
    middle = _lab(frame, h_img, center_mm, _CHROMA_RADII)
    return float(np.linalg.norm(middle - _lab(frame, h_img, center_mm, _TABLE_RING)))


def missed_tokens(
    frame: np.ndarray,
    h_img: np.ndarray,
    kept: Sequence[Detection],
    low: Sequence[Detection],
    rects: Sequence[Rect],
    classes: Sequence[str] = ("vp1", "vp5"),
    floor: float = LOW_TOKEN_CONF,
) -> list[Detection]:
    """The less sure VP-token boxes of ``low`` (canonical frame, at least ``floor``) to keep: of
    a token's size (:data:`TOKEN_BOX_MM`), centred in one of ``rects`` (the VP zones of the seats
    in play), overlapping no
    object of ``kept`` (:data:`TOKEN_APART`, card boxes) and differing from the table round
    them (:data:`TOKEN_CONTRAST`); surest first, each one kept counts as kept for the next.
    ``classes``: the boxes of ``low`` looked at (:func:`tokens_seen_as_marbles` passes marbles)."""

    cards = [d.box_mm for d in kept if d.cls in ("card", "card_band")]
    round_things = [
        (d.center_mm, box_size(d.box_mm) / 2)
        for d in kept
        if d.cls.startswith("marble_") or d.cls in ("vp1", "vp5")
    ]
    added: list[Detection] = []
    for d in sorted(low, key=lambda d: -d.confidence):
        if d.cls not in classes or d.confidence < floor:
            continue
        box = d.box_mm
        c, r = d.center_mm, box_size(box) / 2
        if not TOKEN_BOX_MM[0] <= 2 * r <= TOKEN_BOX_MM[1]:
            continue
        if not any(inside(zone, *c) for zone in rects):
            continue
        if any(math.dist(c, k) < TOKEN_APART * (r + rk) for k, rk in round_things):
            continue
        if any(b[0] <= c[0] <= b[2] and b[1] <= c[1] <= b[3] for b in cards):
            continue
        if token_contrast(frame, h_img, c) < TOKEN_CONTRAST:
            continue
        added.append(d)
        round_things.append((c, r))
    return added


def tokens_seen_as_marbles(
    frame: np.ndarray,
    h_img: np.ndarray,
    kept: Sequence[Detection],
    low: Sequence[Detection],
    rects: Sequence[Rect],
) -> tuple[list[Detection], list[Detection]]:
    """VP tokens the detector named marbles: ``kept`` without its marble boxes centred in one of
    ``rects`` (the VP zones of the seats in play), and the tokens among those and the less sure
    marble boxes of ``low`` there.

    A VP zone holds VP tokens; marbles belong in the dispenser, the Energy Row and the rings. A
    printing the detector never saw is boxed as a marble (the held-out printing's 1s as yellow
    marbles, its 5s as black, red or blue ones, at a marble's size: docs/vision.md, "Ninth
    round"), so a marble box there is taken for a token under :func:`missed_tokens`' rules (a
    token's size, on nothing kept, standing out from the table), surest first. A marble's box is
    a marble's size whatever lies under it, so the token's box becomes its measured disc
    (:func:`measure`; the box itself when no edge is clear), read like any token's. A box from
    :data:`FAINT_FIVE_CONF` up to :data:`LOW_TOKEN_CONF` is looked at after those, and kept only
    as a 5 whose disc is measured. What this gives up: a marble left lying in a VP zone counts as
    a token."""

    def in_vp(d: Detection) -> bool:
        return d.cls.startswith("marble_") and any(inside(zone, *d.center_mm) for zone in rects)

    rest = [d for d in kept if not in_vp(d)]
    candidates = [d for d in (*kept, *low) if in_vp(d)]
    tokens: list[Detection] = []
    for d in missed_tokens(frame, h_img, rest, candidates, rects, classes=MARBLE_CLASSES):
        disc = measure(frame, h_img, d.center_mm)
        tokens.append(_token(d, disc.box if disc is not None else d.box_mm))
    faint = [d for d in candidates if FAINT_FIVE_CONF <= d.confidence < LOW_TOKEN_CONF]
    for d in missed_tokens(frame, h_img, rest + tokens, faint, rects, MARBLE_CLASSES, FAINT_FIVE_CONF):
        disc = measure(frame, h_img, d.center_mm)
        if disc is not None and disc.diameter >= VP_SPLIT_MM:
            tokens.append(_token(d, disc.box))
    return rest, tokens


def _token(d: Detection, box_mm: tuple[float, float, float, float]) -> Detection:
    """A token where the marble box ``d`` was, its box ``box_mm`` (its measured disc, or the box
    itself); a 5 or a 1 by that size (the value is read later, with the frame's other tokens)."""
    cls = "vp5" if box_size(box_mm) >= VP_SPLIT_MM else "vp1"
    return Detection(cls, d.confidence, tuple(v * CANON_PX_PER_MM for v in box_mm))  # type: ignore[arg-type]


def two_groups(points: np.ndarray) -> np.ndarray | None:
    """Labels 0/1 splitting ``points`` (n, d) into two well-separated groups (2-means from the
    farthest pair; :data:`PRINTING_APART`), or None when they are not two groups."""
    if len(points) < 2:
        return None
    dist = np.linalg.norm(points[:, None] - points[None], axis=-1)
    i, j = np.unravel_index(int(np.argmax(dist)), dist.shape)
    centres = np.stack([points[i], points[j]])
    labels = np.zeros(len(points), int)
    for _ in range(10):
        labels = np.argmin(np.linalg.norm(points[:, None] - centres[None], axis=-1), axis=1)
        if labels.min() == labels.max():
            return None
        centres = np.stack([points[labels == k].mean(axis=0) for k in (0, 1)])
    apart = float(np.linalg.norm(centres[0] - centres[1]))
    spread = max(float(np.linalg.norm(points[labels == k] - centres[k], axis=1).max()) for k in (0, 1))
    return labels if apart >= PRINTING_APART and apart > 2 * spread else None


def token_values(
    frame: np.ndarray | None,
    h_img: np.ndarray | None,
    boxes: list[tuple[float, float, float, float]],
    fives: np.ndarray | None = None,
) -> list[int]:
    """The values (1 or 5) of a frame's tokens (boxes in table mm), read together: by printing
    where the colours split them into two groups of clearly different size, else each by its own
    size (:func:`token_points`).

    ``fives``: the token reader's P(5) of each token (:class:`TokenReader`). With it, the group
    its reader calls 5s more surely (by :data:`READER_APART`) is the 5s, whatever the sizes say,
    and a token the reader is sure of (:data:`READER_SURE`) outside two groups is what it says."""
    sizes = np.array([token_size(frame, h_img, b) for b in boxes])
    values = [1 if s < VP_SPLIT_MM else 5 for s in sizes]
    if fives is not None:
        values = [
            5 if p >= READER_SURE else 1 if p <= 1 - READER_SURE else v
            for v, p in zip(values, fives, strict=True)
        ]
    if frame is None or h_img is None or len(boxes) < 2:
        return values
    chroma = np.array([token_chroma(frame, h_img, ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)) for b in boxes])
    groups = two_groups(chroma)
    if groups is None:
        return values
    medians = [float(np.median(sizes[groups == k])) for k in (0, 1)]
    if abs(medians[0] - medians[1]) < PRINTING_SIZE_MM:
        return values
    fives_group = int(medians[1] > medians[0])
    if fives is not None:
        said = [float(np.mean(fives[groups == k])) for k in (0, 1)]
        if abs(said[0] - said[1]) >= READER_APART:
            fives_group = int(said[1] > said[0])
    return [5 if g == fives_group else 1 for g in groups]
