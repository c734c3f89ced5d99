"""Errors of the vision pipeline: each names what was wrong so a user can act on it."""

from __future__ import annotations


class VisionError(Exception):
    """Base class; the CLI prints the message instead of a traceback."""


class FrameError(VisionError):
    """A frame that cannot be processed: empty, wrong type or size."""


class ModelFileError(VisionError):
    """A detector weight file that is missing or unreadable."""


class EnrolmentError(VisionError):
    """A bad enrolment folder: unreadable image, unknown card id in a file name."""


class CalibrationError(VisionError):
    """The play-area markers cannot be found and there is no earlier calibration to fall back on."""


class ZonesError(VisionError):
    """A malformed zones file; the message names the field."""


class DatasetError(VisionError):
    """A training dataset folder that is missing or incomplete; the message names it."""
