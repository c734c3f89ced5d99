"""Contrivance table-side scorekeeping in a real headless Chromium (the same browser, driver and
server fixtures as tests/test_web_browser.py).

Creates a game from the dashboard (the PIN asked in the page's dialog), enters a whole short
game in manual mode by tapping tiles, squares and actions, and checks the final-scoring screen
against the engine's scoring of the same steps; then scores a finished table entered once.
Screenshots go to the test's tmp dir; with GIZMOS_DOCS_IMG=1 also to docs/img/.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

from referee.contrivance import CONTRIVANCE, Tile, score, score_workbench
from tests.test_web_browser import DOCS_IMG, browser, server, wait  # noqa: F401 (fixtures)
from tests.test_web_contrivance import SEED, short_game
from tests.web_testing import TEST_PIN


def shot(driver: Any, tmp_path: Path, name: str, width: int, height: int) -> None:
    driver.set_window_size(width, height)
    path = tmp_path / name
    assert driver.save_screenshot(str(path))
    if os.environ.get("GIZMOS_DOCS_IMG") == "1":
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, DOCS_IMG / name)


def seq(driver: Any) -> int:
    return int(driver.find_element("id", "game").get_attribute("data-seq"))


def tap_square(driver: Any, square: list[int]) -> None:
    driver.find_element("css selector", f'#ct-bench button[data-square="{square[0]}:{square[1]}"]').click()


def enter(driver: Any, step: dict[str, Any], tapped: Any = None) -> None:
    """Manual mode: tap the tile (from the supply, or on the Workbench), its other square if
    the step has one, then the action; wait for the step's snapshot. ``tapped()`` runs once
    the tile is selected."""
    if "tile" in step:
        driver.find_element("css selector", f'#ct-supply button[data-tile="{step["tile"]}"]').click()
        if tapped is not None:
            tapped()
        tap_square(driver, step["to"])
    elif "at" in step:
        tap_square(driver, step["at"])
        if "to" in step:
            tap_square(driver, step["to"])
    want = json.dumps(step, separators=(",", ":"))
    find = (
        "return [...document.querySelectorAll('#ct-actions .ct-action')]"
        ".find(b => b.dataset.step === arguments[0]) || null"
    )
    button = driver.execute_script(find, want)
    shown = driver.execute_script(
        "return [...document.querySelectorAll('#ct-actions .ct-action')].map(b => b.dataset.step)"
    )
    assert button is not None, f"{want} is not offered after its taps; shown: {shown}"
    before = seq(driver)
    button.click()
    wait(driver, lambda d: seq(d) > before, message=f"no update after {want}")


def test_a_whole_contrivance_game_in_manual_mode(
    server: dict[str, Any],  # noqa: F811 (the fixture imported above)
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    d = browser
    d.set_window_size(1400, 900)
    d.get(server["url"] + "/contrivance")
    names = d.find_elements("css selector", '#ct-new input[name="name"]')
    names[0].send_keys("Ana")
    names[1].send_keys("Ben")
    d.find_element("css selector", '#ct-new input[name="seed"]').send_keys(str(SEED))
    d.find_element("css selector", '#ct-new button[type="submit"]').click()
    wait(d, lambda x: x.find_element("id", "pin-dialog").is_displayed(), message="no PIN dialog")
    d.find_element("id", "pin-input").send_keys(TEST_PIN)
    d.find_element("id", "pin-ok").click()
    wait(d, lambda x: "/contrivance/games/" in x.current_url, message="not taken to the new game")
    wait(d, lambda x: seq(x) >= 1)

    steps = short_game()
    for i, step in enumerate(steps):
        if i == 4:  # a tile selected: the squares it may go to are outlined
            assert "tile" in step
            enter(d, step, lambda: shot(d, tmp_path, "contrivance-manual.png", 1400, 900))
        else:
            enter(d, step)
    wait(d, lambda x: x.find_element("id", "game").get_attribute("data-over") == "1")

    state = CONTRIVANCE.new_game(2, random.Random(SEED))
    for step in steps:
        state = CONTRIVANCE.apply(state, CONTRIVANCE.step_from_json(step))
    expected = score(state)
    final = d.find_element("id", "ct-final")
    assert final.is_displayed()
    burnt = {
        e.get_attribute("data-square") for e in final.find_elements("css selector", ".final-bench .burnt")
    }
    assert burnt == {f"{v.square[0]}:{v.square[1]}" for v in expected.verdicts if v.burnt}
    kept = {
        e.get_attribute("data-square") for e in final.find_elements("css selector", ".final-bench .survives")
    }
    assert kept == {f"{v.square[0]}:{v.square[1]}" for v in expected.verdicts if not v.burnt}
    sets = [e.text for e in final.find_elements("css selector", ".ct-sets li")]
    if expected.sets:
        assert sets == [
            f"Set {'ABCDEFGH'[i]}: {{{', '.join(f'{r}:{c}' for r, c in s)}}}"
            for i, s in enumerate(expected.sets)
        ]
    rows = final.find_elements("css selector", ".ct-ranking tbody tr")
    assert [int(r.get_attribute("data-seat")) for r in rows] == [line.seat for line in expected.lines]
    for row, line in zip(rows, expected.lines, strict=True):
        assert row.find_element("css selector", ".total").text.split()[0] == str(line.total)
        assert row.find_element("css selector", ".bonus-reason").text == line.bonus_reason
    reasons = [e.text for e in final.find_elements("css selector", ".ct-reasons li")]
    assert reasons == [v.reason for v in expected.verdicts]
    d.execute_script("arguments[0].scrollIntoView()", final)
    shot(d, tmp_path, "contrivance-final.png", 1400, 900)
    shot(d, tmp_path, "contrivance-phone.png", 412, 900)
    wide = d.execute_script(
        "const w = document.documentElement.clientWidth;"
        "return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > w + 1)"
        ".filter(e => !e.closest('.ct-bench')).map(e => e.tagName + '.' + e.className + '#' + e.id)"
    )
    assert wide == [], f"wider than a phone (412 px): {wide}"

    # Score a finished table: two tiles interlocked in row 1, the Contrivance repaired.
    d.set_window_size(1400, 900)
    d.get(server["url"] + "/contrivance/score")
    for square, builder, value, facing in (("1:1", "Engineer", "2", "E"), ("1:2", "Engineer", "5", "W")):
        field = d.find_element("css selector", f'.ct-entry-square[data-square="{square}"]')
        field.find_element("css selector", f'select[name="builder"] option[value="{builder}"]').click()
        number = field.find_element("css selector", 'input[name="value"]')
        number.clear()
        number.send_keys(value)
        field.find_element("css selector", f'select[name="facing"] option[value="{facing}"]').click()
    d.find_element("css selector", 'select[name="requirement"] option[value="1"]').click()
    d.find_element("css selector", '#ct-score-form button[type="submit"]').click()
    wait(d, lambda x: x.find_element("id", "ct-final").is_displayed(), message="no scoring shown")
    bench = (
        (
            Tile("Engineer-1", "Engineer", (0,), 2, 1),
            Tile("Engineer-1", "Engineer", (0,), 5, 3),
            None,
            None,
            None,
        ),
        (None, None, None, None, None),
    )
    table = score_workbench(bench, ["Engineer", "Mechanic"], 0, 1)
    reasons = [e.text for e in d.find_elements("css selector", "#ct-final .ct-reasons li")]
    assert reasons == [v.reason for v in table.verdicts]
    bonus = d.find_elements("css selector", "#ct-final .bonus-reason")
    assert [b.text for b in bonus] == [line.bonus_reason for line in table.lines]
    shot(d, tmp_path, "contrivance-score-table.png", 1400, 900)
