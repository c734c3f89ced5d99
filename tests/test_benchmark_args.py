"""benchmarks/fps.py, benchmarks/identify_methods.py and benchmarks/vision.py: a bad argument is
one line and status 2 (before anything is rendered); the development decks are what their names
say."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import fps, identify_methods
from benchmarks import vision as vision_benchmark
from vision.faces import drawn_faces

RUNTIMES = "error: --runtimes must name some of openvino, opencv, each once"


@pytest.mark.parametrize(
    ("module", "argv", "said"),
    [
        (fps, ["--runtimes", "tensorrt"], RUNTIMES),
        (fps, ["--runtimes", "opencv,opencv"], RUNTIMES),
        (
            identify_methods,
            ["--development", "--dev-decks", "random,other"],
            "identify_methods: --dev-decks takes some of random,drawn,drawn-photos",
        ),
        (identify_methods, ["--development", "--memory"], "identify_methods: --memory needs --embedding"),
        (
            vision_benchmark,
            ["--empty-table", "--learned-table", "4"],
            "error: --empty-table and --learned-table are two backgrounds: give one",
        ),
        (
            vision_benchmark,
            ["--learned-table", "-1"],
            "error: --learned-table takes a number of frames >= 0, not -1",
        ),
        (
            vision_benchmark,
            ["--learned-table", "2", "--conditions", "arms,traced"],
            "error: --learned-table: the ray-traced traced render no other frames",
        ),
        (
            vision_benchmark,
            ["--conditions", "own,nowhere"],
            "error: unknown condition 'nowhere' (choose from own, style, deck, lookalike, arms, traced,"
            " traced_deck or all)",
        ),
    ],
)
def test_a_bad_argument_is_one_line_and_status_2(
    module: object, argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert module.main(argv) == 2  # type: ignore[attr-defined]
    assert capsys.readouterr().err.strip().splitlines() == [said]


def test_the_development_decks() -> None:
    # The drawn faces render the tables of both drawn decks; one is given them as references,
    # the other their phone-like photos (its own per deck seed).
    drawn = drawn_faces()
    faces, refs = identify_methods._development_deck("drawn", 5_170_001)
    assert faces is None and refs is drawn
    faces, photos = identify_methods._development_deck("drawn-photos", 5_170_001)
    assert faces is None and len(photos) == len(drawn)
    assert not np.array_equal(photos[7], drawn[7])
    again = identify_methods._development_deck("drawn-photos", 5_170_001)[1]
    assert np.array_equal(again[7], photos[7])
