"""Card identification: which of the 112 faces a detected card (or a stacked card's top band) is.

A detected box is rectified from the camera frame through the calibration homography into a
small patch in table millimetres, turned to the card's reading direction, and compared with
every reference face by normalised cross-correlation over a few millimetres of shift (the box
is only roughly aligned). Full faces use the whole card at 0.5 px/mm plus the top band at
1 px/mm; stacked cards use the band alone. References are rebuilt from enrolled photos when
present, so identification follows the user's own copy.

What the table itself says narrows the choice (:func:`assign`): a Display row only holds cards
of its level, a dashboard column only cards of its type, every card exists once, and a seat's
Starting Gizmo is card #seat (the four are identical on real copies; the rules engine gives
seat ``s`` Starting Gizmo ``s``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from referee.gizmos.cards import default_cards
from vision.faces import BAND_MM, CARD_MM, FACE_PX_PER_MM, N_CARDS, face_set

BAND_PPM = 1.0  # px/mm of band patches
FULL_PPM = 0.5  # px/mm of whole-card patches
SHIFT_MM = 3.0  # search radius around the detected box centre (band)
FULL_SHIFT_MM = 6.0
LEVELS = np.array([c.level for c in default_cards()])
TYPES = np.array([c.type for c in default_cards()])
STARTING = np.flatnonzero(LEVELS == 0)  # the Starting Gizmos, one per seat


def level_cards(level: int) -> np.ndarray:
    """Candidate mask: the cards of one level (a Display row)."""
    return np.equal(LEVELS, level)


def built_cards() -> np.ndarray:
    """Candidate mask: cards that can be built or archived (every card but the Starting Gizmos)."""
    return LEVELS > 0


def column_cards(column: str, seat: int) -> np.ndarray:
    """Candidate mask for one of a seat's dashboard columns: the built cards of that type.

    The rules place every built gizmo in the column of its type; the file column also holds the
    seat's own Starting Gizmo.
    """
    mask = (LEVELS > 0) & (column == TYPES)
    if column == default_cards()[seat].type:
        mask[seat] = True
    return mask


def _size(w_mm: float, h_mm: float, ppm: float) -> tuple[int, int]:
    return round(w_mm * ppm), round(h_mm * ppm)


def _normalise(v: np.ndarray) -> np.ndarray:
    """Zero-mean, unit-norm rows (so a dot product is the correlation coefficient)."""
    v = v - v.mean(axis=-1, keepdims=True)
    return v / (np.linalg.norm(v, axis=-1, keepdims=True) + 1e-6)


def _windows(patch: np.ndarray, tw: int, th: int, step: int) -> np.ndarray:
    """All ``tw × th`` windows of a patch at ``step`` px, flattened and normalised."""
    h, w = patch.shape[:2]
    rows = [
        patch[y : y + th, x : x + tw].reshape(-1)
        for y in range(0, h - th + 1, step)
        for x in range(0, w - tw + 1, step)
    ]
    return _normalise(np.asarray(rows, np.float32))


@dataclass(frozen=True, slots=True)
class Match:
    """The best card, its score (correlation, -1..1) and the margin to the runner-up."""

    card: int
    score: float
    margin: float

    @property
    def confidence(self) -> float:
        """A 0..1 confidence from score and margin (a calibrated probability it is not)."""
        return float(np.clip(0.5 * (self.score + 1) * min(1.0, 0.5 + 5 * self.margin), 0.0, 1.0))


class Identifier:
    """Reference descriptors of the 112 faces and the matcher."""

    def __init__(self, faces: tuple[np.ndarray, ...] | None = None, enrol_dir: str | None = None) -> None:
        faces = faces if faces is not None else face_set(enrol_dir)
        band_px = round(BAND_MM * FACE_PX_PER_MM)
        self.band_size = _size(CARD_MM[0], BAND_MM, BAND_PPM)
        self.full_size = _size(CARD_MM[0], CARD_MM[1], FULL_PPM)
        blur = (3, 3)
        self.band_refs = _normalise(
            np.stack(
                [
                    cv2.GaussianBlur(
                        cv2.resize(f[:band_px], self.band_size, interpolation=cv2.INTER_AREA), blur, 0
                    ).reshape(-1)
                    for f in faces
                ]
            ).astype(np.float32)
        )
        self.full_refs = _normalise(
            np.stack(
                [cv2.resize(f, self.full_size, interpolation=cv2.INTER_AREA).reshape(-1) for f in faces]
            ).astype(np.float32)
        )

    @staticmethod
    def _patch(
        frame: np.ndarray,
        h_img: np.ndarray,
        center_mm: tuple[float, float],
        size_mm: tuple[float, float],
        ppm: float,
        rotation: int,
    ) -> np.ndarray:
        """Rectify a table region (centre, size in mm; card reading direction 0 or 180°) from the frame."""
        w, h = _size(*size_mm, ppm)
        cx, cy = center_mm
        sgn = 1.0 if rotation == 0 else -1.0
        # patch px (u, v) -> table mm, then -> image px through the calibration; pixel u is centred
        # on u (OpenCV's convention), so the patch centre is u = (w - 1) / 2.
        a = np.array(
            [
                [sgn / ppm, 0, cx - sgn * (w - 1) / (2 * ppm)],
                [0, sgn / ppm, cy - sgn * (h - 1) / (2 * ppm)],
                [0, 0, 1],
            ]
        )
        return cv2.warpPerspective(frame, h_img @ a, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)

    @staticmethod
    def _best(windows: np.ndarray, refs: np.ndarray, among: np.ndarray | None) -> np.ndarray:
        """Each reference's best correlation over the windows; -inf for references not asked about."""
        if among is None:
            return (windows @ refs.T).max(axis=0)
        out = np.full(len(refs), -np.inf, np.float32)
        out[among] = (windows @ refs[among].T).max(axis=0)
        return out

    def band_scores(
        self,
        frame: np.ndarray,
        h_img: np.ndarray,
        center_mm: tuple[float, float],
        rotation: int,
        among: np.ndarray | None = None,
    ) -> np.ndarray:
        """Correlation of a top band (centre in mm) with every reference band (or those in ``among``)."""
        m = 2 * SHIFT_MM
        patch = self._patch(frame, h_img, center_mm, (CARD_MM[0] + m, BAND_MM + m), BAND_PPM, rotation)
        return self._best(_windows(patch.astype(np.float32), *self.band_size, 1), self.band_refs, among)

    def identify_band(
        self, frame: np.ndarray, h_img: np.ndarray, center_mm: tuple[float, float], rotation: int
    ) -> Match:
        """Identify a stacked card from its visible top band."""
        return _match(self.band_scores(frame, h_img, center_mm, rotation))

    def card_scores(
        self,
        frame: np.ndarray,
        h_img: np.ndarray,
        center_mm: tuple[float, float],
        rotation: int,
        among: np.ndarray | None = None,
    ) -> np.ndarray:
        """Correlation of a whole card (centre in mm) with every reference (or those in ``among``):
        the face and its band averaged."""
        m = 2 * FULL_SHIFT_MM
        patch = self._patch(frame, h_img, center_mm, (CARD_MM[0] + m, CARD_MM[1] + m), FULL_PPM, rotation)
        full = self._best(_windows(patch.astype(np.float32), *self.full_size, 1), self.full_refs, among)
        up = CARD_MM[1] / 2 - BAND_MM / 2
        band_c = (center_mm[0], center_mm[1] - up) if rotation == 0 else (center_mm[0], center_mm[1] + up)
        return 0.5 * full + 0.5 * self.band_scores(frame, h_img, band_c, rotation, among)

    def identify_card(
        self, frame: np.ndarray, h_img: np.ndarray, center_mm: tuple[float, float], rotation: int
    ) -> Match:
        """Identify a fully visible card (centre in mm) from the whole face and its band."""
        return _match(self.card_scores(frame, h_img, center_mm, rotation))


