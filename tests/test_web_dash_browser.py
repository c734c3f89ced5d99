"""The dashboard at a game night, in a real headless Chromium, at a laptop's 1400x900 and a
phone's 412x900 (issue 20, items 1-3).

Counts the taps a Pick, a typical Build, a File with its trigger and a Research take in manual
mode (``tests/dash_driver.py``: each click is a tap; the admin PIN is typed once beforehand, as
a scorekeeper unlocks the table once; ``benchmarks/dashboard_taps.py`` prints the same figures);
checks that on a phone the current turn, the open warnings and the step entry
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

from tests.dash_driver import card_dialog, is_live, measure_taps, viewport
from tests.test_web_browser import DOCS_IMG, browser, server, wait  # noqa: F401 (fixtures)
from tests.web_testing import break_a_rule, hub_of
from web.demo import play_random
from web.view import CARDS

SIZES = [(1400, 900), (412, 900)]


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
    game, taps = measure_taps(browser, hub, url)
    expected = {"pick": 2, "build": 3, "file": 4, "research": 5, "research_file": 5, "pick_by_hand": 3}
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
