"""The game record: an append-only SQLite journal (write-ahead log) of everything accepted.

Every accepted observation, step, warning, warning decision, correction and event is appended
and committed before the tracker moves on, with ``synchronous=FULL``, so killing the process
(or the power) at any moment loses nothing accepted. Replaying the entries reproduces every
state; :meth:`GameRecord.export` writes the whole record as JSON.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
KINDS = (
    "setup",  # players' names, how the game was set up, the initial state
    "observation",  # a stable observation that was explained (its JSON)
    "step",  # one step of the accepted explanation: {"step": ..., "forced": bool}
    "state",  # the whole state replaced: {"state", "reason": "correction" | "undo" | "research"}
    "warning",  # a warning raised
    "warning_status",  # a warning accepted or dismissed
    "correction",  # what a person corrected (or "undo_turn"), with who and when; a "state" follows
    "event",  # an end-of-turn signal or a dispenser sensor event
    "end",  # the game was ended by a person
    "note",  # something said but not warned about (several explanations of one table)
)


class RecordError(RuntimeError):
    """The record file cannot be opened, is not a game record, or is corrupt."""


class RecordWriteError(RecordError):
    """An append or a commit failed (disk full, read-only media, I/O error). Nothing of the
    change was kept: the record is as it was before it, and later writes may succeed."""


SQLITE_MAGIC = b"SQLite format 3\x00"
OWN_TABLES = {"meta", "entries"}


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal entry."""

    seq: int
    time: float
    kind: str
    who: str
    payload: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "time": self.time,
            "kind": self.kind,
            "who": self.who,
            "payload": self.payload,
        }


