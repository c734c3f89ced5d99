"""The move log in plain language, one entry per turn, read from the game record.

"Ana built #57 from their Archive, paying 2 blue; their Build gizmo #33 gave them a yellow from
the Row." A sentence like that needs to know where a card came from and what a gizmo gave, so
the :class:`Narrator` reads the record (the source of truth, also for a reopened game) and
replays each step on the state it was taken from: the step says what was done, the states
before and after say from where and with what result. A turn's sentence is built from clauses:
the main action, each gizmo used and what it gave (the granted pick, file, research or free
build, the marbles drawn, the VP), the Research drawn and chosen, and the refills last.

Finished entries never change; only the last one (the turn in progress) grows, so the page can
be sent the log from the first unfinished entry on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from referee.gizmos import (
    COLORS,
    GizmosError,
    State,
    Step,
    apply,
    default_cards,
    describe,
    force,
    marbles,
    ranking,
    state_from_json,
    step_from_json,
)
from referee.tracker.history import mentions

CARDS = default_cards()
ROMAN = {1: "I", 2: "II", 3: "III"}
NOT_REVISED = 1 << 62
GRANTED = ("pick_row", "file_action", "research_action", "build_free")  # rewards that are actions


def listing(items: list[str]) -> str:
    """``["a", "b", "c"]`` -> ``"a, b and c"``."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def gizmo_name(gizmo: int) -> str:
    """ "Build gizmo #33", "Starting Gizmo #0": the column name players know it by."""
    card = CARDS[gizmo]
    if card.level == 0:
        return f"Starting Gizmo #{gizmo}"
    return f"{card.type.capitalize()} gizmo #{gizmo}"


def _a(color: int) -> str:
    return f"a {COLORS[color]}"


@dataclass
class _Research:
    """A Research: the deck, the cards drawn, what was chosen, what went back under the deck."""

    level: int
    drawn: list[int] = field(default_factory=list)
    choice: str | None = None
    bottom: list[int] = field(default_factory=list)

    def text(self, past: bool) -> str:
        verb = "researched" if past else "research"
        out = f"{verb} the Level {ROMAN[self.level]} deck"
        if self.drawn:
            out += ", drawing " + listing([f"#{c}" for c in self.drawn])
        if self.choice:
            out += ", and " + self.choice
        if self.bottom:
            out += "; " + listing([f"#{c}" for c in self.bottom]) + " went under the deck"
        return out


@dataclass
class _Gift:
    """A gizmo used, and what it gave (filled in as the steps it caused arrive)."""

    gizmo: int
    reward: str
    vp: int = 0
    drawn: list[int] = field(default_factory=list)  # colors drawn from the dispenser
    picked: list[int] = field(default_factory=list)  # colors picked from the Row
    action: str | None = None  # the granted File/Build, in the infinitive
    research: _Research | None = None
    declined: bool = False

    def text(self, done: bool) -> str:
        who = f"their {gizmo_name(self.gizmo)}"
        r = self.reward
        if r == "vp_tokens":
            return f"{who} gave them {self.vp} VP"
        if r == "draw_random":
            if self.drawn:
                return f"{who} gave them {listing([_a(c) for c in self.drawn])} from the dispenser"
            return (
                f"{who} gave them nothing (no room in the ring)"
                if done
                else f"{who} draws from the dispenser"
            )
        if r == "pick_row":
            if self.picked:
                out = f"{who} gave them {listing([_a(c) for c in self.picked])} from the Row"
                return out + (", then they stopped" if self.declined else "")
            return f"{who} offered a pick from the Row" + (", which they declined" if self.declined else "")
        if self.research is not None:
            return f"{who} let them " + self.research.text(past=False)
        if self.action is not None:
            return f"{who} let them {self.action}"
        offered = {"file_action": "a File", "research_action": "a Research", "build_free": "a free Build"}
        return f"{who} offered {offered.get(r, 'an action')}" + (
            ", which they declined" if self.declined else ""
        )


