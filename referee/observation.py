"""The table observation: what a sensor pipeline reports about the table at one moment.

This is the one definition of the format (documented in ``docs/observation.md``). The vision
pipeline produces it, tests and the dashboard's manual mode write it by hand, and the tracker
consumes it. Every sighting carries a confidence; a zone that is ``None`` was not seen at all
(covered by a hand, out of view), which is different from a zone seen empty.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Self

from referee.contrivance.data import BUILDERS, EDGES, is_card
from referee.gizmos.cards import COLORS

FORMAT = "gizmos-observation"
VERSION = 1
DISPLAY_SLOTS: dict[int, int] = {1: 4, 2: 3, 3: 2}


class ObservationError(ValueError):
    """A malformed observation; the message names the field that is wrong."""


@dataclass(frozen=True, slots=True)
class CardSighting:
    """A card seen somewhere. ``card`` is the card id, or ``None`` for a card seen but not identified."""

    card: int | None
    confidence: float


@dataclass(frozen=True, slots=True)
class MarbleSighting:
    """One energy marble; ``color`` is one of :data:`COLORS` or ``"unknown"``."""

    color: str
    confidence: float


@dataclass(frozen=True, slots=True)
class SlotSighting:
    """One Display slot. ``card is None`` with a confidence means the slot was seen empty."""

    level: int
    slot: int
    card: int | None
    confidence: float


@dataclass(frozen=True, slots=True)
class PlayerSighting:
    """One player's area; each zone is ``None`` when it was not seen."""

    seat: int
    ring: tuple[MarbleSighting, ...] | None = None
    archive: tuple[CardSighting, ...] | None = None
    gizmos: tuple[CardSighting, ...] | None = None
    vp_tokens: tuple[int, float] | None = None  # (points, confidence)


#: Where a reaching hand can be over (:data:`ReachSighting.zone`): a tier's deck, a Display
#: slot, the Energy Row, a seat's ring / Archive / built gizmos / VP tokens (keyed as the zones
#: a hand covers, ``vision.geometry.zone_rects``), the dispenser, or elsewhere on the table.
REACH_ZONES: frozenset[str] = frozenset(
    {"energy_row", "dispenser", "table"}
    | {f"deck/{level}" for level in DISPLAY_SLOTS}
    | {f"display/{level}/{slot}" for level, n in DISPLAY_SLOTS.items() for slot in range(n)}
    | {f"{seat}/{zone}" for seat in range(4) for zone in ("ring", "archive", "gizmos", "vp")}
)


@dataclass(frozen=True, slots=True)
class ReachSighting:
    """A hand reaching over the table: whose arm (the seat whose side of the table it comes in
    from; ``None`` when that cannot be told) and what the hand is over (one of
    :data:`REACH_ZONES`). On a real table a Research declined is not traceless: a player's arm
    reaches to a deck; the referee uses whose arm reaches where to tell whose turn it is."""

    seat: int | None
    zone: str
    confidence: float


