"""``gizmos-referee cameras``: the local cameras OpenCV can open, with their resolution and frame rate.

A camera index that opens and gives a frame is listed with what it delivers when asked for
1280 × 720 (what ``run --camera N`` asks for). Network cameras are not searched for: give their
URL to ``run --camera`` (docs/e2e.md, "Network cameras").
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

import cv2

MAX_INDEX = 10  # indexes 0..9: more than a game table has


@dataclass(frozen=True, slots=True)
class CameraInfo:
    """One camera that opened: its index and what it delivers."""

    index: int
    width: int
    height: int
    fps: float
    backend: str

    def line(self) -> str:
        rate = f"{self.fps:g} frames/s" if self.fps > 0 else "frame rate not reported"
        return f"camera {self.index}: {self.width} x {self.height}, {rate} ({self.backend})"


def probe(index: int, capture: Callable[[int], Any] = cv2.VideoCapture) -> CameraInfo | None:
    """The camera at ``index`` if it opens and gives a frame, else None."""
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    try:
        cap = capture(index)
        try:
            if not cap.isOpened():
                return None
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, 1280)
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, 720)
            ok, image = cap.read()
            if not ok or image is None:
                return None
            height, width = image.shape[:2]
            return CameraInfo(index, width, height, float(cap.get(cv2.CAP_PROP_FPS)), cap.getBackendName())
        finally:
            cap.release()
    finally:
        cv2.utils.logging.setLogLevel(level)


def list_cameras(
    count: int = MAX_INDEX, capture: Callable[[int], Any] = cv2.VideoCapture
) -> list[CameraInfo]:
    """Every camera among indexes ``0..count-1`` that opens and gives a frame."""
    return [info for i in range(count) if (info := probe(i, capture)) is not None]


def run_cameras(args: Any, out: TextIO | None = None) -> int:
    """Print one line per camera found (on ``out``, default stdout), or one line saying none was."""
    out = out or sys.stdout
    found = list_cameras()
    if not found:
        out.write(
            f"no camera found (indexes 0-{MAX_INDEX - 1} tried); a phone or IP camera is given "
            "to run --camera as its stream URL\n"
        )
    for info in found:
        out.write(info.line() + "\n")
    return 0
