"""The settings the referee takes from the environment: read here, at the edge, and passed in.

Vision never reads the environment. The detector's file and the folder of enrolled card photos
are arguments (``Detector(path)``, ``Observer(model, enrol_dir=...)``, ``face_set(enrol_dir)``)
and options (``--model``, ``--enrol``). :meth:`Settings.fill` gives a command the environment's
value for such an option the user left out, so ``$GIZMOS_DETECTOR`` (a model still in training)
and ``$GIZMOS_ENROL_DIR`` (your own cards) work for every command as before. ``$GIZMOS_HOME``
moves the project's folders (``models/``, ``data/``, ``runs/``: :class:`vision.paths.Locations`)
for the commands that run the pipeline, the demo's recording included; unset, they are found
beside the packages or the current folder (:func:`vision.paths.find_root`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

DETECTOR_ENV = "GIZMOS_DETECTOR"
ENROL_ENV = "GIZMOS_ENROL_DIR"
HOME_ENV = "GIZMOS_HOME"

if TYPE_CHECKING:
    from vision.paths import Locations


@dataclass(frozen=True, slots=True)
class Settings:
    """``detector``: a detector ONNX file (None: the committed one); ``enrol_dir``: enrolled card
    photos that replace the drawn faces (None: the drawn faces); ``home``: the folder holding
    ``models/``, ``data/`` and ``runs/`` (None: found, :data:`vision.paths.LOCATIONS`)."""

    detector: Path | None = None
    enrol_dir: Path | None = None
    home: Path | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """``$GIZMOS_DETECTOR``, ``$GIZMOS_ENROL_DIR`` and ``$GIZMOS_HOME`` (unset or blank: the defaults)."""
        env = os.environ if env is None else env

        def path(key: str) -> Path | None:
            raw = env.get(key, "").strip()
            return Path(raw).expanduser() if raw else None

        return cls(detector=path(DETECTOR_ENV), enrol_dir=path(ENROL_ENV), home=path(HOME_ENV))

    def locations(self) -> Locations:
        """The project's folders: under ``home``, else the default ones."""
        from vision.paths import LOCATIONS, Locations  # not at import: the CLI's every command reads settings

        return LOCATIONS if self.home is None else Locations(self.home)

    def detector_file(self) -> Path:
        """The detector in use: this setting's, else ``models/detector.onnx`` of :meth:`locations`."""
        return self.detector or self.locations().detector

    def fill(self, args: argparse.Namespace) -> argparse.Namespace:
        """A command's ``--model``/``--enrol`` that the user left out take these settings (the
        detector of ``home`` when only that is set); ``args.locations`` is :meth:`locations`."""
        detector = self.detector_file() if self.detector is not None or self.home is not None else None
        if detector is not None and getattr(args, "model", "absent") is None:
            args.model = detector
        if self.enrol_dir is not None and getattr(args, "enrol", "absent") is None:
            args.enrol = self.enrol_dir
        args.locations = self.locations()
        return args
