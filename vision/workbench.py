"""The Contrivance Workbench read from a camera frame (issue 19): frame + calibration ->
:class:`~referee.observation.WorkbenchObservation`.

The table uses the Gizmos play area and its four calibration markers (the same printed sheet,
the same :class:`~vision.calibrate.Calibrator`); the Workbench's two mats lie in its middle
(:data:`WORKBENCH`). Each square is rectified from the full-resolution frame through the
calibration into a ``CROP_PX`` crop (0.97 px/mm, whatever the camera's height or tilt) and one
small network reads all of it at once (``models/workbench.onnx``, OpenCV's DNN module): what
lies there (empty, or a tile of one of the six Builders), whether the tile is the Double,
which way its first Rivet faces and the value its Point Marker dial shows. Each tile is then
compared with the faces of the table's tiles (:mod:`vision.tile_faces`: the project's own
drawing, a table's enrolled photos): the network, trained to read any drawing, reads a Builder
from its mark alone, which on a far camera is a few soft pixels, while the faces also know its
colours and layout. The Gizmos hand
network (:mod:`vision.hands`) marks where a hand lies on the rectified table: a square under a
hand is *not seen* (left out of the observation), never "empty". The Damage token on the
face-down Contrivance tile right of mat 1 (``WorkbenchGeometry.contrivance``) is read by a
second small network (``models/damage.onnx``): its value 0-10 with a confidence, or not seen.

Why a classifier per calibrated square rather than a detector: the squares are fixed places on
the calibrated table, so finding tiles is free, and a 64 px crop per square costs a fraction of
a detector pass (docs/contrivance_vision.md has the measurement). Training is in
:mod:`vision.training.workbench`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from referee.contrivance.data import BUILDERS, COLUMNS, MAX_VALUE, ROWS_PER_MAT
from referee.observation import MAX_DAMAGE, SquareSighting, TileSighting, WorkbenchObservation
from vision.calibrate import MAX_REPROJ_PX, Calibration, Calibrator, detect_markers
from vision.errors import CalibrationError, FrameError
from vision.frames import SUPPORTED_SIZES, check_frame
from vision.geometry import rectify
from vision.hands import MASK_PX_PER_MM, HandSegmenter
from vision.networks import load_onnx
from vision.paths import LOCATIONS
from vision.tile_faces import CROP_PX, TileFaces, enrolled_faces, load_faces
from vision.zones import Rect

#: What the network says lies on a square; index order of its first head.
CONTENTS: tuple[str, ...] = ("hand", "empty", *BUILDERS)
#: A square is not seen when the hand network marks more than this share of it: a square a
#: hand touches is reported unknown rather than guessed. Chosen on development seeds
#: 8,800,000-8,800,059 against the truth's rule that a square a hand covers more than 2 % of
#: must be unseen and one it touches may be (docs/contrivance_vision.md, "Hands").
HAND_SHARE = 0.005
#: The Contrivance tile's place is not seen when the hand network marks more than this share
#: of it (the 36 mm token lies inside a 70 mm place: a hand at the place's edge leaves it seen).
DAMAGE_HAND_SHARE = 0.03
FACINGS = 4
#: A square the network's first pass finds empty with at least this probability is not read a
#: second time (the second pass, on the crop turned upright, only matters for tiles).
SURELY_EMPTY = 0.9
VALUES = MAX_VALUE + 1
#: A tile whose dial the network reads less sure than this is read again from crops of its
#: square zoomed (0.96, 1.04) and shifted (0.8 mm each way) and the dial's probabilities
#: averaged: on development seeds 8,820,000-8,820,059 (own art, 1,170 tiles) every wrong
#: dial was on a square seen coarser than 0.8 px/mm, 10 of the 11 under 0.66 sure; averaging
#: those (3 % of the tiles) left 7 wrong (docs/contrivance_vision.md, "Dials").
DIAL_UNSURE = 0.7
#: A tile whose Builder the network reads less sure than this is read again from the same
#: looks and its content's probabilities averaged with both passes' (weighted as two looks):
#: on development seeds 8,880,000 / 8,890,000 / 8,900,000 up, 40 each (own, art, style:
#: 1,590 tiles no hand touches)
#: the enrolled model's Builders wrong fell from 4 / 15 / 4 to 2 / 7 / 2, the committed
#: model's on the held-out art from 186 / 234 to 146 / 205, on its own art from 0 to 1
#: (docs/contrivance_vision.md, "Enrolling a table's own tiles").
BUILDER_UNSURE = 0.7
#: The second looks at an unsure dial or Builder: (zoom, x shift mm, y shift mm) of its
#: square's crop.
DIAL_LOOKS: tuple[tuple[float, float, float], ...] = (
    (0.96, 0.0, 0.0),
    (1.04, 0.0, 0.0),
    (1.0, 0.8, 0.0),
    (1.0, -0.8, 0.0),
    (1.0, 0.0, 0.8),
    (1.0, 0.0, -0.8),
)
#: A tile whose best reference face (the project's own tiles, a table's enrolled photos:
#: :mod:`vision.tile_faces`) matches its crop at least this well (normalised cross-correlation)
#: is weighed against the faces: on development seeds 8,950,000 up the own tiles' best face
#: matched at 0.90 or more, the held-out drawing's best own face at 0.39 or less
#: (docs/contrivance_vision.md, "Tiles compared with their faces").
FACE_MATCH = 0.7
#: On a table whose photos are enrolled, a square read as a tile that no face matches even this
#: well is read empty: on development seeds 8,960,000 / 8,970,000 up (the held-out art enrolled,
#: its model) the empty squares of the held-out mat read as tiles matched 0.17-0.29, every tile
#: read with its right facing at least 0.5 (the two under, 0.28 and 0.32, were turned wrong).
FACE_NONE = 0.4
#: A tile so matched whose dial is read less sure than this has its dial weighed too, by the
#: faces of the Builder read at each value: on development seeds 8,950,000-8,950,499 (own art,
#: 6,343 tiles no hand touches) 5 dials wrong before, 1 after, where 0.7 left 3.
FACE_DIAL_UNSURE = 0.9
#: The Damage network's classes: the token's value 0-MAX_DAMAGE, then NO_TOKEN (the
#: Contrivance tile's place seen, no token on it: the Damage is not seen, never 0).
DAMAGE_CLASSES = MAX_DAMAGE + 2
NO_TOKEN = MAX_DAMAGE + 1


@dataclass(frozen=True, slots=True)
class WorkbenchGeometry:
    """Where the Workbench's squares lie on the table (mm, the calibrated table frame).

    Two mats of 3 rows x 5 columns, mat 2 below mat 1 with a gap; rows 1-6 from the top of mat 1,
    columns 1-5 from the left (CONTRIVANCE_RULINGS.md ruling 1). A square is ``pitch`` mm a side
    and holds a ``tile`` mm Component tile.
    """

    origin: tuple[float, float] = (425.0, 175.0)  # top-left corner of row 1, column 1
    pitch: float = 66.0
    tile: float = 60.0
    mat_gap: float = 14.0
    mat_border: float = 10.0
    #: The face-down Contrivance tile to the right of mat 1, where the Damage token lies (seed
    #: 004, setup step 2): x, y, w, h in mm, clear of the mats and the calibration markers.
    contrivance: Rect = (790.0, 175.0, 70.0, 70.0)

    def square(self, row: int, column: int) -> Rect:
        """The square's rectangle (x, y, w, h in mm)."""
        if not (1 <= row <= 2 * ROWS_PER_MAT and 1 <= column <= COLUMNS):
            raise ValueError(f"workbench: no square row {row} column {column}")
        x = self.origin[0] + (column - 1) * self.pitch
        y = self.origin[1] + (row - 1) * self.pitch + (self.mat_gap if row > ROWS_PER_MAT else 0.0)
        return (x, y, self.pitch, self.pitch)

    def mat(self, mat: int) -> Rect:
        """Mat 1 or 2 with its border (mm)."""
        x, y, _, _ = self.square(1 + ROWS_PER_MAT * (mat - 1), 1)
        b = self.mat_border
        return (x - b, y - b, COLUMNS * self.pitch + 2 * b, ROWS_PER_MAT * self.pitch + 2 * b)

    def squares(self, rows: int) -> list[tuple[int, int]]:
        """(row, column) of every square of the first ``rows`` rows, row by row."""
        return [(r, c) for r in range(1, rows + 1) for c in range(1, COLUMNS + 1)]


