"""VP token values (vision/tokens.py): read from the disc measured in the frame and the box's size,
so that a box drawn at the wrong size (a detector fooled by a printing it never saw) does not
decide alone."""

from __future__ import annotations

import numpy as np
import pytest

from vision.tokens import TOKEN_MM, VP_SPLIT_MM, box_size, measure, token_points, token_size
from vision.training.evaluate import Tally, scene_for_seed
from vision.training.synth import RenderedScene, RenderSettings


@pytest.fixture(scope="module")
def scenes() -> list[RenderedScene]:
    return [scene_for_seed(seed, RenderSettings(hand_prob=0)) for seed in range(8_410_000, 8_410_003)]


def _tokens(scene: RenderedScene) -> list[tuple[int, tuple[float, float, float, float]]]:
    return [(int(o.cls[2]), o.box_mm) for o in scene.objects if o.cls in ("vp1", "vp5") and o.visible]


def _resized(box: tuple[float, float, float, float], size: float) -> tuple[float, float, float, float]:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return (cx - size / 2, cy - size / 2, cx + size / 2, cy + size / 2)


def test_true_boxes_are_read_right_and_the_discs_measured_near_their_size(
    scenes: list[RenderedScene],
) -> None:
    n = 0
    for scene in scenes:
        for points, box in _tokens(scene):
            assert token_points(scene.image, scene.homography, box) == points
            disc = measure(scene.image, scene.homography, ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2))
            if disc is not None:
                assert abs(disc.diameter - TOKEN_MM[points]) < 4.0, (points, disc)
            n += 1
    assert n >= 10  # the scenes hold tokens of both values


def test_a_box_of_the_wrong_size_is_mostly_outvoted_by_the_disc(scenes: list[RenderedScene]) -> None:
    """The failures seen: a 1 boxed 22.5 mm wide (the fine-tune), a 5 boxed 20.5 mm (the committed
    detector on another printing). The box alone reads every one of them wrong; with the disc
    measured, most are read right (45 of these 51 when written: the disc is a partial remedy)."""
    right = Tally()
    for scene in scenes:
        for points, box in _tokens(scene):
            wrong = _resized(box, 22.5 if points == 1 else 20.5)
            assert (box_size(wrong) >= VP_SPLIT_MM) != (points == 5)  # the box alone: wrong
            right.add(token_points(scene.image, scene.homography, wrong) == points)
    assert right.n >= 20 and right.rate >= 0.8, right


def test_without_a_frame_or_an_edge_the_box_decides(scenes: list[RenderedScene]) -> None:
    box = (100.0, 100.0, 118.0, 118.0)
    assert token_size(None, None, box) == pytest.approx(18.0)
    assert token_points(None, None, box) == 1
    assert token_points(None, None, _resized(box, 24.0)) == 5
    blank = np.full((720, 1280, 3), 128, np.uint8)  # nothing there: no edge on any ray
    h = scenes[0].homography
    assert measure(blank, h, (109.0, 109.0)) is None
    assert token_points(blank, h, _resized(box, 24.0)) == 5
