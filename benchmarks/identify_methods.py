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

``--assembled`` (deck only) compares reference sets (the phone photos; cards cut from table
frames, as a spread on the table or an answer to the referee's question gives them) × a few
matcher options through the shipped assembly (white balance, colour map, the joint assignment),
without and with the referee's memory.

    .venv/bin/python benchmarks/identify_methods.py [--frames 30] [--conditions own,style,deck]
    .venv/bin/python benchmarks/identify_methods.py --assembled [--frames 10]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2
import numpy as np

import vision  # noqa: F401  (caps BLAS at one thread)
from benchmarks import heldout
from benchmarks.vision import CONDITIONS, tally_cards
from vision.faces import CARD_MM, FACE_PX_PER_MM, N_CARDS, face_set
from vision.identify import (
    Identifier,
    apply_color_map,
    assign,
    built_cards,
    color_map,
    column_cards,
    level_cards,
)
from vision.observe import Assembler, rotation_at
from vision.progress import Progress
from vision.training.evaluate import Tally, heldout_scenes, layout_memory, oracle_detections
from vision.training.synth import RenderedScene, RenderSettings, TableLayout, render_table
from vision.whitebalance import balance
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


TABLE_ENROL_SEED = 9_250_000  # the enrolment tables of --assembled (no frame of the benchmark)


def table_enrolled(deck: tuple[np.ndarray, ...], settings: RenderSettings) -> tuple[np.ndarray, ...]:
    """The deck enrolled from the table instead of phone photos, as a spread on the calibrated
    table or the answers to the referee's questions give it: each card lies in a Display slot of
    a table of the held-out style (nine cards a frame, hand-placed), is cut out at its box
    through the calibration from the frame white-balanced on the markers, at 4 px/mm."""
    zones = default_zones()
    slots = [(lv, sl) for lv, sl, _ in zones.display]
    out: list[np.ndarray] = []
    for k in range(0, N_CARDS, len(slots)):
        cards = list(range(k, min(k + len(slots), N_CARDS)))
        layout = TableLayout(
            display=tuple((lv, sl, c) for (lv, sl), c in zip(slots, cards, strict=False)),
            energy_row=(),
            players=(),
        )
        seed = TABLE_ENROL_SEED + k
        size = (1280, 720) if seed % 2 == 0 else (1920, 1080)
        scene = render_table(layout, seed, replace(settings, size=size, hand_prob=0.0), faces=deck)
        frame = balance(scene.image, scene.homography, zones)
        for c in cards:
            o = next(o for o in scene.objects if o.card == c)
            centre = ((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2)
            out.append(Identifier._patch(frame, scene.homography, centre, CARD_MM, FACE_PX_PER_MM, 0))
    return tuple(out)


def assembled(args: argparse.Namespace) -> None:
    """Reference sets × matcher options through the shipped assembly (white balance, colour map,
    the table's joint assignment) on true boxes, without and with the referee's memory."""
    settings, deck, first, _about = CONDITIONS["deck"]
    assert deck is not None
    photos = face_set(heldout.enrol_other_deck(Path(tempfile.mkdtemp(prefix="gizmos-deck-"))))
    refs = {"phone photos": photos, "table crops": table_enrolled(deck(), settings)}
    options: dict[str, dict[str, Any]] = {
        "ncc": {},
        "ncc-soft0.5": {"soften_mm": 0.5},
        "ncc-band1.5": {"band_ppm": 1.5},
        "ncc-chan": {"colour_norm": True},
    }
    if args.methods:
        options = {k: v for k, v in options.items() if k in args.methods.split(",")}
    runs = {
        (r, o): Assembler(identifier=Identifier(faces, **kw))
        for r, faces in refs.items()
        for o, kw in options.items()
    }
    right: dict[tuple[str, str, str], dict[str, Tally]] = defaultdict(
        lambda: {"card": Tally(), "card_band": Tally()}
    )
    prog = Progress("identify deck, assembled", args.frames, every=2)
    for seed, scene in heldout_scenes(first, args.frames, settings, deck()):
        seats = tuple(p.seat for p in scene.layout.players)
        dets = oracle_detections(scene)
        for (r, o), asm in runs.items():
            for mem_name, mem in (("alone", None), ("memory", layout_memory(scene.layout))):
                asm.know(mem)
                asm.assemble(scene.image, scene.homography, dets, seats)
                tally_cards(asm.last_cards, scene, right[r, o, mem_name])
        del seed
        prog.step()
    print(f"\n== deck, {args.frames} frames from seed {first}: true boxes and camera, the shipped assembly")
    for (r, o), _ in runs.items():
        a, m = right[r, o, "alone"], right[r, o, "memory"]
        print(
            f"  {r:13s} {o:12s} full faces {a['card']} / top bands {a['card_band']};"
            f" with the memory {m['card']} / {m['card_band']}"
        )


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
    ap.add_argument(
        "--assembled",
        action="store_true",
        help="deck only: phone-photo and table-crop enrolment through the shipped assembly, "
        "without and with the referee's memory",
    )
    args = ap.parse_args(argv)
    if args.assembled:
        assembled(args)
        return 0
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
