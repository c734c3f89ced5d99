"""The game record: an append-only SQLite journal (write-ahead log) of everything accepted.

Every accepted observation, step, warning, warning decision, correction and event is appended
and committed before the tracker moves on, with ``synchronous=FULL``, so killing the process
(or the power) at any moment loses nothing accepted. Replaying the entries reproduces every
state; :meth:`GameRecord.export` writes the whole record as JSON.

Camera only, the players' arms seen reaching in (:class:`referee.tracker.reaching.ArmLog`)
are journalled too (``arms`` entries, :func:`arms_entry`), in the transaction of the call that
saw or weighed them, so a resumed game weighs the same arms; a record without them (older, or
with no arms seen) resumes with none, as before.

Schema 2 adds the ``evidence`` table: per warning, small JPEG crops of the camera's view of the
zones involved, just before and just after the move (written by the application layer, never
by the tracker). A schema-1 record is migrated when it is first opened for writing, in one
transaction (a crash during it leaves the schema-1 record as it was); opened read-only it is
shown as it is, without evidence.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from referee.tracker.reaching import ZONE_CLASSES, ArmLog

SCHEMA_VERSION = 2
READS = (1, 2)  # record and export versions this referee reads (1: before the evidence table)
EVIDENCE_MOMENTS = ("before", "after")
MAX_EVIDENCE_BYTES = 256 * 1024  # one crop; a bigger one is refused, not silently kept
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
    "arms",  # camera only: the players' arms seen, as they changed (arms_entry)
)


class RecordError(RuntimeError):
    """The record file cannot be opened, is not a game record, or is corrupt."""


class RecordWriteError(RecordError):
    """An append or a commit failed (disk full, read-only media, I/O error). Nothing of the
    change was kept: the record is as it was before it, and later writes may succeed."""


SQLITE_MAGIC = b"SQLite format 3\x00"
OWN_TABLES = {"meta", "entries", "evidence"}
V1_TABLES = {"meta", "entries"}


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
            if row is not None and row[0] not in {str(v) for v in READS}:
                raise RecordError(f"{self.path}: record schema {row[0]}, this referee reads {list(READS)}")
            self._migrate(row[0] if row is not None else None)
        except sqlite3.DatabaseError as exc:
            raise RecordError(f"{self.path}: not a readable game record ({exc})") from exc
        self._depth = 0

    def _migrate(self, schema: str | None) -> None:
        """Bring a new or schema-1 record to schema 2 in one transaction (all of it, or none)."""
        if schema == str(SCHEMA_VERSION):
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS evidence (warning INTEGER NOT NULL, moment TEXT NOT NULL,"
                " time REAL NOT NULL, zones TEXT NOT NULL, jpeg BLOB NOT NULL,"
                " PRIMARY KEY (warning, moment))"
            )
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            self._db.execute("COMMIT")
        except sqlite3.Error:
            self._rollback()
            raise

    def _check_tables(self, create: bool) -> None:
        """Refuse an SQLite file that is not a game record, and a corrupt one, in one line."""
        try:
            tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            tables.discard("sqlite_sequence")
            if tables and tables not in (OWN_TABLES, V1_TABLES):
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

    def entries(self, kind: str | None = None, after: int = 0) -> Iterator[Entry]:
        """Entries in order (optionally of one kind, and only those after sequence number ``after``:
        a reader that follows the record reads each entry once, not the whole record each time)."""
        sql = "SELECT seq, time, kind, who, payload FROM entries WHERE seq > ?"
        args: tuple[Any, ...] = (after,)
        if kind is not None:
            sql += " AND kind = ?"
            args = (after, kind)
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

    # ------------------------------------------------------------------ evidence for disputes

    def _has_evidence_table(self) -> bool:
        try:
            row = self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='evidence'"
            ).fetchone()
        except sqlite3.DatabaseError as exc:
            raise RecordError(f"{self.path}: corrupt record ({exc})") from exc
        return row is not None

    def add_evidence(
        self, warning: int, moment: str, jpeg: bytes, zones: list[str], at: float | None = None
    ) -> None:
        """Keep the camera's crop of ``zones`` for warning ``warning``, ``moment`` "before" or
        "after" the move (committed at once, or with its transaction; kept once: a second crop
        of the same moment replaces the first)."""
        if moment not in EVIDENCE_MOMENTS:
            raise RecordError(f"evidence: moment must be one of {EVIDENCE_MOMENTS}, got {moment!r}")
        if isinstance(warning, bool) or not isinstance(warning, int) or warning < 1:
            raise RecordError(f"evidence: warning must be a warning id (1, 2, ...), got {warning!r}")
        if not isinstance(jpeg, bytes) or not jpeg.startswith(b"\xff\xd8"):
            raise RecordError("evidence: expected JPEG bytes (they start with FF D8)")
        if len(jpeg) > MAX_EVIDENCE_BYTES:
            raise RecordError(f"evidence: a crop of {len(jpeg)} bytes is over {MAX_EVIDENCE_BYTES}")
        if self.readonly:
            raise RecordWriteError(f"cannot write the game record {self.path}: it was opened read-only")
        stamp = time.time() if at is None else at
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO evidence (warning, moment, time, zones, jpeg) VALUES (?, ?, ?, ?, ?)",
                (warning, moment, stamp, json.dumps(list(zones)), jpeg),
            )
        except sqlite3.Error as exc:
            raise self._write_error(exc) from exc

    def evidence(self, warning: int, moment: str) -> bytes | None:
        """The JPEG kept for ``warning`` at ``moment``, else None."""
        if not self._has_evidence_table():
            return None
        try:
            row = self._db.execute(
                "SELECT jpeg FROM evidence WHERE warning = ? AND moment = ?", (warning, moment)
            ).fetchone()
        except sqlite3.DatabaseError as exc:
            raise RecordError(f"{self.path}: corrupt evidence ({exc})") from exc
        return bytes(row[0]) if row is not None else None

    def evidence_index(self) -> dict[int, dict[str, Any]]:
        """Per warning id: the moments kept and the zones they show, e.g.
        ``{3: {"moments": ["before", "after"], "zones": ["row", "ring 0"]}}``."""
        if not self._has_evidence_table():
            return {}
        out: dict[int, dict[str, Any]] = {}
        try:
            rows = self._db.execute(
                "SELECT warning, moment, zones FROM evidence ORDER BY warning, moment DESC"
            )
            for warning, moment, zones in rows:
                item = out.setdefault(int(warning), {"moments": [], "zones": []})
                item["moments"].append(moment)
                item["zones"] = sorted(set(item["zones"]) | set(json.loads(zones)))
        except (sqlite3.DatabaseError, json.JSONDecodeError) as exc:
            raise RecordError(f"{self.path}: corrupt evidence ({exc})") from exc
        return out

    def _evidence_rows(self) -> list[dict[str, Any]]:
        if not self._has_evidence_table():
            return []
        try:
            rows = self._db.execute(
                "SELECT warning, moment, time, zones, jpeg FROM evidence ORDER BY warning, moment DESC"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise RecordError(f"{self.path}: corrupt evidence ({exc})") from exc
        return [
            {
                "warning": int(w),
                "moment": m,
                "time": t,
                "zones": json.loads(z),
                "jpeg_base64": base64.b64encode(bytes(j)).decode("ascii"),
            }
            for w, m, t, z, j in rows
        ]

    def export(self) -> dict[str, Any]:
        """The whole record as JSON-ready data (the evidence crops as base64 JPEG)."""
        return {
            "format": "gizmos-record",
            "version": SCHEMA_VERSION,
            "entries": [e.to_json() for e in self.entries()],
            "evidence": self._evidence_rows(),
        }

    def load_export(self, data: Any) -> None:
        """Append an :meth:`export`'s entries and evidence to this empty record, in one transaction."""
        entries = GameRecord.entries_of_export(data)
        evidence = GameRecord.evidence_of_export(data)
        with self.transaction():
            for entry in entries:
                self.append(entry.kind, entry.payload, who=entry.who, at=entry.time)
            for ev in evidence:
                self.add_evidence(ev["warning"], ev["moment"], ev["jpeg"], ev["zones"], at=ev["time"])

    @staticmethod
    def evidence_of_export(data: Any) -> list[dict[str, Any]]:
        """The evidence crops of an :meth:`export` (none in a version-1 export), validated."""
        raw = data.get("evidence", []) if isinstance(data, dict) else []
        if not isinstance(raw, list):
            raise RecordError("export.evidence: expected a list")
        out = []
        for i, e in enumerate(raw):
            where = f"export.evidence[{i}]"
            if not isinstance(e, dict):
                raise RecordError(f"{where}: expected an object")
            if e.get("moment") not in EVIDENCE_MOMENTS:
                raise RecordError(f"{where}.moment: expected one of {EVIDENCE_MOMENTS}")
            w, stamp, zones = e.get("warning"), e.get("time"), e.get("zones", [])
            if isinstance(w, bool) or not isinstance(w, int):
                raise RecordError(f"{where}.warning: expected a warning id")
            if isinstance(stamp, bool) or not isinstance(stamp, int | float):
                raise RecordError(f"{where}.time: expected seconds as a number")
            if not isinstance(zones, list) or not all(isinstance(z, str) for z in zones):
                raise RecordError(f"{where}.zones: expected a list of zone names")
            try:
                jpeg = base64.b64decode(str(e.get("jpeg_base64", "")), validate=True)
            except (binascii.Error, ValueError) as exc:
                raise RecordError(f"{where}.jpeg_base64: not base64 ({exc})") from exc
            out.append(
                {"warning": w, "moment": e["moment"], "time": float(stamp), "zones": zones, "jpeg": jpeg}
            )
        return out

    @staticmethod
    def entries_of_export(data: Any) -> list[Entry]:
        """The entries of an :meth:`export`, validated; raises :class:`RecordError` naming the bad field."""
        if not isinstance(data, dict) or data.get("format") != "gizmos-record":
            raise RecordError('export: expected a JSON object with "format": "gizmos-record"')
        if data.get("version") not in READS:
            raise RecordError(
                f"export: unsupported version {data.get('version')!r} (this referee reads {list(READS)})"
            )
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


