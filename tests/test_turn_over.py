"""A turn over by the rules (its player has nothing legal left but ending it) is said on the
dashboard at once (``turn_over``, issue 13's delay), before a signal or the next player's change
ends it in the record."""

from __future__ import annotations

import random

from referee.gizmos import State, apply, legal_steps, new_game, resolve_chance
from referee.tracker import Tracker
from referee.tracker.turns import turn_over
from web.view import table_view

NAMES = ["Ana", "Ben", "Cleo"]


def view_of(state: State) -> dict[str, object]:
    return table_view(Tracker.create(":memory:", NAMES, state=state))


def play(state: State, rng: random.Random) -> State:
    """One random legal step, its random outcomes resolved."""
    return resolve_chance(apply(state, rng.choice(legal_steps(state))), rng)


def test_a_pick_with_nothing_triggered_leaves_the_turn_over() -> None:
    start = resolve_chance(new_game(3), random.Random(1))
    assert not turn_over(start)
    assert view_of(start)["awaiting"] == "Ana's turn: File, Pick, Build or Research."
    pick = next(st for st in legal_steps(start) if st.kind == "pick")
    assert not turn_over(apply(start, pick))  # the Row's refill still to come
    after = resolve_chance(apply(start, pick), random.Random(2))  # the starting gizmos trigger nothing
    assert turn_over(after)
    view = view_of(after)
    assert view["turn_over"] is True
    assert view["awaiting"] == "Ana has nothing left to do: the turn is over, Ben plays next."


def test_a_turn_with_a_step_left_is_not_over() -> None:
    """Random games: wherever the main action is taken and anything but ending the turn is legal
    (a triggered gizmo, a Research under way, a random outcome pending), the turn is not over;
    wherever only ending it is, it is, and the view says so."""
    seen = {True: 0, False: 0}
    for seed in range(3):
        rng = random.Random(seed)
        state = resolve_chance(new_game(3), rng)
        while not state.game_over and state.turn < 40:
            kinds = {st.kind for st in legal_steps(state)} if not state.chance else {"chance"}
            over = turn_over(state)
            assert over == (state.main_done and kinds == {"end_turn"})
            if state.main_done:
                seen[over] += 1
                assert view_of(state)["turn_over"] is over
            state = play(state, rng)
    assert seen[True] and seen[False]  # both kinds of state were met


def test_the_game_s_last_turn_over_says_the_game_ends_with_it() -> None:
    rng = random.Random(4)
    state = resolve_chance(new_game(3), rng)
    while not (state.end_triggered and state.current == 2 and turn_over(state)):
        assert not state.game_over, "no last turn with nothing left was met"
        state = play(state, rng)
    assert (
        view_of(state)["awaiting"] == "Cleo has nothing left to do: the turn is over, the game ends with it."
    )
