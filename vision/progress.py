"""A dependency-free progress line for long jobs (rendering, benchmarks)."""

from __future__ import annotations

import sys
import time


class Progress:
    """Prints ``label: done/total (pct) elapsed, ETA`` at most every ``every`` seconds, to stderr."""

    def __init__(self, label: str, total: int, every: float = 2.0) -> None:
        self.label, self.total, self.every = label, total, every
        self.start = self.last = time.monotonic()
        self.done = 0

    def step(self, n: int = 1) -> None:
        """Count ``n`` finished items and print when due (always on the last one)."""
        self.done += n
        now = time.monotonic()
        if now - self.last >= self.every or self.done >= self.total:
            self.last = now
            el = now - self.start
            eta = el / self.done * (self.total - self.done) if self.done else 0.0
            pct = 100.0 * self.done / max(self.total, 1)
            print(
                f"{self.label}: {self.done}/{self.total} ({pct:.0f}%) {el:.0f}s elapsed, ETA {eta:.0f}s",
                file=sys.stderr,
                flush=True,
            )
