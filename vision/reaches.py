"""Whose arm reaches where: reaching hands (``ReachSighting``) from the hand mask.

A Research declined leaves the table as it was, but not unseen: the player's arm comes in from
their side of the table and their hand goes to a deck. Each patch of the hand mask (the hand
network's, on the rectified table, :mod:`vision.hands`) is one arm: where it crosses the
table's edge says whose arm it is (the seat whose side of the table is nearest, by the zones
file), and its point farthest from there, the fingertips, says what the hand is over (a tier's
deck, a Display slot, the Energy Row, a seat's ring, Archive, gizmos or VP tokens; else the
table). Only geometry: no model of its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np

from referee.observation import ReachSighting
from vision.geometry import zone_rects
from vision.hands import MASK_PX_PER_MM
from vision.zones import SEAT_H, SEAT_W, Rect, Zones

#: An arm crosses the table's edge where its patch comes this close to it (mm).
EDGE_MM = 12.0
#: The arm's direction is taken from its part this near (mm) to where it crosses the edge ...
ARM_MM = 200.0
#: ... and followed this far (mm) beyond the edge, to the shoulder: an arm reaching for the
#: middle of the table crosses the edge well to the side of its player's seat.
SHOULDER_MM = 100.0
#: A shoulder farther than this from every seat's side (mm) is nobody's we know ...
MAX_ENTRY_MM = 200.0
#: ... and one about as near two seats' sides (within this, mm) is unknown too.
AMBIGUOUS_MM = 80.0
#: A hand this close to a zone (mm) is over it.
NEAR_MM = 25.0
#: What a hand is over is taken this far (mm) back from its farthest point towards where the
#: arm comes in: the palm, not the tips of outstretched fingers (which end past what is taken).
PALM_BACK_MM = 110.0
#: Patches of the mask this close (mm) are one arm (a finger the mask cut off, a sleeve).
JOIN_MM = 12.0


def seat_distance(zones: Zones, seat: int, point: tuple[float, float]) -> float:
    """How far (mm) a shoulder at ``point`` is from where a seat's player sits: along the side of
    the table they sit at, the distance past either end of their area's outer edge, plus how far
    the point lies on the table's side of that edge rather than beyond it."""
    sz = zones.seat(seat)
    a, b = sz.to_table(0.0, SEAT_H), sz.to_table(SEAT_W, SEAT_H)
    out = sz.to_table(0.0, SEAT_H + 1.0)
    ex, ey = (b[0] - a[0]) / SEAT_W, (b[1] - a[1]) / SEAT_W  # along the edge, unit
    nx, ny = out[0] - a[0], out[1] - a[1]  # outwards, unit
    along = (point[0] - a[0]) * ex + (point[1] - a[1]) * ey
    beyond = (point[0] - a[0]) * nx + (point[1] - a[1]) * ny
    return max(0.0, -along, along - SEAT_W) + max(0.0, -beyond)


def entry_seat(zones: Zones, seats: Sequence[int], point: tuple[float, float]) -> int | None:
    """The seat whose player a shoulder at ``point`` (mm) belongs to, or ``None`` when no seat
    is near (MAX_ENTRY_MM) or two are about as near (AMBIGUOUS_MM)."""
    near = sorted((seat_distance(zones, s, point), s) for s in seats)
    if not near or near[0][0] > MAX_ENTRY_MM:
        return None
    if len(near) > 1 and near[1][0] - near[0][0] < AMBIGUOUS_MM:
        return None
    return near[0][1]


def _rect_distance(rect: Rect, x: float, y: float) -> float:
    rx, ry, rw, rh = rect
    return math.hypot(max(rx - x, 0.0, x - rx - rw), max(ry - y, 0.0, y - ry - rh))


def zone_at(zones: Zones, seats: Sequence[int], point: tuple[float, float]) -> str:
    """What a hand with its fingertips at ``point`` (mm) is over: ``deck/L``, ``display/L/S``,
    ``energy_row``, ``S/ring`` / ``S/archive`` / ``S/gizmos`` / ``S/vp``, or ``table``. The zone
    it lies in, else the nearest within NEAR_MM."""
    rects: dict[str, Rect] = {f"deck/{level}": r for level, r in zones.decks}
    rects.update(zone_rects(zones, tuple(seats)))
    x, y = point
    best = min(rects.items(), key=lambda kv: _rect_distance(kv[1], x, y))
    return best[0] if _rect_distance(best[1], x, y) <= NEAR_MM else "table"


def _shoulder(mm_x: np.ndarray, mm_y: np.ndarray, entry: tuple[float, float]) -> tuple[float, float]:
    """Where the arm crossing the edge at ``entry`` comes from: its direction near the edge (the
    main axis of its pixels there), followed SHOULDER_MM beyond the edge."""
    near = np.hypot(mm_x - entry[0], mm_y - entry[1]) < ARM_MM
    pts = np.stack([mm_x[near], mm_y[near]], axis=1)
    if len(pts) < 3:
        return entry
    centre = pts.mean(axis=0)
    _, _, vt = np.linalg.svd(pts - centre, full_matrices=False)
    d = vt[0]
    if float(np.dot(np.array(entry) - centre, d)) < 0:  # point it out of the table
        d = -d
    return (entry[0] + SHOULDER_MM * float(d[0]), entry[1] + SHOULDER_MM * float(d[1]))


def reaches_of(
    mask: np.ndarray, zones: Zones, seats: Sequence[int], confidence: float = 1.0
) -> tuple[ReachSighting, ...]:
    """The reaching hands in a hand mask (the hand network's resolution, bool): one per patch,
    with the seat whose side its arm comes in from and the zone under its fingertips. A patch
    that does not reach the table's edge (a hand seen only in part) has no known seat."""
    join = max(1, round(JOIN_MM * MASK_PX_PER_MM))
    joined = cv2.dilate(mask.astype(np.uint8), np.ones((join, join), np.uint8))
    n, labels = cv2.connectedComponents(joined, connectivity=8)
    labels[~mask.astype(bool)] = 0
    width, height = zones.size
    edge = EDGE_MM
    out = []
    for i in range(1, n):
        ys, xs = np.nonzero(labels == i)
        mm_x, mm_y = (xs + 0.5) / MASK_PX_PER_MM, (ys + 0.5) / MASK_PX_PER_MM
        border = (mm_x < edge) | (mm_x > width - edge) | (mm_y < edge) | (mm_y > height - edge)
        if border.any():
            entry = (float(mm_x[border].mean()), float(mm_y[border].mean()))
            seat = entry_seat(zones, seats, _shoulder(mm_x, mm_y, entry))
        else:  # the arm's way in is out of view: where it comes nearest to an edge
            gap = np.minimum.reduce([mm_x, width - mm_x, mm_y, height - mm_y])
            k = int(gap.argmin())
            entry, seat = (float(mm_x[k]), float(mm_y[k])), None
        reach = np.hypot(mm_x - entry[0], mm_y - entry[1])
        far = int(reach.argmax())
        back = min(PALM_BACK_MM, float(reach[far])) / max(float(reach[far]), 1e-6)
        palm = (
            float(mm_x[far] - back * (mm_x[far] - entry[0])),
            float(mm_y[far] - back * (mm_y[far] - entry[1])),
        )
        out.append(ReachSighting(seat, zone_at(zones, seats, palm), round(float(confidence), 4)))
    return tuple(out)
