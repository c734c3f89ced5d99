"""The dashboard in a real headless Chromium (Debian's chromium + chromium-driver, via Selenium).

Opens the table page, sees a live update arrive without a reload, dismisses a warning with the
PIN, plays a turn in manual mode, ends the game and saves a screenshot of the final scoring
screen (under the test's tmp dir; with GIZMOS_DOCS_IMG=1 also copied to docs/img/ for the docs,
so an ordinary test run leaves the checkout as it was). Nothing is downloaded:
Selenium is given the system driver and browser. Without them the test fails and says to run
scripts/setup.sh --dev.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import request
from werkzeug.serving import make_server

from tests.web_testing import TEST_PIN, break_a_rule, hub_of, make_app
from web.demo import play_random

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
DOCS_IMG = Path(__file__).resolve().parents[1] / "docs" / "img"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def need_browser() -> None:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.fail(
            f"the browser test needs Debian's chromium and chromium-driver ({', '.join(missing)} missing): "
            "run scripts/setup.sh --dev (as root it installs them with apt)"
        )
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.fail("the browser test needs selenium: run scripts/setup.sh --dev (it installs the extras)")


def test_a_missing_browser_fails_and_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "CHROMIUM", Path("/nonexistent/chromium"))
    with pytest.raises(pytest.fail.Exception, match=r"/nonexistent/chromium missing\): run scripts/setup.sh"):
        need_browser()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The dashboard on 127.0.0.1 (a free port) in a thread; event streams end every few
    seconds so the browser's reconnection (with Last-Event-ID) is exercised too."""
    app = make_app(tmp_path / "games", SSE_MAX_S=4.0, SSE_HEARTBEAT_S=1.0)
    reconnects: list[str] = []

    @app.before_request
    def note_reconnects() -> None:
        if request.path.endswith("/events") and "Last-Event-ID" in request.headers:
            reconnects.append(request.headers["Last-Event-ID"])

    srv = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"app": app, "url": f"http://127.0.0.1:{srv.port}", "reconnects": reconnects}
    finally:
        srv.shutdown()
        thread.join(timeout=10)


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager must never download anything
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    options.add_argument("--window-size=1400,1000")
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def wait(driver: Any, what: Any, timeout: float = 30.0, message: str = "") -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(what, message)


def seq(driver: Any) -> int:
    return int(driver.find_element("id", "game").get_attribute("data-seq"))


def click_and_wait(driver: Any, element: Any) -> None:
    """Click a step button and wait for the snapshot it causes to arrive."""
    before = seq(driver)
    element.click()
    wait(
        driver,
        lambda d: seq(d) > before and d.find_element("id", "legal").get_attribute("data-busy") != "1",
        message="the step's update never arrived",
    )


def play_one_turn(driver: Any, game: Any) -> None:
    """Manual mode: a main action and any random outcomes and choices, each the first offered,
    until the turn ends (by itself when nothing is left to do, else with End the turn)."""
    turn = game.tracker.state.turn
    for _ in range(30):
        if game.tracker.state.turn > turn:
            return
        groups = {
            g.get_attribute("data-kind"): g for g in driver.find_elements("css selector", "#legal .group")
        }
        for kind in ("reveal", "dispense", "bottom", "skip", "pick", "file", "research", "build", "end_turn"):
            group = next((g for k, g in groups.items() if kind in k.split()), None)
            if group is not None:
                button = group.find_element("css selector", "button")
                assert not group.find_elements("css selector", "select"), "a #n list to choose from"
                click_and_wait(driver, button)
                break
        else:
            wait(driver, lambda d: game.tracker.state.turn > turn, message=f"no step to play: {list(groups)}")
    raise AssertionError("the turn did not end within 30 steps")


