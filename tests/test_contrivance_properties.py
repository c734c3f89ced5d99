"""Property tests over random legal play for 2-6 players (hypothesis picks the games).

Games are played in observed mode: every chance outcome (Builder drawn, card dealt or drawn,
card taken blind, Contrivance revealed) is chosen from ``legal_steps`` like any other step, so
the checks cover what the referee does with a table's input. At every state: every tile on
exactly one square (or in its supply or the box), 62 cards accounted for, values 0-6, the JSON
form round-trips exactly, the legal steps are distinct and each is accepted by ``apply``, and
plausible steps not among them are refused. Every game terminates.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.contrivance import (
    BUILDERS,
    CONTRIVANCE,
    ContrivanceError,
    State,
    Step,
    apply,
    chance_outcomes,
    check_invariants,
    legal_steps,
    new_game,
    returns,
    score,
    state_from_json,
    step_from_json,
)
from referee.contrivance.data import MAX_VALUE, MIN_VALUE, TOOL_NAMES
from referee.contrivance.state import all_cards
from referee.contrivance.steps import CHANCE_KINDS, KINDS, PLAYER_KINDS, TARGETS
from referee.simulation.play import MAX_STEPS, random_game

PLAY = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CARDS = (
    *TOOL_NAMES,
    "switch_on-3",
    "switch_on-2",
    "switch_on-1",
    "switch_on+1",
    "switch_on+2",
    "switch_on+4",
)


def plausible(state: State, rnd: random.Random) -> Step:
    """A step that could be entered at this table: right or wrong seat, card, square, facing."""
    n = state.num_players
    occupied = [sq for sq, _ in state.squares()]

    def square() -> tuple[int, int]:
        if occupied and rnd.random() < 0.6:
            return rnd.choice(occupied)
        return (rnd.randint(1, min(6, n + 1)), rnd.randint(1, 5))

    seat = state.current if rnd.random() < 0.8 else rnd.randrange(n)
    likely = CHANCE_KINDS if state.chance else PLAYER_KINDS  # mostly the right sort of step
    kind = rnd.choice(likely if rnd.random() < 0.8 else KINDS)
    if kind == "place":
        builder = rnd.choice([b for b in state.builders if b] or list(BUILDERS))
        return Step(
            "place", seat, tile=f"{builder}-{rnd.randint(1, 4)}", to=square(), facing=rnd.randrange(4)
        )
    if kind == "redraw":
        return Step("redraw", seat, card=rnd.choice(state.hands[seat] or TOOL_NAMES))
    if kind == "pass":
        return Step("pass", seat)
    if kind == "switch_on":
        return Step("switch_on", seat, value=rnd.choice((-3, -2, -1, 1, 2)))
    if kind == "builder":
        return Step("builder", builder=rnd.choice(BUILDERS))
    if kind in ("draw", "take"):
        return Step(kind, card=rnd.choice(TOOL_NAMES if kind == "take" else CARDS))
    if kind == "reveal":
        return Step("reveal", value=rnd.randint(1, 4))
    hand = state.hands[seat]
    card = rnd.choice(hand) if hand and rnd.random() < 0.7 else rnd.choice(TOOL_NAMES)
    fields: dict[str, object] = {}
    for name in TARGETS[card]:
        if name in ("at", "to"):
            fields[name] = square()
        elif name == "facing":
            fields[name] = rnd.randrange(4)
        elif name == "target":
            fields[name] = rnd.randrange(n)
        else:
            fields[name] = rnd.choice(state.discard or CARDS)
    return Step("play", seat, card, **fields)  # type: ignore[arg-type]


def canonical(step: Step) -> Step:
    """A swap names its two squares in either order; the legal list names them in Workbench order."""
    if step.kind == "play" and step.card in ("swap_component", "swap_points") and step.at and step.to:
        a, b = sorted((step.at, step.to))
        return Step("play", step.player, step.card, at=a, to=b)
    return step


def check_table(state: State) -> None:
    check_invariants(state)
    assert sum(all_cards(state).values()) == 62
    where = Counter(t.id for _, t in state.squares())
    where.update(t.id for tiles in state.supply for t in tiles)
    where.update(t.id for t in state.tile_box)
    assert len(where) == 24 and set(where.values()) == {1}  # each tile in exactly one place
    if state.phase != "building":
        assert sum(1 for _ in state.squares()) == 4 * state.num_players and not any(state.supply)
    assert all(MIN_VALUE <= t.value <= MAX_VALUE for _, t in state.squares())
    raw = json.loads(json.dumps(state.to_json()))
    assert state_from_json(raw) == state


def observed_game(players: int, seed: int) -> tuple[State, int]:
    """Play one game from an unresolved setup, every step (chance included) from the legal list."""
    rnd = random.Random(seed)
    state = new_game(players)
    for n in range(MAX_STEPS):
        check_table(state)
        legal = legal_steps(state)
        if state.game_over:
            assert legal == [] and returns(state).count(1.0) >= 1
            return state, n
        assert legal and len(set(legal)) == len(legal)
        if state.chance:
            assert sum(p for _, p in chance_outcomes(state)) == pytest.approx(1.0)
        legal_set = set(legal)
        for step in rnd.sample(legal, min(len(legal), 25)):
            assert step_from_json(json.loads(json.dumps(step.to_json()))) == step
            apply(state, step)  # accepted
        for _ in range(25):
            step = plausible(state, rnd)
            try:
                apply(state, step)
                accepted = True
            except ContrivanceError:
                accepted = False
            assert accepted == (canonical(step) in legal_set), step
        state = apply(state, rnd.choice(legal))
    raise AssertionError(f"seed {seed}: no end after {MAX_STEPS} steps")


@PLAY
@given(players=st.integers(2, 6), seed=st.integers(0, 2**32 - 1))
def test_observed_play_keeps_every_invariant(players: int, seed: int) -> None:
    final, steps = observed_game(players, seed)
    assert final.requirement is not None and steps > 4 * players
    assert final.damage <= 0 or final.damage >= 10


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_seeded_random_games_terminate_and_score(players: int) -> None:
    for seed in range(40):
        play = random_game(CONTRIVANCE, players, seed)
        final = play.final
        check_table(final)
        lines = score(final).lines
        assert sorted(x.seat for x in lines) == list(range(players))
        assert all(x.total == x.base + x.bonus for x in lines)
        if final.damage >= 10:
            assert all(x.bonus == 0 for x in lines)
        assert [x.seat for x in lines if x.won] == [i for i, r in enumerate(returns(final)) if r == 1.0]
