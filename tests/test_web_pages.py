"""The pages, the card pictures, the security headers, and ``gizmos-referee serve``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import cv2
import numpy as np
import pytest
from flask import Flask

from referee.app.cli import main as cli_main
from tests.web_testing import ApiClient, hub_of, make_app
from vision.faces import face_set
from web.live import FrameBuffer
from web.serve import ServeError, config_from, is_loopback, make_dashboard_server

REPO = Path(__file__).resolve().parents[1]


def embedded(html: str, element_id: str) -> object:
    m = re.search(rf'<script type="application/json" id="{element_id}">(.*?)</script>', html, re.S)
    assert m, element_id
    return json.loads(m.group(1))


def test_index_goes_to_setup_then_to_the_active_game(app: Flask) -> None:
    api = ApiClient(app)
    first = api.get("/")
    assert first.status_code == 302 and first.headers["Location"] == "/setup"
    gid = api.new_game()
    assert api.get("/").headers["Location"] == f"/games/{gid}"


def test_the_table_page_embeds_the_snapshot_and_no_secret(tmp_path: Path) -> None:
    pin = "73915"
    app = make_app(tmp_path, ADMIN_PIN=pin)
    api = ApiClient(app)
    gid = api.post("/api/games", {"names": ["Ana", "Ben"], "deal": True, "seed": 3}, pin=pin).get_json()["id"]
    resp = api.get(f"/games/{gid}")
    html = resp.get_data(as_text=True)
    assert resp.status_code == 200 and resp.mimetype == "text/html"
    snapshot = embedded(html, "initial")
    assert isinstance(snapshot, dict)
    assert (
        snapshot["view"]["names"] == ["Ana", "Ben"]
        and snapshot["id"] == hub_of(app).get(gid).event_since(None)["id"]
    )
    cards = embedded(html, "cards")
    assert isinstance(cards, list) and len(cards) == 112
    assert f'<meta name="csrf-token" content="{api.csrf}">' in html
    assert pin not in html and "ADMIN_PIN" not in html
    assert 'src="/static/table.js"' in html and "No camera" in html
    assert "<script>" not in html  # no inline script: the CSP forbids it


def test_pages_send_security_headers(app: Flask) -> None:
    api = ApiClient(app)
    for url in ("/setup", "/camera", "/api/session", "/static/app.css"):
        resp = api.get(url)
        assert resp.status_code == 200, url
        csp = resp.headers["Content-Security-Policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
        assert resp.headers["X-Frame-Options"] == "DENY"
    session_cookie = app.test_client().get("/api/session").headers["Set-Cookie"]
    assert "HttpOnly" in session_cookie and "SameSite=Strict" in session_cookie


def test_static_files_reference_nothing_remote() -> None:
    for path in (REPO / "web").rglob("*"):
        if path.suffix in (".html", ".js", ".css"):
            # the SVG namespace is a name (createElementNS), never fetched
            text = path.read_text(encoding="utf-8").replace('"http://www.w3.org/2000/svg"', '""')
            assert not re.search(r"https?://", text), f"{path} references a remote resource"
            assert "@import" not in text and "@font-face" not in text, path


def test_scores_camera_and_setup_pages(tmp_path: Path) -> None:
    frames = FrameBuffer("camera 0")
    frames.set_status(False, "markers [1, 2] not found")
    app = make_app(tmp_path, FRAME_SOURCE=frames, CAMERA_SOURCE="0", SERIAL_PORT="/dev/ttyUSB0")
    api = ApiClient(app)
    gid = api.new_game(["Ana", "Ben"])
    api.post(f"/api/games/{gid}/end")
    scores = api.get(f"/games/{gid}/scores").get_data(as_text=True)
    assert 'data-scores-only="1"' in scores and embedded(scores, "initial")["view"]["game_over"] is True
    camera = api.get("/camera").get_data(as_text=True)
    assert (
        'src="/api/camera.mjpg"' in camera
        and "not calibrated" in camera
        and "markers [1, 2] not found" in camera
    )
    assert 'src="/static/questions.js"' in camera and 'id="questions"' in camera  # cards it cannot place
    table = api.get(f"/games/{gid}").get_data(as_text=True)
    assert 'id="camera-img"' in table
    setup = api.get("/setup").get_data(as_text=True)
    assert 'value="/dev/ttyUSB0"' in setup and "Ana, Ben" in setup and f"/api/games/{gid}/export" in setup
    assert "camera 0" in setup and "not calibrated" in setup


def test_unknown_pages_are_404(app: Flask) -> None:
    api = ApiClient(app)
    assert api.get("/games/nope").status_code == 404
    assert api.get("/games/nope/scores").status_code == 404
    assert api.get("/nothing").status_code == 404


def test_card_pictures_are_the_vision_faces(app: Flask) -> None:
    api = ApiClient(app)
    resp = api.get("/cards/57.png")
    assert resp.status_code == 200 and resp.mimetype == "image/png"
    assert resp.headers["Cache-Control"] == "no-cache"  # a face can change: an enrolled photo
    img = cv2.imdecode(np.frombuffer(resp.data, np.uint8), cv2.IMREAD_COLOR)
    assert np.array_equal(img, face_set()[57])  # PNG is lossless: the very same face
    again = api.get("/cards/57.png", headers={"If-None-Match": resp.headers["ETag"]})
    assert again.status_code == 304
    back = api.get("/cards/back-2.png")
    assert back.status_code == 200 and back.mimetype == "image/png"
    assert "max-age" in back.headers["Cache-Control"]  # a back never changes
    for bad in ("/cards/112.png", "/cards/back-0.png", "/cards/back-4.png", "/cards/x.png"):
        assert api.get(bad).status_code == 404, bad


def test_enrolled_faces_are_served(tmp_path: Path) -> None:
    enrol = tmp_path / "enrol"
    enrol.mkdir()
    photo = np.full((352, 252, 3), (20, 140, 60), np.uint8)
    cv2.imwrite(str(enrol / "57.png"), photo)
    api = ApiClient(make_app(tmp_path, ENROL_DIR=str(enrol)))
    img = cv2.imdecode(np.frombuffer(api.get("/cards/57.png").data, np.uint8), cv2.IMREAD_COLOR)
    assert np.array_equal(img, photo)


def test_only_trusted_hosts_are_answered(tmp_path: Path) -> None:
    api = ApiClient(make_app(tmp_path, TRUSTED_HOSTS=["127.0.0.1", "localhost"]))
    assert api.get("/api/session", headers={"Host": "127.0.0.1:8000"}).status_code == 200
    assert api.get("/api/session", headers={"Host": "evil.example"}).status_code == 400


# ------------------------------------------------------------------ gizmos-referee serve


def test_serve_configuration() -> None:
    import argparse

    from web.serve import add_arguments

    p = argparse.ArgumentParser()
    add_arguments(p)
    local = config_from(p.parse_args([]), "2468")
    assert local["TRUSTED_HOSTS"] == ["127.0.0.1", "localhost"] and local["GAMES_DIR"] == "games"
    lan = config_from(p.parse_args(["--host", "0.0.0.0", "--trusted-host", "table.local"]), "2468")
    assert lan["TRUSTED_HOSTS"] == ["table.local"]
    assert config_from(p.parse_args(["--host", "0.0.0.0"]), "2468")["TRUSTED_HOSTS"] is None
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")


def test_serve_refuses_bad_options_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GIZMOS_ADMIN_PIN", "12")
    assert cli_main(["serve", "--port", "8000"]) == 2
    assert capsys.readouterr().err == (
        "gizmos-referee serve: error: the admin PIN must be 4 to 64 printable characters, "
        "without surrounding spaces\n"
    )
    monkeypatch.setenv("GIZMOS_ADMIN_PIN", "2468")
    assert cli_main(["serve", "--port", "70000"]) == 2
    assert "--port: expected 1..65535" in capsys.readouterr().err
    assert cli_main(["serve", "--demo", "-1"]) == 2
    assert "--demo" in capsys.readouterr().err


def test_the_server_has_no_version_banner_and_a_busy_port_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server = make_dashboard_server("127.0.0.1", 0, make_app(tmp_path))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.port}/api/session"
        with urllib.request.urlopen(url, timeout=10) as resp:
            assert resp.headers["Server"] == "gizmos-referee"  # no Werkzeug/x Python/y
        with pytest.raises(ServeError, match=r"^cannot listen on 127\.0\.0\.1:\d+: the port is in use"):
            make_dashboard_server("127.0.0.1", server.port, make_app(tmp_path))
        monkeypatch.setenv("GIZMOS_ADMIN_PIN", "2468")
        argv = ["serve", "--port", str(server.port), "--games-dir", str(tmp_path)]
        assert cli_main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "the port is in use by another program" in err, err
    finally:
        server.shutdown()
        thread.join(timeout=10)
    for host, port, why in [("999.1.1.1", 8000, "not an address"), ("127.0.0.1", 99999, "--port")]:
        with pytest.raises(ServeError, match=why):
            make_dashboard_server(host, port, make_app(tmp_path))


def test_serve_runs_the_dashboard(tmp_path: Path) -> None:
    """The real command: it binds to 127.0.0.1, prints where, and answers."""
    env = {**os.environ, "GIZMOS_ADMIN_PIN": "2468", "PYTHONUNBUFFERED": "1"}
    cmd = [
        sys.executable,
        "-m",
        "referee.app.cli",
        "serve",
        "--port",
        "0",
        "--games-dir",
        str(tmp_path),
        "--demo",
        "2",
    ]
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stderr is not None
        lines = [proc.stderr.readline(), proc.stderr.readline()]
        assert lines[0].startswith("serve: demo game ")
        m = re.match(r"serve: the dashboard is at (http://127\.0\.0\.1:\d+/) ", lines[1])
        assert m, lines
        with urllib.request.urlopen(m.group(1) + "api/games", timeout=10) as resp:
            games = json.load(resp)
        assert len(games["games"]) == 1 and games["games"][0]["names"] == ["Ana", "Ben", "Chloé"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_card_picture_shows_the_photo_enrolled_while_the_dashboard_runs(tmp_path: Path) -> None:
    """An answered question or a confirmed spread enrols a photo: the card's picture is drawn
    again from it at once (it was cached as the drawn face before)."""
    from vision.enrol import remember

    enrol = tmp_path / "enrol"
    enrol.mkdir()
    api = ApiClient(make_app(tmp_path / "games", ENROL_DIR=str(enrol)))
    before = api.get("/cards/57.png")
    drawn = cv2.imdecode(np.frombuffer(before.data, np.uint8), cv2.IMREAD_COLOR)
    assert np.array_equal(drawn, face_set()[57])
    photo = np.full_like(drawn, (40, 160, 220))
    cv2.putText(photo, "57", (20, 120), cv2.FONT_HERSHEY_SIMPLEX, 3, (0, 0, 0), 5)
    remember(enrol, 57, photo)
    after = api.get("/cards/57.png", headers={"If-None-Match": before.headers["ETag"]})
    assert after.status_code == 200 and after.headers["ETag"] != before.headers["ETag"]
    shown = cv2.imdecode(np.frombuffer(after.data, np.uint8), cv2.IMREAD_COLOR)
    assert np.array_equal(shown, face_set(enrol)[57]) and not np.array_equal(shown, drawn)
