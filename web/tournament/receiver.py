"""The hub's MQTT side: subscribe to every table, store what arrives, confirm it, update the board.

paho's network thread only queues messages; one worker drains the queue in batches, stores a
batch in one transaction, then publishes each touched game's confirmation (retained, QoS 1)
on ``<root>/<table>/ack/<game>``. A table learns from it where to republish from. A
republished entry the store already holds is confirmed again, so a table that lost its
confirmation (a broker restarted without its retained messages) catches up at once.

The topic a message came on names its table (the broker's access list lets a table write only
under its own name); a payload that claims another table is refused and counted.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from referee.broadcast import QOS, ROOT, BrokerConfig, ack_topic
from web.tournament.board import Board
from web.tournament.store import EntryMessage, TournamentStore

LAGS_KEPT = 50_000


def percentiles(values: Any) -> dict[str, float | int | None]:
    """Median and 99th percentile (nearest rank) of some lags, in seconds."""
    ordered = sorted(values)
    if not ordered:
        return {"n": 0, "median": None, "p99": None}
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"n": len(ordered), "median": at(0.5), "p99": at(0.99)}


@dataclass(slots=True)
class ReceiverStats:
    """Counts, and the lags of the last stored entries: from the table's publishing (``sent``)
    and from its record (the entry's ``time``) to the hub's commit, in seconds."""

    received: int = 0
    stored: int = 0
    duplicates: int = 0
    refused: int = 0
    store_lags: deque[float] = field(default_factory=lambda: deque(maxlen=LAGS_KEPT))
    record_lags: deque[float] = field(default_factory=lambda: deque(maxlen=LAGS_KEPT))

    def to_json(self) -> dict[str, Any]:
        return {
            "received": self.received,
            "stored": self.stored,
            "duplicates": self.duplicates,
            "refused": self.refused,
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
        self._client.disconnect()
        self._client.loop_stop()

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
            before = {key: self._confirmed.get(key, 0) for key in {(e.table, e.game) for e in entries}}
            touched = self.store.add(entries)
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
        now = time.time()
        for table, body in summaries.items():
            self.store.put_summary(table, body["game"], body, now)
            self.board.update(table, summary=body, online=True)
        for table, online in statuses.items():
            self.board.update(table, online=online)
