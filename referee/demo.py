"""The README's main job: referee a game end to end with no camera and no hardware.

Until the bundled camera recording lands (issue 7), the demo plays a seeded simulated game
through the rules engine, prints the move log turn by turn and the final scoring table.
"""

from __future__ import annotations

import argparse
import sys

from referee.gizmos import State, Step, describe, ranking
from referee.gizmos.simulate import random_game


def run_demo(args: argparse.Namespace) -> int:
    """Play and score one seeded game; print every turn in plain language."""
    lines: list[str] = []

    def log(before: State, step: Step, after: State) -> None:
        if step.kind != "end_turn":
            lines.append(f"round {before.round:>2}  {describe(step)}")

    play = random_game(args.players, args.seed, on_step=log)
    out = sys.stdout
    out.write(f"Gizmos referee demo: {args.players} players, seed {args.seed} (simulated table)\n")
    for line in lines:
        out.write(line + "\n")
    out.write(f"\nGame over after {play.final.turn} turns ({play.final.round - 1} rounds).\n")
    out.write(f"{'rank':<6}{'player':<8}{'total':>6}{'printed':>9}{'tokens':>8}{'end':>5}{'gizmos':>8}\n")
    for r in ranking(play.final):
        out.write(
            f"{r.rank:<6}{'P' + str(r.seat + 1):<8}{r.total:>6}{r.printed_vp:>9}{r.token_points:>8}"
            f"{r.end_cards:>5}{r.gizmos:>8}\n"
        )
    return 0
