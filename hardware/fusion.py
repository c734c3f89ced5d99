"""Fusion glue: dispenser sensor events from the serial driver into the referee's tracker.

The driver reads the port on a thread of its own; the tracker is not thread-safe. So the
driver queues its events (no sink) and whoever owns the tracker drains the queue into it
between camera frames, holding the tracker's lock: :func:`pump`. What the tracker does with
the events (confirming Row colors, draws and the marbles paid for a Build; reporting a
camera/sensor disagreement as *uncertain*, never as a broken rule; the board's button ends the
turn) is described in ``docs/referee.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from referee.events import DispenserEvent


class EventSource(Protocol):
    """What :func:`pump` needs of a :class:`hardware.driver.DispenserDriver`."""

    def get(self, timeout: float | None = None) -> DispenserEvent | None: ...


@runtime_checkable
class SensorSink(Protocol):
    """What :func:`pump` needs of a :class:`referee.tracker.Tracker`."""

    def dispenser(self, event: DispenserEvent) -> Any: ...


def pump(
    source: EventSource,
    tracker: SensorSink | Callable[[], AbstractContextManager[SensorSink]],
    limit: int = 1000,
) -> list[Any]:
    """Hand every queued sensor event to the tracker (in arrival order); returns its updates.

    ``tracker`` is the tracker itself, or a callable giving a context manager that holds it
    locked (the dashboard's ``game.locked``), entered once per event so a camera frame is
    never kept waiting behind a long burst. At most ``limit`` events per call.
    """
    updates = []
    for _ in range(limit):
        event = source.get(timeout=0)
        if event is None:
            break
        if isinstance(tracker, SensorSink):
            updates.append(tracker.dispenser(event))
        else:
            with tracker() as locked:
                updates.append(locked.dispenser(event))
    return updates
