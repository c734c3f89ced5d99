"""The phone's browser as the camera, end to end (issue 17): a real headless Chromium whose fake
camera plays a frame of the bundled recording opens the referee's phone page over HTTPS (the
certificate the referee made), pairs with the code the run printed, streams through getUserMedia,
and the referee, with the committed detector, sees the table: the Display and the Energy Row it
accepts are the recording's; the phone's page shows the framing assistant's verdict, and the
dashboard's Phone camera page the link and a new pairing code (after the PIN).
Chromium is started as tests/test_web_browser.py starts it (the system browser and driver,
nothing downloaded)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from referee.app.dashboard import serve_dashboard
from referee.app.live import Feed, LiveReferee, RunOptions
from referee.app.streams import PhoneFrames
from referee.gizmos import COLORS
from tests.test_web_browser import CHROMEDRIVER, CHROMIUM, FLAGS, need_browser, wait
from tests.web_testing import TEST_PIN
from vision.detect import default_model
from vision.frames import read_frame
from vision.observe import Observer
from vision.training.recording import ensure_recording
from web.live import FrameBuffer


def write_y4m(image: np.ndarray, path: Path, frames: int = 5, fps: int = 10) -> None:
    """A Y4M video (Chromium's fake camera takes one) of ``image`` held still."""
    height, width = image.shape[:2]
    planes = cv2.cvtColor(image, cv2.COLOR_BGR2YUV_I420).tobytes()
    with path.open("wb") as out:
        out.write(f"YUV4MPEG2 W{width} H{height} F{fps}:1 Ip A1:1 C420jpeg\n".encode())
        for _ in range(frames):
            out.write(b"FRAME\n" + planes)


@pytest.fixture
def phone_browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any]]:
    """The recording's first table as Chromium's camera; the browser accepts the referee's
    self-signed certificate (as the user does on the warning page) and grants the camera."""
    need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    recording = ensure_recording()
    _, _, first = next(recording.frames())
    video = tmp_path / "table.y4m"
    write_y4m(read_frame(first), video)
    monkeypatch.setenv("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    options.add_argument("--window-size=800,1000")
    options.add_argument("--use-fake-ui-for-media-stream")  # the camera prompt, answered "allow"
    options.add_argument("--use-fake-device-for-media-stream")
    options.add_argument(f"--use-file-for-fake-video-capture={video}")
    options.accept_insecure_certs = True
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver, recording
    finally:
        driver.quit()


@pytest.mark.slow
def test_a_phone_browser_pairs_streams_over_https_and_the_referee_sees_the_table(
    phone_browser: tuple[Any, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver, recording = phone_browser
    monkeypatch.setenv("GIZMOS_ADMIN_PIN", TEST_PIN)
    names = recording.names
    seats = tuple(range(len(names)))
    phone = PhoneFrames()
    frames = FrameBuffer(phone.name)
    frames.follow_link(phone.link_status)
    observer = Observer(default_model(), seats=seats)
    runner = LiveReferee(observer, lambda settings: Feed(phone), RunOptions(), frames)
    err = io.StringIO()
    app, server, url = serve_dashboard(runner, frames, tmp_path / "games", 0, err, "phone", phone=phone)
    try:
        assert url.startswith("https://127.0.0.1:")
        code = re.search(r"pair with the code (\d{6})", err.getvalue())
        assert code is not None, err.getvalue()
        assert "SHA-256 " in err.getvalue() and "is this machine only" in err.getvalue()
        game = app.extensions["gizmos_hub"].create(names, seed=None, deal=False)
        runner.launch(game, Feed(phone))

        driver.get(url + "phone")
        assert driver.execute_script("return window.isSecureContext") is True
        driver.find_element("id", "pair-input").send_keys(code[1])
        driver.find_element("id", "pair-button").click()
        status = lambda d: d.find_element("id", "status").text  # noqa: E731
        wait(driver, lambda d: "frames sent" in status(d), 60, "no frame was sent")
        assert "1280 x 720" in status(driver)

        truth = recording.truth(0)
        display = [[c.card for c in truth.display if c.level == level] for level in (1, 2, 3)]
        row = tuple(sum(1 for m in truth.energy_row if m.color == c) for c in COLORS)

        def seen(_: Any) -> bool:
            assert runner.error is None, runner.error
            with game.locked() as tracker:
                return [list(r) for r in tracker.state.display] == display and tracker.state.row == row

        wait(driver, seen, 240, "the referee never accepted the Display and Energy Row the phone showed")
        assert phone.received >= 3 and runner.stats.observed >= 1
        assert frames.status().calibrated and frames.status().link.startswith("connected")
        assert "frames sent" in status(driver)  # still streaming
        # the framing assistant's verdict reaches the phone's page
        advice = lambda d: d.find_element("id", "advice").text  # noqa: E731
        wait(driver, lambda d: "px/mm" in advice(d), 30, "the phone page never showed the framing")
        assert advice(driver).startswith("markers 0 (") and advice(driver).endswith(": good"), advice(driver)

        # the dashboard's side, in another tab: a new pairing code (the PIN asked for), the link
        phone_tab = driver.current_window_handle
        driver.switch_to.new_window("tab")
        driver.get(url + "phone/pair")
        wait(driver, lambda d: d.find_element("id", "phone-link").text.startswith("connected"), 30)
        assert "good" in driver.find_element("id", "phone-advice").text
        driver.find_element("id", "make-code").click()
        wait(driver, lambda d: d.find_element("id", "pin-input").is_displayed(), 10)
        driver.find_element("id", "pin-input").send_keys(TEST_PIN)
        driver.find_element("id", "pin-ok").click()
        wait(driver, lambda d: "Pairing code: " in d.find_element("id", "pair-code").text, 10)
        assert re.search(
            r"Pairing code: \d{6} \(valid 10 minutes, once\)", driver.find_element("id", "pair-code").text
        )
        driver.switch_to.window(phone_tab)
    finally:
        runner.stop()
        server.shutdown()
