"""benchmarks/identity.py: ``--conditions`` limits a check to those saved conditions."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import identity

SAVED = [
    "own 9000000\t{}",
    "own 9000000 memory\t{}",
    "deck 9200000\t{}",
    "deck 9200000 memory\t{}",
    "deck 9200002\t{}",
    "deck 9200002 memory\t{}",
]


def test_check_limits_to_the_conditions_asked_for() -> None:
    heads, lines = identity.saved_conditions(SAVED, ["deck"])
    assert heads == ["deck"]
    assert lines == SAVED[2:]


def test_check_defaults_to_every_saved_condition() -> None:
    heads, lines = identity.saved_conditions(SAVED, None)
    assert heads == ["own", "deck"]
    assert lines == SAVED


def test_a_condition_the_file_does_not_hold_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "saved.jsonl"
    saved.write_text("\n".join(SAVED) + "\n")
    assert identity.main(["--check", str(saved), "--conditions", "style"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {saved}: condition 'style' is not in the saved file (it holds own, deck)"]
