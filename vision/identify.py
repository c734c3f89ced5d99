"""Card identification: which of the 112 faces a detected card (or a stacked card's top band) is.

A detected box is rectified from the camera frame through the calibration homography into a
small patch in table millimetres, turned to the card's reading direction, and compared with
every reference face by normalised cross-correlation over a few millimetres of shift (the box
is only roughly aligned). Full faces use the whole card at 0.5 px/mm plus the top band at
1 px/mm; stacked cards use the band alone. References are rebuilt from enrolled photos when
present, so identification follows the user's own copy.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.faces import BAND_MM, CARD_MM, FACE_PX_PER_MM, face_set

BAND_PPM = 1.0  # px/mm of band patches
FULL_PPM = 0.5  # px/mm of whole-card patches
SHIFT_MM = 3.0  # search radius around the detected box centre (band)
FULL_SHIFT_MM = 6.0


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
        # patch px (u, v) -> table mm, then -> image px through the calibration.
        a = np.array(
            [[sgn / ppm, 0, cx - sgn * w / (2 * ppm)], [0, sgn / ppm, cy - sgn * h / (2 * ppm)], [0, 0, 1]]
        )
        return cv2.warpPerspective(frame, h_img @ a, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)

    def _best(self, windows: np.ndarray, refs: np.ndarray) -> np.ndarray:
        return (windows @ refs.T).max(axis=0)

    def band_scores(
        self, frame: np.ndarray, h_img: np.ndarray, center_mm: tuple[float, float], rotation: int
    ) -> np.ndarray:
        """Correlation of a top band (centre in mm) with every reference band."""
        m = 2 * SHIFT_MM
        patch = self._patch(frame, h_img, center_mm, (CARD_MM[0] + m, BAND_MM + m), BAND_PPM, rotation)
        return self._best(_windows(patch.astype(np.float32), *self.band_size, 1), self.band_refs)

    def identify_band(
        self, frame: np.ndarray, h_img: np.ndarray, center_mm: tuple[float, float], rotation: int
    ) -> Match:
        """Identify a stacked card from its visible top band."""
        return _match(self.band_scores(frame, h_img, center_mm, rotation))

    def identify_card(
        self, frame: np.ndarray, h_img: np.ndarray, center_mm: tuple[float, float], rotation: int
    ) -> Match:
        """Identify a fully visible card (centre in mm) from the whole face and its band."""
        m = 2 * FULL_SHIFT_MM
        patch = self._patch(frame, h_img, center_mm, (CARD_MM[0] + m, CARD_MM[1] + m), FULL_PPM, rotation)
        full = self._best(_windows(patch.astype(np.float32), *self.full_size, 1), self.full_refs)
        up = CARD_MM[1] / 2 - BAND_MM / 2
        band_c = (center_mm[0], center_mm[1] - up) if rotation == 0 else (center_mm[0], center_mm[1] + up)
        return _match(0.5 * full + 0.5 * self.band_scores(frame, h_img, band_c, rotation))


def _match(scores: np.ndarray) -> Match:
    order = np.argsort(-scores)
    return Match(int(order[0]), float(scores[order[0]]), float(scores[order[0]] - scores[order[1]]))
