"""Settings that persist (issue 20, item 6): saved beside the game records, read at the next
start, given on the command line in their place; ``serve`` attaches the camera pipeline, and
says what to run where it has none."""

from __future__ import annotations

import argparse
import json
import re
import socket
from pathlib import Path

import pytest

from referee.app.cli import main as cli_main
from referee.app.dashboard import serve_runner
from referee.app.errors import LiveError
from referee.app.pipeline import LazyVision
from tests.web_testing import ApiClient, make_app
from web.settings_file import SettingsFileError, load_settings


def test_settings_survive_a_restart(tmp_path: Path) -> None:
    games = tmp_path / "games"
    api = ApiClient(make_app(games))
    put = api.send(
        "PUT", "/api/settings", {"camera_source": "http://cam.local/video", "serial_port": "/dev/ttyACM0"}
    )
    assert put.status_code == 200
    saved = json.loads((games / "settings.json").read_text())
    assert saved == {
        "format": "gizmos-settings",
        "version": 1,
        "camera_source": "http://cam.local/video",
        "serial_port": "/dev/ttyACM0",
    }
    again = ApiClient(make_app(games)).get("/api/settings").get_json()  # a new server, same folder
    assert (again["camera_source"], again["serial_port"]) == ("http://cam.local/video", "/dev/ttyACM0")
    assert again["saved_in"] == str(games / "settings.json")
    assert not list(games.glob(".settings-*")), "no temporary file is left behind"


def test_settings_given_to_the_server_take_the_place_of_the_saved_ones(tmp_path: Path) -> None:
    games = tmp_path / "games"
    ApiClient(make_app(games)).send("PUT", "/api/settings", {"camera_source": "1", "serial_port": "/dev/a"})
    given = ApiClient(make_app(games, CAMERA_SOURCE="2")).get("/api/settings").get_json()
    assert (given["camera_source"], given["serial_port"]) == ("2", "/dev/a")
    assert load_settings(games / "settings.json").camera_source == "2"  # and kept for the next start


def test_a_settings_file_that_cannot_be_written_changes_nothing(tmp_path: Path) -> None:
    games = tmp_path / "games"
    api = ApiClient(make_app(games))
    assert api.send("PUT", "/api/settings", {"camera_source": "0"}).status_code == 200
    (games / "settings.json").unlink()
    (games / "settings.json").mkdir()  # the rename over it fails, as on a full or broken disk
    resp = api.send("PUT", "/api/settings", {"camera_source": "5"})
    assert resp.status_code == 503 and "nothing was changed" in resp.get_json()["error"]
    assert api.get("/api/settings").get_json()["camera_source"] == "0"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{not json", "not valid JSON"),
        ('{"camera_source": "0"}', 'expected {"format": "gizmos-settings"'),
        ('{"format": "gizmos-settings", "version": 1, "serial_port": 5}', "settings.serial_port"),
    ],
)
def test_a_bad_settings_file_is_one_line_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str, why: str
) -> None:
    games = tmp_path / "games"
    games.mkdir()
    (games / "settings.json").write_text(text)
    with pytest.raises(SettingsFileError, match=re.escape(why)):
        make_app(games)
    monkeypatch.setenv("GIZMOS_ADMIN_PIN", "2468")
    assert cli_main(["serve", "--port", "0", "--games-dir", str(games)]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1 and err.startswith("gizmos-referee serve: error: settings file") and why in err
    )


def test_serve_attaches_the_camera_pipeline_and_start_opens_the_saved_source(tmp_path: Path) -> None:
    runner, frames = serve_runner()
    api = ApiClient(make_app(tmp_path / "games", LIVE_RUNNER=runner, FRAME_SOURCE=frames))
    settings = api.get("/api/settings").get_json()
    assert settings["live_runner"] is True and "Start live refereeing" in settings["camera_hint"]
    gid = api.new_game(["Ana", "Ben"])
    no_source = api.post(f"/api/games/{gid}/live", {"action": "start"})
    assert (
        no_source.status_code == 409
        and "no camera source: set one on the setup page" in no_source.get_json()["error"]
    )
    missing = tmp_path / "no-such-video.mp4"
    api.send("PUT", "/api/settings", {"camera_source": str(missing)})
    resp = api.post(f"/api/games/{gid}/live", {"action": "start"})
    assert resp.status_code == 409 and str(missing) in resp.get_json()["error"]
    assert runner.status() == "stopped"


def test_a_missing_detector_is_named_when_live_refereeing_starts(tmp_path: Path) -> None:
    with pytest.raises(LiveError, match=r"detector model .*missing\.onnx not found"):
        LazyVision(model=tmp_path / "missing.onnx").build()


def test_serve_without_a_pipeline_says_what_to_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from web.serve import add_arguments, run

    p = argparse.ArgumentParser()
    add_arguments(p)
    args = p.parse_args(["--port", "70000", "--games-dir", str(tmp_path), "--camera-source", "0"])
    monkeypatch.setenv("GIZMOS_ADMIN_PIN", "2468")
    assert run(args) == 2  # the bad port is found first: nothing is started or saved
    assert "--port" in capsys.readouterr().err and not (tmp_path / "settings.json").exists()
    api = ApiClient(make_app(tmp_path, CAMERA_SOURCE="0"))
    hint = api.get("/api/settings").get_json()["camera_hint"]
    assert "gizmos-referee run --camera 0 --players" in hint
    gid = api.new_game(["Ana", "Ben"])
    resp = api.post(f"/api/games/{gid}/live", {"action": "start"})
    assert resp.status_code == 409 and "gizmos-referee run --camera SOURCE" in resp.get_json()["error"]
    with socket.socket() as busy:  # serve says it on the terminal too (then stops: the port is taken)
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        args = p.parse_args(["--port", str(busy.getsockname()[1]), "--games-dir", str(tmp_path)])
        assert run(args) == 2
    err = capsys.readouterr().err
    assert "camera source '0' is saved, but this server has no camera pipeline" in err
    assert "gizmos-referee run --camera 0 --players NAME NAME" in err
