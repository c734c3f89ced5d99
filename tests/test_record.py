"""The game record: everything accepted is in SQLite before the tracker moves on; a record
exports to JSON and replays to every state; a process killed mid-game resumes intact."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from referee.gizmos import State, check_invariants, legal_steps
from referee.simulation.synthetic import Feeder, TurnScript, simulated_game
from referee.tracker import Scorekeeper, Tracker, TrackerError, replay_states
from referee.tracker.record import GameRecord, RecordError, RecordWriteError
from referee.tracker.view import view_of

ROOT = Path(__file__).resolve().parent.parent


def _game(
    path: str | Path, seed: int, turns: int, rate: float = 0.0
) -> tuple[Tracker, list[TurnScript], list[State]]:
    """A simulated game refereed into a record; also every state the live tracker held."""
    scripts = list(simulated_game(3, seed, violation_rate=rate, max_turns=turns))
    tracker = Tracker.create(path, ["Ana", "Ben", "Cy"])
    seen: list[State] = [tracker.state]
    tracker.subscribe(lambda kind, data: seen.append(tracker.state) if kind == "state" else None)
    feeder = Feeder(tracker)
    for script in scripts:
        feeder.turn(script)
    return tracker, scripts, seen


def test_export_replays_every_state(tmp_path: Path) -> None:
    tracker, _, seen = _game(tmp_path / "g.db", seed=3, turns=30, rate=0.15)
    assert any(w.kind == "violation" for w in tracker.warnings), "the game should include rule breaks"
    export = json.loads(json.dumps(tracker.record.export()))  # plain JSON all the way
    replayed = list(replay_states(export))
    assert replayed[0] == seen[0] and replayed[-1] == tracker.state
    it = iter(replayed)  # every state the live tracker reported, in order, is a replayed state
    assert all(any(s == r for r in it) for s in seen[1:])
    rebuilt = Tracker.from_export(export)
    assert rebuilt.state == tracker.state
    assert rebuilt.warnings == tracker.warnings and rebuilt.log == tracker.log
    kinds = {e["kind"] for e in export["entries"]}
    assert {"setup", "observation", "step", "warning", "event"} <= kinds


def test_entries_after_a_sequence_number_are_the_later_ones_in_order(tmp_path: Path) -> None:
    """The dashboard's hub reads only the entries it has not narrated yet (web/hub.py)."""
    tracker, _, _ = _game(tmp_path / "g.db", seed=3, turns=6)
    every = list(tracker.record.entries())
    middle = every[len(every) // 2].seq
    assert list(tracker.record.entries(after=middle)) == [e for e in every if e.seq > middle]
    steps = [e for e in every if e.kind == "step"]
    assert steps and list(tracker.record.entries("step", after=middle)) == [
        e for e in steps if e.seq > middle
    ]
    assert list(tracker.record.entries(after=every[-1].seq)) == []


def test_reopening_resumes_where_the_game_stood(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    tracker, _, _ = _game(path, seed=4, turns=12)
    tracker.record.close()
    again = Tracker.open(path)
    assert again.state == tracker.state and again.log == tracker.log and again.warnings == tracker.warnings
    with pytest.raises(TrackerError, match="already holds a game"):
        Tracker.create(path, ["Ana", "Ben", "Cy"])


CHILD = textwrap.dedent(
    """
    import sys
    from referee.simulation.synthetic import Feeder, simulated_game
    from referee.tracker import Tracker

    path, seed, turns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    tracker = Tracker.create(path, ["Ana", "Ben", "Cy"])
    feeder = Feeder(tracker)
    for script in simulated_game(3, seed, max_turns=turns):
        feeder.turn(script)
        print(script.turn, tracker.state.turn, flush=True)
    print("done", flush=True)
    """
)


def test_killed_mid_game_loses_nothing_accepted_and_resumes(tmp_path: Path) -> None:
    path, seed, turns = tmp_path / "crash.db", 11, 40
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(seed), str(turns)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout is not None
    accepted = -1
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = child.stdout.readline()
        assert line and line != "done\n", "the child finished before it could be killed"
        script_turn, accepted = (int(x) for x in line.split())
        if script_turn >= 8:
            break
    child.send_signal(signal.SIGKILL)  # mid-game: it is already feeding the next turn
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL

    tracker = Tracker.open(path)
    check_invariants(tracker.state)
    assert tracker.state.turn >= accepted  # everything accepted before the kill is there
    assert tracker.warnings == []

    # Resume: show the table of the turn in progress and play the rest of the game.
    scripts = [s for s in simulated_game(3, seed, max_turns=turns) if s.turn >= tracker.state.turn]
    feeder = Feeder(tracker)
    first, rest = scripts[0], scripts[1:]
    feeder.show(first.final, frames=first.moments[-1].frames)
    if not tracker.snapshot()["end_signals_pending"]:
        feeder.end_turn()
    for script in rest:
        feeder.turn(script)
    assert tracker.warnings == []
    assert view_of(tracker.state).key()[:3] == view_of(scripts[-1].final).key()[:3]
    assert tracker.state.turn == scripts[-1].final.turn + 1  # the last turn's end was explained too


def test_bad_records_give_clear_errors(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(RecordError, match="not a game record \\(not an SQLite database\\)"):
        GameRecord(junk)
    with pytest.raises(RecordError, match="no such game record"):
        Tracker.open(tmp_path / "missing.db")
    empty = tmp_path / "empty.db"
    GameRecord(empty).close()
    with pytest.raises(RecordError, match="no setup entry"):
        Tracker.open(empty)
    with pytest.raises(RecordError, match="unknown record entry kind"):
        GameRecord(":memory:").append("gossip", {})


@pytest.mark.parametrize(
    ("mutate", "error"),
    [
        (lambda e: e.update(format="zip"), '"format": "gizmos-record"'),
        (lambda e: e.update(version=9), "unsupported version 9"),
        (lambda e: e.update(entries={}), "export.entries: expected a list"),
        (lambda e: e["entries"].__setitem__(1, "step"), r"export.entries\[1\]: expected an object"),
        (lambda e: e["entries"][1].update(kind="gossip"), r"export.entries\[1\].kind"),
        (lambda e: e["entries"][1].update(time="noon"), r"export.entries\[1\].time"),
        (lambda e: e["entries"][0].update(kind="step"), "not a game record \\(no setup entry\\)"),
        (lambda e: e["entries"][-1]["payload"].update(step={"kind": "fly"}), "cannot replay a 'step' entry"),
    ],
)
def test_bad_exports_give_clear_errors(mutate: object, error: str) -> None:
    tracker, _, _ = _game(":memory:", seed=2, turns=3)
    export = tracker.record.export()
    steps = [i for i, e in enumerate(export["entries"]) if e["kind"] == "step"]
    export["entries"] = export["entries"][: steps[-1] + 1]  # end on a step entry
    mutate(export)  # type: ignore[operator]
    with pytest.raises(RecordError, match=error):
        Tracker.from_export(export)


def test_the_setup_names_its_game_and_another_games_record_is_refused(tmp_path: Path) -> None:
    """The tracker writes and reads its record through the game interface (``Tracker.game``)."""
    tracker, _, _ = _game(":memory:", seed=2, turns=3)
    export = tracker.record.export()
    setup = export["entries"][0]["payload"]
    assert setup["game"] == "gizmos" == Tracker.game.name
    assert setup["state"] == Tracker.game.state_to_json(tracker.turn_starts[0])
    del setup["game"]  # a record made before the setup named its game is a Gizmos game
    assert Tracker.from_export(export).state == tracker.state
    keeper = Scorekeeper.create(tmp_path / "c.db", "contrivance", ["Ana", "Ben"], seed=1, observed=False)
    with pytest.raises(RecordError, match="a game of 'contrivance', not gizmos: open it with its own"):
        Tracker.from_export(keeper.record.export())


# ------------------------------------------------------------------ faults (issue 15: 1, 2)


class FullDisk:
    """The record's SQLite connection, made to fail like a full disk while ``full`` is set:
    the COMMIT (or, with ``on="INSERT"``, the append itself) raises what SQLite raises."""

    def __init__(self, db: sqlite3.Connection, on: str = "COMMIT") -> None:
        self.db, self.on, self.full = db, on, False

    @property
    def in_transaction(self) -> bool:
        return self.db.in_transaction

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if self.full and sql.startswith(self.on):
            raise sqlite3.OperationalError("database or disk is full")
        return self.db.execute(sql, *args)

    def close(self) -> None:
        self.db.close()


@pytest.mark.parametrize("on", ["COMMIT", "INSERT"])
def test_a_failed_write_leaves_memory_and_record_as_they_were(tmp_path: Path, on: str) -> None:
    path = tmp_path / "g.db"
    tracker = Tracker.create(path, ["Ana", "Ben"], seed=1, observed=False)
    disk = FullDisk(tracker.record._db, on)
    tracker.record._db = disk  # type: ignore[assignment]
    first, second = legal_steps(tracker.state)[0], None
    tracker.play(first)
    second = legal_steps(tracker.state)[0]
    before, log, entries = tracker.state, list(tracker.log), len(tracker.record)
    disk.full = True
    with pytest.raises(RecordWriteError, match="database or disk is full; the last change was not kept"):
        tracker.play(second)
    assert tracker.state == before and tracker.log == log and len(tracker.record) == entries
    disk.full = False  # space freed: the same play goes through, and the record resumes
    tracker.play(second)
    assert Tracker.open(path).state == tracker.state and tracker.state != before


def test_a_failed_write_during_refereeing_is_redone_when_space_returns(tmp_path: Path) -> None:
    scripts = list(simulated_game(3, 4, violation_rate=0.0, max_turns=6))
    tracker = Tracker.create(tmp_path / "g.db", ["Ana", "Ben", "Cy"])
    disk = FullDisk(tracker.record._db)
    tracker.record._db = disk  # type: ignore[assignment]
    feeder = Feeder(tracker)
    for script in scripts[:3]:
        feeder.turn(script)
    before, entries = tracker.state, len(tracker.record)
    disk.full = True
    failed = 0
    for script in scripts[3:5]:
        try:
            feeder.turn(script)
        except RecordWriteError:
            failed += 1
    assert failed and tracker.state == before and len(tracker.record) == entries
    disk.full = False
    for script in scripts[3:]:  # the table is shown again: explained now that writes succeed
        feeder.turn(script)
    control = Tracker.create(tmp_path / "control.db", ["Ana", "Ben", "Cy"])  # the same game, no fault
    for script in scripts:
        Feeder(control).turn(script)
    assert tracker.state == control.state and tracker.log == control.log and not tracker.warnings
    assert Tracker.open(tmp_path / "g.db").state == tracker.state


def test_records_that_are_not_records_are_refused(tmp_path: Path) -> None:
    text = tmp_path / "one-byte.txt"
    text.write_text("x")
    other = tmp_path / "other-app.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    before = {p: p.read_bytes() for p in (text, other)}
    with pytest.raises(RecordError, match="not an SQLite database"):
        Tracker.create(text, ["Ana", "Ben"])
    with pytest.raises(RecordError, match=r"another application \(tables \['invoices'\]\)"):
        Tracker.create(other, ["Ana", "Ben"])
    assert {p: p.read_bytes() for p in before} == before  # nothing added to either


def test_a_read_only_record_opens_for_viewing_and_export(tmp_path: Path) -> None:
    folder = tmp_path / "media"
    folder.mkdir()
    tracker, _, _ = _game(folder / "g.db", seed=5, turns=4)
    tracker.record.close()
    os.chmod(folder / "g.db", 0o444)
    os.chmod(folder, 0o555)
    try:
        ro = Tracker.open(folder / "g.db", readonly=True)
        assert ro.state == tracker.state and ro.record.export()["entries"]
        with pytest.raises(RecordWriteError, match="opened read-only"):
            ro.end_game("admin")
        assert ro.ended_by is None  # memory stays with the record
    finally:
        os.chmod(folder, 0o755)


def test_a_page_corrupted_record_is_one_line(tmp_path: Path) -> None:
    # Whichever page is overwritten, opening (to resume or view) and creating over it are one
    # line naming the file, never a traceback (an sqlite3.DatabaseError used to escape).
    tracker, _, _ = _game(tmp_path / "g.db", seed=6, turns=6)
    tracker.record.close()
    data = (tmp_path / "g.db").read_bytes()
    pages = len(data) // 4096
    assert pages > 5
    for page in range(1, pages):
        bad = tmp_path / f"page{page}.db"
        bad.write_bytes(data[: page * 4096] + b"\xa5" * 4096 + data[(page + 1) * 4096 :])
        for opening in (Tracker.open, lambda p: Tracker.create(p, ["Ana", "Ben"])):
            with pytest.raises(RecordError) as info:
                opening(bad)
            assert "\n" not in str(info.value) and bad.name in str(info.value)
