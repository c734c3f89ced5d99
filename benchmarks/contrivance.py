"""Contrivance engine benchmark: random legal play, and scoring a final Workbench.

1. Random legal play for 2-6 players: at every player step the full list of legal steps is
   computed (``legal_steps``), one is chosen uniformly and ``apply`` plays it; chance (Builders,
   deals, draws, the card taken blind, the reveal) is resolved inside ``apply`` from the seeded
   source and is not counted as a step. Prints games per second and player steps per second,
   by wall clock and by this process's CPU time (on a shared machine the CPU figure is what the
   engine itself costs).
2. Scoring: every final table of part 1 is scored again (``score``: interlocks, sets,
   burn-outs, base scores, bonuses, ranking with reasons), one call timed at a time (best of
   3 per table): median and p99 in microseconds.

Usage: .venv/bin/python benchmarks/contrivance.py [--games N] [--seed S]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.app.percentiles import p99
from referee.contrivance import State, apply, legal_steps, new_game, resolve_chance, score


def play(players: int, games: int, seed: int) -> tuple[int, int, float, float, list[State]]:
    """Random legal play: (player steps, legal steps listed, wall seconds, CPU seconds, finals)."""
    steps = listed = 0
    elapsed = cpu = 0.0
    finals: list[State] = []
    for g in range(games):
        rng = random.Random(seed + g)
        start, start_cpu = time.perf_counter(), time.process_time()
        state = resolve_chance(new_game(players), rng)
        while not state.game_over:
            legal = legal_steps(state)
            listed += len(legal)
            state = apply(state, rng.choice(legal), rng)
            steps += 1
        elapsed += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
        finals.append(state)
        if (g + 1) % 50 == 0 or g + 1 == games:
            sys.stderr.write(f"\r  {players} players: {g + 1}/{games} games")
            sys.stderr.flush()
    sys.stderr.write("\n")
    return steps, listed, elapsed, cpu, finals


def time_scoring(finals: list[State]) -> list[float]:
    """Microseconds to score each final table, one call at a time (best of 3 per table)."""
    out = []
    for state in finals:
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter_ns()
            score(state)
            best = min(best, time.perf_counter_ns() - t0)
        out.append(best / 1000)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Contrivance engine benchmark (random legal play, scoring).")
    parser.add_argument("--games", type=int, default=200, help="games per player count (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.games < 2:
        parser.error("--games: at least 2")

    print(f"machine: {os.cpu_count()} CPUs ({platform.machine()}), Python {platform.python_version()}")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"random legal play, {args.games} games per row, seeds {args.seed}..{args.seed + args.games - 1}")
    print(
        f"{'players':<9}{'steps':>8}{'games/s':>9}{'steps/s':>9}{'games/CPU-s':>13}{'steps/CPU-s':>13}"
        f"{'legal/step':>12}{'damage<=0':>11}"
    )
    finals: list[State] = []
    for players in range(2, 7):
        steps, listed, secs, cpu, done = play(players, args.games, args.seed)
        repaired = sum(s.damage <= 0 for s in done)
        print(
            f"{players:<9}{steps:>8}{args.games / secs:>9.1f}{steps / secs:>9.0f}{args.games / cpu:>13.1f}"
            f"{steps / cpu:>13.0f}{listed / steps:>12.1f}{repaired:>8}/{args.games}"
        )
        finals += done
    micros = time_scoring(finals)
    print(
        f"scoring a final Workbench ({len(finals)} tables, 2-6 players): "
        f"median {statistics.median(micros):.0f} us, p99 {p99(micros):.0f} us, max {max(micros):.0f} us"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
