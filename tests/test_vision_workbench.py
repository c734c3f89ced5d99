"""The Contrivance Workbench reader (issue 19): geometry, the drawn tiles, rendered truth, the
committed square network on rendered Workbenches, hands, bad input, and a training smoke run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from referee.contrivance.data import BUILDERS, COLUMNS
from referee.observation import WorkbenchObservation
from vision.calibrate import Calibrator
from vision.errors import FrameError, ModelFileError
from vision.training.synth import RenderSettings
from vision.training.tiles import TILE_MM, TILE_PX_PER_MM, own_art, random_art
from vision.training.workbench import (
    HIDDEN_SHARE,
    TileLayout,
    WorkbenchLayout,
    build_dataset,
    export,
    random_workbench,
    render_workbench,
    square_labels,
    train,
)
from vision.workbench import CONTENTS, WORKBENCH, WorkbenchObserver, WorkbenchReader
from vision.zones import default_zones

# Seeds no training set uses (training 5,000,000+, validation 5,900,000+, benchmark 9,300,000+).
SEEDS = range(8_700_000, 8_700_006)


@pytest.fixture(scope="module")
def reader() -> WorkbenchReader:
    return WorkbenchReader()


def test_squares_lie_on_the_table_apart() -> None:
    w, h = default_zones().size
    rects = [WORKBENCH.square(r, c) for r, c in WORKBENCH.squares(6)]
    assert len(rects) == 6 * COLUMNS
    for x, y, sw, sh in rects:
        assert x > 60 and x + sw < w - 60 and y > 60 and y + sh < h - 60  # clear of the markers
    for i, a in enumerate(rects):
        for b in rects[i + 1 :]:
            assert a[0] + a[2] <= b[0] or b[0] + b[2] <= a[0] or a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1]
    assert WORKBENCH.square(4, 1)[1] - WORKBENCH.square(3, 1)[1] == WORKBENCH.pitch + WORKBENCH.mat_gap
    with pytest.raises(ValueError, match="no square row 7 column 1"):
        WORKBENCH.square(7, 1)


def test_tiles_show_their_first_rivet_dot_at_the_top() -> None:
    n = round(TILE_MM * TILE_PX_PER_MM)
    for art in (own_art(), random_art(3)):
        seen = set()
        for b in BUILDERS:
            for double in (False, True):
                img = art.tile(b, double, 4)
                assert img.shape[:2] == (n, n)
                seen.add(img[..., :3].tobytes())
                m = round((1 + art.style.rivet_r) * TILE_PX_PER_MM)  # a Rivet's centre from its edge
                assert img[m, n // 2, :3].max() < 20  # the first Rivet's black dot, on the north edge
                if double:  # the second Rivet, opposite, carries no dot
                    assert img[n - 1 - m, n // 2, :3].max() > 40
        assert len(seen) == 2 * len(BUILDERS)
    values = {own_art().tile("Mechanic", False, v).tobytes() for v in range(7)}
    assert len(values) == 7


def test_rendered_truth_leaves_covered_squares_out() -> None:
    layout = WorkbenchLayout(6, (((1, 1), TileLayout("Engineer", True, 2, 5)),))
    scene = render_workbench(layout, 8_700_100, RenderSettings(hand_prob=1.0), hand_near=1.0)
    covered = {sq for sq, share in scene.hand_share.items() if share > HIDDEN_SHARE}
    assert covered, "the hand aimed at the Workbench covers some square"
    seen = {(s.row, s.column) for s in scene.truth.squares}
    assert seen == set(WORKBENCH.squares(6)) - covered
    if (1, 1) in seen:
        tile = scene.truth.square(1, 1).tile  # type: ignore[union-attr]
        assert (tile.builder, tile.double, tile.facing, tile.value) == ("Engineer", True, 2, 5)
    squares, labels = square_labels(scene)
    for (r, c), y in zip(squares, labels, strict=True):
        assert (CONTENTS[y[0]] == "hand") == ((r, c) in covered)


def _key(s):  # type: ignore[no-untyped-def]
    return None if s.tile is None else (s.tile.builder, s.tile.double, s.tile.facing, s.tile.value)


def test_reader_reads_rendered_workbenches(reader: WorkbenchReader) -> None:
    right = total = 0
    for seed in SEEDS:
        size = (1280, 720) if seed % 2 == 0 else (1920, 1080)
        layout = random_workbench(np.random.default_rng(seed), 6)
        scene = render_workbench(layout, seed, RenderSettings(size, hand_prob=0.0), own_art())
        obs = reader.read(scene.image, Calibrator().update(scene.image).homography, 1.5, 7)
        assert isinstance(obs, WorkbenchObservation) and obs.time == 1.5 and obs.frame == 7
        truth = {(s.row, s.column): _key(s) for s in scene.truth.squares}
        got = {(s.row, s.column): _key(s) for s in obs.squares}
        assert set(got) <= set(truth)
        right += sum(got.get(sq, "unseen") == k for sq, k in truth.items())
        total += len(truth)
        for s in obs.squares:
            assert 0 <= s.confidence <= 1
            if s.tile is not None:
                assert s.tile.builder in BUILDERS and 0 <= s.tile.facing <= 3 and 0 <= s.tile.value <= 6
    assert right / total >= 0.95, f"{right}/{total} squares right"


def test_covered_squares_are_not_seen_not_empty(reader: WorkbenchReader) -> None:
    covered_read_empty = covered = 0
    for seed in SEEDS:
        layout = random_workbench(np.random.default_rng(seed), 6)
        scene = render_workbench(layout, seed, RenderSettings(hand_prob=1.0), own_art(), hand_near=1.0)
        obs = reader.read(scene.image, scene.homography, 0.0)
        for sq, share in scene.hand_share.items():
            if share > 0.3:
                covered += 1
                s = obs.square(*sq)
                covered_read_empty += s is not None and s.tile is None
    assert covered >= 6
    assert covered_read_empty == 0


def test_bad_input_is_one_clear_error(reader: WorkbenchReader, tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match=r"workbench model file .*nope\.onnx not found"):
        WorkbenchReader(tmp_path / "nope.onnx")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a network")
    with pytest.raises(ModelFileError, match="workbench model: cannot load"):
        WorkbenchReader(junk)
    with pytest.raises(ValueError, match="rows must be 3"):
        WorkbenchReader(rows=4)
    with pytest.raises(FrameError, match="blank image"):
        reader.read(np.zeros((720, 1280, 3), np.uint8), np.eye(3))
    frame = np.random.default_rng(0).integers(0, 255, (720, 1280, 3), dtype=np.uint8)
    with pytest.raises(FrameError, match="3x3 homography"):
        reader.read(frame, np.full((3, 3), np.nan))
    with pytest.raises(FrameError, match="wrong size 640x480"):
        WorkbenchObserver().observe(np.random.default_rng(1).integers(0, 255, (480, 640, 3), dtype=np.uint8))


@pytest.mark.slow
def test_training_smoke_run_exports_a_model_the_reader_loads(tmp_path: Path) -> None:
    build_dataset(tmp_path / "train", 2, 5_800_000, per_shard=1)
    build_dataset(tmp_path / "val", 1, 5_800_010)
    best = train(tmp_path / "train", tmp_path / "val", tmp_path / "run", epochs=1, batch=16, threads=1)
    assert 0 <= best["squares"] <= 1
    resumed = train(
        tmp_path / "train", tmp_path / "val", tmp_path / "run", epochs=2, batch=16, threads=1, resume=True
    )
    assert 0 <= resumed["squares"] <= 1
    import torch

    assert torch.load(tmp_path / "run" / "last.pt", weights_only=False)["epoch"] == 1  # epoch 2 ran
    with pytest.raises(FileNotFoundError, match="nothing to resume"):
        train(tmp_path / "train", tmp_path / "val", tmp_path / "other", epochs=1, resume=True)
    out = export(tmp_path / "run" / "best.pt", tmp_path / "w.onnx")
    scene = render_workbench(
        random_workbench(np.random.default_rng(1), 3), 1, replace(RenderSettings(), hand_prob=0)
    )
    obs = WorkbenchReader(out, rows=3).read(scene.image, scene.homography, 0.0)
    assert len(obs.squares) <= 15
    with pytest.raises(ValueError, match="benchmark's held-out range"):
        build_dataset(tmp_path / "bad", 1, 9_300_000)


def test_cli_reads_a_frame_and_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    import cv2

    from referee.app.vision_cli import main

    seed = SEEDS[0]
    scene = render_workbench(
        random_workbench(np.random.default_rng(seed), 3), seed, RenderSettings(hand_prob=0.0), own_art()
    )
    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), scene.image)
    assert main(["workbench", str(frame), "--rows", "3"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert {(s["row"], s["column"]) for s in line["squares"]} <= set(WORKBENCH.squares(3))
    assert line["frame"] == 0
    (tmp_path / "bad.png").write_bytes(b"not an image")
    assert main(["workbench", str(tmp_path / "bad.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "bad.png" in err[0]
