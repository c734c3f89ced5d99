"""Contrivance games kept by hand use the same crash-proof SQLite record as refereed Gizmos games:
every legal step is committed before it is kept, a reopened file resumes where the game stood,
an export rebuilds it and replays every state, and a process killed mid-game loses nothing."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from referee.contrivance import IllegalStep, InvalidStep, check_invariants
from referee.tracker import RecordError, Scorekeeper, ScorekeeperError, replayed_states

ROOT = Path(__file__).resolve().parent.parent
NAMES = ["Ana", "Ben", "Cy"]


def keep_random(keeper: Scorekeeper, steps: int, seed: int) -> None:
    """Enter ``steps`` random legal steps (chance outcomes included, as a table would show them)."""
    rng = random.Random(seed)
    for _ in range(steps):
        if keeper.game.is_terminal(keeper.state):
            return
        step = rng.choice(keeper.game.legal_steps(keeper.state))
        keeper.play(keeper.game.step_to_json(step))


def test_a_kept_game_resumes_from_its_file(tmp_path: Path) -> None:
    path = tmp_path / "table.db"
    keeper = Scorekeeper.create(path, "contrivance", NAMES)
    assert keeper.state.chance[0] == ("builder", 0)  # the setup is entered as the table shows it
    keep_random(keeper, 80, seed=1)
    keeper.record.close()
    again = Scorekeeper.open(path)
    assert again.game.name == "contrivance" and again.names == NAMES
    assert again.state == keeper.state and again.steps == keeper.steps
    assert again.log()[0].startswith("the next seat's Builder is the ")
    with pytest.raises(ScorekeeperError, match="already holds a game"):
        Scorekeeper.create(path, "contrivance", NAMES)


def test_an_illegal_or_malformed_step_records_nothing(tmp_path: Path) -> None:
    keeper = Scorekeeper.create(tmp_path / "t.db", "contrivance", NAMES, seed=3, observed=False)
    assert keeper.state.phase == "building" and not keeper.state.chance  # set up from the seed
    before = len(keeper.record)
    theirs = keeper.state.supply[1][0].id
    with pytest.raises(IllegalStep, match="NOT_YOUR_TILE"):
        keeper.play({"kind": "place", "player": 0, "tile": theirs, "to": [1, 1], "facing": "N"})
    with pytest.raises(InvalidStep, match=r"step\.to"):
        keeper.play({"kind": "place", "player": 0, "tile": theirs, "to": [1, 9], "facing": "N"})
    assert len(keeper.record) == before and keeper.steps == []
    mine = keeper.state.supply[0][0].id
    keeper.play({"kind": "place", "player": 0, "tile": mine, "to": [1, 1], "facing": "N"}, who="Ana")
    assert len(keeper.record) == before + 1 and keeper.log() == [
        f"Ana places {mine} on row 1, column 1, Rivet facing N"
    ]


def test_undo_is_recorded_and_replayed(tmp_path: Path) -> None:
    path = tmp_path / "u.db"
    keeper = Scorekeeper.create(path, "contrivance", NAMES, seed=5, observed=False)
    keep_random(keeper, 5, seed=2)
    fifth, fourth = keeper.state, keeper.states[-2]
    assert keeper.undo(who="Ben") == fourth
    keeper.record.close()
    again = Scorekeeper.open(path)
    assert again.state == fourth != fifth and len(again.steps) == 4
    with pytest.raises(ScorekeeperError, match="nothing to undo"):
        Scorekeeper.create(tmp_path / "v.db", "contrivance", NAMES).undo()


def test_export_rebuilds_and_replays_every_state_to_the_final_scores(tmp_path: Path) -> None:
    keeper = Scorekeeper.create(tmp_path / "e.db", "contrivance", NAMES, seed=7, observed=False)
    keep_random(keeper, 5000, seed=7)
    assert keeper.game.is_terminal(keeper.state)
    export = json.loads(json.dumps(keeper.export()))
    assert export["format"] == "gizmos-record" and export["entries"][0]["payload"]["game"] == "contrivance"
    states = list(replayed_states(export))
    assert states == keeper.states
    for state in states:
        check_invariants(state)
    rebuilt = Scorekeeper.from_export(export)
    assert rebuilt.scores() == keeper.scores() and any(row["won"] for row in rebuilt.scores())


def test_bad_records_and_games_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ScorekeeperError, match="unknown game 'chess'"):
        Scorekeeper.create(tmp_path / "c.db", "chess", NAMES)
    with pytest.raises(ScorekeeperError, match="Contrivance is for 2-6 players, got 7"):
        Scorekeeper.create(tmp_path / "c.db", "contrivance", NAMES * 2 + ["Di"])
    keeper = Scorekeeper.create(tmp_path / "k.db", "contrivance", NAMES, seed=1, observed=False)
    keep_random(keeper, 3, seed=1)
    export = keeper.export()
    export["entries"][2]["payload"]["step"]["to"] = [1, 5]  # column 5 in the building phase
    with pytest.raises(RecordError, match="cannot replay a 'step' entry: COLUMN_FIVE_IN_BUILDING"):
        Scorekeeper.from_export(export)
    with pytest.raises(RecordError, match="no such game record"):
        Scorekeeper.open(tmp_path / "absent.db")


CHILD = textwrap.dedent(
    """
    import random, sys
    from referee.tracker import Scorekeeper

    path = sys.argv[1]
    keeper = Scorekeeper.create(path, "contrivance", ["Ana", "Ben", "Cy", "Di"])
    rng = random.Random(9)
    while not keeper.game.is_terminal(keeper.state):
        step = rng.choice(keeper.game.legal_steps(keeper.state))
        keeper.play(keeper.game.step_to_json(step))
        print(len(keeper.steps), flush=True)
    print("done", flush=True)
    """
)


def test_killed_mid_game_loses_nothing_kept(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout is not None
    kept = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and kept < 60:
        line = child.stdout.readline()
        assert line and line != "done\n", "the child finished before it could be killed"
        kept = int(line)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    resumed = Scorekeeper.open(path)
    assert len(resumed.steps) >= kept  # every step reported kept before the kill is there
    check_invariants(resumed.state)
    keep_random(resumed, 5000, seed=4)  # and the game goes on to its end
    assert resumed.game.is_terminal(resumed.state)
