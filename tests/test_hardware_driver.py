"""The serial driver's processing, fed in-process: splitting, gaps, duplicates, resets, faults."""

from __future__ import annotations

import itertools
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardware.driver import DispenserDriver, LineSplitter, SequenceTracker, StatusEvent
from hardware.protocol import MAX_LINE, Button, Draw, Frame, Heartbeat, Hello, Return, Row, encode
from hardware.simulator import Faults, VirtualBoard
from referee.events import DispenserEvent


class Recorder:
    """A driver wired to lists, with a fake clock that ticks once per feed."""

    def __init__(self, **kwargs: object) -> None:
        self.events: list[DispenserEvent] = []
        self.status: list[StatusEvent] = []
        self.ticks = itertools.count(100)
        self.driver = DispenserDriver(
            "unused",
            sink=self.events.append,
            on_status=self.status.append,
            clock=lambda: float(next(self.ticks)),
            **kwargs,
        )  # type: ignore[arg-type]

    def feed(self, *frames: Frame) -> None:
        for f in frames:
            self.driver.feed(encode(f))

    def kinds(self) -> list[str]:
        return [s.kind for s in self.status]


def test_events_carry_kind_color_seq_rgbc_and_the_injected_clock() -> None:
    r = Recorder()
    r.feed(
        Frame(0, Hello("b", "1.0", 1)),
        Frame(1, Row("red", (9, 2, 1, 12))),
        Frame(2, Return(2, ("blue",))),
        Frame(3, Button()),
        Frame(4, Heartbeat(5)),
    )
    assert r.events == [
        DispenserEvent("row_refill", 101.0, "red", seq=1, rgbc=(9, 2, 1, 12)),
        DispenserEvent("return", 102.0, count=2, colors=("blue",), seq=2),
        DispenserEvent("button", 103.0, seq=3),
    ]
    st_ = r.driver.status()
    assert (st_.board, st_.firmware, st_.protocol) == ("b", "1.0", 1)
    assert st_.counters.lines_ok == 5 and st_.counters.events == 3
    assert r.kinds() == ["hello"]


def test_gap_duplicate_and_restart_are_told_apart() -> None:
    r = Recorder()
    r.feed(
        Frame(10, Button()),
        Frame(11, Button()),
        Frame(11, Button()),
        Frame(15, Button()),
        Frame(10, Button()),
        Frame(2, Button()),
        Frame(3, Button()),
    )
    c = r.driver.status().counters
    assert [e.seq for e in r.events] == [10, 11, 15, 2, 3]
    assert (c.gaps, c.lost, c.duplicates, c.resets) == (1, 3, 2, 1)
    assert [s.detail for s in r.status if s.kind == "gap"] == ["3 line(s) lost (seq 12..14)"]
    assert "reset" in r.kinds()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_restart_whose_hello_is_lost_is_detected_and_nothing_is_dropped(seed: int) -> None:
    # The board restarts within 256 lines of its previous start and its HELLO is lost (or has a
    # bad CRC): its numbers are ones already seen, but the lines are not the same lines.
    board = VirtualBoard(seed=seed)
    r = Recorder()
    r.driver.feed(board.hello())
    r.driver.feed(b"".join(board.frame(board.random_payload())[1] for _ in range(100)))
    before = len(r.events)
    assert before == 100
    board.hello()  # the reset's HELLO never reaches the host
    after = [board.frame(board.random_payload()) for _ in range(100)]
    r.driver.feed(b"".join(data for _, data in after))
    assert [e.seq for e in r.events[before:]] == [f.seq for f, _ in after]  # 100 sent, 100 delivered
    c = r.driver.status().counters
    assert (c.resets, c.duplicates) == (1, 0)
    assert [s.detail for s in r.status if s.kind == "reset"] == [
        "board restarted without a HELLO (sequence at 1, seen before or behind)"
    ]


