"""A game to look at without a table: a dealt game played on by random legal steps.

``gizmos-referee serve --demo`` opens one so the dashboard can be tried (and the docs'
screenshots made) with no camera and no cards; the browser test uses it too.
"""

from __future__ import annotations

import random

from referee.simulation.players import random_step
from web.hub import Hub, LiveGame

DEMO_NAMES = ["Ana", "Ben", "Chloé"]


def play_random(game: LiveGame, rng: random.Random, turns: int, who: str = "demo") -> int:
    """Play random legal steps (the simulation's uniform player,
    :func:`~referee.simulation.players.random_step`) until ``turns`` more turns have ended or the
    game is over.

    Returns the number of steps played. Everything goes through the tracker, so the record,
    the move log and the pages see a real (if aimless) game."""
    played = 0
    with game.locked() as tracker:
        target = tracker.state.turn + turns
        while tracker.state.turn < target and not tracker.state.game_over:
            steps = tracker.legal_steps()
            if not steps:
                break
            tracker.play(random_step(steps, rng), who=who)
            played += 1
    return played


def demo_game(hub: Hub, seed: int = 7, turns: int = 24, names: list[str] | None = None) -> LiveGame:
    """A new dealt game (seeded) with ``turns`` turns already played."""
    game = hub.create(names or DEMO_NAMES, seed=seed, deal=True)
    play_random(game, random.Random(seed), turns)
    return game
