"""The framing assistant: is the camera placed well enough, and if not, what to move.

While a camera is set up (the phone page, the dashboard's phone page, ``calibrate --live``) each
frame is judged on what recognition needs, and the verdict says what to change:

* **markers**: which of the four corner markers are found, and each one's size in pixels (a first
  calibration needs :data:`~vision.calibrate.FIRST_MARKER_PX`); a marker out of the picture is
  placed from the others where three are seen, and the advice says which way to move the camera;
* **resolution**: the play area's pixels per millimetre at its worst point (the far corner, across
  the foreshortened direction) against :data:`NEEDED_PX_PER_MM`: the detector sees the table
  rectified to 0.8 px/mm, and below 0.6 px/mm on a card look-alike cards are misread
  (docs/vision.md, card identification; the bundled recording's camera gives 0.63 at its far corner);
* **tilt**: the angle between the camera's axis and the table's normal, from the calibration's
  homography with a 65 degree horizontal view assumed (phones and webcams have 60-78): up to
  :data:`MAX_TILT_DEG` the far side keeps enough pixels;
* **sharpness**: the variance of the Laplacian over the play area (motion blur, a lens out of
  focus), and **light**: the play area's mean grey level and its share of clipped pixels.

Pure: an image and the zones in, a :class:`Framing` out; nothing is read or written.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import cv2
import numpy as np

from vision.calibrate import FIRST_MARKER_PX, detect_markers, marker_corners_mm
from vision.zones import Zones, default_zones

NEEDED_PX_PER_MM = 0.6
MAX_TILT_DEG = 35.0
MIN_SHARPNESS = 40.0  # variance of the Laplacian at 0.8 px/mm; a sharp rendered table gives ~300
DARK, BRIGHT = 60.0, 210.0  # mean grey of the play area
MAX_CLIPPED = 0.05  # share of the play area at 250 or above
MIN_FILL = 0.35  # the play area's share of the picture below which the camera is too far
ASSUMED_HFOV_DEG = 65.0
EDGE_PX = 4  # a marker this near the picture's edge may be cut off


@dataclass(frozen=True, slots=True)
class MarkerSeen:
    """One marker in the picture: its id, its shorter side in pixels, its centre."""

    id: int
    side_px: float
    x: float
    y: float


@dataclass(frozen=True, slots=True)
class Framing:
    """The verdict on one frame; ``advice`` says what to change, ``good`` when nothing."""

    markers: tuple[MarkerSeen, ...]
    missing: tuple[int, ...]
    px_per_mm: float | None  # the play area's worst resolution (None: not calibrated)
    tilt_deg: float | None
    fill: float | None  # the play area's share of the picture
    sharpness: float
    brightness: float
    clipped: float
    advice: tuple[str, ...]
    good: bool

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["needed_px_per_mm"] = NEEDED_PX_PER_MM
        data["summary"] = self.line()
        return data

    def line(self) -> str:
        """One line for a terminal."""
        found = ", ".join(f"{m.id} ({m.side_px:.0f} px)" for m in self.markers) or "none"
        parts = [f"markers {found}"]
        if self.px_per_mm is not None:
            parts.append(f"{self.px_per_mm:.2f} px/mm (needs {NEEDED_PX_PER_MM:g})")
        if self.tilt_deg is not None:
            parts.append(f"tilt {self.tilt_deg:.0f} deg")
        parts.append(f"sharpness {self.sharpness:.0f}, light {self.brightness:.0f}")
        verdict = "good" if self.good else "; ".join(self.advice)
        return f"{', '.join(parts)}: {verdict}"


def _side(quad: np.ndarray) -> float:
    return float(np.linalg.norm(quad - np.roll(quad, 1, axis=0), axis=1).min())


def _scale(h: np.ndarray, x: float, y: float) -> float:
    """Pixels per mm at table point (x, y) in the worst direction (the Jacobian's smaller singular value)."""
    pts = np.array([[[x, y], [x + 1, y], [x, y + 1]]], np.float32)
    p = cv2.perspectiveTransform(pts, h)[0]
    jac = np.stack([p[1] - p[0], p[2] - p[0]], axis=1)
    return float(np.linalg.svd(jac, compute_uv=False).min())


def tilt_of(h: np.ndarray, width: int, height: int, hfov_deg: float = ASSUMED_HFOV_DEG) -> float:
    """The angle (degrees) between the camera's axis and the table's normal, from the homography
    (table mm -> image px) and an assumed field of view."""
    f = width / (2 * math.tan(math.radians(hfov_deg) / 2))
    k = np.array([[f, 0, width / 2], [0, f, height / 2], [0, 0, 1]])
    b = np.linalg.inv(k) @ h
    r1, r2 = b[:, 0] / np.linalg.norm(b[:, 0]), b[:, 1] / np.linalg.norm(b[:, 1])
    normal = np.cross(r1, r2)
    return math.degrees(math.acos(min(1.0, abs(float(normal[2]) / float(np.linalg.norm(normal))))))


def _fit(known: dict[int, np.ndarray], found: dict[int, np.ndarray]) -> np.ndarray | None:
    src = np.concatenate([known[k] for k in sorted(found)])
    dst = np.concatenate([found[k] for k in sorted(found)])
    h, _ = cv2.findHomography(src, dst, 0)
    return h


def _direction(points: np.ndarray, width: int, height: int) -> list[str]:
    """Which way the camera must move for ``points`` (image px) to come into the picture."""
    out = []
    if (points[:, 0] < 0).any():
        out.append("left")
    if (points[:, 0] >= width).any():
        out.append("right")
    if (points[:, 1] < 0).any():
        out.append("up (toward the top of the picture)")
    if (points[:, 1] >= height).any():
        out.append("down (toward the bottom of the picture)")
    return out


def assess(image: np.ndarray, zones: Zones | None = None) -> Framing:
    """Judge one frame (BGR) of a camera being set up over the table ``zones`` describes."""
    z = zones or default_zones()
    known = marker_corners_mm(z)
    height, width = image.shape[:2]
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    found = {k: v for k, v in detect_markers(gray).items() if k in known}
    markers = tuple(
        MarkerSeen(k, _side(q), float(q[:, 0].mean()), float(q[:, 1].mean()))
        for k, q in sorted(found.items())
    )
    missing = tuple(sorted(set(known) - set(found)))
    advice: list[str] = []
    h = _fit(known, found) if len(found) >= 3 else None
    area = np.array([[[0, 0], [z.size[0], 0], [z.size[0], z.size[1]], [0, z.size[1]]]], np.float32)
    quad = cv2.perspectiveTransform(area, h)[0] if h is not None else None

    # where the play area lies: the region judged for light and sharpness
    mask = np.zeros(gray.shape, np.uint8)
    if quad is not None:
        cv2.fillConvexPoly(mask, np.round(quad).astype(np.int32), 255)
    if quad is None or not mask.any():
        mask[:] = 255
    region = gray[mask > 0]
    brightness = float(region.mean())
    clipped = float((region >= 250).mean())
    lap = cv2.Laplacian(gray, cv2.CV_64F)
    sharpness = float(lap[mask > 0].var())

    if brightness < DARK:
        advice.append("too dark: more light on the table (or a longer exposure)")
    elif brightness > BRIGHT or clipped > MAX_CLIPPED:
        advice.append("too bright: parts of the table are washed out (less light, or a shorter exposure)")
    if sharpness < MIN_SHARPNESS:
        advice.append("blurred: hold the camera still, clean the lens, or let it focus on the table")

    px_per_mm = tilt = fill = None
    if not found:
        advice.append(
            "no marker found: put the four printed markers on the table's corners and aim the camera "
            "at the whole table"
        )
    elif h is None:  # one or two markers: where the others must be, from a similarity fit
        src = np.concatenate([known[k] for k in sorted(found)])
        dst = np.concatenate([found[k] for k in sorted(found)])
        fit, _ = cv2.estimateAffinePartial2D(src, dst)
        away: list[str] = []
        if fit is not None:
            others = np.concatenate([known[k] for k in missing])
            away = _direction(others @ fit[:, :2].T + fit[:, 2], width, height)
        where = " and ".join(away) + ", or higher" if away else "higher, so the whole table is in view"
        advice.append(f"markers {list(missing)} are out of the picture: move the camera {where}")
    else:
        assert quad is not None
        corners = cv2.perspectiveTransform(np.concatenate(list(known.values()))[None], h)[0]
        outside = _direction(corners, width, height)
        small = [m for m in markers if m.side_px < FIRST_MARKER_PX]
        if missing and outside:
            advice.append(
                f"markers {list(missing)} are out of the picture: move the camera "
                f"{' and '.join(outside)}, or higher"
            )
        elif missing and not small:
            advice.append(f"markers {list(missing)} not found: uncover them, or light them evenly")
        elif not missing:
            near_edge = (
                (corners[:, 0] < EDGE_PX).any()
                or (corners[:, 1] < EDGE_PX).any()
                or (corners[:, 0] > width - 1 - EDGE_PX).any()
                or (corners[:, 1] > height - 1 - EDGE_PX).any()
            )
            if near_edge:
                advice.append("a marker touches the picture's edge: raise the camera a little or centre it")
        px_per_mm = min(_scale(h, x, y) for x, y in area[0])
        tilt = tilt_of(h, width, height)
        fill = float(cv2.contourArea(quad.astype(np.float32)) / (width * height))
        if small:
            unseen = f" and {list(missing)} not found" if missing else ""
            least = math.floor(min(m.side_px for m in small))
            advice.append(
                f"markers {[m.id for m in small]} are too small{unseen} ({least} px, "
                f"need {FIRST_MARKER_PX}): bring the camera closer, or print bigger markers "
                "(print-markers --marker-mm, and the same marker_mm in the zones file)"
            )
        if tilt > MAX_TILT_DEG:
            advice.append(
                f"the camera looks at the table at a slant ({tilt:.0f} degrees): move it over the "
                "table's centre and point it straight down"
            )
        if px_per_mm < NEEDED_PX_PER_MM:
            cause = "bring the camera closer (lower), or use a higher resolution"
            if tilt > MAX_TILT_DEG:
                cause = (
                    "point the camera straight down first (the far side gains pixels), then closer if needed"
                )
            elif fill < MIN_FILL:
                cause = f"the table fills only {fill:.0%} of the picture: bring the camera closer (lower)"
            advice.append(
                f"too few pixels on the table ({px_per_mm:.2f} px/mm at the far side, recognition needs "
                f"{NEEDED_PX_PER_MM:g}): {cause}"
            )
    return Framing(
        markers, missing, px_per_mm, tilt, fill, sharpness, brightness, clipped, tuple(advice), not advice
    )
