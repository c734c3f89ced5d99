"""Top bands the detector was not sure of, kept where a stack of built cards puts them.

A seat's gizmos lie in columns and its Archive in one: each card is laid on the one before, a
band lower, so that the earlier card shows its top band. On tables it never saw, the detector
now and then leaves a band below the pipeline's confidence: a column's top band under a soft,
far camera, a band in the Archive on a dark cloth (0.1-0.35 sure on development frames; every
such band then reads as a gizmo missing). A less sure band box is kept when the stack explains
it:

* it lies in the gizmos or Archive zone of a seat in play that no hand covers, and has a top
  band's size (:func:`vision.plausible.plausible`);
* its lower edge, in the seat's reading direction, meets the upper edge of a card or band
  already kept (:data:`MEET_MM`), their centres in line (:data:`ALIGN_MM`): it is the band of
  the card that one was laid on;
* it covers no card or band already kept (:data:`OVERLAP`), and it is not bare table
  (:func:`vision.plausible.table_like`).

A band kept counts for the next, so a column's missed bands are found from the bottom up. Rules
of the stack's geometry, nothing fitted to a renderer's look: the tolerances come from how far a
hand-placed card and a box's edges stray; :data:`LOW_BAND_CONF` is the heap stage's, and 0.05
gained nothing on development frames (seeds 9,160,000+ and 9,260,000+: 3 and 2 true bands kept,
none on no band, with either).
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from vision.detect import Detection
from vision.geometry import covered_share
from vision.plausible import plausible, table_like
from vision.zones import Rect, SeatZones, Zones, hidden_by, inside

#: A band box this sure, below the pipeline's confidence, is kept where the stack explains it.
LOW_BAND_CONF = 0.1
#: Its lower edge lies at most this far from the upper edge of the card or band below it (mm):
#: hand-placed cards shift a few mm, and a box's edges a few more.
MEET_MM = 8.0
#: Their centres lie at most this far apart across the column (mm; a card is 63 mm wide).
ALIGN_MM = 12.0
#: It covers at most this share of its own area of any card or band kept.
OVERLAP = 0.35
#: A band a stack explains is still not kept when its inside is this table-coloured
#: (:func:`vision.plausible.table_like`): the twelfth round's value, stricter than the
#: bare-table stage's drop (:data:`vision.plausible.TABLE_SHARE`), because the column's other
#: less sure bands, not kept yet, lie in the table round it and share its paper (with 0.85 a
#: rendered column's true bands were refused: ``tests/test_vision_stacks.py``).
BARE_SHARE = 0.99

Box = tuple[float, float, float, float]


def _local(sz: SeatZones, box_mm: Box) -> Box:
    """A table-mm box in the seat's own mm (x across the columns, y towards the player)."""
    x0, y0, x1, y1 = box_mm
    ax, ay = sz.to_local(x0, y0)
    bx, by = sz.to_local(x1, y1)
    return min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)


def _laid_on(band: Box, below: Box) -> bool:
    """Whether ``band`` (seat mm) is the top band of a card that ``below`` was laid on."""
    in_line = abs((band[0] + band[2]) / 2 - (below[0] + below[2]) / 2) <= ALIGN_MM
    return in_line and abs(band[3] - below[1]) <= MEET_MM


def stack_bands(
    canon: np.ndarray,
    zones: Zones,
    detections: Sequence[Detection],
    low: Sequence[Detection],
    seats: Sequence[int],
    hidden: Sequence[Box] = (),
) -> list[Detection]:
    """The band boxes of ``low`` to add to ``detections`` (canonical px; see the module's
    docstring); ``hidden``: boxes (table mm, x1 y1 x2 y2) of hands, whose zones are left alone."""
    areas: list[tuple[SeatZones, Rect]] = [
        (sz, rect)
        for sz in zones.seats
        if sz.seat in seats
        for rect in (sz.gizmos, sz.archive)
        if not hidden_by(rect, hidden)
    ]
    if not areas:
        return []
    cards = [d for d in detections if d.cls in ("card", "card_band", "card_back")]
    blurred: np.ndarray | None = None
    added: list[Detection] = []
    waiting = sorted(
        (d for d in low if d.cls == "card_band" and plausible(d.cls, d.box_mm)), key=lambda d: -d.confidence
    )
    grew = True
    while grew and waiting:
        grew = False
        for d in list(waiting):
            c = d.center_mm
            place = next(((sz, rect) for sz, rect in areas if inside(rect, *c)), None)
            if place is None:
                waiting.remove(d)
                continue
            sz, rect = place
            band = _local(sz, d.box_mm)
            mine = [_local(sz, k.box_mm) for k in cards + added if inside(rect, *k.center_mm)]
            if any(covered_share(band, k) > OVERLAP for k in mine):
                continue  # on a card or band kept
            if not any(_laid_on(band, k) for k in mine):
                continue  # nothing laid on it (yet: a band kept below may come)
            if blurred is None:
                blurred = cv2.GaussianBlur(canon, (3, 3), 0)
            share = table_like(blurred, d.box, [k.box for k in cards + added])
            waiting.remove(d)
            if share is not None and share >= BARE_SHARE:
                continue
            added.append(d)
            grew = True
    return added
