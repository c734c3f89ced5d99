"""Synthetic Contrivance Workbenches with ground truth, the square dataset, and the square network.

``render_workbench(layout, seed, settings, art)`` draws the table top-down with the Gizmos
renderer's pieces (:mod:`vision.training.synth`: its table textures, canvas, calibration marker
tiles, pinhole camera, hand and camera effects, and the same :class:`RenderSettings` with its
style hooks), the two Workbench mats and the Component tiles of an :class:`~vision.training.tiles.Art`,
and returns the frame with its :class:`~referee.observation.WorkbenchObservation` truth: a
square the hand covers more than :data:`HIDDEN_SHARE` of is left out (not seen).

``python -m vision.training.workbench dataset|train|export`` renders the square crops (shards,
resumable, progress), trains :class:`SquareNet` on CPU (``--resume`` continues, progress per
batch) and exports ``models/workbench.onnx``. Never run in CI (the tests use ``--smoke``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.contrivance.data import BUILDERS, COLUMNS, ROWS_PER_MAT
from referee.observation import SquareSighting, TileSighting, WorkbenchObservation
from vision.errors import EnrolmentError
from vision.geometry import CANON_PX_PER_MM, CANON_SIZE, canonical_from_image
from vision.paths import LOCATIONS
from vision.progress import Progress
from vision.tile_enrol import EnrolledTiles, load_tiles
from vision.tile_faces import save_faces
from vision.training.synth import (
    CANVAS_MARGIN_MM,
    CANVAS_PX_PER_MM,
    RenderSettings,
    _aruco_tile,
    _Canvas,
    _effects,
    _hand,
    _texture,
    camera_homography,
    photograph,
)
from vision.training.tiles import (
    DAMAGE_VALUES,
    OWN_DAMAGE,
    TILE_MM,
    TILE_PX_PER_MM,
    TOKEN_MM,
    Art,
    DamageStyle,
    PhotoArt,
    contrivance_back,
    damage_token,
    own_art,
    random_art,
)
from vision.workbench import (
    CONTENTS,
    CROP_PX,
    DAMAGE_CLASSES,
    NO_TOKEN,
    VALUES,
    WORKBENCH,
    WorkbenchGeometry,
    rect_crops,
    square_crops,
)
from vision.zones import Rect, default_zones

#: A square the hand covers more of than this share is not seen (left out of the truth).
HIDDEN_SHARE = 0.02
#: Training scenes use seeds from here; the benchmark's (9,300,000 up) are refused.
TRAIN_SEED_BASE = 5_000_000
VAL_SEED_BASE = 5_900_000
HELDOUT_SEED_BASE = 9_000_000
#: Share of training scenes in the project's own look (the rest domain-randomised).
OWN_ART_SHARE = 0.3
#: Enrolment fine-tuning (``enrol``): its scenes' seeds, and the share of them showing the
#: enrolled photos (the rest are ordinary training scenes, so the network keeps the rest).
ENROL_SEED_BASE = 5_500_000
ENROL_VAL_SEED_BASE = 5_950_000
ENROLLED_SHARE = 0.7
#: In an enrolled scene, the share of its tiles that are enrolled photos.
PHOTO_TILE_SHARE = 0.8
#: The enrolment recipe's defaults: scenes rendered, validation scenes, epochs from the model.
ENROL_SCENES, ENROL_VAL, ENROL_EPOCHS = 600, 20, 8


@dataclass(frozen=True, slots=True)
class TileLayout:
    """A tile on a square: Builder, Double or not, facing (0 N .. 3 W) and dial value."""

    builder: str
    double: bool
    facing: int
    value: int


@dataclass(frozen=True, slots=True)
class WorkbenchLayout:
    """What lies on the Workbench: ``rows`` (3: mat 1 only, 6: both mats), the tiles by square,
    and the Damage token's value on the Contrivance tile (None: no token on it)."""

    rows: int
    tiles: tuple[tuple[tuple[int, int], TileLayout], ...]
    damage: int | None = None

    def at(self, row: int, column: int) -> TileLayout | None:
        for sq, t in self.tiles:
            if sq == (row, column):
                return t
        return None


def random_workbench(rng: np.random.Generator, rows: int | None = None) -> WorkbenchLayout:
    """A random Workbench: 3 or 6 rows, each square holding a random tile with a random density,
    and a random Damage token (drawn last, so the tiles are those of the same ``rng`` before
    the Damage was drawn)."""
    n = rows or int(rng.choice([ROWS_PER_MAT, 2 * ROWS_PER_MAT]))
    p = rng.uniform(0.3, 0.95)
    tiles = []
    for r in range(1, n + 1):
        for c in range(1, COLUMNS + 1):
            if rng.random() < p:
                tiles.append(
                    (
                        (r, c),
                        TileLayout(
                            str(rng.choice(BUILDERS)),
                            bool(rng.random() < 0.25),
                            int(rng.integers(0, 4)),
                            int(rng.integers(0, 7)),
                        ),
                    )
                )
    return WorkbenchLayout(n, tuple(tiles), int(rng.integers(0, len(DAMAGE_VALUES))))


@dataclass(slots=True)
class RenderedWorkbench:
    """A rendered frame of a Contrivance table with its ground truth."""

    image: np.ndarray
    truth: WorkbenchObservation
    homography: np.ndarray  # table mm -> image px
    layout: WorkbenchLayout
    #: Per square, the share of it the hand covers (0 without a hand).
    hand_share: dict[tuple[int, int], float] = field(default_factory=dict)
    #: The share of the Damage token the hand covers (0 without a hand or a token).
    damage_share: float = 0.0


