"""Wire protocol of the dispenser board: one ASCII line per message, framed and checksummed.

A line is ``$<seq>,<TYPE>[,<field>...]*<CRC>`` followed by ``\\n`` (``\\r\\n`` is accepted).
``seq`` is a decimal counter 0..65535 that wraps, so the host can see lost and repeated
lines; ``CRC`` is CRC-16/CCITT-FALSE of the bytes between ``$`` and ``*`` as four upper-case
hex digits, so the host can see corrupted ones. The full specification is docs/hardware.md;
hardware/test_vectors.json pins it down for both this module and the firmware's framing.h.

Parsing never raises anything but :class:`ProtocolError`, whose ``reason`` is a short stable
code (the driver counts rejects per reason) and whose message says what was wrong.
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass

from referee.gizmos.cards import COLORS

#: Protocol version announced in HELLO; bump when the grammar changes incompatibly.
PROTOCOL_VERSION = 1
#: Longest line accepted, terminator excluded. The firmware's buffer is sized to match.
MAX_LINE = 120
#: Sequence numbers wrap modulo this.
SEQ_MODULUS = 65536
#: Color words allowed on the wire.
WIRE_COLORS: tuple[str, ...] = (*COLORS, "unknown")
#: Largest raw color-sensor channel value (TCS34725 counts are 16-bit).
MAX_CHANNEL = 65535
#: Most marbles one RET line may report (a whole dispenser holds 52-60).
MAX_RETURN = 60
#: Rejection reasons that mean "this was not a frame at all" rather than "a damaged frame".
GARBAGE_REASONS = frozenset({"empty", "no_start", "non_ascii", "too_long"})


class ProtocolError(ValueError):
    """A line that is not a valid frame; ``reason`` is a stable code, the message says why."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason

    @property
    def is_garbage(self) -> bool:
        """True when the line did not even look like a frame (noise, not corruption)."""
        return self.reason in GARBAGE_REASONS


@dataclass(frozen=True, slots=True)
class Row:
    """A marble rolled into the Energy Row past the color sensor."""

    color: str
    rgbc: tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class Draw:
    """A marble was drawn blind from the dispenser; ``rgbc`` when the build senses it."""

    color: str
    rgbc: tuple[int, int, int, int] | None = None


@dataclass(frozen=True, slots=True)
class Return:
    """``count`` marbles went back into the top; ``colors`` lists those that were sensed."""

    count: int
    colors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Button:
    """The turn button was pressed."""


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """The board is alive; ``uptime_ms`` since its last reset (wraps at 2**32)."""

    uptime_ms: int


@dataclass(frozen=True, slots=True)
class Hello:
    """Sent once after every reset: who the board is and what it runs."""

    board: str
    firmware: str
    protocol: int


@dataclass(frozen=True, slots=True)
class BoardError:
    """The board reports a fault of its own (e.g. ``no_color_sensor``)."""

    code: str


Payload = Row | Draw | Return | Button | Heartbeat | Hello | BoardError


@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded line: its sequence number and what it says."""

    seq: int
    payload: Payload


# ---------------------------------------------------------------------------------------------
# CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor): the check value of
# b"123456789" is 0x29B1. ``binascii.crc_hqx`` is exactly this CRC with the initial value given
# (the XMODEM polynomial, unreflected), computed in C: the driver parses tens of thousands of
# lines a second. tests/test_hardware_protocol.py checks it against a bitwise reference.


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE of ``data``; the same function as ``framing_crc16`` in framing.h."""
    return binascii.crc_hqx(data, 0xFFFF)


# ---------------------------------------------------------------------------------------------
# Encoding


def _fields(payload: Payload) -> tuple[str, list[str]]:
    """Wire type and fields of a payload."""
    match payload:
        case Row(color, rgbc):
            return "ROW", [color, *map(str, rgbc)]
        case Draw(color, rgbc):
            return "DRAW", [color, *map(str, rgbc or ())]
        case Return(count, colors):
            return "RET", [str(count), *colors]
        case Button():
            return "BTN", []
        case Heartbeat(uptime_ms):
            return "HB", [str(uptime_ms)]
        case Hello(board, firmware, protocol):
            return "HELLO", [board, firmware, str(protocol)]
        case BoardError(code):
            return "ERR", [code]
    raise TypeError(f"not a dispenser payload: {payload!r}")


def encode(frame: Frame) -> bytes:
    """The wire line for ``frame`` including its ``\\n``; checks it would parse back."""
    kind, fields = _fields(frame.payload)
    text = ",".join([str(frame.seq), kind, *fields])
    if not text.isascii():
        raise ProtocolError("non_ascii", f"cannot send non-ASCII text {text!r}")
    body = text.encode("ascii")
    line = b"$" + body + b"*" + b"%04X" % crc16(body)
    parse(line)  # a frame we could not read back is a bug in the caller, not a line to send
    return line + b"\n"


# ---------------------------------------------------------------------------------------------
# Parsing


def _uint(text: str, what: str, maximum: int) -> int:
    if not text.isdigit() or not text.isascii() or (len(text) > 1 and text[0] == "0"):
        raise ProtocolError("bad_number", f"{what}: expected a decimal integer, got {text!r}")
    value = int(text)
    if value > maximum:
        raise ProtocolError("bad_number", f"{what}: {value} is above the maximum {maximum}")
    return value


