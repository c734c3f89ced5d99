"""Evidence for disputes, end to end on the bundled recording: the live runner (the application
layer) crops the camera's view of the zones a warning is about, just before and just after the
move, into the record; the dashboard serves both crops with the warning, on the table and in the
replay.

The recording's frames go through the real calibration, zones and identification with the
recording's true boxes standing in for the detector (``oracle_observer``: no YOLO on a busy CPU),
and its dispenser log through the virtual board, until the first rule broken on purpose (turn 8,
a second marble taken from the Row) has been warned about.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from referee.app.demo import recording_feed
from referee.app.evidence import changed_zones
from referee.app.live import Change, LiveReferee, RunOptions, replay_settings
from referee.app.pipeline import oracle_observer
from tests.web_testing import ApiClient, hub_of, make_app
from vision.training.recording import ensure_recording


def test_a_warning_on_the_bundled_recording_shows_its_before_and_after_crops(tmp_path: Path) -> None:
    recording = ensure_recording()
    first = recording.injections()[0]
    assert (first["code"], first["turn"]) == ("SECOND_MAIN_ACTION", 8)
    runner: LiveReferee

    def stop_at_the_first_warning(change: Change) -> None:
        if change.warnings:
            runner.stop()  # from the runner's own thread: it ends after this frame

    runner = LiveReferee(
        oracle_observer(recording),
        lambda settings: recording_feed(recording, runner, lockstep=True),
        RunOptions(speed=0.0),
        on_change=stop_at_the_first_warning,
    )
    app = make_app(tmp_path / "games")
    game = hub_of(app).create(recording.names, seed=None, deal=False)
    with game.locked() as tracker:
        tracker.settings = replay_settings(tracker.settings)
    runner.run(game, recording_feed(recording, runner, lockstep=True))

    api = ApiClient(app)
    view = api.get(f"/api/games/{game.id}").get_json()["view"]
    warning = view["warnings"][0]
    assert (warning["code"], warning["turn"], warning["player"]) == ("SECOND_MAIN_ACTION", 8, first["player"])
    evidence = view["evidence"][str(warning["id"])]
    assert evidence["moments"] == ["before", "after"]
    assert "row" in evidence["zones"] and f"ring {first['player']}" in evidence["zones"]
    crops = {}
    for moment in ("before", "after"):
        resp = api.get(f"/api/games/{game.id}/warnings/{warning['id']}/evidence/{moment}.jpg")
        assert resp.status_code == 200 and resp.mimetype == "image/jpeg"
        assert len(resp.data) < 64 * 1024, "a small crop"
        image = cv2.imdecode(np.frombuffer(resp.data, np.uint8), cv2.IMREAD_COLOR)
        assert image is not None and max(image.shape[:2]) <= 320 and min(image.shape[:2]) >= 16
        crops[moment] = image
    assert crops["before"].shape == crops["after"].shape  # the same part of the table
    assert float(np.abs(crops["before"].astype(int) - crops["after"].astype(int)).mean()) > 1.0
    # the replay shows them with the warning, at the moment it was raised
    replay = api.get(f"/api/games/{game.id}/replay").get_json()
    shown = next(w for w in replay["warnings"] if w["id"] == warning["id"])
    assert shown["evidence"]["before"].endswith("/before.jpg") and shown["evidence"]["after"].endswith(
        "/after.jpg"
    )
    assert any(warning["id"] in m["warnings"] for m in replay["moments"])
    # and the table page loads the script that draws them beside the warning
    page = api.get(f"/games/{game.id}")
    assert page.status_code == 200 and b"evidence.js" in page.data


def test_the_zones_involved_are_those_read_differently() -> None:
    from referee.tracker.view import SeatView, TableView

    before = TableView({(1, 0): 5}, (1, 0, 0, 0), (SeatView((0, 0, 0, 0), frozenset(), frozenset(), 0),))
    after = TableView({(1, 0): 5}, (0, 0, 0, 0), (SeatView((1, 0, 0, 0), frozenset(), frozenset(), 0),))
    assert changed_zones(before, after) == ["row", "ring 0"]
    assert changed_zones(before, before) == []
