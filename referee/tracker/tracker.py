"""The tracker: turns what is seen and sensed into accepted steps, warnings and a game record.

It holds the last accepted state. Observations pass through the :class:`Stabilizer`, so only
zones that read the same for several frames count and a single misread frame never reaches
the search. When the stable view of the whole table changes, the tracker searches for legal
steps that explain it (:func:`referee.tracker.explain.explain`):

* one or more legal explanations: accept the cheapest and record its steps (several step
  sequences reaching the same table are noted, never warned about);
* none: search again allowing broken rules. The cheapest such explanation is accepted, with a
  warning per broken rule (who, ruling, what happened, how to put it right), once it is
  certain: at the end of the turn, or mid-turn once the view has persisted and every broken
  rule is one that finishing the turn cannot mend (a ring over its limit, a second main
  action...), never for a Build still being paid;
* a view that no explanation reaches, a broken rule that rests on zones read with low
  confidence or on a card that appeared from nowhere (a misread id?), and any disagreement
  between the camera and the dispenser sensors is *uncertain*: a person is asked to confirm;
  it is never reported as illegal.

Turns end on an end-of-turn signal (dashboard, keyboard, the dispenser's button). The sensor
events of a turn (marbles returned, colors rolled into the Row, blind draws) are compared with
the accepted steps when the turn ends. While a paying ring is out of view, the sensor's count of
returned marbles decides the payment.

Everything accepted is appended to the :class:`GameRecord` (one transaction per explanation)
before the tracker moves on, so a restart (:meth:`Tracker.open`) resumes where the game stood.

This module is the tracker's core: intake (``observe``: stabilised views in, searches out),
explaining and accepting steps, warnings, and the public entry points. Each other concern has its
own module, written as functions of what they are given or a small collaborator: the sensor
reconciliation (:mod:`referee.tracker.sensors`), the camera-only turn inference
(:mod:`referee.tracker.turns`), people's corrections (:mod:`referee.tracker.corrections`), the
verdicts (:mod:`referee.tracker.verdicts`), stabilising (:mod:`referee.tracker.view`), the search
(:mod:`referee.tracker.explain`) and the record (:mod:`referee.tracker.record`).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.events import Correction, DispenserEvent, EndOfTurn
from referee.game import Game, players_problem
from referee.gizmos import (
    GIZMOS,
    IllegalStep,
    State,
    Step,
    apply,
    force,
)
from referee.gizmos.errors import RULES, StateError
from referee.observation import Observation, ReachSighting
from referee.tracker.base import Listener, LogLine, TrackerError, TrackerSettings, Update
from referee.tracker.corrections import adopted_table, corrected, reread, swap_cards, undo_target
from referee.tracker.explain import Explanation, Hints, explain, fold_research, zones_moved
from referee.tracker.provisional import (
    AWAITING_VERDICT,
    BEFORE_A_BREAK,
    PROVISIONAL_FRAMES,
    READ_ONCE,
    Provisional,
    provisional,
)
from referee.tracker.reaching import PAUSE_FRAMES, ArmLog
from referee.tracker.record import GameRecord, RecordError, arms_entry, arms_replayed, writable
from referee.tracker.sensors import Sensors
from referee.tracker.turns import (
    VIOLATION_WEIGHT,
    LostTurns,
    QuietMark,
    explain_from_table,
    follow_lost,
    relaxations,
    settled,
    turn_over,
    weight,
)
from referee.tracker.verdicts import (
    CERTAIN_MID_TURN,
    RefereeWarning,
    cards_from_nowhere,
    describe_violation,
    misread_cards,
    turns_before_break,
)
from referee.tracker.view import (
    Stabilizer,
    TableView,
    matches,
    mismatches,
    seat_matches,
    view_of,
    zone_text,
    zones_changed,
)

#: Still importable from here (their homes: ``base``, ``corrections``, ``turns``, ``verdicts``).
__all__ = [
    "CERTAIN_MID_TURN",
    "VIOLATION_WEIGHT",
    "Listener",
    "LogLine",
    "Tracker",
    "TrackerError",
    "TrackerSettings",
    "Update",
    "replay_states",
    "swap_cards",
]


@dataclass(slots=True)
class _Suspect:
    """A stable view that no legal sequence explains, waiting to persist."""

    key: tuple[object, ...]
    frames: int
    found: Explanation | None
    end_last: bool = False
    revised: bool = False  # the turn was tried again from its start
    doubtful: bool = False  # legal play explains it once the low-confidence zones are unknown
    unsure: frozenset[str] = frozenset()  # the zones read with low confidence then
    view: TableView | None = None  # the table (complete)


def _atomic(method: Callable[..., Any]) -> Callable[..., Any]:
    """Run a public entry point as one record transaction; if its write fails (disk full), the
    tracker is put back as it was before the call, so memory never runs ahead of the record."""

    @functools.wraps(method)
    def wrapped(self: Tracker, *args: Any, **kwargs: Any) -> Any:
        with self.atomic():
            return method(self, *args, **kwargs)

    return wrapped


#: What a call may change in place besides containers: the sensor tallies (copied deeply) and
#: the suspect reading (its frame count; copied shallowly, its explanation is never changed).
_DEEP = frozenset({"sensors"})
_SHALLOW = frozenset({"_suspect"})
#: Not part of what a failed write restores: the record itself, wiring, and the frame history
#: (a frame that was seen stays seen).
_KEPT = frozenset({"record", "listeners", "settings", "stabilizer", "_atomic_depth"})


class Tracker:
    """Referees one game. Not thread-safe: call it from one thread (the web app locks around it)."""

    #: The rules, through the game interface: the record's states and steps, the players allowed,
    #: the legal steps a person may enter, the scores. The explanation search is Gizmos' own.
    game: Game[State, Step] = GIZMOS

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
        s = self.settings
        self.stabilizer = Stabilizer(len(names), s.frames, s.threshold, s.sure)
        self.warnings: list[RefereeWarning] = []
        self.log: list[LogLine] = []
        self.notes: list[str] = []
        self.turn_starts: list[State] = [state]
        self.listeners: list[Listener] = []
        self.ended_by: str | None = None
        self._ends = 0  # end-of-turn signals not yet explained
        # The table at each of those signals: as seen then, and with zones a hand covered at
        # that moment filled in from just before (see Stabilizer.recent).
        self._checkpoints: list[tuple[TableView, TableView]] = []
        self._waited = 0  # frames since the oldest of them
        self.sensors = Sensors()  # the dispenser's counts of the turns, and the camera's
        self._last_key: tuple[object, ...] | None = None
        self._last_partial: tuple[object, ...] | None = None
        # The last table searched while a hand covered part of it, and the state searched from.
        self._tried_past_hands: tuple[tuple[object, ...], State] | None = None
        # The reading shown provisionally on the dashboard (referee.tracker.provisional), and the
        # tables searched for one from the state and with the arms of ``_readings_from`` (by key
        # and whether read twice): a reading that flickers between two tables is searched once
        # for each.
        self.provisional: Provisional | None = None
        self._readings: dict[tuple[tuple[object, ...], bool], Provisional | None] = {}
        self._readings_from: tuple[State, ArmLog] | None = None
        self._last_obs: Observation | None = None
        self._suspect: _Suspect | None = None
        self._quiet = 0  # frames left before the next search after a table nothing explained
        self._baseline = state  # where the current turn's explanation may be redone from
        self._turn_forced = False  # a rule break was accepted this turn (then it is not redone)
        # (seat, code) of the rule breaks warned about in this turn: one warning per player, rule
        # and turn (Hints.warned); a move out of turn is warned once, not at each of its steps.
        self._turn_warned: set[tuple[int, str]] = set()
        self._raised: set[tuple[object, ...]] = set()  # uncertain readings already reported
        # Uncertain warnings a person may confirm: the state they were raised in and what
        # confirming adopts: an explanation (with its broken rules), or the table as seen.
        self._adoptable: dict[int, tuple[State, Explanation | TableView]] = {}
        self._warned_after_end: set[int] = set()
        self._still = 0  # frames the table stayed as accepted in the game's last turn
        self._atomic_depth = 0
        self._signalled = False  # an end-of-turn signal came in this game: turns are signalled here
        # Complete tables seen steadily since the last accepted one, explained only by a rule
        # break still awaiting its verdict: a later explanation passes through them in order
        # (what was seen first happened first). Each with whether it binds: a move out of turn's
        # does; another's is set aside if play explains the new table with fewer broken rules
        # without it (a Build seen underpaid, then paid in full).
        self._waypoints: list[tuple[TableView, bool]] = []
        self._table_ends: int | None = None  # camera only: the turns the last explanation ended
        self._table_view: TableView | None = None  # ... and the table it explained
        # ... and where only the turns before its rule break were accepted, the turns it ends
        # after them: the rest of it is asked for with as many (turns.explain_from_table)
        self._rest_ends: int | None = None
        # Camera only: the last accepted explanation let turns pass without a trace (legal):
        # the state it started from, the table it explained, its weight (see turns.weight) and
        # how many move-log lines stood before it. What is seen next may make a move out of turn
        # there likelier (turns.explain_from_table).
        self._quiet_mark: QuietMark | None = None
        # Camera only: the players' arms seen reaching in since the last accepted table
        # (referee.tracker.reaching), the frames observed, the first frame of the stable table
        # being explained (arms seen from then on reach for what comes after it), and the
        # weight of the reading chosen for it (arms included).
        self._arms = ArmLog()
        self._arms_kept = self._arms  # the arms as the record last has them (_keep_arms)
        self._frame = 0
        self._view_from = 0
        self._table_cost: float | None = None
        self._standing = view_of(state)  # ... and the table as last read steadily, zone by zone
        self._unseen_from: dict[str, int] = {}  # ... each zone out of view now: since which frame
        self._lost: tuple[object, ...] | None = None  # camera only: a table nothing explained
        # ... and since then: the last table seen, its last mover, the turns ended (turns.follow_lost)
        self._lost_turns: LostTurns | None = None

    # ------------------------------------------------------------------ creation and resume

    @classmethod
    def create(
        cls,
        path: str | Path,
        names: list[str],
        seed: int | None = None,
        observed: bool = True,
        settings: TrackerSettings | None = None,
        state: State | None = None,
    ) -> Tracker:
        """A new game recorded at ``path``. With ``observed`` the setup (Display, Row) is left to
        the first observation or to ``reveal``/``dispense`` steps; else it is drawn from ``seed``.
        ``state`` starts from a given table instead (a game already under way, a test)."""
        problem = players_problem(GIZMOS, len(names))
        if problem is not None:
            raise TrackerError(f"players: {problem}")
        if state is not None and state.num_players != len(names):
            raise TrackerError(f"players: {len(names)} names for a {state.num_players}-player table")
        fresh = str(path) != ":memory:" and not Path(path).exists()
        try:
            record = GameRecord(path)
            if len(record):
                raise TrackerError(f"{path} already holds a game; open it to resume (run --resume)")
            if state is None:
                state = cls.game.new_game(len(names), None if observed else random.Random(seed))
            setup = {
                "game": cls.game.name,
                "names": names,
                "seed": seed,
                "observed": observed,
                "state": cls.game.state_to_json(state),
            }
            record.append("setup", setup)
        except RecordError:
            if fresh:  # a full or read-only disk: leave no half-made record behind
                for leftover in (str(path), f"{path}-wal", f"{path}-shm"):
                    with contextlib.suppress(OSError):
                        Path(leftover).unlink()
            raise
        return cls(record, names, state, settings)

    @classmethod
    def open(
        cls, path: str | Path, settings: TrackerSettings | None = None, readonly: bool | None = None
    ) -> Tracker:
        """Resume a recorded game: replay every entry to the state it stood in. A record that
        cannot be written (read-only media) is opened read-only, for viewing and export."""
        if str(path) != ":memory:" and not Path(path).exists():
            raise RecordError(f"{path}: no such game record")
        if readonly is None:
            readonly = str(path) != ":memory:" and not writable(path)
        return cls._from_record(GameRecord(path, readonly=readonly), settings)

    @classmethod
    def from_export(
        cls, data: Any, path: str | Path = ":memory:", settings: TrackerSettings | None = None
    ) -> Tracker:
        """Rebuild a game from :meth:`GameRecord.export` JSON (into a new record at ``path``)."""
        record = GameRecord(path)
        if len(record):
            raise TrackerError(f"{path} already holds a game")
        record.load_export(data)
        return cls._from_record(record, settings)

    @classmethod
    def _from_record(cls, record: GameRecord, settings: TrackerSettings | None) -> Tracker:
        entries = iter(record.entries())
        first = next(entries, None)
        if first is None or first.kind != "setup":
            raise RecordError(f"{record.path}: not a game record (no setup entry)")
        tracker = cls._from_setup(record, first.payload, settings)
        for entry in entries:
            tracker._replay(entry.kind, entry.payload, entry.who)
        tracker._arms = tracker._arms_kept  # the arms as they stood after the last call (_keep_arms)
        return tracker

    @classmethod
    def _from_setup(
        cls, record: GameRecord, setup: dict[str, Any], settings: TrackerSettings | None
    ) -> Tracker:
        game = setup.get("game", cls.game.name)  # records made before the game was named: Gizmos
        if game != cls.game.name:
            raise RecordError(
                f"{record.path}: a game of {game!r}, not {cls.game.name}: open it with its own referee"
            )
        try:
            state = cls.game.state_from_json(setup["state"])
            names = [str(n) for n in setup["names"]]
        except (KeyError, TypeError, cls.game.error_type) as exc:
            raise RecordError(f"{record.path}: bad setup entry ({exc})") from exc
        return cls(record, names, state, settings)

    def _replay(self, kind: str, payload: dict[str, Any], who: str) -> None:
        try:
            if kind == "step":
                step = self.game.step_from_json(payload["step"])
                self._advance(step, bool(payload.get("forced")), live=False, ended=payload.get("ended"))
            elif kind == "state":
                state = self.game.state_from_json(payload["state"])
                if payload.get("reason") == "revise":
                    self._rewind(state, payload.get("log"))
                elif payload.get("reason") in ("correction", "undo"):
                    self._baseline = state
                self.state = state
            elif kind == "correction":
                if payload.get("what") == "undo_turn":
                    self._undo()  # the "state" entry after it holds the same state
                else:
                    self._set_state(self.state, reset=True)  # the "state" entry after it sets it
            elif kind == "warning":
                self._keep_warned(RefereeWarning.from_json(payload))
            elif kind == "warning_status":
                self._set_status(int(payload["id"]), payload["status"], payload["who"])
            elif kind == "event":
                self._on_event(payload)
            elif kind == "note":
                self.notes.append(str(payload["text"]))
            elif kind == "arms":
                self._arms_kept, self._frame = arms_replayed(self._arms_kept, payload)
                self._arms = self._arms_kept
            elif kind == "end":
                self.ended_by = payload.get("who", who)
                self.state = dataclasses.replace(self.state, game_over=True)
        except (KeyError, TypeError, ValueError, self.game.error_type, TrackerError) as exc:
            raise RecordError(f"{self.record.path}: cannot replay a '{kind}' entry: {exc}") from exc

    # ------------------------------------------------------------------ listeners

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener(kind, data)`` on every change (the dashboard pushes these)."""
        self.listeners.append(listener)

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        for listener in list(self.listeners):
            listener(kind, data)

    # ------------------------------------------------------------------ atomic changes

    @contextlib.contextmanager
    def atomic(self) -> Iterator[None]:
        """One record transaction for everything done inside; if it fails (a write or the
        COMMIT: disk full, read-only media), the record rolls back and every attribute the
        tracker keeps is restored, then the error (a :class:`RecordError`) goes on. Re-entrant."""
        if self._atomic_depth:
            yield
            return
        saved = self._snapshot()
        self._atomic_depth += 1
        try:
            with self.record.transaction():
                yield
                self._keep_arms()
        except BaseException:
            self._restore(saved)
            raise
        finally:
            self._atomic_depth -= 1

    def _snapshot(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in vars(self).items():
            if key in _KEPT:
                continue
            if key in _DEEP:
                out[key] = copy.deepcopy(value)
            elif key in _SHALLOW:
                out[key] = copy.copy(value)
            elif isinstance(value, list | set | dict):
                out[key] = type(value)(value)  # the items are immutable or replaced, never changed
            else:
                out[key] = value
        return out

    def _restore(self, saved: dict[str, Any]) -> None:
        for key, value in saved.items():
            setattr(self, key, value)
        self._emit("state", {"turn": self.state.turn})

    # ------------------------------------------------------------------ inputs

    @_atomic
    def observe(self, obs: Observation) -> Update:
        """A new observation. Only stable views count; see the module docstring."""
        update = Update()
        view = self.stabilizer.push(obs)
        self._last_obs = obs
        self._frame += 1
        self._arms = self._arms.add(self._frame, obs.reaches)
        if self._arms.reported and not self._signalled and not self._ends:
            self._table_moved(view)
            self._next_player_reached(update)
        self._see(view, update)
        if not update.changed and view.complete():
            self._close_last_turn(view, update)
        self._show_provisional(update)
        return update

    def _table_moved(self, view: TableView) -> None:
        """Camera only, with the players' arms seen: note when the table last changed (a zone
        read steadily with a new value; a zone unknown now keeps what it held), for the pause
        that tells a turn's end (:meth:`ArmLog.paused`), and the order the players' areas first
        read changed in (:meth:`ArmLog.area_changed`). A zone that reads changed after being
        out of view changed under what hid it (a hand whose arm the camera missed): the table
        began moving when the zone went out of view, and stands again from the new reading."""
        standing = view.filled(self._standing)
        since = self._frame - self.settings.frames + 1
        moved = zones_changed(self._standing, standing)
        if moved:
            began = min(self._unseen_from.get(zone, since) for zone in moved)
            if began < since:
                self._arms = self._arms.moved(began)
            self._arms = self._arms.moved(since)
        self._standing = standing
        self._unseen_from = {zone: self._unseen_from.get(zone, self._frame) for zone in view.unknown()}
        # whose area first read changed, while whose still read, in full, as accepted: the order
        # the moves came in, which the arms alone may misread (ArmLog.order_breaks)
        players = self.state.players
        changed = [i for i, sv in enumerate(view.seats) if not seat_matches(players[i], sv)]
        unchanged = [
            i
            for i, sv in enumerate(view.seats)
            if None not in (sv.ring, sv.archive, sv.gizmos, sv.vp) and seat_matches(players[i], sv)
        ]
        for i in changed:
            self._arms = self._arms.area_changed(since, i, unchanged)

    # -- camera only: the players' arms seen between observations, and kept in the record -------

    @_atomic
    def reached(self, reaches: Sequence[ReachSighting]) -> None:
        """Arms seen in a frame that was not observed (the still-frame gate drops the moving
        frames a gesture passes in): kept with the last observed frame's, so they come before
        the next stable table, as a moving frame's observation would have put them."""
        self._arms = self._arms.add(self._frame, reaches)

    def _keep_arms(self) -> None:
        """At the end of each call, in its transaction: the arms as they now stand, written to
        the record when they changed (:func:`referee.tracker.record.arms_entry`), so that a
        resumed game weighs the same arms."""
        entry = arms_entry(self._arms_kept, self._arms, self._frame)
        if entry is not None:
            self.record.append("arms", entry, who="camera")
            self._arms_kept = self._arms

    def _next_player_reached(self, update: Update) -> None:
        """Camera only, with the players' arms seen: another player's arm reached in after a
        table that only a broken rule explains; that turn is over (or, for a move out of turn,
        the player whose turn it is moves after it), so the break is certain now: decided at
        once, rather than explained again together with the next player's moves."""
        suspect = self._suspect
        if suspect is None or suspect.found is None or suspect.view is None or suspect.doubtful:
            return
        if suspect.key != self._last_key or self.state.game_over:
            return
        movers = [st.player for st in suspect.found.steps if not st.is_chance and st.player is not None]
        if not movers or all(seat == movers[-1] for seat in self._arms.since(self._view_from)):
            return
        self._conclude(suspect.view, update, urgent=True)

    def _see(self, view: TableView, update: Update) -> None:
        """Explain a new stable view (or wait for it to settle, or for a clear view)."""
        if self._ends:
            self._waited += 1
        if not view.complete() and (whole := self._read_in_pieces(view)) is not None:
            view = whole  # every zone read since the table last changed: the table as it stands
        if not view.complete():
            if self._see_past_hands(view, update):
                return
            if self._ends and self._waited >= self.settings.eot_wait and self._explainable(view):
                key = view.key()
                if key != self._last_partial:
                    self._last_partial = key
                    self._explain(view, update, urgent=True)
            return
        key = view.key()
        if self._lost is not None:
            self._lost_turns = follow_lost(self._lost_turns, view, self.state.num_players)
        if self._quiet:  # nothing explained the table lately: search again only now and then
            self._quiet -= 1
            if key != self._last_key:
                return
        if key == self._last_key:
            suspect = self._suspect
            if suspect is not None and suspect.key == key:
                if suspect.doubtful and view.unsure != suspect.unsure:  # read again, surer
                    self._explain(view, update, urgent=bool(self._ends))
                    return
                suspect.frames += 1
                self._conclude(view, update, urgent=bool(self._ends))
            return
        self._last_key = key
        self._view_from = self._frame - self.settings.frames + 1
        suspect = self._suspect
        if suspect is not None and suspect.found is not None and suspect.view is not None:
            # A move out of turn seen steadily: its order with what follows is what tells.
            out_of_turn = any(e.code == "NOT_YOUR_TURN" for _, e in suspect.found.violations)
            if len(self._waypoints) < 2:
                self._waypoints.append((suspect.view, out_of_turn))
        if not self._ends and matches(self.state, view, turn=False):
            self._suspect = None
            return
        self._explain(view, update, urgent=bool(self._ends))

    def _read_in_pieces(self, view: TableView) -> TableView | None:
        """Camera only, with the players' arms seen: the table as it stands when no clear view
        of it comes (each frame hides one zone or another: a glare, a dip, a hand), read zone by
        zone (``_standing``), where every zone out of view now was last read steadily after the
        table last changed (its value then is its value since: nothing was read changing after
        it). A table read so is whole and explained like a clear view; before, a turn whose
        tables never stood in full view was never explained, and the next turn's change was read
        together with it. ``None`` where a zone out of view was last read before the last change
        (it may have changed with it, under the hand that hid it), or nothing changed."""
        if not self._arms.reported or self._signalled or self._ends or not self._arms.changes:
            return None
        last = max(self._arms.changes)
        if any(self._unseen_from.get(zone, self._frame) - 1 < last for zone in view.unknown()):
            return None
        return self._standing if self._standing.complete() else None

    def _see_past_hands(self, view: TableView, update: Update) -> bool:
        """A view with zones unknown (a hand over them, or a reading still settling): accept a
        change whose own zones are all in view and steady at once, rather than when the hand
        has left. Unknown is not empty: each unknown zone is taken as holding what was last
        accepted (:meth:`TableView.filled`), and the change is accepted only if legal play
        explains it, it is what a clear view of the same table would be given (camera only: no
        turn that left no trace) and it leaves every unknown zone alone (:func:`zones_moved`).
        Anything else waits for a clear view, as does every rule break. Returns whether a
        change was accepted."""
        if (
            self.state.game_over
            or self._suspect is not None
            or self._waypoints
            or self._quiet_mark is not None
            or self._lost is not None
            or self._quiet
            or self._turn_forced
        ):
            return False  # a reading awaits its verdict, or play goes on after a break: wait
        armed = self._arms.reported and not self._signalled
        if armed and not self._own_arms_only(view):
            # Camera only with arms reported: whose arm reaches where weighs every reading
            # (reaching.py), which this shortcut's legal-only search does not; a hand over a zone
            # is also the arm that tells the turn, so wait for the clear view it leaves.
            return False
        filled = view.filled(view_of(self.state))
        if not self._ends and matches(self.state, filled):
            return False  # nothing in view changed (a signal pending may end the turn)
        tried = self._tried_past_hands
        if tried is not None and tried[0] == filled.key() and tried[1] is self.state:
            return False  # searched already, found nothing to accept
        self._tried_past_hands = (filled.key(), self.state)
        reading = self._legal_reading(filled)
        if reading is None:
            return False
        found, ends = reading
        if armed and ends:
            return False  # a turn ended: the arms tell whose moves these were
        if zones_moved(self.state, found) & set(view.unknown()):
            return False  # it acts on a zone out of view: what is there is not known yet
        if ends is not None:
            self._table_ends, self._table_view = ends, filled
        # the table accepted stands from its steady read, not from the last clear view's (a
        # refill accepted here dates the stillness a pause is counted from: ArmLog.consume)
        self._view_from = self._frame - self.settings.frames + 1
        self._accept(found, update)
        self._last_key = None  # the next clear view is explained from here, even if seen before
        return True

    def _legal_reading(
        self, view: TableView, violations: int = 0, arms: bool = False
    ) -> tuple[Explanation, int | None] | None:
        """What legal play alone reads ``view`` as, where nothing about it is in doubt: exactly one
        table, no rule broken, no step forced and (camera only) no turn that left no trace (what
        follows may read better); with the turns it ended (camera only, else None). None
        otherwise. The shortcuts past the tracker's usual wait rest on this. ``violations``: rule
        breaks the search may take (then it is the reading the tracker itself would give the
        table, and may break rules: its caller shows only what comes before them); ``arms``
        (camera only): the players' arms weigh the reading too, and a legal-only one they do not
        bear out (:meth:`ArmLog.cost`: the full search might read a move out of turn) is none."""
        s = self.settings
        urgent = bool(self._ends)
        ends: int | None = None
        if not self._signalled and not self._ends:
            bound = dataclasses.replace(s, max_violations=violations)
            hints_for = functools.partial(self._hints, view, urgent, False)
            log = (self._arms, self._frame) if arms else (None, 0)
            reading = explain_from_table(self.state, view, hints_for, False, None, bound, *log)
            found, ends = reading.found, reading.ends
            if found is not None:
                charged = VIOLATION_WEIGHT * len(found.violations)
                if weight(found) > charged:
                    return None  # turns that left no trace, or a move out of turn taken as seen
                if arms and not violations and (reading.cost or 0.0) > weight(found):
                    return None  # legal play alone, where the arms seen would read it otherwise
        else:
            found = explain(self.state, view, self._hints(view, urgent), violations, s.limits)
        if found is None or found.tables != 1:
            return None
        if not violations and (not found.legal or any(found.forced)):
            return None
        return found, ends

    # -- what the dashboard shows before it is accepted (referee.tracker.provisional) ------------

    def _show_provisional(self, update: Update) -> None:
        """At the end of each call: the provisional reading as it now stands; a change of it is
        news for the dashboard (``update.provisional``)."""
        now = self._provisional_reading()
        if now != self.provisional:
            self.provisional = now
            update.provisional = True
            self._emit("provisional", {} if now is None else now.to_json(self.game))

    def _provisional_reading(self) -> Provisional | None:
        """A rule break seen steadily whose verdict waits (its steps and warnings), else the
        complete table of the last observed frame, not yet read the three times the record
        needs, as legal play alone reads it surely (:meth:`_legal_reading`, camera only with the
        arms weighed: none they do not bear out), or, read the same in ``PROVISIONAL_FRAMES``
        frames, the steps before the first rule broken in the reading the tracker would give it.
        Never while a reading awaits its verdict or after a break accepted this turn (the same
        guards as the look past a hand), never a warning from fewer than three readings, never
        anything the tracker has accepted or decides from three readings."""
        s = self.state
        if s.game_over:
            return None
        suspect = self._suspect
        if suspect is not None and suspect.key == self._last_key:
            found = suspect.found
            if found is None or suspect.doubtful or not found.violations or misread_cards(s, found):
                return None  # a person will be asked, or the reading is unsure: nothing to show
            return provisional(self.game, s, found, self.names, AWAITING_VERDICT)
        view = self.stabilizer.stable(1)
        if not view.complete() or view.key() == self._last_key or matches(s, view):
            return None  # the three readings decide this table (or nothing changed)
        if (
            suspect is not None
            or self._waypoints
            or self._quiet_mark is not None
            or self._lost is not None
            or self._quiet
            or self._turn_forced
        ):
            return None
        key = view.key()
        twice = self.stabilizer.stable(PROVISIONAL_FRAMES).key() == key
        since = self._readings_from
        if since is None or since[0] is not s or since[1] is not self._arms:
            self._readings, self._readings_from = {}, (s, self._arms)
        if (key, twice) in self._readings:
            return self._readings[key, twice]
        armed = self._arms.reported and not self._signalled
        if (key, False) not in self._readings:
            reading = self._legal_reading(view, arms=armed)
            once = None if reading is None else provisional(self.game, s, reading[0], self.names, READ_ONCE)
            self._readings[key, False] = once
        shown = self._readings[key, False]
        if shown is None and twice:  # a rule broken: what comes before it (one break is enough)
            reading = self._legal_reading(view, min(1, self.settings.max_violations), armed)
            if reading is not None and reading[0].violations:
                found = reading[0]
                first = min(i for i, _ in found.violations)
                first = min([first, *(i for i, forced in enumerate(found.forced) if forced)])
                before = dataclasses.replace(
                    found, steps=found.steps[:first], violations=(), forced=found.forced[:first]
                )
                if any(not st.is_chance for st in before.steps):
                    shown = provisional(self.game, s, before, self.names, BEFORE_A_BREAK)
        self._readings[key, twice] = shown
        return shown

    def _own_arms_only(self, view: TableView) -> bool:
        """Camera only, with the players' arms seen: every arm seen since the last accepted table
        is the current player's, no other player's area is out of view (a hand there may be that
        player's, its arm unseen) and no pause after the current player's main action ended their
        turn (:meth:`ArmLog.paused`). Then the arms tell no other story than the current player
        going on with their turn, and a change of theirs is accepted past a zone out of view (a
        reading that keeps flickering, their own hand gone on) as without the arms."""
        s = self.state
        if any(seat != s.current for _, seat, _ in self._arms.seen):
            return False
        others = (sv for i, sv in enumerate(view.seats) if i != s.current)
        if any(None in (sv.ring, sv.archive, sv.gizmos, sv.vp) for sv in others):
            return False
        return not (s.main_done and self._arms.paused(self._frame, s))

    def _close_last_turn(self, view: TableView, update: Update) -> None:
        """End the game's last turn from the table. Nobody plays after it, so no next player's
        change can show it is over: once its player has taken the main action and the triggers it
        allows (nothing legal is left but ending the turn) and the table stays as accepted for
        ``final_wait`` frames, the turn and the game end (with triggers still unused, after
        ``eot_wait`` frames). A signal pending settles it the usual way. With the arms reported
        (camera only) a pause ends it as it ends any turn: ``PAUSE_FRAMES`` at most, counted
        from when the table last moved or an arm was last seen (:meth:`ArmLog.stood`: cards put
        back under a deck after a Build are arms over the deck), not from when its reading was
        accepted."""
        if not (self._last_turn_open() and matches(self.state, view, turn=False)):
            self._still = 0
            return
        self._still += 1
        if self._last_turn_stood(self.state, self._still, closing=True):
            self._end_last_turn("seen from the table", update)

    def _last_turn_open(self) -> bool:
        """The game's last turn, its main action taken, awaits only its end (no chance, trigger
        pending, end or signal to settle first)."""
        s = self.state
        last = s.end_triggered and s.current == s.num_players - 1 and s.main_done
        return last and not (s.game_over or s.chance or s.pending or self._ends or self._signalled)

    def _end_last_turn(self, how: str, update: Update) -> None:
        s = self.state
        step = Step("end_turn", s.current)
        with self.record.transaction():
            self._advance(step, forced=False, live=True, update=update, ended="table")
            self._note(f"turn {s.turn + 1}: the game's last turn ended, {how}", update)
        update.steps.append(step)
        self._still = 0
        self._emit("state", {"turn": self.state.turn})

    @_atomic
    def footage_ended(self) -> Update:
        """A recording being refereed has no more frames: nobody can go on after its end, so a
        legal last turn whose table has stood the wait of a turn with nothing left (``final_wait``,
        ``eot_wait``; not the whole pause :meth:`_close_last_turn` needs with the arms reported,
        lest a player going on within a moment be taken for play after the game) is over. A
        camera's frames never end this way: a camera that stops is no end of the game."""
        update = Update()
        if self._still and self._last_turn_open() and self._last_turn_stood(self.state, self._still):
            self._end_last_turn("as the recording ended", update)
        return update

    def _last_turn_stood(self, state: State, frames: int, closing: bool = False) -> bool:
        """Whether the game's last turn, at ``state`` (its player has taken the main action), has
        stood long enough to be over, the table unchanged for ``frames`` frames: ``final_wait``
        with nothing legal left but ending it, ``eot_wait`` with triggers unused; with the arms
        reported (camera only) a pause at most, counted from when the table last moved or an arm
        was last seen (:meth:`ArmLog.stood`), not from when it was first read. ``closing`` (a
        legal table, whose end makes whatever comes next play after the game): a pause, even
        with nothing legal left, as it ends any turn: a player who goes on within a moment is
        still in their turn, breaking a rule of it, not playing after the game."""
        wait, still = self.settings.final_wait if turn_over(state) else self.settings.eot_wait, frames
        if self._arms.reported and not self._signalled:
            wait = PAUSE_FRAMES if closing else min(wait, PAUSE_FRAMES)
            if self._arms.still_from is not None:  # an arm is the player still acting
                still = self._arms.stood(self._frame)
        return still >= wait

    def _last_turn_over(self, found: Explanation | None, frames: int) -> bool:
        """Camera only: a reading of the game's last turn that breaks a rule awaiting the end of
        the turn (``UNDERPAID``, ``NOT_TRIGGERED``) has no next player to show that end; once its
        table has stood as long as ends that turn (:meth:`_last_turn_stood`), it is over and the
        break certain (before: decided never, the game left open)."""
        if found is None or not found.violations or self._signalled or self._ends:
            return False
        s = found.state
        if s.game_over or s.chance or s.pending is not None or not s.main_done:
            return False
        last = s.end_triggered and s.current == s.num_players - 1
        return last and self._last_turn_stood(s, frames)

    @_atomic
    def end_of_turn(self, event: EndOfTurn, who: str = "referee") -> Update:
        """An end-of-turn signal: the current turn must end in the explanation."""
        self.record.append("event", event.to_json(), who=who)
        self._on_end_signal()
        return self._after_end_signal()

    @_atomic
    def dispenser(self, event: DispenserEvent) -> Update:
        """A dispenser sensor event: it corroborates colors and counts (never a warning alone);
        the board's button ends the turn."""
        self.record.append("event", event.to_json(), who="dispenser")
        self._on_dispenser(event)
        if event.kind == "button":
            return self._after_end_signal()
        return Update()

    def _on_event(self, payload: dict[str, Any]) -> None:
        """Replay a recorded event (the same bookkeeping as when it arrived)."""
        if payload.get("type") == "end_of_turn":
            self._on_end_signal()
        elif payload.get("type") == "dispenser":
            self._on_dispenser(DispenserEvent.from_json(payload))

    def _on_end_signal(self) -> None:
        self._ends += 1
        self._signalled = True
        # Recall only what a single bad frame blanked (it stays out of the window ``frames``
        # frames): a zone covered longer is under a hand, and may be changing there.
        recent = self.settings.frames
        self._checkpoints.append((self.stabilizer.stable(), self.stabilizer.recent(recent)))
        self._waited = 0
        self.sensors.close_turn()

    def _on_dispenser(self, event: DispenserEvent) -> None:
        self.sensors.on_dispenser(event)
        if event.kind == "button":
            self._on_end_signal()

    def _after_end_signal(self) -> Update:
        update = Update()
        view = self.stabilizer.stable()
        if view.complete():
            self._last_key = view.key()
            self._explain(view, update, urgent=True, end_last=True)
        elif not self._see_past_hands(view, update):
            hidden = ", ".join(zone_text(z, self.names) for z in view.unknown()[:3])
            update.notes.append(f"end of turn noted; waiting for a clear view ({hidden} not seen)")
        self._show_provisional(update)
        return update

    def _explainable(self, view: TableView) -> bool:
        """Enough is seen to explain at all: the whole Display and the Row (refills land there)."""
        return len(view.display) == 9 and view.row is not None

    # ------------------------------------------------------------------ explaining

    def _hints(
        self,
        view: TableView,
        urgent: bool,
        end_last: bool = False,
        fresh: bool = False,
        recalled: bool = True,
        sensed: bool = True,
        waypoints: bool = True,
        inferred: bool = False,
        table_ends: int | None = None,
    ) -> Hints:
        """What the signals and sensors add to the view. ``fresh``: for an explanation from the
        start of the turn (nothing of the turn accepted yet); ``recalled``: the tables at the
        end signals include zones recalled from just before them; ``sensed``: the dispenser's
        counts of the turn (marbles returned, Row refills) must be met (the count of returns
        always, while the paying ring is out of view; :meth:`Sensors.hints`). ``table_ends``:
        camera only, the turns the explanation ends, as whose areas changed tell
        (:func:`referee.tracker.turns.table_turns`); turns that left no trace cost nothing in the
        search (the tracker weighs them)."""
        s = self.settings
        ring_seen = view.seats[self.state.current].ring is not None
        hints = dataclasses.replace(
            self.sensors.hints(urgent, fresh, sensed, ring_seen),
            end_turns=self._ends,
            unsignalled_ends=s.inferred_ends if inferred or not self._signalled else 0,
            free_until_end=self._broke_own_turn(),
            warned=frozenset(self._turn_warned),
            waypoints=tuple(view for view, binds in self._waypoints if binds or waypoints),
            end_last=end_last,
            checkpoints=tuple(soft if recalled else seen for seen, soft in self._checkpoints),
        )
        if table_ends is not None:
            hints = dataclasses.replace(hints, end_turns=table_ends, unsignalled_ends=0, quiet_turns=True)
        return hints

    def _broke_own_turn(self) -> bool:
        """Whether the current player broke a rule in this turn (a forced step of theirs was
        accepted): the rest of their turn is taken as seen (no cascade, ``Hints.free_until_end``).
        Another player's move out of turn in it is no break of theirs: their own steps are
        refereed as usual, and a step that breaks a rule is no likelier than before. (Taken as
        seen, a Build of a card from a deck, one step, was found before the Research that drew
        it, and the reading with the Research declined and the Build out of turn won: seed 7272,
        turn 71.)"""
        if not self._turn_forced:
            return False
        turn, seat = self.state.turn, self.state.current
        return any(line.forced and line.turn == turn and line.player == seat for line in self.log)

    def _explain(self, view: TableView, update: Update, urgent: bool, end_last: bool = False) -> None:
        if self.state.game_over:
            self._after_game(view, update)
            return
        s = self.settings
        hints = self._hints(view, urgent, end_last)
        found: Explanation | None = None
        unsensed = False  # found only by setting the sensors' counts aside
        mark = self._quiet_mark
        if self._signalled and mark is not None:
            # The first signal came after turns were let pass without a trace: where turns are
            # signalled, that reading is unlikely; explain again from before it.
            self._go_back(mark[0], mark[1], mark[3], update)
        if not self._signalled and not self._ends:  # camera only: the turns come from the table
            reading = explain_from_table(
                self.state,
                view,
                functools.partial(self._hints, view, urgent, end_last),
                not all(binds for _, binds in self._waypoints),
                self._quiet_mark,
                s,
                self._arms,
                self._view_from,
                self._rest_ends,
            )
            found, hints = reading.found, reading.hints
            self._table_cost = reading.cost
            if reading.ends is not None:
                self._table_ends = reading.ends
            self._table_view = view
            if reading.rewind_to is not None:
                start, seen, lines = reading.rewind_to
                self._go_back(start, seen, lines, update)
        tries = (
            []
            if not self._signalled and not self._ends
            else relaxations(
                hints,
                any(seen != soft for seen, soft in self._checkpoints),
                not all(binds for _, binds in self._waypoints),
                self._signalled,
            )
        )
        for relax in tries:
            if relax.get("inferred") and found is not None:
                break  # where turns are signalled, a turn ends unsignalled only as a last resort
            tried = explain(
                self.state, view, self._hints(view, urgent, end_last, **relax), s.max_violations, s.limits
            )
            if tried is not None and (found is None or len(tried.violations) < len(found.violations)):
                found, unsensed = tried, not relax.get("sensed", True)
            if found is not None and found.legal:
                break
        if (
            found is not None
            and unsensed
            and self._revise(view, update, urgent, end_last, len(found.violations))
        ):
            return  # the sensors settled a guess made earlier in the turn
        if found is None and self._ends > int(end_last) and self._catch_up(update):
            self._explain(view, update, urgent, end_last)  # the rest, from the signalled table
            return
        if found is not None and found.legal and found.tables == 1:
            self._accept(found, update)
            return
        if found is not None and found.legal:  # part of the table is out of view, and it matters
            hidden = ", ".join(zone_text(z, self.names) for z in view.unknown()[:3])
            self._uncertain(
                ("hidden", self.state.turn, tuple(view.unknown())),
                update,
                f"{found.tables} different tables fit what is seen while {hidden} is out of view: "
                "show it to the camera, or enter the turn by hand",
            )
            return
        doubtful = bool(view.unsure) and self._explains_if_misread(view, hints)
        key = view.key()
        if self._suspect is None or self._suspect.key != key:
            self._suspect = _Suspect(
                key, 1, found, end_last, doubtful=doubtful, unsure=view.unsure, view=view
            )
        else:  # the same table read again (its doubtful zones read differently): it persists
            self._suspect.found, self._suspect.doubtful = found, doubtful
            self._suspect.unsure = view.unsure
            self._suspect.frames += 1
        self._conclude(view, update, urgent)

    def _catch_up(self, update: Update) -> bool:
        """Explain the table as it stood at the oldest pending end signal, by itself: a smaller
        search than everything since, when that one found nothing at all (several turns went by
        while the table was hard to see). A rule broken there is certain: its turn is over."""
        seen, soft = self._checkpoints[0]
        for mark in (soft, seen) if soft != seen else (seen,):
            if not self._explainable(mark):
                continue
            hints = dataclasses.replace(
                self._hints(mark, True, True), end_turns=1, checkpoints=(mark,), unsignalled_ends=0
            )
            found = explain(self.state, mark, hints, self.settings.max_violations, self.settings.limits)
            if found is None or found.tables != 1 or misread_cards(self.state, found):
                continue
            self._accept(found, update)
            return True
        return False

    def _revise(self, view: TableView, update: Update, urgent: bool, end_last: bool, budget: int) -> bool:
        """The turn's earlier tables were ambiguous (a marble drawn, or picked and refilled with
        the same color?) and the guess accepted then leads nowhere good: explain the whole turn
        again from its start, with the sensors' counts met and at most ``budget`` broken rules.
        Not after a rule break was accepted this turn."""
        start = self._baseline
        if start == self.state or self._turn_forced or budget < 0:
            return False
        camera_only = not self._signalled and not self._ends
        hints = self._hints(
            view, urgent, end_last, fresh=True, table_ends=self._table_ends if camera_only else None
        )
        found = explain(start, view, hints, min(budget, self.settings.max_violations), self.settings.limits)
        if found is None or found.tables != 1:
            return False
        with self.record.transaction():
            self.record.append("state", {"state": self.game.state_to_json(start), "reason": "revise"})
            self._rewind(start)
            self._note(
                f"turn {start.turn + 1}: re-explained from its start "
                "(a later table settled an earlier guess)",
                update,
            )
            self._accept(found, update)
        return True

    def _go_back(self, start: State, seen: TableView, lines: int, update: Update) -> None:
        """Camera only: explain again from before the last explanation, which let turns pass
        without a trace (a table seen since reads better as a move out of turn there)."""
        with self.record.transaction():
            self.record.append(
                "state", {"state": self.game.state_to_json(start), "reason": "revise", "log": lines}
            )
            self._rewind(start, lines)
            self._note(
                f"turn {start.turn + 1}: re-explained (what came later made a move out of turn "
                "likelier than turns that left no trace)",
                update,
            )
        self._quiet_mark = None
        self._waypoints = [(seen, True)]
        self._arms = self._arms.again()  # the arms the reading gone back over accounted for

    def _rewind(self, start: State, lines: int | None = None) -> None:
        """Back to the start of the turn (camera only: to the state before an earlier
        explanation, with the ``lines`` of the move log then) to explain it again (live or
        replayed)."""
        self.state = start
        if lines is None:
            self.log = [line for line in self.log if line.turn < start.turn]
        else:
            del self.log[lines:]
        self.turn_starts = [t for t in self.turn_starts if t.turn <= start.turn] or [start]
        if lines is not None:  # an earlier turn: it is redone from its start from now on
            self._baseline = self.turn_starts[-1]
            self._turn_forced = any(line.forced for line in self.log if line.turn == start.turn)
            self._turn_warned = self._warned_in(start.turn) if self._turn_forced else set()
        self.sensors.restart_turn()

    def _explains_if_misread(self, view: TableView, hints: Hints) -> bool:
        """Whether legal play explains the table once the zones read with low confidence are
        taken as unknown (then a broken rule would rest on a possible misreading)."""
        doubtful = view.unsure
        marks = tuple(mark.without(doubtful) for mark in hints.checkpoints)
        sure = dataclasses.replace(hints, checkpoints=marks)
        return explain(self.state, view.without(doubtful), sure, 0, self.settings.limits) is not None

    def _conclude(self, view: TableView, update: Update, urgent: bool) -> None:
        """Decide on a view no legal sequence explains: warn, ask a person, or wait."""
        suspect = self._suspect
        if suspect is None:
            return
        s = self.settings
        persisted = suspect.frames >= s.confirm
        found = suspect.found
        urgent = urgent or self._last_turn_over(found, suspect.frames)
        refilling = sum(view.row or ()) < 6 and any(self.state.dispenser)
        if urgent and found is None and refilling and self._waited < s.eot_wait:
            return  # the Row is still being refilled: wait for the table to settle
        # Rules broken in a turn the explanation ends (the next player has begun) are certain.
        codes = (
            {
                e.code
                for i, e in found.violations
                if not settled(found, i, e.code)
                and not self._arms.settles(self.state, found.steps, i, self._view_from)
            }
            if found
            else set()
        )
        decide = urgent or (persisted and (found is None or codes <= CERTAIN_MID_TURN))
        if suspect.doubtful:
            # The break rests on a low-confidence reading: the camera gets the rest of the turn
            # to read it surely (then the break is warned as usual); at the turn's end, ask.
            if urgent:
                zones = ", ".join(zone_text(z, self.names) for z in sorted(view.unsure)[:3])
                self._uncertain(
                    ("unsure", self.state.turn, tuple(sorted(view.unsure))),
                    update,
                    f"what is seen would break a rule, but it rests on {zones}, read with low "
                    "confidence: it could be a misreading. Please confirm or correct it.",
                    found,
                )
            return
        if decide and not suspect.revised:
            suspect.revised = True
            budget = len(found.violations) - 1 if found is not None else s.max_violations
            if self._revise(view, update, urgent, suspect.end_last, budget):
                return
        if found is None:
            self._quiet = s.backoff
            if decide:
                strange = cards_from_nowhere(self.state, view)
                hint = f" ({strange} not in view before: a misread card?)" if strange else ""
                self._uncertain(
                    ("unexplained", suspect.key),
                    update,
                    "what is seen cannot be explained by any sequence of steps: "
                    + "; ".join(mismatches(self.state, view)[:3])
                    + f"{hint}. Please confirm or correct it.",
                    view if view.complete() else None,
                )
                if not self._signalled and not self._ends and view.complete():
                    # Camera only, nobody may be watching the dashboard: once play has gone on
                    # past a table nothing explains (a later, different table is not explained
                    # either, and nobody answered), the referee goes on from the table as it now
                    # is rather than wait (no cascade); a person can still correct it.
                    if self._lost is not None and self._lost != suspect.key:
                        self._quiet_mark = None
                        note = f"turn {self.state.turn + 1}: nothing explains the table, play went on"
                        self._lost_turns = follow_lost(self._lost_turns, view, self.state.num_players)
                        self._adopt_table(view, "referee", note, self._lost_turns)
                        self._quiet = 0
                    else:
                        self._lost = suspect.key
                        start = (view_of(self.state), self.state.current, 0)
                        self._lost_turns = follow_lost(start, view, self.state.num_players)
            return
        misread = misread_cards(self.state, found)
        if misread and decide:
            cards = ", ".join(f"#{c}" for c in misread)
            self._uncertain(
                ("misread", suspect.key),
                update,
                f"{cards} appeared although no such card was in view: a misread card, or taken from a "
                "deck? Please confirm or correct it.",
                found,
            )
            return
        if decide and not misread:
            self._accept(found, update)
        elif not decide and found.violations:
            # The verdict waits for the end of the turn, but the turns the explanation ends
            # before the break are over (a later player has begun): accept them now, so the
            # turn is known to have begun when the next player's change comes.
            done = turns_before_break(self.state, found)
            if done is not None:
                rest = self._table_ends
                self._accept(done, update)
                self._last_key = None  # the rest is explained again from there, next frame
                if rest is not None and not self._signalled:
                    # ... with as many turns ended as the reading left (the arms that told them
                    # are spent: a move out of turn before the turn's player acts is asked for)
                    self._rest_ends = rest - sum(st.kind == "end_turn" for st in done.steps)

    def _after_game(self, view: TableView, update: Update) -> None:
        """The game is over: changes on the table are warned about (once per player), never scored."""
        self._ends = 0
        self._checkpoints.clear()
        if matches(self.state, view):
            return
        found = explain(self.state, view, Hints(), self.settings.max_violations, self.settings.limits)
        seats: list[tuple[int, Step | None]] = []
        if found is not None:
            seats = [(st.player, st) for st in found.steps if st.player is not None]
        if not seats:
            changed = [
                i
                for i, (sv, p) in enumerate(zip(view.seats, self.state.players, strict=True))
                if not seat_matches(p, sv)
            ]
            seats = [(i, None) for i in changed] or [(self.state.current, None)]
        with self.record.transaction():
            for seat, step in seats:
                self._warn_after_end(seat, step, view, update)

    def _warn_after_end(self, seat: int, step: Step | None, view: TableView | None, update: Update) -> None:
        """Play after the end: warned once per player, never applied (the scores are final)."""
        if seat in self._warned_after_end:
            return
        self._warned_after_end.add(seat)
        err = IllegalStep("GAME_OVER", "the game is over; nothing more can be played")
        if step is not None:
            message, fix = describe_violation(step, err, self.state, self.names[seat])
        else:
            what = "; ".join(mismatches(self.state, view)[:2]) if view is not None else "the table"
            who = self.names[seat]
            message = f"{who} changed the table after the game ended ({what}) (ruling 24, GAME_OVER)"
            fix = "put the table back as it was: the game is over and the scores are final"
        update.warnings.append(self._new_warning("violation", self.state, seat, "GAME_OVER", message, fix))

    def _accept(self, found: Explanation, update: Update, ended: str | None = None) -> None:
        """Record and apply an explanation, with a warning per broken rule (one transaction).
        ``ended``: how its ends of turn were known, when not by a signal or the table."""
        start, lines = self.state, len(self.log)
        by_index: dict[int, list[IllegalStep]] = {}
        for index, err in found.violations:
            by_index.setdefault(index, []).append(err)
        with self.record.transaction():
            if self._last_obs is not None:
                self.record.append("observation", self._last_obs.to_json())
            folds = {i: (level, cards) for i, level, cards in found.folds}
            for i, step in enumerate(found.steps):
                before = self.state
                if before.game_over:  # the explanation ended the game and play went on
                    if step.player is not None:
                        self._warn_after_end(step.player, step, None, update)
                    continue
                how = ended if step.kind == "end_turn" else None
                self._advance(step, found.forced[i], live=True, update=update, ended=how)
                update.steps.append(step)
                for err in by_index.get(i, []):
                    seat = step.player if step.player is not None else before.current
                    if (seat, err.code) in self._turn_warned:  # warned in the turn now played
                        continue  # one warning per player, rule and turn
                    message, fix = describe_violation(step, err, before, self.names[seat])
                    update.warnings.append(
                        self._new_warning("violation", before, seat, err.code, message, fix)
                    )
                if i in folds:
                    # The cards a Research put back were never seen: fold them into the deck's
                    # unknown part, as the search did (recorded, so a replay does the same).
                    self.state = fold_research(self.state, *folds[i])
                    self.record.append(
                        "state", {"state": self.game.state_to_json(self.state), "reason": "research"}
                    )
            if not self.state.game_over and self.state != found.state:
                raise AssertionError("the accepted steps do not reproduce the explanation's state")
            if found.alternatives > 1:
                self._note(
                    f"turn {self.state.turn + 1}: {found.alternatives} different step sequences explain "
                    "this table equally well; one was recorded",
                    update,
                )
        self._suspect = None
        self._rest_ends = None
        self._last_partial = None
        self._waypoints.clear()
        self._lost = None
        self._lost_turns = None
        seen = self._table_view
        self._quiet_mark = None
        arms_seen = self._arms.reported and self._table_cost is not None
        cost = self._table_cost if arms_seen and self._table_cost is not None else weight(found)
        self._table_cost = None
        if (
            not self._signalled
            and found.legal
            and found.quiet
            and seen is not None
            and matches(self.state, seen)
        ):
            self._quiet_mark = (start, seen, cost, lines)
        if seen is None or matches(self.state, seen):
            self._arms = self._arms.consume(self._view_from, start, found.steps, self.settings.frames)
        else:  # the turns before a rule break awaiting its verdict: their arms only
            self._arms = self._arms.consume_steps(start, found.steps)
        self._emit("state", {"turn": self.state.turn})

    def _advance(
        self,
        step: Step,
        forced: bool,
        live: bool,
        update: Update | None = None,
        ended: str | None = None,
    ) -> State:
        """Apply one accepted step, live or replayed: the same bookkeeping either way. An end of
        turn says how it was known (``ended``; by default a pending signal, else the table)."""
        before = self.state
        after = force(before, step)[0] if forced else apply(before, step)
        how = ended or ("signal" if self._ends else "table") if step.kind == "end_turn" else None
        if live:
            entry = {"step": self.game.step_to_json(step), "forced": forced, "turn": before.turn}
            if how is not None:
                entry["ended"] = how
            self.record.append("step", entry)
        self.state = after
        # The set-up's Row: not part of the first turn (a sensed refill is used up).
        setup = step.is_chance and before is self._baseline and before.turn == 0 and not before.main_done
        self.sensors.on_step(before, step, setup)
        if not step.is_chance:
            seat = step.player if step.player is not None else before.current
            self.log.append(
                LogLine(
                    before.turn,
                    before.round,
                    seat,
                    self.game.describe(step, self.names[seat]),
                    self.game.step_to_json(step),
                    forced,
                    how,
                )
            )
        elif self.log:
            self.log.append(
                LogLine(
                    before.turn, before.round, None, self.game.describe(step), self.game.step_to_json(step)
                )
            )
        self._turn_forced |= forced
        if step.is_chance and before is self._baseline:
            self._baseline = after  # the set-up's refills: a turn is redone from after them
        if step.kind == "end_turn":
            self._end_turn_bookkeeping(before, live, update)
        if after.turn != before.turn:
            self.turn_starts.append(after)
            self._baseline = after
            self._turn_forced = False
            self._turn_warned.clear()
        return after

    def _end_turn_bookkeeping(self, before: State, live: bool, update: Update | None) -> None:
        """A turn ended: settle its end signal and compare its steps with the sensors."""
        if self._ends:
            self._ends -= 1
            self._checkpoints.pop(0)
            self._waited = 0
        tally, done = self.sensors.end_turn()
        if live and self.sensors.reported:
            for message in self.sensors.disagreements(tally, done, self.names[before.current]):
                w = self._new_warning(
                    "uncertain", before, before.current, None, message, "confirm what happened, or correct it"
                )
                if update is not None:
                    update.warnings.append(w)

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
        self._keep_warned(w)
        self.record.append("warning", w.to_json())
        self._emit("warning", w.to_json())
        return w

    def _keep_warned(self, w: RefereeWarning) -> None:
        """Keep a warning (live or replayed); a rule break warned in the turn now played is
        not warned again for the same player in that turn."""
        self.warnings.append(w)
        if w.kind == "violation" and w.player is not None and w.code and w.turn == self.state.turn:
            self._turn_warned.add((w.player, w.code))

    def _warned_in(self, turn: int) -> set[tuple[int, str]]:
        """(seat, code) of the rule breaks warned about in a turn (not dismissed)."""
        return {
            (w.player, w.code)
            for w in self.warnings
            if w.kind == "violation"
            and w.turn == turn
            and w.player is not None
            and w.code
            and w.status != "dismissed"
        }

    def _uncertain(
        self,
        key: tuple[object, ...],
        update: Update,
        message: str,
        found: Explanation | TableView | None = None,
    ) -> None:
        """Ask a person to confirm, once per situation: the same zones in doubt in the same turn
        are one question, however their readings flicker from frame to frame. ``found`` is what
        the table shows if the reading is right (the steps, or where no steps explain it, the
        whole table as seen); accepting the warning adopts it."""
        if key in self._raised:
            return
        self._raised.add(key)
        with self.record.transaction():
            warning = self._new_warning(
                "uncertain",
                self.state,
                None,
                None,
                message,
                "confirm what is on the table (accept), or correct it",
            )
            update.warnings.append(warning)
        if found is not None:
            self._adoptable[warning.id] = (self.state, found)

    @_atomic
    def decide(self, warning_id: int, status: str, who: str) -> RefereeWarning:
        """Accept or dismiss a warning (recorded with who).

        Accepting an uncertain reading confirms the table as seen: the explanation it rested on
        is adopted, its broken rules warned about, as if the reading had been sure all along
        (only while nothing else has been accepted since it was raised).
        """
        warning = self._set_status(warning_id, status, who)
        with self.record.transaction():
            self.record.append("warning_status", {"id": warning_id, "status": status, "who": who}, who=who)
            adopt = self._adoptable.pop(warning_id, None)
            if status == "accepted" and adopt is not None and adopt[0] == self.state:
                note = f"turn {self.state.turn + 1}: {who} confirmed the reading of warning #{warning_id}"
                if isinstance(adopt[1], TableView):
                    self._adopt_table(adopt[1], who, note)
                else:
                    self._note(note, who=who)
                    self._accept(adopt[1], Update())  # listeners hear of it through events
                    self._last_key = None  # the table is explained afresh from the adopted state
                    if self._ends:  # a turn end signalled meanwhile: settle it on the table as it is
                        self._after_end_signal()
        self._emit("warning", warning.to_json())
        return warning

    def _set_status(self, warning_id: int, status: str, who: str) -> RefereeWarning:
        if status not in ("accepted", "dismissed"):
            raise TrackerError(f"status: expected 'accepted' or 'dismissed', got {status!r}")
        for i, w in enumerate(self.warnings):
            if w.id == warning_id:
                self.warnings[i] = w.with_status(status, who)
                return self.warnings[i]
        raise TrackerError(f"no warning #{warning_id}")

    def _adopt_table(
        self, view: TableView, who: str, note: str, turns: tuple[TableView, int, int] | None = None
    ) -> None:
        """Take the table as seen (a confirmed reading nothing explains), recorded like a
        correction so a replay does the same; a view no real table can show is only noted.
        ``turns`` (camera only): the turns that passed meanwhile, by whose area changed: the
        turn moves on to the last mover's, their main action taken."""
        try:
            new = adopted_table(self.state, view, turns)
        except StateError as exc:
            self._note(f"{note}, but it cannot be adopted ({exc}): correct the table by hand", who=who)
            return
        self._record_correction("adopt_table", who, new, "correction")
        self._note(f"{note}: the table was taken as seen", who=who)
        self._set_state(new, reset=True)

    def _note(self, text: str, update: Update | None = None, who: str = "referee") -> None:
        """A note for the move log: kept, recorded, and passed on with ``update``."""
        self.notes.append(text)
        if update is not None:
            update.notes.append(text)
        self.record.append("note", {"text": text}, who=who)

    def _record_correction(self, what: str, who: str, state: State, reason: str) -> None:
        """Record a person's change that carries no payload, and the state it leads to."""
        now = time.time()
        entry = {"time": now, "who": who, "what": what, "payload": {}, "type": "correction"}
        with self.record.transaction():
            self.record.append("correction", entry, who=who, at=now)
            self.record.append("state", {"state": self.game.state_to_json(state), "reason": reason}, who=who)

    # ------------------------------------------------------------------ people have the last word

    @_atomic
    def play(self, step: Step, who: str = "manual") -> Update:
        """Manual mode: apply one step chosen by a person; an illegal step raises IllegalStep."""
        if self.ended_by is not None:
            raise IllegalStep("GAME_OVER", f"the game was ended by {self.ended_by}")
        self.game.apply(self.state, step)  # raises before anything is recorded
        update = Update(steps=[step])
        with self.record.transaction():
            self._advance(step, forced=False, live=True, update=update, ended="person")
        self._emit("state", {"turn": self.state.turn})
        return update

    def legal_steps(self) -> list[Step]:
        """The steps a person may enter now (manual mode)."""
        return [] if self.ended_by is not None else self.game.legal_steps(self.state)

    @_atomic
    def correct(self, correction: Correction) -> State:
        """Apply a person's correction and record it with who and when.

        ``what``: ``marble_color`` {zone: "row"|"ring", seat?, from, to}; ``card_id`` {old, new}
        (the card believed to be ``old`` is really ``new``: the two swap places);
        ``state`` {state: <state JSON>} (replace the whole state).
        """
        new = corrected(self.state, correction)
        with self.record.transaction():
            self.record.append("correction", correction.to_json(), who=correction.who, at=correction.time)
            self.record.append(
                "state", {"state": self.game.state_to_json(new), "reason": "correction"}, who=correction.who
            )
        self._set_state(new, reset=True)
        return new

    def _set_state(self, state: State, reset: bool) -> None:
        self.state = state
        if reset:  # a person changed what the referee believes: start the turn's reckoning afresh
            self._baseline = state
            self._turn_forced = False
            self._turn_warned.clear()
            self._ends = 0
            self._checkpoints.clear()
            self._waited = 0
            self.sensors.reset()
            self._last_key = None
            self._suspect = None
            self._waypoints.clear()
            self._raised.clear()
            self._adoptable.clear()
            self._lost = None
            self._lost_turns = None
        self._emit("state", {"turn": state.turn})

    @_atomic
    def reread_turns(self, from_turn: int, ends: int, who: str) -> Update:
        """A person moves inferred turn boundaries: the table now seen is explained again from
        the start of turn ``from_turn`` (counted from 0, one of the turns kept since the last
        correction) with exactly ``ends`` turns ended since, a turn that left no trace being a
        Research declined. The ends are recorded as entered by a person; warnings of the old
        reading stay, for the person to dismiss. Refused (:class:`TrackerError`) when the table is
        not fully in view or no sequence of steps fits."""
        if self.ended_by is not None or self.state.game_over:
            raise TrackerError("reread_turns: the game is over")
        view = self.stabilizer.stable()
        start, found = reread(self.turn_starts, self.state, view, from_turn, ends, self.names, self.settings)
        update = Update()
        lines = next((i for i, line in enumerate(self.log) if line.turn >= from_turn), len(self.log))
        now = time.time()
        entry = {
            "time": now,
            "who": who,
            "what": "reread_turns",
            "payload": {"from_turn": from_turn, "ends": ends},
        }
        self.record.append("correction", entry, who=who, at=now)
        self._set_state(self.state, reset=True)
        self.record.append(
            "state", {"state": self.game.state_to_json(start), "reason": "revise", "log": lines}, who=who
        )
        self._rewind(start, lines)
        self._note(
            f"turn {from_turn + 1}: {who} set {ends} turn end(s) up to the table seen", update, who=who
        )
        self._table_view = None  # a person's reading: never gone back over
        self._accept(found, update, ended="person")
        self._last_key = view.key()
        return update

    @_atomic
    def undo_turn(self, who: str) -> State:
        """Go back to the start of the current turn (or of the previous one if nothing happened yet)."""
        self._record_correction("undo_turn", who, undo_target(self.turn_starts, self.state), "undo")
        return self._undo()

    def _undo(self) -> State:
        target = undo_target(self.turn_starts, self.state)
        if target is not self.turn_starts[-1]:
            self.turn_starts.pop()
        self.log = [line for line in self.log if line.turn < target.turn]
        self._set_state(target, reset=True)
        return target

    @_atomic
    def end_game(self, who: str) -> None:
        """A person ends the game now (recorded); scoring is final from here."""
        self.ended_by = who
        self.record.append("end", {"who": who}, who=who)
        self.state = dataclasses.replace(self.state, game_over=True)
        self._emit("state", {"turn": self.state.turn, "game_over": True})

    # ------------------------------------------------------------------ reporting

    def scores(self) -> list[dict[str, Any]]:
        """The scoring table, best first, each row with the player's name."""
        return [{**row, "name": self.names[row["seat"]]} for row in self.game.score_table(self.state)]

    def snapshot(self) -> dict[str, Any]:
        """Everything the dashboard shows, as JSON."""
        return {
            "names": self.names,
            "state": self.game.state_to_json(self.state),
            "round": self.state.round,
            "current": self.state.current,
            "end_triggered": self.state.end_triggered,
            "game_over": self.state.game_over,
            "scores": self.scores(),
            "warnings": [w.to_json() for w in self.warnings],
            "log": [line.to_json() for line in self.log],
            "notes": list(self.notes),
            "end_signals_pending": self._ends,
        }


def replay_states(data: Any) -> Iterator[State]:
    """Every state a recorded game went through, from :meth:`GameRecord.export` JSON: the setup,
    then the state after each entry that changed it."""
    record = GameRecord(":memory:")
    entries = GameRecord.entries_of_export(data)
    if not entries or entries[0].kind != "setup":
        raise RecordError("export: the first entry must be the setup")
    tracker = Tracker._from_setup(record, entries[0].payload, None)
    yield tracker.state
    for entry in entries[1:]:
        before = tracker.state
        tracker._replay(entry.kind, entry.payload, entry.who)
        if tracker.state != before:
            yield tracker.state
