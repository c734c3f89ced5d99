"""Where the committed models and the training runs live, resolved in this one place.

The models ship in the repository's ``models/`` folder (next to the packages, not inside one);
every module that needs a model file or the runs folder takes it from here.
"""

from __future__ import annotations

from pathlib import Path

#: The repository's models folder: detector.onnx / detector.pt and hands.onnx.
MODELS_DIR = Path(__file__).resolve().parents[1] / "models"
#: The checkout the models ship in (the recording's cache key hashes source files under it).
REPO_ROOT = MODELS_DIR.parent
#: Where training and fine-tuning write their runs.
RUNS_DIR = REPO_ROOT / "runs"
#: Rendered data (the demo's recording, datasets).
DATA_DIR = REPO_ROOT / "data"
DETECTOR_ONNX = MODELS_DIR / "detector.onnx"
HANDS_ONNX = MODELS_DIR / "hands.onnx"
