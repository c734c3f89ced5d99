"""The render lock: a second process asking for the same cached folder waits for the first."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from vision.training.cachelock import render_lock

HOLD = """
import sys, time
from pathlib import Path
from vision.training.cachelock import render_lock
with render_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(1.0)
    Path(sys.argv[2]).write_text("rendered")
"""


def test_a_second_render_waits_for_the_first(tmp_path: Path) -> None:
    folder = tmp_path / "recording" / "game-1"
    done = tmp_path / "done"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder), str(done)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with render_lock(folder):
            waited = time.monotonic() - started
            assert done.is_file(), "the lock was taken while the other process held it"
        assert waited > 0.2
    finally:
        holder.wait(10)
    assert (folder.parent / "game-1.lock").is_file()
