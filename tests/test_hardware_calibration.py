"""Color calibration: classification with rejection, files, and the guided walk-through."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from hardware.calibration import CalibrationAborted, ColorCalibration, ColorCalibrationError, walk_through
from hardware.simulator import sample_rgbc
from referee.gizmos.cards import COLORS


def fitted(seed: int = 1, n: int = 6) -> ColorCalibration:
    rng = random.Random(seed)
    return ColorCalibration.from_samples({c: [sample_rgbc(c, rng) for _ in range(n)] for c in COLORS})


def test_classifies_fresh_readings_of_each_color() -> None:
    cal = fitted()
    rng = random.Random(99)
    for color in COLORS:
        got = [cal.classify(sample_rgbc(color, rng)) for _ in range(200)]
        assert got.count(color) >= 195, color
        assert set(got) <= {color, "unknown"}  # never the wrong color
    assert cal.warnings() == []


@pytest.mark.parametrize(
    "rgbc", [(0, 0, 0, 0), (500, 500, 500, 1200), (0, 0, 3000, 3000), (10, 900, 10, 1000)]
)
def test_readings_far_from_every_color_are_unknown(rgbc: tuple[int, int, int, int]) -> None:
    assert fitted().classify(rgbc) == "unknown"


def test_a_reading_between_two_overlapping_colors_is_unknown() -> None:
    cal = ColorCalibration.from_samples(
        {
            "red": [(600, 200, 200, 1000), (610, 200, 200, 1000)],
            "yellow": [(640, 250, 150, 1000), (650, 250, 150, 1000)],
            "blue": [(100, 200, 700, 1000), (100, 210, 700, 1000)],
            "black": [(100, 100, 100, 300), (100, 105, 100, 300)],
        }
    )
    assert cal.classify((605, 200, 200, 1000)) == "red"
    assert cal.classify((625, 225, 175, 1000)) == "unknown"
    assert any("overlap" in w for w in cal.warnings())


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    cal = fitted()
    path = tmp_path / "cal.json"
    cal.save(path)
    again = ColorCalibration.load(path)
    assert again.samples == cal.samples and again.models == cal.models


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read calibration"),
        ("{not json", "not valid JSON"),
        ('{"format": "something-else"}', "not a dispenser calibration"),
        ('{"format": "gizmos-dispenser-calibration", "version": 7}', "version 7"),
        (
            '{"format": "gizmos-dispenser-calibration", "version": 1, "samples": {"red": []}}',
            "no samples for blue",
        ),
    ],
)
def test_bad_files_give_errors_naming_the_problem(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "cal.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ColorCalibrationError, match=message) as err:
        ColorCalibration.load(path)
    assert str(path) in str(err.value)


def test_a_bad_reading_is_named_by_color_and_index(tmp_path: Path) -> None:
    doc = fitted().to_json()
    doc["samples"]["black"][3] = [1, 2, 3, 70000]
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ColorCalibrationError, match=r"black\[3\]: expected \[r, g, b, c\] integers"):
        ColorCalibration.load(path)


def test_too_few_usable_readings_is_refused() -> None:
    samples = {c: [(100, 100, 100, 100)] * 3 for c in COLORS}
    samples["blue"] = [(0, 0, 0, 0), (0, 0, 0, 5), (100, 100, 400, 500)]
    with pytest.raises(ColorCalibrationError, match="blue: need at least 2 readings"):
        ColorCalibration.from_samples(samples)


def test_walk_through_collects_each_color_and_survives_pauses() -> None:
    rng = random.Random(5)
    script: list[tuple[int, int, int, int] | None] = []
    for color in COLORS:
        script += [sample_rgbc(color, rng), None, (0, 0, 0, 0), *(sample_rgbc(color, rng) for _ in range(2))]
    questions: list[str] = []
    said: list[str] = []
    cal = walk_through(
        lambda timeout: script.pop(0), lambda q: questions.append(q) or "", said.append, per_color=3, wait=1.0
    )
    assert script == []
    assert sum("Drop 3" in q for q in questions) == 4 and sum("No marble seen" in q for q in questions) == 4
    assert sum("no light" in s for s in said) == 4
    assert all(len(cal.samples[c]) == 3 for c in COLORS)


def test_walk_through_can_be_quit() -> None:
    answers = iter(["", "q"])
    with pytest.raises(CalibrationAborted):
        walk_through(lambda timeout: (100, 100, 100, 300), lambda q: next(answers), print, per_color=2)
