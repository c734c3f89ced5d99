"""Measuring the pipeline stage by stage (chesscog style): an oracle detector, matching, AP, exactness.

Each stage is measured on its own by feeding it perfect input from the rendered ground truth:
:func:`oracle_detections` stands in for the detector with the scene's true boxes, so the zones,
identification and assembly stages can be checked without any trained model; the benchmark
then measures the detector and the whole pipeline on the same held-out scenes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from referee.observation import Observation
from vision.detect import Detection
from vision.geometry import CANON_PX_PER_MM
from vision.identify import LEVELS, CardMemory
from vision.training.synth import RenderedScene, RenderSettings, TableLayout, random_layout, render_table

#: Held-out rendering settings: wider tilt and yaw, more card rotation, a different hand rate and
#: camera heights than the training distribution (:class:`~vision.training.synth.RenderSettings` defaults).
HELDOUT = RenderSettings(
    height_mm=(650.0, 1150.0), max_tilt_deg=28.0, max_yaw_deg=6.0, hand_prob=0.25, jitter_deg=3.0
)


def heldout_scenes(
    first_seed: int,
    count: int,
    settings: RenderSettings = HELDOUT,
    faces: tuple[np.ndarray, ...] | None = None,
) -> Iterator[tuple[int, RenderedScene]]:
    """Held-out scenes: 1280×720 for even seeds, 1920×1080 for odd ones (deterministic per seed)."""
    for seed in range(first_seed, first_seed + count):
        yield seed, scene_for_seed(seed, settings, faces)


def scene_for_seed(
    seed: int, settings: RenderSettings = HELDOUT, faces: tuple[np.ndarray, ...] | None = None
) -> RenderedScene:
    """A random table rendered from one seed: 1280×720 for even seeds, 1920×1080 for odd ones
    (``faces``: a deck of other art; default the faces in use)."""
    size = (1280, 720) if seed % 2 == 0 else (1920, 1080)
    layout = random_layout(np.random.default_rng(seed))
    return render_table(layout, seed, replace(settings, size=size), faces=faces)


def oracle_detections(scene: RenderedScene) -> list[Detection]:
    """The detector a perfect model would be: every visible labelled object, confidence 1."""
    return [
        Detection(o.cls, 1.0, tuple(v * CANON_PX_PER_MM for v in o.box_mm))  # type: ignore[arg-type]
        for o in scene.objects
        if o.visible
    ]


_NOT_CONTENT = ("confidence", "time", "source", "frame", "extra")


_NOT_CONTENT = ("confidence", "time", "source", "frame", "extra")


def layout_memory(layout: TableLayout) -> CardMemory:
    """The referee's memory of a table it has followed up to this frame: each seat's cards, the
    Display's, and every other built card still unseen (what the live run hands vision once the
    tracker has accepted the table as it is)."""
    gizmos = {p.seat: frozenset(c for col in p.columns for c in col) for p in layout.players}
    archive = {p.seat: frozenset(p.archive) for p in layout.players}
    display = {(lv, sl): c for lv, sl, c in layout.display if c is not None}
    placed = set(display.values()).union(*gizmos.values(), *archive.values())
    unseen = frozenset(c for c in range(len(LEVELS)) if LEVELS[c] > 0 and c not in placed)
    return CardMemory(gizmos, archive, display, unseen)


def lagging_memory(layout: TableLayout, rng: np.random.Generator) -> CardMemory:
    """The memory one move behind the frame: a seat's last-placed card (the whole one at the foot
    of its longest column) is still where the referee last saw it, in the Display (in the slot
    of a card of its level, which came from the deck since), or unseen when no such slot holds a
    card. What the frame right after a Build shows, before the tracker accepted it."""
    memory = layout_memory(layout)
    seats = [p for p in layout.players if any(c >= 4 for col in p.columns for c in col)]
    if not seats:
        return memory
    p = seats[int(rng.integers(len(seats)))]
    card = max((col for col in p.columns if col), key=len)[-1]
    gizmos = {**memory.gizmos, p.seat: frozenset(memory.gizmos[p.seat]) - {card}}
    display, unseen = dict(memory.display), set(memory.unseen)
    slots = [k for k, c in display.items() if k[0] == LEVELS[card]]
    if slots:
        k = slots[int(rng.integers(len(slots)))]
        unseen.add(display[k])  # the card the frame shows there came from the deck since
        display[k] = card
    else:
        unseen.add(card)
    return CardMemory(gizmos, memory.archive, display, frozenset(unseen))


def content(obs: Observation) -> dict[str, Any]:
    """What 'exactly right' compares: the observation without confidences, time, source or frame.

    Marble lists and card lists are compared as multisets and Display slots by (level, slot):
    the format gives their order no meaning (a gizmo's column follows from its type), so listing
    order is not a mistake.
    """
    j = obs.to_json()

    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if k not in _NOT_CONTENT}
        if isinstance(v, list):
            items = [clean(x) for x in v]
            if items and isinstance(items[0], dict) and set(items[0]) in ({"color"}, {"card"}):
                items.sort(key=lambda d: repr(sorted(d.items())))  # a multiset of marbles or cards
            elif items and isinstance(items[0], dict) and "slot" in items[0]:
                items.sort(key=lambda d: (d["level"], d["slot"]))  # Display slots by their place
            return items
        return v

    return clean(j)


def differences(got: Observation, truth: Observation) -> list[str]:
    """Human-readable differences between two observations' content (empty when exactly right)."""
    return _differences(content(got), content(truth))


_SEAT_ZONES = {"ring": "ring", "archive": "archive", "gizmos": "gizmos", "vp_tokens": "vp"}


def table_differences(got: Observation, scene: RenderedScene) -> list[str]:
    """Differences from the table itself, with the hand judged by what it hides, not its box.

    :func:`differences` holds the pipeline to the ground truth's convention: a zone the true
    hand's bounding box touches must be reported unseen. Here such a zone may also be reported
    with its true content, unless the hand actually hides an object in it (then only "unseen"
    is right). Everything reported must still be true, and every zone clear of the hand must
    be reported.
    """
    a, b = content(got), content(scene.truth)
    if scene.uncovered is None:
        return _differences(a, b)
    full = content(scene.uncovered)
    fd = {(s["level"], s["slot"]): s for s in full["display"]}
    shown = {(s["level"], s["slot"]) for s in b["display"]}
    for s in a["display"]:
        k = (s["level"], s["slot"])
        if k not in shown and f"display/{k[0]}/{k[1]}" not in scene.hidden and fd.get(k) == s:
            b["display"].append(s)
    if b["energy_row"] is None and "energy_row" not in scene.hidden and a["energy_row"] == full["energy_row"]:
        b["energy_row"] = full["energy_row"]
    fp = {p["seat"]: p for p in full["players"]}
    for p in b["players"]:
        mine: dict[str, Any] = next((x for x in a["players"] if x["seat"] == p["seat"]), {})
        for zone, key in _SEAT_ZONES.items():
            if (
                p.get(zone) is None
                and f"{p['seat']}/{key}" not in scene.hidden
                and mine.get(zone) == fp[p["seat"]].get(zone)
            ):
                p[zone] = fp[p["seat"]].get(zone)
    return _differences(a, b)


def _differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    out = []
    da = {(s["level"], s["slot"]): s["card"] for s in a["display"]}
    db = {(s["level"], s["slot"]): s["card"] for s in b["display"]}
    for k in sorted(set(da) | set(db)):
        if da.get(k, "unseen") != db.get(k, "unseen"):
            out.append(f"display {k[0]}/{k[1]}: got {da.get(k, 'unseen')}, truth {db.get(k, 'unseen')}")
    if a["energy_row"] != b["energy_row"]:
        out.append(f"energy_row: got {_short(a['energy_row'])}, truth {_short(b['energy_row'])}")
    pa = {p["seat"]: p for p in a["players"]}
    pb = {p["seat"]: p for p in b["players"]}
    for seat in sorted(set(pa) | set(pb)):
        x, y = pa.get(seat, {}), pb.get(seat, {})
        for zone in ("ring", "archive", "gizmos", "vp_tokens"):
            if x.get(zone) != y.get(zone):
                out.append(f"seat {seat} {zone}: got {_short(x.get(zone))}, truth {_short(y.get(zone))}")
    return out


def error_causes(got: Observation, truth: Observation) -> set[str]:
    """Why an observation is wrong, one word pair per zone kind and failure ("ring: missed",
    "display: misidentified", "vp_tokens: hidden or shown"): what the benchmark counts by frame
    so that the data a failure needs (issue 14: "measure which data matters") can be read off."""
    a, b = content(got), content(truth)
    out: set[str] = set()
    da = {(s["level"], s["slot"]): s["card"] for s in a["display"]}
    db = {(s["level"], s["slot"]): s["card"] for s in b["display"]}
    for k in set(da) | set(db):
        x, y = da.get(k, "unseen"), db.get(k, "unseen")
        if x == y:
            continue
        if "unseen" in (x, y):
            out.add("display: hidden or shown")
        else:
            out.add("display: " + ("missed" if x is None else "extra" if y is None else "misidentified"))
    zones = [("energy_row", a["energy_row"], b["energy_row"])]
    pa = {p["seat"]: p for p in a["players"]}
    pb = {p["seat"]: p for p in b["players"]}
    for seat in set(pa) | set(pb):
        for zone in ("ring", "archive", "gizmos", "vp_tokens"):
            zones.append((zone, pa.get(seat, {}).get(zone), pb.get(seat, {}).get(zone)))
    for zone, x, y in zones:
        if x == y:
            continue
        if x is None or y is None:
            out.add(f"{zone}: hidden or shown")
        elif zone == "vp_tokens":
            out.add(f"{zone}: " + ("too few points" if x["points"] < y["points"] else "too many points"))
        else:
            wrong = "colour" if zone in ("energy_row", "ring") else "misidentified"
            out.add(f"{zone}: " + ("missed" if len(x) < len(y) else "extra" if len(x) > len(y) else wrong))
    return out


def _short(v: Any) -> str:
    if isinstance(v, list):
        return "[" + " ".join(str(d.get("color", d.get("card"))) for d in v) + "]"
    if isinstance(v, dict):
        return str(v.get("points"))
    return str(v)


def iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Intersection over union of two (x1, y1, x2, y2) boxes."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter + 1e-9)


def match(
    dets: list[Detection], truth: list[tuple[str, tuple[float, ...]]], same_class: bool, min_iou: float = 0.5
) -> list[tuple[Detection, int | None]]:
    """Greedy IoU matching by descending score: each detection with its truth index (or None)."""
    used: set[int] = set()
    out = []
    for d in sorted(dets, key=lambda d: -d.confidence):
        best, best_iou = None, min_iou
        for i, (cls, box) in enumerate(truth):
            if i in used or (same_class and cls != d.cls):
                continue
            v = iou(d.box, box)
            if v >= best_iou:
                best, best_iou = i, v
        if best is not None:
            used.add(best)
        out.append((d, best))
    return out


def average_precision(scored: list[tuple[float, bool]], n_truth: int) -> float:
    """All-point interpolated AP from (score, is-true-positive) pairs; NaN without any truth."""
    if n_truth == 0:
        return float("nan")
    ranked = sorted(scored, key=lambda s: -s[0])
    tp = np.cumsum([t for _, t in ranked], dtype=float)
    fp = np.cumsum([not t for _, t in ranked], dtype=float)
    recall = np.concatenate([[0.0], tp / n_truth, [1.0]])
    precision = np.concatenate([[1.0], tp / np.maximum(tp + fp, 1e-9), [0.0]])
    precision = np.maximum.accumulate(precision[::-1])[::-1]
    return float(np.sum((recall[1:] - recall[:-1]) * precision[1:]))


@dataclass(slots=True)
class Tally:
    """A running ``ok / n`` count."""

    ok: int = 0
    n: int = 0

    def add(self, right: bool) -> None:
        """Count one case."""
        self.ok += bool(right)
        self.n += 1

    @property
    def rate(self) -> float:
        """The share right (0 when nothing was counted)."""
        return self.ok / self.n if self.n else 0.0

    def __str__(self) -> str:
        return f"{self.rate:.4f} ({self.ok}/{self.n})"
