"""The driver against the simulator through real pseudo-terminals (and a localhost socket)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from hardware.driver import DispenserDriver, StatusEvent
from hardware.protocol import Button, Row
from hardware.simulator import Simulator, TcpLink, VirtualBoard
from referee.events import DispenserEvent


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.005)


class Rig:
    """A simulator plus a running driver that records events and status."""

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self.events: list[DispenserEvent] = []
        self.status: list[StatusEvent] = []
        port = sim.plug()
        self.driver = DispenserDriver(
            port, sink=self.events.append, on_status=self.status.append, backoff=(0.01, 0.1)
        )
        self.driver.start()
        wait_for(lambda: self.driver.status().connected)

    def receive(self, n: int, timeout: float = 10.0) -> None:
        wait_for(lambda: len(self.events) >= n, timeout)


@pytest.fixture
def rig() -> Iterator[Rig]:
    with Simulator(board=VirtualBoard(record=False)) as sim:
        r = Rig(sim)
        yield r
        r.driver.stop()


def test_events_arrive_through_a_pty(rig: Rig) -> None:
    rig.sim.send(Row("blue", (200, 400, 900, 1500)))
    rig.sim.send(Button())
    rig.receive(2)
    assert [(e.kind, e.color, e.rgbc) for e in rig.events] == [
        ("row_refill", "blue", (200, 400, 900, 1500)),
        ("button", None, None),
    ]
    assert rig.events[0].time <= rig.events[1].time


def test_reconnects_after_the_simulator_closes_and_reopens(rig: Rig) -> None:
    rig.sim.send_random(5)
    rig.receive(5)
    rig.sim.unplug()
    wait_for(lambda: not rig.driver.status().connected)
    time.sleep(0.15)  # a few failed attempts while the device is gone
    rig.sim.plug()
    wait_for(lambda: rig.driver.status().counters.reconnects == 1)
    rig.sim.send_random(5)
    rig.receive(10)
    c = rig.driver.status().counters
    assert [e.seq for e in rig.events] == list(range(10))
    assert (c.gaps, c.lost) == (0, 0)
    kinds = [s.kind for s in rig.status]
    assert kinds == ["connected", "disconnected", "connected"]
    assert "outage" in rig.status[2].detail


def test_lines_sent_while_unplugged_show_up_as_a_gap(rig: Rig) -> None:
    rig.sim.send_random(3)
    rig.receive(3)
    rig.sim.unplug()
    rig.sim.send_random(4)  # the board keeps counting; nobody hears these
    rig.sim.plug()
    wait_for(lambda: rig.driver.status().counters.reconnects == 1)
    rig.sim.send(Button())
    rig.receive(4)
    c = rig.driver.status().counters
    assert (c.gaps, c.lost) == (1, 4)
    assert rig.events[-1].seq == 7
    assert any(s.kind == "gap" and "seq 3..6" in s.detail for s in rig.status)


def test_board_reset_with_boot_noise(rig: Rig) -> None:
    rig.sim.send_random(3)
    rig.receive(3)
    rig.sim.reset()
    rig.sim.send(Button())
    rig.receive(4)
    c = rig.driver.status().counters
    assert rig.events[-1].seq == 1 and (c.resets, c.gaps) == (1, 0)
    assert rig.driver.status().board == "sim-dispenser"


def test_pyserial_socket_url_and_its_reconnect() -> None:
    with Simulator(TcpLink(accept_timeout=5.0)) as sim:
        rig = Rig(sim)
        try:
            sim.send(Button())
            rig.receive(1)
            sim.unplug()  # drops the client; the driver reconnects to the listening socket
            wait_for(lambda: rig.driver.status().counters.reconnects == 1)
            sim.plug()
            sim.send(Button())
            rig.receive(2)
            assert [e.seq for e in rig.events] == [0, 1]
            assert rig.driver.port.startswith("socket://127.0.0.1:")
        finally:
            rig.driver.stop()


def test_soak_100k_events_at_full_speed_none_lost_or_duplicated(rig: Rig) -> None:
    n = 100_000
    board = rig.sim.board
    stream = b"".join(board.frame(board.random_payload())[1] for _ in range(n))
    writer = threading.Thread(
        target=lambda: [rig.sim.write_raw(stream[i : i + 4096]) for i in range(0, len(stream), 4096)]
    )
    started = time.monotonic()
    writer.start()
    rig.receive(n, timeout=45.0)
    writer.join()
    elapsed = time.monotonic() - started
    seqs = [e.seq for e in rig.events]
    assert seqs == [i % 65536 for i in range(n)]  # in order across the wrap, none missing, none twice
    c = rig.driver.status().counters
    assert (c.lines_ok, c.gaps, c.duplicates, c.corrupt, c.garbage) == (n, 0, 0, 0, 0)
    print(f"soak: {n} events in {elapsed:.2f} s ({n / elapsed:,.0f}/s)")
