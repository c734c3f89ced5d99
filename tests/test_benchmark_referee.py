"""benchmarks/referee.py: the played steps counted apart from the attribution are told by kind."""

from __future__ import annotations

from collections import Counter

import pytest

from benchmarks.referee import Result, report


def test_the_steps_explained_otherwise_are_printed_by_kind(capsys: pytest.CaptureFixture[str]) -> None:
    res = Result(steps_true=5, steps_matched=2, steps_right_turn=2, unaligned=Counter(bottom=2, use=1))
    res.turn_seconds = res.search_seconds = res.search_cpu = res.call_seconds = [0.001]
    report(res, "camera only")
    out = capsys.readouterr().out
    assert "2 of 2 accepted as played (100.0%); 3 of 5 played steps were explained otherwise" in out
    assert "explained otherwise or not at all, by kind: bottom 2, use 1" in out
