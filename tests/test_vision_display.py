"""Cards kept in a slot nothing else fills (vision/display.py), on a rendered table's true boxes: a
card the detector was unsure of is kept where the Display (or a seat's Starting Gizmo) explains
it, never where a card already is, a hand covers the slot, or the box is no card's size."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from vision.detect import Detection
from vision.display import display_cards
from vision.geometry import CANON_PX_PER_MM, rectify
from vision.training.evaluate import oracle_detections
from vision.training.synth import RenderedScene, RenderSettings, random_layout, render_table
from vision.zones import COLUMN_ORDER, COLUMN_PITCH, SeatZones, default_zones, inside

ZONES = default_zones()


@pytest.fixture(scope="module")
def scene() -> RenderedScene:
    return render_table(random_layout(np.random.default_rng(5)), 5, RenderSettings(hand_prob=0))


def _display(dets: list[Detection]) -> list[Detection]:
    """The true whole cards lying in a Display slot."""
    return [d for d in dets if d.cls == "card" and any(inside(r, *d.center_mm) for _, _, r in ZONES.display)]


def _split(scene: RenderedScene) -> tuple[list[Detection], Detection]:
    dets = oracle_detections(scene)
    shown = _display(dets)
    assert len(shown) >= 3, "the scene must show a Display"
    return [d for d in dets if d is not shown[0]], shown[0]


def test_an_unsure_card_in_an_empty_slot_is_kept(scene: RenderedScene) -> None:
    others, card = _split(scene)
    unsure = replace(card, confidence=0.2)
    assert display_cards(ZONES, others, [unsure]) == [unsure]


def test_the_surest_of_two_boxes_in_a_slot_is_kept(scene: RenderedScene) -> None:
    others, card = _split(scene)
    weak, surer = replace(card, confidence=0.12), replace(card, confidence=0.3)
    assert display_cards(ZONES, others, [weak, surer]) == [surer]


def test_no_card_is_added_where_one_is_kept(scene: RenderedScene) -> None:
    dets = oracle_detections(scene)
    shown = _display(dets)
    unsure = [replace(d, confidence=0.2) for d in shown]
    assert display_cards(ZONES, dets, unsure) == []


def test_a_box_of_no_cards_size_is_not_kept(scene: RenderedScene) -> None:
    others, card = _split(scene)
    x1, y1, x2, y2 = card.box
    mid, half = (y1 + y2) / 2, 20 * CANON_PX_PER_MM  # 40 mm high round the card's centre: no card
    short = Detection("card", 0.3, (x1, mid - half, x2, mid + half))
    assert display_cards(ZONES, others, [short]) == []


def test_a_slot_under_a_hand_is_left_alone(scene: RenderedScene) -> None:
    others, card = _split(scene)
    x1, y1, x2, y2 = card.box_mm
    hand = (x1 + 10, y1 + 10, x2 + 60, y2 + 60)
    assert display_cards(ZONES, others, [replace(card, confidence=0.2)], [hand]) == []


def test_only_whole_card_boxes_count(scene: RenderedScene) -> None:
    others, card = _split(scene)
    assert display_cards(ZONES, others, [replace(card, cls="card_back", confidence=0.2)]) == []


def test_a_box_on_bare_table_is_not_kept_where_the_frame_says_so(scene: RenderedScene) -> None:
    """Given the canonical frame, a card box whose inside is all table is refused; the same box
    on the card the frame shows is kept."""
    others, card = _split(scene)
    canon = rectify(scene.image, scene.homography)
    unsure = replace(card, confidence=0.2)
    assert display_cards(ZONES, others, [unsure], canon=canon) == [unsure]
    x1, y1, x2, y2 = (round(v) for v in card.box)
    m = 10  # the table round the card, beyond its shadow
    bare = canon.copy()
    bare[y1 - m : y2 + m, x1 - m : x2 + m] = np.median(
        np.concatenate(
            [
                canon[y1 - 2 * m : y1 - m, x1:x2].reshape(-1, 3),
                canon[y2 + m : y2 + 2 * m, x1:x2].reshape(-1, 3),
            ]
        ),
        axis=0,
    ).astype(np.uint8)
    assert display_cards(ZONES, others, [unsure], canon=bare) == []
    assert display_cards(ZONES, others, [unsure]) == [unsure]  # no frame, no table test


def _starting_gizmo_alone(scene: RenderedScene) -> tuple[list[Detection], Detection, SeatZones]:
    """The true boxes without a seat's Starting Gizmo, which lies alone in its file column."""
    dets = oracle_detections(scene)
    for player in scene.layout.players:
        sz = ZONES.seat(player.seat)
        here = [d for d in dets if d.cls.startswith("card") and inside(sz.column("file"), *d.center_mm)]
        if len(here) == 1 and here[0].cls == "card":
            return [d for d in dets if d is not here[0]], here[0], sz
    raise AssertionError("the scene must show a Starting Gizmo alone in its file column")


def test_an_unsure_starting_gizmo_is_kept_in_its_file_column(scene: RenderedScene) -> None:
    """The file column always holds its seat's Starting Gizmo: with nothing else there, a less
    sure whole card is kept there for the seats in play, as in a Display slot."""
    others, gizmo, sz = _starting_gizmo_alone(scene)
    unsure = replace(gizmo, confidence=0.3)
    assert display_cards(ZONES, others, [unsure], seats=[sz.seat]) == [unsure]
    assert display_cards(ZONES, others, [unsure]) == []  # not a seat in play: not a slot
    x1, y1, x2, y2 = gizmo.box_mm
    assert display_cards(ZONES, others, [unsure], [(x1 - 5, y1 - 5, x2 + 5, y2 + 5)], seats=[sz.seat]) == []
    kept = [*others, replace(gizmo, confidence=0.9)]
    assert display_cards(ZONES, kept, [unsure], seats=[sz.seat]) == []  # the column is not empty


def test_a_seats_columns_tile_its_gizmos_zone() -> None:
    """Each column is where the pipeline reads a card's type from its seat-local x."""
    for sz in ZONES.seats:
        x, y, w, h = sz.gizmos
        rects = [sz.column(name) for name in COLUMN_ORDER]
        assert sum(r[2] for r in rects) == pytest.approx(w)
        assert min(r[0] for r in rects) == pytest.approx(x)
        assert all(r[1] == y and r[3] == h for r in rects)
        for i, (rx, _, rw, _) in enumerate(rects):
            lx, _ = sz.to_local(rx + rw / 2, y + h / 2)
            assert int(lx // COLUMN_PITCH) == i
