"""Card boxes on bare table (vision/plausible.py): a gap between two cards on grained wood is
dropped, a card on the same wood is kept, and no true card of a rendered table is dropped."""

from __future__ import annotations

import numpy as np
import pytest

from vision.detect import Detection
from vision.geometry import CANON_PX_PER_MM, rectify
from vision.plausible import INSET, SURE, bare_table_cards, on_bare_table, table_like
from vision.training.evaluate import oracle_detections
from vision.training.synth import RenderSettings, random_layout, render_table

CARD_PX = (int(63 * CANON_PX_PER_MM), int(88 * CANON_PX_PER_MM))


def grained_wood(height: int = 300, width: int = 400, seed: int = 0) -> np.ndarray:
    """A red wood with horizontal grain and sensor noise, like the tables the fine-tunes saw."""
    rng = np.random.default_rng(seed)
    rows = 150 + 25 * np.sin(np.arange(height) / 3.0) + rng.normal(0, 4, height)
    table = np.zeros((height, width, 3), np.float32)
    table[..., 2] = rows[:, None]
    table[..., 1] = rows[:, None] * 0.3
    table[..., 0] = rows[:, None] * 0.25
    table += rng.normal(0, 2, table.shape)
    return np.clip(table, 0, 255).astype(np.uint8)


def with_card(table: np.ndarray, x: int, y: int) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """The table with a light card at (x, y) showing a dark title and a coloured picture."""
    out = table.copy()
    w, h = CARD_PX
    out[y : y + h, x : x + w] = (225, 235, 240)
    out[y + 6 : y + 10, x + 6 : x + w - 6] = (40, 40, 40)
    out[y + 20 : y + 50, x + 10 : x + w - 10] = (60, 160, 90)
    return out, (float(x), float(y), float(x + w), float(y + h))


def test_a_box_on_bare_wood_is_all_table_and_a_card_is_not() -> None:
    table = grained_wood()
    canon, card = with_card(table, 40, 100)
    gap = (card[2] + 10, card[1], card[2] + 10 + CARD_PX[0], card[3])  # a card-sized gap beside it
    share_gap = table_like(canon, gap, [card])
    share_card = table_like(canon, card, [gap])
    assert share_gap is not None and share_gap >= 0.99
    assert share_card is not None and share_card < 0.5
    assert on_bare_table(canon, gap, 0.5, [card])
    assert not on_bare_table(canon, card, 0.5, [gap])
    assert not on_bare_table(canon, gap, SURE, [card])  # a sure box is never judged


def test_a_box_hemmed_in_by_cards_is_not_judged() -> None:
    canon = grained_wood()
    box = (100.0, 100.0, 150.0, 170.0)
    around = [
        (90.0, 90.0, 160.0, 100.0),
        (90.0, 170.0, 160.0, 180.0),
        (90.0, 90.0, 100.0, 180.0),
        (150.0, 90.0, 160.0, 180.0),
    ]
    assert table_like(canon, box, around) is None
    assert not on_bare_table(canon, box, 0.4, around)


def test_a_band_box_below_a_card_is_judged_by_its_own_part() -> None:
    """A band box on the gap below a card takes in the card's dark lower edge: what the card's own
    box covers is the card's, the rest is table. A true band, partly under the card laid on it,
    is still its print."""
    table = grained_wood()
    canon, card = with_card(table, 40, 40)
    band_h = int(20 * CANON_PX_PER_MM)
    canon[int(card[3]) - 2 : int(card[3]), int(card[0]) : int(card[2])] = (20, 20, 20)  # its edge
    gap = (card[0], card[3] - 6, card[2], card[3] - 6 + band_h)
    assert gap[1] + INSET * band_h < card[3] - 2  # the card's edge lies inside what is judged
    assert on_bare_table(canon, gap, 0.5, [card])
    # a true band: the top of a card whose next card is laid 2 px over its lower edge
    canon2, lower = with_card(table, 40, 40 + band_h - 2)
    band = (lower[0], 40.0, lower[2], 40.0 + band_h)
    canon2[40 : 40 + band_h - 2, int(band[0]) : int(band[2])] = (225, 235, 240)
    canon2[46:50, int(band[0]) + 6 : int(band[2]) - 6] = (40, 40, 40)
    assert not on_bare_table(canon2, band, 0.5, [lower])
    # a box all but covered by another (a duplicate) has nothing of its own: it is judged whole
    assert not on_bare_table(canon, card, 0.5, [card])


def test_only_doubtful_card_boxes_are_dropped() -> None:
    table = grained_wood()
    canon, card = with_card(table, 40, 100)
    gap = (card[2] + 10, card[1], card[2] + 10 + CARD_PX[0], card[3])
    dets = [
        Detection("card", 0.95, card),
        Detection("card", 0.5, gap),
        Detection("card_back", 0.5, gap),  # card backs are not judged here
        Detection("marble_red", 0.5, (10.0, 10.0, 22.0, 22.0)),
    ]
    assert bare_table_cards(canon, dets) == [dets[1]]


@pytest.mark.parametrize("seed", [3, 17])
def test_no_true_card_of_a_rendered_table_is_dropped(seed: int) -> None:
    """Even as unsure as the least sure box dropped on development frames, a rendered table's
    true cards and top bands show more than the table round them."""
    scene = render_table(random_layout(np.random.default_rng(seed)), seed, RenderSettings(hand_prob=0))
    canon = rectify(scene.image, scene.homography)
    dets = [
        Detection(d.cls, 0.4, d.box) if d.cls in ("card", "card_band") else d
        for d in oracle_detections(scene)
    ]
    assert sum(d.cls in ("card", "card_band") for d in dets) > 10
    assert bare_table_cards(canon, dets) == []
