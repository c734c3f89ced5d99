"""The engine's subcommands of ``gizmos-referee``: new, legal, apply, score, simulate.

A user error is one line on stderr with exit status 2, never a traceback; an illegal step is the
broken rule as JSON on stdout with exit status 1.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.app.cli import main
from referee.gizmos import state_from_json

ROOT = Path(__file__).resolve().parent.parent


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str, expected: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert expected in err, err


@pytest.fixture
def game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "game.json"
    code, _, _ = run(["new", "--players", "3", "--seed", "1", "--out", str(path)], capsys)
    assert code == 0
    return path


# ---------------------------------------------------------------- the subcommands


def test_new_prints_a_seeded_game(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["new", "--players", "4", "--seed", "3"], capsys)
    assert code == 0
    state = state_from_json(json.loads(out))
    assert state.num_players == 4 and not state.chance and sum(state.row) == 6
    code, again, _ = run(["new", "--players", "4", "--seed", "3"], capsys)
    assert again == out


def test_new_observed_leaves_the_setup_to_be_seen(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["new", "--observed"], capsys)
    state = state_from_json(json.loads(out))
    assert code == 0 and len(state.chance) == 15 and state.display[0] == (None,) * 4


def test_legal_json_and_text(game: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["legal", str(game)], capsys)
    steps = json.loads(out)
    assert code == 0 and steps and all(s["player"] == 0 for s in steps)
    assert {s["kind"] for s in steps} >= {"file", "pick", "research"}
    code, text, _ = run(["legal", str(game), "--text"], capsys)
    assert code == 0 and len(text.splitlines()) == len(steps) and text.startswith("seat 0 ")


def test_legal_reads_standard_input(
    game: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(game.read_text(encoding="utf-8")))
    code, out, _ = run(["legal", "-"], capsys)
    assert code == 0 and json.loads(out)


def test_apply_a_legal_step(game: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = state_from_json(json.loads(game.read_text(encoding="utf-8")))
    color = next(c for c, n in zip(("red", "blue", "black", "yellow"), before.row, strict=True) if n)
    step = json.dumps({"kind": "pick", "player": 0, "color": color})
    code, out, _ = run(["apply", str(game), step], capsys)
    pending = state_from_json(json.loads(out))
    assert code == 0 and pending.chance == (("row",),)  # no seed: the refill is left to be supplied
    nxt = tmp_path / "next.json"
    code, _, _ = run(["apply", str(game), step, "--seed", "2", "--out", str(nxt)], capsys)
    after = state_from_json(json.loads(nxt.read_text(encoding="utf-8")))
    assert code == 0 and not after.chance and sum(after.players[0].ring) == 1 and sum(after.row) == 6


def test_apply_reads_the_step_from_a_file(
    game: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    step = tmp_path / "step.json"
    step.write_text('{"kind": "research", "player": 0, "level": 2}', encoding="utf-8")
    code, out, _ = run(["apply", str(game), f"@{step}", "--seed", "1"], capsys)
    state = state_from_json(json.loads(out))
    assert code == 0 and state.pending is not None and len(state.pending.hand) == 3


def test_an_illegal_step_is_json_with_exit_1(game: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["apply", str(game), '{"kind": "pick", "player": 1, "color": "red"}'], capsys)
    assert code == 1 and not err
    error = json.loads(out)
    assert error["error"] == "illegal_step" and error["code"] == "NOT_YOUR_TURN" and error["rulings"] == [7]
    assert error["player"] == 1 and error["message"]
    code, out, _ = run(["apply", str(game), '{"kind": "end_turn", "player": 0}'], capsys)
    assert code == 1 and json.loads(out)["code"] == "NO_MAIN_ACTION"


def test_score_table_and_json(game: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["score", str(game)], capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("rank") and len(lines) == 4
    assert lines[1].split()[:2] == ["1", "2"]  # seat 2 (as in the JSON): all tied, the latest wins
    code, out, _ = run(["score", str(game), "--json"], capsys)
    data = json.loads(out)
    assert data["game_over"] is False and [r["seat"] for r in data["ranking"]] == [2, 1, 0]
    assert data["ranking"][0]["decided_by"] == "seat"


def test_simulate_summary_and_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "steps.jsonl"
    code, out, err = run(
        ["simulate", "--games", "3", "--players", "2", "--seed", "5", "--log", str(log)], capsys
    )
    summary = json.loads(out)
    assert code == 0 and summary["games"] == 3 and sum(summary["wins_by_seat"]) == 3
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == summary["steps"] and {line["seed"] for line in lines} == {5, 6, 7}
    assert "3/3 games" in err  # progress
    code, out, err = run(["simulate", "--games", "1", "--quiet"], capsys)
    assert code == 0 and not err and "rank" in out


# ---------------------------------------------------------------- bad input: one line, exit 2


@pytest.mark.parametrize(
    "step,expected",
    [
        ('{"kind": "pick", "player": 0', "step: not valid JSON"),
        ("[1, 2]", "step: expected a JSON object"),
        ('{"kind": "teleport", "player": 0}', "step.kind"),
        ('{"kind": "file", "player": 0, "card": 500}', "unknown card 500"),
        ('{"kind": "pick", "player": 0, "color": "purple"}', "step.color"),
        ('{"kind": "pick", "player": 0, "color": "red", "card": 4}', "do not belong"),
        ('{"kind": "pick", "player": 7, "color": "red"}', "step.player"),
        ('{"kind": "build", "player": 0, "card": 4, "pay": {"red": -1}}', "step.pay.red"),
        ("no-such-step.json", "no such file"),
        ('{"kind": "pick", "player": 0, "color": ["red"]}', "step.color: expected one of"),
        ('{"kind": "dispense", "color": {"red": 1}}', "step.color: expected one of"),
        ("[" * 100_000 + "]" * 100_000, "step: not valid JSON: nested too deeply"),
    ],
)
def test_a_bad_step_is_one_line(
    game: Path, capsys: pytest.CaptureFixture[str], step: str, expected: str
) -> None:
    code, out, err = run(["apply", str(game), step], capsys)
    one_line_error(code, err, expected)
    assert not out


def _bad_state(tmp_path: Path, game: Path, edit: str) -> Path:
    raw = json.loads(game.read_text(encoding="utf-8"))
    if edit == "malformed":
        text = game.read_text(encoding="utf-8")[:-20]
    elif edit == "nested":
        text = "[" * 100_000 + "]" * 100_000
    else:
        if edit == "unknown card":
            raw["players"][0]["archive"] = [999]
        elif edit == "impossible":
            raw["row"]["red"] += 1
        elif edit == "two places":
            raw["players"][1]["archive"] = [raw["display"]["1"][0]]
        text = json.dumps(raw)
    path = tmp_path / f"{edit.replace(' ', '_')}.json"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "edit,expected",
    [
        ("malformed", "state: not valid JSON"),
        ("nested", "state: not valid JSON: nested too deeply"),
        ("unknown card", "unknown card 999"),
        ("impossible", "red marbles are accounted for"),
        ("two places", "is both in"),
    ],
)
@pytest.mark.parametrize("command", ["legal", "score", "apply"])
def test_a_bad_state_is_one_line(
    game: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str, expected: str, command: str
) -> None:
    path = _bad_state(tmp_path, game, edit)
    argv = [command, str(path)] + (['{"kind": "end_turn", "player": 0}'] if command == "apply" else [])
    code, out, err = run(argv, capsys)
    one_line_error(code, err, expected)
    assert not out


@pytest.mark.parametrize(
    "argv,expected",
    [
        (["legal", "{tmp}/absent.json"], "no such file"),
        (["legal", "{tmp}"], "cannot read state file"),
        (["new", "--out", "{tmp}/no/dir.json"], "cannot write"),
        (["simulate", "--games", "1", "--log", "{tmp}/no/steps.jsonl"], "cannot write"),
    ],
)
def test_files_that_cannot_be_read_or_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    code, _, err = run([a.format(tmp=tmp_path) for a in argv], capsys)
    one_line_error(code, err, expected)


@pytest.mark.parametrize(
    "argv", [["new", "--players", "5"], ["simulate", "--games", "0"], ["simulate", "--players", "1"]]
)
def test_bad_options_are_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(argv, capsys)
    assert code == 2 and "Traceback" not in err and "error:" in err


def test_the_console_script_never_prints_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "gizmos-state", "version": 1, "players": 3}', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "referee.app.cli", "legal", str(bad)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == "gizmos-referee legal: error: state.players: expected a list of 2-4 players"