def _paste_tile(
    cv: _Canvas, img: np.ndarray, center: tuple[float, float], angle_deg: float, shadow: bool = True
) -> None:
    """Paste a tile image (canvas scale, BGR or BGRA) rotated about its centre, with its shadow
    (its square's; ``shadow`` False: the caller casts its own)."""
    h, w = img.shape[:2]
    cx, cy = cv.px(*center)
    m = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), -angle_deg, 1.0)
    m[:, 2] += [cx - (w - 1) / 2, cy - (h - 1) / 2]
    edges = np.array(
        [[-0.5, -0.5, 1], [w - 0.5, -0.5, 1], [w - 0.5, h - 0.5, 1], [-0.5, h - 0.5, 1]], np.float32
    )
    corners_px = edges @ m.T
    if shadow:
        cv.shadow(corners_px / CANVAS_PX_PER_MM - CANVAS_MARGIN_MM, 0.6, 1.8)
    x0, y0 = np.floor(corners_px.min(0)).astype(int) - 1
    x1, y1 = np.ceil(corners_px.max(0)).astype(int) + 1
    m[:, 2] -= [x0, y0]
    size = (x1 - x0, y1 - y0)
    alpha_src = img[..., 3] if img.shape[2] == 4 else np.full((h, w), 255, np.uint8)
    color = cv2.warpAffine(np.ascontiguousarray(img[..., :3]), m, size, flags=cv2.INTER_LINEAR)
    alpha = cv2.warpAffine(alpha_src, m, size, flags=cv2.INTER_LINEAR)[..., None].astype(np.float32) / 255
    roi = cv.img[y0:y1, x0:x1]
    roi[:] = (roi * (1 - alpha) + color * alpha).astype(np.uint8)


def _workbench_rect(rows: int, g: WorkbenchGeometry) -> tuple[float, float, float, float]:
    x0, y0, _, _ = g.mat(1)
    x1, y1, w, h = g.mat(2 if rows > ROWS_PER_MAT else 1)
    return (x0, y0, x1 + w - x0, y1 + h - y0)


def _table(rng: np.random.Generator, s: RenderSettings) -> _Canvas:
    """The table's canvas under a random light, with the four calibration markers."""
    z = default_zones()
    tw, th = z.size
    cw = round((tw + 2 * CANVAS_MARGIN_MM) * CANVAS_PX_PER_MM)
    ch = round((th + 2 * CANVAS_MARGIN_MM) * CANVAS_PX_PER_MM)
    az, el = rng.uniform(0, 2 * math.pi), rng.uniform(math.radians(45), math.radians(75))
    light = np.array([math.cos(az) * math.cos(el), math.sin(az) * math.cos(el), math.sin(el)], np.float32)
    cv = _Canvas((s.texture or _texture)(rng, cw, ch), light)
    side = round(z.marker_mm * CANVAS_PX_PER_MM)
    border = round(9 * CANVAS_PX_PER_MM)  # the markers' white quiet zone, as on the Gizmos table
    for mid, (mx, my) in z.marker_tiles:
        x, y = (round(v) for v in cv.px(mx, my))
        cv.img[y - border : y + side + border, x - border : x + side + border] = (238, 238, 238)
        cv.paste(_aruco_tile(mid, 6 * 20), (mx, my), z.marker_mm)
    return cv


