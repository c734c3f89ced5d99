"""The tracker: turns what is seen and sensed into accepted steps, warnings and a game record.

It holds the last accepted state. Observations pass through the :class:`Stabilizer`; when the
stable view changes, the tracker searches for legal steps that explain it
(:func:`referee.explain.explain`). One or more matches: accept the cheapest and record its
steps. None: search again allowing broken rules; if the cheapest such explanation is certain
(the view has persisted), accept what physically happened and warn for each broken rule,
naming the player, the ruling, what happened and what would make it right. A view that no
explanation reaches, or where the camera and the dispenser sensors disagree, is *uncertain*:
a person is asked to confirm; it is never reported as illegal.

Everything accepted is appended to the :class:`GameRecord` before the tracker moves on, so a
restart (:meth:`Tracker.open`) resumes exactly where the game stood.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.events import Correction, DispenserEvent, EndOfTurn
from referee.explain import Explanation, Hints, Limits, explain
from referee.gizmos import (
    IllegalStep,
    State,
    Step,
    apply,
    check_invariants,
    force,
    legal_steps,
    new_game,
    ranking,
    resolve_chance,
    state_from_json,
    step_from_json,
)
from referee.gizmos.cards import COLOR_INDEX, COLORS
from referee.gizmos.errors import RULES, StateError
from referee.gizmos.steps import describe
from referee.observation import Observation
from referee.record import GameRecord, RecordError
from referee.verdicts import RefereeWarning, describe_violation
from referee.view import Stabilizer, TableView, matches, mismatches

Listener = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line of the move log: a step in plain language, with its turn and player."""

    turn: int
    round: int
    player: int | None
    text: str
    step: dict[str, Any]
    forced: bool = False

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(slots=True)
class Update:
    """What one input changed: accepted steps, new warnings, and notes."""

    steps: list[Step] = field(default_factory=list)
    warnings: list[RefereeWarning] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.steps or self.warnings)


@dataclass(frozen=True, slots=True)
class TrackerSettings:
    """Noise handling and search bounds."""

    frames: int = 3  # a zone counts once it reads the same this many frames in a row
    threshold: float = 0.6  # items below this confidence are unknown
    confirm: int = 2  # an unexplained stable view must persist this many times before a warning
    max_violations: int = 2
    limits: Limits = field(default_factory=Limits)


class TrackerError(RuntimeError):
    """A request the tracker cannot carry out (unknown warning, bad correction)."""


