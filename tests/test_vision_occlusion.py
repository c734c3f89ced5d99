"""The occlusion stage: the empty table says what hides the zones (vision/occlusion.py)."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from vision.geometry import CANON_PX_PER_MM, rectify
from vision.hands import MASK_PX_PER_MM, MASK_SIZE, mask_boxes_mm
from vision.occlusion import LEARN_KNOWN, LEARN_SAMPLES, LearnedTable, TableBackground, occluders
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
    boxes = [b for o in others for b in mask_boxes_mm(o)]
    assert any(b[0] <= centre_mm[0] <= b[2] and b[1] <= centre_mm[1] <= b[3] for b in boxes), boxes
    x1, y1, x2, y2 = next(b for b in boxes if b[0] <= centre_mm[0] <= b[2])
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


def _sleeve(canon: np.ndarray, y_mm: float, to_mm: float) -> np.ndarray:
    """The table with a sleeve across it from the left edge to ``to_mm`` at height ``y_mm``."""
    out = canon.copy()
    y, x = round(y_mm * CANON_PX_PER_MM), round(to_mm * CANON_PX_PER_MM)
    cv2.rectangle(out, (0, y - 30), (x, y + 30), (150, 60, 40), -1)  # a blue knit, 75 mm wide
    return out


def test_a_learned_table_is_the_median_of_what_was_uncovered(table: tuple) -> None:
    """The table learned from frames with a sleeve passing through: known where nothing was
    detected, unknown under the objects, the sleeve outvoted; then a sleeve the network misses
    joins the palm it marks, as with the empty table."""
    canon, _, dets = table
    learned = LearnedTable()
    nothing = np.zeros(MASK_SIZE[::-1], bool)
    heights = [250.0, 400.0, None, 550.0, 650.0]
    assert len(heights) == LEARN_SAMPLES
    for k, y in enumerate(heights):
        assert learned.background() is None or k >= LEARN_KNOWN
        learned.add(canon if y is None else _sleeve(canon, y, 600.0), dets, nothing)
    bg = learned.background()
    assert bg is not None and learned.frames == LEARN_SAMPLES
    full = TableBackground(canon)
    assert bg.known.all()  # no hand covered anything
    assert np.abs(bg.lab - full.lab).max() < 1e-3  # the sleeve outvoted
    for d in dets:  # the objects are learned too, as objects
        x1, y1, x2, y2 = (round(v / 2) for v in d.box)
        assert bg.objects[y1 + 1 : y2 - 1, x1 + 1 : x2 - 1].all()
    assert 0.3 < (~bg.objects).mean() < 0.95
    changed, _ = bg.changed(canon)
    assert not changed.any()
    # A frame with the sleeve where it never was, the network marking only the hand at its end.
    y_mm, x_mm = 100.0, 450.0  # a row clear of objects from the left edge to past the palm
    frame = _sleeve(canon, y_mm, x_mm)
    cv2.circle(frame, (round(x_mm * CANON_PX_PER_MM), round(y_mm * CANON_PX_PER_MM)), 45, (110, 150, 200), -1)
    palm = np.zeros(MASK_SIZE[::-1], np.uint8)
    cv2.circle(palm, (round(x_mm * MASK_PX_PER_MM), round(y_mm * MASK_PX_PER_MM)), 22, 1, -1)
    got, _ = occluders(bg, frame, palm.astype(bool), dets)
    (box,) = mask_boxes_mm(got)
    assert box[0] < 20 and box[2] >= x_mm + 40  # the sleeve to the edge joined
    unknown = TableBackground.known_where(bg.lab, bg.bgr, np.zeros_like(bg.known))
    alone, _ = occluders(unknown, frame, palm.astype(bool), dets)
    assert np.array_equal(alone, palm.astype(bool))  # where nothing is known, the network alone


def test_a_card_taken_away_from_a_learned_table_hides_nothing(table: tuple) -> None:
    """Where the learned background shows a card, the table seen there once the card is gone
    differs from it, but no hand touches it: a move, not a thing over the table. A hand's pixels
    are not learned."""
    canon, empty, dets = table
    learned = LearnedTable()
    hand = np.zeros(MASK_SIZE[::-1], bool)
    hand[:40, :40] = True  # a hand in the corner in every frame: never learned there
    for _ in range(LEARN_KNOWN):
        learned.add(canon, dets, hand)
    bg = learned.background()
    assert bg is not None and not bg.known[:40, :40].any() and bg.known[200:, 200:].all()
    card = next(d for d in dets if d.cls == "card")
    x1, y1, x2, y2 = (round(v) for v in card.box)
    gone = canon.copy()
    gone[y1:y2, x1:x2] = empty[y1:y2, x1:x2]  # the card taken away: the empty table under it
    rest = [d for d in dets if d is not card]
    _, others = occluders(bg, gone, np.zeros(MASK_SIZE[::-1], bool), rest)
    assert others == []
    _, with_empty = occluders(TableBackground(empty), gone, np.zeros(MASK_SIZE[::-1], bool), rest)
    assert with_empty == []


def test_the_learned_median_is_the_median_of_each_pixels_values() -> None:
    from vision.occlusion import _median

    rng = np.random.default_rng(1)
    samples = rng.random((LEARN_SAMPLES, 30, 40, 3)).astype(np.float32)
    n = rng.integers(0, LEARN_SAMPLES + 1, (30, 40))
    known = n >= LEARN_KNOWN
    got = _median(samples, n, known)
    for y, x in zip(*np.nonzero(known), strict=True):
        assert np.allclose(got[y, x], np.median(samples[: n[y, x], y, x], axis=0))
    assert not got[~known].any()
    full = np.full((30, 40), LEARN_SAMPLES)
    assert np.allclose(_median(samples, full, full > 0), np.median(samples, axis=0))


def test_a_learned_table_takes_canonical_images_only() -> None:
    with pytest.raises(ValueError, match="canonical images"):
        LearnedTable().add(np.zeros((100, 100, 3), np.uint8), [], None)


def test_other_frames_are_the_same_table_and_camera_with_other_arms() -> None:
    """Rendering other frames of a table changes nothing in the frame itself; they differ from
    it only where an arm is (the lamp and camera effects are the frame's)."""
    layout = random_layout(np.random.default_rng(3), 2)
    plain = render_table(layout, 3, RenderSettings(hand_prob=1.0))
    both = render_table(layout, 3, RenderSettings(hand_prob=1.0, other_frames=3))
    assert plain.other_images == () and len(both.other_images) == 3
    assert np.array_equal(plain.image, both.image)
    assert plain.hand_mask is not None
    away = plain.hand_mask == 0  # the canonical table clear of this frame's arm
    for other in both.other_images:
        diff = np.abs(rectify(other, both.homography).astype(int) - rectify(both.image, both.homography))
        assert np.median(diff.max(axis=2)[away]) <= 8  # noise of its own, the same lamp


def test_the_observer_learns_the_table_where_no_empty_table_was_seen() -> None:
    from vision.observe import Observer

    settings = RenderSettings(hand_prob=1.0, other_frames=4, empty_table=True)
    scene = render_table(random_layout(np.random.default_rng(31)), 31, settings)
    assert scene.empty_image is not None
    seats = tuple(p.seat for p in scene.layout.players)
    observer = Observer(seats=seats)
    observer.learn_table()
    assert observer.learned is not None and observer.learned.background() is None
    for other in scene.other_images:
        observer.observe(other)
    assert observer.learned.frames == 4 and observer.learned.background() is not None
    observer.observe(scene.image)
    assert observer.learned.frames == 5
    assert observer.last_hand_mask is not None and observer.last_hand_mask.any()
    observer.learn_empty_table(scene.empty_image, scene.homography)
    observer.observe(scene.image)
    assert observer.learned.frames == 5  # the empty table, once seen, is the background
