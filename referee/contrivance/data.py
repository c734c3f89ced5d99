"""What is in the Contrivance box, as data: the fixed parts the seed prints, and the *assumed*
parts (CONTRIVANCE_RULINGS.md rulings 3, 6 and 7) in one :class:`Edition` a table can replace.

The seed fixes the Workbench (ruling 1), the Builders (2), the Tool deck of 62 cards (5) and the
starting damage (8). It does not reproduce the Switch On Card Setup Guide nor the Contrivance
tiles' requirements, and it does not say where the Double tile's second Rivet is: those are
:class:`Edition` fields with the rulings' assumed defaults (:data:`DEFAULT_EDITION`), read from
JSON by :func:`edition_from_json` when a table's copy differs. The engine never hard-codes them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: The six Builder types (ruling 2), in the seed's order.
BUILDERS: tuple[str, ...] = ("Engineer", "Mechanic", "Regulator", "Cognicator", "Assembler", "Intendent")
MIN_PLAYERS, MAX_PLAYERS = 2, 6
ROWS_PER_MAT, COLUMNS = 3, 5  # ruling 1: each mat is 5 columns x 3 rows; column 5 is the marked square
BUILDING_COLUMNS = 4  # ruling 10: the building phase uses columns 1-4
TILES_PER_BUILDER = 4  # ruling 3
HAND_LIMIT = 4  # rulings 11-12
MIN_VALUE, MAX_VALUE = 0, 6  # ruling 4: the Point Marker
START_DAMAGE = 6  # ruling 8
REPAIRED_AT, DESTROYED_AT = 0, 10  # ruling 17: damage <= 0 repairs, >= 10 destroys
TOTAL_CARDS = 62  # ruling 5

#: Edges a Rivet can face, clockwise; a tile's ``facing`` and its Rivet offsets index this.
EDGES: tuple[str, ...] = ("N", "E", "S", "W")
N, E, S, W = 0, 1, 2, 3

#: The 48 Tool cards that are not Switch On cards (ruling 5), by their step names.
TOOLS: tuple[tuple[str, int], ...] = (
    ("move", 6),
    ("rotate", 6),
    ("swap_component", 6),
    ("swap_points", 6),
    ("points+1", 3),
    ("points-1", 3),
    ("points+2", 2),
    ("points-2", 2),
    ("points+3", 1),
    ("points-3", 1),
    ("take_a_tool", 6),
    ("redraw_a_tool", 6),
)
TOOL_NAMES: tuple[str, ...] = tuple(name for name, _ in TOOLS)
SWITCH_ON_CARDS = 14  # ruling 5
#: The change in value of each ±N Point(s) card.
POINTS: dict[str, int] = {name: int(name[6:]) for name in TOOL_NAMES if name.startswith("points")}

_SWITCH_ON = re.compile(r"switch_on([+-][1-9][0-9]*)")


def switch_on_card(value: int) -> str:
    """The card name of a Switch On card with this damage change, e.g. ``switch_on-2``."""
    return f"switch_on{value:+d}"


def switch_on_value(card: str) -> int | None:
    """The damage change of a Switch On card name, or ``None`` when ``card`` is not one."""
    m = _SWITCH_ON.fullmatch(card)
    return int(m.group(1)) if m else None


def is_card(name: object) -> bool:
    """Whether ``name`` names a Tool card (a Switch On card with any non-zero value included)."""
    return isinstance(name, str) and (
        name in POINTS or name in TOOL_NAMES or switch_on_value(name) is not None
    )


class EditionError(ValueError):
    """An edition file that does not describe a possible box."""


@dataclass(frozen=True, slots=True)
class Edition:
    """The assumed parts of the box (rulings 3, 4, 6, 7); the defaults are the rulings' assumptions.

    ``switch_on``: the damage change of each of the 14 Switch On cards. ``switch_on_by_players``:
    which of those values go into the deck for each player count (the Setup Guide).
    ``contrivances``: the requirement (1-3) printed on each of the 6 Contrivance tiles.
    ``double_rivets``: the Double tile's Rivet edges, as quarter turns clockwise from its facing
    (its first Rivet, the one with the black dot). ``setup_values``: the three single tiles' and
    the Double tile's starting values (ruling 4).
    """

    switch_on: tuple[int, ...] = (-3, -3, -2, -2, -2, -1, -1, -1, -1, 1, 1, 1, 2, 2)
    switch_on_by_players: Mapping[int, tuple[int, ...]] = field(
        default_factory=lambda: {
            2: (-3, -2, -2, -1, -1, 1, 1, 2),
            3: (-3, -2, -2, -1, -1, -1, 1, 1, 1, 2),
            4: (-3, -2, -2, -2, -1, -1, -1, 1, 1, 1, 2, 2),
            5: (-3, -3, -2, -2, -2, -1, -1, -1, -1, 1, 1, 1, 2, 2),
            6: (-3, -3, -2, -2, -2, -1, -1, -1, -1, 1, 1, 1, 2, 2),
        }
    )
    contrivances: tuple[int, ...] = (1, 1, 2, 2, 3, 3)
    double_rivets: tuple[int, ...] = (0, 2)
    setup_values: tuple[int, ...] = (0, 1, 3)
    double_value: int = 6

    def switch_on_cards(self, players: int) -> tuple[str, ...]:
        """The Switch On cards shuffled into the deck for ``players`` (ruling 6)."""
        return tuple(sorted(switch_on_card(v) for v in self.switch_on_by_players[players]))

    def to_json(self) -> dict[str, Any]:
        return {
            "switch_on": list(self.switch_on),
            "switch_on_by_players": {str(k): list(v) for k, v in sorted(self.switch_on_by_players.items())},
            "contrivances": list(self.contrivances),
            "double_rivets": list(self.double_rivets),
            "setup_values": list(self.setup_values),
            "double_value": self.double_value,
        }


def _ints(raw: Any, where: str, lo: int, hi: int) -> tuple[int, ...]:
    if not isinstance(raw, list) or not all(type(v) is int and lo <= v <= hi for v in raw):
        raise EditionError(f"{where}: expected a list of integers in {lo}..{hi}, got {raw!r}")
    return tuple(raw)


def edition_from_json(raw: Any) -> Edition:
    """An :class:`Edition` from its JSON form; missing fields keep the assumed defaults. Raises
    :class:`EditionError` naming the field when the box it describes is impossible."""
    if not isinstance(raw, dict):
        raise EditionError("edition: expected a JSON object")
    unknown = sorted(set(raw) - set(Edition.__dataclass_fields__))
    if unknown:
        raise EditionError(f"edition: unknown field(s) {unknown}")
    base = Edition()
    switch_on = _ints(raw["switch_on"], "edition.switch_on", -9, 9) if "switch_on" in raw else base.switch_on
    if len(switch_on) != SWITCH_ON_CARDS or 0 in switch_on:
        raise EditionError(f"edition.switch_on: expected {SWITCH_ON_CARDS} non-zero damage changes")
    by_players = dict(base.switch_on_by_players)
    if "switch_on_by_players" in raw:
        table = raw["switch_on_by_players"]
        if not isinstance(table, dict) or set(table) != {str(p) for p in range(MIN_PLAYERS, MAX_PLAYERS + 1)}:
            raise EditionError('edition.switch_on_by_players: expected the keys "2" to "6"')
        by_players = {int(k): _ints(v, f"edition.switch_on_by_players.{k}", -9, 9) for k, v in table.items()}
    pool = list(switch_on)
    for players, values in by_players.items():
        left = list(pool)
        for v in values:
            if v not in left:
                raise EditionError(
                    f"edition.switch_on_by_players.{players}: uses a {v:+d} card the 14 do not have"
                )
            left.remove(v)
    contrivances = (
        _ints(raw["contrivances"], "edition.contrivances", 1, TILES_PER_BUILDER)
        if "contrivances" in raw
        else base.contrivances
    )
    if not contrivances:
        raise EditionError("edition.contrivances: expected at least one Contrivance tile")
    rivets = _ints(raw["double_rivets"], "edition.double_rivets", 0, 3) if "double_rivets" in raw else None
    if rivets is not None and (len(rivets) != 2 or 0 not in rivets or len(set(rivets)) != 2):
        raise EditionError("edition.double_rivets: expected two distinct edges, the first 0 (its facing)")
    values = (
        _ints(raw["setup_values"], "edition.setup_values", MIN_VALUE, MAX_VALUE)
        if "setup_values" in raw
        else base.setup_values
    )
    if len(values) != TILES_PER_BUILDER - 1:
        raise EditionError("edition.setup_values: expected the 3 single tiles' values")
    double_value = raw.get("double_value", base.double_value)
    if type(double_value) is not int or not MIN_VALUE <= double_value <= MAX_VALUE:
        raise EditionError(f"edition.double_value: expected an integer 0..6, got {double_value!r}")
    return Edition(
        switch_on=switch_on,
        switch_on_by_players=by_players,
        contrivances=contrivances,
        double_rivets=tuple(sorted(rivets)) if rivets is not None else base.double_rivets,
        setup_values=values,
        double_value=double_value,
    )


DEFAULT_EDITION = Edition()