def test_a_true_duplicate_is_still_dropped_and_a_smaller_uptime_is_a_reset() -> None:
    r = Recorder()
    r.feed(Frame(0, Hello("b", "1", 1)), Frame(1, Heartbeat(9000)), Frame(2, Button()))
    r.feed(Frame(1, Heartbeat(9000)), Frame(2, Button()))  # the same lines again: duplicates
    assert r.driver.status().counters.duplicates == 2 and r.driver.status().counters.resets == 0
    # Restarted, HELLO and the first lines lost: seq 6 looks like a gap, but uptime went back.
    r.feed(Frame(6, Heartbeat(1000)), Frame(7, Button()))
    c = r.driver.status().counters
    assert (c.resets, c.gaps) == (1, 0) and [e.seq for e in r.events] == [2, 7]


def test_sequence_wraps_without_a_gap() -> None:
    tracker = SequenceTracker()
    verdicts = [tracker.check(s)[0] for s in (65534, 65535, 0, 1)]
    assert verdicts == ["first", "ok", "ok", "ok"]
    assert tracker.check(3) == ("gap", 1)


def test_hello_resets_the_sequence_and_noise_before_it_is_counted_not_fatal() -> None:
    r = Recorder()
    r.feed(Frame(40, Button()))
    r.driver.feed(b"\x00\xf0\xff junk" + encode(Frame(0, Hello("b", "2", 1))))
    r.feed(Frame(1, Button()))
    c = r.driver.status().counters
    assert (c.resets, c.gaps, c.garbage) == (1, 0, 1)
    assert [e.seq for e in r.events] == [40, 1]


def test_protocol_mismatch_and_board_errors_are_reported() -> None:
    from hardware.protocol import BoardError

    r = Recorder()
    r.feed(Frame(0, Hello("b", "9", 2)), Frame(1, BoardError("no_color_sensor")))
    assert r.kinds() == ["hello", "protocol_mismatch", "board_error"]
    assert r.status[-1].detail == "no_color_sensor" and r.events == []


def test_corrupt_and_garbage_are_counted_by_reason() -> None:
    r = Recorder()
    good = encode(Frame(1, Row("red", (1, 2, 3, 4))))
    r.driver.feed(
        good.replace(b"red", b"rex") + b"hello world\n" + b"$1,BTN\n" + b"\r\n" + b"x" * 500 + b"\n"
    )
    c = r.driver.status().counters
    assert r.events == []
    assert (c.corrupt, c.garbage) == (2, 2)
    assert c.rejects == {"checksum_mismatch": 1, "no_start": 1, "no_checksum": 1, "too_long": 1}


def test_calibration_overrides_the_boards_color_only_when_rgbc_is_known() -> None:
    r = Recorder(classify=lambda rgbc: "unknown" if rgbc[3] < 10 else "yellow")
    r.feed(Frame(1, Row("red", (1, 1, 1, 5))), Frame(2, Row("red", (1, 1, 1, 50))), Frame(3, Draw("blue")))
    assert [e.color for e in r.events] == ["unknown", "yellow", "blue"]


