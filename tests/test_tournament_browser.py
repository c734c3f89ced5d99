"""The organiser's page in a real headless Chromium: live at once on a quiet board.

Its event stream used to send nothing (so no headers) until the first change or heartbeat, and
the page said "connecting…" or, after any dropped connection, "reconnecting…" for up to the
15 s heartbeat (docs/tournament.md). The browser and driver are the dashboard test's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from tests.test_web_browser import browser, wait  # noqa: F401  (the fixture, and its wait helper)
from web.tournament.app import create_app
from web.tournament.board import Board
from web.tournament.store import SqliteStore


@pytest.fixture
def organiser(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The page over an empty board, a heartbeat far longer than the test waits, streams that end
    every 3 s (the browser must reconnect)."""
    store = SqliteStore(tmp_path / "hub.sqlite")
    board = Board(store)
    app = create_app(board, {"ADMIN_PIN": "2468", "PIN_ITERATIONS": 1000, "SSE_HEARTBEAT_S": 60.0,
                             "SSE_MAX_S": 3.0})  # fmt: skip
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"url": f"http://127.0.0.1:{srv.port}/", "board": board}
    finally:
        srv.shutdown()
        thread.join(timeout=10)
        store.close()


def test_the_page_is_live_at_once_and_after_each_reconnection(
    browser: Any,  # noqa: F811  (the fixture imported above)
    organiser: dict[str, Any],
) -> None:
    browser.get(organiser["url"])
    live = lambda d: d.find_element("id", "live").text == "live"  # noqa: E731
    wait(browser, live, 10, "the page did not say 'live' within 10 s on a quiet board")
    wait(browser, lambda d: not live(d), 10, "the stream never ended (SSE_MAX_S)")
    wait(browser, live, 10, "the page did not say 'live' again within 10 s of its stream ending")
    organiser["board"].update(
        "t7", {"table": "t7", "game": "g", "kind": "gizmos", "players": []}, online=True
    )
    wait(browser, lambda d: d.find_elements("id", "table-t7"), 10, "the change never reached the page")