def test_the_dashboard_in_chromium(server: dict[str, Any], browser: Any, tmp_path: Path) -> None:
    app = server["app"]
    hub = hub_of(app)
    game = hub.create(["Ana", "Ben", "Chloé"], seed=7, deal=True)
    play_random(game, random.Random(7), 105)  # 35 rounds in, near the end: something to look at
    assert not game.tracker.state.game_over and game.tracker.state.current == 0

    # 1. The table page draws the game and goes live.
    browser.get(f"{server['url']}/games/{game.id}")
    wait(
        browser,
        lambda d: d.find_element("id", "conn").text == "live",
        message="the event stream never opened",
    )
    assert "Ana" in browser.find_element("id", "status").text
    assert len(browser.find_elements("css selector", "#display figure.card")) >= 8
    assert len(browser.find_elements("css selector", "#players .player")) == 3
    assert browser.find_elements("css selector", "#warnings .none")
    browser.execute_script("window.__samePage = 'not reloaded';")

    # 2. A live update arrives without a reload: a rule broken at the table, as the camera sees it.
    threading.Thread(target=break_a_rule, args=(game,)).start()
    warning = wait(
        browser,
        lambda d: d.find_elements("css selector", "#warnings li.warning.status-open"),
        message="the warning never reached the page",
    )[0]
    assert browser.execute_script("return window.__samePage") == "not reloaded"
    assert "Rule broken" in warning.text and "Ruling 7" in warning.text and "What to do" in warning.text
    assert "Ben" in browser.find_element("id", "status").text  # Ana's turn was accepted and ended

    # 3. Dismiss it: the PIN is asked for, then the warning is marked dismissed.
    warning.find_element("xpath", ".//button[text()='Dismiss']").click()
    dialog = wait(
        browser,
        lambda d: d.find_element("id", "pin-dialog").is_displayed() and d.find_element("id", "pin-dialog"),
    )
    assert "admin PIN" in dialog.text
    browser.find_element("id", "pin-input").send_keys(TEST_PIN)
    browser.find_element("id", "pin-ok").click()
    wait(
        browser,
        lambda d: d.find_elements("css selector", "#warnings li.warning.status-dismissed"),
        message="the dismissal never showed",
    )
    assert game.tracker.warnings[0].status == "dismissed"
    assert TEST_PIN not in browser.page_source
    assert browser.execute_script("return document.getElementById('pin-input').value") == ""
    assert "Unlocked" in browser.find_element("id", "admin-btn").text

    # 4. Ben plays a turn in manual mode.
    turn, rnd = game.tracker.state.turn, game.tracker.state.round
    play_one_turn(browser, game)
    assert game.tracker.state.turn == turn + 1 and game.tracker.state.current == 2
    newest = browser.find_element("css selector", "#log li.entry")
    assert newest.text.startswith(f"R{rnd}") and "Ben " in newest.text and newest.text.endswith(".")
    assert "Chloé" in browser.find_element("id", "status").text
    browser.execute_script("window.scrollTo(0, 0); document.getElementById('toast').hidden = true;")
    browser.set_window_size(1400, 1500)
    browser.save_screenshot(str(tmp_path / "table.png"))
    browser.set_window_size(1400, 1000)

    # The server drops event streams every 4 s: the browser reconnects, says which snapshot it
    # saw last, and later changes still arrive on the same page.
    wait(browser, lambda d: server["reconnects"], message="the browser never reconnected to the event stream")
    assert all(r.startswith(game.epoch + ".") for r in server["reconnects"])
    before = seq(browser)
    threading.Thread(target=play_random, args=(game, random.Random(1), 1)).start()  # Chloé's turn
    wait(browser, lambda d: seq(d) > before and "Ana" in d.find_element("id", "status").text)
    assert browser.execute_script("return window.__samePage") == "not reloaded"

    # 5. End the game: the final scoring screen.
    browser.find_element("id", "end-btn").click()
    wait(browser, lambda d: d.switch_to.alert).accept()
    final = wait(
        browser,
        lambda d: d.find_element("id", "final").is_displayed() and d.find_element("id", "final"),
        message="the final scoring never showed",
    )
    winner = game.snapshot.view["scoring"]["winner"]
    assert f"Winner: {winner['name']} with {winner['total']} VP" in final.text
    rows = final.find_elements("css selector", "tbody tr")
    assert len(rows) == 3 and "winner" in rows[0].get_attribute("class")
    browser.get(f"{server['url']}/games/{game.id}/scores")
    wait(browser, lambda d: "Final scoring" in d.find_element("id", "final").text)
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(1200, min(max(height, 500), 1000))
    browser.execute_script("document.getElementById('toast').hidden = true;")
    shot = tmp_path / "final-scoring.png"
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000 and shot.read_bytes().startswith(b"\x89PNG")
    if os.environ.get("GIZMOS_DOCS_IMG") == "1":
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, DOCS_IMG / "final-scoring.png")
        shutil.copyfile(tmp_path / "table.png", DOCS_IMG / "table.png")

    # 6. The setup page starts the next game (the admin session is still open).
    browser.set_window_size(1400, 1000)
    browser.get(f"{server['url']}/setup")
    browser.find_element("name", "name0").send_keys("Dana")
    browser.find_element("name", "name1").send_keys("Eli")
    browser.find_element("css selector", "#new-game button[type=submit]").click()
    wait(browser, lambda d: "/games/" in d.current_url and game.id not in d.current_url)
    wait(browser, lambda d: "Dana" in d.find_element("id", "status").text)
    assert hub.active is not None and hub.get(hub.active).tracker.names == ["Dana", "Eli"]
    assert "Setting up: 15 card(s)" in browser.find_element("id", "log").text


