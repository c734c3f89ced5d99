"""A simulated table for ``hub --demo``, the tests and the benchmark: random legal play of a
rules engine (Gizmos or Contrivance, through :mod:`referee.game`) written to a real game
record, one accepted step at a time, in the entry shapes the tracker writes (a ``setup``
entry, then ``step`` entries, and a ``warning`` now and then).

The record is a plain :class:`~referee.tracker.GameRecord`, so a
:class:`~referee.app.broadcast.Broadcaster` publishes it exactly as it publishes a live table's.
"""

from __future__ import annotations

import heapq
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee.app.broadcast import Broadcaster, BrokerConfig, table_summary
from referee.game import get_game
from referee.tracker import GameRecord

NAMES = ("Ada", "Brook", "Cyd", "Dee", "Emil", "Fay", "Gus", "Hal", "Ivy", "Jo", "Kit", "Lu")


#: Random play longer than this many steps is cut short (no registered game comes near it).
MAX_STEPS = 20_000


class SimulatedTable:
    """One game of ``game`` ("gizmos", "contrivance") played by random legal steps into ``record_path``.

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
        game: str = "gizmos",
    ) -> None:
        rng = random.Random(seed)
        self.game = get_game(game)
        self.names = names or rng.sample(NAMES, players)
        state = self._start = self.game.new_game(len(self.names), rng)
        moves: list[tuple[Any, Any, Any]] = []
        while not self.game.is_terminal(state) and len(moves) < MAX_STEPS:
            step = rng.choice(self.game.legal_steps(state))
            after = self.game.apply(state, step, rng)
            moves.append((state, step, after))
            state = after
        self._moves = moves
        self.state = self._start
        self.warn_every = warn_every
        self._lock = threading.Lock()
        self._next = 0
        self._warnings_open: list[int] = []
        self._warning_ids = 0
        self.record = GameRecord(record_path)
        self.record.append(
            "setup",
            {
                "game": self.game.name,
                "names": self.names,
                "seed": seed,
                "observed": False,
                "state": self.game.state_to_json(self._start),
            },
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

    def _warning(self, before: Any) -> dict[str, Any]:
        return {
            "id": self._warning_ids,
            "kind": "info",
            "turn": getattr(before, "turn", None),
            "round": getattr(before, "round", None),
            "player": self.game.current_player(before),
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
            return table_summary(
                self.game, self.names, self.state, len(self._warnings_open), "simulated", "simulated"
            )

    def close(self) -> None:
        self.record.close()


class Fleet:
    """``configs`` tables (table id -> broker login) playing game after game (of ``games``, in turn
    by table: Gizmos and Contrivance side by side) into records under
    ``folder``, one accepted entry per table every ``pace`` seconds (with jitter), each game
    broadcast by its own :class:`Broadcaster`. ``on_play(table, seq)`` sees every entry written.
    """

    def __init__(
        self,
        folder: str | Path,
        configs: dict[str, BrokerConfig],
        pace: float,
        seed: int = 0,
        players: int = 3,
        rounds: int = 0,
        on_play: Callable[[str, int], None] | None = None,
        games: tuple[str, ...] = ("gizmos",),
    ) -> None:
        self.folder = Path(folder)
        self.games = {t: games[k % len(games)] for k, t in enumerate(configs)}  # side by side
        self.folder.mkdir(parents=True, exist_ok=True)
        self.configs = configs
        self.pace = pace
        self.seed = seed
        self.players = players
        self.rounds = rounds  # 0: no limit
        self.on_play = on_play
        self.written = 0
        self.tables: dict[str, tuple[SimulatedTable, Broadcaster, int]] = {}
        self._rng = random.Random(seed)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fleet", daemon=True)
        self._retired: list[threading.Thread] = []

    def _new_game(self, table: str, number: int) -> None:
        game = f"{table}-r{number}"
        sim = SimulatedTable(
            self.folder / f"{game}.sqlite",
            seed=self.seed * 100_000 + hash_id(table) * 100 + number,
            players=self.players,
            game=self.games[table],
        )
        caster = Broadcaster(self.configs[table], table, game, sim.record.path, sim.summary).start()
        self.tables[table] = (sim, caster, number)

    def start(self) -> Fleet:
        for table in self.configs:
            self._new_game(table, 1)
        self._thread.start()
        return self

    def _run(self) -> None:
        due = [(time.monotonic() + self._rng.uniform(0, self.pace), t) for t in self.configs]
        heapq.heapify(due)
        while due and not self._stop.is_set():
            at, table = heapq.heappop(due)
            wait = at - time.monotonic()
            if wait > 0 and self._stop.wait(wait):
                return
            sim, caster, number = self.tables[table]
            if sim.finished:
                retire = threading.Thread(target=caster.stop, kwargs={"drain_s": 30.0}, daemon=True)
                retire.start()
                self._retired.append(retire)
                if self.rounds and number >= self.rounds:
                    continue
                self._new_game(table, number + 1)
                heapq.heappush(due, (time.monotonic() + 3 * self.pace, table))
                continue
            seq = sim.play()
            self.written += 1
            caster.changed()
            if self.on_play is not None:
                self.on_play(table, seq)
            heapq.heappush(due, (at + self.pace * self._rng.uniform(0.5, 1.5), table))

    def halt(self) -> None:
        """Stop playing (the broadcasters go on publishing what was written)."""
        self._stop.set()
        self._thread.join(timeout=5)

    def stop(self, drain_s: float = 0.0) -> None:
        """Stop playing, then each table's broadcaster (after up to ``drain_s`` s of confirming)."""
        self.halt()
        end = time.monotonic() + drain_s
        for sim, caster, _ in self.tables.values():
            caster.stop(drain_s=max(0.0, end - time.monotonic()))
            sim.close()
        for retire in self._retired:
            retire.join(timeout=1)


def hash_id(table: str) -> int:
    """A small stable number from a table id (``hash`` differs between runs)."""
    return sum((i + 1) * ord(ch) for i, ch in enumerate(table)) % 1000
