"""Frames per second of the whole vision pipeline on this CPU (issue 14: at least 5 at 1280x720).

Renders held-out tables of a condition once, then observes each frame ``--repeats`` times with
the committed models (calibration, rectification, detector, hand network, occlusion stage against
the table learned from the frames observed, as the live referee learns it, or the empty table with
``--empty-table``, zones, identification with the color map, marble color, assembly) and prints
the median wall time per frame, per stage ("identify": the card identification's share of
"assemble"), and the CPU time the process used per frame; and the
same for a frame the still-frame gate drops that the live loop reads for the players' arms alone
(``Observer.arms``: the hand network on a cheap view, issue 13). ``deck`` and ``lookalike`` enrol
their deck from its phone photos first, as a real deck is (the learned band embedding on).

Each table is timed twice per repeat: as a new table (no card kept from a frame before: the
worst case, and what ``benchmarks/vision.py`` measures), and after another frame of the same
table (another arm or none, the sensor's noise afresh), where the cards that have not moved keep
their scores (vision/unmoved.py): the live loop's common case, one move between still frames.

On a machine shared with other work the wall time measures the machine's load as much as the
pipeline; the CPU time (all of the process's threads together) does not, and its inverse is what
one otherwise idle core would sustain, a lower bound for two cores.

    .venv/bin/python benchmarks/fps.py [--frames 10] [--repeats 3] [--size 1280x720] [--condition own]
        [--no-heaps | --whole-frame-pass] [--runtimes openvino,opencv]

``--runtimes openvino,opencv`` times the small networks (the hand network, the card embedding) on
both runtimes in one run: an observer each, taking each observation in turn.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

import vision  # noqa: F401  (caps BLAS at one thread: see vision/__init__.py)
from benchmarks.vision import CONDITIONS, enrolment
from referee.app.live import ARMS_EVERY
from vision.embedding import CardEmbedder
from vision.errors import CalibrationError
from vision.hands import HandSegmenter
from vision.networks import BACKENDS
from vision.observe import Observer
from vision.progress import Progress
from vision.training.evaluate import scene_for_seed


def main(argv: list[str] | None = None) -> int:
    """Time the pipeline and print frames per second."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=10, help="distinct tables")
    ap.add_argument("--repeats", type=int, default=3, help="observations of each table")
    ap.add_argument("--size", choices=["1280x720", "1920x1080"], default="1280x720")
    ap.add_argument("--condition", choices=list(CONDITIONS), default="own")
    ap.add_argument("--empty-table", action="store_true", help="with the occlusion stage")
    ap.add_argument(
        "--no-heaps",
        action="store_true",
        help="without the heap stage (vision/heaps.py), to time what it costs",
    )
    ap.add_argument(
        "--whole-frame-pass",
        action="store_true",
        help="the heap stage's second detector pass on the whole frame, not on ring crops (before round 7)",
    )
    ap.add_argument(
        "--runtimes",
        default=BACKENDS[0],
        help=f"the small networks' runtimes (hand network, card embedding), comma-separated, of "
        f"{','.join(BACKENDS)}: one observer each, timed in turn on the same frames",
    )
    args = ap.parse_args(argv)
    if args.frames < 1 or args.repeats < 1:
        print("error: --frames and --repeats must be at least 1", file=sys.stderr)
        return 2
    runtimes = args.runtimes.split(",")
    if not all(r in BACKENDS for r in runtimes) or len(set(runtimes)) != len(runtimes):
        print(f"error: --runtimes must name some of {', '.join(BACKENDS)}, each once", file=sys.stderr)
        return 2
    settings, faces, first, _ = CONDITIONS[args.condition]
    # ``deck`` (and ``lookalike``) is observed as a real deck is: enrolled from its phone photos
    # (Observer(enrol_dir)), which turns the learned band embedding on (vision/observe.py).
    enrol_dir = enrolment(args.condition)
    even = args.size == "1280x720"  # the held-out sets render even seeds at 1280x720
    seeds = [first + 2 * i + (0 if even else 1) for i in range(args.frames)]
    # one other frame of each table (another arm or none, the sensor's noise afresh): the frame
    # before, for the cards that have not moved to keep their scores (vision/unmoved.py)
    settings = replace(settings, empty_table=args.empty_table, other_frames=1)
    scenes = [scene_for_seed(s, settings, faces() if faces else None) for s in seeds]
    runs = {
        runtime: Run(
            with_runtime(
                Observer(
                    enrol_dir=enrol_dir,
                    reaches=True,
                    learn_table=True,  # as run, serve and the demo: the occlusion stage on
                    heaps=not args.no_heaps,
                    ring_pass=not args.whole_frame_pass,
                ),
                runtime,
            )
        )
        for runtime in runtimes
    }
    load0 = os.getloadavg()[0]
    prog = Progress("fps: frames", args.frames * args.repeats)
    for scene in scenes:
        seats = tuple(p.seat for p in scene.layout.players)
        calibrated = True
        for run in runs.values():
            observer = run.observer
            observer.calibrator.reset()
            observer.background = None
            observer.learn_table()  # a new table: learned afresh from its frames
            if scene.empty_image is not None:
                observer.learn_empty_table(scene.empty_image)
            try:
                observer.observe(scene.image, t=0.0, seats=seats)  # warm: calibration kept from here
            except CalibrationError:
                calibrated = False
        if not calibrated:
            continue
        for _ in range(args.repeats):
            for run in runs.values():  # the runtimes in turn: a slow spell of the machine hits all
                run.time(scene.image, seats)
                run.time_after(scene.other_images[0], scene.image, seats)
            prog.step()
    if not next(iter(runs.values())).fresh.walls:
        print("error: no frame could be calibrated", file=sys.stderr)
        return 2
    for runtime, run in runs.items():
        run.report(args, runtime, len(scenes), load0)
    return 0


