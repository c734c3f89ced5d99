"""Frame validation shared by every entry point: bad input gets a clear error, never a guess."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from vision.errors import FrameError

SUPPORTED_SIZES: tuple[tuple[int, int], ...] = ((1280, 720), (1920, 1080))


def check_frame(frame: object, sizes: tuple[tuple[int, int], ...] | None = None) -> np.ndarray:
    """Return the frame if it is a non-empty BGR uint8 image (of a supported size when asked)."""
    if not isinstance(frame, np.ndarray):
        raise FrameError(f"frame: expected a numpy image, got {type(frame).__name__}")
    if frame.size == 0:
        raise FrameError("frame: empty image (0 pixels)")
    if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
        raise FrameError(f"frame: expected an 8-bit BGR image (h, w, 3), got {frame.dtype} {frame.shape}")
    if sizes is not None and (frame.shape[1], frame.shape[0]) not in sizes:
        raise FrameError(
            f"frame: wrong size {frame.shape[1]}x{frame.shape[0]}; supported: "
            + ", ".join(f"{w}x{h}" for w, h in sizes)
        )
    if int(frame.max()) == int(frame.min()):
        raise FrameError("frame: blank image (every pixel has the same value)")
    return frame


def read_frame(path: str | Path) -> np.ndarray:
    """Load an image file as a frame, with a clear error when it cannot be read."""
    p = Path(path)
    if not p.is_file():
        raise FrameError(f"frame: no such image file {p}")
    img = cv2.imread(str(p), cv2.IMREAD_COLOR)
    if img is None:
        raise FrameError(f"frame: cannot decode image file {p}")
    return img
