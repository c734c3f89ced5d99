"""Drives the dashboard in a real headless Chromium and counts the taps (clicks) each kind
of turn takes in manual mode, for ``tests/test_web_dash_browser.py`` and
``benchmarks/dashboard_taps.py``.

A tap is one click on the page. The admin PIN is typed once before (as a scorekeeper unlocks
the table for the evening) and not counted. Random outcomes (the card that came up, the marble
that came out) are tapped as the table shows them: the first one offered.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from referee.gizmos import apply, legal_steps
from tests.test_web_browser import CHROMEDRIVER, CHROMIUM, FLAGS, seq, wait
from tests.web_testing import TEST_PIN
from web.demo import play_random
from web.hub import Hub, LiveGame
from web.view import CARDS


def start_chromium(profile: Path) -> Any:
    """Debian's headless Chromium through its chromedriver (Selenium downloads nothing)."""
    import os

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    return webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)


def viewport(driver: Any, width: int, height: int) -> None:
    """The page's viewport exactly ``width`` x ``height`` CSS pixels (a phone when narrow)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )


class Taps:
    """Clicks on the page, counted."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        self.count = 0

    def tap(self, element: Any) -> None:
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        element.click()
        self.count += 1


def unlock(driver: Any) -> None:
    """Open the admin session once, as a scorekeeper does before a game (not counted as taps)."""
    wait(
        driver,
        lambda d: d.find_element("id", "admin-btn").get_attribute("data-state") in ("locked", "unlocked"),
    )
    if driver.find_element("id", "admin-btn").get_attribute("data-state") == "unlocked":
        return
    driver.find_element("id", "admin-btn").click()
    wait(driver, lambda d: d.find_element("id", "pin-dialog").is_displayed())
    driver.find_element("id", "pin-input").send_keys(TEST_PIN)
    driver.find_element("id", "pin-ok").click()
    wait(driver, lambda d: "Unlocked" in d.find_element("id", "admin-btn").text, message="never unlocked")


def is_live(driver: Any) -> bool:
    """The page's event stream is open (read in one go: the status line is redrawn often)."""
    driver.execute_script(
        "if (!window.__errors) { window.__errors = [];"
        " addEventListener('error', (e) => window.__errors.push(`${e.message} ${e.filename}:${e.lineno}`)); }"
    )
    return bool(
        driver.execute_script(
            "const c = document.getElementById('conn'); return !!c && c.textContent === 'live';"
        )
    )


def settled(driver: Any, before: int) -> bool:
    """A newer snapshot is drawn and no step is on its way (nor one played by itself)."""
    legal = driver.find_element("id", "legal")
    return seq(driver) > before and legal.get_attribute("data-busy") != "1"


def kinds(driver: Any) -> list[str]:
    return [g.get_attribute("data-kind") for g in driver.find_elements("css selector", "#legal .group")]


def finish_turn(driver: Any, game: LiveGame, taps: Taps, turn: int, before: int) -> None:
    """After the main choice: tap whatever random outcome the table shows (the first marble
    color, the first card), until the turn ends by itself. Anything else to choose fails."""
    for _ in range(12):
        wait(
            driver,
            lambda d, b=before: game.tracker.state.turn > turn or settled(d, b),
            message="the step's update never arrived",
        )
        if game.tracker.state.turn > turn:
            return
        now = kinds(driver)
        before = seq(driver)
        if "dispense" in now:
            taps.tap(driver.find_element("css selector", "#legal .group[data-kind=dispense] button"))
        elif "reveal" in now:
            taps.tap(driver.find_element("css selector", "#legal .tile.reveal"))
        elif now == ["end_turn"]:
            wait(driver, lambda d: game.tracker.state.turn > turn, message="the turn did not end by itself")
            return
        else:
            logs = driver.execute_script("return window.__errors || []")
            entry = driver.execute_script("return GzEntry.state()")
            raise AssertionError(
                f"a choice left in the turn: {now}; step entry {entry}; the browser said {logs}"
            )
    raise AssertionError("the turn did not end")


def advance_until(game: LiveGame, ok: Any, seed: int, turns: int = 80) -> Any:
    """Random turns until ``ok(state)`` gives something for the current player."""
    rng = random.Random(seed)
    for _ in range(turns):
        found = ok(game.tracker.state)
        if found is not None:
            return found
        play_random(game, rng, 1)
    raise AssertionError("no such moment in the game")


