"""The assembly stage alone (zones, identification, colour map, marble colour, VP tokens) on
distinct frames, each assembled once: no frame is seen twice, as in a stream whose still-frame
gate passes each settled table once (``benchmarks/fps.py`` observes each table several times).

Renders the first ``--frames`` 1280x720 tables of the own and style conditions, finds their
boxes with the committed detector and hand network, warms up on a table outside the set (OpenCV's
one-time set-up), then times ``Assembler.assemble`` once per frame and prints the medians.

    .venv/bin/python benchmarks/assembly.py [--frames 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import vision  # noqa: F401  (caps BLAS at one thread: see vision/__init__.py)
from benchmarks.vision import CONDITIONS
from vision.errors import CalibrationError
from vision.observe import Observer
from vision.training.evaluate import scene_for_seed


def main(argv: list[str] | None = None) -> int:
    """Time the assembly of distinct frames and print the medians."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=10, help="distinct tables per condition")
    args = ap.parse_args(argv)
    if args.frames < 1:
        print("error: --frames must be at least 1", file=sys.stderr)
        return 2
    observer = Observer(reaches=True)
    frames = []
    for name in ("own", "style"):
        settings, _, first, _ = CONDITIONS[name]
        for i in range(args.frames):
            scene = scene_for_seed(first + 2 * i, settings)  # even seeds: 1280x720
            observer.calibrator.reset()
            try:
                h, dets, _ = observer.detect(scene.image)
            except CalibrationError:
                continue
            frames.append((scene.image, h, dets, tuple(p.seat for p in scene.layout.players)))
    if not frames:
        print("error: no frame could be calibrated", file=sys.stderr)
        return 2
    own, first = CONDITIONS["own"][0], CONDITIONS["own"][2]
    warm = scene_for_seed(first + 2 * args.frames + 100, own)  # outside the set
    observer.calibrator.reset()
    h, dets, _ = observer.detect(warm.image)
    observer.assembler.assemble(warm.image, h, dets, tuple(p.seat for p in warm.layout.players))
    load0 = os.getloadavg()[0]
    walls, cpus = [], []
    for image, h, dets, seats in frames:
        c0, t0 = time.process_time(), time.perf_counter()
        observer.assembler.assemble(image, h, dets, seats)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    print(
        f"assembly of {len(frames)} distinct frames, each once (load average {load0:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end): median {statistics.median(walls) * 1000:.1f} ms wall, "
        f"{statistics.median(cpus) * 1000:.1f} ms CPU"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
