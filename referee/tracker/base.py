"""What every part of the tracker shares: its settings, its one error, what a call returns and
the move log's line. Kept apart so the tracker's concerns (``tracker``, ``sensors``, ``turns``,
``corrections``) can use them without importing each other."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from referee.gizmos import Step
from referee.tracker.explain import Limits
from referee.tracker.verdicts import RefereeWarning

Listener = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line of the move log: a step in plain language, with its turn and player."""

    turn: int
    round: int
    player: int | None
    text: str
    step: dict[str, Any]
    forced: bool = False
    # An end of turn: how it was known ("signal", "table": inferred from what was seen, "person").
    ended: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(slots=True)
class Update:
    """What one input changed: accepted steps, new warnings, and notes."""

    steps: list[Step] = field(default_factory=list)
    warnings: list[RefereeWarning] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The tracker's provisional reading (:mod:`referee.tracker.provisional`) changed: the
    #: dashboard has something new to show, though nothing was accepted.
    provisional: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.steps or self.warnings)


@dataclass(frozen=True, slots=True)
class TrackerSettings:
    """Noise handling and search bounds."""

    frames: int = 3  # a zone counts once it reads the same this many frames in a row
    threshold: float = 0.6  # items below this confidence are unknown
    sure: float = 0.85  # zones read below this confidence could be misread: no violation rests on them
    confirm: int = 3  # frames an unexplained stable view must persist before a mid-turn verdict
    eot_wait: int = 12  # frames to wait for a clear view after an end-of-turn signal
    inferred_ends: int = 3  # turns an explanation may end unsignalled (the next players' changes show it)
    final_wait: int = 3  # frames the game's last turn, with nothing legal left but ending it, stays still
    backoff: int = 10  # frames without a new search after a table nothing explains (a person is asked)
    max_violations: int = 2
    limits: Limits = field(default_factory=Limits)


class TrackerError(RuntimeError):
    """A request the tracker cannot carry out (unknown warning, bad correction)."""
