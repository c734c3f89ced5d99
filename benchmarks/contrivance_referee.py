"""Contrivance referee benchmark: the Workbench tracker on many recorded games.

Makes the recorded game (``referee.simulation.workbench``: four Builders, three rules broken on
purpose) from each seed in a range (a seed whose injections find no turn is skipped and
counted), films each with the ground-truth camera under the default noise (squares not seen,
low-confidence readings, one-frame misreads) from several noise seeds, and referees each film
with a fresh tracker. A film is *exact* when the final totals equal the ground truth, every
injected break is flagged on its turn with its code, and there is no other warning. Prints the
exact share, the breaks flagged, the other warnings by code, and the tracker's time per frame
and per end-of-turn signal (median and p99, this process's wall clock).

    .venv/bin/python benchmarks/contrivance_referee.py [--seeds 19:45] [--films 2] [--noise 1.0]

``--noise K`` multiplies every probability of the default noise by K. A break flagged on a
square read with low confidence is reported as *uncertain* (a person confirms), not as a
violation: the flagged count says how many were each.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.app.percentiles import p99
from referee.observation import WorkbenchObservation
from referee.simulation.workbench import (
    Noise,
    RecordingError,
    RecordingSpec,
    inputs,
    observe_truth,
    play_recording,
)
from referee.tracker.workbench import WorkbenchTracker


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="19:45", help="recording seeds, START:STOP (default 19:45)")
    ap.add_argument("--films", type=int, default=2, help="noise seeds per recording (default 2)")
    ap.add_argument("--noise", type=float, default=1.0, help="scale of the default camera noise (default 1)")
    args = ap.parse_args(argv)
    base = Noise()
    noise = Noise(
        *(min(1.0, args.noise * getattr(base, f)) for f in ("missing", "faint", "unsure", "misread"))
    )
    if args.noise < 0:
        ap.error("--noise: must be >= 0")
    try:
        lo, hi = (int(x) for x in args.seeds.split(":"))
    except ValueError:
        ap.error(f"--seeds: expected START:STOP, got {args.seeds!r}")
    exact = films = skipped = 0
    flagged = injected = 0
    kinds: Counter[str] = Counter()
    others: Counter[str] = Counter()
    per_frame: list[float] = []
    per_signal: list[float] = []
    for seed in range(lo, hi):
        try:
            recording = play_recording(RecordingSpec(seed=seed))
        except RecordingError:
            skipped += 1
            continue
        want = sorted((i["turn"], i["code"]) for i in recording.injections())
        for film in range(args.films):
            tracker = WorkbenchTracker(recording.names, recording.builders)
            for item in inputs(recording, observe_truth(noise, seed=1000 * film + seed)):
                t0 = time.perf_counter()
                if isinstance(item, WorkbenchObservation):
                    tracker.observe(item)
                    per_frame.append(time.perf_counter() - t0)
                elif item.end_of_turn is not None:
                    tracker.end_turn(item.end_of_turn)
                    per_signal.append(time.perf_counter() - t0)
                elif tracker.state.phase == "scoring" and item.reveal is not None:
                    tracker.reveal(item.reveal)
            got = sorted((w.turn, w.code) for w in tracker.warnings)
            kinds.update(w.kind for w in tracker.warnings if (w.turn, w.code) in want)
            totals = [(s["seat"], s["total"]) for s in tracker.scores()]
            truth = [(s["seat"], s["total"]) for s in recording.scores()]
            films += 1
            flagged += sum(1 for w in want if w in got)
            injected += len(want)
            others.update(str(code) for _, code in got if (_, code) not in want)
            exact += got == want and totals == truth and tracker.state.game_over
        print(f"seed {seed}: {films} films so far, {exact} exact", file=sys.stderr)
    print(
        f"recordings: seeds {lo}..{hi - 1}, {hi - lo - skipped} played "
        f"({skipped} skipped: no turn for an injection)"
    )
    print(f"films: {films} ({args.films} noise seeds each, noise {noise})")
    print(f"exact films: {exact}/{films} ({100 * exact / max(1, films):.1f}%)")
    print(
        f"injected breaks flagged on their turn with their code: {flagged}/{injected} "
        f"({kinds['violation']} as violations, {kinds['uncertain']} as uncertain)"
    )
    print(f"other warnings: {sum(others.values())} {dict(others) if others else ''}")
    print(
        f"tracker time per frame: median {1e3 * statistics.median(per_frame):.2f} ms, "
        f"p99 {1e3 * p99(per_frame):.2f} ms; "
        f"per end-of-turn signal: median {1e3 * statistics.median(per_signal):.2f} ms, "
        f"p99 {1e3 * p99(per_signal):.2f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