def clean_build(state: Any) -> int | None:
    """A Display card the current player can Build, with nothing to do after it but the refill."""
    if state.main_done or state.pending is not None or state.chance:
        return None
    display = {c for slots in state.display for c in slots if c is not None}
    for step in legal_steps(state):
        if step.kind != "build" or step.card not in display:
            continue
        after = apply(state, step, random.Random(0))
        if [s.kind for s in legal_steps(after)] == ["end_turn"]:
            return step.card
    return None


def file_with_trigger(state: Any) -> int | None:
    """A Display card the current player can File (their File gizmo then draws a marble)."""
    if state.main_done or state.pending is not None or state.chance:
        return None
    p = state.players[state.current]
    if sum(p.ring) + 1 > p.profile.energy_limit or not sum(state.dispenser):
        return None
    if [CARDS[g].level for g in p.gizmos if CARDS[g].effect.kind == "on_file"] != [0]:
        return None  # the starting gizmo is their only File gizmo
    return next((s.card for s in legal_steps(state) if s.kind == "file"), None)


def can_research(state: Any) -> int | None:
    if state.main_done or state.pending is not None or state.chance:
        return None
    if state.players[state.current].profile.research != 3:
        return None
    levels = [s.level for s in legal_steps(state) if s.kind == "research" and s.level is not None]
    return next((lvl for lvl in levels if sum(n for _, n in state.decks[lvl - 1]) >= 3), None)


def card_dialog(driver: Any) -> Any:
    """The enlarged card, once it is open."""
    dialog = driver.find_element("id", "card-dialog")
    return dialog if dialog.is_displayed() else False


def research(driver: Any, game: LiveGame, level: int, then: str) -> int:
    """Research ``level``: its button, the three cards drawn (the first picture each time),
    then keep none (``then="skip"``), or File the first card that can be and use the File gizmo
    that draws a marble, saying its color (``"file"``, one tap); returns the taps until the
    turn ended."""
    driver.refresh()
    wait(driver, is_live, message="no event stream")
    t, turn, before = Taps(driver), game.tracker.state.turn, seq(driver)
    roman = {1: "I", 2: "II", 3: "III"}[level]
    button = f"//*[@id='legal']//button[text()='Level {roman}']"
    found = wait(
        driver,
        lambda d: d.find_elements("xpath", button),
        message=f"no Research button: the page offers {kinds(driver)}, the game {game.tracker.legal_steps()}",
    )
    t.tap(found[0])
    for _ in range(3):
        wait(driver, lambda d, b=before: settled(d, b))
        before = seq(driver)
        t.tap(driver.find_element("css selector", "#legal .tile.reveal"))
    wait(driver, lambda d, b=before: settled(d, b))
    hand = driver.find_elements("css selector", "#legal .chooser.inline .tile")
    pending = game.tracker.state.pending
    assert pending is not None  # the three cards drawn are the pending Research choice
    assert sorted(int(h.get_attribute("data-tile")) for h in hand) == sorted(pending.hand)
    before = seq(driver)
    if then == "skip":
        t.tap(driver.find_element("css selector", "#legal .group[data-kind=skip] button"))
    else:  # File it and use the File gizmo, saying the color drawn (the first color): one tap
        seat = game.tracker.state.current
        ring = sum(game.tracker.state.players[seat].ring)
        archive = len(game.tracker.state.players[seat].archive)
        t.tap(driver.find_element("css selector", "#legal .tile-actions .drew[data-kind=file] button"))
        wait(driver, lambda d: game.tracker.state.turn > turn, message="the Research turn did not end")
        p = game.tracker.state.players[seat]
        assert (sum(p.ring), len(p.archive)) == (ring + 1, archive + 1), "not filed, or no marble drawn"
    finish_turn(driver, game, t, turn, before)
    return t.count


