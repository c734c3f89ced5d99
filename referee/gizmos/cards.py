"""The 112 Gizmo cards: typed, validated, loaded once from the project's card file.

The card file (``data/cards.json``) is built from the shared reference by
``scripts/build_cards.py``. Loading validates every field, so a corrupt or hand-edited file
fails with a :class:`CardDataError` naming the card and the field instead of misbehaving later.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from referee.gizmos.errors import GizmosError

#: Energy colors in a fixed order; every per-color count in the engine uses this order.
COLORS: tuple[str, ...] = ("red", "blue", "black", "yellow")
COLOR_INDEX: dict[str, int] = {c: i for i, c in enumerate(COLORS)}
#: The official energy names, for messages.
ENERGY_NAMES: dict[str, str] = {"red": "Heat", "blue": "Atomic", "black": "Battery", "yellow": "Electric"}

#: Dashboard columns a built gizmo goes under.
COLUMNS: tuple[str, ...] = ("upgrade", "converter", "file", "pick", "build", "research")
LEVEL_SIZES: dict[int, int] = {0: 4, 1: 36, 2: 36, 3: 36}
ANY = "any"
NONE = "none"

REWARDS = ("draw_random", "pick_row", "vp_tokens", "file_action", "research_action", "build_free")
EFFECT_KINDS = (
    "on_file",
    "on_pick",
    "on_build",
    "on_build_from_archive",
    "on_build_level",
    "convert_to_any",
    "convert_double",
    "upgrade_limits",
    "discount",
    "forbid_action",
    "end_vp",
)


class CardDataError(GizmosError, ValueError):
    """The card file is malformed; the message names the card id and the field."""


@dataclass(frozen=True, slots=True)
class Effect:
    """A card's effect in structured form. Fields unused by a kind keep their defaults."""

    kind: str
    reward: str = ""
    count: int = 0
    colors: tuple[int, ...] = ()  # trigger colors (on_pick/on_build) or doubled colors
    source: int = -1  # convert_to_any: color index converted from; -1 means any color
    uses: int = 0
    energy: int = 0
    file: int = 0
    research: int = 0
    amount: int = 0
    applies_to: str = ""
    action: str = ""
    per: str = ""
    level: int = 0  # on_build_level: the level built; build_free: the level that may be built


@dataclass(frozen=True, slots=True)
class Card:
    """One Gizmo card. ``color`` is a color name, ``"any"`` (multicolor) or ``"none"``."""

    id: int
    level: int
    type: str
    color: str
    cost: int
    vp: int
    effect: Effect
    text: str

    @property
    def color_index(self) -> int:
        """Index into :data:`COLORS`, or -1 for multicolor / no color."""
        return COLOR_INDEX.get(self.color, -1)

    def label(self) -> str:
        """Short human name used in messages and the move log."""
        return f"#{self.id}"


#: The Dashboard column each effect kind is built under (a card in the wrong column is corrupt).
KIND_COLUMN: dict[str, str] = {
    "on_file": "file",
    "on_pick": "pick",
    "on_build": "build",
    "on_build_from_archive": "build",
    "on_build_level": "build",
    "convert_to_any": "converter",
    "convert_double": "converter",
    "upgrade_limits": "upgrade",
    "discount": "upgrade",
    "forbid_action": "upgrade",
    "end_vp": "upgrade",
}
#: The fields each effect kind carries (besides ``kind``); ``build_level`` only with ``build_free``.
KIND_FIELDS: dict[str, frozenset[str]] = {
    "on_file": frozenset({"reward", "count"}),
    "on_pick": frozenset({"reward", "count", "colors"}),
    "on_build": frozenset({"reward", "count", "colors"}),
    "on_build_from_archive": frozenset({"reward", "count"}),
    "on_build_level": frozenset({"reward", "count", "level"}),
    "convert_to_any": frozenset({"from", "uses"}),
    "convert_double": frozenset({"colors"}),
    "upgrade_limits": frozenset({"energy", "file", "research"}),
    "discount": frozenset({"amount", "applies_to"}),
    "forbid_action": frozenset({"action"}),
    "end_vp": frozenset({"per"}),
}
CARD_FIELDS = frozenset({"id", "level", "type", "color", "cost", "vp", "effect", "text"})


