"""Occlusion from the empty table: what is neither table nor a known object hides what is under it.

A fixed camera sees the table itself once, empty, at setup (issue 14, item 3). From then on a
part of the rectified table that differs from that empty table is explained by something the
detector found there (a card, a marble, a token, a deck) or it is something else: a hand in a
sleeve or a glove, a cup, a phone, a card held above the table. That something hides what lies
under it, so the zones it covers are reported "not seen", never "empty"; and a hand the hand
network marks where the table looks exactly as it did empty is not a hand (the network's false
hands on table materials it never saw).

Everything is compared at the hand network's resolution (2.5 mm a pixel) in CIELAB, brightness
normalised by the frame's overall brightness against the empty table's (a lamp that drifts);
a change that only darkens the table without changing its color is a shadow and hides nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from vision.detect import Detection
from vision.geometry import CANON_SIZE, canonical_from_image
from vision.hands import HAND_SCALE, MASK_PX_PER_MM, MASK_SIZE

#: Color distance (CIELAB units, brightness weighted by LIGHTNESS_WEIGHT) above which a pixel
#: differs from the empty table.
CHANGED_DISTANCE = 10.0
LIGHTNESS_WEIGHT = 1.0
#: A change that only darkens the table by this ratio, its chromaticity (B, G, R shares) within
#: SHADOW_TINT, is a shadow (a hand's, a card's): it hides nothing.
SHADOW_RATIO = (0.4, 0.95)
SHADOW_TINT = 0.04
#: A detected object explains the changes this far around its box (its shadow, a loose box).
OBJECT_MARGIN_MM = 5.0
#: A changed patch nothing explains must be at least this large to hide anything (a missed marble
#: is 200 mm²; a hand, a cup or a phone is thousands).
MIN_FOREIGN_MM2 = 500.0
#: A hand patch of the hand network is kept when at least this share of its pixels differs from
#: the empty table (of its pixels the background knows; a patch the background knows less than
#: MIN_KNOWN_SHARE of is kept as the network found it).
MIN_CHANGED_SHARE = 0.3
MIN_KNOWN_SHARE = 0.5
#: The table learned from the game's own frames (:class:`LearnedTable`): the values of a pixel
#: kept, how many make it known, and how far round a detected object or hand a pixel is not
#: taken for table.
LEARN_SAMPLES = 5  # the medians are written for 3 to 5 values (_median)
LEARN_KNOWN = 3
LEARN_MARGIN_MM = 10.0


def _small(canon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A canonical image at the mask's resolution: CIELAB, and BGR (float, 0..1)."""
    bgr = cv2.resize(canon, MASK_SIZE, interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2Lab), bgr


