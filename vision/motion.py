"""The still-frame gate: a frame is processed once motion (a hand) has settled.

Frames are compared on a small blurred grey thumbnail; a frame is *still* when it differs from
the previous one by less than a threshold, and the gate opens once ``settle`` consecutive still
frames follow motion. It then lets ``burst`` settled frames through (one by default, so each
settled table state is processed once) and stays shut until the next motion or until
:meth:`MotionGate.rearm` (the live referee re-arms it on each sensor event: the tracker counts a
zone once it reads the same in several frames, so it observes a burst of them).
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

    def __init__(
        self, threshold: float = MOTION_THRESHOLD, settle: int = 3, thumb_width: int = 160, burst: int = 1
    ) -> None:
        self.threshold = threshold
        self.settle = settle
        self.thumb_width = thumb_width
        self.burst = burst
        self.prev: np.ndarray | None = None
        self.still = 0
        self.left = burst  # settled frames still to let through before the next motion or rearm()
        self.last_motion = 0.0

    @property
    def fired(self) -> bool:
        """Whether the settled state has had its burst (the gate is shut until motion or a rearm)."""
        return self.left <= 0

    def rearm(self) -> None:
        """Let another burst of settled frames through (something changed that the camera may not show)."""
        self.left = self.burst

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
            self.prev, self.still, self.left = thumb, 0, self.burst
            self.last_motion = float("inf")
            return False
        self.last_motion = float(np.abs(thumb - self.prev).mean())
        self.prev = thumb
        if self.last_motion > self.threshold:
            self.still, self.left = 0, self.burst
            return False
        self.still += 1
        if self.still >= self.settle and self.left > 0:
            self.left -= 1
            return True
        return False
