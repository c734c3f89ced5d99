"""The phone's browser as the camera (issue 17): pairing, who may send frames, bad frames, the
HTTPS certificate, and ``run --camera phone``'s bad input. The real browser: test_phone_browser.py."""

from __future__ import annotations

import datetime
import ssl
import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from flask import Flask
from werkzeug.test import TestResponse

from referee.app.cli import main
from referee.app.errors import LiveError
from referee.app.sources import open_source
from referee.app.streams import PhoneFrames
from tests.web_testing import TEST_PIN, ApiClient, make_app
from web.phone import Pairing, pairing_of
from web.tls import ensure_certificate, server_context


def jpeg(value: int = 120, size: tuple[int, int] = (64, 48)) -> bytes:
    ok, buf = cv2.imencode(".jpg", np.full((size[1], size[0], 3), value, np.uint8))
    assert ok
    return buf.tobytes()


@pytest.fixture
def phone_app(tmp_path: Path) -> tuple[Flask, PhoneFrames]:
    sink = PhoneFrames()
    return make_app(tmp_path / "games", PHONE_CAMERA=sink), sink


def send_frame(client: ApiClient, data: bytes, kind: str = "image/jpeg", csrf: bool = True) -> TestResponse:
    return client.send("POST", "/api/phone/frame", pin=None, csrf=csrf, data=data, content_type=kind)


def pair(client: ApiClient, code: str) -> TestResponse:
    return client.send("POST", "/api/phone/pair", {"code": code}, pin=None)


def test_only_the_paired_phone_may_send_frames(phone_app: tuple[Flask, PhoneFrames]) -> None:
    app, sink = phone_app
    phone = ApiClient(app)
    resp = send_frame(phone, jpeg())
    assert resp.status_code == 403 and "not the paired phone" in resp.get_json()["error"]
    assert sink.received == 0

    assert pair(phone, TEST_PIN).status_code == 200
    resp = send_frame(phone, jpeg(200))
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json()["link"].startswith("connected")
    assert sink.received == 1
    frame = next(sink.frames())
    assert frame.image.shape == (48, 64, 3) and abs(int(frame.image.mean()) - 200) <= 2

    # a second phone pairs (with a code the admin made): the first one is refused from then on
    admin = ApiClient(app)
    code = admin.post("/api/phone/code", {}).get_json()["code"]
    other = ApiClient(app)
    assert pair(other, code).status_code == 200
    assert send_frame(other, jpeg()).status_code == 200
    assert send_frame(phone, jpeg()).status_code == 403
    assert pair(ApiClient(app), code).status_code == 403  # a code is good once

    # the admin unpairs: nobody may send
    assert admin.post("/api/phone/unpair", {}).status_code == 200
    assert send_frame(other, jpeg()).status_code == 403
    assert sink.received == 2


def test_pairing_and_frames_need_the_csrf_token_and_codes_need_the_admin(
    phone_app: tuple[Flask, PhoneFrames],
) -> None:
    app, _ = phone_app
    phone = ApiClient(app)
    resp = phone.send("POST", "/api/phone/pair", {"code": TEST_PIN}, pin=None, csrf=False)
    assert resp.status_code == 403 and "CSRF" in resp.get_json()["error"]
    assert pair(phone, TEST_PIN).status_code == 200
    resp = send_frame(phone, jpeg(), csrf=False)
    assert resp.status_code == 403 and "CSRF" in resp.get_json()["error"]
    resp = phone.send(
        "POST",
        "/api/phone/frame",
        pin=None,
        data=jpeg(),
        content_type="image/jpeg",
        headers={"Origin": "https://evil.example"},
    )
    assert resp.status_code == 403 and "Origin" in resp.get_json()["error"]
    resp = phone.send("POST", "/api/phone/code", {}, pin=None)
    assert resp.status_code == 401 and "admin PIN required" in resp.get_json()["error"]


def test_bad_pairing_and_bad_frames_are_one_clear_json_line(phone_app: tuple[Flask, PhoneFrames]) -> None:
    app, sink = phone_app
    phone = ApiClient(app)
    for body, message in (
        ({}, "pairing.code: required"),
        ({"code": 123456}, "pairing.code"),
        ({"code": ""}, "pairing.code"),
        ({"code": "1", "pin": "2"}, "pairing"),
        (["x"], "expected an object"),
    ):
        resp = phone.send("POST", "/api/phone/pair", body, pin=None)
        assert resp.status_code == 400 and message in resp.get_json()["error"], body
    resp = pair(phone, "000000")
    assert resp.status_code == 403 and "wrong pairing code or PIN" in resp.get_json()["error"]
    assert pair(phone, TEST_PIN).status_code == 200
    resp = send_frame(phone, b"not an image at all")
    assert resp.status_code == 400 and "not a JPEG image" in resp.get_json()["error"]
    resp = send_frame(phone, b"\xff\xd8" + b"\0" * 100)
    assert resp.status_code == 400 and "102 bytes that do not decode" in resp.get_json()["error"]
    resp = send_frame(phone, jpeg(), kind="image/png")
    assert resp.status_code == 415 and "image/jpeg" in resp.get_json()["error"]
    resp = send_frame(phone, b"\xff\xd8" + b"\0" * (2 << 20))
    assert resp.status_code == 413
    assert sink.received == 0


