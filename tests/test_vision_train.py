"""Training is never run in CI; a one-epoch smoke run on a few tiny rendered tiles is."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.errors import ModelFileError
from vision.geometry import CLASSES
from vision.training import offline
from vision.training.train import TrainConfig, _train_args, export, smoke, train


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


def test_second_stage_from_missing_weights_is_a_clear_error(tmp_path: Path) -> None:
    cfg = TrainConfig(data=tmp_path / "none.yaml", project=tmp_path, start=tmp_path / "missing.pt")
    with pytest.raises(ModelFileError, match=r"--from: weights file .*missing\.pt not found"):
        train(cfg)


def test_whole_frame_dataset_keeps_every_label_of_the_canonical_frame(tmp_path: Path) -> None:
    import cv2

    from vision.geometry import CANON_SIZE
    from vision.training.dataset import DatasetSpec, generate

    generate(
        DatasetSpec(tmp_path, train_scenes=1, val_scenes=0, whole=True), workers=1, seed_offset=6_500_000
    )
    [image] = (tmp_path / "images" / "train").iterdir()
    assert cv2.imread(str(image)).shape[:2] == (CANON_SIZE[1], CANON_SIZE[0])
    rows = (tmp_path / "labels" / "train" / f"{image.stem}.txt").read_text().splitlines()
    marbles = [r for r in rows if CLASSES[int(r.split()[0])].startswith("marble_")]
    assert len(rows) > 20 and marbles  # a whole table: cards, marbles and tokens, none cut away
    again = generate(DatasetSpec(tmp_path, 1, 0, whole=True), workers=1, seed_offset=6_500_000)
    assert again.is_file() and len(list((tmp_path / "images" / "train").iterdir())) == 1  # resumable


def test_heap_scenes_fill_every_ring_and_cut_their_first_tile_on_one(tmp_path: Path) -> None:
    import numpy as np

    from vision.geometry import CANON_PX_PER_MM
    from vision.training.dataset import HEAP_MARBLES, DatasetSpec, generate, heap_layout, ring_tile
    from vision.training.synth import random_layout
    from vision.zones import default_zones, inside

    layout = random_layout(np.random.default_rng(5))
    heaped = heap_layout(layout, 5)
    assert all(HEAP_MARBLES[0] <= len(p.ring) <= HEAP_MARBLES[1] for p in heaped.players)
    assert heaped.display == layout.display and heaped.energy_row == layout.energy_row  # only rings change
    assert heap_layout(layout, 5) == heaped  # deterministic per seed
    zones = default_zones()
    for k in range(20):
        x0, y0 = ring_tile(zones, heaped, 384, np.random.default_rng(k))
        tile_mm = (x0 / CANON_PX_PER_MM, y0 / CANON_PX_PER_MM, 384 / CANON_PX_PER_MM, 384 / CANON_PX_PER_MM)
        assert any(
            inside(tile_mm, zones.seat(p.seat).ring[0] + 50, zones.seat(p.seat).ring[1] + 50)
            for p in heaped.players
        )  # a ring's centre lies in the tile
    generate(DatasetSpec(tmp_path, 1, 0, heaps=True, randomise=2), workers=1, seed_offset=6_600_000)
    rows = (tmp_path / "labels" / "train" / "s7600000_0.txt").read_text().splitlines()
    marbles = [r for r in rows if CLASSES[int(r.split()[0])].startswith("marble_")]
    assert len(marbles) >= HEAP_MARBLES[0]  # the ring tile shows a whole heap


def test_mixed_dataset_yaml_lists_every_set_and_refuses_an_unrendered_one(tmp_path: Path) -> None:
    import yaml

    from vision.errors import DatasetError
    from vision.training.dataset import write_mix_yaml

    sets = [tmp_path / "random", tmp_path / "own"]
    for d in sets:
        for split in ("train", "val"):
            (d / "images" / split).mkdir(parents=True)
    data = yaml.safe_load(write_mix_yaml(tmp_path / "mix.yaml", sets).read_text())
    assert data["train"] == [str((d / "images" / "train").resolve()) for d in sets]
    assert data["val"] == [str((d / "images" / "val").resolve()) for d in sets]
    assert data["names"] == dict(enumerate(CLASSES))
    with pytest.raises(DatasetError, match="missing has no images/train"):
        write_mix_yaml(tmp_path / "bad.yaml", [tmp_path / "missing"])


def test_a_fine_tune_can_freeze_the_backbone() -> None:
    """--freeze reaches ultralytics as its own argument; without it every layer trains."""
    start = Path("models/detector.pt")
    assert _train_args(TrainConfig(data=Path("d.yaml"), start=start, freeze=10))["freeze"] == 10
    assert _train_args(TrainConfig(data=Path("d.yaml"), start=start))["freeze"] is None


@pytest.mark.parametrize(
    "argv",
    [
        ["--freeze", "10"],
        ["--from", "models/detector.pt", "--freeze", "0"],
        ["--from", "models/detector.pt", "--freeze", "22"],
    ],
)
def test_a_freeze_without_weights_or_out_of_range_is_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from referee.app.cli import main

    assert main(["vision", "train", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: train: --freeze")
