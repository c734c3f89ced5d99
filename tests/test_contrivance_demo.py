"""End to end: ``gizmos-referee demo --game contrivance --headless`` referees the bundled
recorded game exactly (the final scores of the ground truth, every rule broken on purpose
flagged on its turn with its code, no other warning), and the recording is deterministic."""

from __future__ import annotations

import io
import json

import pytest

from referee.app.cli import main
from referee.app.contrivance_demo import ContrivanceDemoOptions, play_contrivance_demo
from referee.simulation.workbench import RecordingSpec, play_recording


def test_the_demo_referees_the_recorded_game_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--game", "contrivance", "--headless"]) == 0
    out = capsys.readouterr().out
    assert "The referee got it right" in out
    assert "burnt out" in out and "bonus:" in out  # the engine's scoring, every tile and bonus explained

    result = play_contrivance_demo(ContrivanceDemoOptions(), out=io.StringIO(), err=io.StringIO())
    assert result.problems == []
    assert [(s["seat"], s["total"]) for s in result.scores] == [
        (s["seat"], s["total"]) for s in result.truth_scores
    ]
    assert 2 <= len(result.injections) <= 3
    flagged = sorted((w["turn"], w["player"], w["code"]) for w in result.warnings)
    assert flagged == sorted((i["turn"], i["player"], i["code"]) for i in result.injections)
    assert {w["kind"] for w in result.warnings} == {"violation"}
    assert {i["code"] for i in result.injections} == {
        "COLUMN_FIVE_IN_BUILDING",
        "ORIENTATION_CHANGED",
        "SECOND_ACTION",
    }
    assert result.game_over and result.frames > 500


def test_the_recording_is_the_same_from_the_same_seed() -> None:
    a, b = play_recording(RecordingSpec(seed=19)), play_recording(RecordingSpec(seed=19))
    assert json.dumps(a.to_json()) == json.dumps(b.to_json())
    assert a.timeline == b.timeline
    assert a.final.game_over and a.turns[-1].steps[-1].kind == "reveal"
    other = play_recording(RecordingSpec(seed=20))
    assert other.to_json() != a.to_json()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["demo", "--game", "contrivance", "--oracle"], "--oracle is an option of the Gizmos demo"),
        (["demo", "--seed", "3"], "--seed, --source and --workbench-model are options of --game contrivance"),
        (
            ["demo", "--game", "contrivance", "--source", "camera", "--workbench-model", "nowhere.onnx"],
            "workbench model file nowhere.onnx not found",
        ),
    ],
)
def test_an_option_of_the_other_game_is_one_line(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