class _JsonDocument:
    """What both observations share: compact JSON text out, JSON text in (through the class's
    own ``to_json``/``from_json``)."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_json(cls, raw: Any) -> Self:
        raise NotImplementedError

    def dumps(self) -> str:
        """Compact JSON text."""
        return _compact(self.to_json())

    @classmethod
    def loads(cls, text: str | bytes) -> Self:
        """Parse JSON text; malformed JSON is an :class:`ObservationError` too."""
        return cls.from_json(_json_of(text))


@dataclass(frozen=True, slots=True)
class Observation(_JsonDocument):
    """Everything seen at one moment. Missing display slots are unknown. ``reaches`` is the
    hands seen reaching over the table: ``None`` when the pipeline does not report hands at
    all, ``()`` when it looked and saw none."""

    time: float
    display: tuple[SlotSighting, ...] = ()
    energy_row: tuple[MarbleSighting, ...] | None = None
    players: tuple[PlayerSighting, ...] = ()
    turn_player: int | None = None
    source: str = "camera"
    frame: int | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    reaches: tuple[ReachSighting, ...] | None = None

    def player(self, seat: int) -> PlayerSighting | None:
        """The sighting of a seat's area, if that area is in the observation."""
        for p in self.players:
            if p.seat == seat:
                return p
        return None

    def to_json(self) -> dict[str, Any]:
        """The documented JSON form."""

        def marbles(ms: tuple[MarbleSighting, ...] | None) -> list[dict[str, Any]] | None:
            return None if ms is None else [{"color": m.color, "confidence": m.confidence} for m in ms]

        def cards(cs: tuple[CardSighting, ...] | None) -> list[dict[str, Any]] | None:
            return None if cs is None else [{"card": c.card, "confidence": c.confidence} for c in cs]

        out: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "time": self.time,
            "source": self.source,
            "frame": self.frame,
            "turn_player": self.turn_player,
            "display": [
                {"level": s.level, "slot": s.slot, "card": s.card, "confidence": s.confidence}
                for s in self.display
            ],
            "energy_row": marbles(self.energy_row),
            "players": [
                {
                    "seat": p.seat,
                    "ring": marbles(p.ring),
                    "archive": cards(p.archive),
                    "gizmos": cards(p.gizmos),
                    "vp_tokens": None
                    if p.vp_tokens is None
                    else {"points": p.vp_tokens[0], "confidence": p.vp_tokens[1]},
                }
                for p in self.players
            ],
        }
        if self.reaches is not None:  # absent: the pipeline does not report hands (format 1 as before)
            out["reaches"] = [
                {"seat": r.seat, "zone": r.zone, "confidence": r.confidence} for r in self.reaches
            ]
        if self.extra:
            out["extra"] = self.extra
        return out

    @classmethod
    def from_json(cls, raw: Any) -> Observation:
        """Parse and validate; raises :class:`ObservationError` naming the bad field."""
        return _parse(raw)


def _compact(doc: dict[str, Any]) -> str:
    return json.dumps(doc, separators=(",", ":"))


