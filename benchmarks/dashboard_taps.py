"""Taps per turn in the dashboard's manual mode (issue 20: a Pick in 2 taps, a typical Build in
3, a Research in at most 5), measured in a real headless Chromium at a laptop's 1400x900 and a
phone's 412x900.

Each kind of turn is played in the page by clicking, as a person taps (``tests/dash_driver.py``:
the same flows the browser test checks); every click is counted, the admin PIN typed once
before is not. Prints one line per size and kind, and whether the issue's targets are met.
Needs Debian's chromium and chromium-driver (``scripts/setup.sh --dev``).

Usage: .venv/bin/python benchmarks/dashboard_taps.py
"""

from __future__ import annotations

import logging
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from werkzeug.serving import make_server

from tests.dash_driver import measure_taps, start_chromium, viewport
from tests.web_testing import hub_of, make_app

SIZES = [(1400, 900), (412, 900)]
TARGETS = {"pick": 2, "build": 3, "research": 5, "research_file": 5}
WHAT = {
    "pick": "Pick",
    "build": "Build from the Display",
    "file": "File, using its File gizmo",
    "research": "Research, keep none",
    "research_file": "Research and File, using the File gizmo",
    "pick_by_hand": "Pick, ending the turn by hand",
}


def main() -> int:
    failed = False
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    with tempfile.TemporaryDirectory() as tmp:
        app = make_app(Path(tmp) / "games")
        srv = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        driver = start_chromium(Path(tmp) / "profile")
        try:
            for width, height in SIZES:
                print(f"{width}x{height}: playing 6 turns by tapping ...", flush=True)
                viewport(driver, width, height)
                driver.get(f"http://127.0.0.1:{srv.port}/setup")
                driver.execute_script("localStorage.clear()")
                _, taps = measure_taps(driver, hub_of(app), f"http://127.0.0.1:{srv.port}")
                for kind, n in taps.items():
                    target = TARGETS.get(kind)
                    verdict = ""
                    if target is not None:
                        verdict = f" (target {target}: {'met' if n <= target else 'NOT met'})"
                        failed |= n > target
                    print(f"  {WHAT[kind]:<42} {n} taps{verdict}")
        finally:
            driver.quit()
            srv.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