def render_workbench(
    layout: WorkbenchLayout,
    seed: int,
    settings: RenderSettings | None = None,
    art: Art | None = None,
    hand_near: float = 0.6,
    geometry: WorkbenchGeometry = WORKBENCH,
    damage_style: DamageStyle = OWN_DAMAGE,
    hand_at: Rect | None = None,
    camera: np.ndarray | None = None,
) -> RenderedWorkbench:
    """Render a Workbench as one camera frame with its ground truth (deterministic per seed).

    ``hand_near``: the share of hands that reach into the Workbench (the rest anywhere on the
    table); ``hand_at``: a table rectangle (mm) the hand reaches into instead (the Contrivance
    tile while the Damage is changed). The face-down Contrivance tile is drawn at
    ``geometry.contrivance`` and, with ``layout.damage``, the Damage token on it, in
    ``damage_style`` and from a random stream of their own (the rest of the scene is the one
    drawn without them). ``camera``: the homography (table mm -> image px) to film with instead
    of the scene's own random camera (one camera for a whole recorded game; the random one is
    still drawn, so the rest of the scene is the same).
    """
    s = settings or RenderSettings()
    z = default_zones()
    a = art or own_art()
    rng = np.random.default_rng(seed)
    tw, th = z.size
    cv = _table(rng, s)
    for mat in range(1, 1 + layout.rows // ROWS_PER_MAT):
        mx, my, mw, mh = geometry.mat(mat)
        dx, dy = rng.uniform(-1.5, 1.5, 2)
        x0, y0 = (round(v) for v in cv.px(mx + dx, my + dy))
        w, h = round(mw * CANVAS_PX_PER_MM), round(mh * CANVAS_PX_PER_MM)
        cv.shadow(np.array([[mx, my], [mx + mw, my], [mx + mw, my + mh], [mx, my + mh]]), 0.8, 1.0)
        cv.img[y0 : y0 + h, x0 : x0 + w] = a.mat(
            rng, w, h, geometry.pitch * CANVAS_PX_PER_MM, geometry.mat_border * CANVAS_PX_PER_MM
        )
    centre = _draw_damage(
        cv, layout.damage, np.random.default_rng([seed, 29]), geometry.contrivance, damage_style
    )
    token = None if layout.damage is None else centre
    scale = TILE_MM * CANVAS_PX_PER_MM / (TILE_MM * TILE_PX_PER_MM)
    for (r, c), t in layout.tiles:
        img = a.tile(t.builder, t.double, t.value)
        img = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        if t.facing:
            img = np.rot90(img, -t.facing).copy()  # quarter turns clockwise
        qx, qy, qw, qh = geometry.square(r, c)
        jx, jy = rng.uniform(-s.jitter_mm, s.jitter_mm, 2) * 0.8
        _paste_tile(
            cv, img, (qx + qw / 2 + jx, qy + qh / 2 + jy), rng.uniform(-s.jitter_deg, s.jitter_deg) * 1.5
        )
    h_img = camera_homography(rng, z, s)
    if camera is not None:
        h_img = camera
    image = photograph(cv.img, h_img, s.size)
    share: dict[tuple[int, int], float] = {}
    token_share = 0.0
    if rng.random() < s.hand_prob:
        aim = h_img
        if rng.random() < hand_near or hand_at is not None:  # the hand's target drawn inside
            wx, wy, ww, wh = hand_at or _workbench_rect(layout.rows, geometry)
            aim = h_img @ np.array([[ww / tw, 0, wx], [0, wh / th, wy], [0, 0, 1]])
        mask = _hand(rng, image, aim, z)
        canon = cv2.warpPerspective(mask, canonical_from_image(h_img), CANON_SIZE, flags=cv2.INTER_LINEAR)
        for r, c in geometry.squares(layout.rows):
            x, y, w, h = (round(v * CANON_PX_PER_MM) for v in geometry.square(r, c))
            share[(r, c)] = float(canon[y : y + h, x : x + w].mean() / 255)
        if token is not None:
            disc = np.zeros(canon.shape, np.uint8)
            centre = (round(token[0] * CANON_PX_PER_MM), round(token[1] * CANON_PX_PER_MM))
            cv2.circle(disc, centre, round(TOKEN_MM / 2 * CANON_PX_PER_MM), 255, -1)
            token_share = float(canon[disc > 0].mean() / 255)
    if s.effects:
        image = (s.camera or _effects)(rng, image)
    truth = workbench_truth(layout, share, geometry, token_share)
    return RenderedWorkbench(image, truth, h_img, layout, share, token_share)


def _draw_damage(
    cv: _Canvas, value: int | None, rng: np.random.Generator, place: Rect, style: DamageStyle
) -> tuple[float, float]:
    """The face-down Contrivance tile at its place (a little off, a little turned) and the Damage
    token laid on it by hand (anywhere on it, at any angle; none when ``value`` is None);
    returns the token's centre (mm)."""
    x, y, w, h = place
    side = round(w * CANVAS_PX_PER_MM)
    back = cv2.resize(contrivance_back(style, w), (side, side), interpolation=cv2.INTER_AREA)
    cx, cy = x + w / 2 + rng.uniform(-2, 2), y + h / 2 + rng.uniform(-2, 2)
    _paste_tile(cv, back, (cx, cy), rng.uniform(-4, 4))
    reach = w / 2 - TOKEN_MM / 2 - 4
    tx, ty = cx + rng.uniform(-reach, reach), cy + rng.uniform(-reach, reach)
    scale = CANVAS_PX_PER_MM / TILE_PX_PER_MM
    angle = rng.uniform(0, 360)
    if value is not None:
        token = cv2.resize(damage_token(style, value), None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        a = np.linspace(0, 2 * math.pi, 24, endpoint=False)
        r = TOKEN_MM / 2
        cv.shadow(np.stack([tx + r * np.cos(a), ty + r * np.sin(a)], 1), 0.7, 1.0)  # a disc's shadow
        _paste_tile(cv, token, (tx, ty), angle, shadow=False)
    return tx, ty


def workbench_truth(
    layout: WorkbenchLayout,
    hand_share: dict[tuple[int, int], float],
    geometry: WorkbenchGeometry = WORKBENCH,
    damage_share: float = 0.0,
) -> WorkbenchObservation:
    """The observation a perfect reader reports (confidence 1.0; covered squares left out, and
    the Damage when the hand covers more than HIDDEN_SHARE of its token)."""
    squares = []
    for r, c in geometry.squares(layout.rows):
        if hand_share.get((r, c), 0.0) > HIDDEN_SHARE:
            continue
        t = layout.at(r, c)
        tile = None if t is None else TileSighting(t.builder, t.double, t.facing, t.value, 1.0, 1.0, 1.0)
        squares.append(SquareSighting(r, c, tile, 1.0))
    damage = None if layout.damage is None or damage_share > HIDDEN_SHARE else (layout.damage, 1.0)
    return WorkbenchObservation(time=0.0, squares=tuple(squares), damage=damage, source="synthetic")


# ----------------------------------------------------------------------------------------------- dataset

#: Label columns: content (index in CONTENTS), double (0/1), facing (0-3), value (0-6).
LABELS = ("content", "double", "facing", "value")


def square_labels(scene: RenderedWorkbench) -> tuple[list[tuple[int, int]], np.ndarray]:
    """The scene's squares and their labels (n, 4); a covered square is content 0 ("hand")."""
    squares = WORKBENCH.squares(scene.layout.rows)
    y = np.zeros((len(squares), 4), np.int64)
    for i, (r, c) in enumerate(squares):
        t = scene.layout.at(r, c)
        if scene.hand_share.get((r, c), 0.0) > HIDDEN_SHARE:
            y[i, 0] = CONTENTS.index("hand")
        elif t is None:
            y[i, 0] = CONTENTS.index("empty")
        else:
            y[i] = (CONTENTS.index(t.builder), int(t.double), t.facing, t.value)
    return squares, y


def perturbed(h: np.ndarray, rng: np.random.Generator, mm: float = 1.2, deg: float = 0.4) -> np.ndarray:
    """The homography as a calibration might have it: shifted up to ``mm`` and turned ``deg``."""
    a = math.radians(rng.uniform(-deg, deg))
    cx, cy = 590.0, 380.0
    rot = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])
    t0 = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]], np.float64)
    t1 = np.array([[1, 0, cx + rng.uniform(-mm, mm)], [0, 1, cy + rng.uniform(-mm, mm)], [0, 0, 1]])
    return h @ t1 @ rot @ t0


def training_scene(seed: int, settings: RenderSettings) -> RenderedWorkbench:
    """One training scene: own art in OWN_ART_SHARE of them, else a random look and table."""
    rng = np.random.default_rng([seed, 3])
    own = rng.random() < OWN_ART_SHARE
    size = (1280, 720) if seed % 2 == 0 else (1920, 1080)
    from dataclasses import replace

    from vision.training.randomise import random_camera, random_texture

    s = replace(settings, size=size)
    if not own:
        s = replace(s, texture=random_texture, camera=random_camera)
    art = own_art() if own else random_art(seed)
    return render_workbench(random_workbench(rng), seed, s, art)


def enrolled_scene(seed: int, settings: RenderSettings, enrolled: EnrolledTiles) -> RenderedWorkbench:
    """A scene of the table's own tiles (:mod:`vision.tile_enrol`): PHOTO_TILE_SHARE of its tiles
    are enrolled photos (Builder, Double and value as photographed, turned at random), the others
    and the mat (unless a mat photo is enrolled) drawn in the own or a random look."""
    rng = np.random.default_rng([seed, 7])
    shown = enrolled.shown()
    keys = sorted(shown)
    layout = random_workbench(rng)
    tiles = []
    for sq, t in layout.tiles:
        if rng.random() < PHOTO_TILE_SHARE:
            b, d, v = keys[int(rng.integers(len(keys)))]
            t = TileLayout(b, d, t.facing, v)
        tiles.append((sq, t))
    fallback = own_art() if rng.random() < 0.5 else random_art(seed)
    art = PhotoArt(
        shown, enrolled.mat, fallback, float(rng.uniform(0.85, 1.15)), np.random.default_rng([seed, 11])
    )
    from dataclasses import replace

    from vision.training.randomise import random_camera

    size = (1280, 720) if seed % 2 == 0 else (1920, 1080)
    s = replace(settings, size=size, camera=random_camera if rng.random() < 0.5 else None)
    return render_workbench(WorkbenchLayout(layout.rows, tuple(tiles)), seed, s, art)


