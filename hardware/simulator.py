"""A virtual dispenser board: the real protocol over a pseudo-terminal or a localhost socket.

So the referee, the driver's reconnect logic and the benchmark run end to end without
hardware. :class:`VirtualBoard` is the board's logic (sequence numbers, plausible sensor
readings, injected faults) and produces bytes; a link carries them: :class:`PtyLink` (the
driver opens a stable symlink to the pty, as it would ``/dev/ttyACM0``) or :class:`TcpLink`
(the driver opens ``socket://127.0.0.1:PORT``). :class:`Simulator` ties the two together and
adds unplugging, re-plugging and resets. In-process users can take bytes from the board
directly and pass them to :meth:`hardware.driver.DispenserDriver.feed`.
"""

from __future__ import annotations

import contextlib
import os
import random
import select
import socket
import tempfile
import termios
import tty
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from hardware.protocol import (
    MAX_RETURN,
    PROTOCOL_VERSION,
    SEQ_MODULUS,
    Button,
    Draw,
    Frame,
    Heartbeat,
    Hello,
    Payload,
    Return,
    Row,
    encode,
)
from referee.gizmos.cards import COLORS

#: Mean raw TCS34725 readings (R, G, B, Clear) of each marble color in the simulated chute.
SIM_RGBC: dict[str, tuple[float, float, float, float]] = {
    "red": (900.0, 260.0, 240.0, 1450.0),
    "blue": (220.0, 420.0, 880.0, 1500.0),
    "black": (110.0, 115.0, 110.0, 340.0),
    "yellow": (1400.0, 1150.0, 380.0, 2900.0),
}

FIRMWARE = "sim-1.0.0"


def sample_rgbc(color: str, rng: random.Random) -> tuple[int, int, int, int]:
    """A plausible noisy sensor reading of a ``color`` marble (lighting and channel noise)."""
    light = rng.gauss(1.0, 0.06)
    r, g, b, c = (max(0, min(65535, round(m * light * rng.gauss(1.0, 0.04)))) for m in SIM_RGBC[color])
    return (r, g, b, c)


@dataclass
class Faults:
    """Per-line fault probabilities (0..1) applied as the board sends."""

    garbage: float = 0.0  # noise bytes written before the line
    drop: float = 0.0  # line never arrives
    corrupt: float = 0.0  # one byte of the line flipped
    duplicate: float = 0.0  # line arrives twice

    def __post_init__(self) -> None:
        for name in ("garbage", "drop", "corrupt", "duplicate"):
            p = getattr(self, name)
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"fault {name}: probability must be within 0..1, got {p}")

    @classmethod
    def parse(cls, spec: str) -> Faults:
        """``"drop=0.01,corrupt=0.02"`` -> Faults; names the bad part of a bad spec."""
        values: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in spec.split(","))):
            name, sep, value = part.partition("=")
            if not sep or name not in ("garbage", "drop", "corrupt", "duplicate"):
                raise ValueError(
                    f"fault {part!r}: expected NAME=P with NAME one of garbage, drop, corrupt, duplicate"
                )
            try:
                values[name] = float(value)
            except ValueError:
                raise ValueError(f"fault {name}: {value!r} is not a number") from None
        return cls(**values)


@dataclass
class VirtualBoard:
    """The board's side of the protocol: numbers lines, invents readings, injects faults.

    ``sent`` records every frame the board meant to send, in order, whatever happened to it
    on the way (the ground truth tests compare the driver's output with).
    """

    board: str = "sim-dispenser"
    seed: int = 0
    faults: Faults = field(default_factory=Faults)
    record: bool = True
    seq: int = 0
    uptime_ms: int = 0
    sent: list[Frame] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def frame(self, payload: Payload) -> tuple[Frame, bytes]:
        """Number ``payload``, and the bytes that reach the wire after faults."""
        frame = Frame(self.seq, payload)
        self.seq = (self.seq + 1) % SEQ_MODULUS
        if self.record:
            self.sent.append(frame)
        return frame, self._damage(encode(frame))

    def _damage(self, line: bytes) -> bytes:
        f, rng = self.faults, self.rng
        if f.drop and rng.random() < f.drop:
            return b""
        if f.corrupt and rng.random() < f.corrupt:
            i = rng.randrange(1, len(line) - 1)  # keep '$' and '\n': damage this line only
            bad = line[i] ^ (1 << rng.randrange(7))
            line = line[:i] + bytes([bad if bad not in (0x00, 0x0A) else 0x3F]) + line[i + 1 :]
        if f.duplicate and rng.random() < f.duplicate:
            line += line
        if f.garbage and rng.random() < f.garbage:
            line = self.noise() + line
        return line

    def noise(self) -> bytes:
        """Random bytes ending in a newline, like a board booting or a loose connector."""
        return bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(1, 24))) + b"\n"

    def hello(self) -> bytes:
        """Restart the counter and announce the board, as firmware does after a reset."""
        self.seq = 0
        self.uptime_ms = 0
        return self.frame(Hello(self.board, FIRMWARE, PROTOCOL_VERSION))[1]

    def tick(self, elapsed_ms: int = 1000) -> Heartbeat:
        """Advance the uptime; the heartbeat payload the board sends once a second."""
        self.uptime_ms = (self.uptime_ms + elapsed_ms) % 2**32
        return Heartbeat(self.uptime_ms)

    def random_payload(self) -> Payload:
        """A plausible game event: mostly Row refills, some returns, draws and button presses."""
        rng = self.rng
        roll = rng.random()
        color = rng.choice(COLORS)
        if roll < 0.55:
            return Row(color, sample_rgbc(color, rng))
        if roll < 0.75:
            count = rng.randint(1, 4)
            sensed = tuple(rng.choice(COLORS) for _ in range(rng.randint(0, count)))
            return Return(min(count, MAX_RETURN), sensed)
        if roll < 0.9:
            return Draw(color)
        return Button()


