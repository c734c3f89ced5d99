"""A card's outline: found in a photo or on the table, and the card cut out along it.

An enrolment photo is rarely cropped to the card's edges: a phone held by hand sees the card a
few degrees off square (keystone, a millimetre or more at the corners) with a strip of table
round it. The card's own outline says where it is: :func:`card_quad` finds the four corners of
the card (the largest convex quadrilateral of a card's proportions), :func:`rectify` warps it
to the canonical face. On the calibrated table the same edges, in a top-down view of the table
in millimetres, are every card of a spread (:func:`card_boxes`).

:func:`white_patch` balances a card on its own brightest colours (each channel scaled so its
97th percentile is equal): a per-channel colour cast, which multiplies channels, is gone, and
what the card shows in colour stays. Whether it is used is decided by
``benchmarks/identify_methods.py --phone`` (docs/vision.md, "Enrolment photos").
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.faces import CARD_MM, FACE_H, FACE_W

CARD_ASPECT = CARD_MM[0] / CARD_MM[1]  # 63 : 88
#: A quad off a card's proportions by more than this is not the card: the true outlines of the
#: tuning deck's photos (``identify_methods.py --phone --decks random``: loose crops, keystone,
#: blur, low resolution together) are within 2.8 % at the 90th percentile; a card's inner frame
#: inset evenly by more than 4 mm is narrower in proportion than this.
QUAD_ASPECT_TOLERANCE = 0.04
TIGHT_ASPECT = 0.01  # a photo of a card's proportions within this ...
EVEN_INSET_MM = 1.0  # ... and an outline this evenly inset is taken as cropped to the card
MIN_QUAD_SHARE = 0.25  # the card fills at least this share of an enrolment photo
WORK_PX = 480  # the long side an outline is searched at
WHITE_PERCENTILE = 97.0


def _edges(img: np.ndarray) -> np.ndarray:
    """Edges of any channel (a card on a table of its own brightness still differs in hue)."""
    blur = cv2.GaussianBlur(img, (5, 5), 0)
    e: np.ndarray = np.zeros(img.shape[:2], np.uint8)
    for c in cv2.split(blur):
        v = float(np.median(c))
        e = cv2.bitwise_or(e, cv2.Canny(c, max(10.0, 0.4 * v), max(30.0, 0.9 * v)))
    return cv2.dilate(e, np.ones((3, 3), np.uint8))


#: The table's edges a spread's cards are found by: blurred this much (mm), then Canny with the
#: high threshold at this percentile of the gradient's strength, each channel on its own (a
#: table's grain and weave fall below; a card's border on any table stays).
TABLE_BLUR_MM = 1.25
TABLE_EDGE_PERCENTILE = 97.0


def _strong_edges(img: np.ndarray, px_per_mm: float) -> np.ndarray:
    """The strongest edges of a top-down view of the table (:data:`TABLE_EDGE_PERCENTILE`)."""
    blur = cv2.GaussianBlur(img, (0, 0), TABLE_BLUR_MM * px_per_mm)
    e: np.ndarray = np.zeros(img.shape[:2], np.uint8)
    for c in cv2.split(blur):
        strength = cv2.magnitude(cv2.Sobel(c, cv2.CV_32F, 1, 0), cv2.Sobel(c, cv2.CV_32F, 0, 1))
        high = max(20.0, float(np.percentile(strength, TABLE_EDGE_PERCENTILE)))
        e = cv2.bitwise_or(e, cv2.Canny(c, max(10.0, 0.4 * high), high))
    return cv2.dilate(e, np.ones((3, 3), np.uint8))


def _order(pts: np.ndarray) -> np.ndarray:
    """Corners as top-left, top-right, bottom-right, bottom-left."""
    pts = pts.reshape(4, 2).astype(np.float32)
    s, d = pts.sum(axis=1), np.diff(pts, axis=1).ravel()
    return np.array([pts[np.argmin(s)], pts[np.argmin(d)], pts[np.argmax(s)], pts[np.argmax(d)]], np.float32)


def _sides(q: np.ndarray) -> tuple[float, float]:
    """Mean width and height of an ordered quad."""
    w = (np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / 2
    h = (np.linalg.norm(q[3] - q[0]) + np.linalg.norm(q[2] - q[1])) / 2
    return float(w), float(h)


def _best_quad(mask: np.ndarray) -> tuple[float, np.ndarray] | None:
    """The largest convex quadrilateral of a card's proportions among a mask's outlines, with its
    area (px²), if it covers :data:`MIN_QUAD_SHARE` of the mask."""
    contours, _ = cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    area = mask.shape[0] * mask.shape[1]
    best: tuple[float, np.ndarray] | None = None
    for c in contours:
        hull = cv2.convexHull(c)
        a = cv2.contourArea(hull)
        if a < MIN_QUAD_SHARE * area or (best is not None and a <= best[0]):
            continue
        approx = cv2.approxPolyDP(hull, 0.02 * cv2.arcLength(hull, True), True)
        if len(approx) != 4:
            continue
        q = _order(approx)
        sw, sh = _sides(q)
        if abs(sw / max(sh, 1e-6) - CARD_ASPECT) > QUAD_ASPECT_TOLERANCE * CARD_ASPECT:
            continue
        best = (a, q)
    return best


def card_quad(photo: np.ndarray) -> np.ndarray | None:
    """The four corners (top-left, top-right, bottom-right, bottom-left; image px) of the card an
    upright photo shows, or None when no outline of a card's proportions covering at least
    :data:`MIN_QUAD_SHARE` of the photo is found (then the photo is taken as cropped to the card).
    (What differs from the table at the photo's border was tried as well and dropped: in a photo
    cropped to the card it finds the card's inner frame.)"""
    h, w = photo.shape[:2]
    scale = WORK_PX / max(h, w)
    small = cv2.resize(photo, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    best = _best_quad(_edges(small))
    if best is None:
        return None
    q = best[1]  # the dilated edge sits about a pixel outside the card: pull the corners in by that
    centre = q.mean(axis=0)
    q = q + (centre - q) / np.linalg.norm(centre - q, axis=1, keepdims=True)
    return (q / scale).astype(np.float32)


def photo_outline(photo: np.ndarray) -> np.ndarray | None:
    """The card's corners in an upright enrolment photo (:func:`card_quad`), or None when none is
    found or the photo looks cropped to the card already: a card's proportions (within
    :data:`TIGHT_ASPECT`) and the outline found at the same inset on all four sides (within
    :data:`EVEN_INSET_MM`): that is the card's inner frame, not its edge. (Chosen on a random deck
    of the training side, ``benchmarks/identify_methods.py --phone --decks random``.)"""
    q = card_quad(photo)
    if q is None:
        return None
    h, w = photo.shape[:2]
    insets = np.array([q[:, 0].min(), q[:, 1].min(), w - q[:, 0].max(), h - q[:, 1].max()])
    mm = CARD_MM[0] / _sides(q)[0]
    even = float(insets.max() - insets.min()) * mm < EVEN_INSET_MM
    return None if even and abs(w / h / CARD_ASPECT - 1) < TIGHT_ASPECT else q


def warp_card(photo: np.ndarray, quad: np.ndarray, size: tuple[int, int] = (FACE_W, FACE_H)) -> np.ndarray:
    """The card within ``quad`` (:func:`card_quad`'s corners) warped upright to ``size``."""
    w, h = size
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    return cv2.warpPerspective(
        photo,
        cv2.getPerspectiveTransform(quad, dst),
        size,
        flags=cv2.INTER_AREA,
        borderMode=cv2.BORDER_REPLICATE,
    )


def rectify(photo: np.ndarray, size: tuple[int, int] = (FACE_W, FACE_H)) -> np.ndarray:
    """The card of an upright photo warped to ``size`` along its outline (:func:`photo_outline`);
    a photo without one is resized whole."""
    q = photo_outline(photo)
    return cv2.resize(photo, size, interpolation=cv2.INTER_AREA) if q is None else warp_card(photo, q, size)


def white_patch(face: np.ndarray) -> np.ndarray:
    """``face`` with each channel scaled so that its :data:`WHITE_PERCENTILE` th percentile (the
    card's brightest colours, away from its edge) is the same: a per-channel cast is removed."""
    h, w = face.shape[:2]
    inner = face[h // 20 : h - h // 20, w // 20 : w - w // 20].reshape(-1, 3).astype(np.float32)
    top = np.percentile(inner, WHITE_PERCENTILE, axis=0)
    if top.min() < 40:  # a dark card has no bright colours to balance on
        return face
    gains = top.mean() / top
    return cv2.transform(face, np.diag(gains).astype(np.float32))


def _blobs(top_down: np.ndarray, px_per_mm: float, close_mm: float, spur_mm: float) -> list[np.ndarray]:
    """Outlines of the regions the edges enclose, once gaps of ``close_mm`` in an edge are
    bridged and strays thinner than ``spur_mm`` cut off."""
    close = max(3, round(close_mm * px_per_mm) | 1)
    edges = cv2.morphologyEx(
        _strong_edges(top_down, px_per_mm), cv2.MORPH_CLOSE, np.ones((close, close), np.uint8)
    )
    outlines, _ = cv2.findContours(edges, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled: np.ndarray = np.zeros(edges.shape, np.uint8)
    cv2.drawContours(filled, outlines, -1, 255, thickness=cv2.FILLED)
    spur = max(3, round(spur_mm * px_per_mm) | 1)
    filled = cv2.morphologyEx(filled, cv2.MORPH_OPEN, np.ones((spur, spur), np.uint8))
    contours, _ = cv2.findContours(filled, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    return list(contours)


def card_boxes(
    top_down: np.ndarray,
    px_per_mm: float,
    smaller: float = 0.10,
    larger: float = 0.16,
    spur_mm: float = 12.0,
    closings_mm: tuple[float, ...] = (1.0, 2.0, 3.0, 5.0),
) -> list[tuple[tuple[float, float], float, tuple[float, float]]]:
    """Cards lying apart in a top-down view of the table (``px_per_mm``): per card its centre
    (mm), its turn (degrees, -90..90: the long side's turn from the table's y axis, the sense
    :meth:`vision.identify.Identifier._patch` turns a card by) and its long/short side lengths
    (mm). The regions the edges enclose are taken with gaps in an edge of each of
    ``closings_mm`` bridged (a soft edge needs a wide bridge, two cards close together a narrow
    one); a region is a card when it is nearly a rectangle whose sides are a card's, less by at
    most ``smaller`` or more by at most ``larger`` (a card's shadow and the edge's width add a
    few millimetres). Cards that touch are one region and are left out (a spread is laid with
    gaps of at least 5 mm). The defaults, and the edges (:func:`_strong_edges`), were chosen on
    development tables of random decks of the training side (seeds 7,500,000+: the project's
    renderer, 10 tables; 7,600,000+: the training's randomised tables, textures and cameras,
    12 tables): Canny on the edges of a 5x5 blur with thresholds from the median, one closing of
    3 mm and ±12 % found 64 of 90 and 55 of 108 cards; the three closings and -10/+16 %, 74 of
    90; the strongest edges of a 1.25 mm blur, 90 of 90 and 93 of 108; a fourth closing of
    1 mm, 97 of 108; never a region that is no card.
    """
    contours = []
    for close_mm in closings_mm:
        contours += _blobs(top_down, px_per_mm, close_mm, spur_mm)
    want = sorted(CARD_MM)
    found: list[tuple[tuple[float, float], float, tuple[float, float]]] = []
    for c in contours:
        (cx, cy), (rw, rh), ang = cv2.minAreaRect(c)
        short, long_ = sorted((rw / px_per_mm, rh / px_per_mm))
        if not (1 - smaller) * want[0] <= short <= (1 + larger) * want[0]:
            continue
        if not (1 - smaller) * want[1] <= long_ <= (1 + larger) * want[1]:
            continue
        if cv2.contourArea(c) < 0.9 * rw * rh:
            continue
        corners = cv2.boxPoints(((cx, cy), (rw, rh), ang))
        dx, dy = corners[1] - corners[0] if rh >= rw else corners[2] - corners[1]
        if np.hypot(dx, dy) < max(rw, rh) * 0.99:  # boxPoints' order: take the longer of the two
            dx, dy = corners[2] - corners[1] if rh >= rw else corners[1] - corners[0]
        turn = (math.degrees(math.atan2(-dx, dy)) + 90.0) % 180.0 - 90.0
        centre = (cx / px_per_mm, cy / px_per_mm)
        if any(np.hypot(centre[0] - f[0][0], centre[1] - f[0][1]) < want[0] / 2 for f in found):
            continue  # the inner and outer edge of one card
        found.append((centre, float(turn), (float(long_), float(short))))
    return found
