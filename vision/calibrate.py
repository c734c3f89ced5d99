"""Play-area calibration from four ArUco markers: the homography table mm -> image pixels.

The printed sheet (``print-markers``) has one 4×4 marker per play-area corner. ``Calibrator``
finds them with OpenCV's ``cv2.aruco.ArucoDetector``; when all four are visible it fits a new
homography from their 16 corners, otherwise it keeps the last good one (a hand often covers a
marker) and says so.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from vision.errors import CalibrationError, FrameError
from vision.frames import check_frame, read_frame
from vision.geometry import zone_rects
from vision.zones import Zones, default_zones

ARUCO_DICT = cv2.aruco.DICT_4X4_50
MAX_REPROJ_MM = 4.0
#: Above this mean reprojection error the markers are not where the zones file puts them (the
#: printed marker sheet itself gives about 219 px; a table seen by a camera, under 2 px).
MAX_REPROJ_PX = 10.0


@dataclass(frozen=True, slots=True)
class Calibration:
    """A homography with how it was obtained."""

    homography: np.ndarray  # table mm -> image px
    markers_seen: tuple[int, ...]
    fresh: bool  # False when the homography comes from earlier frames (kept or reused)
    error_px: float  # mean reprojection error of the marker corners used
    #: "fresh" (this frame), "locked" (the kept calibration), "reused" (the last good one while
    #: a marker is covered, before one was kept) or "moved" (the camera moved; this frame's).
    state: str = "fresh"


def marker_corners_mm(zones: Zones) -> dict[int, np.ndarray]:
    """Each marker's four corners (TL, TR, BR, BL as ArUco reports them) in table mm."""
    out = {}
    for mid, (x, y) in zones.marker_tiles:
        s = zones.marker_mm
        out[mid] = np.array([[x, y], [x + s, y], [x + s, y + s], [x, y + s]], np.float32)
    return out


def _detector(small: bool = False) -> cv2.aruco.ArucoDetector:
    """ArUco with sub-pixel corners; ``small``: tuned for small, soft markers (a finer range of
    threshold windows, smaller and less sharply cornered squares accepted)."""
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    if small:
        params.adaptiveThreshWinSizeMin = 3
        params.adaptiveThreshWinSizeMax = 33
        params.adaptiveThreshWinSizeStep = 4
        params.minMarkerPerimeterRate = 0.015
        params.polygonalApproxAccuracyRate = 0.06
    return cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(ARUCO_DICT), params)


#: A marker searched near where it should be is enlarged to about this many pixels a side.
ROI_MARKER_PX = 96
#: The searches near a predicted marker, in turn until one finds it: (how far round its predicted
#: corners, in marker sides; the size it is enlarged to, px). ArUco's thresholds and corner fit
#: react to a resampled soft marker erratically: on held-out development frames a 50-57 px
#: marker missed at (0.8, 96) was found at another scale (docs/vision.md, "Twelfth round").
SEARCHES: tuple[tuple[float, int], ...] = (
    (0.8, ROI_MARKER_PX),
    (0.5, 128),
    (0.8, 160),
    (0.8, 64),
    (1.5, 128),
)
#: A marker found there counts only with its corners this close to the predicted ones, on average
#: (marker sides): another marker's id misread in a crop is not taken for it.
SEARCH_NEAR = 0.5


def _detect(gray: np.ndarray, small: bool = False) -> dict[int, np.ndarray]:
    corners, ids, _ = _detector(small).detectMarkers(gray)
    if ids is None:
        return {}
    return {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), corners, strict=True)}


def detect_markers(
    frame: np.ndarray, predicted: dict[int, np.ndarray] | None = None
) -> dict[int, np.ndarray]:
    """Marker id -> its four corners in image pixels.

    ``predicted``: where markers should be (id -> four image corners, e.g. from the last good
    calibration or from the other three markers). A predicted marker the whole-frame pass missed
    is searched again in its neighbourhood only, enlarged to about ROI_MARKER_PX a side with the
    small-marker settings: a far marker of 13-25 px, softened by the lens and noise, is found
    there when the whole frame's pass loses it.
    """
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    return search_near(gray, _detect(gray), predicted or {})