def render_shard(
    path: Path,
    seeds: range,
    settings: RenderSettings,
    progress: Progress | None = None,
    enrolled: EnrolledTiles | None = None,
) -> int:
    """Render scenes and write their square crops and labels to one ``.npz`` shard (with
    ``enrolled``, ENROLLED_SHARE of them show the enrolled tiles)."""
    xs, ys = [], []
    for seed in seeds:
        if seed >= HELDOUT_SEED_BASE:
            raise ValueError(f"seed {seed} is in the benchmark's held-out range (>= {HELDOUT_SEED_BASE})")
        mine = enrolled is not None and np.random.default_rng([seed, 8]).random() < ENROLLED_SHARE
        scene = (
            enrolled_scene(seed, settings, enrolled) if mine and enrolled else training_scene(seed, settings)
        )
        squares, y = square_labels(scene)
        rng = np.random.default_rng([seed, 5])
        xs.append(square_crops(scene.image, perturbed(scene.homography, rng), squares, WORKBENCH))
        ys.append(y)
        if progress:
            progress.step()
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, x=np.concatenate(xs), y=np.concatenate(ys))
    tmp.replace(path)  # a shard is there whole or not at all
    return sum(len(y) for y in ys)


def build_dataset(
    out: Path,
    scenes: int,
    first_seed: int,
    per_shard: int = 50,
    hand_prob: float = 0.6,
    part: tuple[int, int] = (0, 1),
    enrolled: EnrolledTiles | None = None,
    damage: bool = False,
) -> None:
    """Render ``scenes`` scenes into shards under ``out``; a shard already there is kept
    (resumable), and ``part`` (k, n) renders every n-th shard from the k-th, so that n
    processes can share the work; ``enrolled``: the table's own tiles in most scenes;
    ``damage``: Damage token scenes (:func:`render_damage_shard`) instead of Workbenches."""
    out.mkdir(parents=True, exist_ok=True)
    settings = RenderSettings(hand_prob=hand_prob)
    last = first_seed + scenes
    shards = [
        (out / f"shard-{s:08d}.npz", range(s, min(s + per_shard, last)))
        for s in range(first_seed, last, per_shard)
    ][part[0] :: part[1]]
    todo = [(p, r) for p, r in shards if not p.exists()]
    prog = Progress(
        f"workbench dataset {out.name} part {part[0] + 1}/{part[1]}", sum(len(r) for _, r in todo)
    )
    for p, r in todo:
        if p.exists():
            continue
        if damage:
            render_damage_shard(p, r, settings, prog)
        else:
            render_shard(p, r, settings, prog, enrolled)


#: Damage token scenes (``damage-dataset``): their seeds (the benchmark's, 9,300,000 up, refused).
DAMAGE_SEED_BASE = 6_000_000
DAMAGE_VAL_SEED_BASE = 6_900_000
#: Where a Damage token scene lays its Contrivance tiles (a grid over the table, clear of the
#: markers): many tokens per rendered frame, each under that frame's camera, light and hand.
DAMAGE_PLACES: tuple[Rect, ...] = tuple(
    (x, y, 70.0, 70.0) for y in (110.0, 225.0, 340.0, 455.0, 570.0) for x in range(130, 1000, 110)
)


