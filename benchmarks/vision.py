"""Vision benchmark on a held-out synthetic set (seeds and settings never used in training).

Measures each stage on its own, then the whole pipeline, on the same held-out frames:

* calibration: markers found, corner error of the homography against the true camera;
* the later stages alone (zones, identification, marble color, assembly) on an oracle
  detector made of the rendered ground-truth boxes: the share of observations exactly right;
* the detector: mAP50 per class, marble color accuracy of its class against the color stage,
  card identification top-1 on its boxes (full faces and top bands);
* the whole pipeline: the share of frames whose observation is exactly right, and the median
  latency per 1280×720 frame end to end on this CPU, stage by stage;
* the hand network: mask IoU against the rendered hand, and what the observation would be with
  the detector's own hand class instead (the way hands were found before the network);
* the detector alone with onnxruntime, OpenVINO and OpenCV's DNN module (the faster one ships).

    .venv/bin/python benchmarks/vision.py [--frames 120] [--model models/detector.onnx]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2
import numpy as np

import vision  # noqa: F401  (caps BLAS at one thread: see vision/__init__.py)
from benchmarks import (
    heldout,  # the style and deck no training sees
    raytrace,  # a renderer of another kind, held out of all training
)
from referee.app.settings import Settings
from vision.calibrate import Calibration, Calibrator
from vision.detect import BACKENDS, Detection, Detector
from vision.embedding import CardEmbedder, model_path
from vision.errors import CalibrationError, ModelFileError
from vision.geometry import CANON_PX_PER_MM, CLASSES, rectify
from vision.hands import hand_cells, mask_boxes_mm, mask_iou
from vision.identify import Identifier
from vision.marbles import MarbleColors
from vision.observe import (
    ASK_CONFIDENCE,
    OCCLUDER_CLASSES,
    Assembler,
    Observer,
    Seen,
    rotation_at,
)
from vision.occlusion import TableBackground
from vision.progress import Progress
from vision.tokens import VP_SPLIT_MM, box_size, token_points, token_size, token_values
from vision.training.dataset import HELDOUT_SEED_BASE
from vision.training.evaluate import (
    HELDOUT,
    Tally,
    average_precision,
    content,
    differences,
    error_causes,
    heldout_scenes,
    iou,
    lagging_memory,
    layout_memory,
    match,
    oracle_detections,
    table_differences,
)
from vision.training.synth import MARBLE_MM, RenderedScene
from vision.whitebalance import balance
from vision.zones import default_zones, hidden_by, inside

#: name -> (render settings, the deck's faces or None for the project's own, first seed, what it is)
CONDITIONS = {
    "own": (HELDOUT, None, HELDOUT_SEED_BASE, "the project's renderer and faces, held-out seeds and cameras"),
    "style": (
        heldout.STYLE,
        None,
        heldout.STYLE_SEED_BASE,
        "held-out render style (materials, 2700-6500 K lamps, webcam processing, hand-placed "
        "cards, touching marbles, other VP tokens), the project's faces",
    ),
    "deck": (
        heldout.STYLE,
        heldout.other_deck,
        heldout.DECK_SEED_BASE,
        "held-out style and a deck of different art, enrolled from phone-like photos",
    ),
    "lookalike": (
        heldout.STYLE,
        heldout.lookalike_deck,
        heldout.LOOKALIKE_SEED_BASE,
        "held-out style and a look-alike deck (one drawing per colour and type; title, text and "
        "cost tell cards apart), enrolled from phone-like photos",
    ),
    "arms": (
        heldout.ARMS,
        None,
        heldout.ARMS_SEED_BASE,
        "the held-out style with an arm in every frame: skin tones, tartan and knit sleeves, "
        "watch straps of its own (issue 14, item 3), the project's faces",
    ),
    "traced": (
        raytrace.STYLE_TRACED,
        None,
        raytrace.RAYTRACE_SEED_BASE,
        "the held-out style's tables ray-traced in 3-D by POV-Ray (card stock, stacked cards, tall "
        "decks, glossy, glass and swirled marble spheres, soft shadows), the project's faces, no hands",
    ),
    "traced_deck": (
        raytrace.STYLE_TRACED,
        heldout.other_deck,
        raytrace.RAYTRACE_DECK_SEED_BASE,
        "ray-traced tables with the deck of different art, enrolled from phone-like photos, no hands",
    ),
}
#: The enrolment photos of each condition's deck: (the faces, the photos' seed).
ENROLMENTS = {
    "deck": lambda: (heldout.other_deck(), heldout.DECK_ART_SEED + 1),
    "lookalike": lambda: (heldout.lookalike_deck(), heldout.LOOKALIKE_ART_SEED + 1),
}
ENROLMENTS["traced_deck"] = ENROLMENTS["deck"]  # the same deck and photos, traced tables


def enrolment(condition: str) -> str | None:
    """A new enrolment folder of the condition's deck photographed as a user would (its phone
    photos), or None where the tables show the project's own faces."""
    if condition not in ENROLMENTS:
        return None
    faces, seed = ENROLMENTS[condition]()
    folder = Path(tempfile.mkdtemp(prefix=f"gizmos-{condition}-"))
    return str(heldout.enrol_photos(folder, faces, seed))


