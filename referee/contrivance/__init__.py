"""Contrivance (Mike Carambat, 2020; seed 004): a complete, pure rules engine.

Standard library only, immutable states, deterministic given its random source, and the same
shape as :mod:`referee.gizmos`: hidden information is chance steps, supplied by a seeded source
or by what the table showed (docs/contrivance.md).

>>> import random
>>> from referee.contrivance import new_game, legal_steps, apply, resolve_chance
>>> state = resolve_chance(new_game(3), random.Random(1))
>>> state = apply(state, legal_steps(state)[0], random.Random(2))
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from referee.contrivance.data import (
    BUILDERS,
    DEFAULT_EDITION,
    MAX_PLAYERS,
    MIN_PLAYERS,
    Edition,
    EditionError,
    edition_from_json,
)
from referee.contrivance.errors import RULES, ContrivanceError, IllegalStep, InvalidStep, StateError
from referee.contrivance.rules import apply, chance_outcomes, legal_steps, resolve_chance
from referee.contrivance.scoring import (
    ScoreLine,
    Scoring,
    Verdict,
    burn_outs,
    interlocked_sets,
    interlocks,
    report,
    returns,
    score,
    score_workbench,
)
from referee.contrivance.state import State, Tile, check_invariants, new_game, state_from_json
from referee.contrivance.steps import Step, describe, step_from_json

__all__ = [
    "BUILDERS",
    "CONTRIVANCE",
    "DEFAULT_EDITION",
    "RULES",
    "ContrivanceError",
    "ContrivanceGame",
    "Edition",
    "EditionError",
    "IllegalStep",
    "InvalidStep",
    "ScoreLine",
    "Scoring",
    "State",
    "StateError",
    "Step",
    "Tile",
    "Verdict",
    "apply",
    "burn_outs",
    "chance_outcomes",
    "check_invariants",
    "describe",
    "edition_from_json",
    "interlocked_sets",
    "interlocks",
    "legal_steps",
    "new_game",
    "resolve_chance",
    "returns",
    "score",
    "score_workbench",
    "state_from_json",
    "step_from_json",
]


@dataclass(frozen=True)
class ContrivanceGame:
    """Contrivance behind the game-independent :class:`referee.game.Game` interface."""

    name: str = "contrivance"
    min_players: int = MIN_PLAYERS
    max_players: int = MAX_PLAYERS
    error_type: type[Exception] = ContrivanceError
    illegal_step_type: type[Exception] = IllegalStep
    edition: Edition = DEFAULT_EDITION

    def new_game(self, players: int, rng: random.Random | None = None) -> State:
        state = new_game(players, self.edition)
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
        """The ranking, each row with the reasons of every tile in its Builder's row."""
        scoring = score(state)
        return [
            line.to_json() | {"tiles": [v.reason for v in scoring.verdicts if v.square[0] == line.row]}
            for line in scoring.lines
        ]

    def score_report(self, state: State) -> str:
        return report(score(state))

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


CONTRIVANCE = ContrivanceGame()