def measure_taps(driver: Any, hub: Hub, url: str) -> tuple[LiveGame, dict[str, int]]:
    """Play the turns of docs/dashboard.md's tap table in the page, each click counted, and
    check each did what it says; returns the game (left at a player's turn) and the counts."""
    taps: dict[str, int] = {}

    # A Pick: the color, then the marble that refilled the Row; the turn ends by itself.
    game = hub.create(["Ana", "Ben"], seed=11, deal=True)
    driver.get(f"{url}/games/{game.id}")
    wait(driver, is_live, message="no event stream")
    unlock(driver)
    t, turn, before = Taps(driver), game.tracker.state.turn, seq(driver)
    t.tap(driver.find_element("css selector", "#legal .group[data-kind=pick] button"))
    finish_turn(driver, game, t, turn, before)
    taps["pick"] = t.count
    assert game.tracker.state.current == 1
    wait(
        driver,
        lambda d: "Ben" in d.execute_script("return document.getElementById('status').textContent"),
        message="the page missed the turn's end",
    )

    # A typical Build: the card, the payment in the enlarged card, the card that refills the Display.
    card = advance_until(game, clean_build, seed=5)
    driver.refresh()
    wait(driver, is_live, message="no event stream")
    t, turn, before = Taps(driver), game.tracker.state.turn, seq(driver)
    seat = game.tracker.state.current
    t.tap(driver.find_element("css selector", f"#legal .tile[data-tile='{card}'] figure"))
    dialog = wait(driver, card_dialog)
    assert CARDS[card].text in dialog.text  # the effect in words, from the card data
    build = next(
        b for b in dialog.find_elements("css selector", ".cd-action") if b.text.startswith("Build it: ")
    )
    t.tap(build)
    finish_turn(driver, game, t, turn, before)
    taps["build"] = t.count
    assert card in game.tracker.state.players[seat].gizmos

    # A File whose File gizmo draws a marble: the card, File, the refill, then the gizmo used and
    # the marble's color in one tap.
    card = advance_until(game, file_with_trigger, seed=6)
    driver.refresh()
    wait(driver, is_live, message="no event stream")
    t, turn, before = Taps(driver), game.tracker.state.turn, seq(driver)
    seat = game.tracker.state.current
    t.tap(driver.find_element("css selector", f"#legal .tile[data-tile='{card}'] figure"))
    dialog = wait(driver, card_dialog)
    t.tap(next(b for b in dialog.find_elements("css selector", ".cd-action") if b.text == "File it"))
    wait(driver, lambda d: settled(d, before))
    before = seq(driver)
    t.tap(driver.find_element("css selector", "#legal .tile.reveal"))
    wait(driver, lambda d: settled(d, before) and "use" in " ".join(kinds(d)), message="no File gizmo to use")
    ring = sum(game.tracker.state.players[seat].ring)
    before = seq(driver)
    t.tap(driver.find_element("css selector", "#legal .drew button"))
    finish_turn(driver, game, t, turn, before)
    taps["file"] = t.count
    assert card in game.tracker.state.players[seat].archive
    assert sum(game.tracker.state.players[seat].ring) == ring + 1

    # A Research: the deck, the three cards drawn (by their pictures), then keep none; the cards
    # go under the deck and the turn ends by themselves.
    level = advance_until(game, can_research, seed=8)
    taps["research"] = research(driver, game, level, "skip")

    # A Research that Files a card: the same five taps, the last one Filing it and using the
    # File gizmo with the color it drew (the other cards go under the deck by themselves).
    level = advance_until(game, lambda st: can_research(st) if file_with_trigger(st) else None, seed=9)
    taps["research_file"] = research(driver, game, level, "file")

    # A person can still end a turn: with "Finish turns by themselves" off, a Pick leaves
    # End the turn to tap.
    advance_until(game, lambda st: True if not st.main_done and st.pending is None else None, seed=10)
    driver.refresh()
    wait(driver, is_live, message="no event stream")
    auto = driver.find_element("id", "auto-finish")
    assert auto.is_selected()  # on by default
    auto.click()
    t, turn, before = Taps(driver), game.tracker.state.turn, seq(driver)
    t.tap(driver.find_element("css selector", "#legal .group[data-kind=pick] button"))
    wait(driver, lambda d, b=before: settled(d, b))
    before = seq(driver)
    t.tap(driver.find_element("css selector", "#legal .group[data-kind=dispense] button"))
    wait(driver, lambda d, b=before: settled(d, b) and kinds(d) == ["end_turn"], message="no End the turn")
    t.tap(driver.find_element("css selector", "#legal .group[data-kind=end_turn] button"))
    wait(driver, lambda d: game.tracker.state.turn > turn, message="End the turn did not end it")
    taps["pick_by_hand"] = t.count
    driver.execute_script("localStorage.removeItem('gz.autoFinish')")

    return game, taps