def test_the_provisional_panel_in_chromium(server: dict[str, Any], browser: Any) -> None:
    """A table seen but not yet read the three times the record needs shows in its own panel,
    marked provisional, not in the move log; once the record accepts it the panel goes."""
    from referee.gizmos import Step
    from referee.simulation.synthetic import Feeder

    game = hub_of(server["app"]).create(["Ana", "Ben", "Cy"], seed=3, deal=True)
    with game.locked() as tracker:
        feeder = Feeder(tracker, state=tracker.state, signals=False)
        feeder.show(frames=4)
        color = next(c for c, n in enumerate(tracker.state.row) if n)
    browser.get(f"{server['url']}/games/{game.id}")
    wait(browser, lambda d: d.find_element("id", "conn").text == "live", message="the stream never opened")
    panel = browser.find_element("id", "provisional-panel")
    assert not panel.is_displayed()
    with game.locked():
        feeder.play(Step("pick", 0, color=color), frames=1)
    wait(browser, lambda d: panel.is_displayed(), message="the provisional reading never showed")
    assert "Provisional: seen, not yet read the three times" in panel.text and "Ana picks a" in panel.text
    with game.locked():
        feeder.show(frames=2)
    wait(browser, lambda d: not panel.is_displayed(), message="the accepted reading stayed provisional")
    assert game.tracker.log[0].step["kind"] == "pick"


def test_the_end_of_turn_key_in_chromium(server: dict[str, Any], browser: Any) -> None:
    """ "E" on the table page is the end-of-turn signal (after the admin PIN, as the button);
    typed into a field it is a letter, not a signal."""
    from referee.gizmos import Step
    from referee.simulation.synthetic import Feeder

    game = hub_of(server["app"]).create(["Ana", "Ben", "Cy"], seed=4, deal=True)
    with game.locked() as tracker:
        feeder = Feeder(tracker, state=tracker.state, signals=False)
        feeder.show(frames=4)
        color = next(c for c, n in enumerate(tracker.state.row) if n)
        feeder.play(Step("pick", 0, color=color), frames=4)  # Ana's marble, read and accepted
    assert game.tracker.state.current == 0 and game.tracker.state.main_done
    browser.get(f"{server['url']}/games/{game.id}")
    wait(browser, lambda d: d.find_element("id", "conn").text == "live", message="the stream never opened")
    body = browser.find_element("tag name", "body")
    body.send_keys("e")
    wait(browser, lambda d: d.find_element("id", "pin-dialog").is_displayed(), message="no PIN asked")
    browser.find_element("id", "pin-input").send_keys("e")  # a letter of the PIN field: no second signal
    browser.execute_script("document.getElementById('pin-input').value = '';")
    browser.find_element("id", "pin-input").send_keys(TEST_PIN)
    browser.find_element("id", "pin-ok").click()
    wait(browser, lambda d: game.tracker.state.current == 1, message="the key never ended Ana's turn")
    assert [line.step["kind"] for line in game.tracker.log if line.player == 0] == ["pick", "end_turn"]
    body.send_keys("x")  # another key, and a moment for a stray signal to arrive: none did
    wait(browser, lambda d: "End of turn signalled" in d.find_element("id", "toast").text)
    with game.locked() as tracker:
        signals = [e for e in tracker.record.entries("event") if e.payload.get("source") == "dashboard"]
    assert len(signals) == 1


def test_setup_page_follows_the_camera_status(tmp_path: Path, browser: Any) -> None:
    from web.live import FrameBuffer

    frames = FrameBuffer("camera 0")
    frames.set_status(True, "markers [0, 1, 2, 3]")
    app = make_app(tmp_path / "games", FRAME_SOURCE=frames)
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        browser.get(f"http://127.0.0.1:{srv.port}/setup")
        status = browser.find_element("id", "camera-status")
        assert "calibrated (markers [0, 1, 2, 3])" in status.text and "not" not in status.text
        frames.set_status(False, "markers [1] not found")  # a hand over a marker, after the page loaded
        wait(
            browser,
            lambda d: "not calibrated (markers [1] not found)" in d.find_element("id", "camera-status").text,
            timeout=15,
            message="the setup page kept the camera status of its loading",
        )
        strong = browser.find_element("css selector", "#camera-status strong")
        assert strong.text == "not calibrated"
    finally:
        srv.shutdown()
        thread.join(timeout=10)