def _match(scores: np.ndarray, allowed: np.ndarray | None = None) -> Match:
    s = scores if allowed is None else np.where(allowed, scores, -np.inf)
    order = np.argsort(-s)
    runner_up = s[order[1]] if np.isfinite(s[order[1]]) else -1.0
    return Match(int(order[0]), float(s[order[0]]), float(s[order[0]] - runner_up))


def assign(scores: Sequence[np.ndarray], allowed: Sequence[np.ndarray]) -> list[Match]:
    """Identify several cards at once, each card id at most once, each within its candidate mask.

    Greedy on the best remaining score: the most certain card is settled first and leaves the
    table, which is what resolves a blurred band that looks like a card seen clearly elsewhere.
    A Starting Gizmo candidate takes the best score of the four (they are identical on real
    copies). Every row's mask must leave at least one card, or ``ValueError`` says which row.
    """
    n = len(scores)
    table = np.full((n, N_CARDS), -np.inf, np.float32)
    for i, (sc, ok) in enumerate(zip(scores, allowed, strict=True)):
        if not ok.any():
            raise ValueError(f"identification: no candidate card for detection {i}")
        row = np.where(ok, sc, -np.inf)
        start = ok[STARTING]
        if start.any():
            row[STARTING[start]] = sc[STARTING].max()
        table[i] = row
    out: list[Match | None] = [None] * n
    free = np.ones(N_CARDS, bool)
    for _ in range(n):
        live = np.where(free[None, :], table, -np.inf)
        live[[i for i in range(n) if out[i] is not None]] = -np.inf
        i, card = (int(v) for v in np.unravel_index(int(np.argmax(live)), live.shape))
        if not np.isfinite(live[i, card]):  # more cards than candidates left: fall back to the best
            for k in range(n):
                if out[k] is None:
                    out[k] = _match(table[k])
            break
        out[i] = _match(live[i])
        free[card] = False
    return [m for m in out if m is not None]