@dataclass
class Entry:
    """One line of the log: a turn, the setup, a correction or the end of the game."""

    kind: str  # "setup" | "turn" | "correction" | "end"
    text: str
    turn: int | None = None
    round: int | None = None
    player: int | None = None
    name: str | None = None
    done: bool = True
    forced: bool = False
    steps: list[dict[str, Any]] = field(default_factory=list)
    ended: str | None = None  # how the turn's end was known: "signal", "table" (inferred), "person"
    void: str | None = None  # "undone" | "corrected": taken back later, shown struck through

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class _Turn:
    """The turn being narrated."""

    def __init__(self, seat: int, turn: int, rnd: int, name: str, continued: bool) -> None:
        self.seat, self.turn, self.round, self.name = seat, turn, rnd, name
        self.continued = continued
        self.clauses: list[Any] = []  # str | _Gift | _Research (main action)
        self.gift: _Gift | None = None  # the gift whose granted action is awaited
        self.research: _Research | None = None  # the Research whose hand is open
        self.refills: list[str] = []
        self.row: list[int] = []
        self.steps: list[dict[str, Any]] = []
        self.forced = False
        self.done = False
        self.ended: str | None = None

    def text(self) -> str:
        parts = []
        for c in self.clauses:
            if isinstance(c, _Gift):
                parts.append(c.text(self.done))
            elif isinstance(c, _Research):
                parts.append(c.text(past=True))
            else:
                parts.append(c)
        subject = self.name + (", continuing," if self.continued else "")
        body = "; ".join(parts) if parts else ("ended the turn" if self.done else "is thinking")
        out = f"{subject} {body}"
        refills = list(self.refills)
        if self.row:
            refills.append("the Row refilled with " + listing([COLORS[c] for c in self.row]))
        if refills:
            out += " (" + "; ".join(refills) + ")"
        if self.forced:
            out += " — against the rules, see the warnings"
        if self.ended == "table":
            out += " [turn end seen from the table]"
        return out + ("." if self.done else " …")

    def entry(self) -> Entry:
        return Entry(
            "turn",
            self.text(),
            self.turn,
            self.round,
            self.seat,
            self.name,
            self.done,
            self.forced,
            self.steps,
            self.ended,
        )


