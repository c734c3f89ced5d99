"""Camera only: whose arm reached in, as evidence of whose turn it was.

A Research declined leaves the table as it was, so from the table alone a whole round of
declined Research reads like a second marble taken, and "a traceless turn, a move, a traceless
turn" like a move out of turn. The players' arms tell them apart: the observation's
``reaches`` (:class:`referee.observation.ReachSighting`) say which seat's arm reached over the
table. :class:`ArmLog` keeps the seats seen reaching since the last accepted table;
:func:`reach_cost` weighs a reading (the players its steps say acted, in order,
:func:`actors`) against them, in the same unit as the tracker's other weights (a turn that left
no trace weighs 1: one turn in ten): an acting player whose arm was never seen, an arm seen
that no step of the reading explains.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from referee.gizmos import State, Step
from referee.observation import ReachSighting

#: A sighting below this confidence is not counted.
MIN_CONFIDENCE = 0.5
#: A turn's acting player whose arm was never seen (every gesture of the turn missed: about one
#: in twenty for a single gesture; a Research declined is three or four).
W_MISSED = 1.3
#: An arm seen that no step of the reading explains (a stray hand, a seat misread: about one
#: turn in twenty).
W_STRAY = 1.3


@dataclass(frozen=True, slots=True)
class ArmLog:
    """The arms seen reaching since the last accepted table: (frame, seat) in order; the seats
    the last accepted explanation accounted for (``spent``: a later reading that goes back over
    it weighs them again); and whether the camera reports hands at all (``reported``; if it
    never did, reaches weigh nothing and the tracker reads the table alone). Immutable: the
    tracker swaps it, so a failed record write restores it with the rest."""

    reported: bool = False
    seen: tuple[tuple[int, int], ...] = ()
    spent: tuple[int, ...] = ()

    def add(self, frame: int, reaches: Iterable[ReachSighting] | None) -> ArmLog:
        """The reaches of one observation (``None``: the pipeline does not report hands)."""
        if reaches is None:
            return self
        new = tuple((frame, r.seat) for r in reaches if r.seat is not None and r.confidence >= MIN_CONFIDENCE)
        if self.reported and not new:
            return self
        return ArmLog(True, self.seen + new, self.spent)

    def before(self, frame: int) -> tuple[int, ...]:
        """The seats seen reaching before ``frame``, in order."""
        return tuple(seat for f, seat in self.seen if f < frame)

    def consume(self, frame: int) -> ArmLog:
        """An explanation of the table that stood from ``frame`` on was accepted: the arms seen
        before it are accounted for (kept as ``spent``), those seen since wait for the next."""
        return ArmLog(self.reported, tuple((f, s) for f, s in self.seen if f >= frame), self.before(frame))

    def cost(self, start: State, steps: Sequence[Step], frame: int, again: bool = False) -> float:
        """How a reading (``steps`` from ``start``) fits the arms seen before ``frame`` (with
        ``again``: and those the last accepted explanation accounted for, for a reading from
        before it). 0 when the camera does not report hands."""
        if not self.reported:
            return 0.0
        seen = (self.spent if again else ()) + self.before(frame)
        return reach_cost(actors(start, steps), seen)

    def turns(self, start: State, frame: int) -> int | None:
        """How many turns the arms seen before ``frame`` say ended, if every arm reached in its
        own turn (the seats in turn order from the current player; ``None``: no arm but the
        current player's was seen)."""
        if not self.reported:
            return None
        n, seat, ends = start.num_players, start.current, 0
        for s in self.before(frame):
            if 0 <= s < n and s != seat:
                ends += (s - seat) % n
                seat = s
        return ends or None


def actors(start: State, steps: Sequence[Step]) -> list[int]:
    """The players a reading says acted, in order, one entry per run: the player of each of its
    steps, and the player of each turn it ends that left no trace (a Research declined: the
    player's arm reached to a deck). Ending a turn and random outcomes are no gesture."""
    out: list[int] = []
    current = start.current
    acted = start.main_done  # the current turn's main action came before the reading
    for step in steps:
        if step.is_chance:
            continue
        if step.kind == "end_turn":
            if not acted:
                out.append(current)
            current = (current + 1) % start.num_players
            acted = False
            continue
        out.append(step.player if step.player is not None else current)
        acted = True
    return [s for i, s in enumerate(out) if i == 0 or out[i - 1] != s]


def reach_cost(expected: Sequence[int], seen: Sequence[int]) -> float:
    """The weight of the arms ``seen`` (seats, in order) against the players ``expected`` to
    act (in order, one per run): each expected player whose arm was not seen in its place costs
    W_MISSED, each arm seen that no expected player accounts for W_STRAY; an expected player
    accounts for any number of sightings of their own arm in a row (one gesture seen in several
    frames, or several gestures), even with a stray arm between them. The cheapest alignment."""
    observed = [s for i, s in enumerate(seen) if i == 0 or seen[i - 1] != s]
    n = len(expected)
    # state: (how many expected players were reached, whether the last of them was seen) -> cost
    best: dict[tuple[int, bool], float] = {(0, False): 0.0}
    for seat in observed:
        nxt: dict[tuple[int, bool], float] = {}
        for (i, hit), cost in best.items():
            options = [((i, hit), cost + W_STRAY)]  # a stray arm
            if i and expected[i - 1] == seat:
                options.append(((i, True), cost))  # the same player's arm again
            missed = W_MISSED * (i > 0 and not hit)
            for k in range(i, n):  # the next players, those skipped missed
                if expected[k] == seat:
                    options.append(((k + 1, True), cost + missed + W_MISSED * (k - i)))
            for key, c in options:
                if c < nxt.get(key, float("inf")):
                    nxt[key] = c
        best = nxt
    return min(cost + W_MISSED * ((i > 0 and not hit) + n - i) for (i, hit), cost in best.items())