class Tracker:
    """Referees one game. Not thread-safe: call it from one thread (the web app locks around it)."""

    def __init__(
        self,
        record: GameRecord,
        names: list[str],
        state: State,
        settings: TrackerSettings | None = None,
        _replaying: bool = False,
    ) -> None:
        self.record = record
        self.names = names
        self.state = state
        self.settings = settings or TrackerSettings()
        self.stabilizer = Stabilizer(len(names), self.settings.frames, self.settings.threshold)
        self.warnings: list[RefereeWarning] = []
        self.log: list[LogLine] = []
        self.turn_starts: list[State] = [state]
        self._row_hints: list[int] = []
        self._draw_hints: list[int] = []
        self._returned: int | None = None
        self._ends = 0
        self._last_view: tuple[object, ...] | None = None
        self._pending_key: tuple[object, ...] | None = None
        self._pending_count = 0
        self._uncertain_keys: set[tuple[object, ...]] = set()
        self.listeners: list[Listener] = []
        self.ended_by: str | None = None

    # ------------------------------------------------------------------ creation and resume

    @classmethod
    def create(
        cls,
        path: str | Path,
        names: list[str],
        seed: int | None = None,
        observed: bool = True,
        settings: TrackerSettings | None = None,
    ) -> Tracker:
        """A new game recorded at ``path``. With ``observed`` the setup (Display, Row) is left to
        the first observation or to ``reveal``/``dispense`` steps; else it is drawn from ``seed``."""
        if not 2 <= len(names) <= 4:
            raise TrackerError(f"players: Gizmos is for 2-4 players, got {len(names)}")
        record = GameRecord(path)
        if len(record):
            raise TrackerError(f"{path} already holds a game; open it to resume")
        state = new_game(len(names))
        if not observed:
            state = resolve_chance(state, random.Random(seed))
        record.append("setup", {"names": names, "seed": seed, "observed": observed, "state": state.to_json()})
        return cls(record, names, state, settings)

    @classmethod
    def open(cls, path: str | Path, settings: TrackerSettings | None = None) -> Tracker:
        """Resume a recorded game: replay every entry to the state it stood in."""
        if not Path(path).exists():
            raise RecordError(f"{path}: no such game record")
        record = GameRecord(path)
        entries = list(record.entries())
        if not entries or entries[0].kind != "setup":
            raise RecordError(f"{path}: not a game record (no setup entry)")
        setup = entries[0].payload
        try:
            state = state_from_json(setup["state"])
        except (KeyError, StateError) as exc:
            raise RecordError(f"{path}: bad setup entry ({exc})") from exc
        tracker = cls(record, list(setup["names"]), state, settings)
        for entry in entries[1:]:
            tracker._replay(entry.kind, entry.payload)
        return tracker

    def _replay(self, kind: str, payload: dict[str, Any]) -> None:
        try:
            if kind == "step":
                step = step_from_json(payload["step"])
                self._advance(step, bool(payload.get("forced")), record=False)
            elif kind == "state":
                self._set_state(state_from_json(payload["state"]), record=False)
                self._clear_hints()
            elif kind == "warning":
                self.warnings.append(RefereeWarning.from_json(payload))
            elif kind == "warning_status":
                self._set_status(int(payload["id"]), payload["status"], payload["who"], record=False)
            elif kind == "event":
                self._replay_event(payload)
            elif kind == "end":
                self.ended_by = payload.get("who", "referee")
                self.state = dataclasses.replace(self.state, game_over=True)
        except (KeyError, ValueError, IllegalStep, StateError) as exc:
            raise RecordError(f"{self.record.path}: cannot replay a '{kind}' entry: {exc}") from exc

    def _replay_event(self, payload: dict[str, Any]) -> None:
        if payload.get("type") == "end_of_turn":
            self._ends += 1
        elif payload.get("type") == "dispenser":
            self._hint(DispenserEvent(**{k: v for k, v in payload.items() if k != "type"}))

    # ------------------------------------------------------------------ listeners

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener(kind, data)`` on every change (the dashboard pushes these)."""
        self.listeners.append(listener)

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        for listener in list(self.listeners):
            listener(kind, data)

    # ------------------------------------------------------------------ inputs

    def observe(self, obs: Observation) -> Update:
        """A new observation. Only stable views count; see the module docstring."""
        update = Update()
        view = self.stabilizer.push(obs)
        key = view.key()
        if key == self._last_view or not self._complete(view):
            return update
        self._last_view = key
        if matches(self.state, view, turn=False) and self._ends == 0 and not self._pending_hints():
            self._pending_key = None
            return update
        self._explain(view, update)
        return update

    def end_of_turn(self, event: EndOfTurn, who: str = "referee") -> Update:
        """An end-of-turn signal: the current turn must end in the explanation."""
        self.record.append("event", event.to_json(), who=who)
        self._ends += 1
        update = Update()
        view = self.stabilizer.stable()
        if not self._complete(view):
            view = TableView(seats=view.seats)
        self._explain(view, update, urgent=True)
        return update

    def dispenser(self, event: DispenserEvent) -> Update:
        """A dispenser sensor event: it corroborates colours and counts (never a warning alone)."""
        self.record.append("event", event.to_json(), who="dispenser")
        self._hint(event)
        return Update()

    def _hint(self, event: DispenserEvent) -> None:
        if event.kind == "button":
            self._ends += 1
        elif event.kind == "row_refill" and event.color in COLOR_INDEX:
            self._row_hints.append(COLOR_INDEX[event.color])
        elif event.kind == "draw" and event.color in COLOR_INDEX:
            self._draw_hints.append(COLOR_INDEX[event.color])
        elif event.kind == "return":
            self._returned = (self._returned or 0) + event.count

    def _pending_hints(self) -> bool:
        return bool(self._row_hints or self._draw_hints or self._returned)

    def _clear_hints(self) -> None:
        self._row_hints.clear()
        self._draw_hints.clear()
        self._returned = None
        self._ends = 0

    def _complete(self, view: TableView) -> bool:
        """Enough is seen to explain: the whole Display and the Row (random refills land there)."""
        return len(view.display) == 9 and view.row is not None

    # ------------------------------------------------------------------ explaining

    def _explain(self, view: TableView, update: Update, urgent: bool = False) -> None:
        if self.state.game_over:
            if not matches(self.state, view):
                self._warn_once(
                    view,
                    update,
                    "GAME_OVER",
                    "the game is over, but the table changed: " + "; ".join(mismatches(self.state, view)[:2]),
                    "put the table back as it was",
                )
            self._ends = 0
            return
        settings = self.settings
        hints = Hints(tuple(self._row_hints), tuple(self._draw_hints), self._returned, self._ends)
        found = explain(self.state, view, hints, 0, settings.limits)
        if found is None and self._returned is not None:
            camera_only = explain(
                self.state, view, dataclasses.replace(hints, returned=None), 0, settings.limits
            )
            if camera_only is not None:
                paid = sum(sum(s.pay or ()) for s in camera_only.steps if s.kind == "build")
                self._uncertain(
                    view,
                    update,
                    f"the camera shows a legal turn paying {paid} marble(s), but the dispenser counted "
                    f"{self._returned} returned: please confirm the payment",
                )
                self._accept(camera_only, update)
                return
        if found is not None:
            self._accept(found, update)
            return
        lenient = explain(self.state, view, hints, settings.max_violations, settings.limits)
        key = view.key()
        if key != self._pending_key:
            self._pending_key, self._pending_count = key, 0
        self._pending_count += 1
        if self._pending_count < settings.confirm and not urgent:
            return  # could still be a misreading: wait for it to persist
        if lenient is not None:
            self._accept(lenient, update)
            return
        self._uncertain(
            view,
            update,
            "what is seen cannot be explained by any sequence of steps: "
            + "; ".join(mismatches(self.state, view)[:3])
            + ". Please confirm or correct it.",
        )

    def _accept(self, found: Explanation, update: Update) -> None:
        state = self.state
        by_index = {}
        for index, err in found.violations:
            by_index.setdefault(index, []).append(err)
        for i, step in enumerate(found.steps):
            before = state
            state = self._advance(step, found.forced[i], record=True)
            update.steps.append(step)
            for err in by_index.get(i, []):
                seat = step.player if step.player is not None else before.current
                message, fix = describe_violation(step, err, before, self.names[seat])
                update.warnings.append(self._new_warning("violation", before, seat, err.code, message, fix))
        if state != found.state:
            # The search folded unseen Research cards back into their deck: keep that belief.
            self._set_state(found.state, record=True)
        if found.alternatives > 1:
            update.notes.append(
                f"{found.alternatives} different step sequences explain this table equally well"
            )
        self._clear_hints()
        self._pending_key = None
        self._emit("state", {"turn": self.state.turn})

    def _advance(self, step: Step, forced: bool, record: bool) -> State:
        before = self.state
        if forced:
            after, _ = force(before, step)
        else:
            after = apply(before, step)
        if record:
            self.record.append("step", {"step": step.to_json(), "forced": forced, "turn": before.turn})
        self.state = after
        if not step.is_chance:
            seat = step.player if step.player is not None else before.current
            self.log.append(
                LogLine(
                    before.turn, before.round, seat, describe(step, self.names[seat]), step.to_json(), forced
                )
            )
        elif self.log:
            self.log.append(LogLine(before.turn, before.round, None, describe(step), step.to_json()))
        if after.turn != before.turn:
            self.turn_starts.append(after)
        return after

    # ------------------------------------------------------------------ warnings

    def _new_warning(
        self, kind: str, state: State, seat: int | None, code: str | None, message: str, fix: str
    ) -> RefereeWarning:
        w = RefereeWarning(
            id=len(self.warnings) + 1,
            kind=kind,
            turn=state.turn,
            round=state.round,
            player=seat,
            code=code,
            rulings=RULES[code].rulings if code else (),
            message=message,
            remedy=fix,
            time=time.time(),
        )
        self.warnings.append(w)
        self.record.append("warning", w.to_json())
        self._emit("warning", w.to_json())
        return w

    def _uncertain(self, view: TableView, update: Update, message: str) -> None:
        key = view.key()
        if key in self._uncertain_keys:
            return
        self._uncertain_keys.add(key)
        update.warnings.append(
            self._new_warning(
                "uncertain", self.state, None, None, message, "confirm what is on the table, or correct it"
            )
        )

    def _warn_once(self, view: TableView, update: Update, code: str, message: str, fix: str) -> None:
        key = view.key()
        if key in self._uncertain_keys:
            return
        self._uncertain_keys.add(key)
        update.warnings.append(self._new_warning("violation", self.state, None, code, message, fix))

    def decide(self, warning_id: int, status: str, who: str) -> RefereeWarning:
        """Accept or dismiss a warning (recorded with who)."""
        return self._set_status(warning_id, status, who, record=True)

    def _set_status(self, warning_id: int, status: str, who: str, record: bool) -> RefereeWarning:
        if status not in ("accepted", "dismissed"):
            raise TrackerError(f"status: expected 'accepted' or 'dismissed', got {status!r}")
        for i, w in enumerate(self.warnings):
            if w.id == warning_id:
                self.warnings[i] = w.with_status(status, who)
                if record:
                    self.record.append(
                        "warning_status", {"id": warning_id, "status": status, "who": who}, who=who
                    )
                    self._emit("warning", self.warnings[i].to_json())
                return self.warnings[i]
        raise TrackerError(f"no warning #{warning_id}")

    # ------------------------------------------------------------------ people have the last word

    def play(self, step: Step, who: str = "manual") -> Update:
        """Manual mode: apply one step chosen by a person; an illegal step raises IllegalStep."""
        if self.ended_by is not None:
            raise IllegalStep("GAME_OVER", f"the game was ended by {self.ended_by}")
        self._advance(step, forced=False, record=True)  # apply raises before anything is recorded
        self._emit("state", {"turn": self.state.turn})
        return Update(steps=[step])

    def legal_steps(self) -> list[Step]:
        """The steps a person may enter now (manual mode)."""
        return [] if self.ended_by is not None else legal_steps(self.state)

    def correct(self, correction: Correction) -> State:
        """Apply a person's correction and record it with who and when.

        ``what``: ``marble_color`` {zone: "row"|"ring", seat?, from, to}; ``card_id`` {old, new}
        (the card believed to be ``old`` is really ``new``: the two swap places);
        ``state`` {state: <state JSON>} (replace the whole state).
        """
        new = self._corrected(correction)
        try:
            check_invariants(new, limits=False)
        except StateError as exc:
            raise TrackerError(f"correction refused: {exc}") from exc
        self.record.append("correction", correction.to_json(), who=correction.who, at=correction.time)
        self._set_state(new, record=True, who=correction.who)
        self._clear_hints()
        self._last_view = None
        self._uncertain_keys.clear()
        return new

    def _corrected(self, c: Correction) -> State:
        s = self.state
        p = c.payload
        if c.what == "state":
            try:
                return state_from_json(p.get("state"))
            except StateError as exc:
                raise TrackerError(f"correction refused: {exc}") from exc
        if c.what == "marble_color":
            src, dst = p.get("from"), p.get("to")
            if src not in COLOR_INDEX or dst not in COLOR_INDEX:
                raise TrackerError(f"marble_color: 'from' and 'to' must be colours from {list(COLORS)}")
            a, b = COLOR_INDEX[src], COLOR_INDEX[dst]
            if s.dispenser[b] == 0:
                raise TrackerError(f"marble_color: no {dst} marble is left in the dispenser to swap in")
            disp = list(s.dispenser)
            disp[a] += 1
            disp[b] -= 1
            zone = p.get("zone")
            if zone == "row":
                counts = list(s.row)
            elif zone == "ring" and isinstance(p.get("seat"), int) and 0 <= p["seat"] < s.num_players:
                counts = list(s.players[p["seat"]].ring)
            else:
                raise TrackerError("marble_color: zone must be 'row' or 'ring' with a valid seat")
            if counts[a] == 0:
                raise TrackerError(f"marble_color: there is no {src} marble there")
            counts[a] -= 1
            counts[b] += 1
            new_counts = (counts[0], counts[1], counts[2], counts[3])
            if zone == "row":
                return dataclasses.replace(s, row=new_counts, dispenser=tuple(disp))  # type: ignore[arg-type]
            players = list(s.players)
            players[p["seat"]] = dataclasses.replace(players[p["seat"]], ring=new_counts)
            return dataclasses.replace(s, players=tuple(players), dispenser=tuple(disp))  # type: ignore[arg-type]
        if c.what == "card_id":
            old, new = p.get("old"), p.get("new")
            if not (isinstance(old, int) and isinstance(new, int) and 0 <= old < 112 and 0 <= new < 112):
                raise TrackerError("card_id: 'old' and 'new' must be card ids 0..111")
            return swap_cards(s, old, new)
        raise TrackerError(f"unknown correction {c.what!r} (marble_color, card_id or state)")

    def _set_state(self, state: State, record: bool, who: str = "referee") -> None:
        if record:
            self.record.append("state", {"state": state.to_json()}, who=who)
        self.state = state
        self._emit("state", {"turn": state.turn})

    def undo_turn(self, who: str) -> State:
        """Go back to the start of the current turn (or of the previous one if nothing happened yet)."""
        target = self.turn_starts[-1]
        if target == self.state and len(self.turn_starts) > 1:
            self.turn_starts.pop()
            target = self.turn_starts[-1]
        self.record.append("correction", Correction(time.time(), who, "undo_turn").to_json(), who=who)
        self._set_state(target, record=True, who=who)
        self._clear_hints()
        self._last_view = None
        return target

    def end_game(self, who: str) -> None:
        """A person ends the game now (recorded); scoring is final from here."""
        self.ended_by = who
        self.record.append("end", {"who": who}, who=who)
        self.state = dataclasses.replace(self.state, game_over=True)
        self._emit("state", {"turn": self.state.turn, "game_over": True})

    # ------------------------------------------------------------------ reporting

    def scores(self) -> list[dict[str, Any]]:
        rows = []
        for line in ranking(self.state):
            row = line.to_json()
            row["name"] = self.names[line.seat]
            rows.append(row)
        return rows

    def snapshot(self) -> dict[str, Any]:
        """Everything the dashboard shows, as JSON."""
        return {
            "names": self.names,
            "state": self.state.to_json(),
            "round": self.state.round,
            "current": self.state.current,
            "end_triggered": self.state.end_triggered,
            "game_over": self.state.game_over,
            "scores": self.scores(),
            "warnings": [w.to_json() for w in self.warnings],
            "log": [line.to_json() for line in self.log],
        }


def swap_cards(state: State, a: int, b: int) -> State:
    """The same table with cards ``a`` and ``b`` trading places (a card misidentified)."""
    if a == b:
        return state

    def sw(c: int | None) -> int | None:
        return b if c == a else a if c == b else c

    def sw_all(cs: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(sw(c) for c in cs)  # type: ignore[misc]

    players = tuple(
        dataclasses.replace(p, archive=sw_all(p.archive), gizmos=sw_all(p.gizmos)) for p in state.players
    )
    decks = tuple(tuple((tuple(sorted(sw_all(cands))), n) for cands, n in segs) for segs in state.decks)
    display = tuple(tuple(sw(c) for c in row) for row in state.display)
    pending = state.pending
    if pending is not None:
        pending = dataclasses.replace(pending, hand=sw_all(pending.hand))
    return dataclasses.replace(
        state,
        players=players,
        decks=decks,  # type: ignore[arg-type]
        display=display,
        box=tuple(sorted(sw_all(state.box))),
        triggered=frozenset(sw_all(tuple(state.triggered))),
        used=frozenset(sw_all(tuple(state.used))),
        pending=pending,
    )