# ---------------------------------------------------------------------- the players' arms


def arms_entry(kept: ArmLog, now: ArmLog, frame: int) -> dict[str, Any] | None:
    """The ``arms`` entry that brings the arms the record has (``kept``) to ``now``, ``None``
    when they are the same: the arms just seen (``{"frame", "add": [[frame, seat, zone
    class], ...]}``) when ``now`` only adds to ``kept``, else the whole log (``{"frame",
    "log": {"reported", "seen", "spent"}}``: an explanation accepted weighed them). ``frame``:
    the tracker's count of frames observed, which the arms' frames count in."""
    if now == kept or not (now.reported or kept.reported):
        return None  # no hands reported: the arms (and their pause) weigh nothing to resume
    n = len(kept.seen)
    # only arms added, nothing else changed (whatever fields ArmLog has): what "add" replays
    if now.seen[:n] == kept.seen and replace(now, seen=kept.seen) == replace(kept, reported=True):
        return {"frame": frame, "add": [list(a) for a in now.seen[n:]]}
    log: dict[str, Any] = {
        "reported": now.reported,
        "seen": [list(a) for a in now.seen],
        "spent": [list(a) for a in now.spent],
        "still_from": now.still_from,  # the pause that tells a turn's end (ArmLog.paused)
        "changes": list(now.changes),
        "earlier_pause": now.earlier_pause,  # the pause before the last explanation accepted
        "areas": [[f, seat, list(unchanged)] for f, seat, unchanged in now.areas],  # whose area first
    }
    return {"frame": frame, "log": log}


