"""The hub's durable copy of every table's record, and the tables' latest summaries.

:class:`TournamentStore` is the interface the hub writes through; :class:`SqliteStore` is the
one built here. Every method is one transaction and the SQL is plain (no SQLite-only syntax
but ``INSERT OR IGNORE``/``ON CONFLICT``, which PostgreSQL spells ``ON CONFLICT DO NOTHING``),
so a PostgreSQL store is the same class over a psycopg connection: see ``docs/tournament.md``.

An entry is keyed by (table, game, seq): a republished entry is stored once. ``confirmed`` is
the last seq up to which the copy has no hole, followed along each entry's ``prev``; the hub
confirms that number to the table, which republishes from the entry after it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


class StoreError(RuntimeError):
    """The hub's store cannot be opened or used; the message names it."""


@dataclass(frozen=True, slots=True)
class EntryMessage:
    """One record entry as a table published it."""

    table: str
    game: str
    seq: int
    prev: int
    time: float
    kind: str
    who: str
    payload: dict[str, Any]
    sent: float

    @classmethod
    def parse(cls, table: str, raw: bytes) -> EntryMessage:
        """Check a message from ``<root>/<table>/entries``; its ``table`` must be the topic's."""
        try:
            d = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"not JSON ({exc})") from exc
        if not isinstance(d, dict):
            raise ValueError("expected a JSON object")
        if d.get("table") != table:
            raise ValueError(f"table {d.get('table')!r} published on table {table!r}'s topic")
        for key, kinds in (
            ("game", str),
            ("seq", int),
            ("prev", int),
            ("time", (int, float)),
            ("kind", str),
            ("who", str),
            ("payload", dict),
            ("sent", (int, float)),
        ):
            if not isinstance(d.get(key), kinds) or isinstance(d.get(key), bool):
                raise ValueError(f"{key}: missing or of the wrong type")
        if not 0 <= d["prev"] < d["seq"]:
            raise ValueError(f"seq {d['seq']} must follow prev {d['prev']}")
        return cls(
            table,
            d["game"],
            d["seq"],
            d["prev"],
            float(d["time"]),
            d["kind"],
            d["who"],
            d["payload"],
            float(d["sent"]),
        )


class TournamentStore(Protocol):
    """What the hub keeps (SQLite here; PostgreSQL for a tournament that outgrows one file)."""

    def add(self, entries: list[EntryMessage]) -> dict[tuple[str, str], int]:
        """Store new entries (ignoring ones already held); the confirmed seq of each game touched."""
        ...

    def put_summaries(self, summaries: list[tuple[str, str, dict[str, Any]]], at: float) -> None:
        """Store (table, game, summary) triples: each game's latest summary."""
        ...

    def confirmed(self) -> dict[tuple[str, str], int]: ...

    def entries(self, table: str, game: str) -> list[tuple[int, str, dict[str, Any]]]: ...

    def games(self) -> list[dict[str, Any]]: ...

    def set_excluded(self, table: str, game: str, excluded: bool) -> bool: ...

    def close(self) -> None: ...


SCHEMA = (
    "CREATE TABLE IF NOT EXISTS entries (table_id TEXT NOT NULL, game_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL, prev INTEGER NOT NULL, time REAL NOT NULL, kind TEXT NOT NULL,"
    " who TEXT NOT NULL, payload TEXT NOT NULL, received REAL NOT NULL,"
    " PRIMARY KEY (table_id, game_id, seq))",
    "CREATE INDEX IF NOT EXISTS entries_prev ON entries (table_id, game_id, prev)",
    "CREATE TABLE IF NOT EXISTS games (table_id TEXT NOT NULL, game_id TEXT NOT NULL,"
    " confirmed INTEGER NOT NULL DEFAULT 0, summary TEXT, updated REAL NOT NULL DEFAULT 0,"
    " excluded INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (table_id, game_id))",
)


class SqliteStore:
    """The store in one SQLite file (WAL, ``synchronous=FULL``: a confirmed entry survives a crash)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            for sql in SCHEMA:
                self._db.execute(sql)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable hub store ({exc})") from exc

    def add(self, entries: list[EntryMessage]) -> dict[tuple[str, str], int]:
        import time

        now = time.time()
        touched: dict[tuple[str, str], int] = {}
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            e.table,
                            e.game,
                            e.seq,
                            e.prev,
                            e.time,
                            e.kind,
                            e.who,
                            json.dumps(e.payload, separators=(",", ":")),
                            now,
                        )
                        for e in entries
                    ],
                )
                for table, game in {(e.table, e.game) for e in entries}:
                    db.execute(
                        "INSERT INTO games (table_id, game_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                        (table, game),
                    )
                    (confirmed,) = db.execute(
                        "SELECT confirmed FROM games WHERE table_id=? AND game_id=?", (table, game)
                    ).fetchone()
                    start = confirmed
                    while True:
                        row = db.execute(
                            "SELECT seq FROM entries WHERE table_id=? AND game_id=? AND prev=?",
                            (table, game, confirmed),
                        ).fetchone()
                        if row is None:
                            break
                        confirmed = int(row[0])
                    if confirmed != start:
                        db.execute(
                            "UPDATE games SET confirmed=? WHERE table_id=? AND game_id=?",
                            (confirmed, table, game),
                        )
                    touched[(table, game)] = confirmed
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return touched

    def put_summaries(self, summaries: list[tuple[str, str, dict[str, Any]]], at: float) -> None:
        """Each table's latest summary, all in one transaction (one disk sync per batch)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT INTO games (table_id, game_id, summary, updated) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (table_id, game_id) DO UPDATE SET summary=excluded.summary,"
                    " updated=excluded.updated",
                    [(t, g, json.dumps(body, separators=(",", ":")), at) for t, g, body in summaries],
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def confirmed(self) -> dict[tuple[str, str], int]:
        with self._lock:
            rows = self._db.execute("SELECT table_id, game_id, confirmed FROM games").fetchall()
        return {(t, g): int(c) for t, g, c in rows}

    def entries(self, table: str, game: str) -> list[tuple[int, str, dict[str, Any]]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, kind, payload FROM entries WHERE table_id=? AND game_id=? ORDER BY seq",
                (table, game),
            ).fetchall()
        return [(int(s), k, json.loads(p)) for s, k, p in rows]

    def games(self) -> list[dict[str, Any]]:
        """Every game with its latest summary, oldest first (the standings are built from these)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT table_id, game_id, confirmed, summary, updated, excluded FROM games"
                " ORDER BY updated, table_id, game_id"
            ).fetchall()
        return [
            {
                "table": t,
                "game": g,
                "confirmed": int(c),
                "summary": json.loads(s) if s else None,
                "updated": u,
                "excluded": bool(x),
            }
            for t, g, c, s, u, x in rows
        ]

    def set_excluded(self, table: str, game: str, excluded: bool) -> bool:
        """Leave a game out of the standings (or put it back); False when there is no such game."""
        with self._lock:
            cur = self._db.execute(
                "UPDATE games SET excluded=? WHERE table_id=? AND game_id=?", (int(excluded), table, game)
            )
        return cur.rowcount > 0

    def close(self) -> None:
        with self._lock:
            self._db.close()


def open_store(where: str) -> TournamentStore:
    """A store from a path (SQLite) or a ``postgresql://`` URL (not built yet: one clear error)."""
    if where.startswith(("postgresql://", "postgres://")):
        raise StoreError(
            "PostgreSQL storage is not built yet (psycopg is not installed here); "
            "give a SQLite file, see docs/tournament.md"
        )
    return SqliteStore(where)