TARGETS = {
    "marble colour": 0.995,
    "identification, full faces": 0.99,
    "identification, top bands": 0.97,
    "observations exactly right": 0.95,
    "frames/s end to end (1280x720)": 5.0,
}


def corner_error_mm(h_est: np.ndarray, h_true: np.ndarray) -> float:
    """Largest distance (table mm) between where the two homographies put the play-area corners."""
    w, h = default_zones().size
    pts = np.array([[[0, 0], [w, 0], [w, h], [0, h]]], np.float32)
    back = cv2.perspectiveTransform(cv2.perspectiveTransform(pts, h_est), np.linalg.inv(h_true))
    return float(np.linalg.norm(back - pts, axis=2).max())


def last_canon(observer: Observer) -> np.ndarray:
    """The rectified image of the frame ``observer`` last observed (one it calibrated). Read in a
    function: in :func:`measure` the type checker would keep ``observer.last_canon`` narrowed to
    the ``None`` it is reset to before ``observe``, and skip the code after it as unreachable."""
    assert observer.last_canon is not None
    return observer.last_canon


def calibrate(cal: Calibrator, scene: RenderedScene) -> tuple[np.ndarray, str]:
    """This frame's homography and how it was had: "fresh", "covered" or "failed".

    "covered": a hand lies over a marker, and a stream keeps the last good homography of the same
    camera; held-out frames are unrelated tables, so the true camera stands in for it. "failed":
    a marker was not found although nothing covers it; the pipeline then has no calibration, and
    the later stages are measured with the true camera.
    """
    cal.reset()
    try:
        return cal.update(scene.image).homography, "fresh"
    except CalibrationError:
        z = cal.zones
        m = 10.0  # the white quiet zone around the black square counts too
        tiles = [(x - m, y - m, z.marker_mm + 2 * m, z.marker_mm + 2 * m) for _, (x, y) in z.marker_tiles]
        hand_on_marker = any(hidden_by(t, scene.hands_mm) for t in tiles)
        return scene.homography, "covered" if hand_on_marker else "failed"


def true_cards(cards: list[tuple[Seen, int]], scene: RenderedScene) -> list[int | None]:
    """The card truly at each identified card's box (true boxes: the visible card it overlaps most)."""
    out = []
    for seen, _card in cards:
        box = tuple(v * CANON_PX_PER_MM for v in seen.box)
        o = max(
            (o for o in scene.objects if o.visible and o.card is not None),
            key=lambda o: iou(box, tuple(v * CANON_PX_PER_MM for v in o.box_mm)),
        )
        out.append(o.card)
    return out


def card_truths(cards: list[tuple[Seen, int]], scene: RenderedScene) -> list[bool]:
    """Whether each identified card (true boxes) is the card truly there."""
    return [card == truth for (_, card), truth in zip(cards, true_cards(cards, scene), strict=True)]


def tally_cards(cards: list[tuple[Seen, int]], scene: RenderedScene, into: dict[str, Tally]) -> None:
    """Count each identified card (true boxes) right or wrong, full faces and top bands apart."""
    for (seen, _), right in zip(cards, card_truths(cards, scene), strict=True):
        into[seen.cls].add(right)


def truth_objects(scene: RenderedScene) -> list[tuple[str, tuple[float, ...], Any]]:
    """The scene's visible objects: class, box in the canonical frame (px), the object."""
    return [(o.cls, tuple(v * CANON_PX_PER_MM for v in o.box_mm), o) for o in scene.objects if o.visible]


def tally_table(
    cards: list[tuple[Seen, int]], truth: list[tuple[str, tuple[float, ...], Any]], into: dict[str, Tally]
) -> None:
    """Count each card the pipeline identified on a detected box (matched to a true box by IoU
    >= 0.5) right or wrong, full faces and top bands apart."""
    for s, card in cards:
        box = tuple(v * CANON_PX_PER_MM for v in s.box)
        best = max(
            ((i, iou(box, b)) for i, (c, b, _) in enumerate(truth) if c in into),
            key=lambda x: x[1],
            default=(None, 0.0),
        )
        if best[0] is not None and best[1] >= 0.5:
            o = truth[best[0]][2]
            into[o.cls].add(card == o.card)


