"""A table broadcasts its game record to the tournament hub through an MQTT broker.

The table's SQLite record stays the source of truth: the :class:`Broadcaster` *tails* it (its own
read connection; the record is in WAL mode, so refereeing never waits for it) and publishes every
entry, in order, with QoS 1 on ``<root>/<table>/entries``, as ``{table, game, seq, prev, ...}``.
``seq`` is the record's own sequence number and ``prev`` the one before it, so the hub can tell
a complete copy from one with a hole. The hub stores each entry once (keyed by table, game,
seq) and answers with a retained confirmation on ``<root>/<table>/ack/<game>``: the last
sequence number up to which its copy is complete.

Nothing is lost and nothing is doubled: while the broker cannot be reached the referee goes on
writing its record and nothing is queued in memory; on every (re)connection, and whenever
confirmations stop advancing for ``resend_s`` while entries are outstanding, publishing goes
back to the entry after the last confirmed one (go-back-N); the hub ignores entries it already
holds. A retained summary of the table (``<root>/<table>/summary``: game, round, scores, open
warnings, camera and sensor health) is republished on every change and on reconnection; the
broker keeps a retained ``offline`` status (the client's will) for a table that vanishes.

The hub side and the organiser's page are :mod:`web.tournament`; the broker's access list lets a
table's user name publish only under its own ``<root>/<name>/`` (see ``docs/tournament.md``).
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

ROOT = "gizmos/tables"
TABLE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
QOS = 1

Summary = Callable[[], dict[str, Any]]


class BroadcastError(ValueError):
    """A broker address, table id or TLS file that cannot be used; the message names it."""


def check_table_id(value: str, what: str = "table id") -> str:
    """Table and game ids become topic levels and broker user names: a safe, short alphabet."""
    if not isinstance(value, str) or not TABLE_ID.match(value):
        raise BroadcastError(
            f"{what} {value!r}: expected 1-64 letters, digits, '-' or '_' (starting with a letter or digit)"
        )
    return value


def entries_topic(table: str, root: str = ROOT) -> str:
    return f"{root}/{table}/entries"


def summary_topic(table: str, root: str = ROOT) -> str:
    return f"{root}/{table}/summary"


def status_topic(table: str, root: str = ROOT) -> str:
    return f"{root}/{table}/status"


def ack_topic(table: str, game: str, root: str = ROOT) -> str:
    return f"{root}/{table}/ack/{game}"


def close_client(client: Any) -> None:
    """Disconnect a paho client and stop its network thread.

    paho's ``loop_stop`` checks its thread, then joins it, but the thread clears itself as it
    ends after ``disconnect``. If the thread ends between the check and the join, ``loop_stop``
    raises ``AttributeError`` (seen when the benchmark's tables stop). By then the thread has
    ended, so that error is ignored here.
    """
    client.disconnect()
    with contextlib.suppress(AttributeError):
        client.loop_stop()


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    """Where the broker is and how to log in: ``mqtt://user:password@host:port`` (``mqtts://``: TLS).

    TLS is required when the host is not this machine (``insecure_ok`` lets a test or a trusted
    LAN without TLS through, and says so). ``ca_file`` verifies a broker with a self-signed
    certificate; ``cert_file``/``key_file`` authenticate the client by certificate.
    """

    host: str = "127.0.0.1"
    port: int = 1883
    username: str | None = None
    password: str | None = None
    tls: bool = False
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    keepalive: int = 10

    @classmethod
    def from_url(
        cls,
        url: str,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
        insecure_ok: bool = False,
    ) -> BrokerConfig:
        """Parse and check a broker URL; every problem is one :class:`BroadcastError` line."""
        parts = urlsplit(url)
        if parts.scheme not in ("mqtt", "mqtts"):
            raise BroadcastError(f"broker {url!r}: expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
        if not parts.hostname:
            raise BroadcastError(f"broker {url!r}: no host name")
        tls = parts.scheme == "mqtts"
        try:
            port = parts.port or (8883 if tls else 1883)
        except ValueError as exc:
            raise BroadcastError(f"broker {url!r}: bad port ({exc})") from exc
        for name, path in (("CA", ca_file), ("certificate", cert_file), ("key", key_file)):
            if path is not None and not Path(path).is_file():
                raise BroadcastError(f"broker TLS {name} file {path}: no such file")
        config = cls(
            host=parts.hostname,
            port=port,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            tls=tls,
            ca_file=ca_file,
            cert_file=cert_file,
            key_file=key_file,
        )
        if not tls and not config.is_local and not insecure_ok:
            raise BroadcastError(
                f"broker {parts.hostname}: not this machine, so use TLS (mqtts://...) or say "
                "--broker-insecure for a trusted network"
            )
        return config

    @property
    def is_local(self) -> bool:
        return self.host in ("localhost", "::1") or self.host.startswith("127.")

    def client(self, client_id: str) -> Any:
        """A paho-mqtt client (MQTT 5) with these credentials and TLS settings, not yet connected."""
        try:
            import paho.mqtt.client as mqtt
        except ImportError as exc:  # pragma: no cover - paho-mqtt is a dependency
            raise BroadcastError("paho-mqtt is not installed (run scripts/setup.sh)") from exc
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
        if self.username is not None:
            c.username_pw_set(self.username, self.password)
        if self.tls:
            try:
                c.tls_set(
                    ca_certs=self.ca_file,
                    certfile=self.cert_file,
                    keyfile=self.key_file,
                    cert_reqs=ssl.CERT_REQUIRED,
                    tls_version=ssl.PROTOCOL_TLS_CLIENT,
                )
            except (OSError, ssl.SSLError, ValueError) as exc:
                raise BroadcastError(f"broker TLS files: {exc}") from exc
        c.reconnect_delay_set(min_delay=1, max_delay=4)
        c.max_inflight_messages_set(100)
        return c


class _RecordTail:
    """Reads entries after a sequence number from a record file without disturbing its writer."""

    def __init__(self, path: str) -> None:
        self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)

    def after(self, seq: int, limit: int) -> list[tuple[int, float, str, str, str]]:
        try:
            return list(
                self._db.execute(
                    "SELECT seq, time, kind, who, payload FROM entries WHERE seq > ? ORDER BY seq LIMIT ?",
                    (seq, limit),
                )
            )
        except sqlite3.OperationalError:  # the writer has not created the table yet
            return []

    def prev_of(self, seq: int) -> int:
        row = self._db.execute("SELECT MAX(seq) FROM entries WHERE seq < ?", (seq,)).fetchone()
        return int(row[0] or 0)

    def close(self) -> None:
        self._db.close()


@dataclass(slots=True)
class BroadcastStats:
    """What a broadcaster did: entries published (republished ones included) and connections."""

    published: int = 0
    republished: int = 0
    connects: int = 0
    confirmed: int = 0
    resumed_from: int | None = None  # the confirmed entry the first publication followed


class Broadcaster:
    """Publishes one table's game record and summary; runs on its own thread (:meth:`start`).

    ``summary()`` is called on the broadcaster's thread after :meth:`changed` and must be
    thread-safe (the live runner takes the game's lock). ``batch`` bounds entries sent per round
    so one long outage is caught up in steps, each confirmed.
    """

    def __init__(
        self,
        config: BrokerConfig,
        table: str,
        game: str,
        record_path: str | Path,
        summary: Summary | None = None,
        root: str = ROOT,
        resend_s: float = 3.0,
        poll_s: float = 0.25,
        batch: int = 200,
    ) -> None:
        self.config = config
        self.table = check_table_id(table)
        self.game = check_table_id(game, "game id")
        self.record_path = str(record_path)
        self.summary = summary
        self.root = root
        self.resend_s = resend_s
        self.poll_s = poll_s
        self.batch = batch
        self.stats = BroadcastStats()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._connected = False
        self._rewind = True  # publish from the confirmed entry on (set by every connection)
        self._acked = 0
        self._ack_seen = False
        self._ack_at = time.monotonic()
        self._connected_at = 0.0
        self._sent = 0
        self._summary_due = True
        self._thread: threading.Thread | None = None
        self._client = config.client(f"table-{table}")
        self._client.will_set(status_topic(table, root), b'{"online":false}', qos=QOS, retain=True)
        self._client.on_connect = self._on_connect
        self._client.on_disconnect = self._on_disconnect
        self._client.on_message = self._on_message

    # ---------------------------------------------------------------- MQTT callbacks (paho's thread)

    def _on_connect(self, client: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if reason.is_failure:
            return
        client.subscribe(ack_topic(self.table, self.game, self.root), qos=QOS)
        client.publish(status_topic(self.table, self.root), b'{"online":true}', qos=QOS, retain=True)
        with self._lock:
            self._connected = True
            self._connected_at = time.monotonic()
            self._rewind = True
            self._summary_due = True
            self.stats.connects += 1
        self._wake.set()

    def _on_disconnect(self, _c: Any, _u: Any, _f: Any, _reason: Any, _p: Any) -> None:
        with self._lock:
            self._connected = False

    def _on_message(self, _c: Any, _u: Any, msg: Any) -> None:
        try:
            seq = int(json.loads(msg.payload)["seq"])
        except (ValueError, KeyError, TypeError):
            return
        with self._lock:
            self._ack_seen = True
            if seq > self._acked:
                self._acked = seq
                self._ack_at = time.monotonic()
            self.stats.confirmed = self._acked
        self._wake.set()

    # ---------------------------------------------------------------- the publishing loop

    def start(self) -> Broadcaster:
        """Connect in the background (the broker may be down: the table referees regardless)."""
        self._client.connect_async(self.config.host, self.config.port, keepalive=self.config.keepalive)
        self._client.loop_start()
        self._thread = threading.Thread(target=self._run, name=f"broadcast-{self.table}", daemon=True)
        self._thread.start()
        return self

    def changed(self) -> None:
        """The record or the table changed: publish soon (called from the referee's thread)."""
        with self._lock:
            self._summary_due = True
        self._wake.set()

    @property
    def confirmed(self) -> int:
        """The last sequence number the hub confirmed holding (with everything before it)."""
        with self._lock:
            return self._acked

    def wait_confirmed(self, seq: int, timeout: float) -> bool:
        """Wait until the hub holds the record up to ``seq`` (tests, and a clean shutdown)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.confirmed >= seq:
                return True
            self._wake.set()
            time.sleep(0.05)
        return self.confirmed >= seq

    def stop(self, drain_s: float = 0.0) -> None:
        """Stop publishing (after up to ``drain_s`` s waiting for the hub to confirm everything)."""
        if drain_s > 0 and Path(self.record_path).exists():
            tail = _RecordTail(self.record_path)
            last = tail.prev_of(1 << 62)
            tail.close()
            self.wait_confirmed(last, drain_s)
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        close_client(self._client)

    def _run(self) -> None:
        tail: _RecordTail | None = None
        while not self._stop.is_set():
            self._wake.wait(self.poll_s)
            self._wake.clear()
            if tail is None:
                if not Path(self.record_path).exists():
                    continue
                tail = _RecordTail(self.record_path)
            try:
                self._publish_round(tail)
            except sqlite3.Error:
                continue  # the record is busy or being created: the next round reads it
        if tail is not None:
            tail.close()

    def _publish_round(self, tail: _RecordTail) -> None:
        with self._lock:
            if not self._connected:
                return
            stalled = self._sent > self._acked and time.monotonic() - self._ack_at > self.resend_s
            if self._rewind or stalled:
                if self._rewind and not self._ack_seen and time.monotonic() - self._connected_at < 0.5:
                    return  # the retained confirmation arrives just after subscribing: wait for it
                if self._sent > self._acked:
                    self.stats.republished += self._sent - self._acked
                self._sent = self._acked
                self._rewind = False
                self._ack_at = time.monotonic()
            start = self._sent
            summary_due = self._summary_due
            self._summary_due = False
        rows = tail.after(start, self.batch)
        if rows:
            with self._lock:
                if self.stats.resumed_from is None:
                    self.stats.resumed_from = start
                if self._sent <= self._acked:  # nothing outstanding: the resend clock starts now
                    self._ack_at = time.monotonic()
        prev = tail.prev_of(rows[0][0]) if rows else start
        for seq, stamp, kind, who, payload in rows:
            message = (
                f'{{"table":{json.dumps(self.table)},"game":{json.dumps(self.game)},"seq":{seq},'
                f'"prev":{prev},"time":{stamp},"kind":{json.dumps(kind)},"who":{json.dumps(who)},'
                f'"sent":{time.time()},"payload":{payload}}}'
            )
            info = self._client.publish(entries_topic(self.table, self.root), message, qos=QOS)
            if info.rc != 0:  # the connection dropped under us: the next connection rewinds
                break
            prev = seq
            with self._lock:
                self._sent = seq
                self.stats.published += 1
        if rows and len(rows) == self.batch:
            self._wake.set()  # more to catch up
        if (rows or summary_due) and self.summary is not None:
            body = dict(self.summary())
            body.update(table=self.table, game=self.game, seq=prev, sent=time.time())
            self._client.publish(summary_topic(self.table, self.root), json.dumps(body), qos=QOS, retain=True)


def table_summary(
    game: Any,
    names: list[str],
    state: Any,
    warnings_open: int,
    camera: str = "ok",
    sensors: str = "none",
    dashboard: str | None = None,
) -> dict[str, Any]:
    """A table's summary for the hub, through the game-independent interface (:mod:`referee.game`):
    ``kind`` is the game's name, scores and ranks come from its score table. The hub shows
    these fields and knows no rules, so Gizmos and Contrivance tables sit side by side."""
    lines = {int(line["seat"]): line for line in game.score_table(state)}
    return {
        "kind": game.name,
        "round": getattr(state, "round", None),
        "turn": getattr(state, "turn", None),
        "finished": bool(game.is_terminal(state)),
        "players": [
            {"name": name, "score": lines[seat].get("total"), "rank": lines[seat].get("rank")}
            for seat, name in enumerate(names)
        ],
        "warnings_open": warnings_open,
        "health": {"camera": camera, "sensors": sensors},
        "dashboard": dashboard,
    }


def add_broker_arguments(p: Any, table: bool) -> None:
    """The broker options of ``run`` (a table, with ``table``) and ``hub``: one place for both."""
    p.add_argument(
        "--broker",
        help="MQTT broker of a tournament: mqtt://USER:PASSWORD@HOST[:PORT] (mqtts:// for TLS; the "
        "password may come from $GIZMOS_BROKER_PASSWORD)" + ("" if table else ". Required unless --demo"),
    )
    if table:
        p.add_argument("--table", help="this table's id at the tournament (its broker user name)")
    p.add_argument("--broker-ca", help="CA certificate (PEM) that signed the broker's certificate")
    p.add_argument("--broker-cert", help="client certificate (PEM), if the broker asks for one")
    p.add_argument("--broker-key", help="the client certificate's key (PEM)")
    p.add_argument(
        "--broker-insecure",
        action="store_true",
        help="allow plain MQTT to another machine (trusted LAN only)",
    )


def broker_from_args(args: Any) -> BrokerConfig:
    """The broker of ``--broker`` and its TLS options; the password may come from the environment."""
    import os

    config = BrokerConfig.from_url(
        args.broker, args.broker_ca, args.broker_cert, args.broker_key, insecure_ok=args.broker_insecure
    )
    if config.password is None and os.environ.get("GIZMOS_BROKER_PASSWORD"):
        config = replace(config, password=os.environ["GIZMOS_BROKER_PASSWORD"])
    return config


def broadcast_live_game(args: Any, game: Any, runner: Any, dashboard: str | None) -> Broadcaster | None:
    """``run --broker URL --table ID``: broadcast the live game's record (None without --broker).

    ``game`` is the live runner's game (``locked()`` yields its tracker); the game id is its
    record's file name. The summary is taken under the game's lock.
    """
    if not getattr(args, "broker", None):
        return None
    if not args.table:
        raise BroadcastError("--table: a table at a tournament needs its id (its broker user name)")
    config = broker_from_args(args)
    if config.username is None:
        config = replace(config, username=args.table)
    if config.username != args.table:
        raise BroadcastError(f"--broker user {config.username!r}: a table logs in as itself ({args.table!r})")
    with game.locked() as tracker:
        path = Path(tracker.record.path)
        caster = Broadcaster(config, args.table, check_table_id(path.stem, "game id"), path)
        tracker.subscribe(lambda _kind, _data: caster.changed())  # wake it at once, not at its next poll
    sensors = "on" if getattr(args, "serial", None) else "none"
    from referee.gizmos import GIZMOS  # the live tracker referees Gizmos

    def summary() -> dict[str, Any]:
        with game.locked() as tracker:
            open_warnings = sum(w.status == "open" for w in tracker.warnings)
            camera = "ok" if runner.stats.frames else "no frames yet"
            return table_summary(
                GIZMOS, tracker.names, tracker.state, open_warnings, camera, sensors, dashboard
            )

    caster.summary = summary
    return caster.start()
