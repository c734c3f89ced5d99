"""The games one server holds, each behind a lock, and the change journal that feeds the pages.

The tracker is not thread-safe; the web server answers requests on many threads and a live
runner referees from one more. So every tracker call goes through :meth:`LiveGame.locked`,
and when a block that changed something ends, the game *publishes* a snapshot: the table view,
the move log and a sequence number. Pages receive snapshots as server-sent events; a page that
reconnects says which snapshot it last saw and receives the current one with only the part of
the log it lacks (finished log entries never change).
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from referee.game import get_game, players_problem
from referee.gizmos import state_from_json
from referee.tracker import Tracker, TrackerError
from referee.tracker.record import GameRecord, RecordError
from web.live import FrameSource, LiveRunner
from web.narrate import Narrator
from web.view import table_view

GAME_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
RECORD_SUFFIX = ".sqlite"
MAX_NAME = 24
FINISHED_HISTORY = 4096


class HubError(Exception):
    """A request about games that cannot be met; ``status`` is the HTTP status it maps to."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(slots=True)
class Settings:
    """The table's settings, shown and changed on the setup page, passed to the live runner."""

    camera_source: str = ""  # e.g. "0" (the first camera), a video file, an RTSP URL
    serial_port: str = ""  # e.g. "/dev/ttyUSB0"; empty: no dispenser sensors

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def update(self, raw: dict[str, Any]) -> None:
        """Validate and apply ``{"camera_source": ..., "serial_port": ...}`` (either may be left out)."""
        for key in ("camera_source", "serial_port"):
            if key not in raw:
                continue
            value = raw[key]
            if not isinstance(value, str) or len(value) > 200 or any(ord(ch) < 32 for ch in value):
                raise HubError(400, f"settings.{key}: expected text of at most 200 characters")
            setattr(self, key, value.strip())


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One published moment of a game."""

    seq: int
    view: dict[str, Any]
    log: list[dict[str, Any]]
    finished: int  # log entries before this index are final

    def event(self, epoch: str, log_from: int) -> dict[str, Any]:
        """The event sent to a page whose log is final up to ``log_from``."""
        return {
            "id": f"{epoch}.{self.seq}",
            "seq": self.seq,
            "view": self.view,
            "log_from": log_from,
            "log": self.log[log_from:],
        }


def check_names(raw: Any, game: str = "gizmos") -> list[str]:
    """Players' names in seat order (seat 0 first): as many as ``game`` takes, distinct, short,
    printable. The one check of names every page and API route uses, whatever the game."""
    rules = get_game(game)
    if not isinstance(raw, list) or players_problem(rules, len(raw)):
        raise HubError(
            400,
            f"names: expected a list of {rules.min_players} to {rules.max_players} "
            "players' names in seat order",
        )
    names = []
    for i, n in enumerate(raw):
        if not isinstance(n, str) or not n.strip():
            raise HubError(400, f"names[{i}]: expected a non-empty name")
        n = " ".join(n.split())
        if len(n) > MAX_NAME or not n.isprintable():
            raise HubError(400, f"names[{i}]: at most {MAX_NAME} printable characters")
        names.append(n)
    if len({n.casefold() for n in names}) != len(names):
        raise HubError(400, "names: two players have the same name")
    return names


class LiveGame:
    """One game: its tracker behind a lock, its move log, and the snapshots pages receive."""

    def __init__(self, game_id: str, path: Path, tracker: Tracker) -> None:
        self.id = game_id
        self.path = path
        self.tracker = tracker
        self.epoch = secrets.token_hex(4)  # event ids from an earlier server run never match
        self._lock = threading.RLock()
        self._cond = threading.Condition()
        self._dirty = False
        self._depth = 0  # nesting of locked() blocks: publish when the outermost ends
        self._seen_seq = 0  # record entries narrated so far
        self._finished_at: OrderedDict[int, int] = OrderedDict()
        setup = next(iter(tracker.record.entries("setup")))
        self.created = setup.time
        self.narrator = Narrator(tracker.names, state_from_json(setup.payload["state"]))
        self._snapshot = Snapshot(0, {}, [], 0)
        tracker.subscribe(self._changed)
        with self.locked():
            self._dirty = True

    def _changed(self, kind: str, data: dict[str, Any]) -> None:
        self._dirty = True

    @contextmanager
    def locked(self) -> Iterator[Tracker]:
        """Hold the game for one change: ``with game.locked() as tracker: tracker.observe(obs)``.

        When the outermost block ends and the tracker reported a change, a snapshot is
        published to every open page."""
        with self._lock:
            self._depth += 1
            try:
                yield self.tracker
            finally:
                self._depth -= 1
                if self._depth == 0 and self._dirty:
                    self._publish()

    def _publish(self) -> None:
        self._dirty = False
        for entry in self.tracker.record.entries(after=self._seen_seq):  # the new ones only
            self.narrator.feed(entry.kind, entry.payload, entry.who)
            self._seen_seq = entry.seq
        log = self.narrator.entries()
        revised = self.narrator.take_revised()
        view = table_view(self.tracker)
        view["game_id"] = self.id
        shown = self.tracker.provisional  # not yet accepted: the page marks it provisional
        view["provisional"] = None if shown is None else shown.to_json(self.tracker.game)
        view["evidence"] = {str(k): v for k, v in self.tracker.record.evidence_index().items()}
        with self._cond:
            seq = self._snapshot.seq + 1
            if revised is not None:  # earlier entries changed (struck through): resend from there
                for k, v in self._finished_at.items():
                    self._finished_at[k] = min(v, revised)
            self._snapshot = Snapshot(seq, view, log, len(self.narrator.finished))
            self._finished_at[seq] = self._snapshot.finished
            while len(self._finished_at) > FINISHED_HISTORY:
                self._finished_at.popitem(last=False)
            self._cond.notify_all()

    @property
    def snapshot(self) -> Snapshot:
        """The latest published snapshot (immutable; safe to read from any thread)."""
        return self._snapshot

    def parse_event_id(self, raw: str | None) -> int | None:
        """The snapshot number in an event id of this run (``"<epoch>.<seq>"``), else None."""
        if not raw:
            return None
        epoch, _, seq = raw.strip().partition(".")
        if epoch != self.epoch or not seq.isdigit():
            return None
        n = int(seq)
        return n if n in self._finished_at else None

    def event_since(self, seen: int | None) -> dict[str, Any]:
        """The current snapshot as an event for a page that last saw snapshot ``seen``."""
        snap = self._snapshot
        log_from = self._finished_at.get(seen, 0) if seen is not None else 0
        return snap.event(self.epoch, min(log_from, snap.finished))

    def wait_newer(self, seen: int, timeout: float) -> bool:
        """Wait until a snapshot newer than ``seen`` is published; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._snapshot.seq > seen, timeout)

    def export(self) -> dict[str, Any]:
        with self._lock:
            return self.tracker.record.export()