def _shares(bgr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel, the sum of B, G and R and each one's share of it (the chromaticity), added
    channel by channel: numpy's reductions over a last axis of three were most of the stage."""
    total = bgr[..., 0] + bgr[..., 1] + bgr[..., 2] + 1e-3
    return total, bgr / total[..., None]


def _boxes(detections: Sequence[Detection], margin_mm: float, occluders: bool = False) -> np.ndarray:
    """The mask (MASK_SIZE, uint8 0/1) of the boxes of the detected objects (``occluders``: of
    the hands and other occluders instead) grown by ``margin_mm``."""
    out = np.zeros(MASK_SIZE[::-1], np.uint8)
    m = margin_mm * MASK_PX_PER_MM
    for d in detections:
        if (d.cls in ("hand", "occluder")) != occluders:
            continue
        x1, y1, x2, y2 = (v / HAND_SCALE for v in d.box)
        cv2.rectangle(out, (round(x1 - m), round(y1 - m)), (round(x2 + m), round(y2 + m)), 1, -1)
    return out


class TableBackground:
    """The empty table, rectified and shrunk to the hand network's resolution (CIELAB), where it
    is known (``known``: every pixel of an empty table seen at setup; what a
    :class:`LearnedTable` has seen uncovered). ``objects``: where the background shows an object
    (a learned table's cards and marbles; none on an empty table): a change there that touches no
    hand is a thing moved in play, not a thing over the table."""

    def __init__(self, canon_empty: np.ndarray) -> None:
        if canon_empty.shape[:2] != (CANON_SIZE[1], CANON_SIZE[0]):
            raise ValueError(f"occlusion: the empty table must be a canonical image {CANON_SIZE}")
        self.lab, self.bgr = _small(canon_empty)
        self.known = np.ones(self.lab.shape[:2], bool)
        self.objects = np.zeros(self.lab.shape[:2], bool)
        self._sum, self._chroma = _shares(self.bgr)

    @classmethod
    def known_where(
        cls, lab: np.ndarray, bgr: np.ndarray, known: np.ndarray, objects: np.ndarray | None = None
    ) -> TableBackground:
        """A background known only at ``known`` (MASK_SIZE, bool), from values at the mask's
        resolution (CIELAB and BGR 0..1, as :func:`_small` makes them), showing ``objects``."""
        out = cls.__new__(cls)
        out.lab, out.bgr, out.known = lab, bgr, known
        out.objects = np.zeros_like(known) if objects is None else objects
        out._sum, out._chroma = _shares(bgr)
        return out

    @classmethod
    def from_frame(cls, frame: np.ndarray, homography: np.ndarray) -> TableBackground:
        """The background from a camera frame of the empty table and its calibration."""
        canon = cv2.warpPerspective(
            frame, canonical_from_image(homography), CANON_SIZE, flags=cv2.INTER_LINEAR
        )
        return cls(canon)

    def changed(self, canon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per mask pixel (MASK_SIZE, bool): does the table look different from when it was
        empty, and is that difference only a shadow (darker by SHADOW_RATIO, same color)?"""
        lab, bgr = _small(canon)
        k = self.known
        gain = np.median((lab[..., 0][k] + 1.0) / (self.lab[..., 0][k] + 1.0)) if k.any() else 1.0
        d = lab - self.lab * np.array([gain, 1.0, 1.0], np.float32)
        chroma = np.sqrt(d[..., 1] ** 2 + d[..., 2] ** 2)
        dist = np.sqrt((LIGHTNESS_WEIGHT * d[..., 0]) ** 2 + chroma**2)
        changed = cv2.medianBlur(((dist > CHANGED_DISTANCE) & k).astype(np.uint8), 3).astype(bool) & k
        # a shadow scales B, G and R alike: the same chromaticity, a lower sum
        s_now, chroma_now = _shares(bgr)
        ratio = s_now / (self._sum * gain)
        off = np.abs(chroma_now - self._chroma)
        tint = np.maximum(np.maximum(off[..., 0], off[..., 1]), off[..., 2])
        shadow = (ratio >= SHADOW_RATIO[0]) & (ratio <= SHADOW_RATIO[1]) & (tint < SHADOW_TINT)
        return changed, changed & shadow

    @staticmethod
    def foreign(changed: np.ndarray, detections: Sequence[Detection]) -> list[np.ndarray]:
        """The changed patches (shadows left out) no detected object explains, each as a mask
        (MASK_SIZE, bool), large enough to hide something."""
        explained = _boxes(detections, OBJECT_MARGIN_MM)
        rest = (changed & (explained == 0)).astype(np.uint8)
        rest = cv2.morphologyEx(rest, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        n, labels, stats, _ = cv2.connectedComponentsWithStats(rest, connectivity=8)
        min_px = MIN_FOREIGN_MM2 * MASK_PX_PER_MM**2
        return [labels == i for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= min_px]

    def confirm(self, hand: np.ndarray, changed: np.ndarray) -> np.ndarray:
        """The hand network's mask without the patches where the table looks as it did empty
        (a patch over table the background does not know stays)."""
        n, labels = cv2.connectedComponents(hand.astype(np.uint8), connectivity=8)
        keep = np.zeros(n, bool)
        for i in range(1, n):
            patch = labels == i
            known = int(self.known[patch].sum())
            keep[i] = (
                known < MIN_KNOWN_SHARE * patch.sum() or changed[patch].sum() >= MIN_CHANGED_SHARE * known
            )
        return keep[labels]


def occluders(
    background: TableBackground, canon: np.ndarray, hand: np.ndarray, detections: Sequence[Detection]
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The hand mask confirmed by the empty table, and the other things that hide the table:
    a foreign patch that touches the hand and reaches the table's edge is the same arm (a sleeve
    the network missed) and joins it; one that touches the hand without reaching the edge is
    what the hand half covers (a card no detection found whole) and hides nothing more; the
    rest are returned apart (a cup, a phone), each hiding the zones its box covers, but for a
    patch where the background shows an object (a card a move took away: a learned table)."""
    changed, shadow = background.changed(canon)
    hand = background.confirm(hand, changed)
    grown = cv2.dilate(hand.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
    others = []
    for patch in background.foreign(changed & ~shadow & ~hand, detections):
        if not (patch & grown).any():
            if background.objects[patch].mean() <= 0.5:
                others.append(patch)
        elif _reaches_edge(patch):  # the arm goes on to the table's edge: a sleeve, a forearm
            hand = hand | patch
        # else: something the hand half covers (a card no detection found whole): not a hand
    return hand, others


def _reaches_edge(patch: np.ndarray) -> bool:
    return bool(patch[0].any() or patch[-1].any() or patch[:, 0].any() or patch[:, -1].any())


class LearnedTable:
    """The table learned from the game's own frames, for a camera that never saw it empty (a
    stream started mid-game, a calibration without ``--empty-table``): a hand moves, the table
    does not (issue 14, item 3).

    Each observed frame gives its pixels that no hand or other occluder covers (none within
    :data:`LEARN_MARGIN_MM`): the table, and the cards, marbles and tokens lying on it, for a
    sleeve over a card hides the card's detection and must differ from the card. The last
    :data:`LEARN_SAMPLES` values of each pixel are kept, and once :data:`LEARN_KNOWN` were seen
    their median is the background there, an object where most of them lay under a detected
    object (:attr:`TableBackground.objects`). An arm the hand network missed (a sleeve) is sampled
    too, but where it lay in fewer than half of a pixel's samples the median is what lies under
    it; a pixel no frame has shown uncovered yet is not known, and a hand over it is judged by the
    network alone.
    """

    def __init__(self) -> None:
        w, h = MASK_SIZE
        self._lab = np.zeros((LEARN_SAMPLES, h, w, 3), np.float32)
        self._object = np.zeros((LEARN_SAMPLES, h, w), bool)
        self._count = np.zeros((h, w), np.int64)
        self._background: TableBackground | None = None
        self.frames = 0

    def add(self, canon: np.ndarray, detections: Sequence[Detection], hand: np.ndarray | None) -> None:
        """Take the table of one observed frame (canonical image) where nothing covers it."""
        if canon.shape[:2] != (CANON_SIZE[1], CANON_SIZE[0]):
            raise ValueError(f"occlusion: a learned table takes canonical images {CANON_SIZE}")
        lab, _ = _small(canon)
        covered = _boxes(detections, LEARN_MARGIN_MM, occluders=True)
        under = _boxes(detections, 0.0).astype(bool)
        if hand is not None and hand.any():
            grow = 2 * round(LEARN_MARGIN_MM * MASK_PX_PER_MM) + 1
            covered |= cv2.dilate(hand.astype(np.uint8), np.ones((grow, grow), np.uint8))
        free = covered == 0
        slot = self._count % LEARN_SAMPLES
        for k in range(LEARN_SAMPLES):  # each pixel's oldest value gives way (a ring per pixel)
            here = free & (slot == k)
            cv2.copyTo(lab, here.view(np.uint8), self._lab[k])  # in place; numpy's copyto: 25x slower
            np.copyto(self._object[k], under, where=here)
        self._count += free
        self._background = None
        self.frames += 1

    def background(self) -> TableBackground | None:
        """The table as learned so far (None until some pixel is known)."""
        if self._background is None:
            n = np.minimum(self._count, LEARN_SAMPLES)
            known = n >= LEARN_KNOWN
            if not known.any():
                return None
            objects = known & (self._object.sum(axis=0, where=_first(n)) * 2 > n)
            lab = _median(self._lab, n, known)
            bgr = cv2.cvtColor(lab, cv2.COLOR_Lab2BGR)  # the median's own colour (float 0..1)
            self._background = TableBackground.known_where(lab, bgr, known, objects)
        return self._background


def _first(n: np.ndarray) -> np.ndarray:
    """Which of each pixel's LEARN_SAMPLES slots hold a value (its first ``n``: they fill in order)."""
    return np.arange(LEARN_SAMPLES)[:, None, None] < n[None]


def _median(samples: np.ndarray, n: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Per pixel, the median of its first ``n`` (3, 4 or 5) samples (LEARN_SAMPLES × h × w × 3),
    0 where not ``known``: by min/max networks, ten times faster than sorting the axis."""
    a, b, c, d, e = samples
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    cd_lo, cd_hi = np.minimum(c, d), np.maximum(c, d)
    lo2, hi2 = np.maximum(lo, cd_lo), np.minimum(hi, cd_hi)
    out = np.maximum(np.minimum(lo2, hi2), np.minimum(np.maximum(lo2, hi2), e))  # of five
    if not (n >= LEARN_SAMPLES).all():  # some pixels have three or four values yet
        m = n[..., None]
        np.copyto(out, (lo2 + hi2) / 2, where=m == 4)  # the middle two of four
        np.copyto(out, np.maximum(lo, np.minimum(hi, c)), where=m == 3)
        np.copyto(out, 0.0, where=~known[..., None])
    return out
