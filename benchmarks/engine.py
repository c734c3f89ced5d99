"""Rules-engine benchmark: random legal play, and enumerating the payments of a Build.

1. Random legal play (2 and 4 players): at every player step the *full* list of legal steps is
   computed (``legal_steps``, payments included), one is chosen uniformly, and ``apply`` plays it;
   chance (refills, draws, Research cards) is resolved inside ``apply`` from the seeded source and
   is not counted as a step. Prints player steps per second and games per second. The engine's
   small caches (a player's derived profile, payments by ring/cost/converters) stay warm across
   games, as they do in a long-running referee; a second run of the 2-player figure bypasses the
   payment cache so the enumeration is paid at every step.
2. Payment enumeration: every (ring, color, cost, unused converters) a Build candidate met during
   play is enumerated again, uncached, one call timed at a time: median and p99, over all Builds
   and over those where the player had converters to choose from.

Usage: .venv/bin/python benchmarks/engine.py [--games N] [--seed S]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import referee.gizmos.rules as rules
from referee.app.percentiles import p99
from referee.gizmos import apply, legal_steps, new_game, resolve_chance
from referee.gizmos.payments import payments

Enumerate = Callable[..., tuple]


def play(players: int, games: int, seed: int) -> tuple[int, int, float, float]:
    """Random legal play over ``games`` games: (player steps, legal steps listed, wall-clock
    seconds, CPU seconds of this process). On a shared machine the CPU figure is what the engine
    itself costs; the wall-clock one includes waiting for the CPU."""
    steps = listed = 0
    elapsed = cpu = 0.0
    for g in range(games):
        rng = random.Random(seed + g)
        state = resolve_chance(new_game(players), rng)
        start, start_cpu = time.perf_counter(), time.process_time()
        while not state.game_over:
            legal = legal_steps(state)
            listed += len(legal)
            state = apply(state, rng.choice(legal), rng)
            steps += 1
        elapsed += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
        if (g + 1) % 50 == 0 or g + 1 == games:
            sys.stderr.write(f"\r  {players} players: {g + 1}/{games} games")
            sys.stderr.flush()
    sys.stderr.write("\n")
    return steps, listed, elapsed, cpu


def collect_builds(players: int, games: int, seed: int) -> list[tuple]:
    """The arguments of every payment enumeration random play asks for (one per Build candidate)."""
    seen: list[tuple] = []
    raw: Enumerate = payments.__wrapped__

    def recording(*args: object) -> tuple:
        seen.append(args)
        return raw(*args)

    # Swapped in for the engine's cached function, which is typed as the cache wrapper it is.
    rules.payments = recording  # type: ignore[assignment]
    try:
        play(players, games, seed)
    finally:
        rules.payments = payments
    return seen


def time_enumerations(calls: list[tuple]) -> list[float]:
    """Microseconds per uncached enumeration, one call at a time (best of 3 per call)."""
    raw: Enumerate = payments.__wrapped__
    out = []
    for args in calls:
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter_ns()
            raw(*args)
            best = min(best, time.perf_counter_ns() - t0)
        out.append(best / 1000)
    return out


def _cpu_model() -> str:
    """The CPU's model name where Linux tells it, else the architecture."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Rules-engine benchmark (random legal play).")
    parser.add_argument("--games", type=int, default=300, help="games per player count (default 300)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games: at least 1")

    cpu_name = _cpu_model()
    print(f"machine: {os.cpu_count()} CPUs ({cpu_name}), Python {platform.python_version()}")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"random legal play, {args.games} games per row, seeds {args.seed}..{args.seed + args.games - 1}")
    print(
        f"{'players':<9}{'steps':>9}{'steps/s':>10}{'games/s':>9}{'steps/CPU-s':>13}{'games/CPU-s':>13}"
        f"{'legal/step':>12}"
    )
    for players in (2, 4):
        steps, listed, secs, cpu = play(players, args.games, args.seed)
        print(
            f"{players:<9}{steps:>9}{steps / secs:>10.0f}{args.games / secs:>9.1f}{steps / cpu:>13.0f}"
            f"{args.games / cpu:>13.1f}{listed / steps:>12.1f}"
        )

    raw: Enumerate = payments.__wrapped__
    rules.payments = raw  # type: ignore[assignment]  # the uncached function (see collect_builds)
    try:
        steps, _, secs, cpu = play(2, args.games, args.seed)
    finally:
        rules.payments = payments
    print(f"2 players, payment cache bypassed: {steps / secs:.0f} steps/s, {steps / cpu:.0f} steps/CPU-s")

    calls = collect_builds(2, min(args.games, 100), args.seed) + collect_builds(
        4, min(args.games, 50), args.seed
    )
    micro = time_enumerations(calls)
    with_conv = [t for t, a in zip(micro, calls, strict=True) if a[3]]
    print(f"payments of a Build (uncached), {len(micro)} Build candidates met in play:")
    print(f"  all:             median {statistics.median(micro):.1f} us, p99 {p99(micro):.1f} us")
    if len(with_conv) >= 2:
        print(
            f"  with converters: median {statistics.median(with_conv):.1f} us, p99 {p99(with_conv):.1f} us"
            f" ({len(with_conv)} candidates)"
        )
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