@dataclass
class StageEffect:
    """What a stage that keeps less sure boxes did over a run: the boxes it added, of them on a
    true object, and the frames exactly right without them."""

    added: int = 0
    on_true: int = 0
    exact_without: Tally = field(default_factory=Tally)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark on each condition asked for and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=120, help="frames per condition")
    ap.add_argument("--model", type=Path, help="default: $GIZMOS_DETECTOR, else models/detector.onnx")
    ap.add_argument("--hand-model", help='default: models/hands.onnx; "detector": the detector\'s hand class')
    ap.add_argument("--first-seed", type=int, help="first seed (default: the condition's own range)")
    ap.add_argument(
        "--conditions",
        default="own",
        help=f"comma-separated, from {', '.join(CONDITIONS)}, or 'all' (default: own)",
    )
    ap.add_argument("--show-errors", action="store_true", help="print what each wrong observation got wrong")
    ap.add_argument(
        "--empty-table",
        action="store_true",
        help="give the pipeline each table's empty view (occlusion stage, vision/occlusion.py) and "
        "compare with the hand network alone",
    )
    ap.add_argument(
        "--learned-table",
        type=int,
        default=0,
        metavar="N",
        help="let the pipeline learn each table from N other frames of it first (other arms, or none; "
        "vision/occlusion.py: LearnedTable) and compare with the hand network alone",
    )
    ap.add_argument(
        "--whole-frame-pass",
        action="store_true",
        help="the heap stage's second detector pass on the whole frame, not on ring crops (before round 7)",
    )
    ap.add_argument(
        "--embedding",
        type=Path,
        nargs="?",
        const=model_path("band"),
        help="identify with this band embedding (ONNX; default the committed one), the Observer's weights",
    )
    args = ap.parse_args(argv)
    args.model = args.model or Settings.from_env().detector_file()
    names = list(CONDITIONS) if args.conditions == "all" else args.conditions.split(",")
    wrong = next(
        (
            f"unknown condition {n!r} (choose from {', '.join(CONDITIONS)} or all)"
            for n in names
            if n not in CONDITIONS
        ),
        None,
    )
    if args.empty_table and args.learned_table:
        wrong = "--empty-table and --learned-table are two backgrounds: give one"
    elif args.learned_table < 0:
        wrong = f"--learned-table takes a number of frames >= 0, not {args.learned_table}"
    elif args.learned_table and wrong is None:
        traced = [n for n in names if CONDITIONS[n][0].renderer is not None]
        if traced:
            wrong = f"--learned-table: the ray-traced {', '.join(traced)} render no other frames"
    if wrong is not None:
        print(f"error: {wrong}", file=sys.stderr)
        return 2
    for name in names:
        measure(args, name)
    return 0


def prime(observer: Observer, h: np.ndarray, status: str) -> None:
    """The observer as a stream would have it before this table's frame: the calibrator primed
    with the frame's own calibration when a hand covers a marker, nothing else carried over."""
    observer.calibrator.reset()
    observer.calibrator.last = Calibration(h, (0, 1, 2, 3), True, 0.0) if status == "covered" else None
    observer.last_canon, observer.last_detections, observer.assembler.last_cards = None, [], []


