"""Frame -> observation with the committed detector, compared with the rendered ground truth."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.detect import DEFAULT_MODEL, Detector
from vision.errors import FrameError, ModelFileError
from vision.motion import MotionGate
from vision.observe import Observer, strip_confidence
from vision.synth import CANON_SIZE, RenderSettings, random_layout, render_table

# Seeds in a range the training set never used (training starts at 1_000_000).
SEEDS = (8_100_001, 8_100_002, 8_100_003)


@pytest.fixture(scope="module")
def observer() -> Observer:
    return Observer(DEFAULT_MODEL, seats=(0, 1))


@pytest.mark.parametrize("seed", SEEDS)
def test_observation_matches_ground_truth(observer: Observer, seed: int) -> None:
    layout = random_layout(np.random.default_rng(seed), 2)
    scene = render_table(
        layout, seed, RenderSettings(size=[(1280, 720), (1920, 1080)][seed % 2], hand_prob=0)
    )
    obs = observer.observe(scene.image, t=1.0)
    assert strip_confidence(obs) == strip_confidence(scene.truth)
    assert all(0 < s.confidence <= 1 for s in obs.display)


def test_a_hand_makes_its_zones_unseen(observer: Observer) -> None:
    rng = np.random.default_rng(8_200_000)
    for seed in range(8_200_000, 8_200_010):
        layout = random_layout(rng, 2)
        scene = render_table(layout, seed, RenderSettings(hand_prob=1.0))
        covered = scene.truth.energy_row is None or any(p.gizmos is None for p in scene.truth.players)
        if covered:
            break
    else:
        pytest.fail("no rendered hand covered a zone")
    obs = observer.observe(scene.image, t=0.0)
    assert obs.extra["covered"], "the detector saw no hand"
    if scene.truth.energy_row is None:
        assert obs.energy_row is None
    for p in scene.truth.players:
        if p.gizmos is None:
            seen = obs.player(p.seat)
            assert seen is not None and seen.gizmos is None


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (np.zeros((0, 0, 3), np.uint8), "empty"),
        (np.random.default_rng(0).integers(0, 255, (480, 640, 3), dtype=np.uint8), "wrong size 640x480"),
        (np.full((720, 1280, 3), 128, np.uint8), "blank"),
        (np.zeros((720, 1280), np.uint8) + 1, "8-bit BGR"),
        ("frame.png", "numpy image"),
    ],
)
def test_bad_frames_are_refused_clearly(observer: Observer, frame: object, message: str) -> None:
    with pytest.raises(FrameError, match=message):
        observer.observe(frame)  # type: ignore[arg-type]


def test_missing_model_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match=r"model file .*nothing\.onnx not found"):
        Observer(tmp_path / "nothing.onnx")
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"\x00garbage")
    with pytest.raises(ModelFileError, match="cannot load"):
        Detector(broken)


def test_detector_refuses_a_wrong_canonical_size() -> None:
    det = Detector(DEFAULT_MODEL)
    with pytest.raises(FrameError, match="canonical image"):
        det.detect(np.zeros((CANON_SIZE[1] // 2, CANON_SIZE[0], 3), np.uint8))


def test_still_frame_gate_fires_once_per_settled_state() -> None:
    layout = random_layout(np.random.default_rng(5), 2)
    still = render_table(layout, 5, RenderSettings(hand_prob=0)).image
    moving = render_table(layout, 5, RenderSettings(hand_prob=1.0)).image
    gate = MotionGate(settle=3)
    fired = [gate.update(f) for f in [still] * 6 + [moving, still] + [still] * 4]
    # First state settles after 3 still frames, fires once; the hand's motion re-arms the gate.
    assert fired == [False, False, False, True, False, False, False, False, False, False, True, False]


def test_stream_processing_skips_moving_frames(observer: Observer) -> None:
    layout = random_layout(np.random.default_rng(6), 2)
    frame = render_table(layout, 6, RenderSettings(hand_prob=0)).image
    observer.gate = MotionGate(settle=2)
    results = [observer.process(frame, t=float(i)) for i in range(4)]
    assert [r is not None for r in results] == [False, False, True, False]