def search_near(
    gray: np.ndarray, found: dict[int, np.ndarray], predicted: dict[int, np.ndarray]
) -> dict[int, np.ndarray]:
    """``found`` plus every predicted marker it lacks that an enlarged search near its predicted
    corners finds (see :func:`detect_markers`)."""
    found = dict(found)
    for mid, quad in predicted.items():
        side = _side(quad)
        if mid in found or side is None:
            continue
        for pad, marker_px in SEARCHES:
            x0, y0 = np.floor(quad.min(0) - pad * side).astype(int)
            x1, y1 = np.ceil(quad.max(0) + pad * side).astype(int)
            x0, y0 = max(x0, 0), max(y0, 0)
            x1, y1 = min(x1, gray.shape[1]), min(y1, gray.shape[0])
            if x1 - x0 < 8 or y1 - y0 < 8:
                break
            k = float(np.clip(marker_px / side, 1.0, 6.0))
            roi = cv2.resize(gray[y0:y1, x0:x1], None, fx=k, fy=k, interpolation=cv2.INTER_CUBIC)
            hit = _detect(roi, small=True).get(mid)
            if hit is None:
                continue
            # ROI pixel u is centred on u: image x = x0 + (u + 0.5) / k - 0.5
            corners = (hit + 0.5) / k - 0.5 + np.array([x0, y0], np.float32)
            if _near(corners, quad, side):
                found[mid] = corners
                break
        else:
            aligned = align_marker(gray, mid, quad)  # the last resort: the known image, aligned
            if aligned is not None and _near(aligned, quad, side):
                found[mid] = aligned
    return found


#: How far round a held calibration's predicted marker :func:`find_at_predicted` looks (marker
#: sides): a camera nudged by up to half a side (:data:`SEARCH_NEAR`) still has its markers there.
PREDICTED_PAD = 1.0