class Link(Protocol):
    """Somewhere a board's bytes go: opened (returns what the driver should open), written, closed."""

    def open(self) -> str: ...

    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class PtyLink:
    """A pseudo-terminal with a stable symlink to its slave side.

    Closing it is "unplugging": the driver's reads fail and the symlink disappears; opening
    again creates a new pty behind the same symlink, as udev does for a re-plugged board.
    """

    #: How long a write waits for a slow reader before treating the port as unattended.
    STALL_S = 0.5

    def __init__(self, link: Path | None = None) -> None:
        self._tmpdir: str | None = None
        if link is None:
            self._tmpdir = tempfile.mkdtemp(prefix="gizmos-dispenser-")
            link = Path(self._tmpdir) / "dispenser"
        self.link = Path(link)
        self._master: int | None = None
        self._slave: int | None = None
        self.tty: str | None = None

    def open(self) -> str:
        if self._master is None:
            self._master, self._slave = os.openpty()
            os.set_blocking(self._master, False)
            tty.setraw(self._slave)  # no echo, no newline translation: bytes pass as they are
            self.tty = os.ttyname(self._slave)
            tmp = self.link.with_name(self.link.name + ".new")
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            os.symlink(self.tty, tmp)
            os.replace(tmp, self.link)
        return str(self.link)

    def write(self, data: bytes) -> None:
        if self._master is None or self._slave is None:
            return  # unplugged: the bytes go nowhere, as on a real board
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._master, view) :]
            except BlockingIOError:
                # The pty's buffer is full. A reader that is merely slower than us catches up
                # within the wait; if nobody is reading, discard what is queued, as a UART with
                # no host attached would have.
                _, writable, _ = select.select([], [self._master], [], self.STALL_S)
                if not writable:
                    termios.tcflush(self._slave, termios.TCIFLUSH)

    def close(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.link.unlink()
        for fd in (self._master, self._slave):
            if fd is not None:
                os.close(fd)
        self._master = self._slave = None

    def remove(self) -> None:
        """Close and delete the temporary directory, if this link made one."""
        self.close()
        if self._tmpdir:
            with contextlib.suppress(OSError):
                os.rmdir(self._tmpdir)


class TcpLink:
    """A localhost TCP server the driver reaches as ``socket://127.0.0.1:PORT``.

    The first write waits (up to ``accept_timeout``) for the driver to connect. When the driver
    leaves (or the link is closed), later bytes go nowhere, as from a board with no host, until
    the next driver connects: that is how the driver's reconnect is exercised, and why a
    listener that quits does not end the simulator with ``Broken pipe``.
    """

    def __init__(self, port: int = 0, accept_timeout: float = 10.0) -> None:
        self._server = socket.create_server(("127.0.0.1", port))
        self._accept_timeout = accept_timeout
        self.port = self._server.getsockname()[1]
        self._client: socket.socket | None = None
        self._had_client = False
        self.departures = 0

    def open(self) -> str:
        return f"socket://127.0.0.1:{self.port}"

    def _accept(self) -> socket.socket | None:
        wait = 0.0 if self._had_client else self._accept_timeout
        ready, _, _ = select.select([self._server], [], [], wait)
        if not ready:
            if self._had_client:
                return None  # nobody listening now: the bytes are lost, as on a real UART
            raise ConnectionError(f"no driver connected to {self.open()}")
        client, _ = self._server.accept()
        self._had_client = True
        return client

    def write(self, data: bytes) -> None:
        if self._client is None:
            self._client = self._accept()
            if self._client is None:
                return
        try:
            self._client.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            self.departures += 1
            self.close()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def remove(self) -> None:
        """Close the client and stop listening."""
        self.close()
        self._server.close()


class Simulator:
    """A virtual board on a link, with the faults a USB cable and a reset button can produce."""

    def __init__(self, link: PtyLink | TcpLink | None = None, board: VirtualBoard | None = None) -> None:
        self.link = link if link is not None else PtyLink()
        self.board = board if board is not None else VirtualBoard()
        self.plugged = False

    def plug(self) -> str:
        """Connect (or re-connect) the board without resetting it; returns the port to open."""
        self.plugged = True
        return self.link.open()

    def unplug(self) -> None:
        """Disconnect: the driver sees its port fail; the board keeps counting."""
        self.plugged = False
        self.link.close()

    def send(self, payload: Payload) -> Frame:
        """Send one event; lost silently while unplugged, like a board with no host."""
        frame, data = self.board.frame(payload)
        if self.plugged:
            self.link.write(data)
        return frame

    def send_random(self, n: int) -> list[Frame]:
        """Send ``n`` random game events."""
        return [self.send(self.board.random_payload()) for _ in range(n)]

    def write_raw(self, data: bytes) -> None:
        """Put arbitrary bytes on the wire (noise tests)."""
        if self.plugged:
            self.link.write(data)

    def heartbeat(self) -> Frame:
        """Send one heartbeat line."""
        return self.send(self.board.tick())

    def reset(self) -> None:
        """The board reboots: some boot-loader noise, then HELLO with the counter at 0."""
        self.write_raw(self.board.noise()[:-1])  # noise glued to the HELLO, as after a real reset
        data = self.board.hello()
        if self.plugged:
            self.link.write(data)

    def close(self) -> None:
        """Unplug and release the link's resources."""
        self.plugged = False
        self.link.remove()

    def __enter__(self) -> Simulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