def level_of_id(card_id: int) -> int:
    """The level a card id belongs to: ids 0-3 Starting Gizmos, 4-39 I, 40-75 II, 76-111 III."""
    return 0 if card_id < 4 else (card_id - 4) // 36 + 1


def _fail(card_id: object, field: str, why: str) -> CardDataError:
    return CardDataError(f"card {card_id}: field '{field}': {why}")


def _int(raw: dict[str, Any], field: str, card_id: object, lo: int, hi: int, prefix: str = "") -> int:
    value = raw.get(field)
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise _fail(card_id, prefix + field, f"expected an integer in {lo}..{hi}, got {value!r}")
    return value


def _color_list(raw: dict[str, Any], field: str, card_id: object) -> tuple[int, ...]:
    value = raw.get(field)
    if (
        not isinstance(value, list)
        or not value
        or any(c not in COLOR_INDEX for c in value)
        or len(set(value)) != len(value)
    ):
        raise _fail(
            card_id, f"effect.{field}", f"expected a list of distinct colours {COLORS}, got {value!r}"
        )
    return tuple(COLOR_INDEX[c] for c in value)


def _parse_effect(raw: Any, card_id: object) -> Effect:
    if not isinstance(raw, dict):
        raise _fail(card_id, "effect", "expected an object")
    kind = raw.get("kind")
    if kind not in EFFECT_KINDS:
        raise _fail(card_id, "effect.kind", f"unknown effect kind {kind!r}")
    allowed = KIND_FIELDS[kind] | {"kind"} | ({"build_level"} if raw.get("reward") == "build_free" else set())
    extra = sorted(set(raw) - allowed, key=str)
    if extra:
        raise _fail(card_id, f"effect.{extra[0]}", f"not a field of a '{kind}' effect")

    def num(field: str, lo: int, hi: int) -> int:
        return _int(raw, field, card_id, lo, hi, prefix="effect.")

    if kind in ("on_file", "on_pick", "on_build", "on_build_from_archive", "on_build_level"):
        reward = raw.get("reward")
        if reward not in REWARDS:
            raise _fail(card_id, "effect.reward", f"unknown reward {reward!r}")
        count = num("count", 1, 5)
        colors = _color_list(raw, "colors", card_id) if kind in ("on_pick", "on_build") else ()
        level = 0
        if reward == "build_free":
            level = num("build_level", 1, 3)
        if kind == "on_build_level":
            level = num("level", 1, 3)
        return Effect(kind=kind, reward=reward, count=count, colors=colors, level=level)
    if kind == "convert_to_any":
        src = raw.get("from")
        if src != ANY and src not in COLOR_INDEX:
            raise _fail(card_id, "effect.from", f"expected a colour or 'any', got {src!r}")
        return Effect(kind=kind, source=COLOR_INDEX.get(src, -1), uses=num("uses", 1, 2))
    if kind == "convert_double":
        return Effect(kind=kind, colors=_color_list(raw, "colors", card_id))
    if kind == "upgrade_limits":
        return Effect(
            kind=kind, energy=num("energy", 0, 10), file=num("file", 0, 5), research=num("research", 0, 5)
        )
    if kind == "discount":
        applies = raw.get("applies_to")
        if applies not in ("from_archive", "from_research", "level2"):
            raise _fail(card_id, "effect.applies_to", f"unknown discount target {applies!r}")
        return Effect(kind=kind, amount=num("amount", 1, 3), applies_to=applies)
    if kind == "forbid_action":
        action = raw.get("action")
        if action not in ("file", "research"):
            raise _fail(card_id, "effect.action", f"expected 'file' or 'research', got {action!r}")
        return Effect(kind=kind, action=action)
    per = raw.get("per")
    if per not in ("energy_in_ring", "vp_token_points"):
        raise _fail(card_id, "effect.per", f"unknown end-of-game scoring {per!r}")
    return Effect(kind=kind, per=per)


