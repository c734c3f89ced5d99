"""The dispenser board as the run loop reads it: the real serial driver behind a queue, a check
that a port opens, and a recording's dispenser log played by a simulated board on a pseudo-terminal.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.app.errors import LiveError
from referee.events import DispenserEvent

if TYPE_CHECKING:
    from hardware.driver import DispenserDriver, StatusEvent


class DispenserFeed:
    """The dispenser board through the real serial driver; its events wait in a queue for the
    runner's thread (the tracker is called from that thread only)."""

    def __init__(self, port: str, clock: Callable[[], float] = time.time, classify: Any = None) -> None:
        check_port(port)
        from hardware.driver import DispenserDriver

        self.port = port
        self.queue: queue.SimpleQueue[DispenserEvent] = queue.SimpleQueue()
        self.status_lines: list[str] = []
        self._count = 0
        self._cond = threading.Condition()
        self.driver: DispenserDriver = DispenserDriver(
            port, sink=self._sink, on_status=self._status, clock=clock, classify=classify
        )

    def _sink(self, event: DispenserEvent) -> None:
        self.queue.put(event)
        with self._cond:
            self._count += 1
            self._cond.notify_all()

    def _status(self, event: StatusEvent) -> None:
        self.status_lines.append(f"dispenser {event.kind}: {event.detail}")

    def start(self) -> DispenserFeed:
        self.driver.start()
        return self

    def wait_connected(self, timeout: float = 5.0) -> None:
        """Wait until the driver holds the port: opening a port flushes what is queued on it, so a
        board (the simulated one) must not speak before."""
        deadline = time.monotonic() + timeout
        while not self.driver.status().connected:
            if time.monotonic() > deadline:
                raise LiveError(f"dispenser on {self.port}: the driver could not open the port")
            time.sleep(0.01)

    def wait_for(self, count: int, timeout: float = 5.0) -> None:
        """Wait until ``count`` events have arrived in all (the simulated board's lock-step mode)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._count >= count, timeout):
                raise LiveError(
                    f"dispenser on {self.port}: {count - self._count} event(s) the board sent never arrived"
                )

    def drain(self) -> list[DispenserEvent]:
        out = []
        while True:
            try:
                out.append(self.queue.get_nowait())
            except queue.Empty:
                return out

    def close(self) -> None:
        self.driver.stop()


def check_port(port: str) -> None:
    """Open the serial port once, so a wrong name is one clear error now rather than retries later."""
    import serial

    if "://" not in port and not Path(port).exists():
        raise LiveError(f"serial port {port}: no such device (is the dispenser board plugged in?)")
    try:
        serial.serial_for_url(port, baudrate=115200, timeout=0.05).close()
    except (serial.SerialException, OSError, ValueError) as exc:
        raise LiveError(f"serial port {port}: cannot open it: {exc}") from exc


class SimulatedDispenser:
    """A recording's dispenser log played by a virtual board on a pseudo-terminal (the real
    protocol, read back by the real driver). ``send_until(t)`` sends every event up to time ``t``;
    :meth:`play` sends them at their own pace from a thread instead."""

    def __init__(self, events: list[dict[str, Any]], seed: int = 0) -> None:
        from hardware.simulator import PtyLink, Simulator, VirtualBoard

        self.events = sorted(events, key=lambda e: e["time"])
        self.sim = Simulator(PtyLink(), VirtualBoard(board="sim-dispenser", seed=seed))
        self.port = self.sim.plug()
        self.rng = random.Random(seed)
        self.sent = 0
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def hello(self) -> None:
        """The board's start: boot noise and HELLO (send once the driver listens)."""
        self.sim.reset()

    def _payload(self, e: dict[str, Any]) -> Any:
        from hardware.protocol import Button, Draw, Return, Row
        from hardware.simulator import sample_rgbc

        kind = e["kind"]
        if kind == "row":
            return Row(e["color"], sample_rgbc(e["color"], self.rng))
        if kind == "draw":
            return Draw(e["color"], sample_rgbc(e["color"], self.rng))
        if kind == "return":
            return Return(int(e["count"]), tuple(e.get("colors", ())))
        if kind == "button":
            return Button()
        raise LiveError(f"recording: unknown dispenser event {kind!r}")

    def send_until(self, t: float) -> int:
        """Send every event up to time ``t``; returns how many have been sent in all."""
        while self.sent < len(self.events) and self.events[self.sent]["time"] <= t + 1e-9:
            self.sim.send(self._payload(self.events[self.sent]))
            self.sent += 1
        return self.sent

    def play(self, speed: float) -> None:
        """Send the events at their own pace (``speed`` times real time), with a heartbeat each second."""

        def run() -> None:
            start = time.monotonic()
            beat = 1.0
            while self.sent < len(self.events) and not self._stop.is_set():
                now = (time.monotonic() - start) * speed
                if now >= beat:
                    self.sim.heartbeat()
                    beat += 1.0
                self.send_until(now)
                self._stop.wait(0.005)

        self._thread = threading.Thread(target=run, name="simulated-dispenser", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
        self.sim.close()
