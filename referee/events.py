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

    @classmethod
    def from_json(cls, raw: Any) -> DispenserEvent:
        """Parse the JSON form; raises :class:`EventError` naming the bad field."""
        d = _fields(raw, "dispenser event", ("kind", "time", "color", "count", "colors", "seq", "rgbc"))
        count = d.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int):
            raise EventError(f"dispenser event count: expected an integer, got {count!r}")
        colors = d.get("colors", ())
        if not isinstance(colors, list | tuple):
            raise EventError(f"dispenser event colors: expected a list, got {colors!r}")
        seq = d.get("seq")
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int)):
            raise EventError(f"dispenser event seq: expected an integer or null, got {seq!r}")
        rgbc = d.get("rgbc")
        if rgbc is not None and (
            not isinstance(rgbc, list | tuple)
            or len(rgbc) != 4
            or any(isinstance(v, bool) or not isinstance(v, int) for v in rgbc)
        ):
            raise EventError(f"dispenser event rgbc: expected four integers or null, got {rgbc!r}")
        return cls(
            kind=d.get("kind"),  # type: ignore[arg-type]
            time=_time(d, "dispenser event"),
            color=d.get("color"),
            count=count,
            colors=tuple(colors),
            seq=seq,
            rgbc=None if rgbc is None else (rgbc[0], rgbc[1], rgbc[2], rgbc[3]),
        )


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

    @classmethod
    def from_json(cls, raw: Any) -> EndOfTurn:
        """Parse the JSON form; raises :class:`EventError` naming the bad field."""
        d = _fields(raw, "end of turn", ("time", "source", "player"))
        player = d.get("player")
        if player is not None and (
            isinstance(player, bool) or not isinstance(player, int) or not 0 <= player < 4
        ):
            raise EventError(f"end of turn player: expected a seat 0..3 or null, got {player!r}")
        source = d.get("source", "dashboard")
        if not isinstance(source, str):
            raise EventError(f"end of turn source: expected a string, got {source!r}")
        return cls(time=_time(d, "end of turn"), source=source, player=player)


@dataclass(frozen=True, slots=True)
class Correction:
    """A person corrected what the referee believes; recorded with who and when."""

    time: float
    who: str
    what: str  # one of CORRECTIONS: "marble_color", "card_id", "state"
    payload: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.who, str) or not self.who.strip():
            raise EventError("correction who: say who made the correction (a non-empty name)")
        if self.what not in CORRECTIONS:
            raise EventError(f"correction what: expected one of {CORRECTIONS}, got {self.what!r}")
        if not isinstance(self.payload, dict):
            raise EventError(f"correction payload: expected an object, got {self.payload!r}")

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["type"] = "correction"
        return d

    @classmethod
    def from_json(cls, raw: Any) -> Correction:
        """Parse the JSON form; raises :class:`EventError` naming the bad field."""
        d = _fields(raw, "correction", ("time", "who", "what", "payload"))
        return cls(
            time=_time(d, "correction"),
            who=d.get("who"),  # type: ignore[arg-type]
            what=d.get("what"),  # type: ignore[arg-type]
            payload=d.get("payload", {}),
        )


#: What a person can correct (see :meth:`referee.tracker.Tracker.correct`).
CORRECTIONS = ("marble_color", "card_id", "state")


def _fields(raw: Any, what: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise EventError(f"{what}: expected a JSON object")
    extra = sorted(set(raw) - set(allowed) - {"type"})
    if extra:
        raise EventError(f"{what}: unknown field {extra[0]!r} (expected {', '.join(allowed)})")
    return raw


def _time(d: dict[str, Any], what: str) -> float:
    t = d.get("time")
    if isinstance(t, bool) or not isinstance(t, int | float):
        raise EventError(f"{what} time: expected seconds as a number, got {t!r}")
    return float(t)
