"""Enrolment from a spread in a real headless Chromium (issue 14): the camera page takes the
photo of the table, shows each card found with its suggested id, the user corrects the four the
references could not know, and "Enrol these cards" enrols them all (the admin PIN once)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from referee.app.spread import SpreadEnrolment
from tests.dash_driver import unlock
from tests.test_spread_enrolment import CARDS, _truth, spread_png  # noqa: F401 (fixture)
from tests.test_web_browser import browser, wait  # noqa: F401 (fixtures)
from tests.web_testing import make_app


@pytest.fixture
def spread_server(tmp_path: Path) -> Iterator[dict[str, Any]]:
    enrol = tmp_path / "enrol"
    app = make_app(tmp_path / "games", SPREAD_ENROLMENT=SpreadEnrolment(enrol))
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"url": f"http://127.0.0.1:{srv.port}", "enrol": enrol}
    finally:
        srv.shutdown()
        thread.join(timeout=10)


def test_a_spread_is_confirmed_and_enrolled_on_the_camera_page(
    tmp_path: Path,
    browser: Any,  # noqa: F811
    spread_server: dict[str, Any],
    spread_png: bytes,  # noqa: F811
) -> None:
    photo = tmp_path / "table.png"
    photo.write_bytes(spread_png)
    browser.get(spread_server["url"] + "/camera")
    unlock(browser)
    browser.find_element("css selector", "#spread-photo input[type=file]").send_keys(str(photo))
    browser.find_element("css selector", "#spread-photo button[type=submit]").click()
    wait(browser, lambda d: len(d.find_elements("css selector", "#spread-cards li")) == len(CARDS))
    spread = browser.execute_script("return fetch('/api/spread').then((r) => r.json())")["spread"]
    truth = _truth(spread)
    for field in browser.find_elements("css selector", "#spread-cards input[type=number]"):
        place = int(field.get_attribute("data-place"))
        if int(field.get_attribute("value")) != truth[place]:
            field.clear()
            field.send_keys(str(truth[place]))
    faces = browser.find_elements("css selector", "#spread-cards img[alt^='card ']")
    assert all(browser.execute_script("return arguments[0].naturalWidth", f) > 0 for f in faces)
    browser.find_element("css selector", "#spread-confirm button[type=submit]").click()
    wait(browser, lambda d: f"Enrolled {len(CARDS)} cards" in d.find_element("id", "toast").text)
    assert sorted(p.name for p in spread_server["enrol"].iterdir()) == sorted(f"{c}.png" for c in CARDS)
    assert browser.find_element("id", "spread-confirm").get_attribute("hidden") is not None
