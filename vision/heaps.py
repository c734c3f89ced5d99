"""Marbles in touching heaps: what the detector misses in a heap, found again by physics and peeling.

On tables it never saw, the detector finds a marble lying apart almost always (99.75 %) but misses
one in nine in a touching heap, mostly the marble in the middle (docs/vision.md, "Fifth round").
Two stages, both confined to the rings of the seats in play that no hand covers, find them
again without adding marbles that are not there:

* *physics with a lower threshold*: a marble box below the pipeline's confidence, down to
  :data:`LOW_CONF`, is kept when it touches a marble already kept (centres at most
  :data:`TOUCH_MM` apart: it lies in a heap) and overlaps none (centres at least
  :data:`APART_MM` apart; two touching marbles are 16 mm apart, and the detector's boxes between
  two marbles lie 5-8 mm from each);
* *peeling*: the marbles kept are painted over with the zone's own colour (its median away from
  them) on a copy of the canonical frame; what is left of a heap is then a marble lying apart,
  which the detector finds as it finds any. The detector runs again on that copy only when
  something marble-sized that differs from the zone's colour is left there (:func:`leftovers`:
  the count check), and then only on a crop round each such ring (:data:`RING_CROP_PX`; the
  whole frame when it is given no ring-sized detector); a marble it finds is kept under the
  same physics.

The Energy Row's marbles lie apart (a row, 28 mm from centre to centre), so no heap explains a
less sure box there; but nothing else lies in the row. A marble box there below the pipeline's
confidence, down to :data:`LOW_CONF`, is kept when it overlaps none kept (*the row*; on 180
development frames every such box at 0.1 or more was a true marble, 7 of them, 0.14-0.34 sure;
the one box on no marble was 0.07 sure), surest first, and only while the row holds fewer than
the six marbles the rules ever leave in it (``ROW_SIZE``: a box on red wood beside a full row is
no seventh marble).

Rules of geometry only, nothing fitted to a renderer's look: the two distances come from the
marbles' size, and :data:`LOW_CONF` and the leftover test were chosen on development frames
(seeds 8,900,000+ and 8,950,000+, never the benchmark's).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import cv2
import numpy as np

from referee.gizmos.state import ROW_SIZE
from vision.detect import Detection
from vision.geometry import CANON_PX_PER_MM, MARBLE_MM
from vision.zones import Rect, Zones, hidden_by, inside

#: A marble box this sure, below the pipeline's confidence, is kept when it lies in a heap.
LOW_CONF = 0.1
#: Two marble centres closer than this are one marble (touching marbles are 16 mm apart).
APART_MM = 0.75 * MARBLE_MM
#: A marble whose centre is at most this far from a kept one touches it: it lies in a heap.
TOUCH_MM = 1.25 * MARBLE_MM
#: The disc painted over a kept marble (mm): the marble, its shadow and a box's few mm of error.
PAINT_MM = 9.5
#: The second pass's crop round a ring (canonical px, a multiple of the detector's 32 px stride):
#: a 100 mm ring is 80 px at 0.8 px/mm, so 50 mm of table round it, more than a marble's box
#: needs to be seen whole. A fifteenth of the whole frame's pixels.
RING_CROP_PX = 160
#: A pixel differs from the zone's colour by more than this (BGR distance, 0-441).
LEFTOVER_DIFF = 40.0
#: What is left after peeling counts as a possible marble from this share of a marble's area...
LEFTOVER_SHARE = 0.35
#: ... when its centre is at most this far from a marble found in the heap (two missed
#: neighbours make one blob centred between them, 24 mm from a marble found).
NEAR_MM = 2.0 * MARBLE_MM

Detect = Callable[[np.ndarray, float], list[Detection]]


def marble_zones(zones: Zones, seats: Sequence[int] | None = None) -> list[Rect]:
    """The zones where marbles lie in heaps: the rings of ``seats`` (default every seat's). The
    Energy Row is left out (its marbles lie apart: see :meth:`HeapFinder.find`'s row rule); with
    the heap rule it gained no true marble and one false one on development frames."""
    return [sz.ring for sz in zones.seats if seats is None or sz.seat in seats]


def _in_zones(rects: Sequence[Rect], c: tuple[float, float]) -> bool:
    return any(inside(r, *c) for r in rects)


def _fits(c: tuple[float, float], kept: Sequence[tuple[float, float]], in_heap: bool) -> bool:
    """Whether a marble at ``c`` overlaps none kept and, when ``in_heap``, touches one."""
    dists = [math.dist(c, k) for k in kept]
    if any(d < APART_MM for d in dists):
        return False
    return not in_heap or any(d <= TOUCH_MM for d in dists)


def _px(rect: Rect, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """A zone's pixel bounds (x0, y0, x1, y1) in the canonical frame, clipped to it."""
    x, y, w, h = rect
    p = CANON_PX_PER_MM
    return (
        max(0, int(x * p)),
        max(0, int(y * p)),
        min(shape[1], math.ceil((x + w) * p)),
        min(shape[0], math.ceil((y + h) * p)),
    )


_SHIFT = 4  # sub-pixel bits for cv2.circle
_KERNEL = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))


