"""Simulated players: how a seat chooses its next legal step.

The one home of the players every simulated game uses: :func:`random_step` (uniform, the
engines' random playthroughs and the dashboard's demo), :func:`choose_step` with a
:data:`TASTES` entry (the referee benchmark's corpus) and :func:`greedy_step` (the bundled
recording's plausible players). A player only chooses; the loop that applies its choice (and
any rule break put in on purpose, :mod:`referee.simulation.breaks`) belongs to the caller.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

from referee.gizmos import State, Step, default_cards, legal_steps
from referee.gizmos.cards import COLOR_INDEX

CARDS = default_cards()
T = TypeVar("T")

#: How much simple players like each kind of step, one taste per seat (round the table):
#: a builder, a hoarder who fills the ring, a filer. Triggered gizmos are nearly always used.
TASTES: tuple[dict[str, float], ...] = (
    {"use": 8.0, "build": 6.0, "pick": 3.0, "file": 1.5, "research": 1.0},
    {"use": 8.0, "build": 1.5, "pick": 8.0, "file": 1.0, "research": 0.5},
    {"use": 8.0, "build": 3.0, "pick": 2.0, "file": 4.0, "research": 1.5},
)

#: Built gizmos of one kind a greedy player stops at: a dashboard column longer than this runs
#: off the filmed table.
MAX_COLUMN = 6


def random_step(options: Sequence[T], rng: random.Random) -> T:
    """A uniformly random choice among legal steps (of any game)."""
    return rng.choice(options)


def choose_step(options: list[Step], rng: random.Random, taste: dict[str, float] = TASTES[0]) -> Step:
    """A simple player's choice among legal steps (weighted by ``taste``, 1 for kinds it does
    not name, spread evenly over the steps of a kind so many ways to pay do not favour a Build)."""
    kinds: dict[str, list[Step]] = {}
    for step in options:
        kinds.setdefault(step.kind, []).append(step)
    names = sorted(kinds)
    kind = rng.choices(names, weights=[taste.get(k, 1.0) for k in names])[0]
    return rng.choice(kinds[kind])


def card_value(card: int) -> float:
    """How much a greedy player wants a card: its VP, plus a little for what it does."""
    e = CARDS[card].effect
    bonus = {"vp_tokens": 1.5, "pick_row": 1.0, "draw_random": 0.8, "build_free": 1.0}.get(e.reward, 0.5)
    if e.kind in ("convert_to_any", "convert_double", "upgrade_limits", "discount"):
        bonus = 1.0
    if e.kind == "forbid_action":
        bonus = -1.0
    return CARDS[card].vp * 2 + bonus


def has_room(state: State, seat: int, card: int) -> bool:
    """Whether the card's column of built gizmos stays within :data:`MAX_COLUMN`."""
    kind = CARDS[card].type
    return sum(CARDS[g].type == kind for g in state.players[seat].gizmos) < MAX_COLUMN


def greedy_step(state: State, rng: random.Random) -> Step:
    """A plausible player: build the best card it can, else pick towards one, else file, else research."""
    steps = legal_steps(state)
    seat = state.current
    p = state.players[seat]

    def best_build() -> Step | None:
        builds = [s for s in steps if s.kind == "build" and has_room(state, seat, s.card or 0)]
        if not builds:
            return None
        return max(
            builds,
            key=lambda s: (card_value(s.card or 0), -sum(s.pay or ()), -len(s.converters), -(s.card or 0)),
        )

    def best_of(kind: str) -> Step | None:
        cands = [s for s in steps if s.kind == kind]
        return max(cands, key=lambda s: (card_value(s.card or 0), -(s.card or 0))) if cands else None

    def wanted_pick() -> Step | None:
        picks = [s for s in steps if s.kind == "pick"]
        if not picks:
            return None
        targets = [c for row in state.display for c in row if c is not None] + list(p.archive)
        targets = [c for c in targets if has_room(state, seat, c) and CARDS[c].color in COLOR_INDEX]
        targets.sort(
            key=lambda c: (CARDS[c].cost - p.ring[COLOR_INDEX[CARDS[c].color]] - card_value(c) / 3, c)
        )
        for c in targets[:3]:
            for s in picks:
                if s.color == COLOR_INDEX[CARDS[c].color]:
                    return s
        return rng.choice(picks)

    pend = state.pending
    if pend is not None:
        if pend.kind == "research" and pend.chosen:
            return steps[0]
        choice = best_build() or best_of("file") or wanted_pick()
        return choice or next(s for s in steps if s.kind == "skip")
    if not state.main_done:
        choice = best_build() or wanted_pick() or best_of("file")
        if choice is None:
            research = [s for s in steps if s.kind == "research"]
            choice = rng.choice(research) if research else steps[0]
        return choice
    uses = [s for s in steps if s.kind == "use"]
    return uses[0] if uses else next(s for s in steps if s.kind == "end_turn")