@given(st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=20), st.data())
def test_splitter_output_does_not_depend_on_chunking(lines: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    splitter = LineSplitter()
    got: list[bytes] = []
    for a, b in itertools.pairwise([0, *cuts, len(stream)]):
        got += splitter.feed(stream[a:b])[0]
    assert got == lines


def test_splitter_bounds_memory_on_endless_noise() -> None:
    splitter = LineSplitter()
    dropped = sum(splitter.feed(b"z" * 1000)[1] for _ in range(100))
    lines, more = splitter.feed(b"tail\n$ok\n")
    assert dropped == 1 and more == 0 and lines == [b"$ok"]
    assert splitter.feed(b"a" * (MAX_LINE + 2) + b"\n") == ([b"a" * (MAX_LINE + 2)], 0)


@settings(max_examples=200)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_crash_the_driver(data: bytes) -> None:
    r = Recorder()
    r.driver.feed(data)
    r.feed(Frame(7, Button()))  # and it still works afterwards
    assert r.events[-1].seq == 7


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_faulty_link_loses_only_damaged_lines_and_never_duplicates(seed: int) -> None:
    board = VirtualBoard(seed=seed)
    r = Recorder()
    stream = board.frame(Button())[1]  # clean first and last lines, so every loss shows as a gap
    board.faults = Faults(garbage=0.05, drop=0.05, corrupt=0.05, duplicate=0.05)
    stream += b"".join(board.frame(board.random_payload())[1] for _ in range(3000))
    board.faults = Faults()
    stream += board.frame(Button())[1]
    for i in range(0, len(stream), 997):
        r.driver.feed(stream[i : i + 997])
    seqs = [e.seq for e in r.events]
    sent = [f.seq for f in board.sent]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs) and set(seqs) <= set(sent)
    c = r.driver.status().counters
    assert c.lines_ok + c.lost == len(sent)
    assert c.duplicates > 50 and c.corrupt > 50 and c.garbage > 50 and c.gaps > 50
    assert c.resets == 0
    kinds = {Row: "row_refill", Return: "return", Button: "button", Draw: "draw"}
    for e in r.events:  # what got through is exactly what was sent
        assert e.seq is not None and kinds[type(board.sent[e.seq].payload)] == e.kind


class FakePort:
    """A port that yields scripted chunks, then nothing, then fails like an unplugged device."""

    def __init__(self, chunks: list[bytes], fail_after: int | None = None) -> None:
        self.chunks = chunks
        self.reads = 0
        self.fail_after = fail_after

    @property
    def in_waiting(self) -> int:
        return 0

    def read(self, size: int = 1) -> bytes:
        self.reads += 1
        if self.fail_after is not None and self.reads > self.fail_after:
            raise OSError(5, "Input/output error")
        if self.chunks:
            return self.chunks.pop(0)
        time.sleep(0.002)
        return b""

    def close(self) -> None:
        pass


def _wait(predicate: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_reconnects_with_backoff_and_reports_one_outage() -> None:
    attempts: list[float] = []
    ports = [FakePort([encode(Frame(1, Button()))], fail_after=3), FakePort([encode(Frame(2, Button()))])]

    def open_port(name: str, baud: int, timeout: float) -> FakePort:
        attempts.append(time.monotonic())
        if 2 <= len(attempts) <= 5:  # unplugged for four attempts
            raise OSError(2, f"could not open port {name}")
        return ports.pop(0)

    status: list[StatusEvent] = []
    driver = DispenserDriver("/dev/fake", on_status=status.append, open_port=open_port, backoff=(0.01, 0.04))
    with driver:
        assert driver.get(timeout=5) is not None
        assert driver.get(timeout=5) is not None
    kinds = [s.kind for s in status]
    assert kinds == ["connected", "disconnected", "connected", "disconnected"]
    assert "outage" in status[2].detail and status[-1].detail == "driver stopped"
    gaps = [b - a for a, b in itertools.pairwise(attempts[1:6])]
    assert gaps[-1] >= 0.035 and gaps[0] < gaps[-1]  # doubling, capped at 0.04 s
    assert driver.status().counters.reconnects == 1 and driver.status().outage_since is None


def test_silence_is_reported_and_then_cleared() -> None:
    now = [0.0]
    port = FakePort([])
    status: list[StatusEvent] = []
    driver = DispenserDriver(
        "/dev/fake",
        on_status=status.append,
        clock=lambda: now[0],
        open_port=lambda *a: port,
        heartbeat_timeout=3.0,
    )
    with driver:
        _wait(lambda: driver.status().connected)
        now[0] = 5.0
        _wait(lambda: any(s.kind == "silent" for s in status))
        port.chunks.append(encode(Frame(1, Heartbeat(1))))
        _wait(lambda: any(s.kind == "alive" for s in status))
    assert [s.kind for s in status][:3] == ["connected", "silent", "alive"]
    assert status[1].detail == "no line for 5.0 s"
