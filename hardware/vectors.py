"""The shared protocol test vectors: loading them and holding the Python codec to them.

One file (hardware/test_vectors.json) pins the wire format down for both ends, so the parser
here and the firmware's framing.h cannot drift apart unnoticed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hardware.protocol import ProtocolError, crc16, describe, encode, parse

#: Where the vectors live in the source tree.
VECTORS_PATH = Path(__file__).with_name("test_vectors.json")


class VectorsError(ValueError):
    """The vectors file itself is unreadable or malformed; the message names the entry."""


@dataclass(frozen=True, slots=True)
class Vectors:
    """Parsed vectors: valid entries (line + meaning) and invalid ones (raw bytes + reason)."""

    check_input: bytes
    check_crc: int
    valid: tuple[dict[str, Any], ...]
    invalid: tuple[tuple[bytes, str, str], ...]


def load_vectors(path: Path = VECTORS_PATH) -> Vectors:
    """Read the vectors file, raising :class:`VectorsError` with the offending entry's index."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        crc = doc["crc"]
        check = (crc["check_input"].encode("ascii"), int(crc["check"], 16))
        valid = tuple(doc["valid"])
        for i, v in enumerate(valid):
            if not isinstance(v.get("line"), str) or not isinstance(v.get("decoded"), dict):
                raise VectorsError(f"{path}: valid[{i}]: needs 'line' (string) and 'decoded' (object)")
        invalid = []
        for v in doc["invalid"]:
            raw = bytes.fromhex(v["line_hex"]) if "line_hex" in v else v["line"].encode("ascii")
            invalid.append((raw, v["reason"], v.get("note", "")))
    except VectorsError:
        raise
    except OSError as exc:
        raise VectorsError(f"{path}: cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise VectorsError(f"{path}: not valid JSON: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise VectorsError(f"{path}: malformed vectors file: {exc!r}") from None
    return Vectors(check[0], check[1], valid, tuple(invalid))


def check_python(vectors: Vectors) -> list[str]:
    """Every way the Python codec disagrees with the vectors (empty when it agrees)."""
    failures: list[str] = []
    if crc16(vectors.check_input) != vectors.check_crc:
        failures.append(
            f"crc16({vectors.check_input!r}) = {crc16(vectors.check_input):04X}, "
            f"expected {vectors.check_crc:04X}"
        )
    for i, v in enumerate(vectors.valid):
        line = v["line"].encode("ascii")
        try:
            frame = parse(line)
        except ProtocolError as exc:
            failures.append(f"valid[{i}] {v['line']!r}: rejected ({exc.reason}: {exc})")
            continue
        got = describe(frame)
        if got != v["decoded"]:
            failures.append(f"valid[{i}] {v['line']!r}: decoded as {got}, expected {v['decoded']}")
        if encode(frame) != line + b"\n":
            failures.append(f"valid[{i}] {v['line']!r}: re-encodes as {encode(frame)!r}")
    for i, (raw, reason, note) in enumerate(vectors.invalid):
        try:
            parse(raw)
        except ProtocolError as exc:
            if exc.reason != reason:
                failures.append(f"invalid[{i}] {raw!r} ({note}): reason {exc.reason!r}, expected {reason!r}")
        else:
            failures.append(f"invalid[{i}] {raw!r} ({note}): accepted, expected {reason!r}")
    return failures
