"""Observations of a known table, perfect or with realistic noise.

Used by the tests, the referee benchmark and the demo to feed the tracker the way a camera
pipeline would: the same table for several frames, items missing, confidences dipping, a hand
covering a zone for a few frames, an occasional misread.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from referee.gizmos.cards import COLORS
from referee.gizmos.state import Counts, State
from referee.observation import CardSighting, MarbleSighting, Observation, PlayerSighting, SlotSighting


@dataclass(frozen=True, slots=True)
class Noise:
    """Per-frame probabilities of each kind of trouble."""

    missing: float = 0.0  # a zone reported as not seen
    dip: float = 0.0  # one item's confidence falls below the threshold
    hand: float = 0.0  # a hand starts covering a zone (it stays for `hand_frames` frames)
    hand_frames: int = 3
    misread: float = 0.0  # one marble colour or card id read wrong in one frame

    @classmethod
    def default(cls) -> Noise:
        """The default noise level of the referee benchmark."""
        return cls(missing=0.03, dip=0.05, hand=0.03, hand_frames=3, misread=0.02)


def _marbles(counts: Counts, conf: float) -> tuple[MarbleSighting, ...]:
    return tuple(MarbleSighting(COLORS[c], conf) for c in range(4) for _ in range(counts[c]))


def perfect_observation(state: State, time: float = 0.0, frame: int | None = None) -> Observation:
    """Everything on the table, seen with confidence 0.99."""
    conf = 0.99
    display = tuple(
        SlotSighting(lvl + 1, s, c, conf) for lvl, row in enumerate(state.display) for s, c in enumerate(row)
    )
    players = tuple(
        PlayerSighting(
            seat=i,
            ring=_marbles(p.ring, conf),
            archive=tuple(CardSighting(c, conf) for c in p.archive),
            gizmos=tuple(CardSighting(c, conf) for c in p.gizmos),
            vp_tokens=(p.vp_tokens, conf),
        )
        for i, p in enumerate(state.players)
    )
    return Observation(time=time, display=display, energy_row=_marbles(state.row, conf), players=players, frame=frame)


class Camera:
    """Frames of a table with noise; hands persist over frames like real ones."""

    def __init__(self, noise: Noise, seed: int = 0) -> None:
        self.noise = noise
        self.rng = random.Random(seed)
        self.frame = 0
        self.covered: dict[str, int] = {}  # zone -> frames left under a hand

    def zones(self, state: State) -> list[str]:
        return ["row", "display"] + [f"{z}{i}" for i in range(state.num_players) for z in ("ring", "archive", "gizmos")]

    def shoot(self, state: State, time: float) -> Observation:
        """One frame of ``state``."""
        rng, n = self.rng, self.noise
        self.frame += 1
        obs = perfect_observation(state, time, self.frame)
        if n.hand and rng.random() < n.hand:
            self.covered[rng.choice(self.zones(state))] = n.hand_frames
        hidden = {z for z, left in self.covered.items() if left > 0}
        self.covered = {z: left - 1 for z, left in self.covered.items() if left > 1}
        if n.missing and rng.random() < n.missing:
            hidden.add(rng.choice(self.zones(state)))
        row = None if "row" in hidden else obs.energy_row
        display = () if "display" in hidden else obs.display
        players = tuple(
            PlayerSighting(
                seat=p.seat,
                ring=None if f"ring{p.seat}" in hidden else p.ring,
                archive=None if f"archive{p.seat}" in hidden else p.archive,
                gizmos=None if f"gizmos{p.seat}" in hidden else p.gizmos,
                vp_tokens=p.vp_tokens,
            )
            for p in obs.players
        )
        if n.dip and rng.random() < n.dip and row:
            i = rng.randrange(len(row))
            row = (*row[:i], MarbleSighting(row[i].color, 0.3), *row[i + 1 :])
        if n.misread and rng.random() < n.misread and row:
            i = rng.randrange(len(row))
            wrong = rng.choice([c for c in COLORS if c != row[i].color])
            row = (*row[:i], MarbleSighting(wrong, 0.9), *row[i + 1 :])
        return Observation(time=time, display=display, energy_row=row, players=players, frame=self.frame)
