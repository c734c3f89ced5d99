"""Top bands kept where a stack puts them (vision/stacks.py), on a rendered table's true boxes:
a band the detector was unsure of is kept when a card was laid on it, never where nothing
explains it."""

from __future__ import annotations

import numpy as np
import pytest

from vision.detect import Detection
from vision.geometry import CANON_PX_PER_MM, rectify
from vision.stacks import stack_bands
from vision.training.evaluate import oracle_detections
from vision.training.synth import RenderedScene, RenderSettings, random_layout, render_table
from vision.zones import default_zones, inside

ZONES = default_zones()


@pytest.fixture(scope="module")
def scene() -> RenderedScene:
    return render_table(random_layout(np.random.default_rng(3)), 3, RenderSettings(hand_prob=0))


def _seats(scene: RenderedScene) -> tuple[int, ...]:
    return tuple(p.seat for p in scene.layout.players)


def _stacked_bands(dets: list[Detection]) -> list[Detection]:
    """The true top bands lying in a seat's gizmos or Archive."""
    return [
        d
        for d in dets
        if d.cls == "card_band"
        and any(inside(r, *d.center_mm) for sz in ZONES.seats for r in (sz.gizmos, sz.archive))
    ]


def _unsure(d: Detection) -> Detection:
    return Detection(d.cls, 0.2, d.box)


def test_a_band_the_detector_was_unsure_of_is_kept(scene: RenderedScene) -> None:
    canon = rectify(scene.image, scene.homography)
    dets = oracle_detections(scene)
    bands = _stacked_bands(dets)
    assert len(bands) >= 3
    for band in bands:
        kept = [d for d in dets if d is not band]
        low = [_unsure(band)]
        assert stack_bands(canon, ZONES, kept, low, _seats(scene)) == low


def test_a_whole_column_of_missed_bands_is_found_from_the_bottom_up(scene: RenderedScene) -> None:
    canon = rectify(scene.image, scene.homography)
    dets = oracle_detections(scene)
    bands = _stacked_bands(dets)
    low = [_unsure(b) for b in bands]
    kept = [d for d in dets if all(d is not b for b in bands)]
    assert len(stack_bands(canon, ZONES, kept, low, _seats(scene))) == len(bands)


def test_nothing_is_kept_that_the_stack_does_not_explain(scene: RenderedScene) -> None:
    canon = rectify(scene.image, scene.homography)
    dets = oracle_detections(scene)
    band = _stacked_bands(dets)[0]
    seats = _seats(scene)
    # the same band twice: already kept
    assert stack_bands(canon, ZONES, dets, [_unsure(band)], seats) == []
    # a seat not in play, and a hand over the zone
    kept = [d for d in dets if d is not band]
    others = tuple(s for s in seats if not any(inside(r, *band.center_mm) for r in _areas(s)))
    assert stack_bands(canon, ZONES, kept, [_unsure(band)], others) == []
    cx, cy = band.center_mm
    hand = (cx - 30, cy - 30, cx + 30, cy + 30)
    assert stack_bands(canon, ZONES, kept, [_unsure(band)], seats, hidden=[hand]) == []
    # moved off its stack: its lower edge meets no card's upper edge
    shift = 40 * CANON_PX_PER_MM
    x0, y0, x1, y1 = band.box
    adrift = Detection("card_band", 0.2, (x0, y0 - shift, x1, y1 - shift))
    assert stack_bands(canon, ZONES, kept, [adrift], seats) == []


def _areas(seat: int) -> tuple[tuple[float, float, float, float], ...]:
    sz = ZONES.seat(seat)
    return (sz.gizmos, sz.archive)
