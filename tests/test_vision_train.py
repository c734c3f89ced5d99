"""Training is never run in CI; a one-epoch smoke run on a few tiny rendered tiles is."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision import offline
from vision.errors import ModelFileError
from vision.synth import CLASSES
from vision.train import TrainConfig, export, smoke, train


def test_offline_settings_disable_network_features() -> None:
    settings = offline.configure()
    assert settings["sync"] is False and settings["wandb"] is False
    import os

    assert os.environ["YOLO_OFFLINE"] == "1"


@pytest.mark.slow
def test_smoke_training_one_epoch(tmp_path: Path) -> None:
    weights = smoke(tmp_path, threads=2)
    assert weights.is_file() and weights.stat().st_size > 1_000_000
    offline.configure()
    from ultralytics import YOLO

    assert list(YOLO(str(weights)).names.values()) == list(CLASSES)


def test_resume_without_checkpoint_is_a_clear_error(tmp_path: Path) -> None:
    cfg = TrainConfig(data=tmp_path / "none.yaml", project=tmp_path, name="nothing")
    with pytest.raises(ModelFileError, match="no checkpoint"):
        train(cfg, resume=True)


def test_export_of_missing_weights_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="not found"):
        export(tmp_path / "missing.pt", tmp_path)
