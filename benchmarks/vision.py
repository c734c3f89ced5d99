"""Vision benchmark on a held-out synthetic set (seeds and settings never used in training).

Prints mAP50 per class, marble colour accuracy, card identification top-1 (full faces and top
bands, on detected boxes), the share of frames whose whole observation is exactly right, and the
median end-to-end latency per 1280×720 frame on this CPU (plus the detector alone with
onnxruntime and with OpenCV's DNN module, which decided the export backend).

    .venv/bin/python benchmarks/vision.py [--frames 120] [--model models/detector.onnx]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2
import numpy as np

import vision  # noqa: F401  (caps BLAS threads before numpy loads)
from vision.dataset import HELDOUT_SEED_BASE
from vision.detect import DEFAULT_MODEL, Detection, Detector
from vision.observe import Observer, rotation_at, strip_confidence
from vision.progress import Progress
from vision.synth import (
    CANON_PX_PER_MM,
    CANON_SIZE,
    CLASSES,
    RenderSettings,
    canonical_from_image,
    random_layout,
    render_table,
)

#: Held-out settings: wider tilt and yaw and more card rotation than the training distribution.
HELDOUT = RenderSettings(
    height_mm=(650.0, 1150.0), max_tilt_deg=28.0, max_yaw_deg=6.0, hand_prob=0.25, jitter_deg=3.0
)


def iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Intersection over union of two (x1, y1, x2, y2) boxes."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter + 1e-9)


def average_precision(scored: list[tuple[float, bool]], n_truth: int) -> float:
    """All-point interpolated AP from (score, is-true-positive) pairs."""
    if n_truth == 0:
        return float("nan")
    scored.sort(key=lambda s: -s[0])
    tp = np.cumsum([t for _, t in scored], dtype=float)
    fp = np.cumsum([not t for _, t in scored], dtype=float)
    recall = np.concatenate([[0.0], tp / n_truth, [1.0]])
    precision = np.concatenate([[1.0], tp / np.maximum(tp + fp, 1e-9), [0.0]])
    precision = np.maximum.accumulate(precision[::-1])[::-1]
    return float(np.sum((recall[1:] - recall[:-1]) * precision[1:]))


def match(
    dets: list[Detection], truth: list[tuple[str, tuple[float, ...], object]], same_class: bool
) -> list[tuple[Detection, int | None]]:
    """Greedy IoU >= 0.5 matching by descending score; returns each detection with its truth index."""
    used: set[int] = set()
    out = []
    for d in sorted(dets, key=lambda d: -d.confidence):
        best, best_iou = None, 0.5
        for i, (cls, box, _) in enumerate(truth):
            if i in used or (same_class and cls != d.cls):
                continue
            v = iou(d.box, box)
            if v >= best_iou:
                best, best_iou = i, v
        if best is not None:
            used.add(best)
        out.append((d, best))
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    args = ap.parse_args(argv)
    observer = Observer(args.model)
    det = observer.detector
    scored: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    n_truth: dict[str, int] = defaultdict(int)
    marble_ok = marble_n = marble_found = 0
    ident = {"card": [0, 0], "card_band": [0, 0]}
    exact = 0
    latency: list[float] = []
    prog = Progress("benchmark: frames", args.frames, every=10)
    for i in range(args.frames):
        seed = HELDOUT_SEED_BASE + i
        size = (1280, 720) if i % 2 == 0 else (1920, 1080)
        layout = random_layout(np.random.default_rng(seed))
        scene = render_table(layout, seed, RenderSettings(**{**_fields(HELDOUT), "size": size}))
        seats = tuple(p.seat for p in layout.players)
        t0 = time.perf_counter()
        obs = observer.observe(scene.image, t=0.0, seats=seats)
        dt = time.perf_counter() - t0
        if size == (1280, 720):
            latency.append(dt)
        exact += strip_confidence(obs) == strip_confidence(scene.truth)
        h = observer.calibrator.last.homography if observer.calibrator.last is not None else scene.homography
        canon = cv2.warpPerspective(scene.image, canonical_from_image(h), CANON_SIZE)
        dets = det.detect(canon, conf=0.01)
        truth = [(o.cls, tuple(v * CANON_PX_PER_MM for v in o.box_mm), o) for o in scene.objects if o.visible]
        for cls, _, _ in truth:
            n_truth[cls] += 1
        for d, t in match(dets, truth, same_class=True):
            scored[d.cls].append((d.confidence, t is not None))
        confident = [d for d in dets if d.confidence >= observer.conf]
        for d, t in match(confident, truth, same_class=False):
            if t is None:
                continue
            o = truth[t][2]
            if o.cls.startswith("marble_") and d.cls.startswith("marble_"):
                marble_found += 1
                marble_ok += d.cls == o.cls
            if o.cls in ident and d.cls in ident:
                c = ((d.box[0] + d.box[2]) / 2 / CANON_PX_PER_MM, (d.box[1] + d.box[3]) / 2 / CANON_PX_PER_MM)
                rot = rotation_at(observer.zones, *c)
                fn = (
                    observer.identifier.identify_card
                    if d.cls == "card"
                    else observer.identifier.identify_band
                )
                ident[o.cls][0] += fn(scene.image, h, c, rot).card == o.card
                ident[o.cls][1] += 1
        marble_n += sum(1 for c, _, _ in truth if c.startswith("marble_"))
        prog.step()
    print(
        f"held-out set: {args.frames} frames "
        f"(seeds {HELDOUT_SEED_BASE}..{HELDOUT_SEED_BASE + args.frames - 1}), "
        f"half 1280x720, half 1920x1080, hands in ~25%"
    )
    print("mAP50 per class:")
    aps = []
    for cls in CLASSES:
        a = average_precision(scored[cls], n_truth[cls])
        aps.append(a)
        print(f"  {cls:14s} {a:.3f}  ({n_truth[cls]} objects)")
    print(f"  {'mean':14s} {np.nanmean(aps):.3f}")
    print(
        f"marble colour accuracy: {marble_ok / max(marble_found, 1):.4f} "
        f"({marble_ok}/{marble_found} detected marbles;"
        f" recall {marble_found / max(marble_n, 1):.4f} of {marble_n})"
    )
    for cls, name in (("card", "full faces"), ("card_band", "top bands")):
        ok, n = ident[cls]
        print(f"identification top-1, {name}: {ok / max(n, 1):.4f} ({ok}/{n} detected cards)")
    print(f"observations exactly right: {exact / args.frames:.4f} ({exact}/{args.frames})")
    med = statistics.median(latency)
    print(
        f"latency per 1280x720 frame, end to end (median of {len(latency)}): {med * 1000:.1f} ms "
        f"= {1 / med:.1f} frames/s"
    )
    blank = np.zeros((CANON_SIZE[1], CANON_SIZE[0], 3), np.uint8)
    cv2.randu(blank, 0, 255)
    for backend in ("onnxruntime", "opencv"):
        d = Detector(args.model, backend)
        d.detect(blank)
        ts = []
        for _ in range(15):
            t0 = time.perf_counter()
            d.detect(blank)
            ts.append(time.perf_counter() - t0)
        print(f"detector alone, {backend}: {statistics.median(ts) * 1000:.1f} ms median")
    return 0


def _fields(s: RenderSettings) -> dict[str, object]:
    return {k: getattr(s, k) for k in s.__slots__}  # type: ignore[attr-defined]


if __name__ == "__main__":
    raise SystemExit(main())
