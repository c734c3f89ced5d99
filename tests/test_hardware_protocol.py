"""The dispenser line protocol: shared vectors, CRC, and hypothesis fuzzing of the parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardware.protocol import (
    MAX_LINE,
    WIRE_COLORS,
    BoardError,
    Button,
    Draw,
    Frame,
    Heartbeat,
    Hello,
    Payload,
    ProtocolError,
    Return,
    Row,
    crc16,
    encode,
    parse,
)
from hardware.vectors import VECTORS_PATH, VectorsError, check_python, load_vectors

channel = st.integers(0, 65535)
rgbc = st.tuples(channel, channel, channel, channel)
color = st.sampled_from(WIRE_COLORS)
word = st.text(st.sampled_from("abcXYZ019-_."), min_size=1, max_size=20)
payloads = st.one_of(
    st.builds(Row, color, rgbc),
    st.builds(Draw, color, st.none() | rgbc),
    st.integers(0, 60).flatmap(
        lambda n: st.builds(Return, st.just(n), st.lists(color, max_size=min(n, 8)).map(tuple))
    ),
    st.just(Button()),
    st.builds(Heartbeat, st.integers(0, 2**32 - 1)),
    st.builds(Hello, word, word, st.integers(0, 999)),
    st.builds(BoardError, word),
)
frames = st.builds(Frame, st.integers(0, 65535), payloads)


def test_shared_vectors_hold_for_the_python_codec() -> None:
    vectors = load_vectors()
    assert len(vectors.valid) >= 10 and len(vectors.invalid) >= 20
    assert check_python(vectors) == []


def test_vector_check_reports_a_wrong_vector(tmp_path: Path) -> None:
    doc = json.loads(VECTORS_PATH.read_text())
    doc["valid"][2]["decoded"]["color"] = "blue"
    doc["invalid"][0]["reason"] = "no_start"
    bad = tmp_path / "vectors.json"
    bad.write_text(json.dumps(doc))
    failures = check_python(load_vectors(bad))
    assert len(failures) == 2
    assert "valid[2]" in failures[0] and "invalid[0]" in failures[1]


def test_unreadable_vectors_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(VectorsError, match="cannot read"):
        load_vectors(tmp_path / "missing.json")
    (tmp_path / "v.json").write_text("{")
    with pytest.raises(VectorsError, match="not valid JSON"):
        load_vectors(tmp_path / "v.json")


def _crc_bitwise(data: bytes) -> int:
    """CRC-16/CCITT-FALSE bit by bit, as framing.h computes it (the reference for crc_hqx)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


@settings(max_examples=300)
@given(st.binary(max_size=130))
def test_crc_is_ccitt_false(data: bytes) -> None:
    assert crc16(b"123456789") == 0x29B1
    assert crc16(b"") == 0xFFFF
    assert crc16(data) == _crc_bitwise(data)


def test_line_length_limit_is_inclusive() -> None:
    longest = encode(Frame(1, BoardError("a" * 108)))
    assert len(longest) == MAX_LINE + 1  # plus the newline
    assert parse(longest).payload == BoardError("a" * 108)
    with pytest.raises(ProtocolError) as err:
        encode(Frame(1, BoardError("a" * 109)))
    assert err.value.reason == "too_long"


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (Hello("a b", "1", 1), "bad_field"),
        (Hello("a,b", "1", 1), "bad_arity"),
        (Row("green", (1, 2, 3, 4)), "bad_color"),
        (Return(1, ("red", "blue")), "bad_arity"),
        (BoardError("ü"), "non_ascii"),
    ],
)
def test_encode_refuses_what_it_could_not_read_back(payload: Payload, reason: str) -> None:
    with pytest.raises(ProtocolError) as err:
        encode(Frame(0, payload))
    assert err.value.reason == reason


def test_crlf_is_accepted_and_error_messages_name_the_field() -> None:
    line = encode(Frame(3, Button()))
    assert parse(line[:-1] + b"\r\n") == Frame(3, Button())
    with pytest.raises(ProtocolError, match=r"ROW\.g"):
        body = b"3,ROW,red,1,x,3,4"
        parse(b"$" + body + b"*%04X" % crc16(body))


@given(frames)
def test_every_valid_frame_round_trips(frame: Frame) -> None:
    line = encode(frame)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert parse(line) == frame


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_no_byte_sequence_crashes_the_parser(data: bytes) -> None:
    try:
        frame = parse(data)
    except ProtocolError as exc:
        assert exc.reason and str(exc)
    else:
        # Anything accepted is canonical: it re-encodes to exactly the input.
        assert encode(frame) == data.rstrip(b"\n").removesuffix(b"\r") + b"\n"


@given(frames, st.data())
def test_any_single_byte_error_is_detected(frame: Frame, data: st.DataObject) -> None:
    line = bytearray(encode(frame)[:-1])
    i = data.draw(st.integers(0, len(line) - 1))
    replacement = data.draw(st.integers(0, 255).filter(lambda b: b != line[i]))
    line[i] = replacement
    with pytest.raises(ProtocolError):
        parse(bytes(line))


@given(st.builds(Frame, st.integers(0, 65535), payloads), st.text(max_size=40))
def test_framed_nonsense_is_rejected_not_guessed(frame: Frame, junk: str) -> None:
    body = f"{frame.seq},{junk}".encode("utf-8", "replace")
    line = b"$" + body + b"*%04X" % crc16(body)
    try:
        parsed = parse(line)
    except ProtocolError:
        return
    assert encode(parsed)[:-1] == line
