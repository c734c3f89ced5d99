"""Card identification methods compared on the held-out conditions (issue 14, item 2).

Every visible card and top band of held-out frames is cut out through the true camera at its
true box centre (an oracle for calibration and detection, so only identification is measured)
and identified among the candidates the table allows (a Display row: its level; a column: its
type; the Archive: any built card), top-1 against each method's references:

* ``ncc``: the shipped matcher (BGR correlation, ±3 / ±6 mm shift search; the top band in two
  halves, each shifted on its own: ``vision.identify.BAND_PARTS``);
* ``ncc-rigid``: the same with the top band as one rigid template (the matcher before);
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

``--phone`` measures the phone-like degradations one at a time (and all together) on both the
enrolment photos and the camera's crops, per deck: a random deck of the training side
(``vision.training.randomise``, the only one anything was tuned on), the project's drawn faces,
and the held-out deck of ``benchmarks/heldout.py`` (art nothing was tuned on). Reference
preparations: as loaded today (the photo resized to the face), rectified along the card's own
outline (``vision.outline.rectify``), and rectified plus balanced on the card's brightest
colours (``vision.outline.white_patch``); matchers: ``ncc``, ``ncc-rigid``, ``ncc-chan``,
``ncc-rot`` (card turns of 0 and ±3° searched) and, with ``--features``, ORB.

``--spread`` measures enrolment from a spread: nine cards of the held-out deck laid in the
Display's places of a table of the project's renderer (held-out cameras) and of the held-out
style (its materials, a check tablecloth among them; hand-placed 4 mm and 5° off, webcam
processing, 2700-6500 K lamps); no hand; calibrated from the frame's own markers as the dashboard does, found
by their outlines and given suggested ids (``vision.spread.find_spread``) against the drawn
faces and against the deck's phone photos: cards found, suggestions right (first, or among the
three shown), outlines that are not a card.

``--assembled`` (deck only) compares reference sets (the phone photos; cards cut from table
frames, as a spread on the table or an answer to the referee's question gives them) × a few
matcher options through the shipped assembly (white balance, colour map, the joint assignment),
without and with the referee's memory.

    .venv/bin/python benchmarks/identify_methods.py [--frames 30] [--conditions own,style,deck]
    .venv/bin/python benchmarks/identify_methods.py --assembled [--frames 10]
    .venv/bin/python benchmarks/identify_methods.py --phone [--decks random,drawn,other] [--features]
    .venv/bin/python benchmarks/identify_methods.py --spread [--frames 12]
    .venv/bin/python benchmarks/identify_methods.py --development [--frames 8] [--dev-decks random,drawn]
    .venv/bin/python benchmarks/identify_methods.py --development --memory --embedding [--frames 10]
    .venv/bin/python benchmarks/identify_methods.py [--phone] --embedding [models/card_embedding_band.onnx]

``--embedding`` (with the default command and ``--phone``) adds the learned band embedding
(``vision.embedding``, trained across random decks: ``vision/training/embedding.py``) on the same
crops: ``emb`` (cosine similarity alone), ``ncc+emb W`` (``ncc``'s band score plus W times the
cosine) and ``ncc top3, emb`` (``ncc``'s three best re-ranked by the embedding); top bands only.

``--development`` is where the top band's matcher options are chosen, never on the benchmark's
frames or deck: four random decks of the training side (``vision.training.randomise``), each
enrolled from the benchmark's phone-photo model (:func:`benchmarks.heldout.phone_photo`, seeds
of its own), on ``--frames`` tables each of two renders (the training side's randomised tables
and the held-out style's settings, on the held-out cameras, no hand), and the drawn faces on
the same tables (``own``: the project's renderer), through the shipped assembly on true boxes
without the referee's memory: full faces and top bands per option (the hubness weight, the
band's views; with ``--embedding``, the learned band embedding at each of ``EMBED_WEIGHTS``),
and top bands in an Archive and in columns apart. ``--dev-decks`` picks the decks: ``random``,
``drawn`` (the drawn faces as references) and ``drawn-photos`` (the drawn faces enrolled from
phone-like photos: a deck of another art than the random decks, enrolled as a real one is).
``--memory`` (with ``--embedding``) measures the referee's memory with the embedding on the same
tables: the memory's bonus for bands seen alone at each of ``MEMORY_SCALES``, with no memory,
the exact memory and the memory one move behind, and the bands each loses against the matcher
without the embedding.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2
import numpy as np

import vision  # noqa: F401  (caps BLAS at one thread)
from benchmarks import heldout
from benchmarks.vision import CONDITIONS, tally_cards, true_cards
from vision.calibrate import Calibrator
from vision.embedding import REGION_MM, CardEmbedder, model_path
from vision.errors import CalibrationError
from vision.faces import BAND_MM, CARD_MM, FACE_H, FACE_PX_PER_MM, FACE_W, N_CARDS, drawn_faces, face_set
from vision.geometry import table_patch
from vision.identify import (
    LEVELS,
    Identifier,
    apply_color_map,
    assign,
    built_cards,
    color_map,
    column_cards,
    level_cards,
)
from vision.observe import Assembler, rotation_at
from vision.outline import rectify, white_patch
from vision.progress import Progress
from vision.spread import SpreadCard, find_spread
from vision.training.evaluate import (
    HELDOUT,
    Tally,
    heldout_scenes,
    lagging_memory,
    layout_memory,
    oracle_detections,
)
from vision.training.randomise import random_deck, randomised
from vision.training.synth import RenderedScene, RenderSettings, TableLayout, random_layout, render_table
from vision.whitebalance import balance
from vision.zones import COLUMN_ORDER, Zones, default_zones


def area_of(layout: TableLayout, card: int) -> str:
    """Where ``card`` lies on the table: ``display``, ``gizmos`` (a seat's columns) or ``archive``."""
    if any(cid == card for _lv, _sl, cid in layout.display):
        return "display"
    if any(card in ids for pl in layout.players for ids in pl.columns):
        return "gizmos"
    return "archive"


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


#: The blend weights of ``ncc+emb`` (the cosine's share added to ``ncc``'s band score) and how
#: many of ``ncc``'s best bands the embedding re-ranks.
EMBED_WEIGHTS = (0.1, 0.2, 0.35, 0.5, 1.0, 1.5, 2.0, 3.0)
#: Weights of the embedding's cosine for cards seen whole (``Identifier(embedding_whole=...)``).
EMBED_WHOLE_WEIGHTS = (0.25, 0.5, 1.0, 2.0)
#: ... added among the cards whose score is this close to the best (``embedding_whole_margin``).
EMBED_WHOLE_MARGINS = (0.03, 0.06, 0.1)
RERANK_TOP = 3


class EmbeddingMethods:
    """The learned band embedding on one reference set: ``emb``, ``ncc+emb W``, ``ncc top3, emb``."""

    def __init__(self, path: Path, refs: tuple[np.ndarray, ...]) -> None:
        self.net = CardEmbedder(path, "band")
        self.refs = self.net.references(refs)
        self.names = ["emb", *(f"ncc+emb {w:g}" for w in EMBED_WEIGHTS), f"ncc top{RERANK_TOP}, emb"]

    def cosines(
        self, frame: np.ndarray, h_img: np.ndarray, centre: tuple[float, float], rot: int
    ) -> np.ndarray:
        """Cosine similarity of the band round ``centre`` with every reference band."""
        patch = table_patch(frame, h_img, centre, REGION_MM["band"], self.net.patch_ppm, rot)
        return self.refs @ self.net.patches([patch])[0]

    def judge(self, ncc: np.ndarray, cos: np.ndarray, among: np.ndarray, card: int) -> dict[str, bool]:
        """Whether each method picks ``card`` among ``among`` (``ncc``: the shipped band scores)."""

        def pick(sc: np.ndarray) -> int:
            return int(np.argmax(np.where(among, sc, -np.inf)))

        out = {"emb": pick(cos) == card}
        for w in EMBED_WEIGHTS:
            out[f"ncc+emb {w:g}"] = pick(ncc + w * cos) == card
        top = np.argsort(-np.where(among, ncc, -np.inf))[: min(RERANK_TOP, int(among.sum()))]
        out[f"ncc top{RERANK_TOP}, emb"] = int(top[int(np.argmax(cos[top]))]) == card
        return out


def features_matcher(
    kind: str, refs: tuple[np.ndarray, ...]
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """ORB or SIFT: the number of RANSAC-consistent matches of a 3 px/mm patch with each face
    (among the faces ``among`` allows)."""
    feat = cv2.ORB.create(500) if kind == "orb" else cv2.SIFT.create(300)
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
            a = np.array([kp[m.queryIdx].pt for m in ms], np.float32)
            b = np.array([rk[m.trainIdx].pt for m in ms], np.float32)
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
        assert o.card is not None  # objs holds the cards
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
            out.append(table_patch(frame, scene.homography, centre, CARD_MM, FACE_PX_PER_MM, 0))
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
        "ncc-rigid": {"band_parts": 1},
        "ncc-soft0.5": {"soften_mm": 0.5},
        "ncc-band1.5": {"band_ppm": 1.5},
        "ncc-chan": {"color_norm": True},
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


# ------------------------------------------------------------------ phone-like degradations, one at a time

DEGRADATIONS = ("none", "crop", "keystone", "cast", "blur", "glare", "lowres", "all")
TUNING_DECK_SEED = 5_150_000  # the random deck the outline finder was tried on (training side)
PHONE_SEED = 7_700_000
CAMERA_PPM = 1.4  # the table camera's resolution at 1280x720 over the play area (px/mm)
LOW_CAMERA_PPM = 1.0


def _degrade_light(img: np.ndarray, has: set[str], rng: np.random.Generator, cast: float) -> np.ndarray:
    """Colour cast (per-channel gains within ±``cast``) and a glare spot, as float work on ``img``."""
    f = img.astype(np.float32)
    h, w = f.shape[:2]
    if "cast" in has:
        f *= rng.uniform(1 - cast, 1 + cast, 3)[None, None, :]
    if "glare" in has:
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        gx, gy, r = rng.uniform(0.2, 0.8) * w, rng.uniform(0.2, 0.8) * h, rng.uniform(0.1, 0.25) * w
        f += (rng.uniform(40, 90) * np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * r * r)))[..., None]
    return np.clip(f, 0, 255).astype(np.uint8)


