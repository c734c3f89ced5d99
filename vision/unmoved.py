"""Cards that have not moved keep their scores: a card of the last frame, where it lay and looking
the same, is not identified again (issue 14: at least 5 frames/s; item 2: "a card that moves keeps
its identity", and one that does not move all the more).

Between two still frames of a game one move changes a few cards, and identifying every card
(template matching on the frame and on the color-mapped frame, and the learned embedding) was
most of a frame's time with an enrolled deck. Each identified card's place is kept as a grey
thumbnail (:data:`THUMB_PPM`); a card detection of the next frame within :data:`NEAR_MM` of a
kept one, of the same class and reading direction, whose candidates are among the kept one's
(the referee's memory only narrows them as cards are seen), and whose kept place looks the same
(every :data:`BLOCK_MM` block's mean within :data:`SAME_GREY` grey levels) takes the kept scores
of its candidates: a face's score does not depend on which other faces were scored.
The place is cut where the kept card lay, so the detector's box jitter does not matter. A card
swapped for another changes its art in some block; a lamp changed or an arm over the card
changes it too, and the card is scored afresh. Enrolling a face (the identifier's faces
replaced) forgets everything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.faces import BAND_MM, CARD_MM
from vision.geometry import table_patch
from vision.identify import CardPlace

#: How far a card detection's centre may be from a kept card's (the detector's jitter, mm).
NEAR_MM = 3.0
#: The thumbnail's resolution (px/mm), its blocks (mm) and the largest mean grey difference of a
#: block for the place to look the same (chosen on rendered frames of one table: docs/vision.md,
#: twenty-first round).
THUMB_PPM = 2.0
BLOCK_MM = 4.0
SAME_GREY = 8.0


@dataclass(frozen=True, slots=True)
class _Kept:
    place: CardPlace
    thumb: np.ndarray
    scores: np.ndarray


def thumbnail(frame: np.ndarray, h: np.ndarray, place: CardPlace) -> np.ndarray:
    """The grey look (float32) of a card's place (:data:`vision.identify.CardPlace`: the whole
    card, or its top band alone)."""
    center, rotation, _, whole = place
    size = CARD_MM if whole else (CARD_MM[0], BAND_MM)
    patch = table_patch(frame, h, center, size, THUMB_PPM, rotation)
    grey = patch if patch.ndim == 2 else cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)
    return grey.astype(np.float32)


def looks_the_same(a: np.ndarray, b: np.ndarray) -> bool:
    """Every block of two thumbnails within :data:`SAME_GREY` grey levels in the mean."""
    side = max(1, round(BLOCK_MM * THUMB_PPM))
    h, w = a.shape
    blocks = cv2.resize(np.abs(a - b), (max(1, w // side), max(1, h // side)), interpolation=cv2.INTER_AREA)
    return float(blocks.max()) <= SAME_GREY


class UnmovedCards:
    """The last frame's identified cards, for the next frame to take the scores of those that did
    not move (:meth:`recall`, then :meth:`keep` with the frame's scores)."""

    def __init__(self) -> None:
        self._kept: list[_Kept] = []
        self._faces: object = None
        #: Of the last frame's card detections, how many took kept scores.
        self.last_recalled = 0

    def forget(self) -> None:
        """Keep nothing (another table, another camera)."""
        self._kept, self._faces, self.last_recalled = [], None, 0

    def recall(
        self, frame: np.ndarray, h: np.ndarray, faces: object, places: Sequence[CardPlace]
    ) -> list[np.ndarray | None]:
        """The kept scores of each place whose card has not moved (None: to be scored)."""
        out: list[np.ndarray | None] = [None] * len(places)
        if faces is not self._faces:  # a face enrolled since: every kept score is stale
            self._kept = []
        taken: set[int] = set()
        for i, (center, rotation, among, whole) in enumerate(places):
            for k, kept in enumerate(self._kept):
                q_center, q_rotation, q_among, q_whole = kept.place
                if (
                    k in taken
                    or q_whole != whole
                    or q_rotation != rotation
                    or abs(q_center[0] - center[0]) > NEAR_MM
                    or abs(q_center[1] - center[1]) > NEAR_MM
                    or not _within(among, q_among)  # a candidate the kept scores lack
                ):
                    continue
                if looks_the_same(thumbnail(frame, h, kept.place), kept.thumb):
                    out[i] = kept.scores if among is None else np.where(among, kept.scores, -np.inf)
                    taken.add(k)
                break
        self.last_recalled = sum(s is not None for s in out)
        return out

    def keep(
        self,
        frame: np.ndarray,
        h: np.ndarray,
        faces: object,
        places: Sequence[CardPlace],
        scores: Sequence[np.ndarray],
    ) -> None:
        """Keep this frame's places and their scores for the next frame."""
        self._faces = faces
        self._kept = [_Kept(p, thumbnail(frame, h, p), s) for p, s in zip(places, scores, strict=True)]


def _within(among: np.ndarray | None, kept: np.ndarray | None) -> bool:
    """Are the candidates ``among`` (None: every card) all among the ``kept`` ones?"""
    if kept is None:
        return True
    return among is not None and not bool((among & ~kept).any())
