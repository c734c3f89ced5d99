"""Steps: the readable unit of play (docs/contrivance.md has every JSON form).

Player steps: ``place`` (a tile, building phase), ``redraw`` (discard one card, draw one),
``pass``, ``play`` (a Tool card with its targets), ``switch_on`` (the Switch On card just drawn,
with its value). Chance steps, supplied by a random source or by what the table showed:
``builder`` (the Builder a seat drew), ``draw`` (a card dealt or drawn), ``take`` (the card
Take a Tool took blind), ``reveal`` (the Contrivance's requirement).

Squares are ``[row, column]``, 1-based; facings are ``"N"``, ``"E"``, ``"S"``, ``"W"``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from referee.contrivance.data import (
    BUILDERS,
    COLUMNS,
    EDGES,
    MAX_PLAYERS,
    POINTS,
    ROWS_PER_MAT,
    TOOL_NAMES,
    is_card,
    switch_on_value,
)
from referee.contrivance.errors import InvalidStep
from referee.contrivance.state import Square

PLAYER_KINDS = ("place", "redraw", "pass", "play", "switch_on")
CHANCE_KINDS = ("builder", "draw", "take", "reveal")
KINDS = PLAYER_KINDS + CHANCE_KINDS
MAX_ROWS = 2 * ROWS_PER_MAT

#: The fields each step kind carries besides ``kind`` and ``player``.
_FIELDS: dict[str, tuple[str, ...]] = {
    "place": ("tile", "to", "facing"),
    "redraw": ("card",),
    "pass": (),
    "switch_on": ("value",),
    "builder": ("builder",),
    "draw": ("card",),
    "take": ("card",),
    "reveal": ("value",),
}
#: The targets each Tool card takes (ruling 14), besides ``card``.
TARGETS: dict[str, tuple[str, ...]] = {
    "move": ("at", "to", "facing"),
    "rotate": ("at", "facing"),
    "swap_component": ("at", "to"),
    "swap_points": ("at", "to"),
    **{name: ("at",) for name in POINTS},
    "take_a_tool": ("target",),
    "redraw_a_tool": ("retrieve",),
}
OPTIONAL = ("card", "tile", "at", "to", "facing", "target", "retrieve", "value", "builder")


@dataclass(frozen=True, slots=True)
class Step:
    """One step. ``player`` is the acting seat (``None`` for chance steps).

    ``at``: the square a Tool acts on (Move's origin); ``to``: where a tile goes (place, Move)
    or the other square of a swap; ``facing``: where a placed tile's first Rivet faces, the
    facing a moved tile keeps, or the facing Rotate turns a tile to; ``target``: the seat Take a
    Tool takes from; ``retrieve``: the card Redraw a Tool takes from the discard pile; ``value``:
    a Switch On card's damage change, or the revealed Contrivance's requirement.
    """

    kind: str
    player: int | None = None
    card: str | None = None
    tile: str | None = None
    at: Square | None = None
    to: Square | None = None
    facing: int | None = None
    target: int | None = None
    retrieve: str | None = None
    value: int | None = None
    builder: str | None = None

    @property
    def is_chance(self) -> bool:
        return self.kind in CHANCE_KINDS

    def fields(self) -> tuple[str, ...]:
        """The fields this kind of step carries (its Tool card's targets for ``play``)."""
        if self.kind == "play":
            return ("card", *TARGETS.get(self.card or "", ()))
        return _FIELDS[self.kind]

    def to_json(self) -> dict[str, Any]:
        """The readable JSON form, e.g. ``{"kind": "play", "player": 0, "card": "rotate",
        "at": [2, 3], "facing": "E"}``."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.player is not None:
            out["player"] = self.player
        for name in OPTIONAL:
            v = getattr(self, name)
            if v is None:
                continue
            if name in ("at", "to"):
                v = list(v)
            elif name == "facing":
                v = EDGES[v]
            out[name] = v
        return out

    def dumps(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"))

    def __str__(self) -> str:
        return describe(self)


def _square(v: Any, name: str) -> Square:
    if (
        not isinstance(v, list | tuple)
        or len(v) != 2
        or any(type(x) is not int for x in v)
        or not (1 <= v[0] <= MAX_ROWS and 1 <= v[1] <= COLUMNS)
    ):
        raise InvalidStep(f"step.{name}: expected a square [row 1-{MAX_ROWS}, column 1-{COLUMNS}], got {v!r}")
    return (v[0], v[1])


def step_from_json(raw: Any, players: int = MAX_PLAYERS) -> Step:
    """Parse a step's JSON form; raises :class:`InvalidStep` naming what is wrong."""
    if not isinstance(raw, dict):
        raise InvalidStep('step: expected a JSON object such as {"kind": "pass", "player": 0}')
    kind = raw.get("kind")
    if kind not in KINDS:
        raise InvalidStep(f"step.kind: expected one of {list(KINDS)}, got {kind!r}")
    values: dict[str, Any] = {}
    for name in OPTIONAL:
        if name in raw:
            v = raw[name]
            if name in ("at", "to"):
                v = _square(v, name)
            elif name == "facing":
                if v not in EDGES:
                    raise InvalidStep(f"step.facing: expected one of {list(EDGES)}, got {v!r}")
                v = EDGES.index(v)
            values[name] = v
    unknown = sorted(set(raw) - {"kind", "player", *OPTIONAL})
    if unknown:
        raise InvalidStep(f"step: unknown field(s) {unknown}")
    step = Step(kind, raw.get("player"), **values)
    check_shape(step, players)
    return step


def check_shape(step: Step, players: int = MAX_PLAYERS) -> None:
    """Raise :class:`InvalidStep` unless ``step`` is well formed for ``players``: a known kind,
    exactly the fields it carries, each of the right type and range. ``apply`` calls this, so a
    hand-made malformed step is refused rather than read with guessed defaults."""
    kind = step.kind
    if kind not in KINDS:
        raise InvalidStep(f"step.kind: expected one of {list(KINDS)}, got {kind!r}")
    p = step.player
    if kind in PLAYER_KINDS:
        if type(p) is not int or not 0 <= p < players:
            raise InvalidStep(f"step.player: expected the acting seat 0..{players - 1}, got {p!r}")
    elif p is not None:
        raise InvalidStep(f"step.player: a '{kind}' step is a random outcome and has no player")
    if kind == "play" and step.card not in TARGETS:
        raise InvalidStep(f"step.card: a 'play' step plays one of {list(TOOL_NAMES)}, got {step.card!r}")
    fields = step.fields()
    for name in OPTIONAL:
        v = getattr(step, name)
        if name not in fields:
            if v is not None:
                what = f"a '{step.card}' card" if kind == "play" else f"a '{kind}' step"
                raise InvalidStep(f"step.{name}: not a field of {what}")
            continue
        if v is None:
            what = f"a '{step.card}' card" if kind == "play" else f"a '{kind}' step"
            raise InvalidStep(f"step: {what} needs '{name}'")
        _check_field(kind, name, v, players)


def _check_field(kind: str, name: str, v: Any, players: int) -> None:
    ok: bool
    if name in ("at", "to"):
        _square(v, name)
        ok = isinstance(v, tuple)
    elif name == "facing":
        ok = type(v) is int and 0 <= v < 4
    elif name == "target":
        ok = type(v) is int and 0 <= v < players
    elif name == "builder":
        ok = v in BUILDERS
    elif name == "tile":
        ok = isinstance(v, str) and v.rpartition("-")[0] in BUILDERS and v.rpartition("-")[2] in "1234"
    elif name == "value":
        ok = type(v) is int and (v != 0 if kind == "switch_on" else 1 <= v <= 4)
    elif name == "retrieve" or (name == "card" and kind == "redraw"):
        ok = isinstance(v, str) and (v in TOOL_NAMES or switch_on_value(v) is not None)
    else:  # card of draw/take/play
        ok = is_card(v) and (kind != "take" or switch_on_value(v) is None)
    if not ok:
        raise InvalidStep(f"step.{name}: not a valid {name} for a '{kind}' step: {v!r}")


def step_from_text(text: str, players: int = MAX_PLAYERS) -> Step:
    """Parse a step from JSON text."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidStep(f"step: not valid JSON: {exc.msg} at column {exc.colno}") from exc
    return step_from_json(raw, players)


def _sq(square: Square | None) -> str:
    return f"row {square[0]}, column {square[1]}" if square else "?"


#: The cards' printed names, for sentences.
CARD_TITLES: dict[str, str] = {
    "move": "Move",
    "rotate": "Rotate",
    "swap_component": "Swap Component",
    "swap_points": "Swap Points",
    "take_a_tool": "Take a Tool",
    "redraw_a_tool": "Redraw a Tool",
    **{n: f"{v:+d} Point{'s' if abs(v) > 1 else ''}" for n, v in POINTS.items()},
}


def _card_text(card: str | None) -> str:
    v = switch_on_value(card or "")
    return f"a Switch On card ({v:+d})" if v is not None else CARD_TITLES.get(card or "", repr(card))


def describe(step: Step, name: str | None = None) -> str:
    """A plain sentence for the move log, e.g. "Ana plays Rotate on row 2, column 3: now facing
    E"; without a name the player is "seat N", N being the step's ``player`` (as in the JSON, from 0)."""
    who = name if name is not None else (f"seat {step.player}" if step.player is not None else "Chance")
    k = step.kind
    facing = EDGES[step.facing] if step.facing is not None else "?"
    if k == "place":
        return f"{who} places {step.tile} on {_sq(step.to)}, Rivet facing {facing}"
    if k == "redraw":
        return f"{who} discards {_card_text(step.card)} and draws another"
    if k == "pass":
        return f"{who} passes"
    if k == "switch_on":
        return f"{who} plays the Switch On card drawn: damage {step.value:+d}"
    if k == "builder":
        return f"the next seat's Builder is the {step.builder}"
    if k == "draw":
        return f"{_card_text(step.card)} comes off the deck"
    if k == "take":
        return f"{_card_text(step.card)} is the card taken"
    if k == "reveal":
        return f"the Contrivance is revealed: it requires {step.value} tile(s) of the Builder's type"
    return f"{who} plays {play_text(step)}"


def play_text(step: Step) -> str:
    """A Tool card's play as a clause, without the player: "Rotate on row 2, column 3: now
    facing W" (:func:`describe` says who; a warning composes it into its sentence)."""
    facing = EDGES[step.facing] if step.facing is not None else "?"
    card, text = step.card or "", _card_text(step.card)
    if card == "move":
        return f"{text}: {_sq(step.at)} to {_sq(step.to)} (still facing {facing})"
    if card == "rotate":
        return f"{text} on {_sq(step.at)}: now facing {facing}"
    if card in ("swap_component", "swap_points"):
        return f"{text}: {_sq(step.at)} with {_sq(step.to)}"
    if card in POINTS:
        return f"{text} on {_sq(step.at)}"
    if card == "take_a_tool":
        return f"{text} from seat {step.target or 0}'s hand"
    return f"{text}: takes {_card_text(step.retrieve)} from the discard pile"
