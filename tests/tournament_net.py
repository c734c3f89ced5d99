"""Test helpers for the tournament tests: a pluggable loopback TCP proxy (a table's Wi-Fi) and a
table that plays on its own thread while its broadcaster publishes."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from pathlib import Path

from referee.app.broadcast import Broadcaster, BrokerConfig
from referee.app.simulated_tables import SimulatedTable


class Cable:
    """127.0.0.1:port -> 127.0.0.1:upstream; :meth:`unplug` drops every connection and refuses
    new ones until :meth:`plug` (the table's network is down, the broker is not)."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._plugged = True
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                if not self._plugged:
                    conn.close()
                    continue
                try:
                    up = socket.create_connection(("127.0.0.1", self.upstream), timeout=2)
                except OSError:
                    conn.close()
                    continue
                self._socks += [conn, up]
            for a, b in ((conn, up), (up, conn)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def unplug(self) -> None:
        with self._lock:
            self._plugged = False
            for s in self._socks:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()
            self._socks.clear()

    def plug(self) -> None:
        with self._lock:
            self._plugged = True

    def close(self) -> None:
        self.unplug()
        self._server.close()


class PlayingTable:
    """A simulated table that accepts a step every ``pace`` seconds until stopped."""

    def __init__(
        self, folder: Path, config: BrokerConfig, table: str, seed: int, pace: float, game: str = "gizmos"
    ) -> None:
        self.path = folder / f"{table}.sqlite"
        self.sim = SimulatedTable(self.path, seed=seed, warn_every=7, game=game)
        self.caster = Broadcaster(config, table, f"game-{seed}", self.path, self.sim.summary).start()
        self.pace = pace
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._play, daemon=True)
        self._thread.start()

    def _play(self) -> None:
        while not self._stop.is_set() and not self.sim.finished:
            self.sim.play()
            self.caster.changed()
            time.sleep(self.pace)

    def halt(self) -> int:
        """Stop playing; the last sequence number in the record."""
        self._stop.set()
        self._thread.join()
        return len(self.sim.record)

    def entries(self) -> list[tuple[int, str, dict]]:
        return [(e.seq, e.kind, e.payload) for e in self.sim.record.entries()]