def arms_replayed(kept: ArmLog, payload: dict[str, Any]) -> tuple[ArmLog, int]:
    """An ``arms`` entry (:func:`arms_entry`) applied to the arms replayed so far: the arms,
    and the frame count it was written at. A malformed entry raises ValueError naming what."""
    frame = payload["frame"]
    if not _count(frame):
        raise ValueError(f"arms: frame must be a count of frames, got {frame!r}")
    if "add" in payload:
        added = tuple(_arm(a, 3) for a in _list(payload["add"], "add"))
        return replace(kept, reported=True, seen=kept.seen + added), frame
    log = payload["log"]
    if not isinstance(log, dict) or not isinstance(log.get("reported"), bool):
        raise ValueError("arms: log must be an object with reported, seen and spent")
    seen = tuple(_arm(a, 3) for a in _list(log["seen"], "seen"))
    spent = tuple(_arm(a, 2) for a in _list(log["spent"], "spent"))
    still = log.get("still_from")  # absent in records written before the pause was kept
    changes = _list(log.get("changes", []), "changes")
    if still is not None and not _count(still):
        raise ValueError(f"arms: still_from must be a frame or null, got {still!r}")
    if not all(_count(f) for f in changes):
        raise ValueError(f"arms: changes must be frames, got {changes!r}")
    earlier = log.get("earlier_pause", False)  # absent in records written before it was kept
    if not isinstance(earlier, bool):
        raise ValueError(f"arms: earlier_pause must be true or false, got {earlier!r}")
    areas = tuple(_area(a) for a in _list(log.get("areas", []), "areas"))  # absent: written before
    return ArmLog(log["reported"], seen, spent, still, tuple(changes), earlier, areas), frame


def _area(value: Any) -> tuple[int, int, tuple[int, ...]]:
    """One ``areas`` item: [frame, seat, [seats unchanged]]."""
    if (
        not isinstance(value, list)
        or len(value) != 3
        or not _count(value[0])
        or not _count(value[1])
        or not isinstance(value[2], list)
        or not all(_count(v) for v in value[2])
    ):
        raise ValueError(f"arms: an areas item must be [frame, seat, [seats]], got {value!r}")
    return value[0], value[1], tuple(value[2])


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _list(value: Any, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"arms: {name} must be a list")
    return value


def _arm(value: Any, size: int) -> tuple[Any, ...]:
    """One arm seen: ([frame,] seat, zone class), checked (a frame -1: seen before the last
    accepted reading, :meth:`ArmLog.again`)."""
    ok = isinstance(value, list) and len(value) == size and value[-1] in ZONE_CLASSES
    if ok and not all(isinstance(v, int) and not isinstance(v, bool) and v >= -1 for v in value[:-1]):
        ok = False
    if not ok:
        raise ValueError(f"arms: expected [{'frame, ' if size == 3 else ''}seat, zone class], got {value!r}")
    return tuple(value)
