"""Reference faces of a table's Component tiles, matched against a square's crop (issue 19).

The square network (:mod:`vision.workbench`) was trained to read any tile drawing (colours
swapped, marks redrawn), so it reads a Builder from the shape of its mark alone, and on a far
or soft camera that mark is a few pixels. But a table's own tiles are known: the project's own
tiles are its drawing, and a table with other tiles has enrolled photos of them
(:mod:`vision.tile_enrol`). Compared with those faces, colour, layout and mark together tell
the Builder where the network hesitates, as Gizmos cards are identified against their enrolled
faces (:mod:`vision.identify`).

A face is upright (first Rivet north) and cropped to the tile's edges. It is resized to the
tile's size in a square's crop, softened as a crop is, and its middle (:data:`INNER_PX`) is
compared with the upright crop by normalised cross-correlation over every shift within the
crop (a tile lies a few millimetres off its square's centre).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from referee.contrivance.data import BUILDERS, MAX_VALUE
from vision.errors import ModelFileError
from vision.tile_enrol import TileKey, load_tiles

#: A square's crop side (px; the Workbench reader's crops, :mod:`vision.workbench`, which takes
#: it from here) and the tile's side in it: 60 mm of the square's 66 mm.
CROP_PX = 64
TILE_IN_CROP_PX = round(CROP_PX * 60 / 66)
#: The middle of the face compared (px of the crop): 48 of the tile's 58 px leaves 8 px of
#: shift each way within the crop and keeps a face's own border and cut out.
INNER_PX = 48
#: How far a face is trusted: a Builder's weight against the network is
#: exp((its face's match - the best face's match) / temperature). The project's drawing is the
#: tile exactly (a 0.03 better match outweighs a 20-fold lead of the network); a table's phone
#: photo shows it under another light and camera, and its matches are closer together (chosen
#: on development seeds: docs/contrivance_vision.md, "Tiles compared with their faces").
DRAWING_TEMPERATURE = 0.01
PHOTO_TEMPERATURE = 0.05
#: The same for an unsure dial weighed by the faces of the Builder read at each value: the dial
#: is a small part of the face, so its matches lie closer together.
DRAWING_DIAL_TEMPERATURE = 0.005
PHOTO_DIAL_TEMPERATURE = 0.01
#: How much a face is softened (Gaussian sigma, crop px) before it is compared: a crop is the
#: frame's few pixels per millimetre enlarged, never sharp.
SOFTEN_PX = 1.0


@dataclass(frozen=True, slots=True)
class TileFaces:
    """One set of faces of a table's tiles (the project's drawing, or one table's photos), by
    what each shows."""

    keys: tuple[TileKey, ...]
    #: (n, INNER_PX, INNER_PX, 3) float32: each face's middle, at the crop's scale, softened.
    templates: np.ndarray
    #: How far the set is trusted (DRAWING_TEMPERATURE, PHOTO_TEMPERATURE) on the Builder,
    #: and on the dial (DRAWING_DIAL_TEMPERATURE, PHOTO_DIAL_TEMPERATURE).
    temperature: float
    dial_temperature: float
    #: A table's enrolled photos (the tiles on this table look like them), not the project's
    #: drawing (which any table may or may not use).
    enrolled: bool = False

    @classmethod
    def of(
        cls,
        faces: Mapping[TileKey, np.ndarray] | Iterable[tuple[TileKey, np.ndarray]],
        temperature: float,
        dial_temperature: float,
        enrolled: bool = False,
    ) -> TileFaces:
        """Faces (BGR, upright, cropped to the tile's edges, any size) by what they show,
        trusted as the temperatures say."""
        items = list(faces.items()) if isinstance(faces, Mapping) else list(faces)
        o = (TILE_IN_CROP_PX - INNER_PX) // 2
        templates = np.empty((len(items), INNER_PX, INNER_PX, 3), np.float32)
        for i, (_, face) in enumerate(items):
            small = cv2.resize(
                face[..., :3], (TILE_IN_CROP_PX, TILE_IN_CROP_PX), interpolation=cv2.INTER_AREA
            )
            soft = cv2.GaussianBlur(small.astype(np.float32), (0, 0), SOFTEN_PX)
            templates[i] = soft[o : o + INNER_PX, o : o + INNER_PX]
        return cls(tuple(k for k, _ in items), templates, temperature, dial_temperature, enrolled)

    def __len__(self) -> int:
        return len(self.keys)

    def builder_scores(self, upright: np.ndarray, double: bool, value: int) -> tuple[np.ndarray, np.ndarray]:
        """Per Builder (in BUILDERS' order), how well its best face matches the upright crop
        (``CROP_PX`` square, BGR), the normalised cross-correlation at the best shift (-1 to 1),
        and its weight's logit, (its match - the best Builder's) / the set's temperature. A
        Builder's faces showing the tile read (``double``, ``value``) are compared, else all of
        its faces of that Double-or-not, else all of its faces; NaN where it has none. The
        Double's second Rivet and the dial then differ between the faces compared only where
        the reading did."""
        crop = upright.astype(np.float32)
        match = np.full(len(BUILDERS), np.nan)
        for i, b in enumerate(BUILDERS):
            mine = [j for j, k in enumerate(self.keys) if k[0] == b]
            for want in ((b, double, value), (b, double)):
                chosen = [j for j in mine if self.keys[j][: len(want)] == want]
                if chosen:
                    mine = chosen
                    break
            if mine:
                match[i] = max(self._match(crop, j) for j in mine)
        return match, (match - np.nanmax(match)) / self.temperature if len(self) else match

    def value_logits(self, upright: np.ndarray, builder: str, double: bool) -> np.ndarray:
        """Per dial value 0-6, how well the face of ``builder`` (``double`` or not) showing it
        matches the upright crop, as logits: (its match - the best) / the set's dial
        temperature; NaN for a value no face shows."""
        crop = upright.astype(np.float32)
        match = np.full(MAX_VALUE + 1, np.nan)
        for j, (b, d, v) in enumerate(self.keys):
            if (b, d) == (builder, double):
                m = self._match(crop, j)
                match[v] = m if np.isnan(match[v]) else max(float(match[v]), m)
        if np.isnan(match).all():
            return match
        return (match - np.nanmax(match)) / self.dial_temperature

    def _match(self, crop: np.ndarray, j: int) -> float:
        return float(cv2.matchTemplate(crop, self.templates[j], cv2.TM_CCOEFF_NORMED).max())


def save_faces(path: Path, faces: Mapping[TileKey, np.ndarray]) -> Path:
    """Faces as one ``.npz`` (Builder, Double, value and the BGR face of each, all one size)."""
    keys = list(faces)
    np.savez_compressed(
        path,
        builder=np.array([k[0] for k in keys]),
        double=np.array([k[1] for k in keys], bool),
        value=np.array([k[2] for k in keys], np.int8),
        face=np.stack([faces[k][..., :3] for k in keys]).astype(np.uint8),
    )
    return path


def load_faces(path: Path) -> TileFaces:
    """Faces written by :func:`save_faces` (the project's drawing: DRAWING_TEMPERATURE); a
    missing or unreadable file is one clear error."""
    if not path.is_file():
        raise ModelFileError(f"tile faces file {path} not found")
    try:
        with np.load(path) as z:
            keys = [
                (str(b), bool(d), int(v))
                for b, d, v in zip(z["builder"], z["double"], z["value"], strict=True)
            ]
            return TileFaces.of(
                list(zip(keys, z["face"], strict=True)), DRAWING_TEMPERATURE, DRAWING_DIAL_TEMPERATURE
            )
    except (OSError, ValueError, KeyError) as exc:
        raise ModelFileError(f"tile faces file {path} cannot be read: {exc}") from exc


def enrolled_faces(folder: str | Path) -> TileFaces:
    """A table's enrolled tile photos (and the tiles composed from them: :mod:`vision.tile_enrol`)
    as faces; a bad folder is the enrolment's one clear error."""
    return TileFaces.of(load_tiles(folder).shown(), PHOTO_TEMPERATURE, PHOTO_DIAL_TEMPERATURE, enrolled=True)
