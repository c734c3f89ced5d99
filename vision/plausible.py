"""Detections no real object could have made: a card or top band box of a size no card shows.

The domain-randomised fine-tune learned "a card" of any art, and with it boxes a card-like patch
of something else now and then: part of a hand, a stack's lower half, a card back, a marker tile.
Cards lie upright in the canonical frame (a seat across the table reads them upside down, not
sideways), so a box's width and height say whether it can be one. On 30 development frames per
benchmark condition (seeds 8,900,000+, 9,160,000+, 9,260,000+), the true boxes of whole cards
were 63-71 x 88-94 mm (hand-placed cards up to 5 degrees turned) and of top bands 63-65 x
20-26 mm; both detectors' boxes on them 49-70 x 78-99 mm and 48-71 x 19-24 mm (0.5-99.5 %).
The bounds below are generous around those; a box outside them is dropped before assembly.
"""

from __future__ import annotations

#: (width range, height range) in table mm that a detected box of each card class may have.
CARD_BOUNDS: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    "card": ((46.0, 80.0), (75.0, 105.0)),
    "card_band": ((46.0, 80.0), (15.0, 30.0)),
}


def plausible(cls: str, box: tuple[float, float, float, float]) -> bool:
    """Whether a detection of class ``cls`` with ``box`` (table mm) can be what it says."""
    bounds = CARD_BOUNDS.get(cls)
    if bounds is None:
        return True
    (w0, w1), (h0, h1) = bounds
    w, h = box[2] - box[0], box[3] - box[1]
    return w0 <= w <= w1 and h0 <= h <= h1
