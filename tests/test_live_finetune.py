"""Self-labelled frames and fine-tuning: a tiny one-epoch run on a handful of saved frames."""

from __future__ import annotations

import random
from pathlib import Path

import cv2
import pytest

from referee.app.pipeline import FrameSaver
from referee.gizmos import COLORS, new_game, resolve_chance
from vision.geometry import CANON_SIZE
from vision.training.evaluate import oracle_detections
from vision.training.finetune import (
    FinetuneConfig,
    FinetuneError,
    finetune,
    read_labels,
    saved_frames,
    tile_offsets,
)
from vision.training.recording import layout_of
from vision.training.synth import RenderSettings, render_table


def _save_handful(folder: Path, count: int = 4) -> None:
    """Frames a referee accepted: rendered setups, seen perfectly, agreeing with their state."""
    from vision.observe import Assembler

    saver = FrameSaver(folder, prefix="game")
    for seed in range(count):
        state = resolve_chance(new_game(3), random.Random(seed))
        row = [c for i, c in enumerate(COLORS) for _ in range(state.row[i])]
        scene = render_table(layout_of(state, row), 100 + seed, RenderSettings(hand_prob=0.0))
        dets = oracle_detections(scene)
        obs = Assembler().assemble(scene.image, scene.homography, dets, (0, 1, 2), 0.0, seed)
        assert saver.offer(scene.image, scene.homography, dets, obs, state) is not None


def test_tiles_cover_the_whole_table() -> None:
    import numpy as np

    for tile in (256, 384, 640):
        covered = np.zeros((CANON_SIZE[1], CANON_SIZE[0]), bool)
        for x, y in tile_offsets(tile):
            assert x >= 0 and y >= 0 and x + min(tile, CANON_SIZE[0]) <= CANON_SIZE[0]
            covered[y : y + tile, x : x + tile] = True
        assert covered.all()


def test_bad_saved_folders_are_named(tmp_path: Path) -> None:
    with pytest.raises(FinetuneError, match=r"not a folder written by 'run --save-frames'"):
        saved_frames([tmp_path])
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    with pytest.raises(FinetuneError, match="no saved frames"):
        saved_frames([tmp_path])
    cv2.imwrite(str(tmp_path / "images" / "a.jpg"), cv2.UMat(8, 8, cv2.CV_8UC3).get())
    with pytest.raises(FinetuneError, match="has no label file"):
        saved_frames([tmp_path])
    bad = tmp_path / "labels" / "a.txt"
    bad.write_text("3 0.5 0.5 0.1\n")
    with pytest.raises(FinetuneError, match=r"a\.txt:1"):
        read_labels(bad)


@pytest.mark.slow
def test_finetune_one_epoch_on_a_handful_of_saved_frames(tmp_path: Path) -> None:
    import torch

    from vision.detect import Detector
    from vision.training.train import smoke

    # A detector to start from, marked: a seeded fresh initialisation is nearly the one-epoch
    # smoke model, so a shifted first layer is what shows the weights were carried over.
    ckpt = torch.load(smoke(tmp_path / "smoke", threads=2), map_location="cpu", weights_only=False)
    ckpt["model"].model[0].conv.weight.data += 0.5
    base = tmp_path / "base.pt"
    torch.save(ckpt, base)
    saved = tmp_path / "saved"
    _save_handful(saved)
    cfg = FinetuneConfig(
        saved=(saved,),
        out=tmp_path / "ft",
        base=base,
        epochs=1,
        scenes=2,
        imgsz=256,
        batch=4,
        workers=1,
        val_every=4,
    )
    onnx = finetune(cfg)
    data = tmp_path / "ft" / "data"
    per_frame = len(tile_offsets(256))
    train = sorted((data / "images" / "train").glob("saved_*"))
    val = sorted((data / "images" / "val").glob("saved_*"))
    assert len(train) == 3 * per_frame and len(val) == per_frame  # every 4th saved frame validates
    assert len(list((data / "images" / "train").glob("s*_*.jpg"))) > len(train)  # plus rendered tables
    assert any(read_labels(p) for p in (data / "labels" / "train").glob("saved_*.txt"))
    last = tmp_path / "ft" / "runs" / "finetune" / "weights" / "last.pt"
    assert last.is_file()
    # Fine-tuned from the base, not re-initialised: a few Adam steps at lr 0.0005 move a weight
    # by a few thousandths at most.

    def first_conv(p: Path) -> torch.Tensor:
        return torch.load(p, map_location="cpu", weights_only=False)["model"].model[0].conv.weight.float()

    assert torch.allclose(first_conv(base), first_conv(last), atol=0.02)
    detector = Detector(onnx)  # the export runs on the canonical frame, torch-free
    image = cv2.imread(str(next((saved / "images").glob("*.jpg"))))
    assert isinstance(detector.detect(image), list)
    # a second run reuses the tiles and scenes already written (resumable dataset)
    before = {p: p.stat().st_mtime_ns for p in train}
    from vision.training.finetune import build_dataset

    build_dataset(cfg)
    assert {p: p.stat().st_mtime_ns for p in train} == before
    with pytest.raises(FinetuneError, match="has finished"):  # nothing left to resume
        finetune(cfg, resume=True)


def test_resume_without_a_run_is_a_clear_error(tmp_path: Path) -> None:
    from vision.errors import ModelFileError

    cfg = FinetuneConfig(saved=(tmp_path,), out=tmp_path / "ft")
    with pytest.raises(ModelFileError, match="no interrupted run"):
        finetune(cfg, resume=True)
    with pytest.raises(ModelFileError, match="base weights"):
        finetune(FinetuneConfig(saved=(tmp_path,), out=tmp_path / "ft", base=tmp_path / "none.pt"))
