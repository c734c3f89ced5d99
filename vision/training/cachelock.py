"""One render of a cached folder at a time: two processes asking for the same recording (two test
runs, a test and the demo) would otherwise delete each other's half-written ``.partial`` folder
and move a broken one into place."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def render_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock beside ``folder`` (``<folder>.lock``) for the ``with`` block; a second
    process waits, then finds the folder its predecessor rendered. The lock dies with its process."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
