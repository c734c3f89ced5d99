"""The engine verbs of ``gizmos-referee`` on Contrivance: new --game contrivance, legal, apply,
score (the whole scoring with reasons), simulate. Bad input is one line on stderr, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.app.cli import main
from referee.contrivance import CONTRIVANCE, state_from_json
from referee.simulation.play import random_game


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
    code, _, _ = run(
        ["new", "--game", "contrivance", "--players", "3", "--seed", "1", "--out", str(path)], capsys
    )
    assert code == 0
    return path


def test_new_makes_a_seeded_table_or_leaves_the_setup_to_be_seen(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["new", "--game", "contrivance", "--players", "6", "--seed", "4"], capsys)
    state = state_from_json(json.loads(out))
    assert code == 0 and state.num_players == 6 and not state.chance and all(len(h) == 4 for h in state.hands)
    _, again, _ = run(["new", "--game", "contrivance", "--players", "6", "--seed", "4"], capsys)
    assert again == out
    code, out, _ = run(["new", "--game", "contrivance", "--observed"], capsys)
    assert code == 0 and state_from_json(json.loads(out)).chance[0] == ("builder", 0)


def test_legal_and_apply(game: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["legal", str(game)], capsys)
    steps = json.loads(out)
    assert code == 0 and {s["kind"] for s in steps} == {"place"} and all(s["player"] == 0 for s in steps)
    code, out, _ = run(["legal", str(game), "--text"], capsys)
    assert code == 0 and "seat 0 places" in out.splitlines()[0]
    after = tmp_path / "after.json"
    code, _, _ = run(["apply", str(game), json.dumps(steps[0]), "--out", str(after)], capsys)
    assert code == 0 and state_from_json(json.loads(after.read_text(encoding="utf-8"))).current == 1


def test_an_illegal_step_is_json_with_exit_1(game: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = state_from_json(json.loads(game.read_text(encoding="utf-8")))
    theirs = state.supply[1][0].id
    step = {"kind": "place", "player": 0, "tile": theirs, "to": [1, 1], "facing": "N"}
    code, out, err = run(["apply", str(game), json.dumps(step)], capsys)
    error = json.loads(out)
    assert code == 1 and not err
    assert error["code"] == "NOT_YOUR_TILE" and error["rulings"] == [10] and error["player"] == 0
    step = {"kind": "place", "player": 0, "tile": state.supply[0][0].id, "to": [1, 5], "facing": "N"}
    code, out, _ = run(["apply", str(game), json.dumps(step)], capsys)
    assert code == 1 and json.loads(out)["code"] == "COLUMN_FIVE_IN_BUILDING"


def test_score_is_the_whole_table_with_reasons(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    final = random_game(CONTRIVANCE, 4, seed=2).final
    path = tmp_path / "final.json"
    path.write_text(json.dumps(final.to_json()), encoding="utf-8")
    code, out, _ = run(["score", str(path)], capsys)
    assert code == 0 and out.startswith("Contrivance: ")
    assert sum("burnt out" in line or "survives" in line for line in out.splitlines()) == 16  # every tile
    assert out.count("     bonus: ") == 4 and out.count("     base: ") == 4
    code, out, _ = run(["score", str(path), "--json"], capsys)
    data = json.loads(out)
    assert data["game_over"] is True and len(data["ranking"]) == 4
    assert all(len(row["tiles"]) >= 1 and row["bonus_reason"] for row in data["ranking"])


def test_simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "steps.jsonl"
    argv = ["simulate", "--game", "contrivance", "--games", "3", "--players", "5", "--log", str(log)]
    code, out, err = run(argv, capsys)
    summary = json.loads(out)
    assert code == 0 and summary["game"] == "contrivance" and summary["games"] == 3
    assert sum(summary["wins_by_seat"]) >= 3  # equal totals share a win
    assert len(log.read_text(encoding="utf-8").splitlines()) == summary["steps"] and "3/3 games" in err
    code, out, _ = run(["simulate", "--game", "contrivance", "--games", "1", "--quiet"], capsys)
    assert code == 0 and "interlocked sets:" in out


@pytest.mark.parametrize(
    "step,expected",
    [
        ('{"kind": "place", "player": 0', "step: not valid JSON"),
        ('{"kind": "teleport", "player": 0}', "step.kind"),
        ('{"kind": "place", "player": 0, "tile": "Engineer-1", "to": [1, 9], "facing": "N"}', "step.to"),
        ('{"kind": "place", "player": 0, "tile": "Engineer-1", "to": [1, 1], "facing": "up"}', "step.facing"),
        ('{"kind": "play", "player": 0, "card": "hammer"}', "step.card"),
        ('{"kind": "play", "player": 0, "card": "rotate", "at": [1, 1]}', "needs 'facing'"),
        ('{"kind": "pass", "player": 3}', "step.player"),
    ],
)
def test_a_bad_step_is_one_line(
    game: Path, capsys: pytest.CaptureFixture[str], step: str, expected: str
) -> None:
    code, out, err = run(["apply", str(game), step], capsys)
    one_line_error(code, err, expected)
    assert not out


@pytest.mark.parametrize(
    "edit,expected",
    [
        ("value", "workbench[0][0].value"),
        ("card", "63 cards are accounted for"),
        ("format", '"format": one of'),
    ],
)
def test_a_bad_state_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str, expected: str
) -> None:
    raw = random_game(CONTRIVANCE, 2, seed=1).final.to_json()
    if edit == "value":
        raw["workbench"][0][0]["value"] = 9
    elif edit == "card":
        raw["discard"].append("move")
    else:
        raw["format"] = "chess-state"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    for command in ("legal", "score"):
        code, out, err = run([command, str(path)], capsys)
        one_line_error(code, err, expected)
        assert not out


def test_player_counts_follow_the_game(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["new", "--game", "contrivance", "--players", "7"], capsys)
    assert code == 2 and "Contrivance is for 2-6 players, got 7" in err
    code, _, err = run(["new", "--players", "5"], capsys)
    assert code == 2 and "Gizmos is for 2-4 players, got 5" in err
    code, _, err = run(["new", "--game", "chess"], capsys)
    assert code == 2 and "invalid choice" in err


def test_new_with_a_tables_own_edition(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edition = tmp_path / "edition.json"
    edition.write_text(
        json.dumps({"contrivances": [3, 3, 3, 3, 3, 3], "double_rivets": [0, 1]}), encoding="utf-8"
    )
    code, out, _ = run(["new", "--game", "contrivance", "--edition", str(edition)], capsys)
    state = state_from_json(json.loads(out))
    assert code == 0 and state.contrivances == (3,) * 6
    assert all(t.rivets == (0, 1) for tiles in state.supply for t in tiles if t.double)
    edition.write_text(json.dumps({"double_rivets": [0, 0]}), encoding="utf-8")
    code, _, err = run(["new", "--game", "contrivance", "--edition", str(edition)], capsys)
    one_line_error(code, err, "edition.double_rivets: expected two distinct edges")
    code, _, err = run(["new", "--edition", str(edition)], capsys)
    one_line_error(code, err, "--edition: only Contrivance has an edition")
