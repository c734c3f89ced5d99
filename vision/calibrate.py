"""Play-area calibration from four ArUco markers: the homography table mm -> image pixels.

The printed sheet (``print-markers``) has one 4×4 marker per play-area corner. ``Calibrator``
finds them with OpenCV's ``cv2.aruco.ArucoDetector``; when all four are visible it fits a new
homography from their 16 corners, otherwise it keeps the last good one (a hand often covers a
marker) and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.errors import CalibrationError
from vision.frames import check_frame
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
    fresh: bool  # False when the last good homography was reused
    error_px: float  # mean reprojection error of the marker corners used


def marker_corners_mm(zones: Zones) -> dict[int, np.ndarray]:
    """Each marker's four corners (TL, TR, BR, BL as ArUco reports them) in table mm."""
    out = {}
    for mid, (x, y) in zones.marker_tiles:
        s = zones.marker_mm
        out[mid] = np.array([[x, y], [x + s, y], [x + s, y + s], [x, y + s]], np.float32)
    return out


def _detector() -> cv2.aruco.ArucoDetector:
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    return cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(ARUCO_DICT), params)


def detect_markers(frame: np.ndarray) -> dict[int, np.ndarray]:
    """Marker id -> its four corners in image pixels."""
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    corners, ids, _ = _detector().detectMarkers(gray)
    if ids is None:
        return {}
    return {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), corners, strict=True)}


class Calibrator:
    """Keeps the last good homography across frames."""

    def __init__(self, zones: Zones | None = None) -> None:
        self.zones = zones or default_zones()
        self.known = marker_corners_mm(self.zones)
        self.last: Calibration | None = None

    def update(self, frame: np.ndarray) -> Calibration:
        """Calibrate from this frame, or fall back to the last good calibration."""
        check_frame(frame)
        found = {k: v for k, v in detect_markers(frame).items() if k in self.known}
        if len(found) == len(self.known):
            src = np.concatenate([self.known[k] for k in sorted(found)])
            dst = np.concatenate([found[k] for k in sorted(found)])
            h, _ = cv2.findHomography(src, dst, 0)
            if h is not None:
                proj = cv2.perspectiveTransform(src[None], h)[0]
                err = float(np.linalg.norm(proj - dst, axis=1).mean())
                self.last = Calibration(h, tuple(sorted(found)), True, err)
                return self.last
        if self.last is None:
            missing = sorted(set(self.known) - set(found))
            raise CalibrationError(
                f"calibration: markers {missing} not found and no earlier calibration to reuse"
            )
        return Calibration(self.last.homography, tuple(sorted(found)), False, self.last.error_px)


def annotate(frame: np.ndarray, cal: Calibration, zones: Zones | None = None) -> np.ndarray:
    """The frame with the markers, the play-area outline and every zone drawn on it."""
    z = zones or default_zones()
    out = frame.copy()
    h = cal.homography

    def poly(rect: tuple[float, float, float, float], colour: tuple[int, int, int], label: str) -> None:
        x, y, w, hh = rect
        pts = np.array([[[x, y], [x + w, y], [x + w, y + hh], [x, y + hh]]], np.float32)
        p = cv2.perspectiveTransform(pts, h)[0].astype(np.int32)
        cv2.polylines(out, [p], True, colour, 2, cv2.LINE_AA)
        cv2.putText(out, label, tuple(p[0] + [3, 14]), cv2.FONT_HERSHEY_SIMPLEX, 0.4, colour, 1, cv2.LINE_AA)

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


def write_marker_sheet(path: str | Path, zones: Zones | None = None, dpi: int = 150) -> Path:
    """All marker pages side by side in one PNG."""
    p = Path(path)
    pages = marker_sheet(zones, dpi)
    sheet = np.hstack([np.pad(pg, ((0, 0), (0, 10)), constant_values=200) for pg in pages])
    if not cv2.imwrite(str(p), sheet):
        raise CalibrationError(f"print-markers: cannot write {p}")
    return p
