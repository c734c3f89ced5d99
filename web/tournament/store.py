"""The hub's durable copy of every table's record, and the tables' latest summaries.

:class:`TournamentStore` is the interface the hub writes through. :class:`SqlStore` holds its
SQL, one transaction per method, written once for both databases: :class:`SqliteStore` (one
file) and :class:`PostgresStore` (a ``postgresql://`` URL, for a tournament that outgrows one
file, or several hubs sharing one database). :func:`open_store` picks one from ``--store``.

An entry is keyed by (table, game, seq): a republished entry is stored once. ``confirmed`` is
the last seq up to which the copy has no hole, followed along each entry's ``prev``; the hub
confirms that number to the table, which republishes from the entry after it. A commit is
durable before the hub confirms it (SQLite ``synchronous=FULL``; PostgreSQL's default
``synchronous_commit=on``), so a hub restart, or a crash, loses nothing it confirmed.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class StoreError(RuntimeError):
    """The hub's store cannot be opened or used; the message names it (never its password)."""


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
    """What the hub keeps (:class:`SqliteStore`, or :class:`PostgresStore` for a bigger event)."""

    #: Where the store is, to print (a PostgreSQL URL without its password).
    where: str

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


#: Plain SQL that both databases read alike (``DOUBLE PRECISION``: PostgreSQL's ``REAL`` is
#: 4 bytes, too coarse for a Unix time; SQLite stores either as an 8-byte float).
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS entries (table_id TEXT NOT NULL, game_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL, prev INTEGER NOT NULL, time DOUBLE PRECISION NOT NULL, kind TEXT NOT NULL,"
    " who TEXT NOT NULL, payload TEXT NOT NULL, received DOUBLE PRECISION NOT NULL,"
    " PRIMARY KEY (table_id, game_id, seq))",
    "CREATE INDEX IF NOT EXISTS entries_prev ON entries (table_id, game_id, prev)",
    "CREATE TABLE IF NOT EXISTS games (table_id TEXT NOT NULL, game_id TEXT NOT NULL,"
    " confirmed INTEGER NOT NULL DEFAULT 0, summary TEXT, updated DOUBLE PRECISION NOT NULL DEFAULT 0,"
    " excluded INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (table_id, game_id))",
)


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


