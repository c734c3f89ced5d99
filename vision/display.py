"""Cards the detector was not sure of, kept where the rules say a card lies and nothing else is:
a Display slot, or a seat's file column, which always holds its Starting Gizmo.

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
* it covers no card kept (:data:`OVERLAP`);
* its inside is not all table (:data:`ALL_TABLE`, :func:`vision.plausible.table_like`), when the
  canonical frame is given; of several in one slot, the surest.

On those frames (with stage 4 of the detector, shipped until the eighteenth round) the stage
kept 4 cards, all true (all on the ray-traced tables; the other five true ones: four in slots a
hand's box reached, one boxed too small under a hand besides); it moved no frame to wrong.
(Those ray-traced frames had the tracer's stacking flaw; traced again with it fixed, the stage
keeps 3 there, all true.)

A seat's Starting Gizmo is never built, filed or discarded: it lies in the file column from the
first turn to the last (the rules engine starts every seat with it; ``vision.identify.column_cards``
lets the file column read it). So a seat's file column is a slot like the Display's, under the
same tests: on a development frame of the held-out style (9,180,054) a pale Starting Gizmo alone
on a check cloth was boxed at 0.30 and the seat's gizmos read one card short (docs/vision.md,
"Twenty-fifth round"). A Starting Gizmo under other cards is a top band, which the stack stage
(:mod:`vision.stacks`) keeps when the detector was unsure of it.

The bare-table stage's own bound (0.85 of the inside table-coloured) would drop what this stage
is for, a white card on a white cloth: :func:`vision.plausible.table_like` scored the true ones
0.91-0.98 there. Only a box whose inside is *all* table is refused: a detector fine-tuned on
ray-traced tables (``traced-mix3``, models/MODEL_CARD.md) boxes bare table in empty slots, and on
the development frames the stage kept three such boxes of a card's size (one ``style``, two
``deck`` frames); with this test it keeps none of them and still its one true card (``traced``).
The other less sure boxes it put on bare table in an empty slot (seven, 0.11-0.26 sure) all
scored 1.0; those on true cards (under a hand) 0.13-0.67 (docs/vision.md, "Eighteenth
round"); ``traced-mix3`` is the shipped detector since. With stage 4 the test changes nothing on
those frames. :data:`LOW_SLOT_CONF` is the heap and stack stages' threshold.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from vision.detect import Detection
from vision.geometry import covered_share
from vision.plausible import plausible, table_like
from vision.zones import Rect, Zones, hidden_by, inside

#: A card box this sure, below the pipeline's confidence, is kept where the Display explains it.
LOW_SLOT_CONF = 0.1
#: It covers at most this share of its own area of any card kept.
OVERLAP = 0.35
#: ... and less than this share of its inside is table-coloured (a card's printing is not table).
ALL_TABLE = 0.99

Box = tuple[float, float, float, float]


def display_cards(
    zones: Zones,
    detections: Sequence[Detection],
    low: Sequence[Detection],
    hidden: Sequence[Box] = (),
    canon: np.ndarray | None = None,
    seats: Sequence[int] = (),
) -> list[Detection]:
    """The card boxes of ``low`` to add to ``detections`` (see the module's docstring);
    ``hidden``: boxes (table mm, x1 y1 x2 y2) of hands, whose slots are left alone; ``canon``:
    the canonical frame the boxes were found on (without it, no table test); ``seats``: the
    seats in play, whose file columns hold their Starting Gizmos."""
    kept = [d for d in detections if d.cls in ("card", "card_band", "card_back")]
    blurred: list[np.ndarray] = []  # the frame as the bare-table test reads it, made once if needed

    def all_table(d: Detection) -> bool:
        if canon is None:
            return False
        if not blurred:
            blurred.append(cv2.GaussianBlur(canon, (3, 3), 0))
        share = table_like(blurred[0], d.box, [k.box for k in kept])
        return share is not None and share >= ALL_TABLE

    slots: list[Rect] = [slot for _, _, slot in zones.display] + [zones.seat(s).column("file") for s in seats]
    added: list[Detection] = []
    for slot in slots:
        if hidden_by(slot, hidden) or any(inside(slot, *k.center_mm) for k in kept):
            continue
        here = [
            d
            for d in low
            if d.cls == "card"
            and inside(slot, *d.center_mm)
            and plausible(d.cls, d.box_mm)
            and not any(covered_share(d.box_mm, k.box_mm) > OVERLAP for k in kept)
            and not all_table(d)
        ]
        if here:
            added.append(max(here, key=lambda d: d.confidence))
    return added
