"""Where a hand lies over the table: a small segmentation network on the rectified table.

The detector's hand boxes were the weak point of the observation (docs/vision.md): a hand and
forearm reaching in diagonally is bigger than the detector's training tiles and came out as
several weak partial boxes, and a zone the hand lies over must be reported unseen. Here a
purpose-built network marks the hand's pixels instead, on the canonical table image shrunk
``HAND_SCALE`` times (2.5 mm a pixel); the hand's box and the zones it covers follow from the mask.

Inference needs no torch (the ONNX export runs on OpenVINO, as the detector does, or on OpenCV's
DNN module; 6-9 ms of CPU a frame, a seventh of the detector's time).
Rendering the training set and training (they need torch) are in :mod:`vision.training.hands`.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import cv2
import numpy as np

from vision.geometry import CANON_PX_PER_MM, CANON_SIZE
from vision.networks import BACKENDS, Network
from vision.paths import LOCATIONS

HAND_SCALE = 2  # canonical pixels per mask pixel
MASK_SIZE = (CANON_SIZE[0] // HAND_SCALE, CANON_SIZE[1] // HAND_SCALE)  # (w, h)
MASK_PX_PER_MM = CANON_PX_PER_MM / HAND_SCALE
#: A mask pixel is hand when the hand covers more than this share of it: any part at all, so
#: that the mask's box holds the whole hand (a fingertip is narrower than a mask pixel).
TOUCHED = 0.0
#: A patch of hand smaller than this (mask pixels; 150 mm²) is noise, not a hand.
MIN_HAND_PX = round(150 * MASK_PX_PER_MM**2)
HAND_SHARE = 0.1  #: a patch under this share of the largest one is a stray false patch
#: Where the network is sure of a hand (probability over this), and how much of a patch must be
#: sure for it to be a hand: a palm's area (8,000 mm², 80 × 100 mm). Wood grain of a skin-like
#: colour gets patches the network is unsure of (docs/vision.md, "Eighth round").
SURE = 0.95
PALM_PX = round(8000 * MASK_PX_PER_MM**2)
#: A patch besides the surest one is kept only if the network is sure of this share of it: a
#: second hand, or a piece of the arm a strap cut off, is sure over 0.51-0.98 of its area on the
#: development frames, wood grain's false patches beside a real hand over 0.33-0.63. The surest
#: patch needs no such share (a knit sleeve's arm can be sure over a third of it only).
SECOND_SURE = 0.5
#: Patches nearer each other than this (mm) are one arm that a watch strap, a sleeve's edge or
#: the network's doubt split in two (a wrist is about 50 mm across): one box holds them both.
JOIN_MM = 50.0


class HandSegmenter:
    """The exported hand network: canonical table image -> hand mask. On OpenVINO, two threads
    (about 2 ms of CPU a frame less than OpenCV DNN's 9.5-12.3 ms, logits equal to 5e-6;
    docs/vision.md, "Eleventh round"), or OpenCV's DNN module (``backend="opencv"``, before)."""

    def __init__(self, model: str | Path | None = None, backend: str = BACKENDS[0]) -> None:
        path = Path(model) if model else LOCATIONS.hands
        self.net = Network(path, "hand model", backend, threads=2)
        self.path = path

    def probabilities(self, canon: np.ndarray) -> np.ndarray:
        """Per mask pixel, the probability that a hand lies there (MASK_SIZE, float32)."""
        logits = self.net.run(to_input(canon)[None])[0, 0]
        return (1 / (1 + np.exp(-logits))).astype(np.float32)

    def find(self, canon: np.ndarray) -> tuple[np.ndarray, float]:
        """The hand's pixels (MASK_SIZE, bool: probability over one half, specks and patches
        with no palm the network is sure of removed) and the mean probability over them (0
        without a hand)."""
        prob = self.probabilities(canon)
        mask = hand_patches(prob)
        return mask, float(prob[mask].mean()) if mask.any() else 0.0


