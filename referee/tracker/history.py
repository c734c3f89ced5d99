"""A recorded game as a sequence of moments: the table after each entry that changed it.

The replay, the score-over-time chart and the exports all read this: the record is replayed
entry by entry exactly as :meth:`Tracker.open` replays it, so every moment's state is the
state the referee held then. A moment later taken back (a turn undone, a state set back by a
correction, a turn the referee explained again) is kept and marked ``void``: it is shown struck
through, never as if it happened, and never counted in a score line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from referee.gizmos import GizmosError, State, describe, ranking, step_from_json
from referee.tracker.base import TrackerError
from referee.tracker.record import Entry, GameRecord, RecordError
from referee.tracker.tracker import Tracker

# How a moment that takes the game back names what it voids.
VOIDED_BY = {"undo": "undone", "correction": "corrected", "revise": "re-explained"}


@dataclass(frozen=True, slots=True)
class Moment:
    """The table after one record entry that changed it (``index`` 0: the setup)."""

    index: int
    seq: int  # the record entry that led here
    time: float
    kind: str  # "setup" | "step" | "undo" | "correction" | "revise" | "end" | "state"
    who: str
    state: State
    text: str  # what happened, in words
    step: dict[str, Any] | None = None
    forced: bool = False  # a step accepted against the rules (see the warnings)
    void: str | None = None  # "undone" | "corrected" | "re-explained": later taken back
    warnings: tuple[int, ...] = ()  # ids of the warnings raised at this moment

    def totals(self) -> list[int]:
        """Each seat's live score (seat order)."""
        by_seat = {line.seat: line.total for line in ranking(self.state)}
        return [by_seat[s] for s in range(self.state.num_players)]


def moments(entries: Iterable[Entry]) -> list[Moment]:
    """Every moment of a game from its record entries (the first must be the setup); raises
    :class:`RecordError` naming an entry that cannot be replayed."""
    it = iter(entries)
    setup = next(it, None)
    if setup is None or setup.kind != "setup":
        raise RecordError("history: the first entry must be the setup")
    tracker = Tracker._from_setup(GameRecord(":memory:"), setup.payload, None)
    names = tracker.names
    out = [Moment(0, setup.seq, setup.time, "setup", setup.who, tracker.state, "the setup")]
    misread: int | None = None  # the card a pending card_id correction says was misread
    for entry in it:
        if entry.kind == "correction" and entry.payload.get("what") == "card_id":
            old = (entry.payload.get("payload") or {}).get("old")
            misread = old if isinstance(old, int) else None
        before = tracker.state
        try:
            tracker._replay(entry.kind, entry.payload, entry.who)
        except (RecordError, TrackerError) as exc:
            raise RecordError(f"history: entry #{entry.seq}: {exc}") from exc
        if entry.kind == "warning" and isinstance(entry.payload.get("id"), int):
            last = out[-1]
            out[-1] = dataclasses.replace(last, warnings=(*last.warnings, entry.payload["id"]))
        if tracker.state == before:
            continue
        kind, text, step, forced = _what(entry, before, names)
        moment = Moment(len(out), entry.seq, entry.time, kind, entry.who, tracker.state, text, step, forced)
        if kind in VOIDED_BY:
            _void_back_to(out, tracker.state, VOIDED_BY[kind])
        if kind == "correction" and misread is not None:
            _void_misread(out, misread, before.turn)
            misread = None
        out.append(moment)
    return out


def _what(entry: Entry, before: State, names: list[str]) -> tuple[str, str, dict[str, Any] | None, bool]:
    p = entry.payload
    if entry.kind == "step":
        try:
            step = step_from_json(p["step"])
        except (KeyError, GizmosError):
            return "step", "a step", p.get("step"), bool(p.get("forced"))
        seat = step.player if step.player is not None else before.current
        name = None if step.is_chance else names[seat]
        return "step", describe(step, name), step.to_json(), bool(p.get("forced"))
    if entry.kind == "correction":
        if p.get("what") == "undo_turn":
            return "undo", f"{p.get('who', entry.who)} undid the turn", None, False
        return "correction", f"{p.get('who', entry.who)} corrected the table ({p.get('what')})", None, False
    if entry.kind == "state":
        reason = str(p.get("reason", "state"))
        kind = reason if reason in VOIDED_BY else "state"
        text = {
            "revise": "the referee explained the turn again",
            "correction": "the table was corrected",
            "undo": "the turn was undone",
        }.get(reason, f"the table was set ({reason})")
        return kind, text, None, False
    if entry.kind == "end":
        return "end", f"{p.get('who', entry.who)} ended the game", None, False
    return entry.kind, entry.kind, None, False


def mentions(step: dict[str, Any] | None, card: int) -> bool:
    """Whether a step (JSON) names ``card``: the card filed, built or revealed, the gizmo used,
    a converter."""
    if not step:
        return False
    return card in (step.get("card"), step.get("gizmo")) or card in (step.get("converters") or [])


def _void_misread(out: list[Moment], card: int, turn: int) -> None:
    """A card of this turn was misread (a card_id correction): this turn's moves that name it
    did not happen as shown."""
    for j, m in enumerate(out):
        if m.void is None and m.kind == "step" and m.state.turn >= turn and mentions(m.step, card):
            out[j] = dataclasses.replace(m, void="corrected")


def _void_back_to(out: list[Moment], state: State, why: str) -> None:
    """The game went back to ``state``: the moments after its latest occurrence are void."""
    for i in range(len(out) - 1, -1, -1):
        if out[i].void is None and out[i].state == state:
            for j in range(i + 1, len(out)):
                if out[j].void is None:
                    out[j] = dataclasses.replace(out[j], void=why)
            return
