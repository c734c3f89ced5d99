"""Whose arm reaches where, from a hand mask (vision.reaches): the arm's way in says the seat,
the hand's far end the zone. Masks drawn here; the rendered recording is measured by
benchmarks/reaches.py."""

from __future__ import annotations

import cv2
import numpy as np

from referee.observation import REACH_ZONES
from vision.hands import MASK_PX_PER_MM, MASK_SIZE
from vision.reaches import entry_seat, reaches_of, zone_at
from vision.zones import default_zones

ZONES = default_zones()
SEATS = (0, 1, 2)


def arm(mask: np.ndarray, start_mm: tuple[float, float], tip_mm: tuple[float, float]) -> np.ndarray:
    """An arm 70 mm wide from ``start_mm`` to a hand whose fingers end 60 mm past ``tip_mm``."""
    s = np.array(start_mm) * MASK_PX_PER_MM
    t = np.array(tip_mm) * MASK_PX_PER_MM
    d = (t - s) / np.linalg.norm(t - s)
    end = t + d * 60 * MASK_PX_PER_MM
    cv2.line(mask, tuple(map(int, s)), tuple(map(int, end)), 1, max(1, round(70 * MASK_PX_PER_MM)))
    return mask


def blank() -> np.ndarray:
    return np.zeros((MASK_SIZE[1], MASK_SIZE[0]), np.uint8)


def centre(rect: tuple[float, float, float, float]) -> tuple[float, float]:
    return (rect[0] + rect[2] / 2, rect[1] + rect[3] / 2)


def test_an_arm_from_a_seats_side_to_a_deck_is_that_seat_over_the_deck() -> None:
    deck1 = centre(dict(ZONES.decks)[1])
    found = reaches_of(arm(blank(), (250.0, 790.0), deck1).astype(bool), ZONES, SEATS, 0.9)
    assert [(r.seat, r.zone, r.confidence) for r in found] == [(0, "deck/1", 0.9)]
    # the same deck reached from across the table: the top right seat's arm
    found = reaches_of(arm(blank(), (900.0, -30.0), deck1).astype(bool), ZONES, SEATS)
    assert [(r.seat, r.zone) for r in found] == [(1, "deck/1")]


def test_two_arms_are_two_reaches_and_a_hand_cut_off_from_the_edge_has_no_seat() -> None:
    mask = arm(blank(), (850.0, 790.0), centre(ZONES.energy_row))
    slot = next(rect for level, s, rect in ZONES.display if (level, s) == (3, 0))
    mask = arm(mask, (800.0, -30.0), centre(slot))
    found = sorted((r.seat or 0, r.zone) for r in reaches_of(mask.astype(bool), ZONES, SEATS))
    assert found == [(1, "display/3/0"), (2, "energy_row")]
    floating = arm(blank(), (600.0, 400.0), (700.0, 300.0)).astype(bool)
    assert [r.seat for r in reaches_of(floating, ZONES, SEATS)] == [None]
    assert reaches_of(blank().astype(bool), ZONES, SEATS) == ()


def test_zones_and_seats_named_as_the_observation_has_them() -> None:
    for level, rect in ZONES.decks:
        assert zone_at(ZONES, SEATS, centre(rect)) == f"deck/{level}"
    for level, slot, rect in ZONES.display:
        assert zone_at(ZONES, SEATS, centre(rect)) == f"display/{level}/{slot}"
    assert zone_at(ZONES, SEATS, centre(ZONES.seat(2).vp)) == "2/vp"
    assert zone_at(ZONES, SEATS, (150.0, 380.0)) == "table"
    for x in range(0, 1180, 40):
        for y in range(0, 760, 40):
            assert zone_at(ZONES, SEATS, (float(x), float(y))) in REACH_ZONES
    # a shoulder between two seats' sides is nobody's we can tell; far from every seat neither
    assert entry_seat(ZONES, SEATS, (590.0, 860.0)) is None
    assert entry_seat(ZONES, SEATS, (300.0, 860.0)) == 0
    assert entry_seat(ZONES, SEATS, (300.0, -100.0)) is None  # seat 3's side, not in play
