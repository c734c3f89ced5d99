"""The firmware's framing.h, compiled on the host and held to the shared test vectors."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hardware.protocol import MAX_LINE, BoardError, Frame, encode
from hardware.vectors import load_vectors

FIRMWARE = Path(__file__).resolve().parents[1] / "hardware" / "firmware"
CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if CC is None:
        pytest.skip("no C compiler (cc, gcc or clang) on PATH: cannot build the framing.h test harness")
    exe = tmp_path_factory.mktemp("fw") / "test_framing"
    subprocess.run(
        [
            CC,
            "-std=c99",
            "-D_POSIX_C_SOURCE=200809L",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            f"-I{FIRMWARE}",
            "-o",
            str(exe),
            str(FIRMWARE / "test_framing.c"),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return exe


def run(harness: Path, rows: list[list[str]]) -> list[str]:
    stdin = "".join("\t".join(row) + "\n" for row in rows)
    out = subprocess.run([str(harness)], input=stdin, capture_output=True, text=True, check=True, timeout=30)
    return out.stdout.splitlines()


def test_framing_h_produces_every_vector_line(harness: Path) -> None:
    vectors = load_vectors()
    rows = [[str(v["seq"]), v["type"], *v["fields"]] for v in vectors.valid]
    out = run(harness, rows)
    assert out[0] == f"CHECK {vectors.check_crc:04X}"
    assert out[1] == "OVERFLOW ok"
    assert out[2:] == [v["line"] for v in vectors.valid]


def test_framing_h_line_limit_matches_the_parser(harness: Path) -> None:
    longest = encode(Frame(1, BoardError("a" * 108))).decode().rstrip("\n")
    assert len(longest) == MAX_LINE
    out = run(harness, [["1", "ERR", "a" * 108], ["1", "ERR", "a" * 109]])
    assert out[2:] == [longest, "OVERFLOW"]
