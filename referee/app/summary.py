"""What a run, the demo and the Contrivance demo print on the terminal: the scores, the warnings,
and each change as it happens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from referee.app.live import Change


def write_summary(
    names: list[str], scores: list[dict[str, Any]], warnings: list[dict[str, Any]], out: TextIO
) -> None:
    """The scoring table and every warning (who, rule, what happened, the fix), for the terminal."""
    out.write("Final scores\n" if scores and scores[0].get("final", True) else "Scores\n")
    out.write(f"{'rank':<6}{'player':<12}{'total':>6}{'printed':>9}{'tokens':>8}{'gizmos':>8}\n")
    for r in scores:
        out.write(
            f"{r['rank']:<6}{r['name'][:11]:<12}{r['total']:>6}{r['printed_vp']:>9}{r['token_points']:>8}"
            f"{r['gizmos']:>8}\n"
        )
    write_warnings(names, warnings, out)


def write_warnings(names: Sequence[str], warnings: list[dict[str, Any]], out: TextIO) -> None:
    """Every warning (who, rule, what happened, the fix), for the terminal; any game's."""
    out.write(f"\nWarnings ({len(warnings)})\n")
    for w in warnings:
        who = names[w["player"]] if w.get("player") is not None else "the table"
        rulings = ", ".join(str(r) for r in w.get("rulings", ()))
        label = f"{w['code']} (ruling {rulings})" if w.get("code") else "please check"
        out.write(f"  #{w['id']} turn {w['turn']} (round {w['round']}), {who}: {label}\n")
        out.write(f"      {w['message']}\n      fix: {w['remedy']}\n")


def change_printer(names: list[str], out: TextIO, steps: bool = True) -> Callable[[Change], None]:
    """Prints each accepted step (the move log's line) and each warning as it happens."""

    def show(change: Change) -> None:
        if steps:
            for line in change.lines:
                out.write(f"round {line['round']}, turn {line['turn']}: {line['text']}\n")
        for w in change.warnings:
            who = names[w["player"]] if w.get("player") is not None else "the table"
            out.write(f"WARNING turn {w['turn']}, {who}: {w.get('code') or 'please check'}: {w['message']}\n")
        out.flush()

    return show


def write_comparison(
    names: Sequence[str],
    truth_scores: Sequence[dict[str, Any]],
    injections: Sequence[dict[str, Any]],
    problems: Sequence[str],
    out: TextIO,
) -> None:
    """A demo's last word: the recording's ground truth, and where the referee differs from it."""
    truth = ", ".join(f"{names[t['seat']]} {t['total']}" for t in truth_scores)
    broken = ", ".join(f"{i['code']} on turn {i['turn']} ({names[i['player']]})" for i in injections)
    out.write(f"\nGround truth of the recording: final scores {truth}; rules broken on purpose: {broken}.\n")
    if problems:
        out.write("The referee differs from the ground truth:\n")
        for p in problems:
            out.write(f"  - {p}\n")
    else:
        out.write(
            "The referee got it right: the same final scores, every rule break flagged on its turn, "
            "and no other warning.\n"
        )