class Hub:
    """The games of one server: created, opened from their records, and the one live now."""

    def __init__(
        self,
        games_dir: str | Path,
        frame_source: FrameSource | None = None,
        runner: LiveRunner | None = None,
        settings: Settings | None = None,
    ) -> None:
        self.games_dir = Path(games_dir)
        self.frame_source = frame_source
        self.runner = runner
        self.settings = settings or Settings()
        self.active: str | None = None
        self._games: dict[str, LiveGame] = {}
        self._lock = threading.RLock()

    def record_path(self, game_id: str) -> Path:
        if not GAME_ID.match(game_id):
            raise HubError(404, f"no game {game_id!r} (game ids are letters, digits, '-' and '_')")
        return self.games_dir / f"{game_id}{RECORD_SUFFIX}"

    def create(self, names: Any, seed: int | None, deal: bool) -> LiveGame:
        """A new game, recorded in the games folder; it becomes the active one (``names`` as
        received: :func:`check_names` vouches for them)."""
        names = check_names(names)
        with self._lock:
            try:
                self.games_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise HubError(
                    503, f"cannot create the games folder {self.games_dir}: {exc.strerror or exc}"
                ) from exc
            base = time.strftime("%Y%m%d-%H%M%S")
            game_id, n = base, 1
            while self.record_path(game_id).exists() or game_id in self._games:
                n += 1
                game_id = f"{base}-{n}"
            path = self.record_path(game_id)
            try:
                tracker = Tracker.create(path, names, seed=seed, observed=not deal)
            except TrackerError as exc:
                raise HubError(400, str(exc)) from exc
            except RecordError as exc:  # a read-only or full disk: say so, leave nothing behind
                with contextlib.suppress(OSError):
                    if path.exists() and path.stat().st_size == 0:
                        path.unlink()
                raise HubError(503, f"cannot create a game record in {self.games_dir}: {exc}") from exc
            game = LiveGame(game_id, path, tracker)
            self._games[game_id] = game
            self.active = game_id
            return game

    def get(self, game_id: str) -> LiveGame:
        """A game by id, opened from its record (replayed) the first time it is asked for."""
        path = self.record_path(game_id)
        with self._lock:
            game = self._games.get(game_id)
            if game is not None:
                return game
            if not path.is_file():
                raise HubError(404, f"no game {game_id!r} in {self.games_dir}")
            try:
                tracker = Tracker.open(path)
            except (RecordError, TrackerError, KeyError, ValueError) as exc:
                raise HubError(409, f"game {game_id!r} cannot be opened: {exc}") from exc
            game = LiveGame(game_id, path, tracker)
            self._games[game_id] = game
            return game

    def loaded(self, game_id: str) -> LiveGame | None:
        """The game if this server has it open (else None: read its record instead)."""
        with self._lock:
            return self._games.get(game_id)

    def records(self) -> list[dict[str, Any]]:
        """Every game record in the games folder, newest first, without replaying them."""
        out = []
        paths = sorted(self.games_dir.glob(f"*{RECORD_SUFFIX}")) if self.games_dir.is_dir() else []
        for path in paths:
            game_id = path.name[: -len(RECORD_SUFFIX)]
            if not GAME_ID.match(game_id):
                continue
            item: dict[str, Any] = {"id": game_id, "active": game_id == self.active}
            loaded = self._games.get(game_id)
            if loaded is not None:
                snap = loaded.snapshot.view
                item.update(
                    names=loaded.tracker.names,
                    created=loaded.created,
                    round=snap.get("round"),
                    over=snap.get("game_over", False),
                )
            else:
                item.update(_record_summary(path))
            out.append(item)
        out.sort(key=lambda g: g.get("created") or 0, reverse=True)
        return out

    def live_status(self, game_id: str) -> str:
        """``"none"`` (no runner attached), or the runner's status for the active game."""
        if self.runner is None:
            return "none"
        if game_id != self.active:
            return "stopped"
        return self.runner.status()


def _record_summary(path: Path) -> dict[str, Any]:
    """Names, creation time and whether it ended, read from a record without replaying it."""
    record = None
    try:
        record = GameRecord(path, readonly=True)
        setup = next(iter(record.entries("setup")), None)
        if setup is None:
            return {"error": "not a game record (no setup entry)"}
        ended = next(iter(record.entries("end")), None) is not None
        return {"names": setup.payload.get("names"), "created": setup.time, "over": ended, "round": None}
    except (RecordError, json.JSONDecodeError) as exc:
        return {"error": str(exc)}
    finally:
        if record is not None:
            record.close()