def find_at_predicted(gray: np.ndarray, predicted: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """Each predicted marker that ArUco finds in a crop round its predicted corners, at the frame's
    own resolution with the whole-frame settings (its corners are the whole-frame pass's).

    A held calibration says where the markers are; the whole-frame pass, which thresholds every
    textured part of the table at every window size, took 10-60 ms of a 1280x720 or 1920x1080
    frame, the crops a few (docs/vision.md, "Twenty-third round"). A marker not found there (a
    hand over it, a moved camera) is left to the whole-frame pass and :func:`search_near`."""
    found = {}
    for mid, quad in predicted.items():
        side = _side(quad)
        if side is None:
            continue
        x0, y0 = np.floor(quad.min(0) - PREDICTED_PAD * side).astype(int)
        x1, y1 = np.ceil(quad.max(0) + PREDICTED_PAD * side).astype(int)
        x0, y0 = max(x0, 0), max(y0, 0)
        x1, y1 = min(x1, gray.shape[1]), min(y1, gray.shape[0])
        if x1 - x0 < 8 or y1 - y0 < 8:
            continue
        hit = _detect(gray[y0:y1, x0:x1]).get(mid)
        if hit is not None:
            corners = hit + np.array([x0, y0], np.float32)
            if _near(corners, quad, side):
                found[mid] = corners
    return found


def _offsets(found: dict[int, np.ndarray], predicted: dict[int, np.ndarray]) -> list[float]:
    """How far (px, the mean over its corners) each found marker lies from its predicted place."""
    return [float(np.linalg.norm(found[k] - predicted[k], axis=1).mean()) for k in found if k in predicted]


def _side(quad: np.ndarray) -> float | None:
    """A predicted marker's mean side (px), or None where it is too small or not finite to search."""
    side = float(np.linalg.norm(quad - np.roll(quad, 1, axis=0), axis=1).mean())
    return side if np.isfinite(side) and side >= 4 else None


def _near(corners: np.ndarray, quad: np.ndarray, side: float) -> bool:
    """Whether corners found lie close enough to the predicted ones (:data:`SEARCH_NEAR`) to be
    that marker, not another marker's id misread in a crop."""
    return float(np.linalg.norm(corners - quad, axis=1).mean()) <= SEARCH_NEAR * side


#: :func:`align_marker`'s template: pixels per marker cell, and the white quiet zone round the
#: black square (cells; the printed sheet has one).
ALIGN_CELL_PX = 8
#: How far beyond the template the rectified view reaches (cells): the prediction may be this far off.
ALIGN_REACH_CELLS = 3
#: An aligned marker counts only with this correlation (ECC, 0-1) between it and the template...
ALIGN_MIN_ECC = 0.8
#: ... and at most this many of its 36 cells (the black border's 20 and the 16 bits) read wrong:
#: DICT_4X4_50's markers differ from each other in at least 4 bits, in any of their turns.
ALIGN_MAX_WRONG_CELLS = 1


def _marker_image(mid: int, cells: int) -> np.ndarray:
    """Marker ``mid``'s black square at ``cells`` px a cell (uint8, 6 cells a side)."""
    d = cv2.aruco.getPredefinedDictionary(ARUCO_DICT)
    return cv2.aruco.generateImageMarker(d, mid, 6 * cells)


def align_marker(gray: np.ndarray, mid: int, quad: np.ndarray) -> np.ndarray | None:
    """Marker ``mid``'s four corners (image px), aligned to its known image from predicted corners
    ``quad``, or None where it is not there.

    ArUco must first find a marker's square by thresholding, which a far, soft marker of 20-30 px
    defeats now and then even enlarged (docs/vision.md, "Seventeenth round"). Here the marker's
    id and rough place are known: the frame round ``quad`` is rectified into the marker's own
    square, the marker image (with its quiet zone) is aligned to it by maximising their
    correlation (OpenCV's ECC: an affine fit on a blurred view, then a homography), and the
    result is read back cell by cell: it counts only when it correlates well
    (:data:`ALIGN_MIN_ECC`) and its cells are the marker's (:data:`ALIGN_MAX_WRONG_CELLS`).
    """
    cell = ALIGN_CELL_PX
    pad, reach = cell, ALIGN_REACH_CELLS * cell
    templ = cv2.copyMakeBorder(_marker_image(mid, cell), pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=255)
    templ_f = templ.astype(np.float32)
    s = 6 * cell
    square = np.array([[pad, pad], [pad + s, pad], [pad + s, pad + s], [pad, pad + s]], np.float32)
    side = _side(quad)
    if side is None:
        return None
    # the rectified view (template px, ``reach`` beyond the template each side) -> image
    to_image = cv2.getPerspectiveTransform(square + reach, quad.astype(np.float32))
    size = (templ.shape[1] + 2 * reach, templ.shape[0] + 2 * reach)
    view = cv2.warpPerspective(
        gray.astype(np.float32),
        to_image,
        size,
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_REPLICATE,
    )
    soft = max(0.5, 0.6 * cell / (side / 6))  # the template blurred to the frame's resolution
    crit = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 100, 1e-5)
    every = np.full(view.shape, 255, np.uint8)  # no mask: the whole view counts
    warp: np.ndarray = np.array([[1, 0, reach], [0, 1, reach]], np.float32)
    try:
        for blur in (0.75 * cell, 0.25 * cell):  # coarse, then fine: the prediction may be cells off
            _, fitted = cv2.findTransformECC(
                cv2.GaussianBlur(templ_f, (0, 0), max(soft, blur)),
                cv2.GaussianBlur(view, (0, 0), blur),
                warp,
                cv2.MOTION_AFFINE,
                crit,
                every,
                1,
            )
            warp = np.asarray(fitted, np.float32)
        warp = np.vstack([warp, [0, 0, 1]]).astype(np.float32)
        ecc, fitted = cv2.findTransformECC(
            cv2.GaussianBlur(templ_f, (0, 0), soft), view, warp, cv2.MOTION_HOMOGRAPHY, crit, every, 1
        )
    except cv2.error:  # ECC did not converge: nothing marker-like there
        return None
    warp = np.asarray(fitted, np.float64)
    if ecc < ALIGN_MIN_ECC:
        return None
    seen = cv2.warpPerspective(view, warp, templ.shape[::-1], flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
    inner = seen[pad : pad + s, pad : pad + s].reshape(6, cell, 6, cell)[:, 2:-2, :, 2:-2].mean(axis=(1, 3))
    cells = inner > (inner.max() + inner.min()) / 2
    if int((cells != (_marker_image(mid, 1) > 127)).sum()) > ALIGN_MAX_WRONG_CELLS:
        return None
    corners = cv2.perspectiveTransform(square[None].astype(np.float64), to_image @ warp)[0]
    return corners.astype(np.float32)


def project_markers(h: np.ndarray, known: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """Where a homography (table mm -> image px) puts each marker's corners."""
    return {k: cv2.perspectiveTransform(v[None], h)[0] for k, v in known.items()}


class Calibrator:
    """Calibrates once from the best frames, keeps it, and notices when the camera moves.

    The first ``settle`` frames with all four markers are each calibrated on their own (state
    ``"fresh"``); then the corners of those frames are combined (per-corner median, which
    removes the noise of any one frame) into the kept calibration (``"locked"``), used from then
    on: no frame-to-frame jitter and no dependence on the markers staying visible. Every frame
    still looks for the markers, first only round where the kept calibration puts them (the
    whole frame too when fewer than three are there or one is off its place); when at least two
    of them are more than ``moved_px`` away from their place (one misread marker is not a moved
    camera) in ``moved_after`` consecutive frames (default 1: the first settled frame after a
    bump must not be read through the old calibration), the camera has moved (``"moved"``): the
    kept calibration is dropped and settling starts again from this frame. Before anything is
    kept, a covered marker reuses the last good calibration (``"reused"``).

    A missing marker is searched again near its predicted place: from the kept or last
    calibration, or from the other three markers of this frame.
    """

    def __init__(
        self, zones: Zones | None = None, settle: int = 5, moved_px: float = 3.0, moved_after: int = 1
    ) -> None:
        self.zones = zones or default_zones()
        self.known = marker_corners_mm(self.zones)
        self.settle, self.moved_px, self.moved_after = settle, moved_px, moved_after
        self.last: Calibration | None = None
        self.locked: Calibration | None = None
        self.moves = 0  # times the camera was noticed to move
        self._settling: list[np.ndarray] = []
        self._off = 0
        self._size: tuple[int, int] | None = None  # the frame size a started-from calibration needs

    def reset(self) -> None:
        """Forget every calibration (a new camera or table)."""
        self.last = self.locked = None
        self._settling, self._off, self._size = [], 0, None

    def start_from(self, saved: SavedCalibration) -> None:
        """Begin with a saved calibration as the kept one (``run --calibration``): the zones are
        known from the first frame even while hands cover markers, and every frame still checks it
        against the markers it sees, so a camera moved since it was saved is noticed as usual. A
        frame of another size than the saved one drops it (another camera or resolution)."""
        self.reset()
        self.locked = self.last = saved.calibration
        self._size = saved.frame_size

    def _fit(self, found: dict[int, np.ndarray], state: str) -> Calibration | None:
        src = np.concatenate([self.known[k] for k in sorted(found)])
        dst = np.concatenate([found[k] for k in sorted(found)])
        h, _ = cv2.findHomography(src, dst, 0)
        if h is None:
            return None
        proj = cv2.perspectiveTransform(src[None], h)[0]
        err = float(np.linalg.norm(proj - dst, axis=1).mean())
        return Calibration(h, tuple(sorted(found)), state != "locked", err, state)

    def update(self, frame: np.ndarray) -> Calibration:
        """Calibrate from this frame, or keep the calibration already held."""
        check_frame(frame)
        if self._size is not None and (frame.shape[1], frame.shape[0]) != self._size:
            self.moves += 1  # another camera or resolution: the saved homography does not apply
            self.reset()
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        held = self.locked or self.last
        predicted = project_markers(held.homography, self.known) if held is not None else {}
        found = find_at_predicted(gray, predicted)
        # Three markers where they were pin the camera (a hand over the fourth is searched for
        # below); fewer, or one of them off its place, and the whole frame is searched as well.
        off = max(_offsets(found, predicted), default=0.0)
        pinned = len(found) >= len(self.known) - 1 and off <= self.moved_px
        if not pinned:
            found = {k: v for k, v in _detect(gray).items() if k in self.known} | found
        if held is None and len(found) == len(self.known) - 1:  # predict the fourth from the three
            partial = self._fit(found, "fresh")
            if partial is not None:
                predicted = project_markers(partial.homography, self.known)
        found = {k: v for k, v in search_near(gray, found, predicted).items() if k in self.known}
        if self.locked is not None:
            # One misread marker is not a moved camera; two off their places are.
            if sum(d > self.moved_px for d in _offsets(found, predicted)) >= 2:
                self._off += 1
            else:
                self._off = 0
            if self._off < self.moved_after:
                return replace(self.locked, markers_seen=tuple(sorted(found)))
            self.moves += 1
            self.reset()
            moved = True
        else:
            moved = False
        if len(found) == len(self.known):
            cal = self._fit(found, "moved" if moved else "fresh")
            if cal is not None:
                self.last = cal
                self._settling.append(np.concatenate([found[k] for k in sorted(found)]))
                if len(self._settling) >= self.settle:
                    median = np.median(np.stack(self._settling), axis=0)
                    corners = {k: median[4 * i : 4 * i + 4] for i, k in enumerate(sorted(self.known))}
                    locked = self._fit(corners, "locked")
                    self.locked = locked
                    self._settling = []
                return cal
        if self.last is None:
            missing = sorted(set(self.known) - set(found))
            why = "the camera moved and " if moved else ""
            raise CalibrationError(
                f"calibration: {why}markers {missing} not found and no earlier calibration to reuse"
            )
        return Calibration(self.last.homography, tuple(sorted(found)), False, self.last.error_px, "reused")


#: What ``calibrate --save`` writes and ``run --calibration`` reads.
CALIBRATION_FORMAT = "gizmos-calibration"


@dataclass(frozen=True, slots=True)
class SavedCalibration:
    """A calibration read back from its file, with the frame size it was made on."""

    calibration: Calibration
    frame_size: tuple[int, int]  # width, height in px
    #: The frame of the empty table saved with it (``vision calibrate --empty-table``), for the
    #: occlusion stage (vision/occlusion.py); ``None`` when none was saved.
    empty_table: np.ndarray | None = None


def empty_table_path(save: Path) -> Path:
    """Where ``calibrate --empty-table`` writes the empty table's frame: beside the calibration
    saved at ``save``, named after it."""
    return save.with_name(f"{save.stem}-empty.png")


def calibration_document(cal: Calibration, zones: Zones, frame_size: tuple[int, int]) -> dict[str, object]:
    """The JSON of a saved calibration: the homography, the frame size and the marker layout of
    the zones file it was made with (so a file of another table or camera mode is refused)."""
    return {
        "format": CALIBRATION_FORMAT,
        "version": 1,
        "homography_table_mm_to_image": cal.homography.tolist(),
        "frame_size": list(frame_size),
        "error_px": round(cal.error_px, 3),
        "markers_mm": {str(k): v.tolist() for k, v in marker_corners_mm(zones).items()},
    }


def load_calibration(path: str | Path, zones: Zones) -> SavedCalibration:
    """Read a file written by ``vision calibrate --save`` (or ``--live``) for ``zones``' table.

    Anything wrong is one :class:`CalibrationError` naming the file and what is wrong: unreadable,
    not such a document, a homography that is not 3x3 finite and invertible, markers laid out
    differently from ``zones`` (another zones file), or markers it puts outside its own frame.
    """
    p = Path(path)
    where = f"--calibration {p}"
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CalibrationError(f"{where}: no such file (save one: vision calibrate --live SOURCE)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"{where}: cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
    except json.JSONDecodeError as exc:
        raise CalibrationError(f"{where}: not JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(doc, dict) or doc.get("format") != CALIBRATION_FORMAT:
        raise CalibrationError(
            f"{where}: not a calibration saved by 'vision calibrate' "
            f'(no "format": "{CALIBRATION_FORMAT}"; calibrate again)'
        )
    field = "homography_table_mm_to_image"
    try:
        h = np.array(doc[field], dtype=np.float64)
        field = "frame_size"
        w, hh = (int(v) for v in doc[field])
        field = "markers_mm"
        saved_markers = {int(k): np.array(v, np.float32) for k, v in doc[field].items()}
        field = "error_px"
        error_px = float(doc.get(field, 0.0))
    except (KeyError, TypeError, ValueError, AttributeError):
        raise CalibrationError(f"{where}: field {field!r} is missing or malformed") from None
    if h.shape != (3, 3) or not np.isfinite(h).all() or abs(float(np.linalg.det(h))) < 1e-12:
        raise CalibrationError(f"{where}: the homography is not an invertible 3x3 matrix of numbers")
    if not (16 <= w <= 16384 and 16 <= hh <= 16384):
        raise CalibrationError(f"{where}: frame_size {w}x{hh} is not a camera frame")
    known = marker_corners_mm(zones)
    if set(saved_markers) != set(known) or any(
        saved_markers[k].shape != (4, 2) or not np.allclose(saved_markers[k], known[k], atol=0.5)
        for k in known
    ):
        raise CalibrationError(
            f"{where}: made for another table layout (its markers are not where this zones file puts "
            "them): give the same --zones as when it was saved, or calibrate again"
        )
    projected = np.concatenate(list(project_markers(h, known).values()))
    if not np.isfinite(projected).all() or not (
        (projected >= -0.5).all() and (projected[:, 0] <= w).all() and (projected[:, 1] <= hh).all()
    ):
        raise CalibrationError(f"{where}: it puts the markers outside its own {w}x{hh} frame")
    cal = Calibration(h, tuple(sorted(known)), False, error_px, "locked")
    return SavedCalibration(cal, (w, hh), _empty_table(p, doc.get("empty_table"), (w, hh)))


def _empty_table(path: Path, name: object, size: tuple[int, int]) -> np.ndarray | None:
    """The empty table's frame a calibration file names (beside it), checked to be its size."""
    if name is None:
        return None
    where = f"--calibration {path}"
    if not isinstance(name, str) or not name or Path(name).name != name:
        raise CalibrationError(f"{where}: field 'empty_table' must name an image file beside it")
    try:
        frame = read_frame(path.parent / name)
    except FrameError as exc:
        raise CalibrationError(f"{where}: its empty table: {exc}") from None
    if (frame.shape[1], frame.shape[0]) != size:
        raise CalibrationError(
            f"{where}: its empty table {name} is {frame.shape[1]}x{frame.shape[0]}, the calibration "
            f"{size[0]}x{size[1]}: calibrate again"
        )
    return frame


def annotate(frame: np.ndarray, cal: Calibration, zones: Zones | None = None) -> np.ndarray:
    """The frame with the markers, the play-area outline and every zone drawn on it."""
    z = zones or default_zones()
    out = frame.copy()
    h = cal.homography

    def poly(rect: tuple[float, float, float, float], color: tuple[int, int, int], label: str) -> None:
        x, y, w, hh = rect
        pts = np.array([[[x, y], [x + w, y], [x + w, y + hh], [x, y + hh]]], np.float32)
        p = cv2.perspectiveTransform(pts, h)[0].astype(np.int32)
        cv2.polylines(out, [p], True, color, 2, cv2.LINE_AA)
        cv2.putText(out, label, tuple(p[0] + [3, 14]), cv2.FONT_HERSHEY_SIMPLEX, 0.4, color, 1, cv2.LINE_AA)

    poly((0, 0, *z.size), (0, 255, 0), "play area")
    for key, rect in zone_rects(z, tuple(s.seat for s in z.seats)).items():
        poly(rect, (255, 200, 0), key)
    for mid, c in detect_markers(frame).items():
        cv2.polylines(out, [c.astype(np.int32)], True, (0, 0, 255), 2)
        cv2.putText(out, f"id {mid}", tuple(c[0].astype(int)), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 255), 2)
    state = "fresh" if cal.fresh else "reused last good"
    cv2.putText(
        out,
        f"calibration {state}, markers {list(cal.markers_seen)}, err {cal.error_px:.2f}px",
        (10, 25),
        cv2.FONT_HERSHEY_SIMPLEX,
        0.7,
        (0, 0, 255),
        2,
        cv2.LINE_AA,
    )
    return out


def marker_sheet(zones: Zones | None = None, dpi: int = 150) -> list[np.ndarray]:
    """Printable pages (one marker each, at true size) with the id and where it goes."""
    z = zones or default_zones()
    px_per_mm = dpi / 25.4
    d = cv2.aruco.getPredefinedDictionary(ARUCO_DICT)
    corner = {0: "top-left", 1: "top-right", 2: "bottom-right", 3: "bottom-left"}
    pages = []
    for mid, _ in z.marker_tiles:
        side = round(z.marker_mm * px_per_mm)
        page = np.full((round(120 * px_per_mm), round(90 * px_per_mm)), 255, np.uint8)
        x0 = (page.shape[1] - side) // 2
        page[round(15 * px_per_mm) : round(15 * px_per_mm) + side, x0 : x0 + side] = (
            cv2.aruco.generateImageMarker(d, mid, side)
        )
        cv2.putText(
            page,
            f"Gizmos marker {mid}: {corner.get(mid, '')} corner",
            (10, page.shape[0] - 60),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.55,
            0,
            1,
            cv2.LINE_AA,
        )
        cv2.putText(
            page,
            f"black square {z.marker_mm:.0f} mm; print at {dpi} dpi, 100%",
            (10, page.shape[0] - 30),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.5,
            0,
            1,
            cv2.LINE_AA,
        )
        pages.append(page)
    return pages


#: The smallest marker side (px) found in at least 99 % of trials near a predicted place (keeping
#: a calibration), and by the whole-frame pass (a first calibration): ``benchmarks/markers.py``
#: (near a prediction 28 px before :func:`align_marker`; with it 18 px: 99.3 % of 300 trials).
MIN_MARKER_PX = 18
FIRST_MARKER_PX = 32


@dataclass(frozen=True, slots=True)
class MarkerAdvice:
    """Which marker size a camera needs (``print-markers --camera-height``)."""

    height_mm: float
    width_px: int
    fov_deg: float
    tilt_deg: float
    marker_mm: float  # the zones file's marker size
    far_px: float  # the far marker's shorter side in the image, at ``marker_mm``
    needed_mm: float  # the smallest marker the far corner needs for a first calibration
    view_mm: float  # table width the camera sees straight below it

    @property
    def ok(self) -> bool:
        """Whether the markers of the zones file are large enough."""
        return self.far_px >= FIRST_MARKER_PX

    def summary(self) -> str:
        """What to print, in one paragraph."""
        head = (
            f"camera {self.height_mm / 10:.0f} cm above the table, {self.width_px} px across a "
            f"{self.fov_deg:.0f} degree view, tilted {self.tilt_deg:.0f} degrees: the far "
            f"{self.marker_mm:.0f} mm marker is about {self.far_px:.0f} px "
            f"(a first calibration needs {FIRST_MARKER_PX}, keeping one {MIN_MARKER_PX})"
        )
        if self.view_mm < 1200:
            head += f"; the camera sees only {self.view_mm:.0f} mm across: raise it or widen the view"
        if self.ok:
            return head + f": print the {self.marker_mm:.0f} mm markers as they are."
        return (
            head + f": print markers of at least {math.ceil(self.needed_mm):.0f} mm (--marker-mm) "
            f"and set the same marker_mm in the zones file the referee uses, or bring the camera closer."
        )


def marker_advice(
    height_mm: float,
    width_px: int = 1280,
    fov_deg: float = 70.0,
    tilt_deg: float = 0.0,
    zones: Zones | None = None,
) -> MarkerAdvice:
    """How large the far marker appears for a pinhole camera over the table's centre.

    The camera hangs ``height_mm`` above the play area's centre, offset by its tilt away from
    the far marker (the worst case); a marker at distance D, seen at the angle whose cosine is
    H / D, spans about f * side * H / D^2 pixels along the foreshortened direction.
    """
    if not 200 <= height_mm <= 3000:
        raise CalibrationError(f"print-markers: camera height {height_mm / 10:g} cm is not 20-300 cm")
    if not 20 <= fov_deg <= 150 or not 0 <= tilt_deg <= 60 or not 160 <= width_px <= 8000:
        raise CalibrationError("print-markers: view 20-150 degrees, tilt 0-60 degrees, width 160-8000 px")
    z = zones or default_zones()
    f = width_px / (2 * math.tan(math.radians(fov_deg) / 2))
    s = z.marker_mm
    reach = math.hypot(z.size[0] / 2, z.size[1] / 2)  # the markers lie in the play area's corners
    d2 = height_mm**2 + (height_mm * math.tan(math.radians(tilt_deg)) + reach) ** 2
    per_mm = f * height_mm / d2
    return MarkerAdvice(
        height_mm,
        width_px,
        fov_deg,
        tilt_deg,
        s,
        per_mm * s,
        FIRST_MARKER_PX / per_mm,
        2 * height_mm * math.tan(math.radians(fov_deg) / 2),
    )


def write_marker_sheet(path: str | Path, zones: Zones | None = None, dpi: int = 150) -> Path:
    """All marker pages side by side in one PNG."""
    p = Path(path)
    pages = marker_sheet(zones, dpi)
    sheet = np.hstack([np.pad(pg, ((0, 0), (0, 10)), constant_values=200) for pg in pages])
    if not cv2.imwrite(str(p), sheet):
        raise CalibrationError(f"print-markers: cannot write {p}")
    return p
