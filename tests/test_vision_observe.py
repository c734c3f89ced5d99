"""Frame -> observation with the committed detector, compared with the rendered ground truth."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from referee.app.settings import Settings
from referee.observation import Observation
from vision.detect import BACKENDS, Detection, Detector
from vision.errors import FrameError, ModelFileError
from vision.geometry import CANON_PX_PER_MM, CANON_SIZE, rectify
from vision.heaps import RING_CROP_PX
from vision.motion import MotionGate
from vision.observe import Observer
from vision.training.evaluate import Tally, content, differences, iou, match, scene_for_seed
from vision.training.synth import RenderedScene, RenderSettings, random_layout, render_table


def detector_file() -> Path:
    """The committed detector, or ``$GIZMOS_DETECTOR`` (a checkpoint in training), as the CLI takes it."""
    return Settings.from_env().detector_file()


# Seeds in a range the training set never used (training starts at 1_000_000).
SEEDS = (8_100_001, 8_100_002, 8_100_003)


@pytest.fixture(scope="module")
def observer() -> Observer:
    return Observer(detector_file(), seats=(0, 1))


def _seats(scene: RenderedScene) -> tuple[int, ...]:
    return tuple(p.seat for p in scene.layout.players)


@pytest.fixture(scope="module")
def scenes() -> list[RenderedScene]:
    """Tables of 2-4 players without hands, at both camera resolutions."""
    return [scene_for_seed(seed, RenderSettings(hand_prob=0)) for seed in SEEDS]


def test_detector_finds_the_objects(observer: Observer, scenes: list[RenderedScene]) -> None:
    found, right = Tally(), Tally()
    for scene in scenes:
        _, dets, _ = observer.detect(scene.image)
        truth = [(o.cls, tuple(v * CANON_PX_PER_MM for v in o.box_mm)) for o in scene.objects if o.visible]
        pairs = match(dets, truth, same_class=True)
        hit = {t for _, t in pairs if t is not None}
        for i in range(len(truth)):
            found.add(i in hit)
        for _, t in pairs:
            right.add(t is not None)
    assert found.n > 150
    assert found.rate >= 0.95, f"recall {found}"
    assert right.rate >= 0.95, f"precision {right}"


def test_cards_on_detected_boxes_are_identified(observer: Observer, scenes: list[RenderedScene]) -> None:
    ident = Tally()
    for scene in scenes:
        observer.observe(scene.image, t=0.0, seats=_seats(scene))
        truth = [o for o in scene.objects if o.visible and o.card is not None]
        for seen, card in observer.assembler.last_cards:
            box = tuple(v * CANON_PX_PER_MM for v in seen.box)
            o = max(truth, key=lambda o: iou(box, tuple(v * CANON_PX_PER_MM for v in o.box_mm)))
            ident.add(card == o.card)
    assert ident.n > 40
    assert ident.rate >= 0.97, ident


@pytest.mark.parametrize("index", range(len(SEEDS)))
def test_observation_matches_ground_truth(
    observer: Observer, scenes: list[RenderedScene], index: int
) -> None:
    scene = scenes[index]
    obs = observer.observe(scene.image, t=1.0, seats=_seats(scene))
    assert content(obs) == content(scene.truth), differences(obs, scene.truth)
    assert all(0 < s.confidence <= 1 for s in obs.display)
    assert Observation.from_json(obs.to_json()) == obs  # valid in the shared format


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
    for backend in BACKENDS:
        with pytest.raises(ModelFileError, match="cannot load"):
            Detector(broken, backend)
    with pytest.raises(ModelFileError, match="unknown backend 'tensorrt'"):
        Detector(detector_file(), "tensorrt")


def test_every_backend_finds_the_same_objects() -> None:
    scene = scene_for_seed(9_000_001)
    canon = rectify(scene.image, scene.homography)
    found = {b: Detector(detector_file(), b).detect(canon, conf=0.35) for b in BACKENDS}
    reference = found["onnxruntime"]
    assert len(reference) > 50  # a whole table: cards, bands, marbles, tokens
    for backend, dets in found.items():
        assert len(dets) == len(reference), backend
        for d in dets:  # the same object, within a pixel (float rounding differs by backend)
            assert any(
                r.cls == d.cls and max(abs(a - b) for a, b in zip(r.box, d.box, strict=True)) < 1.0
                for r in reference
            ), (backend, d)


def test_every_backend_runs_the_committed_file_on_a_ring_crop_too() -> None:
    """``vision export`` writes one file of any input size: every backend loads it at the heap
    stage's ring crop (vision/heaps.py) and finds the same marbles there as on the whole frame."""
    scene = scene_for_seed(9_000_001)
    canon = rectify(scene.image, scene.homography)
    x0, y0 = 300, 400  # a crop round seat 0's ring (328-408, 445-525 px)
    crop = np.ascontiguousarray(canon[y0 : y0 + RING_CROP_PX, x0 : x0 + RING_CROP_PX])
    inner = (x0 + 16, y0 + 16, x0 + RING_CROP_PX - 16, y0 + RING_CROP_PX - 16)  # clear of the crop's edge

    def marbles(dets: list[Detection], dx: int, dy: int) -> list[tuple[str, tuple[float, ...]]]:
        boxes = [(d.cls, (d.box[0] + dx, d.box[1] + dy, d.box[2] + dx, d.box[3] + dy)) for d in dets]
        return sorted(
            (c, b)
            for c, b in boxes
            if c.startswith("marble_")
            and inner[0] < b[0]
            and b[2] < inner[2]
            and inner[1] < b[1]
            and b[3] < inner[3]
        )

    whole = marbles(Detector(detector_file()).detect(canon, conf=0.35), 0, 0)
    assert len(whole) >= 3  # the ring's marbles
    for backend in BACKENDS:
        det = Detector(detector_file(), backend, input_hw=(RING_CROP_PX, RING_CROP_PX))
        got = marbles(det.detect(crop, conf=0.35), x0, y0)
        assert [c for c, _ in got] == [c for c, _ in whole], backend
        for (_, a), (_, b) in zip(got, whole, strict=True):  # the same marble, within 2 px
            assert max(abs(u - v) for u, v in zip(a, b, strict=True)) < 2.0, backend
        with pytest.raises(FrameError, match="canonical image"):
            det.detect(canon)


def test_detector_refuses_a_wrong_canonical_size() -> None:
    det = Detector(detector_file())
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


def test_still_frame_gate_lets_a_burst_through_and_is_rearmed() -> None:
    """The live referee's gate: ``burst`` settled frames per still spell, and another burst after
    ``rearm()`` (a sensor event) even though nothing moved."""
    layout = random_layout(np.random.default_rng(5), 2)
    still = render_table(layout, 5, RenderSettings(hand_prob=0)).image
    moving = render_table(layout, 5, RenderSettings(hand_prob=1.0)).image
    gate = MotionGate(settle=2, burst=3)
    fired = [gate.update(f) for f in [still] * 7]
    assert fired == [False, False, True, True, True, False, False]
    assert gate.fired
    gate.rearm()
    assert not gate.fired
    fired = [gate.update(f) for f in [still] * 4 + [moving] + [still] * 4]
    assert fired == [True, True, True, False, False, False, False, True, True]


def test_stream_processing_skips_moving_frames(observer: Observer) -> None:
    layout = random_layout(np.random.default_rng(6), 2)
    frame = render_table(layout, 6, RenderSettings(hand_prob=0)).image
    observer.gate = MotionGate(settle=2)
    results = [observer.process(frame, t=float(i)) for i in range(4)]
    assert [r is not None for r in results] == [False, False, True, False]