def phone_enrolment(face: np.ndarray, kind: str, rng: np.random.Generator) -> np.ndarray:
    """The enrolment photo of one card under one degradation (``all``: every one): ``crop`` keeps
    2-6 mm of table round the card (a loose crop); ``keystone`` moves each corner up to 1.5 mm (a
    phone a few degrees off square, cropped where the user thinks the edges are); ``cast``
    ±10 % per channel; ``blur`` σ 1.2-2 px; ``glare`` a bright spot; ``lowres`` 130-160 px across
    (otherwise 240-320); JPEG always."""
    has = set(DEGRADATIONS[1:-1]) if kind == "all" else {kind}
    ppm = FACE_PX_PER_MM
    margin = rng.uniform(2, 6, 4) * ppm if "crop" in has else np.zeros(4)
    corner = (rng.uniform(-1.5, 1.5, (4, 2)) * ppm) if "keystone" in has else np.zeros((4, 2))
    w, h = round(FACE_W + margin[0] + margin[2]), round(FACE_H + margin[1] + margin[3])
    src = np.array([[0, 0], [FACE_W, 0], [FACE_W, FACE_H], [0, FACE_H]], np.float32)
    dst = (src + np.array([margin[0], margin[1]], np.float32) + corner).astype(np.float32)
    table = tuple(int(v) for v in rng.uniform(40, 200, 3))
    img = cv2.warpPerspective(
        face, cv2.getPerspectiveTransform(src, dst), (w, h), borderMode=cv2.BORDER_CONSTANT, borderValue=table
    )
    img = _degrade_light(img, has, rng, 0.10)
    if "blur" in has:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(1.2, 2.0) * w / 300)
    out_w = int(rng.integers(130, 161)) if "lowres" in has else int(rng.integers(240, 321))
    img = cv2.resize(img, (out_w, round(out_w * h / w)), interpolation=cv2.INTER_AREA)
    img = np.clip(img + rng.normal(0, 2.0, img.shape), 0, 255).astype(np.uint8)
    _ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(75, 93))])
    photo = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    assert photo is not None  # a JPEG it has just encoded
    return photo