class SqlStore:
    """The store's SQL, shared by both databases; a subclass runs each piece of work as one
    transaction on its connection (:meth:`_run`).

    The SQL is written with ``?`` placeholders (``PARAM`` is what the driver wants instead).
    ``LOCK_GAME`` locks a game's row while its confirmed number advances, so hubs sharing one
    PostgreSQL advance it one at a time (SQLite's ``BEGIN IMMEDIATE`` serialises the whole
    transaction instead). The cursors are the drivers' own (DB-API), hence ``Any``.
    """

    PARAM = "?"
    LOCK_GAME = ""
    where: str

    def _run(self, work: Callable[[Any], T], write: bool = True) -> T:
        raise NotImplementedError

    def _sql(self, sql: str) -> str:
        return sql if self.PARAM == "?" else sql.replace("?", self.PARAM)

    def add(self, entries: list[EntryMessage]) -> dict[tuple[str, str], int]:
        """A batch in a handful of statements whatever the number of games it touches (each is a
        round trip to a PostgreSQL server): the entries, the games' rows, the games' confirmed
        numbers (locked), what is held past them; the walk along the ``prev`` links is done here."""
        now = time.time()
        # In key order, so that two hubs storing overlapping batches lock rows in the same order.
        rows = sorted(
            (e.table, e.game, e.seq, e.prev, e.time, e.kind, e.who, _json(e.payload), now) for e in entries
        )
        keys = sorted({(e.table, e.game) for e in entries})
        if not keys:
            return {}
        pairs = ", ".join(["(?, ?)"] * len(keys))
        flat = [part for key in keys for part in key]
        insert = self._sql("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
        new_game = self._sql("INSERT INTO games (table_id, game_id) VALUES (?, ?) ON CONFLICT DO NOTHING")
        locked = self._sql(
            f"SELECT table_id, game_id, confirmed FROM games WHERE (table_id, game_id) IN (VALUES {pairs})"
            f" ORDER BY table_id, game_id{self.LOCK_GAME}"
        )
        beyond = self._sql(
            "SELECT e.table_id, e.game_id, e.prev, e.seq FROM entries e JOIN games g"
            " ON e.table_id = g.table_id AND e.game_id = g.game_id"
            f" WHERE (g.table_id, g.game_id) IN (VALUES {pairs}) AND e.prev >= g.confirmed"
        )
        advance = self._sql("UPDATE games SET confirmed=? WHERE table_id=? AND game_id=?")

        def work(cur: Any) -> dict[tuple[str, str], int]:
            cur.executemany(insert, rows)
            cur.executemany(new_game, keys)
            cur.execute(locked, flat)
            confirmed = {(t, g): int(c) for t, g, c in cur.fetchall()}
            cur.execute(beyond, flat)
            following: dict[tuple[str, str], dict[int, int]] = {}
            for t, g, prev, seq in cur.fetchall():
                following.setdefault((t, g), {})[int(prev)] = int(seq)
            touched: dict[tuple[str, str], int] = {}
            advanced = []
            for key in keys:
                start = seq = confirmed[key]
                after = following.get(key, {})
                while seq in after:
                    seq = after[seq]
                if seq != start:
                    advanced.append((seq, *key))
                touched[key] = seq
            if advanced:
                cur.executemany(advance, advanced)
            return touched

        return self._run(work)

    def put_summaries(self, summaries: list[tuple[str, str, dict[str, Any]]], at: float) -> None:
        """Each table's latest summary, all in one transaction (one disk sync per batch)."""
        upsert = self._sql(
            "INSERT INTO games (table_id, game_id, summary, updated) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (table_id, game_id) DO UPDATE SET summary=excluded.summary,"
            " updated=excluded.updated"
        )
        rows = sorted((t, g, _json(body), at) for t, g, body in summaries)
        if rows:
            self._run(lambda cur: cur.executemany(upsert, rows))

    def confirmed(self) -> dict[tuple[str, str], int]:
        def work(cur: Any) -> dict[tuple[str, str], int]:
            cur.execute("SELECT table_id, game_id, confirmed FROM games")
            return {(t, g): int(c) for t, g, c in cur.fetchall()}

        return self._run(work, write=False)

    def entries(self, table: str, game: str) -> list[tuple[int, str, dict[str, Any]]]:
        query = self._sql(
            "SELECT seq, kind, payload FROM entries WHERE table_id=? AND game_id=? ORDER BY seq"
        )

        def work(cur: Any) -> list[tuple[int, str, dict[str, Any]]]:
            cur.execute(query, (table, game))
            return [(int(s), k, json.loads(p)) for s, k, p in cur.fetchall()]

        return self._run(work, write=False)

    def games(self) -> list[dict[str, Any]]:
        """Every game with its latest summary, oldest first (the standings are built from these)."""

        def work(cur: Any) -> list[dict[str, Any]]:
            cur.execute(
                "SELECT table_id, game_id, confirmed, summary, updated, excluded FROM games"
                " ORDER BY updated, table_id, game_id"
            )
            return [
                {
                    "table": t,
                    "game": g,
                    "confirmed": int(c),
                    "summary": json.loads(s) if s else None,
                    "updated": float(u),
                    "excluded": bool(x),
                }
                for t, g, c, s, u, x in cur.fetchall()
            ]

        return self._run(work, write=False)

    def set_excluded(self, table: str, game: str, excluded: bool) -> bool:
        """Leave a game out of the standings (or put it back); False when there is no such game."""
        update = self._sql("UPDATE games SET excluded=? WHERE table_id=? AND game_id=?")

        def work(cur: Any) -> bool:
            cur.execute(update, (int(excluded), table, game))
            return bool(cur.rowcount > 0)

        return self._run(work)


class SqliteStore(SqlStore):
    """The store in one SQLite file (WAL, ``synchronous=FULL``: a confirmed entry survives a crash)."""

    def __init__(self, path: str | Path) -> None:
        self.path = self.where = str(path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            for sql in SCHEMA:
                self._db.execute(sql)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable hub store ({exc})") from exc

    def _run(self, work: Callable[[Any], T], write: bool = True) -> T:
        with self._lock:
            cur = self._db.cursor()
            try:
                if not write:
                    return work(cur)
                cur.execute("BEGIN IMMEDIATE")
                try:
                    result = work(cur)
                    cur.execute("COMMIT")
                except BaseException:
                    cur.execute("ROLLBACK")
                    raise
                return result
            except sqlite3.OperationalError as exc:  # a full disk, a locked or vanished file
                raise StoreError(f"{self.path}: {exc}") from exc
            finally:
                cur.close()

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


class PostgresStore(SqlStore):
    """The store in a PostgreSQL database (psycopg 3), for an event that outgrows one file.

    Several hubs (or a page server) may share the database: entries are keyed as in SQLite and
    a game's row is locked while its confirmed number advances. A lost connection (the server
    restarted, the network dropped) is opened again and the transaction retried, up to
    ``RETRIES`` times; every method is one transaction, so a retry stores nothing twice.
    """

    PARAM = "%s"
    LOCK_GAME = " FOR UPDATE"
    RETRIES = 4

    def __init__(self, url: str, connect_timeout: int = 10) -> None:
        try:
            import psycopg
            from psycopg.conninfo import conninfo_to_dict
        except ImportError as exc:
            raise StoreError(
                "a postgresql:// store needs psycopg 3: .venv/bin/python -m pip install 'psycopg[binary]' "
                "(scripts/setup.sh --dev installs it)"
            ) from exc
        self._psycopg = psycopg
        try:
            parts = conninfo_to_dict(url)
        except psycopg.Error:
            raise StoreError("--store: not a usable postgresql:// URL (see docs/tournament.md)") from None
        self.where = "postgresql://{user}@{host}{port}/{db}".format(
            user=parts.get("user", ""),
            host=parts.get("host", ""),
            port=f":{parts['port']}" if parts.get("port") else "",
            db=parts.get("dbname", ""),
        )
        self._url = url
        # A connect_timeout in the URL wins; else a hub waits at most this long for the server.
        self._connect_args = {} if "connect_timeout" in parts else {"connect_timeout": connect_timeout}
        self._lock = threading.Lock()
        self._conn: Any = None
        # One hub at a time creates the tables (CREATE ... IF NOT EXISTS races in PostgreSQL).
        self._run(self._create_schema, attempts=1)

    @staticmethod
    def _create_schema(cur: Any) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(hashtext('gizmos-referee tournament schema'))")
        for sql in SCHEMA:
            cur.execute(sql)

    def _run(self, work: Callable[[Any], T], write: bool = True, attempts: int = 0) -> T:
        psycopg = self._psycopg
        last: Exception | None = None
        for attempt in range(attempts or self.RETRIES):
            if attempt:
                time.sleep(min(2.0, 0.25 * 2**attempt))
            with self._lock:
                try:
                    if self._conn is None or self._conn.closed:
                        self._conn = psycopg.connect(self._url, autocommit=True, **self._connect_args)
                    with self._conn.transaction(), self._conn.cursor() as cur:
                        return work(cur)
                except psycopg.OperationalError as exc:  # connection lost, deadlock: try again
                    last = exc
                    if self._conn is not None and self._conn.broken:
                        self._conn.close()
                        self._conn = None
                except psycopg.Error as exc:
                    raise StoreError(f"{self.where}: {_one_line(exc)}") from exc
        raise StoreError(f"{self.where}: {_one_line(last or RuntimeError('unusable'))}") from last

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def open_store(where: str) -> TournamentStore:
    """The store ``--store`` names: a ``postgresql://`` URL, else a SQLite file's path."""
    if where.startswith(("postgresql://", "postgres://")):
        return PostgresStore(where)
    return SqliteStore(where)