def _discs(
    shape: tuple[int, int], origin: tuple[int, int], centres: Sequence[tuple[float, float]], r_mm: float
) -> np.ndarray:
    """A mask (uint8, 0/255) of discs of radius ``r_mm`` round table points, on a zone's pixels."""
    mask = np.zeros(shape, np.uint8)
    scale = CANON_PX_PER_MM * (1 << _SHIFT)
    for cx, cy in centres:
        c = (round(cx * scale) - (origin[0] << _SHIFT), round(cy * scale) - (origin[1] << _SHIFT))
        cv2.circle(mask, c, round(r_mm * scale), 255, -1, cv2.LINE_8, _SHIFT)
    return mask


def peel(canon: np.ndarray, rect: Rect, kept: Sequence[tuple[float, float]]) -> np.ndarray | None:
    """The zone's pixels with each kept marble painted over in the zone's own colour (the median
    of its pixels clear of every kept marble), or None when too little of the zone is clear to
    tell its colour."""
    x0, y0, x1, y1 = _px(rect, canon.shape)
    sub = canon[y0:y1, x0:x1]
    near = _discs(sub.shape[:2], (x0, y0), kept, PAINT_MM + 1.0)
    clear = near == 0
    if clear.sum() < 0.2 * clear.size:
        return None
    colour = np.median(sub[clear], axis=0)
    out = sub.copy()
    out[_discs(sub.shape[:2], (x0, y0), kept, PAINT_MM) > 0] = colour.astype(np.uint8)
    return out


def leftovers(zone: np.ndarray, origin: tuple[int, int]) -> list[tuple[tuple[float, float], float]]:
    """The count check: what a peeled zone still shows that is not the zone's colour, as blobs
    (centre in table mm, area in marbles), thin printing (a ring's line) opened away; blobs under
    :data:`LEFTOVER_SHARE` of a marble are left out. ``origin``: the zone's first pixel."""
    one = math.pi * (MARBLE_MM / 2 * CANON_PX_PER_MM) ** 2
    sub = zone.astype(np.float32)
    colour = np.median(sub.reshape(-1, sub.shape[2]), axis=0)
    differs = (np.linalg.norm(sub - colour, axis=2) > LEFTOVER_DIFF).astype(np.uint8)
    differs = cv2.morphologyEx(differs, cv2.MORPH_OPEN, _KERNEL)
    n, _, stats, cents = cv2.connectedComponentsWithStats(differs, connectivity=8)
    return [
        (
            ((origin[0] + cx) / CANON_PX_PER_MM, (origin[1] + cy) / CANON_PX_PER_MM),
            float(area) / one,
        )
        for (cx, cy), area in zip(cents[1:n], stats[1:n, cv2.CC_STAT_AREA], strict=True)
        if area >= LEFTOVER_SHARE * one
    ]