def measure(args: argparse.Namespace, condition: str) -> None:
    """Every figure of one condition."""
    settings, faces, first_seed, about = CONDITIONS[condition]
    if args.empty_table:  # the same frames, plus each table's empty view (nothing else changes)
        settings = replace(settings, empty_table=True)
    if args.learned_table:  # the same frames, plus other frames of each table (other arms)
        settings = replace(settings, other_frames=args.learned_table)
    first = args.first_seed if args.first_seed is not None else first_seed
    enrol_dir = enrolment(condition)
    print(
        f"\n===== condition {condition}: {about}\n"
        f"vision benchmark: {args.frames} frames, model {args.model}, {os.cpu_count()} CPU cores, "
        f"load average {os.getloadavg()[0]:.1f} at the start"
    )
    observer = Observer(
        args.model,
        color_stage=True,
        hand_model=args.hand_model,
        enrol_dir=enrol_dir,
        ring_pass=not args.whole_frame_pass,
    )
    if args.embedding:  # another band embedding in the identifier, at the Observer's own weights
        shipped = observer.identifier
        observer.assembler.identifier = Identifier(
            shipped.faces,
            embedding=CardEmbedder(args.embedding, "band"),
            embedding_weight=shipped.embedding_weight,
            embedding_whole=shipped.embedding_whole,
        )
    det = observer.detector
    assert det is not None  # the Observer was built on the detector's model, not on given boxes
    colors = MarbleColors()
    oracle = Assembler(observer.zones, observer.identifier, colors, tokens=observer.assembler.tokens)
    # Every frame is a new table, read afresh (and assembled again with other memories and
    # detections): no card keeps the scores of a frame before (vision/unmoved.py; benchmarks/fps.py
    # times a table seen in the frame before).
    observer.assembler.unmoved = oracle.unmoved = None
    cal = Calibrator(observer.zones)

    scored: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    n_truth: dict[str, int] = defaultdict(int)
    cal_status: dict[str, int] = defaultdict(int)
    cal_err: list[float] = []
    exact_oracle, exact = Tally(), Tally()
    exact_memory = Tally()  # oracle, with the referee's memory of this table's cards
    exact_lag = Tally()  # oracle, with the memory one move behind (lagging_memory)
    questions = {True: Tally(), False: Tally()}  # whole cards asked about (oracle), by right / wrong
    exact_pipe_memory = Tally()  # whole pipeline with the referee's memory
    ident_oracle = {"card": Tally(), "card_band": Tally()}  # identification on true boxes
    ident_memory = {"card": Tally(), "card_band": Tally()}  # the same with the referee's memory
    ident_lag = {"card": Tally(), "card_band": Tally()}  # ... and with the memory one move behind
    ident_pipe_memory = {"card": Tally(), "card_band": Tally()}  # detected boxes, with the memory
    exact_by_hand = {True: Tally(), False: Tally()}  # whole pipeline, frames with / without a hand
    right_table = Tally()  # whole pipeline, a hand judged by what it hides (see table_differences)
    hand_iou: list[float] = []  # hand network against the rendered hand, frames with a hand
    hand_false = Tally()  # frames without a hand where the network marked one
    hand_false_network = Tally()  # the same before the occlusion stage's say (--empty-table, --learned-table)
    exact_network = Tally()  # whole pipeline with the hand network alone (the same)
    exact_det_hands = Tally()  # the same frames, hands from the detector's hand class
    color_det, color_stage, color_oracle = Tally(), Tally(), Tally()
    unknown = 0
    marble_recall = Tally()
    # Which data matters: why frames are wrong (frames per cause, whole pipeline and oracle), and
    # the detector per class at the pipeline's confidence (found, extra), VP values by size on
    # its boxes, marbles found in touching heaps and apart.
    causes_pipeline: Counter[str] = Counter()
    causes_oracle: Counter[str] = Counter()
    causes_memory: Counter[str] = Counter()  # whole pipeline with the referee's memory (the live run)
    found = {c: Tally() for c in CLASSES}
    extra: Counter[str] = Counter()
    vp_value, vp_value_box = Tally(), Tally()  # each token by its size; the box's size alone at 21 mm
    vp_reader = Tally()  # the frame's tokens read together with the token reader (the pipeline's reading)
    vp_together = Tally()  # the same, by sizes and colours alone (token_values without the reader)
    vp_alone = Tally()  # the same tokens, each by its own size (token_points: before)
    vp_size: dict[str, list[float]] = {"vp1": [], "vp5": []}  # token_size of true 1s and 5s found, mm
    marble_touching = {True: Tally(), False: Tally()}
    # The heap stage (vision/heaps.py): the same frames assembled without the marbles it added,
    # and the marbles the pipeline kept (after the stage) in touching heaps and apart.
    exact_no_heaps = Tally()  # heap stage off, tokens read together
    exact_before = Tally()  # both of this round's stages off: no heap stage, each token alone
    causes_no_heaps: Counter[str] = Counter()  # of exact_before
    heap_touching = {True: Tally(), False: Tally()}
    heap_extra, first_extra, heap_added, heap_passes, heap_row = 0, 0, 0, 0, 0
    # Card boxes on bare table (vision/plausible.py): dropped, of them on a true card, and the
    # frames assembled with them kept.
    bare_dropped, bare_true, exact_with_bare = 0, 0, Tally()
    exact_no_reader = Tally()  # the pipeline's detections assembled without the token reader
    # Top bands kept where a stack puts them (vision/stacks.py): added, of them on a true band,
    # and the frames assembled without them.
    stacks = StageEffect()
    # Whole cards kept in a Display slot or a file column nothing else fills (vision/display.py):
    # the same three.
    slots = StageEffect()
    ident_alone = {"card": Tally(), "card_band": Tally()}
    ident_table = {"card": Tally(), "card_band": Tally()}
    latency: list[float] = []
    stages: dict[str, list[float]] = defaultdict(list)
    canon_images: list[np.ndarray] = []
    prog = Progress(f"benchmark {condition}: frames", args.frames, every=10)
    for seed, scene in heldout_scenes(first, args.frames, settings, faces() if faces else None):
        seats = tuple(p.seat for p in scene.layout.players)
        # Calibration, on its own.
        h, status = calibrate(cal, scene)
        cal_status[status] += 1
        if status == "fresh":
            cal_err.append(corner_error_mm(h, scene.homography))
        # The later stages on the oracle detector (color and the matcher alone read the frame as
        # the Assembler does: white-balanced on the markers' paper when it is on).
        seen_frame = balance(scene.image, h, observer.zones) if oracle.white_balance else scene.image
        truth_dets = oracle_detections(scene)
        got = oracle.assemble(scene.image, h, truth_dets, seats)
        exact_oracle.add(content(got) == content(scene.truth))
        tally_cards(oracle.last_cards, scene, ident_oracle)
        asked = {q.center for q in oracle.last_questions}
        for (seen, _card), right in zip(
            oracle.last_cards, card_truths(oracle.last_cards, scene), strict=True
        ):
            if seen.cls == "card":
                questions[right].add(seen.center in asked)
        # ... with the referee's memory, as the live run hands it over (Assembler.know): of this
        # very table (the tracker accepted it), and one move behind (a card just built).
        memory = layout_memory(scene.layout)
        for label, known, exact_k, ident_k in (
            ("memory", memory, exact_memory, ident_memory),
            (
                "memory one move behind",
                lagging_memory(scene.layout, np.random.default_rng(seed)),
                exact_lag,
                ident_lag,
            ),
        ):
            oracle.know(known)
            got_k = oracle.assemble(scene.image, h, truth_dets, seats)
            exact_k.add(content(got_k) == content(scene.truth))
            tally_cards(oracle.last_cards, scene, ident_k)
            if args.show_errors and content(got_k) != content(scene.truth):
                print(f"  oracle with the {label} {seed}: {differences(got_k, scene.truth)}")
        oracle.know(None)
        causes_oracle.update(error_causes(got, scene.truth))
        if args.show_errors and content(got) != content(scene.truth):
            print(f"  oracle {seed}: {differences(got, scene.truth)}")
        for d in truth_dets:
            if d.cls.startswith("marble_"):
                cx, cy = (
                    (d.box[0] + d.box[2]) / 2 / CANON_PX_PER_MM,
                    (d.box[1] + d.box[3]) / 2 / CANON_PX_PER_MM,
                )
                color_oracle.add(colors.classify(seen_frame, h, (cx, cy))[0] == d.cls.removeprefix("marble_"))
        # The whole pipeline (the calibrator primed as a stream would have it).
        prime(observer, h, status)
        observer.background = (
            TableBackground.from_frame(scene.empty_image, h) if scene.empty_image is not None else None
        )
        observer.learned = None
        if args.learned_table:  # the table learned from its other frames, as a stream would
            observer.learn_table()
            for other in scene.other_images:
                with contextlib.suppress(CalibrationError):  # a frame not calibrated teaches nothing
                    observer.observe(other, t=0.0, seats=seats)
            prime(observer, h, status)
        occluding = observer.background is not None or observer.learned is not None
        try:
            t0 = time.perf_counter()
            obs = observer.observe(scene.image, t=0.0, seats=seats)
            dt = time.perf_counter() - t0
            # Identification inside the pipeline (table constraints), by box position.
            tally_table(observer.assembler.last_cards, truth_objects(scene), ident_table)
            seen_h = observer.calibrator.last
            assert seen_h is not None  # the observation above was calibrated
            added = {id(d) for d in observer.last_heap_marbles}
            heap_added += len(added)
            heap_passes += bool(observer.heaps and observer.heaps.last["second_pass"])
            heap_row += observer.heaps.last["row"] if observer.heaps else 0
            bare = observer.last_bare_table
            card_cls = ("card", "card_band", "card_back")
            truth_cards = [(c, b) for c, b, _ in truth_objects(scene) if c in card_cls]
            bare_dropped += len(bare)
            bare_true += sum(t is not None for _, t in match(bare, truth_cards, same_class=False))
            with_bare = observer.assembler.assemble(
                scene.image, seen_h.homography, observer.last_detections + bare, seats
            )
            exact_with_bare.add(content(with_bare) == content(scene.truth))
            reader, observer.assembler.tokens = observer.assembler.tokens, None
            no_reader = observer.assembler.assemble(
                scene.image, seen_h.homography, observer.last_detections, seats
            )
            observer.assembler.tokens = reader
            exact_no_reader.add(content(no_reader) == content(scene.truth))
            for effect, boxes in ((stacks, observer.last_stack_bands), (slots, observer.last_display_cards)):
                effect.added += len(boxes)
                effect.on_true += sum(t is not None for _, t in match(boxes, truth_cards, same_class=False))
                without = [d for d in observer.last_detections if all(d is not b for b in boxes)]
                seen_without = observer.assembler.assemble(scene.image, seen_h.homography, without, seats)
                effect.exact_without.add(content(seen_without) == content(scene.truth))
            first_pass = [d for d in observer.last_detections if id(d) not in added]
            no_heaps = observer.assembler.assemble(scene.image, seen_h.homography, first_pass, seats)
            exact_no_heaps.add(content(no_heaps) == content(scene.truth))
            observer.assembler.tokens_together = False
            before = observer.assembler.assemble(scene.image, seen_h.homography, first_pass, seats)
            observer.assembler.tokens_together = True
            exact_before.add(content(before) == content(scene.truth))
            causes_no_heaps.update(error_causes(before, scene.truth))
            truth_marbles = [(c, b) for c, b, _ in truth_objects(scene) if c.startswith("marble_")]
            kept_marbles = [d for d in observer.last_detections if d.cls.startswith("marble_")]
            kept_hit = {t for d, t in match(kept_marbles, truth_marbles, same_class=False) if t is not None}
            heap_extra += sum(t is None for _, t in match(kept_marbles, truth_marbles, same_class=False))
            first_marbles = [d for d in first_pass if d.cls.startswith("marble_")]
            first_extra += sum(t is None for _, t in match(first_marbles, truth_marbles, same_class=False))
            centres_t = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for _, b in truth_marbles]
            for i, ct in enumerate(centres_t):
                near = sum(math.dist(ct, o) < (MARBLE_MM + 1) * CANON_PX_PER_MM for o in centres_t) > 1
                heap_touching[near].add(i in kept_hit)
            if observer.hands is not None:
                hand = observer.last_hand_mask
                assert hand is not None
                if scene.hand_mask is None:
                    hand_false.add(
                        bool(hand.any()) or any(d.cls == "occluder" for d in observer.last_detections)
                    )
                    if occluding:
                        assert observer.last_network_mask is not None
                        hand_false_network.add(bool(observer.last_network_mask.any()))
                else:
                    hand_iou.append(mask_iou(hand, hand_cells(scene.hand_mask)))
                canon_seen = last_canon(observer)
                by_detector = [d for d in observer.last_detections if d.cls != "hand"] + [
                    d
                    for d in det.detect(canon_seen, conf=observer.hand_conf)
                    if d.cls == "hand" and d.confidence >= observer.hand_conf
                ]
                alt = observer.assembler.assemble(scene.image, seen_h.homography, by_detector, seats)
                exact_det_hands.add(content(alt) == content(scene.truth))
                if occluding:
                    assert observer.last_network_mask is not None
                    alone = [d for d in observer.last_detections if d.cls not in OCCLUDER_CLASSES] + [
                        Detection("hand", 1.0, tuple(v * CANON_PX_PER_MM for v in box))  # type: ignore[arg-type]
                        for box in mask_boxes_mm(observer.last_network_mask)
                    ]
                    alt = observer.assembler.assemble(scene.image, seen_h.homography, alone, seats)
                    exact_network.add(content(alt) == content(scene.truth))
            # The same detections assembled with the referee's memory, as the live run does
            # (referee/app/live.py: the tracker's accepted state, then assemble).
            observer.know(memory)
            with_memory = observer.assembler.assemble(
                scene.image, seen_h.homography, observer.last_detections, seats
            )
            exact_pipe_memory.add(content(with_memory) == content(scene.truth))
            causes_memory.update(error_causes(with_memory, scene.truth))
            tally_table(observer.assembler.last_cards, truth_objects(scene), ident_pipe_memory)
            observer.know(None)
            if args.show_errors and content(with_memory) != content(scene.truth):
                print(f"  pipeline with the memory {seed}: {differences(with_memory, scene.truth)}")
            right = content(obs) == content(scene.truth)
            vs_table = table_differences(obs, scene)
            exact.add(right)
            causes_pipeline.update(error_causes(obs, scene.truth))
            exact_by_hand[bool(scene.hands_mm)].add(right)
            right_table.add(not vs_table)
            if args.show_errors and not right:
                print(f"  pipeline {seed}: {differences(obs, scene.truth)}; vs the table: {vs_table}")
            if scene.image.shape[1] == 1280:
                latency.append(dt)
                for k, v in observer.timings.items():
                    stages[k].append(v)
        except CalibrationError as exc:
            exact.add(False)
            causes_pipeline["calibration"] += 1
            exact_no_heaps.add(False)
            exact_before.add(False)
            causes_no_heaps["calibration"] += 1
            exact_pipe_memory.add(False)  # the memory reads no table the pipeline did not calibrate
            causes_memory["calibration"] += 1
            exact_by_hand[bool(scene.hands_mm)].add(False)
            right_table.add(False)
            if args.show_errors:
                print(f"  pipeline {seed}: {exc}")
        canon = observer.last_canon if observer.last_canon is not None else rectify(scene.image, h)
        if len(canon_images) < 8 and scene.image.shape[1] == 1280:
            canon_images.append(canon)
        # The detector: AP at every threshold, then what the pipeline does with its boxes.
        dets = det.detect(canon, conf=0.01)
        truth = truth_objects(scene)
        for cls, _, _ in truth:
            n_truth[cls] += 1
        for d, t in match(dets, [(c, b) for c, b, _ in truth], same_class=True):
            scored[d.cls].append((d.confidence, t is not None))
        confident = [d for d in dets if d.confidence >= observer.conf]
        # The frame's tokens read together, as the Assembler reads them: every VP box inside a
        # VP zone of a seat in play.
        vp_zones = [observer.zones.seat(s).vp for s in seats]
        vp_boxes = {
            id(d): Seen.of(d).box
            for d in confident
            if d.cls in ("vp1", "vp5") and any(inside(r, *Seen.of(d).center) for r in vp_zones)
        }
        vp_read = dict(zip(vp_boxes, token_values(seen_frame, h, list(vp_boxes.values())), strict=True))
        vp_said = vp_read
        if observer.assembler.tokens is not None:
            centres = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in vp_boxes.values()]
            fives = observer.assembler.tokens.fives(seen_frame, h, centres)
            vp_said = dict(
                zip(vp_boxes, token_values(seen_frame, h, list(vp_boxes.values()), fives), strict=True)
            )
        hit: set[int] = set()
        for d, t in match(confident, [(c, b) for c, b, _ in truth], same_class=False):
            if t is None:
                extra[d.cls] += 1
                continue
            o = truth[t][2]
            if o.cls in ("vp1", "vp5") and d.cls in ("vp1", "vp5"):
                box = Seen.of(d).box
                vp_value.add(token_points(seen_frame, h, box) == int(o.cls[2:]))
                vp_value_box.add((box_size(box) >= 21.0) == (o.cls == "vp5"))
                vp_size[o.cls].append(token_size(seen_frame, h, box))
                if id(d) in vp_read:
                    vp_reader.add(vp_said[id(d)] == int(o.cls[2:]))
                    vp_together.add(vp_read[id(d)] == int(o.cls[2:]))
                    vp_alone.add(token_points(seen_frame, h, box) == int(o.cls[2:]))
            c = ((d.box[0] + d.box[2]) / 2 / CANON_PX_PER_MM, (d.box[1] + d.box[3]) / 2 / CANON_PX_PER_MM)
            if o.cls.startswith("marble_") and d.cls.startswith("marble_"):
                hit.add(t)
                color_det.add(d.cls == o.cls)
                said = (d.cls.removeprefix("marble_"), d.confidence)  # the detector's, a second opinion
                got_color = colors.classify(seen_frame, h, c, said)[0]
                unknown += got_color == "unknown"
                color_stage.add(got_color == o.color)
            if o.cls in ident_alone and d.cls in ident_alone:
                score = (
                    observer.identifier.card_scores if d.cls == "card" else observer.identifier.band_scores
                )
                pick = int(np.argmax(score(seen_frame, h, c, rotation_at(observer.zones, *c))))
                ident_alone[o.cls].add(pick == o.card)
        confident_hit = {t for _, t in match(confident, [(c, b) for c, b, _ in truth], same_class=False)}
        centres = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for c, b, _ in truth if c.startswith("marble_")]
        for i, (cls, b, _) in enumerate(truth):
            found[cls].add(i in confident_hit)
            if cls.startswith("marble_"):
                marble_recall.add(i in hit)
                c = ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)
                near = sum(math.dist(c, o) < (MARBLE_MM + 1) * CANON_PX_PER_MM for o in centres) > 1
                marble_touching[near].add(i in hit)
        prog.step()

    print()
    print(
        f"condition {condition}: {args.frames} frames, seeds {first}..{first + args.frames - 1}, "
        f"even seeds 1280x720, odd 1920x1080; settings {settings}"
    )
    print("\n[stage] calibration")
    print(
        f"  all four markers found in {cal_status['fresh']}/{args.frames} frames; a hand covers a marker "
        f"in {cal_status['covered']} (the last good homography is kept); "
        f"not found although uncovered in {cal_status['failed']} (no observation)"
    )
    if cal_err:
        print(
            f"  corner error vs true camera: median {statistics.median(cal_err):.2f} mm, "
            f"max {max(cal_err):.2f} mm"
        )
    print("\n[stage] zones + identification + marble colour + assembly, on the oracle detector")
    print(f"  observations exactly right: {exact_oracle}")
    print(
        f"  the same with the referee's memory (Assembler.know: the tracker accepted this table): "
        f"{exact_memory}; with the memory one move behind (a card just built): {exact_lag}"
    )
    print(
        f"  identification on true boxes, full faces / top bands: {ident_oracle['card']} / "
        f"{ident_oracle['card_band']}; with the referee's memory: {ident_memory['card']} / "
        f"{ident_memory['card_band']}; one move behind: {ident_lag['card']} / {ident_lag['card_band']}"
    )
    print(
        f"  whole cards the referee asks about (confidence < {ASK_CONFIDENCE}): of those identified wrong "
        f"{questions[False]}, of those identified right {questions[True]}"
    )
    print(f"  marble colour stage on true boxes: {color_oracle}")
    print("\n[stage] detector: mAP50 per class")
    aps = []
    for cls in CLASSES:
        a = average_precision(scored[cls], n_truth[cls])
        aps.append(a)
        print(f"  {cls:14s} {a:.3f}  ({n_truth[cls]} objects)")
    print(f"  {'mean':14s} {np.nanmean(aps):.3f}")
    print(f"  marbles found (conf >= {observer.conf}, IoU >= 0.5): {marble_recall}")
    print(f"  marbles found in touching heaps: {marble_touching[True]}; apart: {marble_touching[False]}")
    print(f"  at the pipeline's confidence ({observer.conf}), any class, IoU >= 0.5: found / extra boxes")
    for cls in CLASSES:
        print(f"    {cls:14s} found {found[cls]}, extra {extra[cls]}")
    print(
        f"  VP tokens found in the VP zones of the seats in play: value right, the frame's tokens read "
        f"together with the token reader (shipped, vision/tokens.py: token_values, TokenReader) {vp_reader}, "
        f"together by sizes and colours alone {vp_together}, each by its own size "
        f"{vp_alone}; every VP token found (the supply too): each by its box and measured disc "
        f"{vp_value}, from the box's size alone at 21 mm {vp_value_box}"
    )
    for cls, true_mm in (("vp1", 18), ("vp5", 24)):
        if vp_size[cls]:
            lo, med, hi = np.percentile(vp_size[cls], [5, 50, 95])
            wrong = sum((v >= VP_SPLIT_MM) == (cls == "vp1") for v in vp_size[cls])
            print(
                f"    {cls} ({true_mm} mm) size read: 5% {lo:.1f}, median {med:.1f}, 95% {hi:.1f} mm; "
                f"on the wrong side of {VP_SPLIT_MM} mm: {wrong}/{len(vp_size[cls])}"
            )
    print("\n[stage] marble colour on detected marbles")
    print(f"  detector class:          {color_det}")
    print(f"  colour stage (shipped):  {color_stage}  ({unknown} reported unknown)")
    print("\n[stage] card identification top-1 on detected boxes")
    for cls, name in (("card", "full faces"), ("card_band", "top bands")):
        print(f"  {name}: matcher alone {ident_alone[cls]}; with the table's constraints {ident_table[cls]}")
    print("\n[pipeline] whole observation")
    print(f"  observations exactly right: {exact}")
    print(f"    frames without a hand: {exact_by_hand[False]}; with a hand: {exact_by_hand[True]}")
    print(f"  observations right about the table (a hand judged by what it hides): {right_table}")
    print(
        f"  exactly right before the heap stage and reading the tokens together (each token by its "
        f"own size) {exact_before}; tokens together, no heap stage {exact_no_heaps}; both (shipped) "
        f"{exact}; marbles the heap stage (vision/heaps.py) added {heap_added} ({heap_row} in the Energy "
        f"Row), a second detector "
        f"pass (on {'ring crops' if observer.ring_detector is not None else 'the whole frame'}) in "
        f"{heap_passes} frames"
    )
    print(
        f"  marbles the pipeline kept (after the heap stage, IoU >= 0.5): in touching heaps "
        f"{heap_touching[True]}; apart {heap_touching[False]}; marble boxes on no marble {heap_extra} "
        f"(before the heap stage {first_extra})"
    )
    print(
        f"  card boxes on bare table dropped (vision/plausible.py) {bare_dropped}, of them on a true "
        f"card {bare_true}; exactly right with them kept {exact_with_bare}"
    )
    print(f"  exactly right without the VP-token reader (models/tokens.onnx) {exact_no_reader}")
    print(
        f"  top bands kept where a stack puts them (vision/stacks.py) {stacks.added}, of them on a true "
        f"card {stacks.on_true}; exactly right without them {stacks.exact_without}"
    )
    print(
        "  whole cards kept in a Display slot or a file column nothing else fills (vision/display.py)"
        f" {slots.added}, of "
        f"them on a true card {slots.on_true}; exactly right without them {slots.exact_without}"
    )
    print(
        "  error causes, frames affected (pipeline; before the heap stage and the tokens read together; "
        "the pipeline with the referee's memory; oracle detector in brackets):"
    )
    for cause in sorted(
        set(causes_pipeline) | set(causes_no_heaps) | set(causes_memory) | set(causes_oracle),
        key=lambda c: (-causes_pipeline[c], -causes_no_heaps[c], -causes_memory[c], c),
    ):
        n_after, n_before, n_memory = causes_pipeline[cause], causes_no_heaps[cause], causes_memory[cause]
        print(f"    {cause:36s} {n_after:4d} {n_before:4d} {n_memory:4d}  ({causes_oracle[cause]})")
    print(
        f"  with the referee's memory (as the live run: Observer.know, then assemble): exactly right "
        f"{exact_pipe_memory}; identification full faces / top bands {ident_pipe_memory['card']} / "
        f"{ident_pipe_memory['card_band']}"
    )
    if hand_iou:
        print(
            f"  hand network: mask IoU median {statistics.median(hand_iou):.3f}, "
            f"mean {statistics.fmean(hand_iou):.3f} over {len(hand_iou)} frames with a hand; "
            f"a hand marked where there is none: {hand_false}"
        )
        print(f"  observations exactly right with the detector's hand class instead: {exact_det_hands}")
    if args.empty_table or args.learned_table:
        what = (
            "the empty table"
            if args.empty_table
            else f"the table learned from {args.learned_table} other frames"
        )
        print(
            f"  {what} (occlusion stage): observations exactly right with the hand network alone "
            f"{exact_network}, with {what} {exact}; a hand marked where there is none: "
            f"network alone {hand_false_network}, with {what} {hand_false}"
        )
    med = statistics.median(latency)
    print(
        f"  latency per 1280x720 frame, end to end (median of {len(latency)}): "
        f"{med * 1000:.1f} ms = {1 / med:.2f} frames/s"
    )
    print(
        "  by stage (median ms): "
        + ", ".join(f"{k} {statistics.median(v) * 1000:.1f}" for k, v in stages.items())
    )
    print(
        "\n[detector alone] on rectified held-out 1280x720 tables (median of 20 runs each, "
        "the runtimes taken in turn so that a slow spell of the machine hits them all alike)"
    )
    runners: dict[tuple[str, int], Detector] = {}
    for backend in BACKENDS:
        for threads in (2, 1):
            try:
                runners[backend, threads] = Detector(args.model, backend, threads=threads)
            except ModelFileError as exc:  # report, do not hide, a backend that cannot load the export
                print(f"  {backend}: cannot run the export: {exc}")
                break
            runners[backend, threads].detect(canon_images[0])
    times: dict[tuple[str, int], list[float]] = defaultdict(list)
    for i in range(20):
        for key, runner in runners.items():
            if key[0] == "opencv":  # its thread count is per process, not per network
                cv2.setNumThreads(key[1])
            t0 = time.perf_counter()
            runner.detect(canon_images[i % len(canon_images)])
            times[key].append(time.perf_counter() - t0)
    for (backend, threads), ts in times.items():
        print(f"  {backend:12s} {threads} thread(s): {statistics.median(ts) * 1000:.1f} ms")
    print(f"  (load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print("\ntargets:")
    ident_f, ident_b = ident_table["card"].rate, ident_table["card_band"].rate
    for name, value in (
        ("marble colour", color_stage.rate),
        ("identification, full faces", ident_f),
        ("identification, top bands", ident_b),
        ("observations exactly right", exact.rate),
        ("frames/s end to end (1280x720)", 1 / med),
    ):
        goal = TARGETS[name]
        print(f"  {name:32s} {value:8.4f}  target >= {goal}  {'met' if value >= goal else 'NOT met'}")


if __name__ == "__main__":
    raise SystemExit(main())
