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

from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class EnrolledTiles:
    """A table's enrolled tile photos (by what they show) and its mat photo, if any."""

    folder: Path
    tiles: dict[TileKey, np.ndarray]
    mat: np.ndarray | None

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
            f"mat photo: {'yes' if self.mat is not None else 'no'}"
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
    return EnrolledTiles(root, tiles, mat)
