"""Table-side scorekeeping: a game a person enters step by step, in the crash-proof game record.

For any registered game (:mod:`referee.game`), Contrivance first: no camera to explain, so each
step entered is checked by the engine and, once legal, appended to the same append-only SQLite
journal as a refereed Gizmos game (:class:`~referee.tracker.record.GameRecord`) before the
table moves on. Reopening the file replays the journal to where the game stood; an export
rebuilds it; :func:`replayed_states` lists every state it went through. Chance outcomes (a card
drawn, a Switch On's value, the card taken blind, the Contrivance revealed) are entered like
any other step, as the table shows them.

Journal entries: ``setup`` ``{"game", "names", "seed", "observed", "state"}``, ``step``
``{"step"}``, ``correction`` ``{"what": "undo_step"}`` (the last step taken back), ``end``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from referee.game import Game, get_game, players_problem
from referee.tracker.record import GameRecord, RecordError


class ScorekeeperError(ValueError):
    """A game that cannot be created, or a step or undo that makes no sense (one clear line)."""


class Scorekeeper:
    """One game kept by hand: its record, the game, the players' names and every state so far."""

    def __init__(self, record: GameRecord, game: Game[Any, Any], names: list[str], start: Any) -> None:
        self.record = record
        self.game = game
        self.names = names
        self.states: list[Any] = [start]  # the setup, then the state after each step kept
        self.steps: list[Any] = []
        self.ended_by: str | None = None

    @property
    def state(self) -> Any:
        return self.states[-1]

    # ------------------------------------------------------------------ creation and resume

    @classmethod
    def create(
        cls,
        path: str | Path,
        game: str,
        names: list[str],
        seed: int | None = None,
        observed: bool = True,
    ) -> Scorekeeper:
        """A new game recorded at ``path``. With ``observed`` the setup's random outcomes (for
        Contrivance: the Builders, the cards dealt) are entered as steps; else drawn from ``seed``."""
        try:
            rules = get_game(game)
        except KeyError as exc:
            raise ScorekeeperError(exc.args[0]) from exc
        problem = players_problem(rules, len(names))
        if problem is not None:
            raise ScorekeeperError(f"players: {problem}")
        record = GameRecord(path)
        if len(record):
            raise ScorekeeperError(f"{path} already holds a game; open it to resume")
        state = rules.new_game(len(names), None if observed else random.Random(seed))
        record.append(
            "setup",
            {
                "game": rules.name,
                "names": names,
                "seed": seed,
                "observed": observed,
                "state": rules.state_to_json(state),
            },
        )
        return cls(record, rules, names, state)

    @classmethod
    def open(cls, path: str | Path) -> Scorekeeper:
        """Resume a recorded game: replay every entry to the state it stood in."""
        if str(path) != ":memory:" and not Path(path).exists():
            raise RecordError(f"{path}: no such game record")
        return cls._from_record(GameRecord(path))

    @classmethod
    def from_export(cls, data: Any, path: str | Path = ":memory:") -> Scorekeeper:
        """Rebuild a game from :meth:`GameRecord.export` JSON (into a new record at ``path``)."""
        record = GameRecord(path)
        if len(record):
            raise ScorekeeperError(f"{path} already holds a game")
        with record.transaction():
            for entry in GameRecord.entries_of_export(data):
                record.append(entry.kind, entry.payload, who=entry.who, at=entry.time)
        return cls._from_record(record)

    @classmethod
    def _from_record(cls, record: GameRecord) -> Scorekeeper:
        entries = iter(record.entries())
        first = next(entries, None)
        if first is None or first.kind != "setup":
            raise RecordError(f"{record.path}: not a game record (no setup entry)")
        keeper = cls._from_setup(record, first.payload)
        for entry in entries:
            keeper._replay(entry.kind, entry.payload, entry.who)
        return keeper

    @classmethod
    def _from_setup(cls, record: GameRecord, setup: dict[str, Any]) -> Scorekeeper:
        try:
            rules = get_game(str(setup.get("game", "gizmos")))
            names = [str(n) for n in setup["names"]]
            state = rules.state_from_json(setup["state"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(f"{record.path}: bad setup entry ({exc})") from exc
        return cls(record, rules, names, state)

    def _replay(self, kind: str, payload: dict[str, Any], who: str) -> None:
        try:
            if kind == "step":
                step = self.game.step_from_json(payload["step"])
                self._keep(step, self.game.apply(self.state, step))
            elif kind == "correction" and payload.get("what") == "undo_step":
                self._take_back()
            elif kind == "end":
                self.ended_by = str(payload.get("who", who))
            else:
                raise ValueError(f"a kept game has no '{kind}' entries")
        except (KeyError, TypeError, ValueError, ScorekeeperError, self.game.error_type) as exc:
            raise RecordError(f"{self.record.path}: cannot replay a '{kind}' entry: {exc}") from exc

    # ------------------------------------------------------------------ inputs

    def play(self, raw: Any, who: str = "referee") -> Any:
        """Enter one step (its JSON form). A malformed or illegal step raises the game's error
        and records nothing; a legal one is committed to the record, then kept."""
        if self.ended_by is not None:
            raise ScorekeeperError(f"the game was ended by {self.ended_by}")
        step = self.game.step_from_json(raw)
        after = self.game.apply(self.state, step)
        self.record.append("step", {"step": self.game.step_to_json(step)}, who=who)
        self._keep(step, after)
        return after

    def undo(self, who: str = "referee") -> Any:
        """Take back the last step kept (recorded, so a resumed game takes it back too)."""
        if not self.steps:
            raise ScorekeeperError("nothing to undo: no step has been kept yet")
        self.record.append("correction", {"what": "undo_step", "who": who}, who=who)
        self._take_back()
        return self.state

    def end(self, who: str = "referee") -> None:
        """A person ends the game here (no more steps are kept)."""
        self.record.append("end", {"who": who}, who=who)
        self.ended_by = who

    def _keep(self, step: Any, after: Any) -> None:
        self.steps.append(step)
        self.states.append(after)

    def _take_back(self) -> None:
        if not self.steps:
            raise ScorekeeperError("an undo with no step to take back")
        self.steps.pop()
        self.states.pop()

    # ------------------------------------------------------------------ outputs

    def log(self) -> list[str]:
        """Every step kept, as a sentence with the player's name."""
        out = []
        for step in self.steps:
            raw = self.game.step_to_json(step)
            text = self.game.describe(step)
            seat = raw.get("player")
            if isinstance(seat, int) and 0 <= seat < len(self.names):
                for unnamed in (f"seat {seat} ",):  # how both games' describe name an unnamed seat
                    if unnamed in text:
                        text = text.replace(unnamed, f"{self.names[seat]} ", 1)
                        break
            out.append(text)
        return out

    def scores(self) -> list[dict[str, Any]]:
        return self.game.score_table(self.state)

    def export(self) -> dict[str, Any]:
        return self.record.export()


def replayed_states(data: Any) -> Iterator[Any]:
    """Every state of a kept game, from :meth:`GameRecord.export` JSON: the setup, then the state
    after each step still kept (a step taken back and its state are left out)."""
    keeper = Scorekeeper.from_export(data)
    yield from keeper.states