class Narrator:
    """Reads record entries in order and keeps the move log (see the module docstring)."""

    def __init__(self, names: list[str], state: State) -> None:
        self.names = names
        self.state = state
        self.finished: list[Entry] = []
        self._turn: _Turn | None = None
        self._setup_open = True  # until the first player step
        if not state.chance:  # dealt by the referee: the setup is known at once
            self._setup_open = False
            self.finished.append(Entry("setup", setup_text(state), 0, 1))
        self._interrupted: int | None = None  # the turn a correction cut into
        self.revised = NOT_REVISED  # the first finished entry changed since take_revised()

    # ------------------------------------------------------------------ input

    def feed(self, kind: str, payload: dict[str, Any], who: str) -> None:
        """One record entry (``GameRecord.entries()`` yields them in order)."""
        if kind == "step":
            try:
                step = step_from_json(payload["step"])
            except (KeyError, GizmosError):
                return
            self._step(step, bool(payload.get("forced")), payload.get("ended"))
        elif kind == "state":
            try:
                self.state = state_from_json(payload.get("state"))
            except GizmosError:
                return
            if payload.get("reason") == "revise":
                self._forget_turn(self.state.turn)
            elif payload.get("reason") in ("undo", "correction"):
                self._void_from(self.state.turn, "undone" if payload["reason"] == "undo" else "corrected")
        elif kind == "correction":
            self._close(interrupted=True)
            if payload.get("what") == "card_id":
                self._void_misread((payload.get("payload") or {}).get("old"))
            self.finished.append(
                Entry("correction", correction_text(payload, who, self.names), self.state.turn)
            )
        elif kind == "end":
            self._close(interrupted=True)
            self.finished.append(Entry("end", f"The game was ended by {payload.get('who', who)}."))

    def entries(self) -> list[dict[str, Any]]:
        """Every entry, the one in progress last."""
        out = [e.to_json() for e in self.finished]
        current = self._current()
        if current is not None:
            out.append(current.to_json())
        return out

    # ------------------------------------------------------------------ steps

    def _current(self) -> Entry | None:
        if self._turn is not None:
            return self._turn.entry()
        if self._setup_open:
            left = len(self.state.chance)
            if left:
                text = f"Setting up: {left} card(s) and marble(s) still to be entered …"
            else:
                text = setup_text(self.state)[:-1] + " …"
            return Entry("setup", text, 0, 1, done=False)
        return None

    def _step(self, step: Step, forced: bool, ended: str | None = None) -> None:
        before = self.state
        try:
            after = force(before, step)[0] if forced else apply(before, step)
        except GizmosError:
            try:
                after = force(before, step)[0]
            except GizmosError:
                after = before  # cannot replay: say what was recorded, keep the state
        self.state = after
        if step.is_chance:
            self._chance(before, step)
            return
        if self._setup_open:
            self._setup_open = False
            self.finished.append(Entry("setup", setup_text(before), 0, 1))
        seat = step.player if step.player is not None else before.current
        turn = self._turn_of(before)
        turn.steps.append(step.to_json())
        turn.forced |= forced
        clause = self._player_step(turn, before, step, after, seat)
        if clause is not None:
            if seat != turn.seat and isinstance(clause, str):
                clause = f"{self.names[seat]} (out of turn) {clause}"
            turn.clauses.append(clause)
        if step.kind == "end_turn":
            turn.ended = ended if isinstance(ended, str) else None
        if step.kind == "end_turn" or after.game_over:
            turn.done = True
            self._close(interrupted=False)
        if after.game_over and not before.game_over:
            self.finished.append(Entry("end", game_over_text(after, self.names), after.turn, after.round))

    def _void_from(self, turn: int, why: str) -> None:
        """The game went back to ``turn``'s start (or before): what was logged of it and after
        it did not happen. An undo takes the whole turn back; a correction only the turns it
        set back. Those entries stay in the log, marked ``void`` (struck through on the page)."""
        first = turn if why == "undone" else turn + 1
        for i, e in enumerate(self.finished):
            if e.kind == "turn" and e.turn is not None and e.turn >= first and e.void is None:
                e.void = why
                self.revised = min(self.revised, i)
        if why == "undone":
            self._interrupted = None  # the turn starts afresh, it does not continue

    def _void_misread(self, card: Any) -> None:
        """A card of this turn was misread: the turn's entry that names it is struck through
        (the correction's own line, after it, says what the card really was)."""
        if not isinstance(card, int):
            return
        for i, e in enumerate(self.finished):
            if (
                e.kind == "turn"
                and e.turn == self.state.turn
                and e.void is None
                and any(mentions(s, card) for s in e.steps)
            ):
                e.void = "corrected"
                self.revised = min(self.revised, i)

    def take_revised(self) -> int | None:
        """The first finished entry changed since the last call (pages that have it must be
        sent the log again from there), else None."""
        first, self.revised = self.revised, NOT_REVISED
        return None if first == NOT_REVISED else first

    def _forget_turn(self, turn: int) -> None:
        """The tracker explained ``turn`` again from its start: its earlier steps are void."""
        if self._turn is not None and self._turn.turn == turn:
            self._turn = None
        gone = [i for i, e in enumerate(self.finished) if e.kind == "turn" and e.turn == turn]
        if gone:
            self.revised = min(self.revised, gone[0])
        self.finished = [e for e in self.finished if not (e.kind == "turn" and e.turn == turn)]

    def _turn_of(self, before: State) -> _Turn:
        """The entry of the turn ``before`` is in: the open one, or a new one (continuing one
        that a correction cut into)."""
        turn = self._turn
        if turn is None or turn.turn != before.turn:
            self._close(interrupted=False)
            continued = self._interrupted == before.turn
            self._interrupted = None
            name = self.names[before.current]
            turn = self._turn = _Turn(before.current, before.turn, before.round, name, continued)
        return turn

    def _chance(self, before: State, step: Step) -> None:
        event = before.chance[0] if before.chance else ("?",)
        if self._setup_open:
            return
        turn = self._turn_of(before)
        turn.steps.append(step.to_json())
        if event[0] == "display":
            turn.refills.append(f"#{step.card} came up in the Level {ROMAN[event[1]]} Display")
        elif event[0] == "research" and turn.research is not None:
            turn.research.drawn.append(step.card or 0)
        elif event[0] == "row":
            turn.row.append(step.color or 0)
        elif event[0] == "draw":
            gift = next(
                (c for c in reversed(turn.clauses) if isinstance(c, _Gift) and c.reward == "draw_random"),
                None,
            )
            if gift is not None:
                gift.drawn.append(step.color or 0)
            else:
                turn.clauses.append(f"drew {_a(step.color or 0)} from the dispenser")
        else:
            turn.refills.append(describe(step))

    def _player_step(self, turn: _Turn, before: State, step: Step, after: State, seat: int) -> Any:
        """The clause a player step adds (or None when it fills in an earlier clause)."""
        k = step.kind
        pend = before.pending
        gift = turn.gift
        if k == "end_turn":
            return None
        if k == "use":
            g = step.gizmo or 0
            new = _Gift(g, CARDS[g].effect.reward)
            if new.reward == "vp_tokens":
                new.vp = after.players[seat].vp_tokens - before.players[seat].vp_tokens
            if new.reward in GRANTED and after.pending is not None and after.pending != before.pending:
                turn.gift = new  # its granted action comes next
            return new
        if k == "bottom":
            if turn.research is not None:
                research = turn.research
                research.bottom.append(step.card or 0)
                if pend is not None and (after.pending is None or after.pending.kind != "research"):
                    research.bottom.extend(c for c in pend.hand if c not in research.bottom)
                return None
            return f"put #{step.card} under its deck"
        if pend is not None and pend.kind == "research" and not pend.chosen and turn.research is not None:
            research = turn.research
            if k == "skip":
                research.choice = "kept none of them"
            elif k == "file":
                research.choice = f"filed #{step.card}"
            elif k == "build":
                research.choice = "built " + build_text(before, step, seat)
            if after.pending is None or after.pending.kind != "research":
                research.bottom.extend(c for c in pend.hand if c != step.card and c not in research.bottom)
            return None
        if k == "skip":
            if gift is not None:
                gift.declined = True
                turn.gift = None
                return None
            return "declined"
        if k == "research":
            research = _Research(step.level or 1)
            turn.research = research
            if gift is not None and pend is not None and pend.kind == "research_offer":
                gift.research = research
                turn.gift = None
                return None
            return research
        if gift is not None and pend is not None and pend.kind in ("picks", "file", "free_build"):
            if k == "pick":
                gift.picked.append(step.color or 0)
            elif k == "file":
                gift.action = f"file #{step.card}"
            elif k == "build":
                gift.action = "build " + build_text(before, step, seat)
            if after.pending is None or after.pending.kind != "picks":
                turn.gift = None
            return None
        if k == "pick":
            return f"took {_a(step.color or 0)} from the Row"
        if k == "file":
            return f"filed #{step.card} from the Display"
        if k == "build":
            return "built " + build_text(before, step, seat)
        return describe(step, self.names[seat])

    def _close(self, interrupted: bool) -> None:
        turn = self._turn
        if turn is None:
            return
        self._turn = None
        entry = turn.entry()
        if interrupted and not turn.done:
            entry.done = True  # frozen as it stood; later steps of this turn open a new entry
            self._interrupted = turn.turn
        self.finished.append(entry)