def _color(text: str, what: str) -> str:
    if text not in WIRE_COLORS:
        raise ProtocolError("bad_color", f"{what}: expected one of {WIRE_COLORS}, got {text!r}")
    return text


def _rgbc(fields: list[str], what: str) -> tuple[int, int, int, int]:
    r, g, b, c = (_uint(f, f"{what}.{ch}", MAX_CHANNEL) for f, ch in zip(fields, "rgbc", strict=True))
    return (r, g, b, c)


def _word(text: str, what: str) -> str:
    """Identity strings: printable, no separators, not empty."""
    ok = text and all(ch.isalnum() or ch in "-_." for ch in text)
    if not ok:
        raise ProtocolError("bad_field", f"{what}: expected letters, digits, '-', '_' or '.', got {text!r}")
    return text


def _arity(kind: str, fields: list[str], allowed: tuple[int, ...]) -> None:
    if len(fields) not in allowed:
        want = " or ".join(map(str, allowed))
        raise ProtocolError("bad_arity", f"{kind}: expected {want} fields, got {len(fields)}")


def _decode_payload(kind: str, f: list[str]) -> Payload:
    match kind:
        case "ROW":
            _arity(kind, f, (5,))
            return Row(_color(f[0], "ROW.color"), _rgbc(f[1:], "ROW"))
        case "DRAW":
            _arity(kind, f, (1, 5))
            return Draw(_color(f[0], "DRAW.color"), _rgbc(f[1:], "DRAW") if len(f) == 5 else None)
        case "RET":
            if not f:
                raise ProtocolError("bad_arity", "RET: expected a count")
            count = _uint(f[0], "RET.count", MAX_RETURN)
            if len(f) - 1 > count:
                raise ProtocolError("bad_arity", f"RET: {len(f) - 1} colours for {count} marbles")
            return Return(count, tuple(_color(c, "RET.color") for c in f[1:]))
        case "BTN":
            _arity(kind, f, (0,))
            return Button()
        case "HB":
            _arity(kind, f, (1,))
            return Heartbeat(_uint(f[0], "HB.uptime_ms", 2**32 - 1))
        case "HELLO":
            _arity(kind, f, (3,))
            return Hello(
                _word(f[0], "HELLO.board"), _word(f[1], "HELLO.firmware"), _uint(f[2], "HELLO.protocol", 999)
            )
        case "ERR":
            _arity(kind, f, (1,))
            return BoardError(_word(f[0], "ERR.code"))
    raise ProtocolError("unknown_type", f"unknown message type {kind!r}")


def parse(line: bytes) -> Frame:
    """Decode one line (terminator optional); raises :class:`ProtocolError` naming the problem."""
    if line.endswith(b"\n"):
        line = line[:-1]
    if line.endswith(b"\r"):
        line = line[:-1]
    if not line:
        raise ProtocolError("empty", "empty line")
    if len(line) > MAX_LINE:
        raise ProtocolError("too_long", f"line of {len(line)} bytes exceeds the maximum {MAX_LINE}")
    if not line.isascii() or not all(32 <= b < 127 for b in line):
        raise ProtocolError("non_ascii", "line contains bytes that are not printable ASCII")
    if line[0] != 0x24:  # '$'
        raise ProtocolError("no_start", "line does not start with '$'")
    star = line.rfind(b"*")
    if star < 0:
        raise ProtocolError("no_checksum", "no '*' before a checksum")
    body, crc_text = line[1:star], line[star + 1 :]
    if len(crc_text) != 4 or any(ch not in b"0123456789ABCDEF" for ch in crc_text):
        raise ProtocolError("bad_checksum", f"checksum must be 4 upper-case hex digits, got {crc_text!r}")
    expected = crc16(body)
    if int(crc_text, 16) != expected:
        raise ProtocolError(
            "checksum_mismatch",
            f"checksum {crc_text.decode()} does not match the line (expected {expected:04X})",
        )
    text = body.decode("ascii")
    if "$" in text or "*" in text:
        raise ProtocolError("bad_field", "'$' or '*' inside a frame")
    parts = text.split(",")
    if len(parts) < 2:
        raise ProtocolError("bad_arity", "expected at least a sequence number and a type")
    seq = _uint(parts[0], "seq", SEQ_MODULUS - 1)
    if any(p == "" for p in parts[1:]):
        raise ProtocolError("bad_field", "empty field")
    return Frame(seq, _decode_payload(parts[1], parts[2:]))


def describe(frame: Frame) -> dict[str, object]:
    """A JSON-ready form of a frame, as the test vectors and ``listen --json`` write it."""
    kind, _ = _fields(frame.payload)
    out: dict[str, object] = {"seq": frame.seq, "type": kind}
    for name in frame.payload.__slots__:
        value = getattr(frame.payload, name)
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def seq_distance(previous: int, current: int) -> int:
    """How far ``current`` is ahead of ``previous`` modulo the wrap: 1 is the next line."""
    return (current - previous) % SEQ_MODULUS