def test_without_a_phone_camera_the_routes_say_how_to_get_one(tmp_path: Path) -> None:
    app = make_app(tmp_path / "games")
    client = ApiClient(app)
    resp = pair(client, TEST_PIN)
    assert resp.status_code == 404 and "run --camera phone" in resp.get_json()["error"]
    assert client.get("/api/phone").get_json()["available"] is False
    page = client.get("/phone")
    assert page.status_code == 200 and b"run --camera phone" in page.data


def test_the_phone_page_is_served_with_its_script_under_the_content_policy(
    phone_app: tuple[Flask, PhoneFrames],
) -> None:
    app, _ = phone_app
    client = ApiClient(app)
    page = client.get("/phone")
    assert page.status_code == 200
    assert b'src="/static/phone.js"' in page.data and b"<script>" not in page.data
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert client.get("/static/phone.js").status_code == 200
    assert b"Show a pairing code" in client.get("/phone/pair").data


def test_a_code_expires_and_wrong_tries_void_it() -> None:
    pairing = Pairing(ttl_s=0.05, tries=2)
    code, _ = pairing.new_code()
    time.sleep(0.1)
    assert not pairing.use_code(code)
    code, _ = pairing.new_code()
    wrong = f"{(int(code) + 1) % 10**6:06d}"
    assert not pairing.use_code(wrong) and not pairing.use_code(wrong)
    assert not pairing.use_code(code)  # two wrong tries voided it
    code, _ = pairing.new_code()
    assert pairing.use_code(code) and not pairing.paired()
    token = pairing.pair()
    assert pairing.is_phone(token) and not pairing.is_phone("x") and not pairing.is_phone(None)


def test_the_phone_link_says_when_frames_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    sink = PhoneFrames()
    assert sink.link_status().startswith("waiting for the phone")
    sink.offer(np.zeros((8, 8, 3), np.uint8))
    assert sink.link_status().startswith("connected")
    monkeypatch.setattr("referee.app.streams.PHONE_QUIET_S", -1.0)
    assert "no frame from the phone for" in sink.link_status()
    with pytest.raises(ValueError, match="colour image"):
        sink.offer(np.zeros((8, 8), np.uint8))


def test_the_phone_feed_reads_again_after_a_stop() -> None:
    sink = PhoneFrames()
    got: list[int] = []

    def run() -> None:
        for frame in sink.frames():
            got.append(int(frame.image[0, 0, 0]))

    for value in (10, 20):
        reader = threading.Thread(target=run)
        reader.start()
        sink.offer(np.full((4, 4, 3), value, np.uint8))
        deadline = time.monotonic() + 5
        while value not in got and time.monotonic() < deadline:
            time.sleep(0.01)
        sink.close()
        reader.join(5)
        assert not reader.is_alive()
    assert got == [10, 20]


def test_the_certificate_is_made_once_and_again_for_new_names(tmp_path: Path) -> None:
    from cryptography import x509

    first = ensure_certificate(tmp_path, ["phone.lan", "192.168.1.5"])
    assert (first.key.stat().st_mode & 0o777) == 0o600
    again = ensure_certificate(tmp_path, ["192.168.1.5"])
    assert again.fingerprint == first.fingerprint  # the phone's browser remembers it
    other = ensure_certificate(tmp_path, ["192.168.1.5", "10.0.0.2"])
    assert other.fingerprint != first.fingerprint
    cert = x509.load_pem_x509_certificate(other.cert.read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert {str(n.value) for n in names} == {"192.168.1.5", "10.0.0.2"}
    assert cert.not_valid_after_utc > datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=365)
    assert isinstance(server_context(other), ssl.SSLContext)


def test_a_code_made_at_start_pairs(phone_app: tuple[Flask, PhoneFrames]) -> None:
    app, _ = phone_app
    code, ttl = pairing_of(app).new_code()
    assert ttl == 600 and len(code) == 6
    assert pair(ApiClient(app), code).status_code == 200


def test_phone_as_a_plain_source_or_without_the_dashboard_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(LiveError, match="only run --camera phone serves"):
        open_source("phone")
    status = main(
        [
            "run",
            "--camera",
            "phone",
            "--players",
            "Ana",
            "Ben",
            "--no-serve",
            "--games-dir",
            str(tmp_path / "games"),
        ]
    )
    err = capsys.readouterr().err
    assert status == 2
    assert err.strip().splitlines() == [
        "gizmos-referee run: error: --camera phone: the phone sends its frames to the dashboard; "
        "drop --no-serve"
    ]


def test_stopping_the_referee_wakes_a_phone_that_sends_nothing(tmp_path: Path) -> None:
    from referee.app.live import Feed, LiveReferee, LocalGame
    from referee.tracker import Tracker

    phone = PhoneFrames()
    runner = LiveReferee(None, lambda s: Feed(phone))  # type: ignore[arg-type]
    runner.launch(LocalGame(Tracker.create(tmp_path / "g.sqlite", ["Ana", "Ben"])), Feed(phone))
    time.sleep(0.2)
    assert runner.status() == "running"  # waiting for the phone's first frame
    started = time.monotonic()
    runner.stop()
    assert runner.status() == "stopped" and time.monotonic() - started < 2.0
