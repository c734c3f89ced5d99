"""Dispenser serial benchmark: events parsed per second, and write -> event latency.

Runs the simulator on a real pseudo-terminal and the driver on the other end, so the figures
include the kernel's tty layer, pyserial and the reader thread, as with a USB board:

1. parse only: bytes fed to ``DispenserDriver.feed`` in-process (the driver's own ceiling);
2. throughput: N events written as fast as the pty takes them, counted at the tracker's sink;
3. latency: lines written one at a time (paced, so no queue builds up); for each, the time from
   just before ``write`` to the event reaching the sink, on the same ``perf_counter`` clock.

Usage: .venv/bin/python benchmarks/serial.py [--events N] [--latency-lines N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

# This file is named serial.py: drop its own folder from the path, or "import serial" (pyserial)
# inside the driver would import this script instead. The repository root goes there instead.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from hardware.driver import DispenserDriver  # noqa: E402
from hardware.protocol import Button  # noqa: E402
from hardware.simulator import Simulator, VirtualBoard  # noqa: E402
from referee.app.percentiles import p99  # noqa: E402
from referee.events import DispenserEvent  # noqa: E402


def _stream(n: int, seed: int) -> bytes:
    board = VirtualBoard(seed=seed, record=False)
    return b"".join(board.frame(board.random_payload())[1] for _ in range(n))


def parse_only(n: int) -> float:
    """Events per second through the driver's processing alone."""
    data = _stream(n, seed=1)
    count = [0]

    def sink(_: DispenserEvent) -> None:
        count[0] += 1

    driver = DispenserDriver("in-process", sink=sink)
    start = time.perf_counter()
    for i in range(0, len(data), 4096):
        driver.feed(data[i : i + 4096])
    elapsed = time.perf_counter() - start
    assert count[0] == n, f"parse only: {count[0]} of {n} events"
    return n / elapsed


def _wait(predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit("benchmark: timed out waiting for events (see the driver's counters)")
        time.sleep(0.001)


def through_pty(n: int, latency_lines: int) -> tuple[float, list[float]]:
    """Events/s over a pty at full speed, and per-line latencies (seconds) when paced."""
    got: list[DispenserEvent] = []
    with Simulator(board=VirtualBoard(record=False)) as sim:
        driver = DispenserDriver(sim.plug(), sink=got.append, clock=time.perf_counter)
        with driver:
            _wait(lambda: driver.status().connected, 10)
            data = _stream(n, seed=2)

            def write_all() -> None:
                for i in range(0, len(data), 4096):
                    sim.write_raw(data[i : i + 4096])

            start = time.perf_counter()
            writer = threading.Thread(target=write_all)
            writer.start()
            _wait(lambda: len(got) >= n, 120)
            rate = n / (time.perf_counter() - start)
            writer.join()

            got.clear()
            sim.board.seq = 0
            written: list[float] = []
            for _ in range(latency_lines):
                line = sim.board.frame(Button())[1]
                written.append(time.perf_counter())
                sim.write_raw(line)
                time.sleep(0.001)
            _wait(lambda: len(got) >= latency_lines, 30)
            c = driver.status().counters
            if c.corrupt or c.garbage or c.duplicates:
                raise SystemExit(f"benchmark: link errors {c}")
    latencies = [e.time - t0 for e, t0 in zip(got, written, strict=True)]
    return rate, latencies


def main(argv: list[str] | None = None) -> int:
    """Run all three measurements and print them."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--latency-lines", type=int, default=2000)
    args = p.parse_args(argv)
    parsed = parse_only(args.events)
    rate, lat = through_pty(args.events, args.latency_lines)
    print(f"parse only: {parsed:,.0f} events/s ({args.events} events)")
    print(f"through pty: {rate:,.0f} events/s ({args.events} events, none lost)")
    print(
        f"latency write->event over {len(lat)} lines: median {statistics.median(lat) * 1e3:.3f} ms, "
        f"p99 {p99(lat) * 1e3:.3f} ms, max {max(lat) * 1e3:.3f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
