"""Steps: the readable unit of play. A turn is a sequence of steps (docs/steps.md).

Player steps: ``file``, ``pick``, ``build``, ``research``, ``use`` (a triggered gizmo), ``skip``
(decline an owed choice), ``bottom`` (put a Research card under its deck), ``end_turn``.
Chance steps (the random source or the camera supplies them): ``reveal`` (the card that came
off a deck) and ``dispense`` (the color of a marble that left the dispenser).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from referee.gizmos.cards import COLOR_INDEX, COLORS, default_cards
from referee.gizmos.errors import InvalidStep
from referee.gizmos.state import Counts

PLAYER_KINDS = ("file", "pick", "build", "research", "use", "skip", "bottom", "end_turn")
CHANCE_KINDS = ("reveal", "dispense")
KINDS = PLAYER_KINDS + CHANCE_KINDS
_FIELDS: dict[str, tuple[str, ...]] = {
    "file": ("card",),
    "pick": ("color",),
    "build": ("card", "pay"),
    "research": ("level",),
    "use": ("gizmo",),
    "skip": (),
    "bottom": ("card",),
    "end_turn": (),
    "reveal": ("card",),
    "dispense": ("color",),
}


@dataclass(frozen=True, slots=True)
class Step:
    """One step. ``player`` is the seat acting (``None`` for chance steps).

    ``pay`` (build) is the marbles spent by color in :data:`COLORS` order and ``converters``
    the converter gizmos used, sorted; a free or fully discounted Build pays ``(0, 0, 0, 0)``.
    """

    kind: str
    player: int | None = None
    card: int | None = None
    color: int | None = None
    level: int | None = None
    gizmo: int | None = None
    pay: Counts | None = None
    converters: tuple[int, ...] = ()

    @property
    def is_chance(self) -> bool:
        return self.kind in CHANCE_KINDS

    def to_json(self) -> dict[str, Any]:
        """The readable JSON form, e.g. ``{"kind": "pick", "player": 0, "color": "red"}``."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.player is not None:
            out["player"] = self.player
        if self.card is not None:
            out["card"] = self.card
        if self.color is not None:
            out["color"] = COLORS[self.color]
        if self.level is not None:
            out["level"] = self.level
        if self.gizmo is not None:
            out["gizmo"] = self.gizmo
        if self.pay is not None:
            out["pay"] = {COLORS[i]: n for i, n in enumerate(self.pay) if n}
            out["converters"] = list(self.converters)
        return out

    def dumps(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"))

    def __str__(self) -> str:
        return describe(self)


def _card(v: Any, field: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 112:
        raise InvalidStep(f"step.{field}: unknown card {v!r} (card ids are 0..111)")
    return v


def _color(v: Any, field: str) -> int:
    if not isinstance(v, str) or v not in COLOR_INDEX:
        raise InvalidStep(f"step.{field}: expected one of {list(COLORS)}, got {v!r}")
    return COLOR_INDEX[v]


def step_from_json(raw: Any) -> Step:
    """Parse a step's JSON form; raises :class:`InvalidStep` naming what is wrong."""
    if not isinstance(raw, dict):
        raise InvalidStep(
            'step: expected a JSON object such as {"kind": "pick", "player": 0, "color": "red"}'
        )
    kind = raw.get("kind")
    if kind not in KINDS:
        raise InvalidStep(f"step.kind: expected one of {list(KINDS)}, got {kind!r}")
    allowed = {"kind", "player", "converters", *_FIELDS[kind]}
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise InvalidStep(f"step: field(s) {unknown} do not belong to a '{kind}' step")
    for f in _FIELDS[kind]:
        if f not in raw and not (kind == "build" and f == "pay"):
            raise InvalidStep(f"step: a '{kind}' step needs '{f}'")
    player = raw.get("player")
    if kind in PLAYER_KINDS:
        if isinstance(player, bool) or not isinstance(player, int) or not 0 <= player < 4:
            raise InvalidStep(f"step.player: expected the acting seat 0..3, got {player!r}")
    elif player is not None:
        raise InvalidStep(f"step.player: a '{kind}' step is a random outcome and has no player")
    card = _card(raw["card"], "card") if "card" in raw else None
    color = _color(raw["color"], "color") if "color" in raw else None
    level = raw.get("level")
    if level is not None and level not in (1, 2, 3):
        raise InvalidStep(f"step.level: expected a deck level 1, 2 or 3, got {level!r}")
    gizmo = _card(raw["gizmo"], "gizmo") if "gizmo" in raw else None
    pay: Counts | None = None
    converters: tuple[int, ...] = ()
    if kind == "build":
        praw = raw.get("pay", {})
        if not isinstance(praw, dict) or any(k not in COLOR_INDEX for k in praw):  # JSON keys are str
            raise InvalidStep(f'step.pay: expected marbles by colour, e.g. {{"red": 2}}, got {praw!r}')
        counts = [0, 0, 0, 0]
        for k, n in praw.items():
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise InvalidStep(f"step.pay.{k}: expected a count >= 0, got {n!r}")
            counts[COLOR_INDEX[k]] = n
        pay = (counts[0], counts[1], counts[2], counts[3])
        craw = raw.get("converters", [])
        if not isinstance(craw, list):
            raise InvalidStep("step.converters: expected a list of gizmo ids")
        converters = tuple(sorted(_card(c, "converters") for c in craw))
        if len(set(converters)) != len(converters):
            raise InvalidStep("step.converters: a converter is listed twice")
    elif "converters" in raw:
        raise InvalidStep(f"step: field(s) ['converters'] do not belong to a '{kind}' step")
    return Step(kind, player, card, color, level, gizmo, pay, converters)


def check_shape(step: Step, players: int = 4) -> None:
    """Raise :class:`InvalidStep` unless ``step`` is well formed for a game of ``players``: a known
    kind, exactly the fields that kind carries, each in range (the form :func:`step_from_json`
    makes). :func:`~referee.gizmos.rules.apply` calls this, so a hand-made malformed step is
    refused instead of being read with guessed defaults."""
    kind = step.kind
    if kind not in _FIELDS:
        raise InvalidStep(f"step.kind: expected one of {list(KINDS)}, got {kind!r}")
    fields = _FIELDS[kind]
    p = step.player
    if kind in PLAYER_KINDS:
        if type(p) is not int or not 0 <= p < players:
            raise InvalidStep(f"step.player: expected a seat 0..{players - 1}, got {p!r}")
    elif p is not None:
        raise InvalidStep(f"step.player: a '{kind}' step is a random outcome and has no player")
    for name, ok in _FIELD_CHECKS:
        value = getattr(step, name)
        if name in fields:
            if value is None or not ok(value):
                raise InvalidStep(f"step.{name}: a '{kind}' step needs a valid {name}, got {value!r}")
        elif value is not None:
            raise InvalidStep(f"step.{name}: not a field of a '{kind}' step")
    if kind != "build":
        if step.pay is not None or step.converters:
            raise InvalidStep(f"step.pay: a '{kind}' step pays nothing")
        return
    pay = step.pay
    if (
        not isinstance(pay, tuple)
        or len(pay) != 4
        or any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in pay)
    ):
        raise InvalidStep(f"step.pay: expected 4 marble counts >= 0 (red, blue, black, yellow), got {pay!r}")
    conv = step.converters
    if not isinstance(conv, tuple) or not all(_is_card(c) for c in conv) or list(conv) != sorted(set(conv)):
        raise InvalidStep(f"step.converters: expected distinct gizmo ids in increasing order, got {conv!r}")


def _is_card(v: object) -> bool:
    return type(v) is int and 0 <= v < 112


_FIELD_CHECKS: tuple[tuple[str, Callable[[object], bool]], ...] = (
    ("card", _is_card),
    ("gizmo", _is_card),
    ("color", lambda v: type(v) is int and 0 <= v < 4),
    ("level", lambda v: type(v) is int and 1 <= v <= 3),
)


def step_from_text(text: str) -> Step:
    """Parse a step from JSON text."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidStep(f"step: not valid JSON: {exc.msg} at column {exc.colno}") from exc
    except RecursionError as exc:
        raise InvalidStep("step: not valid JSON: nested too deeply") from exc
    return step_from_json(raw)


def marbles(counts: Counts, empty: str = "nothing") -> str:
    """``(0, 2, 0, 1)`` -> ``"2 blue, 1 yellow"`` (``empty`` when there are none): marbles in
    words, the one wording every sentence about a payment, a ring or the Row uses."""
    parts = [f"{n} {COLORS[i]}" for i, n in enumerate(counts) if n]
    return ", ".join(parts) if parts else empty


#: What using a gizmo gave, by its reward, in the past tense (``{n}``: its VP, ``{g}``: the gizmo).
_GAVE = {
    "vp_tokens": "took the {n}-point VP token of #{g}",
    "draw_random": "drew from the dispenser for #{g}",
    "pick_row": "took from the Energy Row for #{g}",
}


def describe(step: Step, name: str | None = None, past: bool = False) -> str:
    """A plain sentence for the move log, e.g. "Ana builds #57 paying 1 red, 1 yellow"; without a
    name the player is "seat N", N being the step's ``player`` (as in the JSON, from 0).

    ``past``: what was done at the table, e.g. "Ana built #57 paying 1 red, 1 yellow", for the
    referee's warnings (which add the rule it broke) and any report after the fact."""
    who = name if name is not None else (f"seat {step.player}" if step.player is not None else "Chance")
    k = step.kind
    if k == "file":
        return f"{who} {'filed' if past else 'files'} #{step.card}"
    if k == "pick":
        color = COLORS[step.color or 0]
        if past:
            return f"{who} took a {color} marble from the Energy Row"
        return f"{who} picks a {color} marble from the Energy Row"
    if k == "build":
        paid = marbles(step.pay or (0, 0, 0, 0))
        text = f"{who} {'built' if past else 'builds'} #{step.card} paying {paid}"
        if step.converters:
            text += " with converter(s) " + ", ".join(f"#{c}" for c in step.converters)
        return text
    if k == "research":
        return f"{who} {'researched' if past else 'researches'} the Level {step.level} deck"
    if k == "use":
        card = default_cards()[step.gizmo or 0]
        if past:
            gave = _GAVE.get(card.effect.reward, "used #{g}")
            return f"{who} " + gave.format(n=card.effect.count, g=step.gizmo)
        return f"{who} uses #{step.gizmo} ({card.text.split('.')[0].lower()})"
    if k == "skip":
        return f"{who} {'declined' if past else 'declines'}"
    if k == "bottom":
        return f"{who} {'put' if past else 'puts'} #{step.card} under its deck"
    if k == "end_turn":
        return f"{who} {'ended' if past else 'ends'} the turn"
    if k == "reveal":
        return f"#{step.card} {'was' if past else 'is'} revealed"
    return f"a {COLORS[step.color or 0]} marble {'came' if past else 'comes'} out of the dispenser"