class HeapFinder:
    """The heap stage: marbles the detector's first pass missed in a touching heap.

    ``find(canon, detections, low, seats)`` takes the canonical frame, the detections the pipeline
    keeps, the marble boxes below its confidence (down to :data:`LOW_CONF`) and the seats in play;
    it returns the marbles to add. ``detect`` runs the detector on a canonical image at a
    confidence; ``detect_ring``, when given, on a ``ring_px`` square crop of one.
    """

    def __init__(
        self,
        zones: Zones,
        detect: Detect,
        conf: float = 0.35,
        detect_ring: Detect | None = None,
        ring_px: int = RING_CROP_PX,
    ) -> None:
        self.zones = zones
        self.detect = detect
        self.conf = conf
        #: The second pass one ring at a time: the detector (the same file, loaded at a
        #: ``ring_px`` square input) on a crop of the peeled frame round each ring where
        #: something is left. ``None``: one pass of ``detect`` over the whole peeled frame.
        self.detect_ring = detect_ring
        self.ring_px = ring_px
        #: Diagnostics of the last frame: marbles added by physics and by peeling, and how often
        #: the detector ran again (once on the whole frame, or once per ring crop).
        self.last: dict[str, int] = {"physics": 0, "row": 0, "peeled": 0, "second_pass": 0}
        #: What the count check found left after peeling in the last frame (:func:`leftovers`),
        #: near a heap: blobs, each its centre (mm) and its area in marbles.
        self.last_leftovers: list[tuple[tuple[float, float], float]] = []

    def find(
        self,
        canon: np.ndarray,
        detections: Sequence[Detection],
        low: Sequence[Detection],
        seats: Sequence[int] | None = None,
        hidden: Sequence[tuple[float, float, float, float]] = (),
    ) -> list[Detection]:
        """The marbles to add to ``detections`` (see the module's docstring); ``seats``: whose
        rings to look at (default every seat's); ``hidden``: boxes (table mm, x1 y1 x2 y2) of
        hands, whose zones are reported unseen and left alone here."""
        self.last = {"physics": 0, "row": 0, "peeled": 0, "second_pass": 0}
        rects = [r for r in marble_zones(self.zones, seats) if not hidden_by(r, hidden)]
        kept = [d.center_mm for d in detections if d.cls.startswith("marble_")]

        def keep(
            candidates: Sequence[Detection], zones: Sequence[Rect], in_heap: bool, room: float = math.inf
        ) -> list[Detection]:
            """The marble boxes of ``candidates`` in ``zones`` that fit, surest first, at most
            ``room`` of them; each counts as kept for the next."""
            taken: list[Detection] = []
            for d in sorted(candidates, key=lambda d: -d.confidence):
                c = d.center_mm
                if len(taken) >= room:
                    break
                if d.cls.startswith("marble_") and _in_zones(zones, c) and _fits(c, kept, in_heap):
                    kept.append(c)
                    taken.append(d)
            return taken

        added = keep(low, rects, in_heap=True)
        self.last["physics"] = len(added)
        row = self.zones.energy_row
        if not hidden_by(row, hidden):
            room = ROW_SIZE - sum(inside(row, *c) for c in kept)
            in_row = keep([d for d in low if d.confidence >= LOW_CONF], [row], in_heap=False, room=room)
            added += in_row
            self.last["row"] = len(in_row)
        peeled = canon.copy()
        self.last_leftovers = []
        left: list[Rect] = []  # the rings where something is left
        for rect in rects:
            x, y, w, h = rect
            grown = (x - PAINT_MM, y - PAINT_MM, w + 2 * PAINT_MM, h + 2 * PAINT_MM)
            mine = [k for k in kept if inside(grown, *k)]
            zone = peel(canon, rect, mine) if any(inside(rect, *k) for k in mine) else None
            if zone is None:
                continue
            x0, y0, x1, y1 = _px(rect, canon.shape)
            peeled[y0:y1, x0:x1] = zone
            # a marble missed in a heap lies next to the marbles found in it
            near = [b for b in leftovers(zone, (x0, y0)) if any(math.dist(b[0], k) <= NEAR_MM for k in mine)]
            self.last_leftovers += near
            if near:
                left.append(rect)
        if not left:
            return added
        self.last["second_pass"] = len(left) if self.detect_ring is not None else 1
        if self.detect_ring is None:
            second = self.detect(peeled, self.conf)
        else:
            second = [d for rect in left for d in self._ring_pass(peeled, rect)]
        found = keep(second, rects, in_heap=True)
        self.last["peeled"] = len(found)
        return added + found

    def _ring_pass(self, peeled: np.ndarray, rect: Rect) -> list[Detection]:
        """The detector on a :attr:`ring_px` square of the peeled frame centred on a ring (moved
        inside the frame where the ring lies near its edge); its boxes in the whole frame's pixels."""
        assert self.detect_ring is not None
        x0, y0, x1, y1 = _px(rect, peeled.shape)
        s = self.ring_px
        cx = min(max(0, (x0 + x1 - s) // 2), peeled.shape[1] - s)
        cy = min(max(0, (y0 + y1 - s) // 2), peeled.shape[0] - s)
        crop = np.ascontiguousarray(peeled[cy : cy + s, cx : cx + s])
        return [
            replace(d, box=(d.box[0] + cx, d.box[1] + cy, d.box[2] + cx, d.box[3] + cy))
            for d in self.detect_ring(crop, self.conf)
        ]
