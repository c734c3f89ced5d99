"""The geometry runtime vision and training share: the canonical (rectified) table frame, the
detector's classes and label format, and the zones a hand covers.

It lives apart from the renderer (:mod:`vision.training.synth`) so the runtime pipeline never
imports training code.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import cv2
import numpy as np

from vision.zones import Rect, Zones, hidden_by

CLASSES: tuple[str, ...] = (
    "card",
    "card_band",
    "card_back",
    "marble_red",
    "marble_blue",
    "marble_black",
    "marble_yellow",
    "vp1",
    "vp5",
    "hand",
)
CLASS_INDEX: dict[str, int] = {c: i for i, c in enumerate(CLASSES)}
#: The detector's energy-marble classes, one per colour.
MARBLE_CLASSES: tuple[str, ...] = tuple(c for c in CLASSES if c.startswith("marble_"))
MARBLE_MM = 16.0
CANON_PX_PER_MM = 0.8
CANON_SIZE: tuple[int, int] = (960, 608)  # width, height (multiples of 32) of the rectified table

YoloRow = tuple[int, float, float, float, float]


def yolo_row(cls: str, box_px: tuple[float, float, float, float]) -> YoloRow | None:
    """One YOLO label (class, cx, cy, w, h normalised) for a box in canonical pixels, clipped to
    the frame; ``None`` for a box less than 2 px wide or high once clipped."""
    cw, ch = CANON_SIZE
    x1, y1, x2, y2 = (max(0.0, min(v, lim)) for v, lim in zip(box_px, (cw, ch, cw, ch), strict=True))
    if x2 - x1 < 2 or y2 - y1 < 2:
        return None
    return (CLASS_INDEX[cls], (x1 + x2) / 2 / cw, (y1 + y2) / 2 / ch, (x2 - x1) / cw, (y2 - y1) / ch)


def yolo_text(rows: Iterable[YoloRow]) -> str:
    """YOLO label rows as the text of a label file."""
    return "".join(f"{c} {x:.6f} {y:.6f} {w:.6f} {h:.6f}\n" for c, x, y, w, h in rows)


def canonical_from_image(h_table_to_image: np.ndarray) -> np.ndarray:
    """The homography from image pixels to the canonical rectified frame."""
    s = np.diag([CANON_PX_PER_MM, CANON_PX_PER_MM, 1.0])
    return s @ np.linalg.inv(h_table_to_image)


def rectify(image: np.ndarray, h_table_to_image: np.ndarray) -> np.ndarray:
    """Warp a camera frame to the canonical top-down table image the detector sees."""
    return cv2.warpPerspective(
        image, canonical_from_image(h_table_to_image), CANON_SIZE, flags=cv2.INTER_LINEAR
    )


def zone_rects(zones: Zones, seats: tuple[int, ...]) -> dict[str, Rect]:
    """Rectangles (mm) of every zone that can be reported as unseen, keyed like the ground truth."""
    out: dict[str, Rect] = {f"display/{lv}/{sl}": r for lv, sl, r in zones.display}
    out["energy_row"] = zones.energy_row
    for seat in seats:
        sz = zones.seat(seat)
        out.update(
            {
                f"{seat}/gizmos": sz.gizmos,
                f"{seat}/archive": sz.archive,
                f"{seat}/ring": sz.ring,
                f"{seat}/vp": sz.vp,
            }
        )
    return out


def covered_zones(
    zones: Zones, seats: tuple[int, ...], hands_mm: list[tuple[float, float, float, float]]
) -> set[str]:
    """Zones a hand overlaps; they are reported as not seen (the same rule the pipeline applies)."""
    return {key for key, rect in zone_rects(zones, seats).items() if hidden_by(rect, hands_mm)}


def covered_share(box: tuple[float, ...], other: tuple[float, ...]) -> float:
    """The share of ``box``'s area that ``other`` covers (both x1, y1, x2, y2, one unit)."""
    w = max(0.0, min(box[2], other[2]) - max(box[0], other[0]))
    h = max(0.0, min(box[3], other[3]) - max(box[1], other[1]))
    return w * h / max(1e-6, (box[2] - box[0]) * (box[3] - box[1]))


def table_patch(
    frame: np.ndarray,
    h_img: np.ndarray,
    center_mm: tuple[float, float],
    size_mm: tuple[float, float],
    ppm: float,
    rotation: int = 0,
    angle_deg: float = 0.0,
) -> np.ndarray:
    """A table region (centre, size in mm) cut from a camera frame through the calibration
    homography ``h_img`` (table mm -> frame px) at ``ppm`` px/mm, turned ``rotation`` (a card's
    reading direction, 0 or 180) and a further ``angle_deg``: what every stage that reads a card,
    a token or a marble closer than the canonical frame cuts."""
    w, h = round(size_mm[0] * ppm), round(size_mm[1] * ppm)
    cx, cy = center_mm
    t = math.radians(angle_deg + rotation)
    c, s = math.cos(t) / ppm, math.sin(t) / ppm
    # patch px (u, v) -> table mm, then -> image px through the calibration; pixel u is centred
    # on u (OpenCV's convention), so the patch centre is u = (w - 1) / 2.
    u0, v0 = (w - 1) / 2, (h - 1) / 2
    a = np.array([[c, -s, cx - c * u0 + s * v0], [s, c, cy - s * u0 - c * v0], [0, 0, 1]])
    return cv2.warpPerspective(frame, h_img @ a, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
