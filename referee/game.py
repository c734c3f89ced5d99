"""The game-independent interface the referee drives, so a second rule set can plug in.

Modelled on OpenSpiel: a game makes initial states, lists legal steps, applies a step (with an
optional random source for chance), says when a state is terminal and what the returns are, and
moves states and steps to and from JSON. Gizmos implements it in :mod:`referee.gizmos`, Contrivance
(seed 004) in :mod:`referee.contrivance`; :func:`get_game` knows both by name.

The interface, kept small: ``name``, ``min_players``/``max_players`` (read-only; the one check of a
player count is :func:`players_problem`), ``error_type``/``illegal_step_type``, ``new_game``,
``legal_steps``, ``apply``, ``current_player``, ``is_terminal``, ``returns``, ``score_table``,
``score_report``, ``describe`` (a step in words) and JSON in and out for states and steps. The
command line (``new``, ``legal``, ``apply``, ``score``, ``simulate``), the scorekeeper and the
tracker's record, move log, scores and player check (``Tracker.game``) reach the rules through it.
"""

from __future__ import annotations

import random
from typing import Any, Protocol, TypeVar

S = TypeVar("S")
A = TypeVar("A")


class Game(Protocol[S, A]):
    """A rule set. States and steps are immutable values; every method is pure.

    ``error_type`` is the base of every error the engine raises for bad input (a malformed step
    or state, a broken rule); ``illegal_step_type`` the broken rule itself, whose instances have
    a stable ``code`` and ``to_json()``. A state's JSON names its game: ``"format": "<name>-state"``.
    """

    @property
    def name(self) -> str:
        """The game's registry name (``"gizmos"``)."""
        ...

    @property
    def min_players(self) -> int: ...

    @property
    def max_players(self) -> int: ...

    @property
    def error_type(self) -> type[Exception]: ...

    @property
    def illegal_step_type(self) -> type[Exception]: ...

    def new_game(self, players: int, rng: random.Random | None = None) -> S:
        """The initial state; with ``rng`` its setup randomness is resolved, else left to the caller."""
        ...

    def legal_steps(self, state: S) -> list[A]:
        """Every legal next step (chance outcomes at a chance node)."""
        ...

    def apply(self, state: S, step: A, rng: random.Random | None = None) -> S:
        """The next state, or raise the game's rule-violation error with a stable code."""
        ...

    def current_player(self, state: S) -> int | None:
        """The seat to act, or ``None`` at a chance node or when the game is over."""
        ...

    def is_terminal(self, state: S) -> bool: ...

    def returns(self, state: S) -> list[float]:
        """Per-seat outcome of a finished game (1 for the winner, 0 otherwise)."""
        ...

    def score_table(self, state: S) -> list[dict[str, Any]]:
        """The scoring table, best first, as JSON-ready rows."""
        ...

    def score_report(self, state: S) -> str:
        """The scoring as plain text for a person to check (the CLI's ``score``)."""
        ...

    def describe(self, step: A, name: str | None = None) -> str:
        """The step as a plain sentence for the move log and ``legal --text``; ``name`` is the
        player's (without it: "seat N")."""
        ...

    def state_to_json(self, state: S) -> dict[str, Any]: ...

    def state_from_json(self, raw: Any) -> S: ...

    def step_to_json(self, step: A) -> dict[str, Any]: ...

    def step_from_json(self, raw: Any) -> A: ...


def players_problem(game: Game[Any, Any], count: int) -> str | None:
    """Why ``count`` players cannot play ``game`` (``"Gizmos is for 2-4 players, got 5"``), or
    ``None``: the one place a player count is checked against the game's own limits."""
    if game.min_players <= count <= game.max_players:
        return None
    return f"{game.name.capitalize()} is for {game.min_players}-{game.max_players} players, got {count}"


def registered_games() -> dict[str, Game[Any, Any]]:
    """Every game the referee hosts, by name."""
    from referee.contrivance import CONTRIVANCE
    from referee.gizmos import GIZMOS

    return {GIZMOS.name: GIZMOS, CONTRIVANCE.name: CONTRIVANCE}


def game_of_state(raw: Any) -> Game[Any, Any]:
    """The registered game a state's JSON belongs to, from its ``"format"``."""
    formats = {f"{name}-state": game for name, game in registered_games().items()}
    fmt = raw.get("format") if isinstance(raw, dict) else None
    if fmt not in formats:
        raise KeyError(f'state: expected a JSON object with "format": one of {sorted(formats)}, got {fmt!r}')
    return formats[fmt]


def get_game(name: str) -> Game[Any, Any]:
    """The registered game called ``name``."""
    games = registered_games()
    if name not in games:
        raise KeyError(f"unknown game {name!r}; known: {sorted(games)}")
    return games[name]
