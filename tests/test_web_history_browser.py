"""The replay, the history page and the evidence crops in a real headless Chromium, at a laptop's
and a phone's width: stepping through a recorded game shows the engine's table at each moment,
undone moves are struck through, the chart has a line per player, a warning on the table page
shows its before and after crops, and nothing is wider than a 412 px phone. Screenshots go under
the test's tmp dir (and to docs/img with GIZMOS_DOCS_IMG=1)."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.gizmos import ranking
from referee.tracker.history import moments
from tests import test_web_browser as wb
from tests.web_testing import ApiClient, break_a_rule, hub_of

server = wb.server  # the dashboard in a thread, and headless Chromium: the browser test's fixtures
browser = wb.browser
wait = wb.wait


def shot(driver: Any, tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    assert driver.save_screenshot(str(path))
    if os.environ.get("GIZMOS_DOCS_IMG") == "1":
        shutil.copy(path, wb.DOCS_IMG / name)


def too_wide(driver: Any) -> list[str]:
    """The elements reaching past the right edge of the page (a phone shows a sideways scroll)."""
    return list(
        driver.execute_script(
            "const w = document.documentElement.clientWidth;"
            "return [...document.querySelectorAll('body *')]"
            ".filter(e => e.getBoundingClientRect().right > w + 1)"
            ".map(e => e.tagName + '.' + e.className + '#' + e.id)"
        )
    )


def played_game(server: dict[str, Any]) -> tuple[str, Any]:
    """A dealt game of random legal steps with one turn undone and one rule broken; its warning
    keeps two crops in the record (as the live runner keeps the camera's)."""
    app = server["app"]
    api = ApiClient(app)
    gid = api.new_game(["Ana", "Ben"], seed=6)
    rng = random.Random(6)
    undone = False
    for i in range(200):
        state = hub_of(app).get(gid).snapshot and hub_of(app).get(gid).tracker.state
        if i >= 40 and undone and state.pending is None and not state.chance and not state.main_done:
            break  # a turn's start, where break_a_rule takes two marbles
        groups = api.get(f"/api/games/{gid}/legal-steps").get_json()
        step = rng.choice([s["step"] for g in groups for s in g["steps"]])
        assert api.post(f"/api/games/{gid}/steps", {"step": step}).status_code == 200
        if i >= 25 and not undone and step["kind"] != "end_turn":
            assert api.post(f"/api/games/{gid}/undo").status_code == 200
            undone = True
    game = hub_of(app).get(gid)
    break_a_rule(game)
    with game.locked() as tracker:
        for moment, shade in (("before", 40), ("after", 210)):
            ok, buf = cv2.imencode(".jpg", np.full((60, 90, 3), shade, np.uint8))
            assert ok
            tracker.record.add_evidence(1, moment, buf.tobytes(), ["row", "ring 0"])
        tracker._emit("warning", {})  # publish the snapshot with the evidence, as the runner's change does
    return gid, game


def test_the_replay_steps_through_the_engines_states(
    server: dict[str, Any], browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    gid, game = played_game(server)
    with game.locked() as tracker:
        ms = moments(list(tracker.record.entries()))
    assert any(m.void == "undone" for m in ms)
    browser.get(f"{server['url']}/games/{gid}/replay")
    wait(browser, lambda d: d.find_element(By.ID, "replay").get_attribute("data-shown") == "0")
    shown = 0
    checked = 0
    while shown < len(ms) - 1 and checked < 25:
        browser.find_element(By.ID, "next").click()
        wait(
            browser,
            lambda d, seen=shown: int(d.find_element(By.ID, "replay").get_attribute("data-shown")) > seen,
        )
        shown = int(browser.find_element(By.ID, "replay").get_attribute("data-shown"))
        state = ms[shown].state
        assert ms[shown].void is None, "stepping skips undone moves"
        cards = [
            int(f.get_attribute("data-card"))
            for f in browser.find_elements(By.CSS_SELECTOR, "#board .display-mini figure")
        ]
        assert cards == [c for lvl in (2, 1, 0) for c in state.display[lvl] if c is not None]
        scores = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#board .player-mini .score")]
        totals = {line.seat: line.total for line in ranking(state)}
        assert scores == [f"{totals[s]} VP" for s in range(state.num_players)]
        checked += 1
    struck = browser.find_elements(By.CSS_SELECTOR, "#moments li.void")
    assert struck and all("line-through" in li.value_of_css_property("text-decoration") for li in struck)
    assert len(struck) == sum(1 for m in ms if m.void)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#chart svg polyline")) == 2
    raised = next(m.index for m in ms if 1 in m.warnings)  # the moment warning #1 was raised at
    browser.find_element(By.CSS_SELECTOR, f'#moments li[data-index="{raised}"]').click()
    wait(browser, lambda d: d.find_element(By.ID, "replay").get_attribute("data-shown") == str(raised))
    crops = browser.find_elements(By.CSS_SELECTOR, "#moment-warnings .evidence img")
    assert [c.get_attribute("alt").split()[-3] for c in crops] == ["before", "after"]
    browser.set_window_size(1400, 1300)
    browser.execute_script("window.scrollTo(0, 0)")
    shot(browser, tmp_path, "replay.png")
    browser.set_window_size(412, 900)
    wait(browser, lambda d: d.execute_script("return window.innerWidth") <= 412)
    assert too_wide(browser) == [], "the replay is wider than a phone"
    shot(browser, tmp_path, "replay-phone.png")


def test_a_warning_shows_its_crops_at_the_table_and_history_lists_the_game(
    server: dict[str, Any], browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    gid, _ = played_game(server)
    browser.get(f"{server['url']}/games/{gid}")
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#warnings .evidence img")) == 2)
    imgs = browser.find_elements(By.CSS_SELECTOR, "#warnings .evidence img")
    wait(browser, lambda d: all(d.execute_script("return arguments[0].naturalWidth", i) == 90 for i in imgs))
    captions = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#warnings .evidence figcaption")]
    assert captions == ["just before", "just after"]
    browser.get(f"{server['url']}/history")
    rows = browser.find_elements(By.CSS_SELECTOR, "#games-table tbody tr")
    assert [r.get_attribute("data-game") for r in rows] == [gid]
    names = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#players-table tbody th")]
    assert sorted(names) == ["Ana", "Ben"]
    shot(browser, tmp_path, "history.png")
    browser.set_window_size(412, 900)
    wait(browser, lambda d: d.execute_script("return window.innerWidth") <= 412)
    assert too_wide(browser) == [], "the history page is wider than a phone"
    shot(browser, tmp_path, "history-phone.png")