def to_input(canon: np.ndarray) -> np.ndarray:
    """The network's input for a canonical table image: shrunk, RGB, CHW float in [0, 1]."""
    small = cv2.resize(canon, MASK_SIZE, interpolation=cv2.INTER_AREA)
    return np.ascontiguousarray(small[..., ::-1].transpose(2, 0, 1), dtype=np.float32) / 255.0


def clean_mask(mask: np.ndarray) -> np.ndarray:
    """Keep the patches that can be hands: a hand is one large connected patch, so a patch
    smaller than MIN_HAND_PX or a tenth of the largest is a stray false one (it would stretch
    the hand's box across the table). Two hands are both large and both kept."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if n <= 1:
        return np.zeros(mask.shape, bool)
    area = stats[:, cv2.CC_STAT_AREA]
    keep = area >= max(MIN_HAND_PX, HAND_SHARE * area[1:].max())
    keep[0] = False
    return keep[labels]


def hand_patches(prob: np.ndarray) -> np.ndarray:
    """The hand's pixels of a probability map: the patches over one half that :func:`clean_mask`
    keeps and that hold at least a palm (PALM_PX) of pixels the network is sure of (over SURE).

    A real hand and forearm is one solid patch the network is sure of almost everywhere (on
    development frames at least 13,500 mm² of it over 0.95); wood grain or a table of a skin-like
    colour comes out as patches it is half sure of, sure on at most 5,500 mm²: such a patch
    would hide the zones under its box. Beside a real hand, a false patch can hold a palm's
    worth of sure pixels and still be sure over less than half of itself (SECOND_SURE), where a
    second real patch is not. What this gives up: a hand of which less than a palm
    lies on the table (fingertips just over its edge) is not reported."""
    mask = clean_mask(prob > 0.5)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    sure = np.bincount(labels[prob > SURE], minlength=n)
    keep = sure >= PALM_PX
    keep[0] = False
    if keep.sum() > 1:  # a second patch must be a hand the network is sure of over most of it
        second = keep & (np.arange(n) != int(np.argmax(np.where(keep, sure, -1))))
        keep &= ~second | (sure >= SECOND_SURE * stats[:, cv2.CC_STAT_AREA])
    return keep[labels]


def shrink_mask(canon_mask: np.ndarray) -> np.ndarray:
    """A canonical-resolution hand mask (0/255) at the network's resolution: the share covered."""
    return cv2.resize(canon_mask.astype(np.float32) / 255.0, MASK_SIZE, interpolation=cv2.INTER_AREA)


def hand_cells(canon_mask: np.ndarray) -> np.ndarray:
    """What the network should mark for a canonical hand mask (0/255): the mask pixels it touches."""
    return shrink_mask(canon_mask) > TOUCHED


def mask_boxes_mm(mask: np.ndarray) -> list[tuple[float, float, float, float]]:
    """One box (table mm) per hand of a mask at the network's resolution: round each patch,
    patches nearer than JOIN_MM joined. Two hands far apart, or a hand and a false patch on
    wood grain, each hide what lies under them; one box round both hid every zone between
    (docs/vision.md, "Twenty-fourth round")."""
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    boxes = [
        (x / MASK_PX_PER_MM, y / MASK_PX_PER_MM, (x + w) / MASK_PX_PER_MM, (y + h) / MASK_PX_PER_MM)
        for x, y, w, h, _area in stats[1:n].tolist()
    ]
    joined = True
    while joined:
        joined = False
        for i, j in combinations(range(len(boxes)), 2):
            a, b = boxes[i], boxes[j]
            if max(max(a[0], b[0]) - min(a[2], b[2]), max(a[1], b[1]) - min(a[3], b[3])) <= JOIN_MM:
                boxes[i] = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                del boxes[j]
                joined = True
                break
    return boxes


def mask_iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two boolean masks (1 when both are empty)."""
    union = np.logical_or(a, b).sum()
    return float(np.logical_and(a, b).sum() / union) if union else 1.0
