"""Marble color as its own stage: a Gaussian classifier in CIELAB on the rectified marble.

The detector finds marbles and also guesses their color; this stage re-reads the color from
the full-resolution frame, which the canonical 0.8 px/mm image the detector sees has thrown
away. Each detected marble is rectified through the calibration into a small patch at 2 px/mm;
the median L*, a*, b* of its central disc, without the brightest 15 % (the specular highlight),
is scored against one Gaussian per color fitted on marbles of rendered tables
(:mod:`vision.training.marbles`, ``gizmos-referee vision fit-marbles``; seeds of their own,
never the benchmark's). A marble whose best color is not clearly ahead, or that looks like no
marble color at all, is ``"unknown"`` rather than a guess.

The detector's own reading is a second opinion: a marble the stage cannot place among the
colors (unsure, yet like a marble: not an outlier) takes the detector's color when the detector
is at least :data:`DETECTOR_SURE` of it. On 180 development frames (seeds 8,900,000+,
9,160,000+, 9,170,000+, 9,260,000+, 9,270,000+, ray-traced 9,460,000+) the stage was unsure of
three true marbles, all black Energy Row marbles under a lamp's highlight (its best 0.55-0.81
sure, once black, once yellow, once red), and the detector called each black at 0.90-0.92; every
outlier (36 boxes) was kept ``"unknown"``, 35 of them on no marble at all.

A box drawn a few millimetres off its marble (in a heap, or a sphere a tilted camera sees
stretched away from it) samples table with the marble and reads "unknown". Such a reading is
tried again at eight offsets :data:`SEARCH_MM` away and the most marble-like one decides, when
the stage is sure of it there (:meth:`MarbleColors.classify`). On the 180 development frames of
the nineteenth round the shipped pipeline read 5 kept marble boxes "unknown": the search read 2
of them, on true marbles, their true colour (a black Energy Row marble on a traced table 8 mm
off its box, a yellow marble on `deck`) and left the other 3 unknown (two boxes on no marble, one red
marble whose colour lies beyond the outlier limit at every offset); it gave no box a wrong colour
(docs/vision.md, "Nineteenth round").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cv2
import numpy as np

from referee.gizmos.cards import COLORS
from vision.errors import ModelFileError
from vision.geometry import MARBLE_MM

PATCH_PPM = 2.0  # px/mm of the marble patch
PATCH_MM = 24.0  # patch side: the 16 mm marble and a margin for an off-centre box
INNER = 0.75  # radius of the sampled disc, in marble radii
HIGHLIGHT_PERCENTILE = 85.0
MIN_POSTERIOR = 0.95
#: A marble the stage is unsure of takes the detector's color at this detector confidence.
DETECTOR_SURE = 0.85
#: A marble read "unknown" at its box's centre is looked for this far off it (mm; the patch's
#: margin allows 4): a box in a heap or on a sphere seen by a tilted camera lies a few mm off.
SEARCH_MM = 4.0
DEFAULT_PARAMS = Path(__file__).with_name("data") / "marble_colours.json"


def marble_patch(frame: np.ndarray, h_img: np.ndarray, center_mm: tuple[float, float]) -> np.ndarray:
    """The marble at ``center_mm`` (table mm) rectified from the frame at PATCH_PPM."""
    s = round(PATCH_MM * PATCH_PPM)
    cx, cy = center_mm
    a = np.array(
        [
            [1 / PATCH_PPM, 0, cx - s / (2 * PATCH_PPM)],
            [0, 1 / PATCH_PPM, cy - s / (2 * PATCH_PPM)],
            [0, 0, 1],
        ]
    )
    return cv2.warpPerspective(frame, h_img @ a, (s, s), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)


@cache
def _disc(side: int, dx: int = 0, dy: int = 0) -> np.ndarray:
    r_px = MARBLE_MM / 2 * PATCH_PPM
    yy, xx = np.mgrid[0:side, 0:side] + 0.5 - side / 2
    return np.hypot(xx - dx, yy - dy) < INNER * r_px


def features(patch: np.ndarray, offset: tuple[int, int] = (0, 0)) -> np.ndarray:
    """(L*, a*, b*) of the marble body: the median of its central disc (moved ``offset`` patch
    pixels) without the highlight."""
    return _body(_lab(patch), offset)


def _lab(patch: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(patch, cv2.COLOR_BGR2LAB).astype(np.float32)


def _body(lab_patch: np.ndarray, offset: tuple[int, int]) -> np.ndarray:
    """:func:`features` of a patch already in CIELAB (one conversion serves every offset)."""
    lab = lab_patch[_disc(lab_patch.shape[0], *offset)]
    body = lab[lab[:, 0] <= np.percentile(lab[:, 0], HIGHLIGHT_PERCENTILE)]
    m = np.median(body, axis=0)
    return np.array([m[0] * 100 / 255, m[1] - 128, m[2] - 128], np.float64)


@dataclass(frozen=True, slots=True)
class ColorModel:
    """One Gaussian per color (mean, covariance) and the outlier limit (squared Mahalanobis)."""

    means: np.ndarray  # (colors, 3)
    covs: np.ndarray  # (colors, 3, 3)
    outlier: float

    def log_likelihoods(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per color: Gaussian log-likelihoods and squared Mahalanobis distances of features ``x`` (n, 3)."""
        d = x[:, None, :] - self.means[None]
        inv = np.linalg.inv(self.covs)
        m2 = np.einsum("ncj,cjk,nck->nc", d, inv, d)
        return -0.5 * m2 - 0.5 * np.log(np.linalg.det(self.covs))[None], m2

    def to_json(self) -> dict[str, object]:
        """The parameter file's content."""
        return {
            "format": "gizmos-marble-colours",
            "version": 1,
            "colours": list(COLORS),
            "features": "median L*(0..100), a*, b* of the central disc without the highlight",
            "means": self.means.round(4).tolist(),
            "covariances": self.covs.round(4).tolist(),
            "outlier_mahalanobis2": round(self.outlier, 2),
        }

    @classmethod
    def load(cls, path: str | Path = DEFAULT_PARAMS) -> ColorModel:
        """Read a parameter file, with a clear error when it is missing or malformed."""
        p = Path(path)
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
            if doc.get("format") != "gizmos-marble-colours" or doc.get("colours") != list(COLORS):
                raise ValueError("not a marble colour model for colours " + ", ".join(COLORS))
            model = cls(
                np.array(doc["means"], np.float64),
                np.array(doc["covariances"], np.float64),
                float(doc["outlier_mahalanobis2"]),
            )
            if model.means.shape != (len(COLORS), 3) or model.covs.shape != (len(COLORS), 3, 3):
                raise ValueError("wrong parameter shapes")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelFileError(f"marble colours: cannot load {p}: {exc}") from exc
        return model


