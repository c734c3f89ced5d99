"""Vision for the Gizmos referee: synthetic tables, detector, card identification, calibration.

Importing the package caps OpenBLAS at one thread (when numpy is not loaded yet): the card
matcher's small matrix products gain nothing from threads, and spinning BLAS threads next to the
detector and other processes on a 2-core machine cost far more than they save.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from vision.errors import (
    CalibrationError,
    EnrolmentError,
    FrameError,
    ModelFileError,
    VisionError,
    ZonesError,
)

__all__ = ["CalibrationError", "EnrolmentError", "FrameError", "ModelFileError", "VisionError", "ZonesError"]
