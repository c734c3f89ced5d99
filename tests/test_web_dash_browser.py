"""The dashboard at a game night, in a real headless Chromium, at a laptop's 1400x900 and a
phone's 412x900 (issue 20, items 1-3).

Counts the taps a Pick, a typical Build, a File with its trigger and a Research take in manual
mode (each click is a tap; the admin PIN is typed once beforehand, as a scorekeeper unlocks
the table once); checks that on a phone the current turn, the open warnings and the step entry
are on the first screen, that a new warning shows a badge, that no page is wider than the
screen and no table overflows, and that any card opens large with its effect in words. Saves
a screenshot of each page at both sizes (under the test's tmp dir; with GIZMOS_DOCS_IMG=1
also into docs/img/ as ``<page>-<width>.png``).
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from referee.gizmos import apply, legal_steps
from tests.test_web_browser import DOCS_IMG, browser, seq, server, wait  # noqa: F401 (fixtures)
from tests.web_testing import TEST_PIN, break_a_rule, hub_of
from web.demo import play_random
from web.hub import LiveGame
from web.view import CARDS

SIZES = [(1400, 900), (412, 900)]


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
    colour, the first card), until the turn ends by itself. Anything else to choose fails."""
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
    levels = [s.level for s in legal_steps(state) if s.kind == "research"]
    return next((lvl for lvl in levels if sum(n for _, n in state.decks[lvl - 1]) >= 3), None)


def card_dialog(driver: Any) -> Any:
    """The enlarged card, once it is open."""
    dialog = driver.find_element("id", "card-dialog")
    return dialog if dialog.is_displayed() else False


def research(driver: Any, game: LiveGame, level: int, then: str) -> int:
    """Research ``level``: its button, the three cards drawn (the first picture each time),
    then keep none (``then="skip"``) or File the first card that can be (``"file"``), using
    the File gizmo with the first colour; returns the taps until the turn ended."""
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
    assert sorted(int(h.get_attribute("data-tile")) for h in hand) == sorted(game.tracker.state.pending.hand)
    before = seq(driver)
    if then == "skip":
        t.tap(driver.find_element("css selector", "#legal .group[data-kind=skip] button"))
    else:
        t.tap(driver.find_element("css selector", "#legal .tile-actions button[data-kind=file]"))
        wait(
            driver,
            lambda d, b=before: settled(d, b) and "use" in " ".join(kinds(d)),
            message="no File gizmo to use after the Research",
        )
        before = seq(driver)
        t.tap(driver.find_element("css selector", "#legal .drew button"))
    finish_turn(driver, game, t, turn, before)
    return t.count


def fits(driver: Any) -> list[str]:
    """What is wider than the screen: the page, or a table wider than its box."""
    return driver.execute_script(
        """
        const out = [];
        const w = document.documentElement.clientWidth;
        const page = document.documentElement.scrollWidth;
        if (page > w) out.push(`page ${page} > ${w}`);
        for (const t of document.querySelectorAll("table")) {
          const r = t.getBoundingClientRect();
          if (t.offsetParent === null) continue;
          if (r.right > w + 0.5 || t.scrollWidth > t.parentElement.clientWidth + 0.5) {
            out.push(`table.${t.className} ${Math.round(r.right)} > ${w}`);
          }
        }
        return out;
        """
    )


def on_first_screen(driver: Any, selector: str) -> bool:
    """The element's box lies within the first screen (the page not scrolled)."""
    return driver.execute_script(
        "const e = document.querySelector(arguments[0]); if (!e) return false;"
        "const r = e.getBoundingClientRect();"
        "return window.scrollY === 0 && r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight;",
        selector,
    )


