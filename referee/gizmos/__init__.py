"""Gizmos (CMON, 2018): a complete, pure rules engine.

>>> import random
>>> from referee.gizmos import new_game, legal_steps, apply, resolve_chance
>>> state = resolve_chance(new_game(2), random.Random(1))
>>> step = legal_steps(state)[0]
>>> state = apply(state, step, random.Random(2))
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from referee.gizmos.cards import COLORS, Card, CardDataError, default_cards, load_cards
from referee.gizmos.errors import RULES, GizmosError, IllegalStep, InvalidStep, StateError
from referee.gizmos.rules import apply, chance_outcomes, force, legal_steps, resolve_chance
from referee.gizmos.scoring import ScoreLine, ranking, report, returns, score_player
from referee.gizmos.state import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    Pending,
    Player,
    State,
    check_invariants,
    new_game,
    state_from_json,
)
from referee.gizmos.steps import Step, describe, marbles, step_from_json

__all__ = [
    "COLORS",
    "GIZMOS",
    "RULES",
    "Card",
    "CardDataError",
    "GizmosError",
    "GizmosGame",
    "IllegalStep",
    "InvalidStep",
    "Pending",
    "Player",
    "ScoreLine",
    "State",
    "StateError",
    "Step",
    "apply",
    "chance_outcomes",
    "check_invariants",
    "default_cards",
    "describe",
    "force",
    "legal_steps",
    "load_cards",
    "marbles",
    "new_game",
    "ranking",
    "resolve_chance",
    "returns",
    "score_player",
    "state_from_json",
    "step_from_json",
]


@dataclass(frozen=True)
class GizmosGame:
    """Gizmos behind the game-independent :class:`referee.game.Game` interface."""

    name: str = "gizmos"
    min_players: int = MIN_PLAYERS
    max_players: int = MAX_PLAYERS
    error_type: type[Exception] = GizmosError
    illegal_step_type: type[Exception] = IllegalStep

    def new_game(self, players: int, rng: random.Random | None = None) -> State:
        state = new_game(players)
        return resolve_chance(state, rng) if rng is not None else state

    def legal_steps(self, state: State) -> list[Step]:
        return legal_steps(state)

    def apply(self, state: State, step: Step, rng: random.Random | None = None) -> State:
        return apply(state, step, rng)

    def current_player(self, state: State) -> int | None:
        return None if state.game_over or state.chance else state.current

    def is_terminal(self, state: State) -> bool:
        return state.game_over

    def returns(self, state: State) -> list[float]:
        return returns(state)

    def score_table(self, state: State) -> list[dict[str, Any]]:
        return [line.to_json() for line in ranking(state)]

    def score_report(self, state: State) -> str:
        return report(state)

    def describe(self, step: Step, name: str | None = None) -> str:
        return describe(step, name)

    def state_to_json(self, state: State) -> dict[str, Any]:
        return state.to_json()

    def state_from_json(self, raw: Any) -> State:
        return state_from_json(raw)

    def step_to_json(self, step: Step) -> dict[str, Any]:
        return step.to_json()

    def step_from_json(self, raw: Any) -> Step:
        return step_from_json(raw)


GIZMOS = GizmosGame()