def camera_crop(face: np.ndarray, kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The card as the table camera sees it under one degradation, on a patch of table: the frame
    and its calibration (table mm -> px; the card's centre at (60, 70) mm). ``keystone``: placed
    1.5 mm and 3° off; ``cast``: ±6 % per channel (what white balance on the markers leaves);
    ``blur``: σ 0.8 mm; ``lowres``: 1.0 instead of 1.4 px/mm; ``crop``: nothing on this side."""
    has = set(DEGRADATIONS[1:-1]) if kind == "all" else {kind}
    ppm = LOW_CAMERA_PPM if "lowres" in has else CAMERA_PPM
    size = (round(120 * ppm), round(140 * ppm))
    off = rng.uniform(-1.5, 1.5, 2) if "keystone" in has else np.zeros(2)
    turn = rng.uniform(-3, 3) if "keystone" in has else 0.0
    cx, cy = (60 + off[0]) * ppm, (70 + off[1]) * ppm
    m = cv2.getRotationMatrix2D((FACE_W / 2, FACE_H / 2), turn, ppm / FACE_PX_PER_MM)
    m[:, 2] += (cx - FACE_W / 2, cy - FACE_H / 2)
    table = tuple(int(v) for v in rng.uniform(40, 200, 3))
    img = cv2.warpAffine(
        face, m, size, flags=cv2.INTER_AREA, borderMode=cv2.BORDER_CONSTANT, borderValue=table
    )
    img = _degrade_light(img, has, rng, 0.06)
    img = cv2.GaussianBlur(img, (0, 0), (0.8 if "blur" in has else 0.4) * ppm)
    img = np.clip(img + rng.normal(0, 3.0, img.shape), 0, 255).astype(np.uint8)
    return img, np.diag([ppm, ppm, 1.0])


def _phone_decks(names: list[str]) -> dict[str, tuple[np.ndarray, ...]]:
    makers: dict[str, Callable[[], tuple[np.ndarray, ...]]] = {
        "random": lambda: random_deck(TUNING_DECK_SEED),
        "drawn": drawn_faces,
        "other": heldout.other_deck,
    }
    return {n: makers[n]() for n in names}


def phone_study(args: argparse.Namespace) -> None:
    """Every card of each deck enrolled from a degraded photo and identified from a degraded
    camera crop (whole card and top band; among its level's cards), per degradation and method."""
    preps: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "as-loaded": lambda p: cv2.resize(
            cv2.rotate(p, cv2.ROTATE_90_CLOCKWISE) if p.shape[1] > p.shape[0] else p,
            (FACE_W, FACE_H),
            interpolation=cv2.INTER_AREA,
        ),
        "rectified": rectify,
        "rectified+wp": lambda p: white_patch(rectify(p)),
    }
    matchers: dict[str, dict[str, Any]] = {
        "ncc": {},
        "ncc-rigid": {"band_parts": 1},
        "ncc-chan": {"color_norm": True},
        "ncc-rot": {"angles": (-3.0, 0.0, 3.0)},
    }
    if args.methods:
        keep = args.methods.split(",")
        preps = {k: v for k, v in preps.items() if k in keep} or preps
        matchers = {k: v for k, v in matchers.items() if k in keep} or matchers
    kinds = args.degradations.split(",")
    up = CARD_MM[1] / 2 - BAND_MM / 2
    for deck_name, deck in _phone_decks(args.decks.split(",")).items():
        print(f"\n== deck {deck_name}: {N_CARDS} cards, among their level's cards; full faces / top bands")
        prog = Progress(f"phone study {deck_name}", len(kinds), every=1)
        for kind in kinds:
            rng = np.random.default_rng(PHONE_SEED + DEGRADATIONS.index(kind))
            photos = [phone_enrolment(f, kind, rng) for f in deck]
            crops = [camera_crop(f, kind, rng) for f in deck]
            right: dict[str, tuple[Tally, Tally]] = {}
            for prep_name, prep in preps.items():
                refs = tuple(prep(p) for p in photos)
                idents = {m: Identifier(refs, **kw) for m, kw in matchers.items()}
                feats = {"orb": features_matcher("orb", refs)} if args.features else {}
                emb = EmbeddingMethods(args.embedding, refs) if args.embedding else None
                shipped = idents.get("ncc") or Identifier(refs)
                for name in [*idents, *feats, *(emb.names if emb else ())]:
                    right[f"{prep_name}/{name}"] = (Tally(), Tally())
                for card, (frame, h_img) in enumerate(crops):
                    among = level_cards(int(LEVELS[card]))
                    for m, ident in idents.items():
                        full = ident.card_scores(frame, h_img, (60.0, 70.0), 0, among)
                        band = ident.band_scores(frame, h_img, (60.0, 70.0 - up), 0, among)
                        f_t, b_t = right[f"{prep_name}/{m}"]
                        f_t.add(int(np.argmax(full)) == card)
                        b_t.add(int(np.argmax(band)) == card)
                    if emb is not None:
                        ncc = shipped.band_scores(frame, h_img, (60.0, 70.0 - up), 0, among)
                        cos = emb.cosines(frame, h_img, (60.0, 70.0 - up), 0)
                        for name, ok in emb.judge(ncc, cos, among, card).items():
                            right[f"{prep_name}/{name}"][1].add(ok)
                    for m, fn in feats.items():
                        patch = table_patch(frame, h_img, (60.0, 70.0), CARD_MM, 3.0, 0)
                        sc = np.where(among, fn(patch, among), -np.inf)
                        right[f"{prep_name}/{m}"][0].add(int(np.argmax(sc)) == card)
            prog.step()
            print(f"  {kind}:")
            for name, (f_t, b_t) in right.items():
                print(
                    f"    {name:24s} full faces {f_t if f_t.n else '-'}   top bands {b_t if b_t.n else '-'}"
                )


SPREAD_SEED_BASE = 9_300_000  # the spreads' tables (no frame of another benchmark)


def spread_study(args: argparse.Namespace) -> None:
    """Spreads of the held-out deck on the project's tables (held-out cameras) and on
    held-out-style tables: found, suggested right, extras."""
    for cond in ("own", "style"):
        _spread_condition(args, cond)


def _spread_condition(args: argparse.Namespace, cond: str) -> None:
    settings = CONDITIONS[cond][0]
    zones = default_zones()
    slots = [(lv, sl) for lv, sl, _ in zones.display]
    deck = heldout.other_deck()
    photos = face_set(heldout.enrol_other_deck(Path(tempfile.mkdtemp(prefix="gizmos-deck-"))))
    refs = {"drawn faces": Identifier(), "phone photos": Identifier(photos)}
    tallies = {r: {k: Tally() for k in ("found", "first", "top3")} for r in refs}
    extra, failed = dict.fromkeys(refs, 0), 0
    prog = Progress("spreads", args.frames, every=2)
    for k in range(args.frames):
        seed = SPREAD_SEED_BASE + k
        rng = np.random.default_rng(seed)
        cards = [int(c) for c in rng.choice(N_CARDS, len(slots), replace=False)]
        layout = TableLayout(
            display=tuple((lv, sl, c) for (lv, sl), c in zip(slots, cards, strict=True)),
            energy_row=(),
            players=(),
            decks=(),
        )
        size = (1280, 720) if k % 2 == 0 else (1920, 1080)
        scene = render_table(layout, seed, replace(settings, size=size, hand_prob=0.0), faces=deck)
        truth = {
            o.card: ((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2)
            for o in scene.objects
            if o.card is not None
        }
        try:
            h_img = Calibrator(zones, settle=1).update(scene.image).homography
        except CalibrationError:
            failed += 1
            prog.step()
            continue
        for name, ident in refs.items():
            found = find_spread(scene.image, h_img, ident, zones=zones)
            at: dict[int, SpreadCard] = {}
            for c in found:
                near = min(
                    truth, key=lambda t: np.hypot(truth[t][0] - c.center[0], truth[t][1] - c.center[1])
                )
                if np.hypot(truth[near][0] - c.center[0], truth[near][1] - c.center[1]) < 8.0:
                    at[near] = c
                else:
                    extra[name] += 1
            t = tallies[name]
            for card in truth:
                t["found"].add(card in at)
                if card in at:
                    t["first"].add(at[card].card == card)
                    t["top3"].add(card in at[card].suggestions)
        prog.step()
    print(
        f"\n== spreads, {cond} tables: {args.frames} tables of 9 held-out-deck cards;"
        f" calibration failed {failed}"
    )
    for name, t in tallies.items():
        print(
            f"  {name:13s} cards found {t['found']}; suggested first {t['first']}, among the three shown"
            f" {t['top3']}; outlines that are no card {extra[name]}"
        )


# ------------------------------------------------------------------ top bands: development decks

DEVELOPMENT_DECKS = (5_170_001, 5_170_002, 5_170_003, 5_170_004)  # random_deck seeds (training side)
DEVELOPMENT_TABLES = 7_970_000  # + 100 x deck + table: no frame of the benchmark
TWO_VIEWS = (BAND_MM, 15.0)  # the whole band and its top 15 mm (an option: docs/vision.md)
DEVELOPMENT_OPTIONS: dict[str, dict[str, Any]] = {
    "hubness and views": {"band_views_mm": TWO_VIEWS},
    "views alone": {"hub_weight": 0.0, "band_views_mm": TWO_VIEWS},
    "hubness (shipped)": {},
    "neither (before)": {"hub_weight": 0.0},
    "hubness 0.5, views": {"hub_weight": 0.5, "band_views_mm": TWO_VIEWS},
    "hubness 1.0, views": {"hub_weight": 1.0, "band_views_mm": TWO_VIEWS},
    "views 20+13 mm": {"band_views_mm": (BAND_MM, 13.0)},
    "views 20+17 mm": {"band_views_mm": (BAND_MM, 17.0)},
    "views 20+15+10 mm": {"band_views_mm": (BAND_MM, 15.0, 10.0)},
}


def _development_photos(deck_seed: int, deck: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """A development deck enrolled from phone-like photos (the benchmark's model, its own seed)."""
    folder = Path(tempfile.mkdtemp(prefix=f"gizmos-dev-{deck_seed}-"))
    return face_set(heldout.enrol_photos(folder, deck, deck_seed + 99))


#: The development decks by ``--dev-decks`` name: random decks of the training side enrolled from
#: phone-like photos, the project's drawn faces as references, and the drawn faces enrolled from
#: phone-like photos (a deck of another art than the random decks, enrolled as a real one is).
DEV_DECKS = {
    "random": "random decks, phone photos",
    "drawn": "drawn faces",
    "drawn-photos": "drawn faces, phone photos",
}


Faces = tuple[np.ndarray, ...]


def _development_deck(name: str, deck_seed: int) -> tuple[Faces | None, Faces]:
    """A development deck: the faces the tables are rendered with (``None``: the drawn faces)
    and the references the identifier is given."""
    if name == "random":
        deck = random_deck(deck_seed)
        return deck, _development_photos(deck_seed, deck)
    drawn = drawn_faces()
    return None, drawn if name == "drawn" else _development_photos(deck_seed, drawn)


#: How development tables are rendered: the training side's randomised tables, and the held-out
#: style's settings (its materials, lamps and webcam; its frames and deck never).
DEVELOPMENT_RENDERS: dict[str, Callable[[int], RenderSettings]] = {
    "randomised": lambda seed: randomised(seed, HELDOUT)[0],
    "held-out style": lambda _seed: heldout.STYLE,
}


def _development_tables(
    deck_key: str,
    settings_of: Callable[[int], RenderSettings],
    options: dict[str, dict[str, Any]],
    frames: int,
) -> Iterator[tuple[dict[str, Assembler], int, RenderedScene, tuple[int, ...]]]:
    """Each development deck's tables, rendered once, with one assembler per option: the
    options' identifiers, the table's seed, the scene and its seats in play."""
    for k, deck_seed in enumerate(DEVELOPMENT_DECKS):
        deck, refs = _development_deck(deck_key, deck_seed)
        runs = {name: Assembler(identifier=Identifier(refs, **kw)) for name, kw in options.items()}
        for t in range(frames):
            seed = DEVELOPMENT_TABLES + 100 * k + t
            size = (1280, 720) if seed % 2 == 0 else (1920, 1080)
            layout = random_layout(np.random.default_rng(seed))
            settings = replace(settings_of(seed), size=size, hand_prob=0.0)
            scene = render_table(layout, seed, settings, faces=deck)
            yield runs, seed, scene, tuple(p.seat for p in scene.layout.players)


def development(args: argparse.Namespace) -> None:
    """Top-band options on development decks and tables (see the module's docstring)."""
    options = dict(DEVELOPMENT_OPTIONS)
    if args.embedding:  # the learned band embedding added to the shipped matcher, per weight
        net = CardEmbedder(args.embedding, "band")
        for w in EMBED_WEIGHTS:
            options[f"embedding {w:g}"] = {"embedding": net, "embedding_weight": w}
        # the two views (an option since the ninth round) with the embedding: an enrolled deck only
        options["embedding 1 + views"] = {"embedding": net, "band_views_mm": TWO_VIEWS}
        # the embedding's cosine of a whole card's top band added to its score (thirteenth round)
        for w in EMBED_WHOLE_WEIGHTS:
            options[f"embedding 1 + whole {w:g}"] = {"embedding": net, "embedding_whole": w}
            for m in EMBED_WHOLE_MARGINS:
                options[f"embedding 1 + whole {w:g} within {m:g}"] = {
                    "embedding": net,
                    "embedding_whole": w,
                    "embedding_whole_margin": m,
                }
    if args.methods:
        options = {k: v for k, v in options.items() if k in args.methods.split(",")}
    for deck_key in args.dev_decks.split(","):
        deck_name = DEV_DECKS[deck_key]
        for render, settings_of in DEVELOPMENT_RENDERS.items():
            right: dict[str, dict[str, Tally]] = defaultdict(lambda: defaultdict(Tally))
            prog = Progress(
                f"development: {deck_name}, {render}", len(DEVELOPMENT_DECKS) * args.frames, every=8
            )
            for runs, _seed, scene, seats in _development_tables(deck_key, settings_of, options, args.frames):
                for name, asm in runs.items():
                    asm.assemble(scene.image, scene.homography, oracle_detections(scene), seats)
                    tally_cards(asm.last_cards, scene, right[name])
                    truths = true_cards(asm.last_cards, scene)
                    for (seen, card), truth in zip(asm.last_cards, truths, strict=True):
                        if seen.cls == "card_band" and truth is not None:
                            right[name][f"bands in {area_of(scene.layout, truth)}"].add(card == truth)
                prog.step()
            print(
                f"\n== development: {deck_name}, {render} tables ({len(DEVELOPMENT_DECKS)} x {args.frames})"
            )
            for name in options:
                r = right[name]
                print(
                    f"  {name:19s} full faces {r['card']}   top bands {r['card_band']}"
                    f" (in the Archive {r['bands in archive']}, in columns {r['bands in gizmos']})"
                )


#: The memory's bonus for a band seen alone with the embedding, per option:
#: ``Identifier(embedding_memory=...)`` (the bonus times ``1 + embedding_memory × weight``).
MEMORY_SCALES = (0.0, 0.5, 1.0, 2.0)
MEMORIES = ("alone", "memory", "one move behind")


def development_memory(args: argparse.Namespace) -> None:
    """The referee's memory with the embedding on development decks and tables: the memory's
    bonus for bands seen alone per :data:`MEMORY_SCALES`, against the matcher without the
    embedding, with no memory, the exact memory and the memory one move behind (a card just
    built is still where the referee last saw it); bands each option loses against the matcher
    without the embedding under the same memory, and wrong bands by area."""
    net = CardEmbedder(args.embedding, "band")
    options: dict[str, dict[str, Any]] = {"no embedding": {}}
    for m in MEMORY_SCALES:
        options[f"embedding, bonus x{1 + m:g}"] = {"embedding": net, "embedding_memory": m}
    for deck_key in args.dev_decks.split(","):
        deck_name = DEV_DECKS[deck_key]
        for render, settings_of in DEVELOPMENT_RENDERS.items():
            right: dict[tuple[str, str], dict[str, Tally]] = defaultdict(
                lambda: {"card": Tally(), "card_band": Tally()}
            )
            wrong_at: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
            lost: dict[tuple[str, str], int] = defaultdict(int)
            prog = Progress(f"memory: {deck_name}, {render}", len(DEVELOPMENT_DECKS) * args.frames, every=8)
            for runs, seed, scene, seats in _development_tables(deck_key, settings_of, options, args.frames):
                memories = {
                    "alone": None,
                    "memory": layout_memory(scene.layout),
                    "one move behind": lagging_memory(scene.layout, np.random.default_rng(seed)),
                }
                for mem_name, mem in memories.items():
                    base: list[bool] = []
                    for name, asm in runs.items():
                        asm.know(mem)
                        asm.assemble(scene.image, scene.homography, oracle_detections(scene), seats)
                        cards = asm.last_cards
                        truths = true_cards(cards, scene)
                        oks = [c == t for (_, c), t in zip(cards, truths, strict=True)]
                        bands = [ok for (s, _), ok in zip(cards, oks, strict=True) if s.cls != "card"]
                        if not base:
                            base = bands
                        lost[name, mem_name] += sum(b and not o for b, o in zip(base, bands, strict=True))
                        for (s, _), truth, ok in zip(cards, truths, oks, strict=True):
                            right[name, mem_name][s.cls].add(ok)
                            if not ok and truth is not None:
                                where = area_of(scene.layout, truth)
                                wrong_at[name, mem_name][f"{s.cls} in {where}"] += 1
                prog.step()
            print(f"\n== memory: {deck_name}, {render} tables ({len(DEVELOPMENT_DECKS)} x {args.frames})")
            for mem_name in MEMORIES:
                for name in options:
                    r = right[name, mem_name]
                    where = ", ".join(f"{a} {n}" for a, n in sorted(wrong_at[name, mem_name].items()))
                    print(
                        f"  {mem_name:15s} {name:24s} full faces {r['card']}   top bands {r['card_band']}"
                        f"   bands lost {lost[name, mem_name]}   wrong: {where or '-'}"
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
    ap.add_argument("--phone", action="store_true", help="phone-like degradations, one at a time, per deck")
    ap.add_argument("--spread", action="store_true", help="enrolment from a spread on held-out-style tables")
    ap.add_argument(
        "--development",
        action="store_true",
        help="top-band options on development decks and tables (where they are chosen)",
    )
    ap.add_argument(
        "--memory",
        action="store_true",
        help="--development: the referee's memory with the embedding (its bonus for bands alone)",
    )
    ap.add_argument(
        "--embedding",
        type=Path,
        nargs="?",
        const=model_path("band"),
        help="also the learned band embedding (this ONNX file) and its blends with ncc",
    )
    ap.add_argument("--decks", default="random,drawn,other", help="--phone: decks (random,drawn,other)")
    ap.add_argument(
        "--dev-decks",
        default="random,drawn",
        help=f"--development: decks ({','.join(DEV_DECKS)})",
    )
    ap.add_argument("--degradations", default=",".join(DEGRADATIONS), help="--phone: which")
    args = ap.parse_args(argv)
    if args.phone:
        phone_study(args)
        return 0
    if args.spread:
        spread_study(args)
        return 0
    if args.assembled:
        assembled(args)
        return 0
    if args.development and not set(args.dev_decks.split(",")) <= set(DEV_DECKS):
        print(f"identify_methods: --dev-decks takes some of {','.join(DEV_DECKS)}", file=sys.stderr)
        return 2
    if args.development and args.memory:
        if not args.embedding:
            print("identify_methods: --memory needs --embedding", file=sys.stderr)
            return 2
        development_memory(args)
        return 0
    if args.development:
        development(args)
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
                ("ncc-rigid", {"band_parts": 1}),
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
        emb = EmbeddingMethods(args.embedding, faces) if args.embedding else None
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
                if band and emb is not None:
                    t0 = time.perf_counter()
                    cos = emb.cosines(scene.image, scene.homography, c, rot)
                    secs["emb"] += time.perf_counter() - t0
                    ncc = plain.band_scores(scene.image, scene.homography, c, rot, among)
                    for name, ok in emb.judge(ncc, cos, among, o.card).items():
                        right[name, kind].add(ok)
                if not band:
                    patch = table_patch(scene.image, scene.homography, c, CARD_MM, 3.0, rot)
                    for name, fn in feats.items():
                        t0 = time.perf_counter()
                        sc = fn(patch, among)
                        secs[name] += time.perf_counter() - t0
                        right[name, kind].add(int(np.argmax(np.where(among, sc, -np.inf))) == o.card)
            prog.step()
        print(f"\n== {cond}: {about}; {args.frames} frames, true boxes and camera, table candidates")
        names = list(methods) + list(feats) + (["ncc+map"] if args.color_map else [])
        for name in names + (emb.names if emb else []):
            f, b = right[name, "faces"], right[name, "bands"]
            n = f.n + (b.n if name in methods or name == "ncc+map" else 0)
            if emb is not None and name in emb.names:
                print(f"  {name:14s} top bands {b}   (emb: {1000 * secs['emb'] / max(b.n, 1):.1f} ms/band)")
                continue
            print(
                f"  {name:14s} full faces {f}   top bands {b}   {1000 * secs[name] / max(n, 1):.1f} ms/card"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
