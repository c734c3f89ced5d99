"""Random legal play: the engine's own playthrough and the simulator behind the CLI."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from referee.contrivance.data import DEFAULT_EDITION, Edition
from referee.contrivance.rules import apply, legal_steps, resolve_chance
from referee.contrivance.state import State, new_game
from referee.contrivance.steps import Step

#: A game longer than this many player steps is reported as not terminating.
MAX_STEPS = 20_000


class GameDidNotEnd(RuntimeError):
    """Random play ran past :data:`MAX_STEPS` without the game ending."""


@dataclass(frozen=True, slots=True)
class Playthrough:
    """One finished random game."""

    seed: int
    final: State
    steps: int


def random_game(
    players: int,
    seed: int,
    on_step: Callable[[State, Step, State], None] | None = None,
    max_steps: int = MAX_STEPS,
    edition: Edition = DEFAULT_EDITION,
) -> Playthrough:
    """Play uniformly random legal steps from a seeded setup until the game is over.

    ``on_step(before, step, after)`` sees every player step (chance is resolved inside apply).
    """
    rng = random.Random(seed)
    state = resolve_chance(new_game(players, edition), rng)
    n = 0
    while not state.game_over:
        if n >= max_steps:
            raise GameDidNotEnd(f"seed {seed}: no end after {max_steps} steps (turn {state.turn})")
        step = rng.choice(legal_steps(state))
        after = apply(state, step, rng)
        if on_step is not None:
            on_step(state, step, after)
        state = after
        n += 1
    return Playthrough(seed=seed, final=state, steps=n)
