"""Whole games: 1,000 seeded random games, and Gizmos driven only through ``referee.game.Game``."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest

from referee.game import Game, get_game, registered_games
from referee.gizmos import GIZMOS, IllegalStep, check_invariants, ranking
from referee.simulation.play import random_game


def test_a_thousand_seeded_random_games_finish() -> None:
    steps = 0
    winners: Counter[int] = Counter()
    for seed in range(1000):
        players = 2 + seed % 3
        play = random_game(GIZMOS, players, seed)
        final = play.final
        check_invariants(final)
        assert final.game_over and final.end_triggered and not final.chance and final.pending is None
        assert final.turn % players == 0 and final.current == players - 1  # the round was finished
        winners[ranking(final)[0].seat] += 1
        steps += play.steps
    assert sum(winners.values()) == 1000 and len(winners) == 4
    assert steps > 1000 * 100


def playthrough(game: Game[Any, Any], players: int, seed: int) -> tuple[Any, int]:
    """OpenSpiel-style random playthrough using nothing but the interface: at every state the
    JSON forms round-trip, every step offered is accepted, and the game ends."""
    rng = random.Random(seed)
    state = game.new_game(players, rng)
    for n in range(100_000):
        again = game.state_from_json(json.loads(json.dumps(game.state_to_json(state))))
        assert game.state_to_json(again) == game.state_to_json(state)
        if game.is_terminal(state):
            assert game.legal_steps(state) == [] and game.current_player(state) is None
            return state, n
        steps = game.legal_steps(state)
        assert steps
        step = rng.choice(steps)
        assert game.step_from_json(json.loads(json.dumps(game.step_to_json(step)))) == step
        state = game.apply(state, step, rng)
    raise AssertionError("the game did not end")


GAME_SEATS = [
    (name, players)
    for name, game in sorted(registered_games().items())
    for players in range(game.min_players, game.max_players + 1)
]


@pytest.mark.parametrize(("name", "players"), GAME_SEATS)
def test_every_game_through_the_game_interface(name: str, players: int) -> None:
    """The same random playthrough for every registered game and player count (OpenSpiel)."""
    game = get_game(name)
    assert game.name == name
    final, steps = playthrough(game, players, seed=players)
    assert steps > 20
    returns = game.returns(final)
    table = game.score_table(final)
    assert len(returns) == players and set(returns) <= {0.0, 1.0} and max(returns) == 1.0
    winners = {row["seat"] for row in table if row["rank"] == 1}
    assert {seat for seat, r in enumerate(returns) if r == 1.0} == winners
    assert [row["rank"] for row in table] == sorted(row["rank"] for row in table)
    assert sorted(row["seat"] for row in table) == list(range(players))
    assert all(isinstance(game.describe(step), str) for step in game.legal_steps(game.new_game(players)))


@pytest.mark.parametrize("name", sorted(registered_games()))
def test_a_step_in_words_names_its_player(name: str) -> None:
    """``describe`` with a name: the tracker's move log says who did it."""
    game = get_game(name)
    state = game.new_game(game.min_players, random.Random(1))
    seat = game.current_player(state)
    assert seat is not None
    step = game.legal_steps(state)[0]
    assert "Ana" in game.describe(step, "Ana") and "Ana" not in game.describe(step)
    assert game.describe(step, "Ana") == game.describe(step).replace(f"seat {seat}", "Ana", 1)


def test_gizmos_has_one_winner() -> None:
    game = get_game("gizmos")
    assert game is GIZMOS
    for players in (2, 3, 4):
        final, _ = playthrough(game, players, seed=players)
        table = game.score_table(final)
        assert sorted(game.returns(final)) == [0.0] * (players - 1) + [1.0]
        assert [row["rank"] for row in table] == list(range(1, players + 1))


def test_the_interface_reports_chance_and_turns() -> None:
    game = get_game("gizmos")
    setup = game.new_game(2)  # no random source: the setup's outcomes are left to the caller
    assert game.current_player(setup) is None
    outcome = game.legal_steps(setup)[0]
    assert game.step_to_json(outcome)["kind"] == "reveal"
    ready = game.new_game(2, random.Random(0))
    assert game.current_player(ready) == 0 and not game.is_terminal(ready)
    with pytest.raises(IllegalStep):
        game.apply(ready, game.step_from_json({"kind": "end_turn", "player": 0}))


def test_an_unknown_game_is_refused() -> None:
    with pytest.raises(KeyError, match="unknown game 'chess'; known: \\['contrivance', 'gizmos'\\]"):
        get_game("chess")


@dataclass(frozen=True)
class NimState:
    heap: int
    to_move: int
    players: int


class Nim:
    """A second rule set in a dozen lines: take 1-3 from one heap, the last to take wins."""

    name = "nim"
    min_players = 2
    max_players = 4
    error_type = ValueError
    illegal_step_type = ValueError

    def new_game(self, players: int, rng: random.Random | None = None) -> NimState:
        return NimState(heap=10 + (rng.randrange(5) if rng else 0), to_move=0, players=players)

    def legal_steps(self, state: NimState) -> list[int]:
        return [n for n in (1, 2, 3) if n <= state.heap]

    def apply(self, state: NimState, step: int, rng: random.Random | None = None) -> NimState:
        if step not in self.legal_steps(state):
            raise ValueError(f"cannot take {step}")
        return NimState(state.heap - step, (state.to_move + 1) % state.players, state.players)

    def current_player(self, state: NimState) -> int | None:
        return None if self.is_terminal(state) else state.to_move

    def is_terminal(self, state: NimState) -> bool:
        return state.heap == 0

    def returns(self, state: NimState) -> list[float]:
        winner = (state.to_move - 1) % state.players
        return [float(s == winner) for s in range(state.players)]

    def score_table(self, state: NimState) -> list[dict[str, Any]]:
        return [{"seat": s, "won": r} for s, r in enumerate(self.returns(state))]

    def state_to_json(self, state: NimState) -> dict[str, Any]:
        return {"heap": state.heap, "to_move": state.to_move, "players": state.players}

    def state_from_json(self, raw: Any) -> NimState:
        return NimState(**raw)

    def score_report(self, state: NimState) -> str:
        return f"winner: seat {self.returns(state).index(1.0)}"

    def describe(self, step: int, name: str | None = None) -> str:
        return f"{name} takes {step}" if name else f"take {step}"

    def step_to_json(self, step: int) -> dict[str, Any]:
        return {"take": step}

    def step_from_json(self, raw: Any) -> int:
        return int(raw["take"])


def test_a_second_rule_set_plugs_into_the_same_driver() -> None:
    nim: Game[NimState, int] = Nim()
    final, steps = playthrough(nim, 3, seed=1)
    assert nim.is_terminal(final) and steps >= 4 and sum(nim.returns(final)) == 1.0
