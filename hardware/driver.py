"""Serial driver for the dispenser board: bytes in, :class:`referee.events.DispenserEvent` out.

The driver owns the port. A reader thread opens it (a device path or any pyserial URL),
cuts the byte stream into lines, parses them, tracks sequence numbers and hands events to a
sink (the tracker) or an internal queue. It never lets bad input escape as an exception:
noise, corrupt lines, gaps and duplicates are counted, and the link's ups and downs are
reported as :class:`StatusEvent` so the dashboard can say "dispenser unplugged" instead of the
referee silently missing marbles. Unplugging is survived by reconnecting with backoff.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Protocol

import serial

from hardware.protocol import (
    MAX_LINE,
    PROTOCOL_VERSION,
    SEQ_MODULUS,
    BoardError,
    Button,
    Draw,
    Frame,
    Heartbeat,
    Hello,
    ProtocolError,
    Return,
    Row,
    parse,
    seq_distance,
)
from referee.events import DispenserEvent

#: Classifies raw RGBC readings into a color word (a :class:`hardware.calibration.ColorCalibration`).
Classifier = Callable[[tuple[int, int, int, int]], str]


class SerialLike(Protocol):
    """The part of ``serial.Serial`` the driver uses, so tests can pass a fake port."""

    @property
    def in_waiting(self) -> int: ...

    def read(self, size: int = 1) -> bytes: ...

    def close(self) -> None: ...


# ---------------------------------------------------------------------------------------------
# Line splitting


class LineSplitter:
    """Cuts a byte stream into lines with bounded memory.

    A line that grows past the limit without a newline is noise (a board at the wrong baud
    rate produces exactly that); it is discarded up to the next newline and reported.
    """

    def __init__(self, max_line: int = MAX_LINE + 2) -> None:
        self._max = max_line
        self._buf = bytearray()
        self._discarding = False

    def reset(self) -> None:
        """Forget a partial line (after a reconnect it belongs to a different stream)."""
        self._buf.clear()
        self._discarding = False

    def feed(self, data: bytes) -> tuple[list[bytes], int]:
        """Complete lines in ``data`` (without ``\\n``), and how many overlong lines were dropped."""
        lines = []
        dropped = 0
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                break
            if self._discarding:
                self._discarding = False
            elif self._buf:
                self._buf += data[start:nl]
                if len(self._buf) > self._max:
                    dropped += 1
                else:
                    lines.append(bytes(self._buf))
                self._buf.clear()
            elif nl - start > self._max:
                dropped += 1
            else:
                lines.append(data[start:nl])
            start = nl + 1
        if not self._discarding:
            self._buf += data[start:]
            if len(self._buf) > self._max:
                self._buf.clear()
                self._discarding = True
                dropped += 1
        return lines, dropped


# ---------------------------------------------------------------------------------------------
# Sequence tracking


class SequenceTracker:
    """Classifies each sequence number as next, gap, duplicate or restart.

    Serial links lose and corrupt bytes but never reorder them, so a number ahead of the last
    one means lines were lost, and a number behind it is either a repeat of a line already
    read (a ``duplicate``: the same bytes) or the board counting again after a reset whose
    HELLO was lost (a ``restart``: a number not seen recently, or seen with other content).
    """

    WINDOW = 256

    def __init__(self) -> None:
        self.last: int | None = None
        self._recent: deque[int] = deque(maxlen=self.WINDOW)
        self._seen: dict[int, bytes] = {}

    def restart(self, seq: int, line: bytes = b"") -> None:
        """The board announced a reset: its counter starts again at ``seq``."""
        self._recent.clear()
        self._seen.clear()
        self._remember(seq, line)

    def _remember(self, seq: int, line: bytes) -> None:
        if len(self._recent) == self.WINDOW:
            self._seen.pop(self._recent[0], None)
        self._recent.append(seq)
        self._seen[seq] = line
        self.last = seq

    def check(self, seq: int, line: bytes = b"") -> tuple[str, int]:
        """``("ok"|"first"|"gap"|"duplicate"|"restart", lines_missed)``; records ``seq`` unless
        duplicate. ``line`` is the frame as received: a seen number with other bytes is a restart.
        """
        if self.last is None:
            self._remember(seq, line)
            return "first", 0
        if seq in self._seen:
            if self._seen[seq] == line:
                return "duplicate", 0
            self.restart(seq, line)
            return "restart", 0
        ahead = seq_distance(self.last, seq)
        if ahead == 1:
            self._remember(seq, line)
            return "ok", 0
        if ahead < SEQ_MODULUS // 2:
            self._remember(seq, line)
            return "gap", ahead - 1
        self.restart(seq, line)
        return "restart", 0


# ---------------------------------------------------------------------------------------------
# Status reporting


@dataclass
class Counters:
    """What happened on the link so far; ``rejects`` splits corrupt+garbage by reason."""

    lines_ok: int = 0
    events: int = 0
    corrupt: int = 0
    garbage: int = 0
    gaps: int = 0
    lost: int = 0
    duplicates: int = 0
    resets: int = 0
    reconnects: int = 0
    rejects: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StatusEvent:
    """A change in the link or board the user should know about.

    ``kind``: ``connected``, ``disconnected``, ``hello``, ``protocol_mismatch``, ``board_error``,
    ``gap``, ``reset``, ``silent`` (no line for longer than the heartbeat timeout) or ``alive``.
    """

    kind: str
    time: float
    detail: str = ""


@dataclass(frozen=True)
class DriverStatus:
    """A snapshot of the driver for the dashboard."""

    port: str
    connected: bool
    board: str | None
    firmware: str | None
    protocol: int | None
    last_line: float | None
    outage_since: float | None
    counters: Counters


# ---------------------------------------------------------------------------------------------
# The driver


def _default_open(port: str, baudrate: int, timeout: float) -> SerialLike:
    return serial.serial_for_url(port, baudrate=baudrate, timeout=timeout)


class DispenserDriver:
    """Reads the dispenser board and delivers :class:`DispenserEvent` objects.

    Events go to ``sink`` when one is given (called on the reader thread, so keep it quick),
    otherwise to a queue read with :meth:`get` or :meth:`events`. ``clock`` stamps every event
    and status change (injectable so tests and the game record agree on a time base).
    :meth:`feed` runs the same processing on bytes from anywhere, without a port.
    """

    def __init__(
        self,
        port: str,
        *,
        baudrate: int = 115200,
        sink: Callable[[DispenserEvent], None] | None = None,
        on_status: Callable[[StatusEvent], None] | None = None,
        classify: Classifier | None = None,
        clock: Callable[[], float] = time.time,
        backoff: tuple[float, float] = (0.05, 2.0),
        heartbeat_timeout: float = 3.0,
        read_timeout: float = 0.05,
        open_port: Callable[[str, int, float], SerialLike] = _default_open,
    ) -> None:
        if backoff[0] <= 0 or backoff[1] < backoff[0]:
            raise ValueError(f"backoff: expected (initial > 0, maximum >= initial), got {backoff}")
        self.port = port
        self._baudrate = baudrate
        self._queue: queue.SimpleQueue[DispenserEvent] = queue.SimpleQueue()
        self._sink = sink or self._queue.put
        self._on_status = on_status
        self._classify = classify
        self._clock = clock
        self._backoff = backoff
        self._heartbeat_timeout = heartbeat_timeout
        self._read_timeout = read_timeout
        self._open_port = open_port
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._serial: SerialLike | None = None
        self._splitter = LineSplitter()
        self._seq = SequenceTracker()
        self._counters = Counters()
        self._hello: Hello | None = None
        self._uptime: int | None = None  # the last heartbeat's uptime_ms, to see a reset
        self._last_line: float | None = None
        self._silent = False
        self._outage_since: float | None = None
        self._ever_connected = False

    # -- public API ----------------------------------------------------------------------------

    def start(self) -> DispenserDriver:
        """Start the reader thread (it keeps trying to open the port until :meth:`stop`)."""
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name=f"dispenser:{self.port}", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        """Stop reading and close the port; safe to call twice."""
        self._stop.set()
        port = self._serial
        if port is not None and hasattr(port, "cancel_read"):
            with contextlib.suppress(Exception):
                port.cancel_read()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def __enter__(self) -> DispenserDriver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def get(self, timeout: float | None = None) -> DispenserEvent | None:
        """The next queued event, or None after ``timeout`` seconds (only without a sink)."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def events(self, poll: float = 0.1) -> Iterator[DispenserEvent]:
        """Queued events until :meth:`stop` is called and the queue is drained."""
        while True:
            event = self.get(timeout=poll)
            if event is not None:
                yield event
            elif self._stop.is_set():
                return

    def status(self) -> DriverStatus:
        """A consistent snapshot of the link, the board's identity and the counters."""
        with self._lock:
            c = replace(self._counters, rejects=dict(self._counters.rejects))
            hello = self._hello
            return DriverStatus(
                port=self.port,
                connected=self._serial is not None,
                board=hello.board if hello else None,
                firmware=hello.firmware if hello else None,
                protocol=hello.protocol if hello else None,
                last_line=self._last_line,
                outage_since=self._outage_since,
                counters=c,
            )

    def feed(self, data: bytes) -> None:
        """Process bytes as if they had arrived on the port now."""
        now = self._clock()
        lines, overlong = self._splitter.feed(data)
        with self._lock:
            for _ in range(overlong):
                self._reject("too_long", garbage=True)
            for line in lines:
                self._line(line, now)

    # -- processing (called with the lock held) ------------------------------------------------

    def _report(self, kind: str, now: float, detail: str = "") -> None:
        if self._on_status is not None:
            self._on_status(StatusEvent(kind, now, detail))

    def _reject(self, reason: str, *, garbage: bool) -> None:
        c = self._counters
        if garbage:
            c.garbage += 1
        else:
            c.corrupt += 1
        c.rejects[reason] = c.rejects.get(reason, 0) + 1

    def _line(self, line: bytes, now: float) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line:
            return  # blank lines carry nothing; a bare "\r\n" is not noise worth counting
        start = line.rfind(b"$")
        if start > 0:
            # Noise glued to the front of a frame: typically the bytes an Arduino emits while it
            # resets as the port opens. Count it, then try the frame after it.
            self._reject("no_start", garbage=True)
            line = line[start:]
        try:
            frame = parse(line)
        except ProtocolError as exc:
            self._reject(exc.reason, garbage=exc.is_garbage)
            return
        self._last_line = now
        if self._silent:
            self._silent = False
            self._report("alive", now, "lines arriving again")
        self._frame(frame, now, line)

    def _frame(self, frame: Frame, now: float, line: bytes = b"") -> None:
        c = self._counters
        payload = frame.payload
        if isinstance(payload, Hello):
            if self._seq.last is not None:
                c.resets += 1
                self._report("reset", now, "board restarted (HELLO)")
            self._seq.restart(frame.seq, line)
            self._uptime = None
            c.lines_ok += 1
            self._hello = payload
            self._report(
                "hello", now, f"board {payload.board} firmware {payload.firmware} protocol {payload.protocol}"
            )
            if payload.protocol != PROTOCOL_VERSION:
                self._report(
                    "protocol_mismatch",
                    now,
                    f"board speaks protocol {payload.protocol}, this host {PROTOCOL_VERSION}",
                )
            return
        verdict, missed = self._seq.check(frame.seq, line)
        if verdict == "duplicate":
            c.duplicates += 1
            return
        if isinstance(payload, Heartbeat):
            # Uptime only grows (until it wraps after 49 days): a smaller one means a reset.
            before, self._uptime = self._uptime, payload.uptime_ms
            if verdict != "restart" and before is not None and 0 < before - payload.uptime_ms < 2**31:
                self._seq.restart(frame.seq, line)
                verdict = "restart"
        c.lines_ok += 1
        if verdict == "gap":
            c.gaps += 1
            c.lost += missed
            first = (frame.seq - missed) % SEQ_MODULUS
            self._report("gap", now, f"{missed} line(s) lost (seq {first}..{(frame.seq - 1) % SEQ_MODULUS})")
        elif verdict == "restart":
            c.resets += 1
            self._report(
                "reset",
                now,
                f"board restarted without a HELLO (sequence at {frame.seq}, seen before or behind)",
            )
        event = self._event(frame, now)
        if event is not None:
            c.events += 1
            self._sink(event)

    def _color(self, color: str, rgbc: tuple[int, int, int, int] | None) -> str:
        """The host's calibration, when there is one, overrides the board's own guess."""
        if self._classify is not None and rgbc is not None:
            return self._classify(rgbc)
        return color

    def _event(self, frame: Frame, now: float) -> DispenserEvent | None:
        p = frame.payload
        match p:
            case Row(color, rgbc):
                return DispenserEvent("row_refill", now, self._color(color, rgbc), seq=frame.seq, rgbc=rgbc)
            case Draw(color, rgbc):
                return DispenserEvent("draw", now, self._color(color, rgbc), seq=frame.seq, rgbc=rgbc)
            case Return(count, colors):
                return DispenserEvent("return", now, count=count, colors=colors, seq=frame.seq)
            case Button():
                return DispenserEvent("button", now, seq=frame.seq)
            case BoardError(code):
                self._report("board_error", now, code)
            case Heartbeat():
                pass  # liveness only: _line already recorded the time
        return None

    # -- the reader thread ---------------------------------------------------------------------

    def _connect(self) -> bool:
        try:
            port = self._open_port(self.port, self._baudrate, self._read_timeout)
        except (serial.SerialException, OSError, ValueError) as exc:
            now = self._clock()
            with self._lock:
                if self._outage_since is None:
                    self._outage_since = now
                    self._report("disconnected", now, f"cannot open {self.port}: {exc}")
            return False
        now = self._clock()
        with self._lock:
            self._serial = port
            self._splitter.reset()
            self._last_line = now
            self._silent = False
            if self._ever_connected:
                self._counters.reconnects += 1
            since = self._outage_since
            self._outage_since = None
            detail = f"{self.port}" + (f" after {now - since:.1f} s outage" if since is not None else "")
            self._report("connected", now, detail)
            self._ever_connected = True
        return True

    def _disconnect(self, reason: str, *, outage: bool = True) -> None:
        port = self._serial
        now = self._clock()
        with self._lock:
            self._serial = None
            self._outage_since = now if outage else None
            self._report("disconnected", now, reason)
        if port is not None:
            with contextlib.suppress(Exception):
                port.close()

    def _check_silence(self) -> None:
        now = self._clock()
        last = self._last_line
        if self._silent or last is None or now - last <= self._heartbeat_timeout:
            return  # the common case, decided without taking the lock
        with self._lock:
            last = self._last_line
            if not self._silent and last is not None and now - last > self._heartbeat_timeout:
                self._silent = True
                self._report("silent", now, f"no line for {now - last:.1f} s")

    def _run(self) -> None:
        delay = self._backoff[0]
        while not self._stop.is_set():
            if self._serial is None:
                if not self._connect():
                    self._stop.wait(delay)
                    delay = min(delay * 2, self._backoff[1])
                    continue
                delay = self._backoff[0]
            port = self._serial
            assert port is not None
            try:
                data = port.read(port.in_waiting or 1)
            except (serial.SerialException, OSError, TypeError, AttributeError) as exc:
                # pyserial raises TypeError/AttributeError when the port is closed under a read.
                if not self._stop.is_set():
                    self._disconnect(f"read failed: {exc}")
                continue
            if data:
                self.feed(data)
            self._check_silence()
        if self._serial is not None:
            self._disconnect("driver stopped", outage=False)
