"""Random legal play of any registered game: the one loop behind the CLI's ``simulate``, the
engines' random-playthrough tests and anything else that needs whole games."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from referee.game import Game
from referee.simulation.players import random_step

#: A game longer than this many player steps is reported as not terminating.
MAX_STEPS = 20_000


class GameDidNotEnd(RuntimeError):
    """Random play ran past its step limit without the game ending."""


@dataclass(frozen=True, slots=True)
class Playthrough:
    """One finished random game."""

    seed: int
    final: Any
    steps: int


def random_game(
    game: Game[Any, Any],
    players: int,
    seed: int,
    on_step: Callable[[Any, Any, Any], None] | None = None,
    max_steps: int = MAX_STEPS,
) -> Playthrough:
    """Play uniformly random legal steps (:func:`~referee.simulation.players.random_step`) from a
    seeded setup until the game ends.

    ``on_step(before, step, after)`` sees every player step (chance is resolved inside ``apply``).
    """
    rng = random.Random(seed)
    state = game.new_game(players, rng)
    n = 0
    while not game.is_terminal(state):
        if n >= max_steps:
            turn = getattr(state, "turn", "?")  # both games' states count turns
            raise GameDidNotEnd(f"seed {seed}: no end after {max_steps} steps (turn {turn})")
        step = random_step(game.legal_steps(state), rng)
        after = game.apply(state, step, rng)
        if on_step is not None:
            on_step(state, step, after)
        state = after
        n += 1
    return Playthrough(seed=seed, final=state, steps=n)
