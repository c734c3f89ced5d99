"""Camera only, the players' arms seen are kept in the game record (``arms`` entries): a game
killed mid-turn resumes weighing the same arms; a record without them loads as before; a
malformed entry is one clear line."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from referee.observation import ReachSighting
from referee.simulation.synthetic import Camera, Feeder, Noise, simulated_game
from referee.tracker import Tracker
from referee.tracker.reaching import ArmLog
from referee.tracker.record import GameRecord, RecordError, arms_entry, arms_replayed
from tests.tables import table

ROOT = Path(__file__).resolve().parent.parent

CHILD = textwrap.dedent(
    """
    import json, sys
    from referee.observation import ReachSighting
    from referee.simulation.synthetic import Camera, Feeder, Noise, ReachNoise, simulated_game
    from referee.tracker import Tracker

    path, seed = sys.argv[1], int(sys.argv[2])
    tracker = Tracker.create(path, ["Ana", "Ben", "Cy"])
    camera = Camera(Noise(), seed, ReachNoise.default())
    feeder = Feeder(tracker, camera, signals=False)
    for script in simulated_game(3, seed, max_turns=12):
        feeder.turn(script)
        if tracker.state.turn >= 3 and tracker._arms.spent:
            break  # mid-game, the last accepted turn's arms spent
    tracker.reached((ReachSighting(1, "deck/1", 0.9), ReachSighting(None, "table", 0.9)))
    arms = tracker._arms
    print(json.dumps([arms.reported, arms.seen, arms.spent, tracker._frame]), flush=True)
    sys.stdin.readline()  # killed here, with everything above committed
    """
)


def _arms(t: Tracker) -> list[object]:
    a = t._arms
    return json.loads(json.dumps([a.reported, a.seen, a.spent, t._frame]))


def test_a_game_killed_mid_turn_resumes_with_the_same_arms(tmp_path: Path) -> None:
    path = tmp_path / "arms.db"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), "5"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL and line, "the child did not get to the kill point"
    before = json.loads(line)
    reported, seen, spent, frame = before
    assert reported and seen and seen[-1] == [frame, 1, "deck"]  # the arm seen last is kept ...
    assert all(s[1] is not None for s in seen)  # ... and an arm of no known seat is not
    assert spent  # the arms the last accepted turn accounted for
    resumed = Tracker.open(path)
    assert _arms(resumed) == before
    # and the arms go on from there: the next ones are added after them, in the record too
    resumed.reached((ReachSighting(2, "energy_row", 0.9),))
    assert resumed._arms.seen[-1] == (frame, 2, "row")
    assert _arms(Tracker.open(path)) == _arms(resumed)


def test_a_record_without_arms_resumes_with_none_and_writes_none(tmp_path: Path) -> None:
    # no arms reported (a camera without the hand network, or a record from before arms were
    # kept): no ``arms`` entry is written, and the game resumes reading the table alone
    path = tmp_path / "table.db"
    tracker = Tracker.create(path, ["Ana", "Ben", "Cy"])
    feeder = Feeder(tracker, Camera(Noise(), 3), signals=False)
    for script in simulated_game(3, 3, max_turns=3):
        feeder.turn(script)
    assert tracker.state.turn > 0
    record = GameRecord(path, readonly=True)
    assert not list(record.entries("arms"))
    resumed = Tracker.open(path)
    assert resumed._arms == ArmLog() and resumed.state == tracker.state


def test_arms_entries_add_to_the_log_or_replace_it() -> None:
    empty = ArmLog()
    seen = empty.add(3, [ReachSighting(0, "deck/1", 0.9)])
    more = seen.add(4, [ReachSighting(1, "energy_row", 0.8), ReachSighting(2, "table", 0.3)])
    assert arms_entry(empty, empty, 0) is None
    assert arms_entry(seen, more, 4) == {"frame": 4, "add": [[4, 1, "row"]]}  # the 0.3 is not counted
    spent = more.consume(5)
    entry = arms_entry(more, spent, 5)
    assert entry is not None and "log" in entry
    log = empty
    moved = spent.moved(7)  # the table changed: the pause that tells a turn's end is kept too
    assert moved.still_from is not None and moved.changes == (7,)
    paused = spent.consume(20, dataclasses.replace(table(players=3), main_done=True))
    assert paused.earlier_pause
    ordered = paused.area_changed(22, 2, (0, 1))  # whose area changed first, while whose still not
    assert ordered.areas == ((22, 2, (0, 1)),)
    steps = (
        (empty, seen, 3),
        (seen, more, 4),
        (more, spent, 5),
        (spent, moved, 7),
        (moved, moved.again(), 8),
        (moved.again(), paused, 20),  # ... and the pause before the last explanation accepted
        (paused, ordered, 22),  # ... and the order the players' areas were read changing in
    )
    for before, after, frame in steps:
        payload = arms_entry(before, after, frame)
        assert payload is not None
        log, at = arms_replayed(log, json.loads(json.dumps(payload)))
        assert (log, at) == (after, frame)


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        ({"frame": "3", "add": []}, "frame must be a count of frames"),
        ({"frame": 3, "add": [[3, "Ana", "deck"]]}, "expected [frame, seat, zone class]"),
        ({"frame": 3, "add": [[3, 1, "kitchen"]]}, "expected [frame, seat, zone class]"),
        ({"frame": 3, "log": {"seen": []}}, "log must be an object with reported, seen and spent"),
        ({"frame": 3, "log": {"reported": True, "seen": [], "spent": [[1]]}}, "expected [seat, zone class]"),
        (
            {"frame": 3, "log": {"reported": True, "seen": [], "spent": [], "still_from": "x"}},
            "still_from must be a frame or null",
        ),
        (
            {"frame": 3, "log": {"reported": True, "seen": [], "spent": [], "changes": [-2]}},
            "changes must be frames",
        ),
        (
            {"frame": 3, "log": {"reported": True, "seen": [], "spent": [], "earlier_pause": 1}},
            "earlier_pause must be true or false",
        ),
        (
            {"frame": 3, "log": {"reported": True, "seen": [], "spent": [], "areas": [[3, 1, 0]]}},
            "an areas item must be [frame, seat, [seats]]",
        ),
    ],
)
def test_a_malformed_arms_entry_is_one_clear_line(payload: dict[str, object], error: str) -> None:
    tracker = Tracker.create(":memory:", ["Ana", "Ben"])
    data = tracker.record.export()
    data["entries"].append({"seq": 2, "time": 0.0, "kind": "arms", "who": "camera", "payload": payload})
    with pytest.raises(RecordError, match=r"cannot replay a 'arms' entry: arms: ") as info:
        Tracker.from_export(data)
    assert error in str(info.value) and "\n" not in str(info.value)
