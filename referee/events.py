"""Events the tracker takes besides observations: turn signals, dispenser sensors, corrections.

Defined once here; the serial driver in ``hardware/`` produces :class:`DispenserEvent`, the
dashboard produces :class:`EndOfTurn` and :class:`Correction`. Each has a JSON form for the
game record.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from referee.gizmos.cards import COLORS

#: What the dispenser board can report (see docs/hardware.md for the wire protocol).
DISPENSER_KINDS = ("row_refill", "draw", "return", "button")


class EventError(ValueError):
    """A malformed event; the message names the field."""


@dataclass(frozen=True, slots=True)
class DispenserEvent:
    """A sensor event from the energy dispenser.

    ``row_refill``: a marble rolled into the Energy Row (``color`` as sensed);
    ``draw``: a marble was drawn blind from the dispenser (``color`` as sensed);
    ``return``: ``count`` marbles went back into the top (``colors`` when sensed);
    ``button``: the turn button was pressed.
    ``color`` is one of :data:`COLORS` or ``"unknown"`` when the sensor could not tell.
    """

    kind: str
    time: float
    color: str | None = None
    count: int = 1
    colors: tuple[str, ...] = ()
    seq: int | None = None
    rgbc: tuple[int, int, int, int] | None = None

    def __post_init__(self) -> None:
        if self.kind not in DISPENSER_KINDS:
            raise EventError(f"dispenser event kind: expected one of {DISPENSER_KINDS}, got {self.kind!r}")
        valid = (*COLORS, "unknown")
        if self.color is not None and self.color not in valid:
            raise EventError(f"dispenser event color: expected one of {valid}, got {self.color!r}")
        if any(c not in valid for c in self.colors):
            raise EventError(f"dispenser event colors: expected colours from {valid}")
        if self.count < 0:
            raise EventError("dispenser event count: must be >= 0")

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["type"] = "dispenser"
        return d


@dataclass(frozen=True, slots=True)
class EndOfTurn:
    """Someone signalled the end of a turn (dashboard, keyboard, dispenser button)."""

    time: float
    source: str = "dashboard"
    player: int | None = None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["type"] = "end_of_turn"
        return d


@dataclass(frozen=True, slots=True)
class Correction:
    """A person corrected what the referee believes; recorded with who and when."""

    time: float
    who: str
    what: str  # e.g. "marble_color", "card_id", "accept_warning", "dismiss_warning", "undo_turn"
    payload: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["type"] = "correction"
        return d
