"""A simulated table for ``hub --demo``, the tests and the benchmark: random legal play of the
rules engine written to a real game record, one accepted step at a time, in the entry shapes
the tracker writes (a ``setup`` entry, then ``step`` entries, and a ``warning`` now and then).

The record is a plain :class:`~referee.record.GameRecord`, so a :class:`~referee.broadcast.
Broadcaster` publishes it exactly as it publishes a live table's.
"""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

from referee.broadcast import gizmos_summary
from referee.gizmos import State, Step
from referee.gizmos.simulate import random_game
from referee.record import GameRecord

NAMES = ("Ada", "Brook", "Cyd", "Dee", "Emil", "Fay", "Gus", "Hal", "Ivy", "Jo", "Kit", "Lu")


class SimulatedTable:
    """One game of Gizmos played by random legal steps into ``record_path``.

    ``warn_every`` raises an (info) warning every so many steps, and a person dismisses it a few
    steps later, so the hub sees warnings open and close. Thread-safe: :meth:`summary` may be
    called from a broadcaster while :meth:`play` advances.
    """

    def __init__(
        self,
        record_path: str | Path,
        seed: int,
        players: int = 3,
        names: list[str] | None = None,
        warn_every: int = 40,
    ) -> None:
        rng = random.Random(seed)
        self.names = names or rng.sample(NAMES, players)
        moves: list[tuple[State, Step, State]] = []
        play = random_game(len(self.names), seed, lambda b, s, a: moves.append((b, s, a)))
        self._moves = moves
        self._start = moves[0][0] if moves else play.final
        self.state = self._start
        self.warn_every = warn_every
        self._lock = threading.Lock()
        self._next = 0
        self._warnings_open: list[int] = []
        self._warning_ids = 0
        self.record = GameRecord(record_path)
        self.record.append(
            "setup",
            {"names": self.names, "seed": seed, "observed": False, "state": self._start.to_json()},
        )

    @property
    def finished(self) -> bool:
        return self._next >= len(self._moves)

    def play(self) -> int:
        """Accept the next step (and maybe a warning); the last sequence number written."""
        with self._lock:
            if self.finished:
                return len(self.record)
            before, step, after = self._moves[self._next]
            self._next += 1
            with self.record.transaction():
                seq = self.record.append(
                    "step", {"step": step.to_json(), "forced": False, "turn": before.turn}
                )
                if self.warn_every and self._next % self.warn_every == 0:
                    self._warning_ids += 1
                    self._warnings_open.append(self._warning_ids)
                    seq = self.record.append("warning", self._warning(before))
                elif self._warnings_open and self._next % self.warn_every == 5:
                    wid = self._warnings_open.pop(0)
                    seq = self.record.append(
                        "warning_status", {"id": wid, "status": "dismissed", "who": "admin"}, who="admin"
                    )
            self.state = after
            return seq

    def _warning(self, before: State) -> dict[str, Any]:
        return {
            "id": self._warning_ids,
            "kind": "info",
            "turn": before.turn,
            "round": before.round,
            "player": before.current,
            "code": None,
            "rulings": [],
            "message": "simulated: a hand covered the dispenser while marbles were drawn",
            "remedy": "look at the table",
            "time": 0.0,
            "status": "open",
            "decided_by": None,
        }

    def summary(self) -> dict[str, Any]:
        with self._lock:
            return gizmos_summary(
                self.names, self.state, len(self._warnings_open), camera="simulated", sensors="simulated"
            )

    def close(self) -> None:
        self.record.close()