def damage_scene(seed: int, settings: RenderSettings) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One Damage training frame: a Contrivance tile at every place of DAMAGE_PLACES with a token
    of a random value (or none) laid on it by hand, in the own look (OWN_ART_SHARE of frames,
    on the project's tables) or a random look per place (random tables and camera colours).
    Returns the frame, its true homography and the labels per place (value, NO_TOKEN, or -1
    where the hand covers more than HIDDEN_SHARE of the token or the camera does not see the
    place whole)."""
    from dataclasses import replace

    from vision.training.randomise import random_camera, random_texture
    from vision.training.tiles import random_damage_style

    rng = np.random.default_rng([seed, 31])
    own = rng.random() < OWN_ART_SHARE
    s = replace(settings, size=(1280, 720) if seed % 2 == 0 else (1920, 1080))
    if not own:
        s = replace(s, texture=random_texture, camera=random_camera)
    z = default_zones()
    cv = _table(rng, s)
    labels, centres = [], []
    for place in DAMAGE_PLACES:
        value = int(rng.integers(0, DAMAGE_CLASSES))
        style = OWN_DAMAGE if own else random_damage_style(rng)
        centres.append(_draw_damage(cv, None if value == NO_TOKEN else value, rng, place, style))
        labels.append(value)
    h_img = camera_homography(rng, z, s)
    image = photograph(cv.img, h_img, s.size)
    for i, (x, y, w, h) in enumerate(DAMAGE_PLACES):  # a place the camera does not see whole
        corners = np.array([[[x, y], [x + w, y], [x + w, y + h], [x, y + h]]], np.float32)
        px = cv2.perspectiveTransform(corners, h_img)[0]
        if (px < 0).any() or (px[:, 0] >= s.size[0]).any() or (px[:, 1] >= s.size[1]).any():
            labels[i] = -1
    if rng.random() < s.hand_prob:
        mask = _hand(rng, image, h_img, z)
        canon = cv2.warpPerspective(mask, canonical_from_image(h_img), CANON_SIZE, flags=cv2.INTER_LINEAR)
        for i, (tx, ty) in enumerate(centres):
            disc = np.zeros(canon.shape, np.uint8)
            centre = (round(tx * CANON_PX_PER_MM), round(ty * CANON_PX_PER_MM))
            cv2.circle(disc, centre, round(TOKEN_MM / 2 * CANON_PX_PER_MM), 255, -1)
            if float(canon[disc > 0].mean() / 255) > HIDDEN_SHARE:
                labels[i] = -1
    if s.effects:
        image = (s.camera or _effects)(rng, image)
    return image, h_img, np.array(labels, np.int64)


def render_damage_shard(path: Path, seeds: range, settings: RenderSettings, progress: Progress | None) -> int:
    """Render Damage token scenes and write their place crops and labels to one ``.npz`` shard
    (covered tokens left out)."""
    xs, ys = [], []
    for seed in seeds:
        if seed >= HELDOUT_SEED_BASE:
            raise ValueError(f"seed {seed} is in the benchmark's held-out range (>= {HELDOUT_SEED_BASE})")
        image, h, y = damage_scene(seed, settings)
        rng = np.random.default_rng([seed, 5])
        crops = rect_crops(image, perturbed(h, rng), list(DAMAGE_PLACES))
        xs.append(crops[y >= 0])
        ys.append(y[y >= 0])
        if progress:
            progress.step()
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, x=np.concatenate(xs), y=np.concatenate(ys))
    tmp.replace(path)
    return sum(len(y) for y in ys)


def load_dataset(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """Every shard of a dataset folder, concatenated."""
    shards = sorted(p for p in folder.glob("shard-*.npz") if not p.name.endswith(".tmp.npz"))  # whole ones
    if not shards:
        raise FileNotFoundError(f"no shards in {folder}: render them with `dataset` first")
    parts = [np.load(p) for p in shards]
    return np.concatenate([p["x"] for p in parts]), np.concatenate([p["y"] for p in parts])


# ----------------------------------------------------------------------------------------------- network


def _body() -> Any:
    """The convolutional body the square and Damage networks share: five 3x3 convolutions with
    batch norm and ReLU, 16-96 channels, global average pooling (96 features a crop)."""
    from torch import nn

    def block(i: int, o: int, stride: int = 1) -> nn.Sequential:
        return nn.Sequential(
            nn.Conv2d(i, o, 3, stride, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)
        )

    return nn.Sequential(
        block(3, 16, 2),  # 32
        block(16, 32),
        nn.MaxPool2d(2),  # 16
        block(32, 48),
        block(48, 64, 2),  # 8
        block(64, 96),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
    )


def square_net() -> Any:
    """The square network (torch): a small CNN with four heads (~0.1 M weights, ~14 M multiply-adds
    a crop: the CPU is small and shared)."""
    import torch
    from torch import nn

    class SquareNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = _body()
            self.content_head = nn.Linear(96, len(CONTENTS))
            self.double_head = nn.Linear(96, 2)
            self.facing_head = nn.Linear(96, 4)
            self.value_head = nn.Linear(96, 7)

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
            f = self.body(x)
            return self.content_head(f), self.double_head(f), self.facing_head(f), self.value_head(f)

    return SquareNet()


def damage_net() -> Any:
    """The Damage network (torch): the square network's body and one head, the token's value
    0-10 or no token (DAMAGE_CLASSES), read from the crop of the Contrivance tile's place."""
    import torch
    from torch import nn

    class DamageNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = _body()
            self.damage_head = nn.Linear(96, DAMAGE_CLASSES)

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
            return (self.damage_head(self.body(x)),)

    return DamageNet()


#: Share of training crops shown upright (a tile's first Rivet north), where the Builder, the
#: Double and the dial are learned; the others are turned at random and teach the facing.
UPRIGHT_SHARE = 0.5


def _turn(x: Any, turns: Any) -> Any:
    """Each crop turned ``turns[i]`` quarter turns clockwise."""
    import torch

    out = x.clone()
    for q in (1, 2, 3):
        m = turns == q
        if m.any():
            out[m] = torch.rot90(x[m], -q, dims=(2, 3))
    return out


def _augment(x: Any, y: Any, rng: np.random.Generator) -> tuple[Any, Any]:
    """Two stages (as the reader reads): every tile turned upright, then each crop turned a
    random quarter turns except UPRIGHT_SHARE of them (facing follows; a fifth label column says
    upright); shifts of up to 3 px, brightness, per-channel gain and contrast."""
    import torch

    n = x.shape[0]
    tile = y[:, 0] >= 2
    x = _turn(x, torch.where(tile, (4 - y[:, 2]) % 4, 0))  # upright
    turns = torch.from_numpy(rng.integers(0, 4, n))
    forced = torch.from_numpy(rng.random(n) < UPRIGHT_SHARE)
    turns[forced] = 0
    x = _turn(x, turns)
    # Column 4: the crop is upright; column 5: its turn was drawn at random (uniform facings).
    y = torch.cat([y.clone(), (turns == 0).long()[:, None], (~forced).long()[:, None]], 1)
    y[:, 2] = torch.where(tile, turns, 0)
    return _render_style(_photometric(x, rng), rng), y


#: Crop-level render-style randomisation (second run, 2026-11-24): the share of crops whose
#: colour channels are permuted, turned grey, blurred, and given sensor noise.
STYLE_SHARES = {"permute": 0.3, "grey": 0.1, "blur": 0.25, "noise": 0.25}
#: The channel orders other than the crop's own (one per batch).
_SWAPS = ((0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))


def _render_style(x: Any, rng: np.random.Generator) -> Any:
    """Looks no renderer setting draws: colour channels swapped (a Builder is its mark, not its
    colour), grey, a softer lens (Gaussian blur, sigma 0.5-1.3 px) and sensor noise
    (sigma 0.01-0.05), each on its share of the crops (:data:`STYLE_SHARES`)."""
    import torch
    import torch.nn.functional as F

    n = x.shape[0]
    x = x.clone()
    pick = {k: torch.from_numpy(rng.random(n) < v) for k, v in STYLE_SHARES.items()}
    if pick["permute"].any():
        order = _SWAPS[int(rng.integers(len(_SWAPS)))]
        x[pick["permute"]] = x[pick["permute"]][:, list(order)]
    if pick["grey"].any():
        x[pick["grey"]] = x[pick["grey"]].mean(dim=1, keepdim=True).expand(-1, 3, -1, -1)
    if pick["blur"].any():
        sigma = float(rng.uniform(0.5, 1.3))
        t = torch.arange(-3, 4, dtype=torch.float32)
        g = torch.exp(-(t**2) / (2 * sigma**2))
        g = g / g.sum()
        k2 = (g[:, None] * g[None, :]).expand(3, 1, 7, 7).contiguous()
        x[pick["blur"]] = F.conv2d(F.pad(x[pick["blur"]], (3, 3, 3, 3), mode="replicate"), k2, groups=3)
    if pick["noise"].any():
        m = pick["noise"]
        sd = torch.from_numpy(rng.uniform(0.01, 0.05, (int(m.sum()), 1, 1, 1)).astype(np.float32))
        x[m] = x[m] + sd * torch.from_numpy(rng.standard_normal(x[m].shape).astype(np.float32))
    return x.clamp(0, 1)


def _photometric(x: Any, rng: np.random.Generator) -> Any:
    """Shifts of up to 3 px, per-channel gain, brightness and contrast."""
    import torch

    n = x.shape[0]
    dx, dy = (int(v) for v in rng.integers(-3, 4, 2))
    x = torch.roll(x, shifts=(dy, dx), dims=(2, 3))
    gain = torch.from_numpy(rng.uniform(0.7, 1.3, (n, 3, 1, 1)).astype(np.float32))
    bias = torch.from_numpy(rng.uniform(-0.12, 0.12, (n, 1, 1, 1)).astype(np.float32))
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    contrast = torch.from_numpy(rng.uniform(0.7, 1.3, (n, 1, 1, 1)).astype(np.float32))
    x = ((x - mean) * contrast + mean) * gain + bias
    return x.clamp(0, 1)


def _augment_damage(x: Any, y: Any, rng: np.random.Generator) -> tuple[Any, Any]:
    """A token lies at any angle, so each crop is also turned a random quarter turns."""
    import torch

    return _photometric(_turn(x, torch.from_numpy(rng.integers(0, 4, x.shape[0]))), rng), y


def _losses_damage(out: Any, y: Any) -> Any:
    import torch.nn.functional as F

    return F.cross_entropy(out[0], y)


def evaluate_damage(net: Any, x: np.ndarray, y: np.ndarray, batch: int = 512) -> dict[str, float]:
    """The Damage network's accuracy: over every crop, and over the crops showing a token."""
    import torch

    from vision.workbench import to_input

    net.eval()
    with torch.no_grad():
        p = np.concatenate(
            [
                net(torch.from_numpy(to_input(x[i : i + batch])))[0].argmax(1).numpy()
                for i in range(0, len(x), batch)
            ]
        )
    token = y != NO_TOKEN
    return {"damage": float((p == y).mean()), "tokens": float((p[token] == y[token]).mean())}


def _losses(out: Any, y: Any) -> Any:
    """Content on every crop, facing on randomly turned tiles, Double and dial on upright tiles."""
    import torch.nn.functional as F

    content, double, facing, value = out
    loss = F.cross_entropy(content, y[:, 0])
    tile = y[:, 0] >= 2
    turned = tile & (y[:, 5] == 1)  # the facing learns from uniformly turned tiles only (no bias to north)
    if turned.any():
        loss = loss + F.cross_entropy(facing[turned], y[turned, 2])
    up = tile & (y[:, 4] == 1)
    if up.any():
        loss = loss + F.cross_entropy(double[up], y[up, 1]) + F.cross_entropy(value[up], y[up, 3])
    return loss


def evaluate(net: Any, x: np.ndarray, y: np.ndarray, batch: int = 512) -> dict[str, float]:
    """Accuracy per head on a labelled set, read as the reader reads (facing first, then the
    crop turned upright), Double, facing and value on tiles only; and squares right."""
    import torch

    from vision.workbench import to_input

    net.eval()
    preds = []
    with torch.no_grad():
        for i in range(0, len(x), batch):
            xb = torch.from_numpy(to_input(x[i : i + batch]))
            facing = net(xb)[2].argmax(1)
            out = net(_turn(xb, (4 - facing) % 4))
            preds.append(
                np.stack(
                    [
                        out[0].argmax(1).numpy(),
                        out[1].argmax(1).numpy(),
                        facing.numpy(),
                        out[3].argmax(1).numpy(),
                    ],
                    1,
                )
            )
    p = np.concatenate(preds)
    tile = y[:, 0] >= 2
    right = (p[:, 0] == y[:, 0]) & (~tile | ((p[:, 1:] == y[:, 1:]).all(1)))
    return {
        "content": float((p[:, 0] == y[:, 0]).mean()),
        "double": float((p[tile, 1] == y[tile, 1]).mean()),
        "facing": float((p[tile, 2] == y[tile, 2]).mean()),
        "value": float((p[tile, 3] == y[tile, 3]).mean()),
        "squares": float(right.mean()),
    }


def init_from_onnx(net: Any, path: Path, xb: Any) -> None:
    """Start ``net`` from an exported model's weights (its batch norms folded into the
    convolutions): each convolution takes the folded weights, and its batch norm is set from
    the statistics of ``xb`` (a batch of inputs) so that it gives back the folded bias, in
    training mode as in evaluation. The committed ``models/workbench.onnx`` carries no torch
    checkpoint; this lets a new run start from it. A network with other heads on the same body
    (the Damage network) takes the body alone: it starts from the square network's features."""
    import onnx
    import torch
    from onnx import numpy_helper

    model = onnx.load(str(path))
    weights = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in model.graph.initializer}
    convs = [n for n in model.graph.node if n.op_type == "Conv"]
    blocks = [m for m in net.body if isinstance(m, torch.nn.Sequential)]
    if len(convs) != len(blocks):
        raise ValueError(f"{path}: {len(convs)} convolutions, the square network has {len(blocks)}")
    for name in ("content_head", "double_head", "facing_head", "value_head"):
        if not hasattr(net, name):  # another network on the same body (the Damage network)
            continue
        getattr(net, name).weight.data.copy_(weights[f"{name}.weight"])
        getattr(net, name).bias.data.copy_(weights[f"{name}.bias"])
    net.eval()
    conv_at = iter(zip(convs, blocks, strict=True))
    x = xb
    with torch.no_grad():
        for module in net.body:
            if isinstance(module, torch.nn.Sequential):
                node, block = next(conv_at)
                conv, bn = block[0], block[1]
                conv.weight.copy_(weights[node.input[1]])
                z = conv(x)
                mean, var = z.mean((0, 2, 3)), z.var((0, 2, 3))
                bn.running_mean.copy_(mean)
                bn.running_var.copy_(var)
                bn.weight.copy_(torch.sqrt(var + bn.eps))
                bn.bias.copy_(mean + weights[node.input[2]])
            x = module(x)


