"""How small a marker ArUco still finds: detection rate by marker side in pixels (issue 14, item 4).

Each trial draws one 4x4 marker with its one-cell white quiet zone on a textured table, turned
at random and foreshortened as a tilted camera sees it (up to 0.75), softened by the lens
(Gaussian 0.6-1.4 px), with sensor noise and JPEG (quality 40-80). It is looked for two ways:
the whole-frame pass (``vision.calibrate.detect_markers`` without a prediction), and that pass
followed by the search near a predicted place (the predicted corners off by up to 2 px, as from
the other three markers or the last calibration); found means every corner within 2.5 px of the
truth. The smallest side found in at least 99 % of trials is what ``print-markers
--camera-height`` designs for (``vision.calibrate.MIN_MARKER_PX``). The search near a prediction
ends with aligning the known marker image (``vision.calibrate.align_marker``); the last column
counts what it must never do: find marker 1 where marker 2 lies in its place, or where only the
table is (the same frame without the marker), out of twice the trials.

    .venv/bin/python benchmarks/markers.py [--trials 100]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2
import numpy as np

from vision.calibrate import ARUCO_DICT, detect_markers

TOLERANCE_PX = 2.5  # a marker counts as found when every corner is within this of the truth


def trial(rng: np.random.Generator, side: float, marker: int | None = 1) -> tuple[np.ndarray, np.ndarray]:
    """A frame with ``marker`` (None: none, the bare table) of ``side`` px and its true corners."""
    d = cv2.aruco.getPredefinedDictionary(ARUCO_DICT)
    tile = np.full((96, 96), 238, np.uint8)
    if marker is not None:
        tile[12:84, 12:84] = cv2.aruco.generateImageMarker(d, marker, 72)
    src = np.array([[12, 12], [84, 12], [84, 84], [12, 84]], np.float32)
    a = rng.uniform(0, 2 * np.pi)
    squash = rng.uniform(0.75, 1.0)
    unit = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]) * [1, squash]
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    dst = (unit @ rot.T * side + 100 + rng.uniform(-5, 5, 2)).astype(np.float32)
    m = cv2.getPerspectiveTransform(src, dst)
    img: np.ndarray = (rng.uniform(70, 170) + 12 * rng.normal(0, 1, (200, 200))).astype(np.float32)
    mask = cv2.warpPerspective(np.ones((96, 96), np.float32), m, (200, 200), flags=cv2.INTER_AREA)
    warped = cv2.warpPerspective(tile.astype(np.float32), m, (200, 200), flags=cv2.INTER_AREA)
    if marker is not None:
        img = img * (1 - mask) + warped * mask
    img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.6, 1.4))
    img = np.clip(img * rng.uniform(0.7, 1.1) + rng.normal(0, rng.uniform(3, 7), img.shape), 0, 255)
    _, buf = cv2.imencode(".jpg", img.astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 81))])
    frame = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE)
    assert frame is not None  # a JPEG it has just encoded
    return frame, dst


def main(argv: list[str] | None = None) -> int:
    """Print the detection rate per marker side, whole frame and near a prediction."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=100)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(20261123)
    print(
        "marker side (px): found by the whole-frame pass / near a prediction / found where it is not"
        f" (another marker or none), {args.trials} trials each"
    )
    for side in (10, 12, 14, 16, 18, 20, 22, 25, 28, 32, 40):
        whole = near = false = 0
        for _ in range(args.trials):
            img, quad = trial(rng, side)
            got = detect_markers(img).get(1)
            whole += got is not None and float(np.abs(got - quad).max()) < TOLERANCE_PX
            guess = {1: quad + rng.uniform(-2, 2, quad.shape).astype(np.float32)}
            got = detect_markers(img, guess).get(1)
            near += got is not None and float(np.abs(got - quad).max()) < TOLERANCE_PX
            for other in (2, None):
                img, quad = trial(rng, side, other)
                guess = {1: quad + rng.uniform(-2, 2, quad.shape).astype(np.float32)}
                false += 1 in detect_markers(img, guess)
        rates = f"{whole / args.trials:6.1%}  {near / args.trials:6.1%}"
        print(f"  {side:3d}: {rates}  {false}/{2 * args.trials}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
