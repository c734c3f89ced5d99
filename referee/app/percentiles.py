"""The one way every figure of this project takes a percentile: the nearest rank.

The ``q``-quantile of ``n`` values is the smallest value with at least ``q * n`` of the values at
or below it (the ``ceil(q * n)``-th smallest): always one of the values measured, never an
interpolation. The p99 of 171 delays is the 170th smallest: at most one delay lies above it.
Standard library only, so the benchmarks of the engines can use it too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def nearest_rank(values: Iterable[float], q: float) -> float:
    """The ``q``-quantile (0 < q <= 1) of ``values`` by nearest rank. Raises ValueError for no values."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("a percentile of no values")
    if not 0.0 < q <= 1.0:
        raise ValueError(f"quantile {q!r}: expected 0 < q <= 1")
    # round() first: in binary floating point 0.07 * 100 is 7.000000000000001, whose ceil is 8
    rank = math.ceil(round(q * len(ordered), 9))
    return ordered[max(1, rank) - 1]


def p99(values: Iterable[float]) -> float:
    """The 99th percentile of ``values`` by nearest rank."""
    return nearest_rank(values, 0.99)
