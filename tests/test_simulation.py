"""The simulation's players and its one rule-break injector (referee/simulation/players.py,
breaks.py), which the benchmark corpus, the bundled recording and the dashboard's demo share."""

from __future__ import annotations

import random
from collections import Counter

from referee.gizmos import GIZMOS, State, Step, force, legal_steps
from referee.simulation.breaks import (
    END_CODES,
    START_CODES,
    breaks_only,
    end_break,
    planned_game,
    start_break,
)
from referee.simulation.play import random_game
from referee.simulation.players import TASTES, choose_step, greedy_step, random_step


def _states(seeds: range, every: int = 3) -> list[State]:
    """Player-to-act states of seeded random 3-player games (every ``every``-th)."""
    out: list[State] = []
    for seed in seeds:
        random_game(GIZMOS, 3, seed, on_step=lambda before, _s, _a: out.append(before))
    return [s for s in out if not s.chance and not s.game_over][::every]


def test_injected_steps_break_exactly_the_rule_named() -> None:
    rng = random.Random(0)
    found: Counter[str] = Counter()
    for state in _states(range(3)):
        if state.pending is not None:
            continue
        codes, inject = (END_CODES, end_break) if state.main_done else (START_CODES, start_break)
        for code in codes:
            made = inject(state, code, rng)
            if made is None:
                continue
            step, after = made
            forced, broken = force(state, step)  # checked by the engine, not by breaks_only
            assert [b.code for b in broken] == [code], (code, step)
            assert forced == after
            found[code] += 1
    # the classes random tables allow often enough to be sure to meet in three games
    common = {"NOT_YOUR_TURN", "SECOND_MAIN_ACTION", "ARCHIVE_FULL", "UNDERPAID", "NOT_TRIGGERED"}
    assert common <= set(found), found


def test_breaks_only_refuses_legal_steps_and_other_rules() -> None:
    state = _states(range(1))[0]
    legal = legal_steps(state)[0]
    assert breaks_only(state, legal, "UNDERPAID") is None  # breaks nothing
    other = Step("pick", (state.current + 1) % 3, color=next(c for c in range(4) if state.row[c]))
    assert breaks_only(state, other, "RING_FULL") is None  # breaks NOT_YOUR_TURN instead
    assert breaks_only(state, other, "NOT_YOUR_TURN") is not None


def test_players_choose_among_the_legal_steps_by_taste() -> None:
    rng = random.Random(1)
    for state in _states(range(1), every=7):
        options = legal_steps(state)
        assert random_step(options, rng) in options
        assert choose_step(options, rng, TASTES[1]) in options
        assert greedy_step(state, rng) in options
        if any(o.kind == "pick" for o in options):  # a taste for nothing but Picks always picks
            assert choose_step(options, rng, {"pick": 1e12}).kind == "pick"


def test_planned_game_plays_each_break_once_on_or_after_its_turn() -> None:
    plan = (("SECOND_MAIN_ACTION", 4), ("UNDERPAID", 12))
    game = planned_game(3, 5, plan)
    assert game.final.game_over
    assert [(i.code, i.turn >= turn) for i, (_, turn) in zip(game.injections, plan, strict=True)] == [
        ("SECOND_MAIN_ACTION", True),
        ("UNDERPAID", True),
    ]
    for inj in game.injections:
        forced = [p for p in game.steps if p.codes and p.before.turn == inj.turn]
        assert [(p.step, p.codes) for p in forced] == [(inj.step, (inj.code,))]
    assert planned_game(3, 5, plan).steps == game.steps  # deterministic given the seed
