"""Enrolment of a table's own Contrivance tiles: a folder of photos named by what they show.

The Workbench reader (:mod:`vision.workbench`) learned the project's drawn tiles under a wide
domain randomisation; a table whose tiles look unlike anything it generalises to is adapted by
enrolling photos of them (as :mod:`vision.enrol` does for Gizmos card faces) and fine-tuning the
square network on scenes rendered with them (``python -m vision.training.workbench enrol``).

A tile photo is the tile cropped to its edges, its first Rivet (the one with the dot) at the
top, named ``<Builder>-<value>.<ext>`` or ``<Builder>-double-<value>.<ext>`` (``Engineer-3.jpg``,
``Mechanic-double-6.png``): the Builder, whether it is the Double tile and the value its dial
shows in the photo. A photo of one empty mat cropped to its edges may be added as
``mat.<ext>`` (its three rows of five squares). Anything else is an error naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from referee.contrivance.data import BUILDERS, COLUMNS, MAX_VALUE, ROWS_PER_MAT
from vision.errors import EnrolmentError
from vision.frames import IMAGE_SUFFIXES

#: What an enrolled tile shows: Builder, Double or not, dial value.
TileKey = tuple[str, bool, int]
TILE_PX = 240  #: an enrolled tile photo's side once loaded (4 px/mm over 60 mm)
MIN_TILE_PX = 120  #: 2 px/mm: below that the dial's numerals are gone
SQUARENESS = 0.12  #: a loose crop is fine; a whole photo is not
#: An empty mat cropped to its edges: 5 squares of 66 mm and a 10 mm border across, 3 down.
MAT_ASPECT = (COLUMNS * 66 + 20) / (ROWS_PER_MAT * 66 + 20)
MAT_NAME = "mat"


def tile_key(path: Path) -> TileKey:
    """What a file name says the photo shows, or an error naming the file."""
    parts = path.stem.split("-")
    builder = parts[0].capitalize()
    double = len(parts) == 3 and parts[1].lower() == "double"
    if (
        builder not in BUILDERS
        or len(parts) not in (2, 3)
        or (len(parts) == 3 and not double)
        or not parts[-1].isdigit()
        or not 0 <= int(parts[-1]) <= MAX_VALUE
    ):
        raise EnrolmentError(
            f"tile enrolment: cannot read file name {path.name}: expected <Builder>-<value> or "
            f"<Builder>-double-<value>, Builder one of {', '.join(BUILDERS)}, value 0..{MAX_VALUE}"
        )
    return (builder, double, int(parts[-1]))


def _read(path: Path) -> np.ndarray:
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None or img.size == 0:
        raise EnrolmentError(f"tile enrolment: cannot read image {path}")
    return img


def load_tile(path: Path) -> np.ndarray:
    """One tile photo, resized to TILE_PX square; a bad image is an error naming it."""
    img = _read(path)
    h, w = img.shape[:2]
    if abs(w / h - 1) > SQUARENESS:
        raise EnrolmentError(
            f"tile enrolment: {path.name} is {w}x{h} (proportions {w / h:.2f}); a tile cropped to its "
            "edges is square: crop the photo to the tile"
        )
    if min(w, h) < MIN_TILE_PX:
        raise EnrolmentError(
            f"tile enrolment: {path.name} is only {w}x{h} px; "
            f"at least {MIN_TILE_PX} px across the tile is needed"
        )
    return cv2.resize(img, (TILE_PX, TILE_PX), interpolation=cv2.INTER_AREA)


def load_mat(path: Path) -> np.ndarray:
    """The photo of an empty mat cropped to its edges."""
    img = _read(path)
    h, w = img.shape[:2]
    if abs(w / h - MAT_ASPECT) > SQUARENESS * MAT_ASPECT:
        raise EnrolmentError(
            f"tile enrolment: {path.name} is {w}x{h} (proportions {w / h:.2f}); an empty mat cropped "
            f"to its edges (5 x 3 squares) is {MAT_ASPECT:.2f}: crop the photo to the mat"
        )
    return img


#: Composing dials (:func:`compose_dials`): a tile photographed at this many values shows where
#: the dial is; the region is grown by GROW_MM and blended over FEATHER_MM.
DIAL_GROUP = 3
#: A pixel is part of the dial where it changes at least this share of where it changes most
#: (a faint needle's tick beside a printed value: 0.3 missed the project's own needle).
HOT = 0.15
GROW_MM, FEATHER_MM = 2.0, 1.0
_PX_PER_MM = TILE_PX / 60


def _detail(img: np.ndarray) -> np.ndarray:
    """A photo's detail: grey, smoothed a little, less its broad light (ramps, glare), in units
    of its own contrast, so that photos under other light compare."""
    g = cv2.GaussianBlur(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32), (0, 0), 1.2)
    d = g - cv2.GaussianBlur(g, (0, 0), 6 * _PX_PER_MM)
    return d / (float(d.std()) + 1e-3)


def align(moving: np.ndarray, fixed: np.ndarray) -> np.ndarray | None:
    """``moving`` warped onto ``fixed`` (two photos of tiles of one layout, each cropped to its
    edges) by the homography that best correlates their detail (OpenCV's ECC at half size), or
    None when it does not converge."""
    half = TILE_PX // 2

    def small(img: np.ndarray) -> np.ndarray:
        return cv2.resize(_detail(img), (half, half), interpolation=cv2.INTER_AREA)

    try:
        _, found = cv2.findTransformECC(
            small(fixed),
            small(moving),
            np.eye(3, dtype=np.float32),
            cv2.MOTION_HOMOGRAPHY,
            (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 100, 1e-5),
            np.full((half, half), 255, np.uint8),
            3,
        )
    except cv2.error:
        return None
    scale = np.diag([TILE_PX / half, TILE_PX / half, 1.0])
    full = scale @ np.asarray(found, np.float64) @ np.linalg.inv(scale)
    return cv2.warpPerspective(
        moving,
        full,
        (TILE_PX, TILE_PX),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_REPLICATE,
    )


def dial_region(tiles: dict[TileKey, np.ndarray]) -> np.ndarray | None:
    """Where the tiles' dial is (a float mask, 1 inside, feathered), found as what changes between
    photos of one tile at DIAL_GROUP or more values (aligned on the lowest); None when no tile
    was photographed at that many values, or nothing changes."""
    typical = np.zeros((TILE_PX, TILE_PX), np.float32)  # changes in most photos (the value printed)
    most = np.zeros((TILE_PX, TILE_PX), np.float32)  # changes in any (the mark of one value)
    for b, d in sorted({(b, d) for b, d, _ in tiles}):
        values = sorted(v for bb, dd, v in tiles if (bb, dd) == (b, d))
        if len(values) < DIAL_GROUP:
            continue
        ref = tiles[(b, d, values[0])]
        seen = [ref] + [a for v in values[1:] if (a := align(tiles[(b, d, v)], ref)) is not None]
        if len(seen) < DIAL_GROUP:
            continue
        stack = np.stack([_detail(img) for img in seen])
        dev = np.abs(stack - np.median(stack, axis=0))
        typical += dev.mean(axis=0)
        most += dev.max(axis=0)
    edge = round(3 * _PX_PER_MM)  # the tile's edge: where a crop's slack changes things too
    for m in (typical, most):
        m[:edge], m[-edge:], m[:, :edge], m[:, -edge:] = 0, 0, 0, 0
    if most.max() <= 0:
        return None
    change = cv2.GaussianBlur(typical / typical.max() + most / most.max(), (0, 0), 1.5 * _PX_PER_MM)
    hot = (change > HOT * change.max()).astype(np.uint8)
    n = 2 * round(4 * _PX_PER_MM) + 1  # the dial's marks and its printed value as one blob
    hot = cv2.morphologyEx(hot, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (n, n)))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(hot)
    if count < 2:
        return None
    keep = 1 + np.flatnonzero(stats[1:, cv2.CC_STAT_AREA] >= 2 * _PX_PER_MM**2)  # not specks of noise
    hull = cv2.convexHull(cv2.findNonZero(np.isin(labels, keep).astype(np.uint8)))
    inside = np.zeros((TILE_PX, TILE_PX), np.uint8)
    cv2.fillConvexPoly(inside, hull, 1)
    n = 2 * round(GROW_MM * _PX_PER_MM) + 1
    grown = cv2.dilate(inside, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (n, n)))
    return cv2.GaussianBlur(grown.astype(np.float32), (0, 0), FEATHER_MM * _PX_PER_MM)


def compose_dials(tiles: dict[TileKey, np.ndarray]) -> dict[TileKey, np.ndarray]:
    """The dial values not photographed, composed: for each Builder and Double or not that was
    photographed, every other value 0-6 is its photo (the nearest value) with the dial region
    (:func:`dial_region`) of a photo showing that value laid over it, aligned, its light matched
    to the photo's round the region; preferably the same Builder's other tile. Nothing when
    the dial region cannot be found."""
    region = dial_region(tiles)
    if region is None:
        return {}
    ring = (cv2.dilate((region > 0.02).astype(np.uint8), np.ones((9, 9), np.uint8)) > 0) & (region <= 0.02)
    out: dict[TileKey, np.ndarray] = {}
    for b, d in sorted({(b, d) for b, d, _ in tiles}):
        shown = [v for bb, dd, v in tiles if (bb, dd) == (b, d)]
        for v in range(MAX_VALUE + 1):
            if v in shown:
                continue
            donors = [(b, not d, v)] + [k for k in sorted(tiles) if k[2] == v and k[0] != b]
            donor = next((tiles[k] for k in donors if k in tiles), None)
            if donor is None:
                continue
            base = tiles[(b, d, min(shown, key=lambda u: abs(u - v)))]
            moved = align(donor, base)
            if moved is None:
                continue
            f, m = base.astype(np.float32), moved.astype(np.float32)
            gain = f[ring].mean(axis=0) / np.maximum(m[ring].mean(axis=0), 1.0)
            a = region[..., None]
            out[(b, d, v)] = np.clip(f * (1 - a) + m * gain * a, 0, 255).astype(np.uint8)
    return out


@dataclass(frozen=True, slots=True)
class EnrolledTiles:
    """A table's enrolled tile photos (by what they show), its mat photo, if any, and the tiles
    composed from the photos at the dial values not photographed (:func:`compose_dials`)."""

    folder: Path
    tiles: dict[TileKey, np.ndarray]
    mat: np.ndarray | None
    composed: dict[TileKey, np.ndarray] = field(default_factory=dict)

    def shown(self) -> dict[TileKey, np.ndarray]:
        """Every tile the scenes may show: the photos and the composed ones."""
        return {**self.composed, **self.tiles}

    def summary(self) -> str:
        """One line for the terminal: what is enrolled and what is not."""
        builders = sorted({b for b, _, _ in self.tiles}, key=BUILDERS.index)
        values = sorted({v for _, _, v in self.tiles})
        missing_b = [b for b in BUILDERS if b not in builders]
        missing_v = [v for v in range(MAX_VALUE + 1) if v not in values]
        return (
            f"tile enrolment: {self.folder}: {len(self.tiles)} tile photos "
            f"({sum(d for _, d, _ in self.tiles)} Double), Builders {', '.join(builders) or 'none'}, "
            f"dial values {', '.join(map(str, values)) or 'none'}; "
            f"mat photo: {'yes' if self.mat is not None else 'no'}; "
            f"{len(self.composed)} more composed with dial values not photographed"
            + (f"; no photo of {', '.join(missing_b)}" if missing_b else "")
            + (f"; no dial showing {', '.join(map(str, missing_v))}" if missing_v else "")
        )


def load_tiles(folder: str | Path) -> EnrolledTiles:
    """Every photo of an enrolment folder; any bad file is an error (never silently skipped),
    and so is a folder without a single tile photo."""
    root = Path(folder)
    if not root.is_dir():
        raise EnrolmentError(f"tile enrolment: folder {root} does not exist")
    tiles: dict[TileKey, np.ndarray] = {}
    mat = None
    for p in sorted(p for p in root.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES):
        if p.stem.lower() == MAT_NAME:
            mat = load_mat(p)
            continue
        key = tile_key(p)
        if key in tiles:
            raise EnrolmentError(
                f"tile enrolment: {key[0]} {'Double ' if key[1] else ''}{key[2]} "
                f"enrolled twice (file {p.name})"
            )
        tiles[key] = load_tile(p)
    if not tiles:
        raise EnrolmentError(f"tile enrolment: no tile photos in {root} (name them like Engineer-3.jpg)")
    return EnrolledTiles(root, tiles, mat, compose_dials(tiles))