@dataclass(frozen=True, slots=True)
class Task:
    """What :func:`train` trains: the network, its augmentation, loss and validation, the
    validation figure that picks the best epoch, and the exported outputs' names."""

    net: Any
    augment: Any
    losses: Any
    evaluate: Any
    key: str
    outputs: tuple[str, ...]


SQUARES = Task(square_net, _augment, _losses, evaluate, "squares", LABELS)
DAMAGE = Task(damage_net, _augment_damage, _losses_damage, evaluate_damage, "damage", ("damage",))


def train(
    data: Path,
    val: Path,
    run: Path,
    epochs: int,
    batch: int = 128,
    lr: float = 3e-3,
    resume: bool = False,
    threads: int = 2,
    seed: int = 0,
    init: Path | None = None,
    task: Task = SQUARES,
) -> dict[str, float]:
    """Train the square network, or another ``task`` (progress per batch, a checkpoint per
    epoch; ``resume`` continues a run; ``init``: start from these weights, e.g. a second, longer
    schedule on more data)."""
    import torch

    from vision.workbench import to_input

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    xv, yv = load_dataset(val)
    net = task.net()
    if init is not None and init.suffix == ".onnx":
        first = sorted(p for p in data.glob("shard-*.npz") if not p.name.endswith(".tmp.npz"))
        if not first:
            raise FileNotFoundError(f"no shards in {data}: render them with `dataset` first")
        init_from_onnx(net, init, torch.from_numpy(to_input(np.load(first[0])["x"][:512])))
    elif init is not None:
        net.load_state_dict(torch.load(init, weights_only=True))
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    start = 0
    run.mkdir(parents=True, exist_ok=True)
    ckpt = run / "last.pt"
    best = {task.key: -1.0}
    if resume:
        if not ckpt.exists():
            raise FileNotFoundError(f"nothing to resume: {ckpt} not found")
        state = torch.load(ckpt, weights_only=False)
        net.load_state_dict(state["net"])
        opt.load_state_dict(state["opt"])
        start, best = state["epoch"] + 1, state.get("best", best)
    for epoch in range(start, epochs):
        # The shards are read again every epoch: training can start while the dataset renders.
        x, y = load_dataset(data)
        rng = np.random.default_rng([seed, epoch])
        net.train()
        order = rng.permutation(len(x))
        t0, seen, total = time.monotonic(), 0, 0.0
        nb = math.ceil(len(x) / batch)
        for b in range(nb):
            done = (epoch + b / nb) / epochs  # warm-up over the first 5 %, then cosine decay
            for group in opt.param_groups:
                group["lr"] = lr * min(1.0, done / 0.05) * 0.5 * (1 + math.cos(math.pi * done))
            idx = np.sort(order[b * batch : (b + 1) * batch])
            xb, yb = task.augment(torch.from_numpy(to_input(x[idx])), torch.from_numpy(y[idx]), rng)
            loss = task.losses(net(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen += len(idx)
            total += loss.item() * len(idx)
            if b % 25 == 0 or b == nb - 1:
                el = time.monotonic() - t0
                print(
                    f"epoch {epoch + 1}/{epochs} batch {b + 1}/{nb} ({len(x)} crops) loss {total / seen:.4f} "
                    f"{el:.0f}s, ETA {el / (b + 1) * (nb - b - 1):.0f}s",
                    file=sys.stderr,
                    flush=True,
                )
        metrics = task.evaluate(net, xv, yv)
        print(
            f"epoch {epoch + 1}/{epochs} val " + " ".join(f"{k} {v:.4f}" for k, v in metrics.items()),
            file=sys.stderr,
            flush=True,
        )
        if metrics[task.key] >= best[task.key]:
            best = metrics
            torch.save(net.state_dict(), run / "best.tmp")
            (run / "best.tmp").replace(run / "best.pt")
        state = {"net": net.state_dict(), "opt": opt.state_dict(), "epoch": epoch, "best": best}
        torch.save(state, run / "last.tmp")
        (run / "last.tmp").replace(ckpt)
    return best


def export(weights: Path, out: Path = LOCATIONS.workbench, task: Task = SQUARES) -> Path:
    """Export trained weights to ONNX (the square network: outputs content, double, facing,
    value logits; the Damage network: damage logits)."""
    import torch

    net = task.net()
    net.load_state_dict(torch.load(weights, weights_only=True))
    net.eval()
    tmp = out.with_suffix(".tmp.onnx")
    torch.onnx.export(
        net,
        (torch.zeros(1, 3, CROP_PX, CROP_PX),),
        str(tmp),
        input_names=["crops"],
        output_names=list(task.outputs),
        dynamic_axes={"crops": {0: "n"}, **{k: {0: "n"} for k in task.outputs}},
        opset_version=17,
        dynamo=False,
    )
    tmp.replace(out)
    return out


def enrol(
    folder: Path,
    out: Path,
    scenes: int = ENROL_SCENES,
    val: int = ENROL_VAL,
    epochs: int = ENROL_EPOCHS,
    lr: float = 1e-3,
    threads: int = 1,
    init: Path = LOCATIONS.workbench,
    model_out: Path | None = None,
) -> str:
    """Adapt the square network to a table's own tiles: render scenes with the enrolled photos
    (resumable shards), fine-tune from ``init`` (``--resume`` is implied: a run already in
    ``out`` continues) and export. Returns a line saying what was enrolled and where the model is."""
    enrolled = load_tiles(folder)
    if not init.is_file():
        raise FileNotFoundError(f"model to start from {init} not found")
    print(enrolled.summary(), file=sys.stderr, flush=True)
    build_dataset(out / "train", scenes, ENROL_SEED_BASE, enrolled=enrolled)
    build_dataset(out / "val", val, ENROL_VAL_SEED_BASE, enrolled=enrolled)
    run = out / "run"
    resume = (run / "last.pt").exists()
    train(out / "train", out / "val", run, epochs, 64, lr, resume, threads, init=None if resume else init)
    target = export(run / "best.pt", model_out or out / "workbench.onnx")
    return f"{enrolled.summary()}\nmodel: {target} (read with --model / --workbench-model)"


#: The own tiles' faces are kept at 2 px/mm (120 px a tile): the reader compares them at the
#: crop's 0.97 px/mm (vision.tile_faces).
OWN_FACE_PX = 120


def own_faces(out: Path = LOCATIONS.workbench_tiles) -> Path:
    """Write the project's own tiles' faces (every Builder, Double or not, value 0-6, as
    :func:`own_art` draws them) for the reader to compare crops with (``models/workbench_tiles.npz``)."""
    art = own_art()
    faces = {
        (b, d, v): cv2.resize(
            art.tile(b, d, v)[..., :3], (OWN_FACE_PX, OWN_FACE_PX), interpolation=cv2.INTER_AREA
        )
        for b in BUILDERS
        for d in (False, True)
        for v in range(VALUES)
    }
    return save_faces(out, faces)


def _dataset_arguments(p: argparse.ArgumentParser, name: str, train: int, val: int) -> None:
    """A dataset command's options: its folder (``DATA/name``), its sizes and its shard."""
    p.add_argument("--out", type=Path, default=LOCATIONS.data / name)
    p.add_argument("--train", type=int, default=train)
    p.add_argument("--val", type=int, default=val)
    p.add_argument("--part", default="1/1", help="k/n: this process renders every n-th shard from the k-th")
    p.add_argument(
        "--first-seed",
        type=int,
        default=None,
        help="the training scenes' first seed (default: the dataset's own base; the range must end "
        "before the validation seeds); a later range adds new scenes beside shards linked from an "
        "earlier dataset",
    )


def _train_arguments(p: argparse.ArgumentParser, name: str, threads: int, init: str) -> None:
    """A training command's options: its data (``DATA/name``), its run (``RUNS/name``), the recipe."""
    p.add_argument("--data", type=Path, default=LOCATIONS.data / name)
    p.add_argument("--run", type=Path, default=LOCATIONS.runs / name)
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--threads", type=int, default=threads)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--init", type=Path, default=None, help=init)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m vision.training.workbench", description=__doc__.split("\n")[0]
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    _dataset_arguments(
        sub.add_parser("dataset", help="render square crops (resumable)"), "workbench", 1600, 120
    )
    _train_arguments(
        sub.add_parser("train", help="train the square network (--resume continues)"),
        "workbench",
        threads=2,
        init="start from these weights (a .pt state or an exported .onnx)",
    )
    c = sub.add_parser("enrol-check", help="check a folder of the table's own tile photos")
    c.add_argument("folder", type=Path)
    en = sub.add_parser(
        "enrol",
        help="adapt the square network to the table's own tiles: a short fine-tune on scenes rendered with "
        "their photos (resumable; progress), exported to --model-out",
    )
    en.add_argument(
        "folder", type=Path, help="tile photos named like Engineer-3.jpg, Mechanic-double-6.png, mat.jpg"
    )
    en.add_argument(
        "--out", type=Path, default=LOCATIONS.runs / "workbench-enrol", help="dataset and run folder"
    )
    en.add_argument("--scenes", type=int, default=ENROL_SCENES)
    en.add_argument("--val", type=int, default=ENROL_VAL)
    en.add_argument("--epochs", type=int, default=ENROL_EPOCHS)
    en.add_argument("--lr", type=float, default=1e-3)
    en.add_argument("--threads", type=int, default=1)
    en.add_argument("--init", type=Path, default=LOCATIONS.workbench, help="the model to start from")
    en.add_argument("--model-out", type=Path, default=None, help="default: OUT/workbench.onnx")
    f = sub.add_parser("own-faces", help="write the own tiles' faces the reader compares crops with")
    f.add_argument("--out", type=Path, default=LOCATIONS.workbench_tiles)
    e = sub.add_parser("export", help="write models/workbench.onnx (--damage: models/damage.onnx)")
    e.add_argument("--weights", type=Path, default=None, help="default RUNS/workbench(-damage)/best.pt")
    e.add_argument("--out", type=Path, default=None)
    e.add_argument("--damage", action="store_true", help="the Damage network")
    _dataset_arguments(
        sub.add_parser("damage-dataset", help="render Damage token crops (resumable)"),
        "workbench-damage",
        600,
        40,
    )
    _train_arguments(
        sub.add_parser("damage-train", help="train the Damage network (--resume continues)"),
        "workbench-damage",
        threads=1,
        init="start the body from this model (e.g. models/workbench.onnx)",
    )
    a = p.parse_args(argv)
    try:
        if a.cmd in ("dataset", "damage-dataset"):
            k, n = (int(v) for v in a.part.split("/"))
            if not 1 <= k <= n:
                raise ValueError(f"--part {a.part!r}: expected k/n with 1 <= k <= n")
            damage = a.cmd == "damage-dataset"
            seeds = (DAMAGE_SEED_BASE, DAMAGE_VAL_SEED_BASE) if damage else (TRAIN_SEED_BASE, VAL_SEED_BASE)
            shard = 20 if damage else 50  # a Damage scene holds 40 crops, a Workbench 15-30
            first = seeds[0] if a.first_seed is None else a.first_seed
            if not seeds[0] <= first <= seeds[1] - a.train:  # before anything is rendered
                raise ValueError(
                    f"--first-seed {first}: {a.train} training scenes must start from {seeds[0]} to "
                    f"{seeds[1] - a.train}, clear of the validation seeds ({seeds[1]} up)"
                )
            build_dataset(a.out / "val", a.val, seeds[1], shard, part=(k - 1, n), damage=damage)
            build_dataset(a.out / "train", a.train, first, shard, part=(k - 1, n), damage=damage)
        elif a.cmd == "own-faces":
            print(own_faces(a.out))
        elif a.cmd == "enrol-check":
            print(load_tiles(a.folder).summary())
        elif a.cmd == "enrol":
            print(enrol(a.folder, a.out, a.scenes, a.val, a.epochs, a.lr, a.threads, a.init, a.model_out))
        elif a.cmd in ("train", "damage-train"):
            best = train(
                a.data / "train",
                a.data / "val",
                a.run,
                a.epochs,
                a.batch,
                a.lr,
                a.resume,
                a.threads,
                init=a.init,
                task=DAMAGE if a.cmd == "damage-train" else SQUARES,
            )
            print("best " + " ".join(f"{k} {v:.4f}" for k, v in best.items()))
        else:
            task = DAMAGE if a.damage else SQUARES
            weights = (
                a.weights or LOCATIONS.runs / ("workbench-damage" if a.damage else "workbench") / "best.pt"
            )
            if not weights.is_file():
                raise FileNotFoundError(f"weights {weights} not found")
            print(export(weights, a.out or (LOCATIONS.damage if a.damage else LOCATIONS.workbench), task))
    except (FileNotFoundError, ValueError, EnrolmentError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
