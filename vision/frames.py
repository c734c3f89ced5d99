"""Frame validation shared by every entry point: bad input gets a clear error, never a guess."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import cv2
import numpy as np

from vision.errors import FrameError

SUPPORTED_SIZES: tuple[tuple[int, int], ...] = ((1280, 720), (1920, 1080))
#: The largest image file decoded (8K × 8K): a camera frame is far smaller, and a huge image
#: (a 40000 × 40000 PNG is 4.8 GB decoded) is refused from its header, before any decoding.
MAX_PIXELS = 8192 * 8192

#: Still-image files the camera pipeline reads (a folder of frames, enrolled card photos).
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


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


def image_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG or JPEG file's first bytes, or None for another format."""
    if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR":
        return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    if not head.startswith(b"\xff\xd8"):
        return None
    i = 2
    while i + 9 <= len(head) and head[i] == 0xFF:
        marker, length = head[i + 1], int.from_bytes(head[i + 2 : i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # a start-of-frame segment
            return int.from_bytes(head[i + 7 : i + 9], "big"), int.from_bytes(head[i + 5 : i + 7], "big")
        i += 2 + length
    return None


def read_frame(path: str | Path) -> np.ndarray:
    """Load an image file as a frame, with a clear error when it cannot be read."""
    p = Path(path)
    if not p.is_file():
        raise FrameError(f"frame: no such image file {p}")
    try:
        with p.open("rb") as f:
            head = f.read(65536)
    except OSError as exc:
        raise FrameError(f"frame: cannot read image file {p}: {exc.strerror or exc}") from exc
    size = image_size(head)
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise FrameError(
            f"frame: image file {p} is {size[0]}x{size[1]}, too large (at most {MAX_PIXELS:,} pixels)"
        )
    try:
        with native_stderr(_decoder_line) as said:
            img = cv2.imread(str(p), cv2.IMREAD_COLOR)
    except cv2.error as exc:  # e.g. OpenCV's own size limit for a format not checked above
        raise FrameError(f"frame: cannot decode image file {p}: {exc.err or 'OpenCV refused it'}") from exc
    if img is None:
        why = f": {said[0]}" if said else ""
        raise FrameError(f"frame: cannot decode image file {p}{why}")
    return img


_STDERR_LOCK = threading.Lock()


def _decoder_line(line: str) -> bool:
    """libjpeg's "Premature end of JPEG file", libpng's and OpenCV's warnings."""
    return "JPEG" in line or "libpng" in line or line.startswith("[ WARN")


@contextlib.contextmanager
def native_stderr(mine: Callable[[str], bool] = lambda line: True) -> Iterator[list[str]]:
    """Collect what native libraries print on file descriptor 2 inside the block (libjpeg's
    "Premature end of JPEG file", a model reader's parse errors) instead of letting it reach the
    terminal beside the referee's own one-line messages. Lines ``mine`` does not claim are
    passed on to the terminal."""
    said: list[str] = []
    with _STDERR_LOCK, tempfile.TemporaryFile() as sink:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(sink.fileno(), 2)
            yield said
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        for line in sink.read().decode("utf-8", "replace").splitlines():
            if mine(line):
                said.append(line.strip())
            elif line.strip():
                sys.stderr.write(line + "\n")