def fit(x: np.ndarray, colors: list[str], ridge: float = 1.0) -> ColorModel:
    """Fit the Gaussians on features ``x`` (n, 3) with their true colors."""
    y = np.array(colors)
    means, covs = [], []
    for c in COLORS:
        xc = x[y == c]
        if len(xc) < 10:
            raise ValueError(f"marble colours: only {len(xc)} {c} samples to fit on")
        means.append(xc.mean(0))
        covs.append(np.cov(xc.T) + ridge * np.eye(3))
    model = ColorModel(np.array(means), np.array(covs), 0.0)
    _, m2 = model.log_likelihoods(x)
    own = m2[np.arange(len(y)), [COLORS.index(c) for c in colors]]
    # Beyond half as far again as all but the rarest 0.1 % of real marbles: not a marble color.
    return ColorModel(model.means, model.covs, float(1.5 * np.percentile(own, 99.9)))


class MarbleColors:
    """The color stage: ``classify`` reads one marble's color from the frame."""

    def __init__(self, params: str | Path | ColorModel = DEFAULT_PARAMS) -> None:
        self.model = params if isinstance(params, ColorModel) else ColorModel.load(params)

    def classify_features(
        self, x: np.ndarray, detected: tuple[str, float] | None = None
    ) -> list[tuple[str, float]]:
        """(color or "unknown", posterior) for each feature row; ``detected``: the detector's
        (color, confidence), taken where the stage is unsure and the detector sure (see the
        module's docstring; its confidence is then the posterior)."""
        ll, m2 = self.model.log_likelihoods(np.atleast_2d(x))
        p = np.exp(ll - ll.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        out = []
        for row, dist in zip(p, m2, strict=True):
            k = int(row.argmax())
            like_a_marble = dist.min() <= self.model.outlier
            if row[k] >= MIN_POSTERIOR and like_a_marble:
                out.append((COLORS[k], float(row[k])))
            elif like_a_marble and detected is not None and detected[1] >= DETECTOR_SURE:
                out.append(detected)
            else:
                out.append(("unknown", float(row[k])))
        return out

    def classify(
        self,
        frame: np.ndarray,
        h_img: np.ndarray,
        center_mm: tuple[float, float],
        detected: tuple[str, float] | None = None,
    ) -> tuple[str, float]:
        """The color of the marble at ``center_mm`` and its posterior probability (``detected``:
        the detector's color and confidence, a second opinion: :meth:`classify_features`)."""
        patch = marble_patch(frame, h_img, center_mm)
        got = self.classify_features(features(patch), detected)[0]
        if got[0] != "unknown":
            return got
        return self._off_centre(patch) or got

    def _off_centre(self, patch: np.ndarray) -> tuple[str, float] | None:
        """The color of a marble lying up to :data:`SEARCH_MM` off its box's centre: the disc at
        the most marble-like of eight offsets (the smallest Mahalanobis distance to any color),
        when the stage is sure of it there; ``None`` otherwise."""
        k = round(SEARCH_MM * PATCH_PPM)
        if k == 0:
            return None
        offsets = [(dx, dy) for dx in (-k, 0, k) for dy in (-k, 0, k) if (dx, dy) != (0, 0)]
        lab = _lab(patch)
        x = np.array([_body(lab, o) for o in offsets])
        _, m2 = self.model.log_likelihoods(x)
        best = int(m2.min(1).argmin())
        color, p = self.classify_features(x[best : best + 1])[0]
        return (color, p) if color != "unknown" else None
