"""The occlusion stage: the empty table says what hides the zones (vision/occlusion.py)."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from vision.geometry import CANON_PX_PER_MM, rectify
from vision.hands import MASK_PX_PER_MM, MASK_SIZE, mask_box_mm
from vision.occlusion import TableBackground, occluders
from vision.training.evaluate import HELDOUT, oracle_detections, scene_for_seed
from vision.training.synth import RenderSettings, random_layout, render_table


@pytest.fixture(scope="module")
def table() -> tuple[np.ndarray, np.ndarray, list]:
    """A table without a hand: its canonical image, its empty view and its true detections."""
    scene = scene_for_seed(8_800_001, replace(HELDOUT, hand_prob=0.0, empty_table=True))
    assert scene.empty_image is not None and not scene.hands_mm
    canon = rectify(scene.image, scene.homography)
    return canon, rectify(scene.empty_image, scene.homography), oracle_detections(scene)


def test_the_empty_view_is_the_same_table_and_camera() -> None:
    """Rendering the empty view changes nothing in the frame itself (same seed, same image)."""
    layout = random_layout(np.random.default_rng(3), 2)
    plain = render_table(layout, 3, RenderSettings(hand_prob=0))
    both = render_table(layout, 3, RenderSettings(hand_prob=0, empty_table=True))
    assert plain.empty_image is None and both.empty_image is not None
    assert np.array_equal(plain.image, both.image)


def test_a_table_of_known_objects_hides_nothing(table: tuple) -> None:
    canon, empty, dets = table
    hand = np.zeros(MASK_SIZE[::-1], bool)
    got, others = occluders(TableBackground(empty), canon, hand, dets)
    assert not got.any() and others == []


def _free_spot(dets: list, half_mm: float) -> tuple[float, float]:
    """A point of the table with no detected object within ``half_mm`` (plus the stage's margin)."""
    m = (half_mm + 6.0) * CANON_PX_PER_MM
    for y in np.arange(200.0, 700.0, 10.0):
        for x in np.arange(100.0, 1100.0, 10.0):
            px, py = x * CANON_PX_PER_MM, y * CANON_PX_PER_MM
            if not any(d.box[0] - m < px < d.box[2] + m and d.box[1] - m < py < d.box[3] + m for d in dets):
                return float(x), float(y)
    raise AssertionError("no free spot on the test table")


def test_a_cup_nothing_explains_hides_the_table_under_it(table: tuple) -> None:
    """A cup on the bare table (where no detection explains a change) hides what is under it.
    (Over cards, only its part outside their boxes is found: the hand network covers hands there.)"""
    canon, empty, dets = table
    cup = canon.copy()
    radius_mm = 35.0
    centre_mm = _free_spot(dets, radius_mm)
    c = tuple(round(v * CANON_PX_PER_MM) for v in centre_mm)
    cv2.circle(cup, c, round(radius_mm * CANON_PX_PER_MM), (30, 90, 200), -1)
    _, others = occluders(TableBackground(empty), cup, np.zeros(MASK_SIZE[::-1], bool), dets)
    boxes = [mask_box_mm(o) for o in others]
    assert any(
        b is not None and b[0] <= centre_mm[0] <= b[2] and b[1] <= centre_mm[1] <= b[3] for b in boxes
    ), boxes
    x1, y1, x2, y2 = next(b for b in boxes if b is not None and b[0] <= centre_mm[0] <= b[2])
    assert abs((x2 - x1) - 2 * radius_mm) < 8 and abs((y2 - y1) - 2 * radius_mm) < 8


def test_a_hand_where_the_table_looks_empty_is_dropped_and_a_real_one_kept(table: tuple) -> None:
    canon, empty, dets = table
    bg = TableBackground(empty)
    false_hand = np.zeros(MASK_SIZE[::-1], bool)
    cx, cy = _free_spot(dets, 40.0)
    y, x = round(cy * MASK_PX_PER_MM), round(cx * MASK_PX_PER_MM)
    false_hand[y - 20 : y + 20, x - 30 : x + 30] = True  # marked, but the table there is as it was
    got, _ = occluders(bg, canon, false_hand, dets)
    assert not got.any()
    arm = canon.copy()
    cv2.rectangle(arm, (x * 2 - 60, y * 2 - 40), (x * 2 + 60, y * 2 + 40), (120, 160, 210), -1)
    got, _ = occluders(bg, arm, false_hand, dets)
    assert got[false_hand].all()