class GameRecord:
    """An append-only journal of one game in an SQLite file (``:memory:`` for tests).

    An existing file must be a game record: any other file (text, another application's SQLite
    database) is refused, never taken over. ``readonly`` opens a record for viewing and export
    without writing anything, which also works on read-only media.
    """

    def __init__(self, path: str | Path, readonly: bool = False) -> None:
        self.path = str(path)
        self.readonly = readonly
        _check_file(self.path)
        if readonly:
            self._db = _open_readonly(self.path)
            self._depth = 0
            self._check_tables(create=False)
            return
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._check_tables(create=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS entries (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
                " time REAL NOT NULL, kind TEXT NOT NULL, who TEXT NOT NULL, payload TEXT NOT NULL)"
            )
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif row[0] != str(SCHEMA_VERSION):
                raise RecordError(f"{self.path}: record schema {row[0]}, this referee reads {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise RecordError(f"{self.path}: not a readable game record ({exc})") from exc
        self._depth = 0

    def _check_tables(self, create: bool) -> None:
        """Refuse an SQLite file that is not a game record, and a corrupt one, in one line."""
        try:
            tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            tables.discard("sqlite_sequence")
            if tables and tables != OWN_TABLES:
                raise RecordError(
                    f"{self.path}: not a game record: an SQLite database of another application "
                    f"(tables {sorted(tables)}); choose another file"
                )
            if not tables and self.readonly:
                raise RecordError(f"{self.path}: not a game record (an empty file)")
            if tables:
                check = self._db.execute("PRAGMA quick_check").fetchone()[0]
                if check != "ok":
                    detail = " ".join(str(check).replace("*", " ").split())
                    raise RecordError(f"{self.path}: the record is corrupt ({detail})")
        except sqlite3.DatabaseError as exc:
            raise RecordError(f"{self.path}: not a readable game record ({exc})") from exc

    def _write_error(self, exc: sqlite3.Error) -> RecordWriteError:
        return RecordWriteError(
            f"cannot write the game record {self.path}: {exc}; the last change was not kept"
        )

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Group appends into one commit: all of them survive a crash, or none (re-entrant).

        A failed write or COMMIT (disk full) rolls back and raises :class:`RecordWriteError`:
        the record stays as it was, and the next transaction starts clean."""
        if self.readonly:
            raise RecordWriteError(f"cannot write the game record {self.path}: it was opened read-only")
        if self._depth == 0:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self._write_error(exc) from exc
        self._depth += 1
        try:
            yield
        except BaseException:
            self._depth -= 1
            if self._depth == 0:
                self._rollback()
            raise
        self._depth -= 1
        if self._depth == 0:
            try:
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise self._write_error(exc) from exc

    def _rollback(self) -> None:
        """Undo an open transaction (SQLite may already have rolled back after SQLITE_FULL)."""
        if self._db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")

    def append(
        self, kind: str, payload: dict[str, Any], who: str = "referee", at: float | None = None
    ) -> int:
        """Append one entry (committed at once, or with its transaction); returns its sequence number."""
        if kind not in KINDS:
            raise RecordError(f"unknown record entry kind {kind!r}")
        if self.readonly:
            raise RecordWriteError(f"cannot write the game record {self.path}: it was opened read-only")
        stamp = time.time() if at is None else at
        try:
            cur = self._db.execute(
                "INSERT INTO entries (time, kind, who, payload) VALUES (?, ?, ?, ?)",
                (stamp, kind, who, json.dumps(payload, separators=(",", ":"))),
            )
        except sqlite3.Error as exc:
            raise self._write_error(exc) from exc
        return int(cur.lastrowid or 0)

    def entries(self, kind: str | None = None) -> Iterator[Entry]:
        """Entries in order (optionally of one kind)."""
        sql = "SELECT seq, time, kind, who, payload FROM entries"
        args: tuple[Any, ...] = ()
        if kind is not None:
            sql += " WHERE kind = ?"
            args = (kind,)
        try:
            for seq, stamp, k, who, payload in self._db.execute(sql + " ORDER BY seq", args):
                yield Entry(seq, stamp, k, who, json.loads(payload))
        except (sqlite3.DatabaseError, json.JSONDecodeError) as exc:
            raise RecordError(f"{self.path}: corrupt entry ({exc})") from exc

    def __len__(self) -> int:
        try:
            return int(self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            raise RecordError(f"{self.path}: corrupt record ({exc})") from exc

    def export(self) -> dict[str, Any]:
        """The whole record as JSON-ready data."""
        return {
            "format": "gizmos-record",
            "version": SCHEMA_VERSION,
            "entries": [e.to_json() for e in self.entries()],
        }

    @staticmethod
    def entries_of_export(data: Any) -> list[Entry]:
        """The entries of an :meth:`export`, validated; raises :class:`RecordError` naming the bad field."""
        if not isinstance(data, dict) or data.get("format") != "gizmos-record":
            raise RecordError('export: expected a JSON object with "format": "gizmos-record"')
        if data.get("version") != SCHEMA_VERSION:
            raise RecordError(f"export: unsupported version {data.get('version')!r} (this referee reads 1)")
        raw = data.get("entries")
        if not isinstance(raw, list):
            raise RecordError("export.entries: expected a list")
        out = []
        for i, e in enumerate(raw):
            where = f"export.entries[{i}]"
            if not isinstance(e, dict):
                raise RecordError(f"{where}: expected an object")
            if e.get("kind") not in KINDS:
                raise RecordError(f"{where}.kind: expected one of {KINDS}, got {e.get('kind')!r}")
            if not isinstance(e.get("payload"), dict):
                raise RecordError(f"{where}.payload: expected an object")
            stamp = e.get("time")
            if isinstance(stamp, bool) or not isinstance(stamp, int | float):
                raise RecordError(f"{where}.time: expected seconds as a number, got {stamp!r}")
            seq = e.get("seq", i + 1)
            out.append(
                Entry(
                    int(seq) if isinstance(seq, int) else i + 1,
                    float(stamp),
                    e["kind"],
                    str(e.get("who", "referee")),
                    e["payload"],
                )
            )
        return out

    def close(self) -> None:
        self._db.close()


def _check_file(path: str) -> None:
    """An existing non-empty file must at least be an SQLite database (never take over a text
    file or anything else: SQLite would quietly overwrite a file too short to have a header)."""
    if path == ":memory:" or path.startswith("file:"):
        return
    p = Path(path)
    try:
        if not p.exists() or p.stat().st_size == 0:
            return
        with p.open("rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise RecordError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    if p.is_dir() or head != SQLITE_MAGIC:
        raise RecordError(f"{path}: not a game record (not an SQLite database); choose another file")


def writable(path: str | Path) -> bool:
    """Whether a record at ``path`` can be written (its folder too: SQLite adds -wal/-shm files)."""
    p = Path(path)
    return os.access(p.parent, os.W_OK) and (not p.exists() or os.access(p, os.W_OK))


def _open_readonly(path: str) -> sqlite3.Connection:
    """Open without writing: ``mode=ro``, or ``immutable=1`` where even SQLite's shared-memory
    file cannot be created (read-only media). Immutable mode cannot see entries still in a
    ``-wal`` file (left by a crash), so that case is refused rather than shown incomplete."""
    uri = Path(path).resolve().as_uri()
    last: sqlite3.Error | None = None
    for flags in ("mode=ro", "immutable=1"):
        wal = Path(path + "-wal")
        if flags == "immutable=1" and wal.exists() and wal.stat().st_size > 0:
            raise RecordError(
                f"{path}: cannot open read-only: recent entries are still in {wal.name} (left by a "
                "crash); open it once where it can be written"
            )
        try:
            db = sqlite3.connect(f"{uri}?{flags}", uri=True, isolation_level=None, check_same_thread=False)
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.Error as exc:
            last = exc
    raise RecordError(f"{path}: cannot open the record for reading ({last})")