def _json_of(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ObservationError(f"observation: not valid JSON ({exc})") from exc


def _conf(raw: Any, where: str, key: str = "confidence") -> float:
    c = raw.get(key) if isinstance(raw, dict) else None
    if isinstance(c, bool) or not isinstance(c, int | float) or not 0.0 <= float(c) <= 1.0:
        raise ObservationError(f"{where}.{key}: expected a number in 0..1, got {c!r}")
    return float(c)


def _card_id(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 112:
        raise ObservationError(f"{where}: unknown card {value!r} (ids are 0..111)")
    return value


def _marbles(raw: Any, where: str) -> tuple[MarbleSighting, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise ObservationError(f"{where}: expected a list of marbles or null")
    out = []
    for i, m in enumerate(raw):
        if not isinstance(m, dict) or (m.get("color") not in COLORS and m.get("color") != "unknown"):
            raise ObservationError(f"{where}[{i}].color: expected one of {COLORS} or 'unknown'")
        out.append(MarbleSighting(m["color"], _conf(m, f"{where}[{i}]")))
    return tuple(out)


def _cards(raw: Any, where: str) -> tuple[CardSighting, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise ObservationError(f"{where}: expected a list of cards or null")
    out = []
    for i, c in enumerate(raw):
        if not isinstance(c, dict):
            raise ObservationError(f"{where}[{i}]: expected an object")
        out.append(CardSighting(_card_id(c.get("card"), f"{where}[{i}].card"), _conf(c, f"{where}[{i}]")))
    return tuple(out)


FIELDS = frozenset(
    {
        "format",
        "version",
        "time",
        "source",
        "frame",
        "turn_player",
        "display",
        "energy_row",
        "players",
        "reaches",
        "extra",
    }
)
REACH_FIELDS = frozenset({"seat", "zone", "confidence"})
PLAYER_FIELDS = frozenset({"seat", "ring", "archive", "gizmos", "vp_tokens"})


def _known(raw: dict[str, Any], allowed: frozenset[str], where: str) -> None:
    """Unknown fields are refused: a misspelt zone would otherwise silently read as "not seen"."""
    extra = sorted(str(k) for k in set(raw) - allowed)
    if extra:
        raise ObservationError(f"{where}: unknown field {extra[0]!r} (known: {', '.join(sorted(allowed))})")


def _list(raw: Any, where: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ObservationError(f"{where}: expected a list")
    return raw


def _reaches(raw: Any) -> tuple[ReachSighting, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise ObservationError("reaches: expected a list of reaching hands or null (hands not reported)")
    out = []
    for i, r in enumerate(raw):
        where = f"reaches[{i}]"
        if not isinstance(r, dict):
            raise ObservationError(f"{where}: expected an object")
        _known(r, REACH_FIELDS, where)
        seat = r.get("seat")
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < 4):
            raise ObservationError(f"{where}.seat: expected a seat 0..3 or null (unknown), got {seat!r}")
        zone = r.get("zone")
        if zone not in REACH_ZONES:
            raise ObservationError(
                f"{where}.zone: expected a zone such as 'deck/2', 'display/1/0', 'energy_row', "
                f"'1/ring', 'dispenser' or 'table', got {zone!r}"
            )
        out.append(ReachSighting(seat, zone, _conf(r, where)))
    return tuple(out)


def _parse(raw: Any) -> Observation:
    if not isinstance(raw, dict):
        raise ObservationError("observation: expected a JSON object")
    if raw.get("format") != FORMAT or raw.get("version") != VERSION:
        raise ObservationError(f"observation: expected format {FORMAT!r} version {VERSION}")
    _known(raw, FIELDS, "observation")
    t = raw.get("time")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        raise ObservationError(f"observation.time: expected seconds as a number, got {t!r}")
    display = []
    seen_slots: set[tuple[int, int]] = set()
    for i, s in enumerate(_list(raw.get("display"), "display")):
        where = f"display[{i}]"
        if not isinstance(s, dict):
            raise ObservationError(f"{where}: expected an object")
        level, slot = s.get("level"), s.get("slot")
        if level not in DISPLAY_SLOTS or not isinstance(slot, int) or not 0 <= slot < DISPLAY_SLOTS[level]:
            raise ObservationError(f"{where}: no Display slot level={level!r} slot={slot!r}")
        if (level, slot) in seen_slots:
            raise ObservationError(f"{where}: Display slot {level}/{slot} reported twice")
        seen_slots.add((level, slot))
        display.append(SlotSighting(level, slot, _card_id(s.get("card"), f"{where}.card"), _conf(s, where)))
    players = []
    seats: set[int] = set()
    for i, p in enumerate(_list(raw.get("players"), "players")):
        where = f"players[{i}]"
        if not isinstance(p, dict):
            raise ObservationError(f"{where}: expected an object")
        seat = p.get("seat")
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < 4:
            raise ObservationError(f"{where}.seat: expected a seat 0..3, got {seat!r}")
        if seat in seats:
            raise ObservationError(f"{where}.seat: seat {seat} reported twice")
        seats.add(seat)
        _known(p, PLAYER_FIELDS, where)
        vp = p.get("vp_tokens")
        tokens = None
        if vp is not None:
            pts = vp.get("points") if isinstance(vp, dict) else None
            if isinstance(pts, bool) or not isinstance(pts, int) or pts < 0:
                raise ObservationError(f"{where}.vp_tokens.points: expected a count >= 0, got {pts!r}")
            tokens = (pts, _conf(vp, f"{where}.vp_tokens"))
        players.append(
            PlayerSighting(
                seat=p["seat"],
                ring=_marbles(p.get("ring"), f"{where}.ring"),
                archive=_cards(p.get("archive"), f"{where}.archive"),
                gizmos=_cards(p.get("gizmos"), f"{where}.gizmos"),
                vp_tokens=tokens,
            )
        )
    turn = raw.get("turn_player")
    if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int) or not 0 <= turn < 4):
        raise ObservationError(f"observation.turn_player: expected a seat 0..3 or null, got {turn!r}")
    frame = raw.get("frame")
    if frame is not None and (isinstance(frame, bool) or not isinstance(frame, int)):
        raise ObservationError(f"observation.frame: expected an integer or null, got {frame!r}")
    extra = raw.get("extra") or {}
    if not isinstance(extra, dict):
        raise ObservationError("observation.extra: expected an object")
    source = raw.get("source", "camera")
    if not isinstance(source, str):
        raise ObservationError(f"observation.source: expected a string, got {source!r}")
    return Observation(
        time=float(t),
        display=tuple(display),
        energy_row=_marbles(raw.get("energy_row"), "energy_row"),
        players=tuple(players),
        turn_player=turn,
        source=source,
        frame=frame,
        extra=extra,
        reaches=_reaches(raw.get("reaches")),
    )


# --- Contrivance: the Workbench seen from above (issue 19) -----------------------------------

WORKBENCH_FORMAT = "contrivance-observation"


@dataclass(frozen=True, slots=True)
class TileSighting:
    """A Component tile seen on a Workbench square, each reading with its own confidence.

    ``builder`` is one of :data:`referee.contrivance.BUILDERS` (or ``"unknown"``); ``double`` is
    the two-Rivet tile; ``facing`` is the edge of its first Rivet as in
    :class:`referee.contrivance.Tile` (0 N, 1 E, 2 S, 3 W; ``None`` when it could not be read);
    ``value`` is what its Point Marker dial shows, 0-6 (``None`` when unreadable).
    """

    builder: str
    double: bool
    facing: int | None
    value: int | None
    confidence: float
    facing_confidence: float
    value_confidence: float


@dataclass(frozen=True, slots=True)
class SquareSighting:
    """One Workbench square (row and column 1-based, as the rulings number them).

    ``tile is None`` with a confidence means the square was seen empty; a square missing from
    the observation was not seen (covered by a hand, out of view).
    """

    row: int
    column: int
    tile: TileSighting | None
    confidence: float


@dataclass(frozen=True, slots=True)
class WorkbenchObservation(_JsonDocument):
    """A Contrivance table at one moment: the Workbench squares, the Damage, the discard's top card."""

    time: float
    squares: tuple[SquareSighting, ...] = ()
    damage: tuple[int, float] | None = None  # (value, confidence); None: not seen
    discard_top: tuple[str, float] | None = None  # (card name, confidence); None: not seen
    source: str = "camera"
    frame: int | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def square(self, row: int, column: int) -> SquareSighting | None:
        """The sighting of one square, or ``None`` when it was not seen."""
        for s in self.squares:
            if (s.row, s.column) == (row, column):
                return s
        return None

    def to_json(self) -> dict[str, Any]:
        """The documented JSON form (docs/observation.md); facings are written ``"N"``..``"W"``."""

        def tile(t: TileSighting | None) -> dict[str, Any] | None:
            if t is None:
                return None
            return {
                "builder": t.builder,
                "double": t.double,
                "facing": None if t.facing is None else WORKBENCH_EDGES[t.facing],
                "value": t.value,
                "confidence": t.confidence,
                "facing_confidence": t.facing_confidence,
                "value_confidence": t.value_confidence,
            }

        out: dict[str, Any] = {
            "format": WORKBENCH_FORMAT,
            "version": VERSION,
            "time": self.time,
            "source": self.source,
            "frame": self.frame,
            "squares": [
                {"row": s.row, "column": s.column, "tile": tile(s.tile), "confidence": s.confidence}
                for s in self.squares
            ],
            "damage": None
            if self.damage is None
            else {"value": self.damage[0], "confidence": self.damage[1]},
            "discard_top": None
            if self.discard_top is None
            else {"card": self.discard_top[0], "confidence": self.discard_top[1]},
        }
        if self.extra:
            out["extra"] = self.extra
        return out

    @classmethod
    def from_json(cls, raw: Any) -> WorkbenchObservation:
        """Parse and validate; raises :class:`ObservationError` naming the bad field."""
        return _parse_workbench(raw)


#: Where a tile's first Rivet faces, as :class:`referee.contrivance.Tile` numbers it.
WORKBENCH_EDGES: tuple[str, ...] = EDGES
WORKBENCH_FIELDS = frozenset(
    {"format", "version", "time", "source", "frame", "squares", "damage", "discard_top", "extra"}
)
SQUARE_FIELDS = frozenset({"row", "column", "tile", "confidence"})
TILE_FIELDS = frozenset(
    {"builder", "double", "facing", "value", "confidence", "facing_confidence", "value_confidence"}
)
#: The Workbench is at most 6 rows (one per Builder) of 5 columns; the Damage track reads 0-10.
MAX_ROWS, COLUMNS, MAX_DAMAGE = 6, 5, 10


def _int_in(value: Any, where: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ObservationError(f"{where}: expected an integer {lo}..{hi}, got {value!r}")
    return value


def _tile_sighting(raw: Any, where: str) -> TileSighting:
    if not isinstance(raw, dict):
        raise ObservationError(f"{where}: expected a tile object or null (seen empty)")
    _known(raw, TILE_FIELDS, where)
    builder = raw.get("builder")
    if builder not in BUILDERS and builder != "unknown":
        raise ObservationError(
            f"{where}.builder: expected one of {list(BUILDERS)} or 'unknown', got {builder!r}"
        )
    double = raw.get("double")
    if not isinstance(double, bool):
        raise ObservationError(f"{where}.double: expected true or false, got {double!r}")
    facing = raw.get("facing")
    if facing is not None and facing not in WORKBENCH_EDGES:
        raise ObservationError(
            f"{where}.facing: expected one of {list(WORKBENCH_EDGES)} or null, got {facing!r}"
        )
    value = raw.get("value")
    return TileSighting(
        builder=builder,
        double=double,
        facing=None if facing is None else WORKBENCH_EDGES.index(facing),
        value=None if value is None else _int_in(value, f"{where}.value", 0, 6),
        confidence=_conf(raw, where),
        facing_confidence=_conf(raw, where, "facing_confidence"),
        value_confidence=_conf(raw, where, "value_confidence"),
    )


def _parse_workbench(raw: Any) -> WorkbenchObservation:
    if not isinstance(raw, dict):
        raise ObservationError("observation: expected a JSON object")
    if raw.get("format") != WORKBENCH_FORMAT or raw.get("version") != VERSION:
        raise ObservationError(f"observation: expected format {WORKBENCH_FORMAT!r} version {VERSION}")
    _known(raw, WORKBENCH_FIELDS, "observation")
    t = raw.get("time")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        raise ObservationError(f"observation.time: expected seconds as a number, got {t!r}")
    squares = []
    seen: set[tuple[int, int]] = set()
    for i, s in enumerate(_list(raw.get("squares"), "squares")):
        where = f"squares[{i}]"
        if not isinstance(s, dict):
            raise ObservationError(f"{where}: expected an object")
        _known(s, SQUARE_FIELDS, where)
        row = _int_in(s.get("row"), f"{where}.row", 1, MAX_ROWS)
        column = _int_in(s.get("column"), f"{where}.column", 1, COLUMNS)
        if (row, column) in seen:
            raise ObservationError(f"{where}: square row {row}, column {column} reported twice")
        seen.add((row, column))
        tile = None if s.get("tile") is None else _tile_sighting(s["tile"], f"{where}.tile")
        squares.append(SquareSighting(row, column, tile, _conf(s, where)))
    damage = None
    if raw.get("damage") is not None:
        d = raw["damage"]
        if not isinstance(d, dict):
            raise ObservationError('observation.damage: expected {"value": n, "confidence": c} or null')
        _known(d, frozenset({"value", "confidence"}), "damage")
        damage = (_int_in(d.get("value"), "damage.value", 0, MAX_DAMAGE), _conf(d, "damage"))
    discard_top = None
    if raw.get("discard_top") is not None:
        d = raw["discard_top"]
        if not isinstance(d, dict):
            raise ObservationError(
                'observation.discard_top: expected {"card": name, "confidence": c} or null'
            )
        _known(d, frozenset({"card", "confidence"}), "discard_top")
        if not is_card(d.get("card")):
            raise ObservationError(f"discard_top.card: not a Tool card name: {d.get('card')!r}")
        discard_top = (str(d["card"]), _conf(d, "discard_top"))
    frame = raw.get("frame")
    if frame is not None and (isinstance(frame, bool) or not isinstance(frame, int)):
        raise ObservationError(f"observation.frame: expected an integer or null, got {frame!r}")
    extra = raw.get("extra") or {}
    if not isinstance(extra, dict):
        raise ObservationError("observation.extra: expected an object")
    source = raw.get("source", "camera")
    if not isinstance(source, str):
        raise ObservationError(f"observation.source: expected a string, got {source!r}")
    return WorkbenchObservation(
        time=float(t),
        squares=tuple(squares),
        damage=damage,
        discard_top=discard_top,
        source=source,
        frame=frame,
        extra=extra,
    )
