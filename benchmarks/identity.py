"""Do the observations stay the same? Saves, or checks against a saved file, the observations of
a fixed set of held-out frames (issue 14's speed work must not change any result).

Renders the first ``--frames`` 1280x720 tables of each condition (the seeds ``benchmarks/fps.py``
times; ``deck`` with its deck enrolled from phone-like photos, as ``benchmarks/vision.py`` does),
observes each with the committed models as fps.py does (a first observation calibrates, the
second is kept), then once more with the referee's memory of the table
(``evaluate.layout_memory``), and writes one ``Observation.dumps`` line for each. ``--check`` compares a
run with a saved file: byte-identical lines, or else every field equal except confidences, which
may differ by at most ``--tolerance``; it prints which and exits 1 on any other difference.

    .venv/bin/python benchmarks/identity.py --save before.jsonl [--frames 10] [--conditions own,style]
    .venv/bin/python benchmarks/identity.py --check before.jsonl [--conditions deck]

``--conditions`` limits a check to those of the saved conditions (default: all of them).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import vision  # noqa: F401  (caps BLAS at one thread: see vision/__init__.py)
from benchmarks.vision import CONDITIONS, enrolment
from vision.errors import CalibrationError
from vision.observe import Observer
from vision.progress import Progress
from vision.training.evaluate import layout_memory, scene_for_seed

KNOWN = ("own", "style", "deck")


def observations(conditions: list[str], frames: int) -> list[str]:
    """``condition seed[ memory]<TAB>Observation.dumps()`` of each frame, without and with the
    referee's memory (``calibration failed`` when the frame cannot be calibrated)."""
    out = []
    prog = Progress("identity: frames", frames * len(conditions))
    for name in conditions:
        settings, faces, first, _ = CONDITIONS[name]
        observer = Observer(reaches=True, enrol_dir=enrolment(name))
        for i in range(frames):
            seed = first + 2 * i  # even seeds: 1280x720
            scene = scene_for_seed(seed, settings, faces() if faces else None)
            seats = tuple(p.seat for p in scene.layout.players)
            observer.calibrator.reset()
            for memory in (None, layout_memory(scene.layout)):
                observer.know(memory)
                try:
                    observer.observe(scene.image, t=0.0, frame_no=0, seats=seats)
                    text = observer.observe(scene.image, t=0.0, frame_no=0, seats=seats).dumps()
                except CalibrationError:
                    text = "calibration failed"
                out.append(f"{name} {seed}{'' if memory is None else ' memory'}\t{text}")
            prog.step()
    return out


def saved_conditions(saved: list[str], conditions: list[str] | None) -> tuple[list[str], list[str]]:
    """The conditions a check observes and the saved lines it compares: those of ``conditions``
    (default: every condition in the file, in its order). ``ValueError`` names a condition asked
    for that the file does not hold."""
    heads = list(dict.fromkeys(line.split(" ", 1)[0] for line in saved))
    if conditions is None:
        return heads, saved
    missing = [c for c in conditions if c not in heads]
    if missing:
        raise ValueError(f"condition {missing[0]!r} is not in the saved file (it holds {', '.join(heads)})")
    chosen = [c for c in heads if c in conditions]
    return chosen, [line for line in saved if line.split(" ", 1)[0] in chosen]


def same_but_confidence(a: Any, b: Any, tolerance: float) -> bool:
    """Whether two parsed observations are equal in every field, confidences within ``tolerance``."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return False
        return all(
            abs(a[k] - b[k]) <= tolerance
            if k == "confidence" and isinstance(a[k], float | int) and isinstance(b[k], float | int)
            else same_but_confidence(a[k], b[k], tolerance)
            for k in a
        )
    if isinstance(a, list) and isinstance(b, list):
        pairs = zip(a, b, strict=True) if len(a) == len(b) else None
        return pairs is not None and all(same_but_confidence(x, y, tolerance) for x, y in pairs)
    return bool(a == b)


def main(argv: list[str] | None = None) -> int:
    """Save or check the observations."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--save", type=Path, help="write the observations here")
    what.add_argument("--check", type=Path, help="compare with the observations saved here")
    ap.add_argument("--frames", type=int, default=10, help="frames per condition")
    ap.add_argument(
        "--conditions",
        help="comma-separated: own, style, deck (--save: default own,style; --check: default all saved)",
    )
    ap.add_argument("--tolerance", type=float, default=1e-6, help="for confidences (--check)")
    args = ap.parse_args(argv)
    conditions = args.conditions.split(",") if args.conditions else None
    for name in conditions or ():
        if name not in KNOWN:
            print(f"error: unknown condition {name!r} (choose from {', '.join(KNOWN)})", file=sys.stderr)
            return 2
    if args.frames < 1:
        print("error: --frames must be at least 1", file=sys.stderr)
        return 2
    if args.check is not None:
        if not args.check.is_file():
            print(f"error: no saved observations at {args.check}", file=sys.stderr)
            return 2
        try:
            heads, saved = saved_conditions(args.check.read_text().splitlines(), conditions)
        except ValueError as e:
            print(f"error: {args.check}: {e}", file=sys.stderr)
            return 2
        lines = observations(heads, len(saved) // max(1, 2 * len(heads)))
        if len(lines) != len(saved):
            print(f"error: {len(saved)} saved lines, {len(lines)} observed", file=sys.stderr)
            return 1
        identical = sum(a == b for a, b in zip(lines, saved, strict=True))
        close = identical
        for a, b in zip(lines, saved, strict=True):
            if a == b:
                continue
            (ka, ta), (kb, tb) = a.split("\t", 1), b.split("\t", 1)
            both = ka == kb and ta.startswith("{") and tb.startswith("{")
            if both and same_but_confidence(json.loads(ta), json.loads(tb), args.tolerance):
                close += 1
                continue
            print(f"DIFFERENT {ka}:\n  now   {ta}\n  saved {tb}")
        print(
            f"identity: {identical}/{len(saved)} observations byte-identical, {close}/{len(saved)} "
            f"identical but for confidences within {args.tolerance:g}"
        )
        return 0 if close == len(saved) else 1
    lines = observations(conditions or ["own", "style"], args.frames)
    args.save.write_text("\n".join(lines) + "\n")
    print(f"identity: {len(lines)} observations saved to {args.save}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
