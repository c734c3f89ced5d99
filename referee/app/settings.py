"""The settings the referee takes from the environment: read here, at the edge, and passed in.

Vision never reads the environment. The detector's file and the folder of enrolled card photos
are arguments (``Detector(path)``, ``Observer(model, enrol_dir=...)``, ``face_set(enrol_dir)``)
and options (``--model``, ``--enrol``). :meth:`Settings.fill` gives a command the environment's
value for such an option the user left out, so ``$GIZMOS_DETECTOR`` (a model still in training)
and ``$GIZMOS_ENROL_DIR`` (your own cards) work for every command as before.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DETECTOR_ENV = "GIZMOS_DETECTOR"
ENROL_ENV = "GIZMOS_ENROL_DIR"


@dataclass(frozen=True, slots=True)
class Settings:
    """``detector``: a detector ONNX file (None: the committed one); ``enrol_dir``: enrolled card
    photos that replace the drawn faces (None: the drawn faces)."""

    detector: Path | None = None
    enrol_dir: Path | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """``$GIZMOS_DETECTOR`` and ``$GIZMOS_ENROL_DIR`` (unset or blank: the defaults)."""
        env = os.environ if env is None else env

        def path(key: str) -> Path | None:
            raw = env.get(key, "").strip()
            return Path(raw).expanduser() if raw else None

        return cls(detector=path(DETECTOR_ENV), enrol_dir=path(ENROL_ENV))

    def detector_file(self) -> Path:
        """The detector in use: this setting's, else the committed ``models/detector.onnx``."""
        from vision.paths import DETECTOR_ONNX  # not at import: the CLI's every command reads settings

        return self.detector or DETECTOR_ONNX

    def fill(self, args: argparse.Namespace) -> argparse.Namespace:
        """A command's ``--model``/``--enrol`` that the user left out take these settings."""
        if self.detector is not None and getattr(args, "model", "absent") is None:
            args.model = self.detector
        if self.enrol_dir is not None and getattr(args, "enrol", "absent") is None:
            args.enrol = self.enrol_dir
        return args