def with_runtime(observer: Observer, runtime: str) -> Observer:
    """``observer`` with its small networks (the hand network, the card embedding) on ``runtime``."""
    if observer.hands is not None and observer.hands.net.backend != runtime:
        observer.hands = HandSegmenter(observer.hands.path, runtime)
    ident = observer.assembler.identifier
    if ident.embedding is not None and ident.embedding.backend != runtime:
        ident.embedding = CardEmbedder(ident.embedding.path, ident.embedding.kind, runtime)
        ident.band_vectors = ident.reference_vectors(ident.faces)
    return observer


class Timings:
    """Timed observations: wall and CPU time of each, and each stage's wall time."""

    def __init__(self) -> None:
        self.walls: list[float] = []
        self.cpus: list[float] = []
        self.stages: dict[str, list[float]] = defaultdict(list)

    def observe(self, observer: Observer, image: np.ndarray, seats: tuple[int, ...]) -> None:
        """Observe ``image`` once, timed."""
        c0, t0 = time.process_time(), time.perf_counter()
        observer.observe(image, t=0.0, seats=seats)
        self.walls.append(time.perf_counter() - t0)
        self.cpus.append(time.process_time() - c0)
        for k, v in observer.timings.items():
            self.stages[k].append(v)

    def by_stage(self) -> str:
        """The stages' median wall times."""
        return "by stage (wall, median ms): " + ", ".join(
            f"{k} {statistics.median(v) * 1000:.1f}" for k, v in self.stages.items()
        )


