"""Vision for the Gizmos referee: synthetic tables, detector, card identification, calibration.

Importing the package caps BLAS at one thread, whether numpy is loaded already or not: the
card matcher's small matrix products gain nothing from threads, and spinning BLAS threads next
to the detector and other processes on a 2-core machine cost far more than they save (measured
under load: a 49 x 3780 by 3780 x 30 product took 3.0 ms with OpenBLAS' default threads and
0.2 ms with one).
"""

from __future__ import annotations

import os

from threadpoolctl import threadpool_limits

from vision.errors import (
    CalibrationError,
    EnrolmentError,
    FrameError,
    ModelFileError,
    VisionError,
    ZonesError,
)

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # for a numpy loaded after us
threadpool_limits(limits=1, user_api="blas")  # for a numpy (and its OpenBLAS) loaded before us

__all__ = ["CalibrationError", "EnrolmentError", "FrameError", "ModelFileError", "VisionError", "ZonesError"]
