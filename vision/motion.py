"""The still-frame gate: a frame is processed once motion (a hand) has settled.

Frames are compared on a small blurred grey thumbnail; a frame is *still* when it differs from
the previous one by less than a threshold, and the gate opens once ``settle`` consecutive still
frames follow motion. It then stays shut until the next motion, so each settled table state is
processed once.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.frames import check_frame

#: Mean grey-level change (of 255) of the blurred thumbnail that counts as motion. Measured on
#: the recording (docs/e2e.md): a hand over the table changes it by 0.3-3, sensor noise by ~0.12.
MOTION_THRESHOLD = 0.5


class MotionGate:
    """Decides which frames of a stream to process."""

    def __init__(self, threshold: float = MOTION_THRESHOLD, settle: int = 3, thumb_width: int = 160) -> None:
        self.threshold = threshold
        self.settle = settle
        self.thumb_width = thumb_width
        self.prev: np.ndarray | None = None
        self.still = 0
        self.fired = False
        self.last_motion = 0.0

    def _thumb(self, frame: np.ndarray) -> np.ndarray:
        h, w = frame.shape[:2]
        small = cv2.resize(
            frame, (self.thumb_width, max(1, round(h * self.thumb_width / w))), interpolation=cv2.INTER_AREA
        )
        return cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), (5, 5), 0).astype(np.float32)

    def update(self, frame: np.ndarray) -> bool:
        """Feed one frame; True when this frame should be processed."""
        thumb = self._thumb(check_frame(frame))
        if self.prev is None or self.prev.shape != thumb.shape:
            self.prev, self.still, self.fired = thumb, 0, False
            self.last_motion = float("inf")
            return False
        self.last_motion = float(np.abs(thumb - self.prev).mean())
        self.prev = thumb
        if self.last_motion > self.threshold:
            self.still, self.fired = 0, False
            return False
        self.still += 1
        if self.still >= self.settle and not self.fired:
            self.fired = True
            return True
        return False
