"""The per-move split of the referee's own wait (``benchmarks/e2e.py``, issue 13's delay): which
moves make the tail, and where each waited (the still-frame gate, then the tracker)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from benchmarks.e2e import KINDS, matched_moves, print_slowest, print_waits, shown_over, taken_back, waits
from referee.app.live import Change
from referee.app.percentiles import nearest_rank, p99


class Script:
    """What the split reads of a recording: its steps (with the frame each was complete) and pace."""

    fps = 10

    def __init__(self, steps: list[dict[str, Any]]) -> None:
        self._steps = steps

    def steps(self) -> list[dict[str, Any]]:
        return self._steps


def step(turn: int, frame: int, kind: str, player: int, codes: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"turn": turn, "frame": frame, "step": {"kind": kind, "player": player}, "codes": list(codes)}


def change(
    frame: int,
    turn: int,
    *steps: tuple[str, int | None],
    warnings: tuple[dict[str, Any], ...] = (),
    over: bool = False,
    provisional: dict[str, Any] | None = None,
) -> Change:
    raw = [{"kind": k, "player": p} for k, p in steps]
    return Change(0.0, frame, frame / 10, raw, list(warnings), turn, [], over, provisional)


def reading(turn: int, *steps: tuple[str, int], breaks: tuple[str, ...] = ()) -> dict[str, Any]:
    """A provisional reading as a change carries it (``Provisional.to_json``, the parts read)."""
    return {
        "turn": turn,
        "steps": [{"kind": k, "player": p} for k, p in steps],
        "breaks": [{"step": 0, "code": code} for code in breaks],
    }


# Ana picks (complete at frame 20), ends her turn (the button's frame 30); Ben picks (frame 45,
# a second marble breaking a rule at 60) and ends (70); Cleo files (80).
SCRIPT = Script(
    [
        step(0, 20, "pick", 0),
        step(0, 30, "end_turn", 0),
        step(1, 45, "pick", 1),
        step(1, 60, "pick", 1, ("SECOND_MAIN_ACTION",)),
        step(1, 70, "end_turn", 1),
        step(2, 80, "file", 2),
    ]
)


def test_each_move_is_split_by_kind_and_at_the_first_observed_frame() -> None:
    changes = [
        change(23, 0, ("pick", 0)),
        # Ana's end inferred from Ben's Pick, accepted together
        change(50, 1, ("end_turn", 0), ("pick", 1)),
        # the second marble, then (held back) Ben's end and Cleo's File in one call
        change(64, 1, ("pick", 1), warnings=({"turn": 1, "code": "SECOND_MAIN_ACTION"},)),
        change(90, 2, ("end_turn", 1), ("file", 2)),
    ]
    moves, unmatched = matched_moves(changes, SCRIPT)  # type: ignore[arg-type]
    assert unmatched == 0
    split = waits(moves, [22, 23, 47, 48, 50, 62, 64, 84, 90], SCRIPT)  # type: ignore[arg-type]
    by = {(w.what, w.done): w for w in split}
    assert [w.kind for w in split] == [KINDS[0], KINDS[1], KINDS[0], KINDS[0], KINDS[2], KINDS[1], KINDS[0]]
    ana_end = by[("end_turn", 30)]
    assert (ana_end.seen, ana_end.accepted, ana_end.late) == (47, 50, True)
    assert (by[("pick", 20)].seen, by[("pick", 20)].late) == (22, False)
    warned = by[("SECOND_MAIN_ACTION", 60)]
    assert (warned.kind, warned.seen, warned.accepted, warned.late) == (KINDS[2], 62, 64, False)
    assert by[("file", 80)].seen == 84 and not by[("file", 80)].late


def test_a_step_accepted_only_after_its_turn_ended_is_late() -> None:
    """Ben's Pick of frame 45 accepted in the call that also ended his turn (the game's turn is 2
    after it): held back until the end was inferred."""
    changes = [change(90, 2, ("pick", 1), ("end_turn", 1), ("file", 2))]
    moves, _ = matched_moves(changes, SCRIPT)  # type: ignore[arg-type]
    split = waits(moves, [], SCRIPT)  # type: ignore[arg-type]
    pick = next(w for w in split if w.what == "pick")
    assert pick.late and pick.seen is None
    end = next(w for w in split if w.what == "end_turn")
    assert end.late  # Cleo's File came after it in the same call


def test_the_split_is_printed_per_kind(capsys: pytest.CaptureFixture[str]) -> None:
    changes = [change(23, 0, ("pick", 0)), change(50, 1, ("end_turn", 0), ("pick", 1))]
    moves, _ = matched_moves(changes, SCRIPT)  # type: ignore[arg-type]
    print_waits(waits(moves, [22, 47], SCRIPT), 10)  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert "player steps (2; 0 accepted only once their turn was over): median 0.40 s" in out
    assert (
        "ends of turn (1; 0 shown over before the call that recorded them, 1 inferred from a later "
        "player's step in its call; 0 shown before the recording's frame (counted 0 s)): median 2.00 s"
    ) in out
    assert "complete -> first observed frame (the still-frame gate): median 1.70 s" in out
    assert "warnings" not in out


def test_p99_is_the_nearest_rank() -> None:
    assert p99([float(i) for i in range(101)]) == 99.0
    assert p99([3.0, 1.0, 2.0]) == 3.0
    # 171 moves (the recording's): the 170th smallest, so at most one lies above the p99 (the
    # benchmark's old round(0.99 * (n - 1)) index took the 169th)
    assert p99([float(i) for i in range(171)]) == 169.0
    # 100 values: the 99th smallest (the old int(0.99 * n) index of benchmarks/referee.py took the max)
    assert p99([float(i) for i in range(100)]) == 98.0
    assert nearest_rank([5.0, 1.0, 3.0, 2.0], 0.5) == 2.0
    assert nearest_rank([7.0], 0.99) == 7.0
    assert nearest_rank([float(i) for i in range(100)], 0.07) == 6.0  # 0.07 * 100 is not above 7
    with pytest.raises(ValueError):
        p99([])


def test_every_benchmark_takes_its_p99_from_the_one_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    """No benchmark (nor the network source's frame age) computes a percentile its own way."""
    monkeypatch.setattr(sys, "path", list(sys.path))  # the scripts put the repository first on it
    import benchmarks.contrivance
    import benchmarks.contrivance_referee
    import benchmarks.e2e
    import benchmarks.engine
    import benchmarks.referee
    import benchmarks.serial
    import referee.app.streams

    modules = (benchmarks.e2e, benchmarks.referee, benchmarks.contrivance_referee, benchmarks.engine)
    for module in (*modules, benchmarks.contrivance, benchmarks.serial, referee.app.streams):
        assert module.p99 is p99, module.__name__


def test_an_end_of_turn_counts_from_when_the_dashboard_showed_the_turn_over() -> None:
    """Ana's Pick left her nothing but ending the turn (the call's ``turn_over``): the dashboard
    said so from then on, so her end (recorded with Ben's Pick) counts from that call, and as
    0 s where that came before the recording's frame of it (the button's, frame 30)."""
    changes = [
        change(23, 0, ("pick", 0), over=True),
        change(26, 0, ("reveal", None), over=True),  # the table's refill: still over
        change(50, 1, ("end_turn", 0), ("pick", 1)),
    ]
    assert shown_over(changes, 2) is changes[0]
    moves, _ = matched_moves(changes, SCRIPT)  # type: ignore[arg-type]
    end = next(m for m in moves if m[1] == "end_turn")
    assert end[0] is changes[0]
    recorded, _ = matched_moves(changes, SCRIPT, shown=False)  # type: ignore[arg-type]
    assert next(m for m in recorded if m[1] == "end_turn")[0] is changes[2]
    split = waits(moves, [22, 23, 47, 48, 50], SCRIPT)  # type: ignore[arg-type]
    wait = next(w for w in split if w.kind == KINDS[1])
    assert (wait.accepted, wait.early, wait.late, wait.seen) == (23, True, False, None)


def test_an_end_counts_from_its_own_call_where_the_turn_was_not_shown_over() -> None:
    """Not shown over before (triggers left), or more of the turn's steps came with the end (the
    boundary moved): the end counts from the call that recorded it."""
    not_over = [change(23, 0, ("pick", 0)), change(50, 1, ("end_turn", 0), ("pick", 1))]
    assert shown_over(not_over, 1) is not_over[1]
    moved = [
        change(23, 0, ("pick", 0), over=True),
        change(50, 1, ("pick", 0), ("end_turn", 0), ("pick", 1)),  # another step of Ana's first
    ]
    moves, _ = matched_moves(moved, SCRIPT)  # type: ignore[arg-type]
    assert next(m for m in moves if m[1] == "end_turn")[0] is moved[1]
    # over in another turn than the one this end closes: not this turn's showing
    other = [
        change(10, 5, ("pick", 2), over=True),
        change(23, 0, ("pick", 0), over=True),
        change(50, 1, ("end_turn", 0), ("pick", 1)),
    ]
    assert shown_over(other, 2) is other[1]


class Filmed(Script):
    """A script whose frames 40-49 have a hand over the table (the recording's truth), else none."""

    def hand(self, index: int) -> tuple[float, float, float, float] | None:
        return (0.0, 0.0, 10.0, 10.0) if 40 <= index < 50 else None


def test_the_slowest_moves_are_listed_with_the_frames_they_waited_through(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--slowest``: the slowest share of the moves, slowest first, each with its wait split and
    the frames from complete to shown (a hand over the table, and which frames were observed)."""
    filmed = Filmed(SCRIPT._steps)
    changes = [change(23, 0, ("pick", 0)), change(52, 1, ("end_turn", 0), ("pick", 1))]
    moves, _ = matched_moves(changes, filmed)  # type: ignore[arg-type]
    observed = [22, 23, 51, 52]
    print_slowest(waits(moves, observed, filmed), filmed, 50.0, observed)  # type: ignore[arg-type]
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "  the slowest 50 % (2 of 3; frames from complete to shown, O/H observed):"
    # Ana's end (the button at 30) shown with Ben's Pick at 52; Ben's Pick complete at 45, a hand
    # over the table until 49
    ended = "    2.2 s end_turn (ends of turn, its turn over) 30->52: gate 2.1 s, tracker 0.1 s; "
    assert out[1].startswith(ended)
    assert out[1].endswith("." * 10 + "h" * 10 + ".OO")
    assert out[2] == "    0.7 s pick (player steps) 45->52: gate 0.6 s, tracker 0.1 s; hhhhh.OO"
    assert len(out) == 3


def test_a_move_counts_from_when_the_dashboard_showed_it_provisionally() -> None:
    """Ana's Pick (complete at 20) shown provisionally from frame 22, after a reading of frame 21
    that showed another step; accepted at 23: it counts from 22. Ben's second marble (the break,
    complete at 60) shown awaiting its verdict from 62, warned at 70: from 62. Without the
    provisional readings, each counts from the call that accepted it."""
    changes = [
        change(21, 0, provisional=reading(0, ("file", 0))),
        change(22, 0, provisional=reading(0, ("pick", 0))),
        change(23, 0, ("pick", 0)),
        change(50, 1, ("end_turn", 0), ("pick", 1)),
        change(62, 1, provisional=reading(1, ("pick", 1), breaks=("SECOND_MAIN_ACTION",))),
        change(64, 1, provisional=reading(1, ("pick", 1), breaks=("SECOND_MAIN_ACTION",))),
        change(70, 1, ("pick", 1), warnings=({"turn": 1, "code": "SECOND_MAIN_ACTION"},)),
    ]
    moves, unmatched = matched_moves(changes, SCRIPT)  # type: ignore[arg-type]
    assert unmatched == 0
    by = {(what, done): c.frame for c, what, done, _ in moves}
    assert by[("pick", 20)] == 22 and by[("pick", 60)] == 62 and by[("SECOND_MAIN_ACTION", 60)] == 62
    assert by[("pick", 45)] == 50  # never shown provisionally
    sure, _ = matched_moves(changes, SCRIPT, provisional=False)  # type: ignore[arg-type]
    by = {(what, done): c.frame for c, what, done, _ in sure}
    assert by[("pick", 20)] == 23 and by[("pick", 60)] == 70 and by[("SECOND_MAIN_ACTION", 60)] == 70


def test_a_provisional_reading_of_another_turn_does_not_count_for_a_warning() -> None:
    changes = [
        change(62, 1, provisional=reading(2, ("pick", 1), breaks=("SECOND_MAIN_ACTION",))),
        change(70, 1, ("pick", 1), warnings=({"turn": 1, "code": "SECOND_MAIN_ACTION"},)),
    ]
    moves, _ = matched_moves(changes, SCRIPT)  # type: ignore[arg-type]
    assert [(what, c.frame) for c, what, _, warning in moves if warning] == [("SECOND_MAIN_ACTION", 70)]


def test_steps_shown_provisionally_and_never_accepted_are_counted() -> None:
    changes = [
        change(21, 0, provisional=reading(0, ("file", 0))),  # a misreading, taken back
        change(22, 0, provisional=reading(0, ("pick", 0))),
        change(23, 0, ("pick", 0)),
        change(40, 0, provisional=reading(0, ("end_turn", 0), ("pick", 1))),  # Ben's, in turn 1
        change(50, 1, ("end_turn", 0), ("pick", 1)),
    ]
    assert taken_back(changes) == (3, 1)