class Run:
    """One observer's timings: per observation wall and CPU time, per stage, the arms alone."""

    def __init__(self, observer: Observer) -> None:
        self.observer = observer
        self.fresh = Timings()  # a new table every frame
        self.arm_walls: list[float] = []  # Observer.arms: a frame the gate drops, for the arms alone
        self.arm_cpus: list[float] = []
        self.second_pass_heaps: list[float] = []  # the heap stage's wall time with a second pass
        #: A table seen in the frame before (:meth:`time_after`), and its cards recalled / all.
        self.after = Timings()
        self.recalled = [0, 0]

    def time(self, image: np.ndarray, seats: tuple[int, ...]) -> None:
        """Observe ``image`` once as a new table (no card kept from a frame before) and read it
        for the arms once, timed."""
        observer = self.observer
        if observer.assembler.unmoved is not None:
            observer.assembler.unmoved.forget()
        self.fresh.observe(observer, image, seats)
        if observer.heaps and observer.heaps.last["second_pass"]:
            self.second_pass_heaps.append(observer.timings["heaps"])
        c0, t0 = time.process_time(), time.perf_counter()
        observer.arms(image, seats)
        self.arm_walls.append(time.perf_counter() - t0)
        self.arm_cpus.append(time.process_time() - c0)

    def time_after(self, before: np.ndarray, image: np.ndarray, seats: tuple[int, ...]) -> None:
        """Observe ``before`` (the same table, another frame), then ``image``, timed: the live
        loop's common case, where the cards that have not moved keep their scores."""
        observer = self.observer
        observer.observe(before, t=0.0, seats=seats)
        self.after.observe(observer, image, seats)
        unmoved = observer.assembler.unmoved
        self.recalled[0] += unmoved.last_recalled if unmoved is not None else 0
        self.recalled[1] += len(observer.assembler.last_cards)

    def report(self, args: argparse.Namespace, runtime: str, tables: int, load0: float) -> None:
        """Print the medians."""
        wall, cpu = statistics.median(self.fresh.walls), statistics.median(self.fresh.cpus)
        second_passes = len(self.second_pass_heaps)
        where = "ring crops" if self.observer.ring_detector is not None else "the whole frame"
        heaps = (
            ", heap stage off"
            if args.no_heaps
            else f"; heap stage: a second detector pass (on {where}) in {second_passes}"
        )
        print(
            f"\nfps ({args.condition}, {args.size}, {len(self.fresh.walls)} observations of {tables} tables"
            f", occlusion stage against {'the empty table' if args.empty_table else 'the learned table'}"
            f"{heaps}; small networks on {runtime}; "
            f"{os.cpu_count()} cores, load average "
            f"{load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end)"
        )
        print(
            f"  a new table every frame: wall time per frame, median: {wall * 1000:.1f} ms = "
            f"{1 / wall:.2f} frames/s"
        )
        print(
            f"  CPU time per frame (all threads), median: {cpu * 1000:.1f} ms = "
            f"{1 / cpu:.2f} frames/s on one idle core"
        )
        print(f"  {self.fresh.by_stage()}")
        if self.second_pass_heaps:
            print(
                f"  the heap stage on the {second_passes} frames with a second pass (on {where}), "
                f"median: {statistics.median(self.second_pass_heaps) * 1000:.1f} ms wall"
            )
        arm_wall, arm_cpu = statistics.median(self.arm_walls), statistics.median(self.arm_cpus)
        print(
            f"  a frame the gate drops, read for the players' arms alone (Observer.arms), median: "
            f"{arm_wall * 1000:.1f} ms wall, {arm_cpu * 1000:.1f} ms CPU; the live loop reads one such "
            f"frame in {ARMS_EVERY}: {arm_cpu * 1000 / ARMS_EVERY:.1f} ms CPU per moving frame"
        )
        after, after_cpu = statistics.median(self.after.walls), statistics.median(self.after.cpus)
        print(
            f"  a table seen in the frame before (another arm or none; the cards that have not moved"
            f" keep their scores: {self.recalled[0]}/{self.recalled[1]}): wall time per frame, median:"
            f" {after * 1000:.1f} ms = {1 / after:.2f} frames/s; CPU {after_cpu * 1000:.1f} ms;"
            f" {self.after.by_stage()}"
        )
        print(
            f"  target >= 5 frames/s, a new table every frame: {'met' if 1 / wall >= 5 else 'NOT met'} by"
            f" wall time, {'met' if 1 / cpu >= 5 else 'NOT met'} by CPU time; a table seen before:"
            f" {'met' if 1 / after >= 5 else 'NOT met'} by wall time"
        )


if __name__ == "__main__":
    raise SystemExit(main())
