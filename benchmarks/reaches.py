"""Reaching hands on the bundled recording: whose arm, over what, measured against the film.

The recording's film (``vision.training.recording.film_game``, deterministic) knows every
frame's hand: which seat's side its arm comes in from and where its fingertips are. Each frame
is rectified with the recording's camera, the hand network marks the hand
(:class:`vision.hands.HandSegmenter`) and :func:`vision.reaches.reaches_of` turns the mask into
reaching hands. Printed: of the frames with a hand, the share with a reach seen, with the right
seat (and with no seat told), with the right zone under the fingertips; of the frames without a
hand, the share with a reach reported anyway.

    .venv/bin/python benchmarks/reaches.py [--every 2] [--recording data/recording/game-14]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2
import numpy as np

import vision  # noqa: F401  (caps BLAS at one thread: see vision/__init__.py)
from vision.geometry import rectify
from vision.hands import HandSegmenter
from vision.progress import Progress
from vision.reaches import reaches_of, zone_at
from vision.training.recording import (
    Recording,
    RecordingSpec,
    camera_of,
    film_game,
    hand_start,
    play_game,
)
from vision.zones import Zones, default_zones


def true_seat(seed: int, h: np.ndarray, size: tuple[int, int], zones: Zones, seats: range) -> int:
    """The seat whose side a recording hand comes in from (as ``_Camera.hand_seed`` chose it)."""
    edge, start = hand_start(seed, size, zones)
    best: tuple[float, int] | None = None
    for seat in seats:
        sz = zones.seat(seat)
        p = h @ np.array([*sz.to_table(170.0, 100.0), 1.0])
        if edge == (1 if sz.rotation == 180 else 0):
            d = abs(start[0] - p[0] / p[2])
            best = min(best or (d, seat), (d, seat))
    if best is None:
        raise SystemExit(f"hand seed {seed} comes in from no seat's side")
    return best[1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--recording", default="data/recording/game-14")
    p.add_argument("--every", type=int, default=1, help="measure every n-th frame")
    p.add_argument(
        "--held-out",
        type=int,
        default=0,
        help="leave out every n-th frame (vision/reaches.py's constants were chosen on every 7th)",
    )
    args = p.parse_args(argv)
    rec = Recording.open(args.recording)
    spec = RecordingSpec(seed=int(rec.doc["spec"]["seed"]))
    if spec.key() != rec.doc["key"]:
        raise SystemExit(f"{args.recording} was rendered by other code: render it again (demo)")
    zones = default_zones()
    h = camera_of(spec, zones)
    film = film_game(spec, play_game(spec), h)
    if len(film.frames) != len(rec):
        raise SystemExit(f"the film has {len(film.frames)} frames, the recording {len(rec)}")
    seats = range(spec.players)
    hands = HandSegmenter()
    inv = np.linalg.inv(h)
    tally: Counter[str] = Counter()
    zones_wrong: Counter[tuple[str, str]] = Counter()
    frames = [i for i in range(0, len(rec), args.every) if not (args.held_out and i % args.held_out == 0)]
    progress = Progress("reaches: frames", len(frames))
    started = time.perf_counter()
    for i in frames:
        image = cv2.imread(str(rec.frame_path(i)))
        if image is None:
            raise SystemExit(f"cannot read {rec.frame_path(i)}")
        mask, conf = hands.find(rectify(image, h))
        found = reaches_of(mask, zones, seats, conf)
        hand = film.frames[i].hand
        progress.step()
        if hand is None:
            tally["no hand"] += 1
            tally["no hand, reach reported"] += bool(found)
            continue
        tally["hand"] += 1
        seat = true_seat(hand.seed, h, spec.size, zones, seats)
        tip = inv @ np.array([*hand.tip, 1.0])
        zone = zone_at(zones, seats, (float(tip[0] / tip[2]), float(tip[1] / tip[2])))
        if not found:
            tally["missed"] += 1
            continue
        best = found[0] if len(found) == 1 else max(found, key=lambda r: r.seat == seat)
        tally["more than one"] += len(found) > 1
        tally["seat right"] += best.seat == seat
        tally["seat unknown"] += best.seat is None
        tally["seat wrong"] += best.seat is not None and best.seat != seat
        tally["zone right"] += best.zone == zone
        if best.zone != zone:
            zones_wrong[(zone, best.zone)] += 1
    seconds = time.perf_counter() - started
    n = tally["hand"]

    def pct(k: str, of: int) -> str:
        return f"{tally[k]} ({100 * tally[k] / of:.1f}%)" if of else "-"

    print(f"recording {args.recording}: {len(frames)} frames measured ({seconds:.0f} s)")
    print(f"frames with a hand: {n}")
    print(f"  reach seen: {n - tally['missed']} ({100 * (n - tally['missed']) / max(n, 1):.1f}%)")
    print(f"  seat right: {pct('seat right', n)}; unknown: {pct('seat unknown', n)}", end="")
    print(f"; wrong: {pct('seat wrong', n)}")
    print(f"  zone under the fingertips right: {pct('zone right', n)}")
    print(f"  more than one reach reported: {pct('more than one', n)}")
    none = tally["no hand"]
    print(f"frames without a hand: {none}; a reach reported: {pct('no hand, reach reported', none)}")
    if zones_wrong:
        print(
            "commonest zone confusions (truth -> read): "
            + ", ".join(f"{a} -> {b} {c}" for (a, b), c in zones_wrong.most_common(8))
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