def build_text(before: State, step: Step, seat: int) -> str:
    """ "#57 from their Archive, paying 2 blue (converting with #41)"."""
    card = step.card or 0
    player = before.players[seat]
    pend = before.pending
    if card in player.archive:
        source = " from their Archive"
    elif pend is not None and card in pend.hand:
        source = ""
    else:
        source = " from the Display"
    pay = step.pay or (0, 0, 0, 0)
    if pend is not None and pend.kind == "free_build":
        cost = " for free"
    elif not any(pay):
        cost = ", paying nothing (discounts)"
    else:
        cost = f", paying {marbles(pay)}"
    if step.converters:
        cost += " (converting with " + listing([f"#{c}" for c in step.converters]) + ")"
    return f"#{card}{source}{cost}"


def setup_text(state: State) -> str:
    """The table as the first turn found it."""
    rows = [
        f"Level {ROMAN[lvl + 1]} " + ", ".join("empty" if c is None else f"#{c}" for c in slots)
        for lvl, slots in enumerate(state.display)
    ]
    return f"Setup: the Display shows {'; '.join(rows)}; the Energy Row holds {marbles(state.row)}."


def correction_text(payload: dict[str, Any], who: str, names: Sequence[str] = ()) -> str:
    """A person's correction in one sentence (a ring by its player's name when known)."""
    what = payload.get("what")
    p = payload.get("payload") or {}
    by = payload.get("who", who)
    if what == "marble_color":
        seat = p.get("seat", 0)
        owner = names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else f"seat {seat}"
        where = "the Energy Row" if p.get("zone") == "row" else f"{owner}'s ring"
        return f"Correction by {by}: a marble in {where} is {p.get('to')}, not {p.get('from')}."
    if what == "card_id":
        return f"Correction by {by}: the card taken for #{p.get('old')} is really #{p.get('new')}."
    if what == "state":
        return f"Correction by {by}: the whole table was set as entered."
    if what == "undo_turn":
        return f"Correction by {by}: the turn was undone (back to its start)."
    if what == "adopt_table":
        return f"Correction by {by}: the table was taken as the camera sees it."
    return f"Correction by {by}: {what}."


def game_over_text(state: State, names: list[str]) -> str:
    """ "The game is over: Ana wins with 23 VP."."""
    best = ranking(state)[0]
    return f"The game is over: {names[best.seat]} wins with {best.total} VP."