def shoot(driver: Any, tmp_path: Path, name: str, width: int) -> None:
    driver.execute_script("window.scrollTo(0, 0); document.getElementById('toast').hidden = true;")
    shot = tmp_path / f"{name}-{width}.png"
    assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 5_000
    if os.environ.get("GIZMOS_DOCS_IMG") == "1":
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, DOCS_IMG / shot.name)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=["laptop", "phone"])
def test_few_taps_readable_cards_and_a_phone_first_page(
    server: dict[str, Any],  # noqa: F811
    browser: Any,  # noqa: F811
    tmp_path: Path,
    width: int,
    height: int,
) -> None:
    hub = hub_of(server["app"])
    url = server["url"]
    viewport(browser, width, height)
    taps: dict[str, int] = {}

    # A Pick: the colour, then the marble that refilled the Row; the turn ends by itself.
    game = hub.create(["Ana", "Ben"], seed=11, deal=True)
    browser.get(f"{url}/games/{game.id}")
    wait(browser, is_live, message="no event stream")
    unlock(browser)
    t, turn, before = Taps(browser), game.tracker.state.turn, seq(browser)
    t.tap(browser.find_element("css selector", "#legal .group[data-kind=pick] button"))
    finish_turn(browser, game, t, turn, before)
    taps["pick"] = t.count
    assert game.tracker.state.current == 1
    wait(
        browser,
        lambda d: "Ben" in d.execute_script("return document.getElementById('status').textContent"),
        message="the page missed the turn's end",
    )

    # A typical Build: the card, the payment in the enlarged card, the card that refills the Display.
    card = advance_until(game, clean_build, seed=5)
    browser.refresh()
    wait(browser, is_live, message="no event stream")
    t, turn, before = Taps(browser), game.tracker.state.turn, seq(browser)
    seat = game.tracker.state.current
    t.tap(browser.find_element("css selector", f"#legal .tile[data-tile='{card}'] figure"))
    dialog = wait(browser, card_dialog)
    assert CARDS[card].text in dialog.text  # the effect in words, from the card data
    build = next(
        b for b in dialog.find_elements("css selector", ".cd-action") if b.text.startswith("Build it: ")
    )
    t.tap(build)
    finish_turn(browser, game, t, turn, before)
    taps["build"] = t.count
    assert card in game.tracker.state.players[seat].gizmos

    # A File whose File gizmo draws a marble: the card, File, the refill, then the gizmo used and
    # the marble's colour in one tap.
    card = advance_until(game, file_with_trigger, seed=6)
    browser.refresh()
    wait(browser, is_live, message="no event stream")
    t, turn, before = Taps(browser), game.tracker.state.turn, seq(browser)
    seat = game.tracker.state.current
    t.tap(browser.find_element("css selector", f"#legal .tile[data-tile='{card}'] figure"))
    dialog = wait(browser, card_dialog)
    t.tap(next(b for b in dialog.find_elements("css selector", ".cd-action") if b.text == "File it"))
    wait(browser, lambda d: settled(d, before))
    before = seq(browser)
    t.tap(browser.find_element("css selector", "#legal .tile.reveal"))
    wait(
        browser, lambda d: settled(d, before) and "use" in " ".join(kinds(d)), message="no File gizmo to use"
    )
    ring = sum(game.tracker.state.players[seat].ring)
    before = seq(browser)
    t.tap(browser.find_element("css selector", "#legal .drew button"))
    finish_turn(browser, game, t, turn, before)
    taps["file"] = t.count
    assert card in game.tracker.state.players[seat].archive
    assert sum(game.tracker.state.players[seat].ring) == ring + 1

    # A Research: the deck, the three cards drawn (by their pictures), then keep none; the cards
    # go under the deck and the turn ends by themselves.
    level = advance_until(game, can_research, seed=8)
    taps["research"] = research(browser, game, level, "skip")

    # A Research that Files a card: the same five taps, then the File gizmo used with the
    # marble it drew (the other cards went under the deck by themselves).
    level = advance_until(game, lambda st: can_research(st) if file_with_trigger(st) else None, seed=9)
    taps["research_file"] = research(browser, game, level, "file")

    # A person can still end a turn: with "Finish turns by themselves" off, a Pick leaves
    # End the turn to tap.
    advance_until(game, lambda st: True if not st.main_done and st.pending is None else None, seed=10)
    browser.refresh()
    wait(browser, is_live, message="no event stream")
    auto = browser.find_element("id", "auto-finish")
    assert auto.is_selected()  # on by default
    auto.click()
    t, turn, before = Taps(browser), game.tracker.state.turn, seq(browser)
    t.tap(browser.find_element("css selector", "#legal .group[data-kind=pick] button"))
    wait(browser, lambda d, b=before: settled(d, b))
    before = seq(browser)
    t.tap(browser.find_element("css selector", "#legal .group[data-kind=dispense] button"))
    wait(browser, lambda d, b=before: settled(d, b) and kinds(d) == ["end_turn"], message="no End the turn")
    t.tap(browser.find_element("css selector", "#legal .group[data-kind=end_turn] button"))
    wait(browser, lambda d: game.tracker.state.turn > turn, message="End the turn did not end it")
    taps["pick_by_hand"] = t.count
    browser.execute_script("localStorage.removeItem('gz.autoFinish')")

    expected = {"pick": 2, "build": 3, "file": 4, "research": 5, "research_file": 6, "pick_by_hand": 3}
    assert taps == expected, taps
    print(f"taps at {width}x{height}: {taps}")

    # Any card anywhere opens large with its effect in words: a built gizmo in a player's area.
    browser.refresh()
    wait(browser, is_live, message="no event stream")
    built = browser.find_element("css selector", "#players .column figure.card")
    built_id = int(built.get_attribute("data-card"))
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", built)
    built.click()
    dialog = wait(browser, card_dialog)
    assert CARDS[built_id].text in dialog.text and f"#{built_id}" in dialog.text
    width_px = browser.execute_script(
        "return document.querySelector('#card-dialog img').getBoundingClientRect().width"
    )
    assert width_px >= 180, f"the enlarged card is {width_px} px wide"
    shoot(browser, tmp_path, "card", width)
    dialog.find_element("css selector", ".cd-close").click()

    # Step buttons name the card and what it does, never a bare "#12".
    labels = [s["label"] for g in game.snapshot.view["legal"] for s in g["steps"]]
    assert labels and not any(label.startswith("#") for label in labels)

    # A new warning: a badge on the first screen; the turn, the warning and the step entry there too.
    browser.execute_script("window.scrollTo(0, 0)")
    sound = browser.find_element("id", "alert-sound")
    assert not sound.is_selected()  # sound and vibration are off by default
    sound.click()
    browser.execute_script("navigator.vibrate = (pattern) => { window.__vibrated = pattern; return true; };")
    break_a_rule(game)
    assert [w.status for w in game.tracker.warnings] == ["open"]
    wait(
        browser,
        lambda d: "1 new warning" in d.execute_script("return document.getElementById('status').textContent"),
        message="no badge for the new warning",
    )
    assert on_first_screen(browser, "#new-warnings")
    assert browser.execute_script("return window.__vibrated") == [200, 100, 200]
    browser.execute_script("window.scrollTo(0, 0)")
    for what in ("#status .turn", "#warnings li.warning.status-open .message", "#legal .group h3"):
        assert on_first_screen(browser, what), f"{what} is not on the first screen at {width}x{height}"
    if width < 600:  # a phone: the table itself comes after them
        assert not on_first_screen(browser, "#players")
    # A second open warning: the list scrolls, the step entry stays on the first screen.
    break_a_rule(game, seed=4)
    n = len(game.tracker.warnings)
    assert n >= 2 and all(w.status == "open" for w in game.tracker.warnings)
    status = "return document.getElementById('status').textContent"
    wait(browser, lambda d: f"{n} new warnings" in d.execute_script(status), message="no badge for them")
    browser.execute_script("window.scrollTo(0, 0)")
    for what in ("#status .turn", "#legal .group h3"):
        assert on_first_screen(browser, what), f"{what} is not on the first screen with two warnings"
    assert fits(browser) == []
    shoot(browser, tmp_path, "table", width)

    # The other pages: nothing wider than the screen, no table overflowing, no "null".
    game2 = hub.create(["Dana", "Eli", "Fay"], seed=3, deal=True)
    play_random(game2, random.Random(3), 60)
    with game2.locked() as tracker:
        tracker.end_game("test")
    for name, path in (
        ("scores", f"/games/{game2.id}/scores"),
        ("final", f"/games/{game2.id}"),
        ("setup", "/setup"),
        ("camera", "/camera"),
    ):
        browser.get(url + path)
        wait(browser, lambda d: d.execute_script("return document.readyState") == "complete")
        if name in ("scores", "final"):
            final = wait(
                browser,
                lambda d: (
                    d.find_element("id", "final") if d.find_element("id", "final").is_displayed() else False
                ),
            )
            assert "null" not in final.text and "Total" in final.text
            head = browser.execute_script(
                "return document.querySelector('#final h2').nextSibling.textContent"
            )
            assert head.startswith("Winner: ")
            for column in ("Total", "Tie-break"):
                th = final.find_element("xpath", f".//thead/tr/th[@title='{column}']")
                assert th.is_displayed() and th.rect["x"] + th.rect["width"] <= width, column
        assert fits(browser) == [], f"{name} at {width}x{height}: {fits(browser)}"
        shoot(browser, tmp_path, name, width)