def _parse_card(raw: Any, index: int) -> Card:
    if not isinstance(raw, dict):
        raise CardDataError(f"card at position {index}: expected an object")
    cid = raw.get("id")
    if not isinstance(cid, int) or isinstance(cid, bool) or cid != index:
        raise _fail(f"at position {index}", "id", f"expected {index} (cards are listed by id), got {cid!r}")
    extra = sorted(set(raw) - CARD_FIELDS, key=str)
    if extra:
        raise _fail(cid, extra[0], "not a card field")
    level = _int(raw, "level", cid, 0, 3)
    if level != level_of_id(cid):
        raise _fail(
            cid, "level", f"ids 4-39, 40-75, 76-111 are Levels I, II, III: expected {level_of_id(cid)}"
        )
    ctype = raw.get("type")
    if ctype not in COLUMNS:
        raise _fail(cid, "type", f"expected one of {COLUMNS}, got {ctype!r}")
    color = raw.get("color")
    allowed = (NONE,) if level == 0 else (*COLORS, ANY)
    if color not in allowed:
        raise _fail(cid, "color", f"expected one of {allowed}, got {color!r}")
    cost = _int(raw, "cost", cid, 0, 7)
    if level == 0 and cost != 0:
        raise _fail(cid, "cost", "a Starting Gizmo costs nothing")
    if color == ANY and cost != 7:
        raise _fail(cid, "cost", "a multicolour gizmo costs 7")
    if level > 0 and cost == 0:
        raise _fail(cid, "cost", "only Starting Gizmos are free")
    vp = _int(raw, "vp", cid, 0, 10)
    if level == 0 and vp != 0:
        raise _fail(cid, "vp", "a Starting Gizmo is worth 0 VP")
    text = raw.get("text")
    if not isinstance(text, str) or not text:
        raise _fail(cid, "text", "expected a non-empty description")
    effect = _parse_effect(raw.get("effect"), cid)
    if KIND_COLUMN[effect.kind] != ctype:
        raise _fail(
            cid, "type", f"a '{effect.kind}' gizmo goes under '{KIND_COLUMN[effect.kind]}', not {ctype!r}"
        )
    if level == 0 and (effect.kind, effect.reward, effect.count) != ("on_file", "draw_random", 1):
        raise _fail(cid, "effect", "a Starting Gizmo draws 1 random Energy whenever you File (ruling 2)")
    return Card(id=cid, level=level, type=ctype, color=color, cost=cost, vp=vp, effect=effect, text=text)


def parse_cards(document: Any) -> tuple[Card, ...]:
    """Validate a card document (the parsed JSON of ``cards.json``) and return the cards by id."""
    if not isinstance(document, dict) or document.get("format") != "gizmos-cards":
        raise CardDataError('card file: expected an object with "format": "gizmos-cards"')
    if document.get("version") != 1:
        raise CardDataError(f"card file: unsupported version {document.get('version')!r}")
    raw_cards = document.get("cards")
    if not isinstance(raw_cards, list) or len(raw_cards) != 112:
        n = len(raw_cards) if isinstance(raw_cards, list) else raw_cards
        raise CardDataError(f"card file: expected a list of 112 cards, got {n!r}")
    cards = tuple(_parse_card(raw, i) for i, raw in enumerate(raw_cards))
    per_level = Counter(c.level for c in cards)
    for level, size in LEVEL_SIZES.items():
        if per_level[level] != size:
            raise CardDataError(f"card file: level {level} has {per_level[level]} cards, expected {size}")
    return cards


def load_cards(path: str | Path | None = None) -> tuple[Card, ...]:
    """Load and validate a card file; the default is the bundled one (cached)."""
    if path is None:
        return default_cards()
    p = Path(path)
    try:
        document = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CardDataError(f"card file {p}: cannot read JSON: {exc}") from exc
    return parse_cards(document)


@cache
def default_cards() -> tuple[Card, ...]:
    """The bundled, validated cards. Immutable, so one shared copy is safe."""
    return load_cards(Path(__file__).with_name("data") / "cards.json")
