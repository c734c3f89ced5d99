"""The tournament hub: ``gizmos-referee hub``, and its MQTT side (:class:`Receiver`).

The hub composes the broker (:mod:`referee.app.broker` for a local one), the store, board and
organiser's page (:mod:`web.tournament`) and, for ``--demo``, simulated tables
(:mod:`referee.app.simulated_tables`). ``hub --broker mqtts://hub:PASSWORD@broker.lan
--broker-ca ca.pem`` joins an event's broker; ``hub --demo N`` starts a local Mosquitto with the
tournament's ACL and N simulated tables and shows the page. Bad input is one line, exit status 2.

The receiver: subscribe to every table, store what arrives, confirm it, update the board.

paho's network thread only queues messages; one worker drains the queue in batches, stores a
batch in one transaction, then publishes each touched game's confirmation (retained, QoS 1)
on ``<root>/<table>/ack/<game>``. A table learns from it where to republish from. A
republished entry the store already holds is confirmed again, so a table that lost its
confirmation (a broker restarted without its retained messages) catches up at once.

The topic a message came on names its table (the broker's access list lets a table write only
under its own name); a payload that claims another table is refused and counted.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import secrets
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.app.broadcast import (
    QOS,
    ROOT,
    BroadcastError,
    BrokerConfig,
    ack_topic,
    add_broker_arguments,
    broker_from_args,
    close_client,
)
from referee.app.broker import BrokerError, Mosquitto
from referee.app.percentiles import nearest_rank, p99
from referee.game import registered_games
from web.security import PinError, check_pin_format, random_pin
from web.serve import PIN_ENV
from web.tournament.board import Board
from web.tournament.store import EntryMessage, StoreError, TournamentStore, open_store

LAGS_KEPT = 50_000


def percentiles(values: Any) -> dict[str, float | int | None]:
    """Median and 99th percentile (nearest rank) of some lags, in seconds."""
    ordered = list(values)
    if not ordered:
        return {"n": 0, "median": None, "p99": None}
    return {"n": len(ordered), "median": nearest_rank(ordered, 0.5), "p99": p99(ordered)}


@dataclass(slots=True)
class ReceiverStats:
    """Counts, and the lags of the last stored entries: from the table's publishing (``sent``)
    and from its record (the entry's ``time``) to the hub's commit, in seconds."""

    received: int = 0
    stored: int = 0
    duplicates: int = 0
    refused: int = 0
    store_errors: int = 0
    store_lags: deque[float] = field(default_factory=lambda: deque(maxlen=LAGS_KEPT))
    record_lags: deque[float] = field(default_factory=lambda: deque(maxlen=LAGS_KEPT))

    def to_json(self) -> dict[str, Any]:
        return {
            "received": self.received,
            "stored": self.stored,
            "duplicates": self.duplicates,
            "refused": self.refused,
            "store_errors": self.store_errors,
            "publish_to_stored": percentiles(self.store_lags),
            "recorded_to_stored": percentiles(self.record_lags),
        }


class Receiver:
    """Subscribes as the hub's user and keeps ``store`` and ``board`` up to date (:meth:`start`)."""

    def __init__(
        self,
        config: BrokerConfig,
        store: TournamentStore,
        board: Board,
        root: str = ROOT,
        client_id: str = "gizmos-hub",
        log: Any = None,
    ) -> None:
        self.config = config
        self.store = store
        self.board = board
        self.root = root
        self.stats = ReceiverStats()
        self.log = log if log is not None else sys.stderr
        self._queue: queue.Queue[tuple[str, bytes] | None] = queue.Queue()
        self._confirmed = store.confirmed()
        self._connected = threading.Event()
        self._client = config.client(client_id)
        self._client.on_connect = self._on_connect
        self._client.on_disconnect = self._on_disconnect
        self._client.on_message = self._on_message
        self._worker = threading.Thread(target=self._run, name="tournament-receiver", daemon=True)

    def _on_connect(self, client: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if reason.is_failure:
            self.log.write(f"hub: the broker refused the hub's login: {reason}\n")
            return
        for leaf in ("entries", "summary", "status"):
            client.subscribe(f"{self.root}/+/{leaf}", qos=QOS)
        # Re-announce every confirmation (a broker restarted without its retained messages).
        for (table, game), seq in list(self._confirmed.items()):
            client.publish(ack_topic(table, game, self.root), json.dumps({"seq": seq}), qos=QOS, retain=True)
        self._connected.set()

    def _on_disconnect(self, *_args: Any) -> None:
        self._connected.clear()

    def _on_message(self, _c: Any, _u: Any, msg: Any) -> None:
        self._queue.put((msg.topic, msg.payload))

    def start(self) -> Receiver:
        self._client.connect_async(self.config.host, self.config.port, keepalive=self.config.keepalive)
        self._client.loop_start()
        self._worker.start()
        return self

    def wait_connected(self, timeout: float) -> bool:
        return self._connected.wait(timeout)

    def stop(self) -> None:
        self._queue.put(None)
        self._worker.join(timeout=10)
        close_client(self._client)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            batch = [item]
            while len(batch) < 2000:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self._handle(batch)
                    return
                batch.append(more)
            self._handle(batch)

    def _refuse(self, topic: str, why: str) -> None:
        self.stats.refused += 1
        self.log.write(f"hub: refused a message on {topic}: {why}\n")

    def _handle(self, batch: list[tuple[str, bytes]]) -> None:
        entries: list[EntryMessage] = []
        summaries: dict[str, dict[str, Any]] = {}
        statuses: dict[str, bool] = {}
        for topic, payload in batch:
            self.stats.received += 1
            parts = topic.split("/")
            table, leaf = parts[-2], parts[-1]
            try:
                if leaf == "entries":
                    entries.append(EntryMessage.parse(table, payload))
                elif leaf == "summary":
                    body = json.loads(payload)
                    if not isinstance(body, dict) or body.get("table") != table:
                        raise ValueError("a summary must be an object naming the topic's table")
                    if not isinstance(body.get("game"), str):
                        raise ValueError("a summary must name its game")
                    summaries[table] = body
                elif leaf == "status":
                    statuses[table] = bool(json.loads(payload).get("online"))
            except (ValueError, AttributeError) as exc:
                self._refuse(topic, str(exc))
        if entries:
            self._store_entries(entries)
        if summaries:
            try:
                self.store.put_summaries(
                    [(t, body["game"], body) for t, body in summaries.items()], time.time()
                )
            except StoreError as exc:  # the board still shows them; the next summary is stored
                self.stats.store_errors += 1
                self.log.write(f"hub: could not store {len(summaries)} summaries: {exc}\n")
        for table, body in summaries.items():
            self.board.update(table, summary=body, online=True)
        for table, online in statuses.items():
            self.board.update(table, online=online)

    def _store_entries(self, entries: list[EntryMessage]) -> None:
        """Store a batch in one transaction, then confirm each game it touched to its table."""
        before = {key: self._confirmed.get(key, 0) for key in {(e.table, e.game) for e in entries}}
        try:
            touched = self.store.add(entries)
        except StoreError as exc:
            # Not confirmed, so the tables publish these again (after 3 s without confirmations).
            self.stats.store_errors += 1
            self.log.write(
                f"hub: could not store {len(entries)} entries, the tables will resend them: {exc}\n"
            )
            return
        now = time.time()
        fresh = [e for e in entries if e.seq > before[(e.table, e.game)]]
        self.stats.stored += len(fresh)
        self.stats.duplicates += len(entries) - len(fresh)
        self.stats.store_lags.extend(now - e.sent for e in fresh)
        self.stats.record_lags.extend(now - e.time for e in fresh)
        for (table, game), seq in touched.items():
            self._confirmed[(table, game)] = seq
            self._client.publish(
                ack_topic(table, game, self.root), json.dumps({"seq": seq}), qos=QOS, retain=True
            )


#: The demo's tables share one process, and paho's select() loop cannot use descriptors past 1024
#: (about 9 per table: its record, the broadcaster's reader, its socket). benchmarks/tournament.py
#: runs more in several processes; a real table runs one broadcaster.
MAX_DEMO_TABLES = 100


class HubCliError(Exception):
    """One line for the user, exit status 2."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "The tournament hub: every table's record through an MQTT broker into one store, "
        "and the organiser's page (read-only without the organiser's PIN: $GIZMOS_ADMIN_PIN, "
        "else a random one, printed)."
    )
    add_broker_arguments(p, table=False)
    p.add_argument(
        "--store",
        default="tournament.sqlite",
        help="the hub's copy: a SQLite file (default tournament.sqlite) or a postgresql:// URL",
    )
    p.add_argument("--host", default="127.0.0.1", help="page address (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8100, help="page port (default 8100; 0: any free port)")
    p.add_argument("--title", default="Tournament", help="the page's title")
    p.add_argument(
        "--demo",
        type=int,
        metavar="N",
        help="start a local broker and N simulated tables (Gizmos and Contrivance in turn)",
    )
    p.add_argument(
        "--pace", type=float, default=1.0, help="--demo: seconds between a table's accepted steps (default 1)"
    )
    p.add_argument("--seconds", type=float, help="stop after this many seconds (default: at Ctrl-C)")


def run(args: argparse.Namespace) -> int:
    from werkzeug.serving import make_server

    from referee.app.simulated_tables import Fleet
    from web.tournament.app import create_app

    if args.demo is not None and not 1 <= args.demo <= MAX_DEMO_TABLES:
        raise HubCliError(f"--demo: expected 1 to {MAX_DEMO_TABLES} tables, got {args.demo}")
    if args.demo is None and not args.broker:
        raise HubCliError("--broker is required (or --demo N for a local broker and N simulated tables)")
    if args.pace <= 0:
        raise HubCliError(f"--pace: expected seconds above 0, got {args.pace}")
    pin = os.environ.get(PIN_ENV) or random_pin()
    check_pin_format(pin)
    broker: Mosquitto | None = None
    fleet: Fleet | None = None
    work = tempfile.TemporaryDirectory(prefix="gizmos-hub-demo-") if args.demo else None
    if args.demo:
        assert work is not None
        tables = [f"t{i:02d}" for i in range(1, args.demo + 1)]
        users = {"hub": secrets.token_urlsafe(12), **{t: secrets.token_urlsafe(12) for t in tables}}
        broker = Mosquitto(users).start()
        config = broker.config("hub")
        store_at = args.store if args.store != "tournament.sqlite" else str(Path(work.name) / "hub.sqlite")
    else:
        config = broker_from_args(args)
        store_at = args.store
    store = open_store(store_at)
    board = Board(store)
    receiver = Receiver(config, store, board).start()
    app = create_app(board, {"ADMIN_PIN": pin, "TOURNAMENT_TITLE": args.title}, receiver=receiver)
    try:
        server = make_server(args.host, args.port, app, threaded=True)
    except OSError as exc:
        raise HubCliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from exc
    if broker is not None:
        assert work is not None
        fleet = Fleet(
            Path(work.name) / "tables",
            {t: broker.config(t) for t in tables},
            pace=args.pace,
            games=tuple(registered_games()),
        ).start()
        print(f"hub: demo broker on 127.0.0.1:{broker.port}; {args.demo} simulated tables playing")
    print(f"hub: organiser page http://{args.host}:{server.server_port}/  (organiser PIN {pin})")
    print(f"hub: storing into {store.where}")
    sys.stdout.flush()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        end = time.monotonic() + args.seconds if args.seconds else None
        while end is None or time.monotonic() < end:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        if fleet is not None:
            fleet.stop(drain_s=5.0)
        server.shutdown()
        receiver.stop()
        games = store.games()
        stats = receiver.stats
        print(f"hub: {len(games)} games, {stats.stored} entries stored, {stats.refused} refused")
        store.close()
        if broker is not None:
            broker.close()
        if work is not None:
            work.cleanup()
    return 0


ERRORS = (HubCliError, BroadcastError, StoreError, BrokerError, PinError)
