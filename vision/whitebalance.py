"""White balance from the markers' white paper: color under any lamp (issue 14, item 5).

A warm 2700 K bulb or a cold daylight lamp tints the whole frame, and a webcam's automatic
white balance corrects only part of it. The four marker tiles are the one thing on every table
known to be white, and the calibration says exactly where they are: the ring of paper between
the black square and the tile's edge (the 9 mm quiet zone) is sampled in all four tiles, a tile
much darker than the others (a hand or a shadow on it) is left out, and each color channel is
scaled so that the paper comes out grey at its own brightness. Identification and marble color
then read the balanced frame.
"""

from __future__ import annotations

import math
from functools import cache

import cv2
import numpy as np

from vision.zones import Zones, default_zones


def kelvin_gains(kelvin: float) -> np.ndarray:
    """BGR gains of a black-body lamp at ``kelvin`` relative to 6500 K (Tanner Helland's fit)."""

    def rgb(k: float) -> np.ndarray:
        t = k / 100
        r = 255.0 if t <= 66 else 329.7 * (t - 60) ** -0.1332
        g = 99.47 * math.log(t) - 161.12 if t <= 66 else 288.12 * (t - 60) ** -0.0755
        b = 255.0 if t >= 66 else (0.0 if t <= 19 else 138.52 * math.log(t - 10) - 305.04)
        return np.clip(np.array([b, g, r]), 1, 255)

    g = rgb(kelvin) / rgb(6500)
    return g / g.mean()


RING_MM = (2.0, 7.0)  # sampled paper: this far outside the black square (the white is 9 mm)
MAX_GAIN = 1.8  # a correction larger than this is not a lamp but a wrong sample
MIN_TILE_SHARE = 0.6  # a tile darker than this share of the brightest is covered or shaded


@cache
def _ring_points(zones: Zones, step_mm: float = 1.0) -> tuple[np.ndarray, ...]:
    """Per marker tile, sample points (table mm) on its white quiet zone."""
    out = []
    a, b = RING_MM
    s = zones.marker_mm
    for _mid, (x, y) in zones.marker_tiles:
        g = np.arange(-b, s + b + 1e-6, step_mm)
        xx, yy = np.meshgrid(x + g, y + g)
        dx = np.maximum(np.maximum(x - xx, xx - (x + s)), 0)
        dy = np.maximum(np.maximum(y - yy, yy - (y + s)), 0)
        d = np.maximum(dx, dy)
        keep = (d >= a) & (d <= b)
        out.append(np.stack([xx[keep], yy[keep]], axis=1).astype(np.float32))
    return tuple(out)


def paper_color(frame: np.ndarray, h_img: np.ndarray, zones: Zones | None = None) -> np.ndarray | None:
    """The BGR color of the markers' white paper in this frame, or None when it cannot be seen."""
    z = zones or default_zones()
    ih, iw = frame.shape[:2]
    tiles = []
    for pts in _ring_points(z):
        px = cv2.perspectiveTransform(pts[None], h_img)[0]
        ok = (px[:, 0] >= 0) & (px[:, 1] >= 0) & (px[:, 0] <= iw - 1) & (px[:, 1] <= ih - 1)
        if ok.sum() < 20:
            continue
        ij = np.round(px[ok]).astype(int)
        tiles.append(np.median(frame[ij[:, 1], ij[:, 0]].astype(np.float32), axis=0))
    if not tiles:
        return None
    t = np.array(tiles)
    bright = t.mean(axis=1)
    t = t[bright >= MIN_TILE_SHARE * bright.max()]
    return np.median(t, axis=0)


def white_gains(frame: np.ndarray, h_img: np.ndarray, zones: Zones | None = None) -> np.ndarray:
    """Per-channel (BGR) gains that make the paper grey at its brightness; ones when unknown."""
    paper = paper_color(frame, h_img, zones)
    if paper is None or paper.min() < 20 or paper.max() >= 254:  # too dark, or clipped: no measure
        return np.ones(3, np.float32)
    gains = paper.mean() / paper
    if gains.max() > MAX_GAIN or gains.min() < 1 / MAX_GAIN:
        return np.ones(3, np.float32)
    return gains.astype(np.float32)


def balance(frame: np.ndarray, h_img: np.ndarray, zones: Zones | None = None) -> np.ndarray:
    """The frame white-balanced on the markers' paper (a new image; the input is left alone)."""
    g = white_gains(frame, h_img, zones)
    if np.allclose(g, 1.0, atol=0.005):
        return frame
    return cv2.transform(frame, np.diag(g).astype(np.float32))
