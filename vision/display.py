"""Display cards the detector was not sure of, kept in a Display slot that nothing else fills.

The Display is refilled from the level's deck as soon as a card leaves it, so in play each of
its slots holds a card (until a deck runs out). On tables it never saw, the detector now and then
leaves a Display card below the pipeline's confidence: a white card on a light cloth, a card on
a ray-traced table (0.10-0.31 sure on development frames; every such card then reads as a slot
left empty). A less sure card box is kept when the Display explains it:

* its centre lies in a Display slot that no hand covers, and no card or card back kept has its
  centre there (the slot would otherwise be empty);
* it has a whole card's size (:func:`vision.plausible.plausible`): on 180 development frames
  (seeds 8,900,000+, 9,160,000+, 9,170,000+, 9,260,000+, 9,270,000+ and the ray-traced
  9,460,000+) the three less sure boxes (0.12-0.22) in slots that were truly empty were all too
  small or too large for a card; the nine on true cards were a card's size but one;
* it covers no card kept (:data:`OVERLAP`); of several in one slot, the surest.

On those frames the stage kept 4 cards, all true (all on the ray-traced tables; the other five
true ones: four in slots a hand's box reached, one boxed too small under a hand besides); it
moved no frame to wrong. (Those ray-traced frames had the tracer's stacking flaw; traced again
with it fixed, the stage keeps 3 there, all true.)

No colour or texture test: a white card on a white cloth is what this stage is for, and the
bare-table test (:func:`vision.plausible.table_like`) scored the true ones 0.91-0.98 there.
:data:`LOW_SLOT_CONF` is the heap and stack stages' threshold.
"""

from __future__ import annotations

from collections.abc import Sequence

from vision.detect import Detection
from vision.geometry import covered_share
from vision.plausible import plausible
from vision.zones import Zones, hidden_by, inside

#: A card box this sure, below the pipeline's confidence, is kept where the Display explains it.
LOW_SLOT_CONF = 0.1
#: It covers at most this share of its own area of any card kept.
OVERLAP = 0.35

Box = tuple[float, float, float, float]


def display_cards(
    zones: Zones, detections: Sequence[Detection], low: Sequence[Detection], hidden: Sequence[Box] = ()
) -> list[Detection]:
    """The card boxes of ``low`` to add to ``detections`` (see the module's docstring);
    ``hidden``: boxes (table mm, x1 y1 x2 y2) of hands, whose slots are left alone."""
    kept = [d for d in detections if d.cls in ("card", "card_band", "card_back")]
    added: list[Detection] = []
    for _, _, slot in zones.display:
        if hidden_by(slot, hidden) or any(inside(slot, *k.center_mm) for k in kept):
            continue
        here = [
            d
            for d in low
            if d.cls == "card"
            and inside(slot, *d.center_mm)
            and plausible(d.cls, d.box_mm)
            and not any(covered_share(d.box_mm, k.box_mm) > OVERLAP for k in kept)
        ]
        if here:
            added.append(max(here, key=lambda d: d.confidence))
    return added
