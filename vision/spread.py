"""Enrolment from a spread: the user's cards laid out on the calibrated table, one photo, ids suggested.

A real deck is enrolled fastest on the table itself: lay the cards face up in the play area
with a finger's width between them (touching cards are one outline and are left out), take one
frame, and confirm or correct the ids the referee suggests. :func:`find_spread` does the
vision part, in measured stages like every frame:

1. white balance on the markers' paper (:func:`vision.whitebalance.balance`), as every frame;
2. a top-down view of the play area at :data:`SPREAD_PPM` through the calibration, where every
   card has the same size and shape wherever it lies, and its outline is found
   (:func:`vision.outline.card_boxes`);
3. each card cut out upright along its outline at the face size (4 px/mm), as the camera saw
   it (the same cut as a question asked during play, so the enrolled face matches what the
   identifier will see);
4. an id suggested for each: correlation with every reference (the drawn faces or what is
   enrolled already) in both reading directions, narrowed to the cards not yet enrolled when
   any are left, and assigned jointly so that no id is suggested twice
   (:func:`vision.identify.assign`).

The application layer (``referee/app/spread.py``) keeps the spread while the user confirms it
and enrols the confirmed cards in one step (:func:`vision.enrol.remember_all`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import cv2
import numpy as np

from vision.faces import CARD_MM, FACE_PX_PER_MM, N_CARDS
from vision.geometry import table_patch
from vision.identify import FULL_SHIFT_MM, Identifier, Match, assign
from vision.outline import card_boxes
from vision.whitebalance import balance
from vision.zones import Zones, default_zones

SPREAD_PPM = 2.0  # px/mm of the top-down view the outlines are found in
N_SUGGESTIONS = 3
CUT_PPM = 2.0  # px/mm of the cut-out a card is scored on (table-aligned, the card's turn removed)


@dataclass(frozen=True, slots=True)
class SpreadCard:
    """One card of a spread: where it lies (centre, mm; turn of its long side from the table's y
    axis, degrees; ``rotation`` 0 or 180: its reading direction), the card as the camera saw it
    (upright, face size, white-balanced), the suggested id and the likeliest ids, best first."""

    center: tuple[float, float]
    turn: float
    rotation: int
    face: np.ndarray
    card: int
    suggestions: tuple[int, ...]
    score: float
    margin: float


def top_down(frame: np.ndarray, h_img: np.ndarray, zones: Zones, ppm: float = SPREAD_PPM) -> np.ndarray:
    """The play area seen from straight above at ``ppm`` px/mm (table mm ``(x, y)`` at px
    ``(x, y) * ppm``)."""
    w, h = round(zones.size[0] * ppm), round(zones.size[1] * ppm)
    to_mm = np.diag([1 / ppm, 1 / ppm, 1.0])
    return cv2.warpPerspective(frame, h_img @ to_mm, (w, h), flags=cv2.INTER_AREA | cv2.WARP_INVERSE_MAP)


def _scores(
    identifier: Identifier, frame: np.ndarray, h_img: np.ndarray, center: tuple[float, float], turn: float
) -> list[np.ndarray]:
    """Correlation with every reference in the two reading directions (0°, 180°): the card cut
    out table-aligned with its turn removed, then scored as the identifier scores any card."""
    m = 2 * FULL_SHIFT_MM + 4
    size_mm = (CARD_MM[0] + m, CARD_MM[1] + m)
    cut = table_patch(frame, h_img, center, size_mm, CUT_PPM, 0, turn)
    h_cut = np.diag([CUT_PPM, CUT_PPM, 1.0])
    mid = ((cut.shape[1] - 1) / 2 / CUT_PPM, (cut.shape[0] - 1) / 2 / CUT_PPM)
    return [identifier.card_scores(cut, h_cut, mid, rotation) for rotation in (0, 180)]


def find_spread(
    frame: np.ndarray,
    h_img: np.ndarray,
    identifier: Identifier,
    enrolled: Collection[int] = (),
    zones: Zones | None = None,
) -> list[SpreadCard]:
    """The cards of a spread on the calibrated table (``h_img``: table mm -> frame px), each cut
    out and given a suggested id, in reading order (by rows of the table, then left to right).
    ``enrolled``: the ids already enrolled (suggested only when every id is)."""
    z = zones or default_zones()
    balanced = balance(frame, h_img, z)
    boxes = card_boxes(top_down(balanced, h_img, z), SPREAD_PPM)
    boxes.sort(key=lambda b: (round(b[0][1] / CARD_MM[1]), b[0][0]))
    open_ids = np.ones(N_CARDS, bool)
    open_ids[[c for c in enrolled if 0 <= c < N_CARDS]] = False
    allowed = open_ids if open_ids.any() else np.ones(N_CARDS, bool)
    best: list[np.ndarray] = []
    rotations: list[int] = []
    for center, turn, _sides in boxes:
        up, down = _scores(identifier, balanced, h_img, center, turn)
        rotations.append(
            0 if np.max(np.where(allowed, up, -np.inf)) >= np.max(np.where(allowed, down, -np.inf)) else 180
        )
        best.append(np.maximum(up, down))
    matches: list[Match] = assign(best, [allowed] * len(best)) if best else []
    out = []
    for (center, turn, _sides), rotation, sc, m in zip(boxes, rotations, best, matches, strict=True):
        ranked = [int(c) for c in np.argsort(-np.where(allowed, sc, -np.inf)) if c != m.card]
        face = table_patch(balanced, h_img, center, CARD_MM, FACE_PX_PER_MM, rotation, turn)
        out.append(
            SpreadCard(
                center=(float(center[0]), float(center[1])),
                turn=turn,
                rotation=rotation,
                face=face,
                card=m.card,
                suggestions=(m.card, *ranked[: N_SUGGESTIONS - 1]),
                score=m.score,
                margin=m.margin,
            )
        )
    return out