WORKBENCH = WorkbenchGeometry()


def crop_homography(h_table_to_image: np.ndarray, rect: Rect, px: int = CROP_PX) -> np.ndarray:
    """The homography crop pixels -> image pixels for a square (pixel u centred on u)."""
    x, y, w, h = rect
    sx, sy = w / px, h / px
    m = np.array([[sx, 0, x + 0.5 * sx], [0, sy, y + 0.5 * sy], [0, 0, 1]], np.float64)
    return h_table_to_image @ m


def square_crops(
    frame: np.ndarray,
    h_table_to_image: np.ndarray,
    squares: list[tuple[int, int]],
    geometry: WorkbenchGeometry,
) -> np.ndarray:
    """The squares rectified from the full-resolution frame: (n, CROP_PX, CROP_PX, 3) BGR uint8."""
    return rect_crops(frame, h_table_to_image, [geometry.square(r, c) for r, c in squares])


def rect_crops(frame: np.ndarray, h_table_to_image: np.ndarray, rects: list[Rect]) -> np.ndarray:
    """Table rectangles (mm) rectified from the full-resolution frame into CROP_PX crops
    (n, CROP_PX, CROP_PX, 3) BGR uint8.

    Where the camera sees the table finer than the crop, the frame is softened first in
    proportion, so that a far and a near camera give the same crop (no aliasing)."""
    out = np.empty((len(rects), CROP_PX, CROP_PX, 3), np.uint8)
    for i, rect in enumerate(rects):
        m = crop_homography(h_table_to_image, rect)
        src_px = float(np.sqrt(abs(np.linalg.det(m[:2, :2] / m[2, 2]))))  # image px per crop px
        img = frame
        if src_px > 1.3:
            x0, y0, x1, y1 = _bounds(m, frame.shape)
            roi = cv2.GaussianBlur(frame[y0:y1, x0:x1], (0, 0), 0.45 * src_px)
            m = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64) @ m
            img = roi
        cv2.warpPerspective(
            img,
            m,
            (CROP_PX, CROP_PX),
            dst=out[i],
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
            borderMode=cv2.BORDER_REPLICATE,
        )
    return out


