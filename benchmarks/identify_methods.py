"""Card identification methods compared on the held-out conditions (issue 14, item 2).

Every visible card and top band of held-out frames is cut out through the true camera at its
true box centre (an oracle for calibration and detection, so only identification is measured)
and identified among the candidates the table allows (a Display row: its level; a column: its
type; the Archive: any built card), top-1 against each method's references:

* ``ncc``: the shipped matcher before this study (BGR correlation, ±3 / ±6 mm shift search);
* ``ncc-chan``: color-normalised templates: each color channel zero-mean, unit-variance on
  its own (a color cast or a lamp's tint scales channels, which this removes);
* ``ncc-chan-soft``: the same on patches and references blurred by a further ~1 mm, which a
  phone photo's keystone (about 1 mm at the corners) and hand placement cannot move;
* ``ncc-chan-rot``: ``ncc-chan-soft`` searched over card rotations of 0, ±3 and ±6 degrees;
* ``grad``: correlation of gradient magnitudes (edges only: color and light fall away);
* ``orb`` / ``sift``: OpenCV local features at 3 px/mm, RANSAC-verified matches (full faces
  only; AKAZE is not in this OpenCV 5 build);
* ``ncc-band2``, ``ncc-band1.5``: the shipped matcher with top bands at 2 or 1.5 px/mm;
* ``ncc+map`` (with ``--colour-map``): ``ncc`` on the frame colour-mapped to the references by
  the cards it shows whole (``vision.identify.color_map``, fitted on the whole cards as ``ncc``
  and the table's joint assignment identified them: no true identity is used).

    .venv/bin/python benchmarks/identify_methods.py [--frames 30] [--conditions own,style,deck]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2
import numpy as np

import vision  # noqa: F401  (caps BLAS at one thread)
from benchmarks import heldout
from benchmarks.vision import CONDITIONS
from vision.faces import CARD_MM, face_set
from vision.identify import (
    Identifier,
    apply_color_map,
    assign,
    built_cards,
    color_map,
    column_cards,
    level_cards,
)
from vision.observe import rotation_at
from vision.progress import Progress
from vision.training.evaluate import Tally, heldout_scenes
from vision.training.synth import RenderedScene, TableLayout
from vision.zones import COLUMN_ORDER, Zones, default_zones


def candidates(layout: TableLayout, card: int) -> np.ndarray:
    """The cards the table allows where ``card`` lies: its Display row's level, its column's type,
    or any built card in an Archive."""
    for lv, _sl, cid in layout.display:
        if cid == card:
            return level_cards(lv)
    for pl in layout.players:
        for column, ids in zip(COLUMN_ORDER, pl.columns, strict=True):
            if card in ids:
                return column_cards(column, pl.seat)
    return built_cards()


def features_matcher(kind: str, refs: tuple[np.ndarray, ...]) -> Callable[[np.ndarray], np.ndarray]:
    """ORB or SIFT: the number of RANSAC-consistent matches of a 3 px/mm patch with each face."""
    feat = cv2.ORB_create(500) if kind == "orb" else cv2.SIFT_create(300)
    size = (round(CARD_MM[0] * 3), round(CARD_MM[1] * 3))
    ref_desc = []
    for f in refs:
        g = cv2.cvtColor(cv2.resize(f, size, interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2GRAY)
        ref_desc.append(feat.detectAndCompute(g, None))
    bf = cv2.BFMatcher(cv2.NORM_HAMMING if kind == "orb" else cv2.NORM_L2)

    def score(patch: np.ndarray, among: np.ndarray) -> np.ndarray:
        out = np.full(len(refs), -1.0)
        kp, d = feat.detectAndCompute(cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY), None)
        if d is None:
            return out
        for i in np.flatnonzero(among):
            rk, rd = ref_desc[i]
            if rd is None:
                out[i] = 0
                continue
            ms = [
                m
                for m, n in (p for p in bf.knnMatch(d, rd, k=2) if len(p) == 2)
                if m.distance < 0.8 * n.distance
            ]
            if len(ms) < 4:
                out[i] = len(ms) / 100
                continue
            a = np.float32([kp[m.queryIdx].pt for m in ms])
            b = np.float32([rk[m.trainIdx].pt for m in ms])
            _, inl = cv2.estimateAffinePartial2D(a, b, method=cv2.RANSAC, ransacReprojThreshold=4.0)
            out[i] = 0 if inl is None else float(inl.sum())
        return out

    return score


def mapped_ncc(scene: RenderedScene, ident: Identifier, zones: Zones) -> list[tuple[str, bool]]:
    """``ncc+map``: identify the frame's cards jointly, fit the color map on the whole ones,
    score again on the mapped frame; (kind, right) per visible card."""
    faces = ident.faces
    objs = [o for o in scene.objects if o.card is not None and o.visible]
    asks = []
    for o in objs:
        c = ((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2)
        asks.append((o, c, rotation_at(zones, *c), candidates(scene.layout, o.card)))

    def scores(frame: np.ndarray) -> list[np.ndarray]:
        return [
            (ident.band_scores if o.cls == "card_band" else ident.card_scores)(
                frame, scene.homography, c, r, a
            )
            for o, c, r, a in asks
        ]

    first = assign(scores(scene.image), [a for *_, a in asks])
    whole = [(c, r, faces[m.card]) for (o, c, r, _), m in zip(asks, first, strict=True) if o.cls == "card"]
    mat = color_map(scene.image, scene.homography, whole)
    sc = scores(apply_color_map(scene.image, mat)) if mat is not None else scores(scene.image)
    return [
        ("bands" if o.cls == "card_band" else "faces", int(np.argmax(np.where(a, s, -np.inf))) == o.card)
        for (o, _, _, a), s in zip(asks, sc, strict=True)
    ]


def main(argv: list[str] | None = None) -> int:
    """Compare the methods and print top-1 per condition, full faces and bands apart."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--conditions", default="own,style,deck")
    ap.add_argument("--features", action="store_true", help="also ORB and SIFT (slow)")
    ap.add_argument("--methods", help="comma-separated subset of the template methods (default: all)")
    ap.add_argument(
        "--colour-map",
        dest="color_map",
        action="store_true",
        help="also ncc on the frame colour-mapped by its whole cards",
    )
    args = ap.parse_args(argv)
    zones = default_zones()
    for cond in args.conditions.split(","):
        settings, deck, first, about = CONDITIONS[cond]
        faces = face_set()
        if cond == "deck":
            folder = heldout.enrol_other_deck(Path(tempfile.mkdtemp(prefix="gizmos-deck-")))
            faces = face_set(folder)
        methods = {
            name: Identifier(faces, **kw)
            for name, kw in (
                ("ncc", {}),
                ("ncc-chan", {"color_norm": True}),
                ("ncc-chan-soft", {"color_norm": True, "soften_mm": 1.0}),
                (
                    "ncc-chan-rot",
                    {"color_norm": True, "soften_mm": 1.0, "angles": (-6.0, -3.0, 0.0, 3.0, 6.0)},
                ),
                ("grad", {"gradients": True, "soften_mm": 1.0}),
                ("ncc-band2", {"band_ppm": 2.0}),
                ("ncc-band2-soft", {"band_ppm": 2.0, "soften_mm": 0.5}),
                ("ncc-band1.5", {"band_ppm": 1.5}),
            )
        }
        if args.methods:
            methods = {k: v for k, v in methods.items() if k in args.methods.split(",")}
        plain = Identifier(faces)
        feats = {k: features_matcher(k, faces) for k in (("orb", "sift") if args.features else ())}
        right: dict[tuple[str, str], Tally] = defaultdict(Tally)
        secs: dict[str, float] = defaultdict(float)
        prog = Progress(f"identify {cond}", args.frames, every=10)
        for _seed, scene in heldout_scenes(first, args.frames, settings, deck() if deck else None):
            if args.color_map:
                t0 = time.perf_counter()
                for kind, ok in mapped_ncc(scene, plain, zones):
                    right["ncc+map", kind].add(ok)
                secs["ncc+map"] += time.perf_counter() - t0
            for o in scene.objects:
                if o.card is None or not o.visible:
                    continue
                c = ((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2)
                rot = rotation_at(zones, *c)
                among = candidates(scene.layout, o.card)
                band = o.cls == "card_band"
                kind = "bands" if band else "faces"
                for name, ident in methods.items():
                    t0 = time.perf_counter()
                    score = ident.band_scores if band else ident.card_scores
                    sc = score(scene.image, scene.homography, c, rot, among)
                    secs[name] += time.perf_counter() - t0
                    right[name, kind].add(int(np.argmax(np.where(among, sc, -np.inf))) == o.card)
                if not band:
                    patch = Identifier._patch(scene.image, scene.homography, c, CARD_MM, 3.0, rot)
                    for name, fn in feats.items():
                        t0 = time.perf_counter()
                        sc = fn(patch, among)
                        secs[name] += time.perf_counter() - t0
                        right[name, kind].add(int(np.argmax(np.where(among, sc, -np.inf))) == o.card)
            prog.step()
        print(f"\n== {cond}: {about}; {args.frames} frames, true boxes and camera, table candidates")
        for name in list(methods) + list(feats) + (["ncc+map"] if args.color_map else []):
            f, b = right[name, "faces"], right[name, "bands"]
            n = f.n + (b.n if name in methods or name == "ncc+map" else 0)
            print(
                f"  {name:14s} full faces {f}   top bands {b}   {1000 * secs[name] / max(n, 1):.1f} ms/card"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