def _bounds(m: np.ndarray, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    corners = np.array(
        [[-1, -1], [CROP_PX + 1, -1], [CROP_PX + 1, CROP_PX + 1], [-1, CROP_PX + 1]], np.float32
    )
    p = cv2.perspectiveTransform(corners[None], m)[0]
    x0, y0 = np.floor(p.min(0)).astype(int) - 4
    x1, y1 = np.ceil(p.max(0)).astype(int) + 4
    return max(x0, 0), max(y0, 0), min(x1, shape[1]), min(y1, shape[0])


def to_input(crops: np.ndarray) -> np.ndarray:
    """The network's input for BGR crops: RGB, NCHW float in [0, 1]."""
    return np.ascontiguousarray(crops[..., ::-1].transpose(0, 3, 1, 2), dtype=np.float32) / 255.0


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@dataclass(frozen=True, slots=True)
class SquareReading:
    """The network's probabilities for one square (content over CONTENTS, double, facing, value)."""

    content: np.ndarray
    double: float
    facing: np.ndarray
    value: np.ndarray


class WorkbenchReader:
    """The exported square network on OpenCV's DNN module: frame + homography -> observation.

    ``rows``: the Workbench rows on the table (3 with mat 1 alone, 6 with both mats).
    """

    def __init__(
        self,
        model: str | Path | None = None,
        rows: int = 2 * ROWS_PER_MAT,
        geometry: WorkbenchGeometry = WORKBENCH,
        hand_model: str | Path | None = None,
        damage_model: str | Path | None = None,
        tiles: str | Path | None = None,
        own_faces: str | Path | None = None,
    ) -> None:
        if rows not in (ROWS_PER_MAT, 2 * ROWS_PER_MAT):
            raise ValueError(
                f"workbench: rows must be {ROWS_PER_MAT} (one mat) or {2 * ROWS_PER_MAT}, got {rows!r}"
            )
        path = Path(model) if model else LOCATIONS.workbench
        self.net = load_onnx(path, "workbench model")
        self.damage_path = Path(damage_model) if damage_model else LOCATIONS.damage
        self.damage_net = load_onnx(self.damage_path, "damage model")
        self.path, self.rows, self.geometry = path, rows, geometry
        self.hands = HandSegmenter(hand_model)
        #: The sets of faces tiles are compared with (:meth:`faced_readings`): the project's
        #: own tiles and, with ``tiles`` (an enrolment folder, :mod:`vision.tile_enrol`), the
        #: table's photos; empty: the network alone.
        self.faces: list[TileFaces] = [
            load_faces(Path(own_faces) if own_faces else LOCATIONS.workbench_tiles)
        ]
        if tiles is not None:
            self.faces.append(enrolled_faces(tiles))
        #: The hand mask of the last frame (hand network resolution).
        self.last_hand_mask: np.ndarray | None = None
        self.timings: dict[str, float] = {}

    def _forward(self, crops: np.ndarray) -> list[np.ndarray]:
        self.net.setInput(to_input(crops))
        names = self.net.getUnconnectedOutLayersNames()
        outs = dict(zip(names, self.net.forward(names), strict=True))
        return [softmax(outs[h]) for h in ("content", "double", "facing", "value")]

    def readings(self, crops: np.ndarray) -> list[SquareReading]:
        """The network's probabilities for a batch of square crops, in two passes: the facing
        from the crops as seen, then the Builder, the Double and the dial from the crops turned
        upright (first Rivet north), the way the network was trained to read them; the content
        is the mean of both passes. A crop the first pass finds empty with at least
        :data:`SURELY_EMPTY` skips the second (it is empty whatever the second says)."""
        if not len(crops):
            return []
        content, double, facing, value = self._forward(crops)
        turned = facing.argmax(axis=1)
        again = np.flatnonzero(content[:, CONTENTS.index("empty")] < SURELY_EMPTY)
        if len(again):
            upright = np.stack([np.rot90(crops[i], turned[i], axes=(0, 1)) for i in again])
            content2, double2, _, value2 = self._forward(upright)
            content, double, value = content.copy(), double.copy(), value.copy()
            content[again] = (content[again] + content2) / 2
            double[again], value[again] = double2, value2
        return [
            SquareReading(content[i], float(double[i, 1]), facing[i], value[i]) for i in range(len(crops))
        ]

    def steady_readings(
        self,
        frame: np.ndarray,
        homography: np.ndarray,
        squares: list[tuple[int, int]],
        readings: list[SquareReading],
    ) -> list[SquareReading]:
        """The readings with each unsure dial (a tile's value under DIAL_UNSURE) and each unsure
        Builder (under BUILDER_UNSURE) read again from the DIAL_LOOKS crops of its square,
        turned upright as its first look was: the dial's probabilities averaged over all looks,
        the content's over both passes (as two looks) and the others. A faint needle or a
        Builder's mark a few soft pixels wide (a far camera, blur, glare) lands on a slightly
        different pixel grid in each look."""
        dial, builder = [], []
        for rd in readings:
            p = rd.content[1:] / max(float(rd.content[1:].sum()), 1e-9)
            tile = int(p.argmax()) > 0  # read as a tile (as :func:`sighting` says)
            dial.append(tile and float(rd.value.max()) < DIAL_UNSURE)
            builder.append(tile and float(p.max()) < BUILDER_UNSURE)
        unsure = [i for i in range(len(readings)) if dial[i] or builder[i]]
        if not unsure:
            return readings
        rects = []
        for i in unsure:
            x, y, w, h = self.geometry.square(*squares[i])
            for zoom, dx, dy in DIAL_LOOKS:
                rects.append((x + w * (1 - zoom) / 2 + dx, y + h * (1 - zoom) / 2 + dy, w * zoom, h * zoom))
        crops = rect_crops(frame, homography, rects)
        n = len(DIAL_LOOKS)
        turns = [int(readings[i].facing.argmax()) for i in unsure for _ in range(n)]
        upright = np.stack([np.rot90(c, t, axes=(0, 1)) for c, t in zip(crops, turns, strict=True)])
        out = self._forward(upright)
        content = out[0].reshape(len(unsure), n, len(CONTENTS))
        value = out[3].reshape(len(unsure), n, VALUES)
        steady = list(readings)
        for j, i in enumerate(unsure):
            rd = readings[i]
            c = (2 * rd.content + content[j].sum(axis=0)) / (n + 2) if builder[i] else rd.content
            v = (rd.value + value[j].sum(axis=0)) / (n + 1) if dial[i] else rd.value
            steady[i] = SquareReading(c, rd.double, rd.facing, v)
        return steady

    def faced_readings(self, crops: np.ndarray, readings: list[SquareReading]) -> list[SquareReading]:
        """The readings with each tile's Builder weighed against the faces (:attr:`faces`):
        the crop, turned upright by its facing, is compared with every Builder's faces showing
        the Double and value read, in each set of faces that has all six Builders
        (:meth:`TileFaces.builder_scores`); where the set matching best matches at least
        FACE_MATCH (a tile of that table, not a drawing no set shows), each Builder's
        probability is multiplied by exp((its match - the best) / the set's temperature) (the
        project's drawing is trusted more than a table's photos: :mod:`vision.tile_faces`) and
        the Builders' share of the content is kept (a tile stays a tile). A dial so matched
        but read less sure than FACE_DIAL_UNSURE is weighed likewise by that set's faces of the
        Builder now read at each value (:meth:`TileFaces.value_logits`). On a table whose
        photos are enrolled, a "tile" no face matches even FACE_NONE is read empty (its mat's
        grain, not one of its tiles)."""
        if not self.faces:
            return readings
        out = list(readings)
        for i, rd in enumerate(readings):
            p = rd.content[1:] / max(float(rd.content[1:].sum()), 1e-9)
            if int(p.argmax()) == 0:  # read empty (:func:`sighting`)
                continue
            facing = rd.facing
            upright = np.rot90(crops[i], int(facing.argmax()), axes=(0, 1))
            read = (rd.double >= 0.5, int(rd.value.argmax()))
            best = self._best_faces(upright, read)
            if best is None:
                continue
            faces, match, logits, enrolled = best
            if float(match.max()) < FACE_NONE and enrolled:
                turned = self._turned(upright, read)
                if turned is None:  # like no face, whichever way it is turned: the mat's grain
                    content = rd.content.copy()
                    content[1], content[2:] = float(content[1:].sum()), 0.0
                    out[i] = SquareReading(content, rd.double, rd.facing, rd.value)
                    continue
                quarter, upright, (faces, match, logits, _) = turned
                facing = np.roll(rd.facing, quarter)
            if float(match.max()) < FACE_MATCH:
                if facing is not rd.facing:  # turned back, its Builder left to the network
                    out[i] = SquareReading(rd.content, rd.double, facing, rd.value)
                continue
            builders = rd.content[2:] * np.exp(logits)
            content = rd.content.copy()
            content[2:] = builders * float(rd.content[2:].sum()) / max(float(builders.sum()), 1e-12)
            value = rd.value
            if float(value.max()) < FACE_DIAL_UNSURE:
                dial = faces.value_logits(upright, BUILDERS[int(builders.argmax())], read[0])
                if not np.isnan(dial).any():
                    value = value * np.exp(dial)
                    value = value / value.sum()
            out[i] = SquareReading(content, rd.double, facing, value)
        return out

    def _best_faces(
        self, upright: np.ndarray, read: tuple[bool, int]
    ) -> tuple[TileFaces, np.ndarray, np.ndarray, bool] | None:
        """The set of faces matching the upright crop best, its matches and logits per Builder
        (:meth:`TileFaces.builder_scores`), and whether an enrolled set was compared; None when
        no set has all six Builders."""
        scored = [(f, *f.builder_scores(upright, *read)) for f in self.faces]
        scored = [(f, m, lg) for f, m, lg in scored if not np.isnan(m).any()]
        if not scored:
            return None
        faces, match, logits = max(scored, key=lambda s: float(s[1].max()))
        return faces, match, logits, any(f.enrolled for f, _, _ in scored)

    def _turned(
        self, upright: np.ndarray, read: tuple[bool, int]
    ) -> tuple[int, np.ndarray, tuple[TileFaces, np.ndarray, np.ndarray, bool]] | None:
        """The quarter turn of a crop no face matches as read after which one matches at least
        FACE_NONE best (a tile whose facing was misread is still a tile, never the mat's
        grain): the quarter, the crop so turned and its faces; None when no turn does."""
        found = None
        for quarter in (1, 2, 3):
            turned = np.rot90(upright, quarter, axes=(0, 1))
            best = self._best_faces(turned, read)
            if best is None or float(best[1].max()) < FACE_NONE:
                continue
            if found is None or float(best[1].max()) > float(found[2][1].max()):
                found = (quarter, turned, best)
        return found

    def read(
        self,
        frame: np.ndarray,
        homography: np.ndarray,
        t: float | None = None,
        frame_no: int | None = None,
        source: str = "camera",
    ) -> WorkbenchObservation:
        """Read every square of the Workbench in ``frame`` (``homography``: table mm -> image px)."""
        check_frame(frame)
        if (
            not isinstance(homography, np.ndarray)
            or homography.shape != (3, 3)
            or not np.isfinite(homography).all()
        ):
            raise FrameError("workbench: expected a finite 3x3 homography (table mm -> image pixels)")
        t0 = time.perf_counter()
        squares = self.geometry.squares(self.rows)
        *covered, damage_covered = self.covered(
            frame,
            homography,
            [self.geometry.square(r, c) for r, c in squares] + [self.geometry.contrivance],
            [HAND_SHARE] * len(squares) + [DAMAGE_HAND_SHARE],
        )
        seen = [sq for sq, hand in zip(squares, covered, strict=True) if not hand]
        t1 = time.perf_counter()
        crops = square_crops(frame, homography, seen, self.geometry)
        t2 = time.perf_counter()
        readings = self.faced_readings(
            crops, self.steady_readings(frame, homography, seen, self.readings(crops))
        )
        t3 = time.perf_counter()
        damage = None if damage_covered else self.damage(frame, homography)
        t4 = time.perf_counter()
        sightings = tuple(sighting(r, c, reading) for (r, c), reading in zip(seen, readings, strict=True))
        self.timings = {"hands": t1 - t0, "crops": t2 - t1, "network": t3 - t2, "damage": t4 - t3}
        return WorkbenchObservation(
            time=time.time() if t is None else t,
            squares=sightings,
            damage=damage,
            source=source,
            frame=frame_no,
        )

    def covered(
        self, frame: np.ndarray, homography: np.ndarray, rects: list[Rect], shares: list[float]
    ) -> list[bool]:
        """Per table rectangle (a square, the Contrivance tile's place), whether a hand lies
        over it: the hand network's mask on the rectified table covers more than its share
        (HAND_SHARE for a square, DAMAGE_HAND_SHARE for the Contrivance tile's place)."""
        mask, _ = self.hands.find(rectify(frame, homography))
        self.last_hand_mask = mask
        k = MASK_PX_PER_MM
        out = []
        for (x, y, w, h), share in zip(rects, shares, strict=True):
            cell = mask[int(y * k) : int(np.ceil((y + h) * k)), int(x * k) : int(np.ceil((x + w) * k))]
            out.append(bool(cell.size) and float(cell.mean()) > share)
        return out

    def damage_turns(self, frame: np.ndarray, homography: np.ndarray) -> np.ndarray:
        """The Damage network's probabilities over DAMAGE_CLASSES for the Contrivance tile's
        place, one row per quarter turn of its crop (a token lies at any angle, and the
        network was trained on crops turned at random)."""
        crop = rect_crops(frame, homography, [self.geometry.contrivance])[0]
        turns = np.stack([np.rot90(crop, k, axes=(0, 1)) for k in range(4)])
        self.damage_net.setInput(to_input(turns))
        return np.asarray(softmax(self.damage_net.forward()))

    def damage_probabilities(self, frame: np.ndarray, homography: np.ndarray) -> np.ndarray:
        """The mean of :meth:`damage_turns` (on the first model's validation crops 91.9 % right
        against 87.5 % for the crop as seen: models/DAMAGE_MODEL_CARD.md)."""
        return np.asarray(self.damage_turns(frame, homography).mean(axis=0))

    def damage(self, frame: np.ndarray, homography: np.ndarray) -> tuple[int, float] | None:
        """The Damage token's value with its confidence, or None when no token is seen there
        (unknown, never 0). The value is the mean's over the four quarter turns; its confidence
        the geometric mean of the value's probability in each turn, so that a reading the turns
        disagree on is less sure (on development seeds the readings at least 0.85 sure and
        wrong fell from 2 of 80 to 0 of 75: models/DAMAGE_MODEL_CARD.md)."""
        turns = self.damage_turns(frame, homography)
        k = int(turns.mean(axis=0).argmax())
        if k == NO_TOKEN:
            return None
        return k, round(float(np.exp(np.log(np.clip(turns[:, k], 1e-9, 1.0)).mean())), 4)


def sighting(row: int, column: int, reading: SquareReading) -> SquareSighting:
    """One square's sighting from its probabilities. Whether a hand covers it is the hand
    network's call (:meth:`WorkbenchReader.covered`), made first; the square network's own
    "hand" class is left out here (renormalised over empty and the six Builders)."""
    p = reading.content[1:] / max(float(reading.content[1:].sum()), 1e-9)
    k = int(p.argmax()) + 1
    conf = round(float(p[k - 1]), 4)
    if CONTENTS[k] == "empty":
        return SquareSighting(row, column, None, conf)
    f, v = int(reading.facing.argmax()), int(reading.value.argmax())
    tile = TileSighting(
        builder=CONTENTS[k],
        double=reading.double >= 0.5,
        facing=f,
        value=v,
        confidence=round(min(conf, max(reading.double, 1 - reading.double)), 4),
        facing_confidence=round(float(reading.facing[f]), 4),
        value_confidence=round(float(reading.value[v]), 4),
    )
    return SquareSighting(row, column, tile, conf)


#: Markers enough for a homography of a frame no calibration covers yet (:func:`calibrate`).
PARTIAL_MARKERS = 3


def calibrate(calibrator: Calibrator, frame: np.ndarray) -> Calibration:
    """The calibrator's calibration of ``frame``, or, when it has none to give (a marker covered
    or lost before any calibration was held), one fitted to the three markers it does see
    (state ``"partial"``, not kept: the calibrator still settles on frames with all four).

    Three markers are twelve corners spread over three corners of the play area; their
    homography puts the Workbench within about 2 px of the true one on the benchmark's frames
    whose fourth marker is covered or not found (docs/contrivance_vision.md), where refusing
    would leave the whole Workbench unseen. Raises :class:`CalibrationError` with fewer, or
    when the three disagree (mean reprojection error over MAX_REPROJ_PX)."""
    try:
        return calibrator.update(frame)
    except CalibrationError:
        found = {k: v for k, v in detect_markers(frame).items() if k in calibrator.known}
        if len(found) < PARTIAL_MARKERS:
            raise
        ids = sorted(found)
        src = np.concatenate([calibrator.known[k] for k in ids])
        dst = np.concatenate([found[k] for k in ids])
        h, _ = cv2.findHomography(src, dst, 0)
        if h is None:
            raise
        err = float(np.linalg.norm(cv2.perspectiveTransform(src[None], h)[0] - dst, axis=1).mean())
        if err > MAX_REPROJ_PX:
            raise
        return Calibration(h, tuple(ids), True, err, "partial")


class WorkbenchObserver:
    """Calibration (kept once settled, as for Gizmos; from three markers while nothing is
    held, :func:`calibrate`) and the reader: a frame -> an observation."""

    def __init__(
        self, model: str | Path | None = None, rows: int = 2 * ROWS_PER_MAT, tiles: str | Path | None = None
    ) -> None:
        self.calibrator = Calibrator()
        self.reader = WorkbenchReader(model, rows, tiles=tiles)

    def observe(
        self, frame: np.ndarray, t: float | None = None, frame_no: int | None = None
    ) -> WorkbenchObservation:
        """Calibrate (or keep the calibration) and read the Workbench of one frame."""
        check_frame(frame, SUPPORTED_SIZES)
        cal = calibrate(self.calibrator, frame)
        obs = self.reader.read(frame, cal.homography, t, frame_no)
        obs.extra.update({"calibration": cal.state, "markers": list(cal.markers_seen)})
        return obs
