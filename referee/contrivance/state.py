"""The whole Contrivance table as an immutable value, its setup, its JSON form and its invariants.

As in Gizmos, hidden order is never stored. The Tool deck is a sequence of *segments*: a
multiset of candidate cards and how many of the next draws come from them. A segment's
candidates that are not drawn lie further down: when its count runs out they join the next
segment. Setup (ruling 9) is then exactly two segments: the set-aside pile (2 x players draws
from the shuffled 48) and the rest with the Switch On cards. Every candidate is a real card in
the deck, so the deck holds the sum of its segments' candidates. Random events (the Builders
drawn, the cards dealt and drawn, the card taken blind, the Contrivance revealed) wait in
``chance`` until a chance step resolves them: from a seeded source, or from what the table saw.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from referee.contrivance.data import (
    BUILDERS,
    COLUMNS,
    DEFAULT_EDITION,
    DESTROYED_AT,
    EDGES,
    HAND_LIMIT,
    MAX_PLAYERS,
    MAX_VALUE,
    MIN_PLAYERS,
    MIN_VALUE,
    REPAIRED_AT,
    START_DAMAGE,
    SWITCH_ON_CARDS,
    TILES_PER_BUILDER,
    TOOLS,
    TOTAL_CARDS,
    Edition,
    switch_on_card,
    switch_on_value,
)
from referee.contrivance.errors import StateError

FORMAT = "contrivance-state"
VERSION = 1
PHASES = ("building", "configuration", "scoring", "over")

#: A deck segment: (candidate cards, sorted, and how many of the next draws come from them).
Segment = tuple[tuple[str, ...], int]
#: Chance events: ("builder", seat) | ("deal", seat) | ("draw", seat) (drawing up to 4) |
#: ("redraw", seat) (the card a Redraw brings; the turn ends) | ("take", seat, victim) | ("reveal",)
ChanceEvent = tuple[Any, ...]
#: Each chance event's name and length.
CHANCE_EVENTS: dict[str, int] = {"builder": 2, "deal": 2, "draw": 2, "redraw": 2, "take": 3, "reveal": 1}
Square = tuple[int, int]  # (row, column), both 1-based as the rulings number them


@dataclass(frozen=True, slots=True)
class Tile:
    """A Component tile: its Builder type, where its Rivets are, its Point Marker and its facing.

    ``rivets`` are the Rivet edges as quarter turns clockwise from ``facing`` (the edge of its
    first Rivet): ``(0,)`` for a single tile, the edition's ``double_rivets`` for the Double.
    """

    id: str  # "<Builder>-<n>", n 1-3 the single tiles, 4 the Double tile
    builder: str
    rivets: tuple[int, ...]
    value: int
    facing: int

    @property
    def edges(self) -> frozenset[int]:
        """The edges (N=0, E=1, S=2, W=3) its Rivets face now."""
        return frozenset((self.facing + r) % 4 for r in self.rivets)

    @property
    def double(self) -> bool:
        return len(self.rivets) > 1

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "builder": self.builder,
            "rivets": list(self.rivets),
            "value": self.value,
            "facing": EDGES[self.facing],
        }


def builder_tiles(builder: str, edition: Edition = DEFAULT_EDITION) -> tuple[Tile, ...]:
    """A Builder's 4 Component tiles as set up (ruling 4): values 0, 1, 3 and the Double at 6."""
    singles = tuple(
        Tile(f"{builder}-{i + 1}", builder, (0,), v, 0) for i, v in enumerate(edition.setup_values)
    )
    double = Tile(f"{builder}-{TILES_PER_BUILDER}", builder, edition.double_rivets, edition.double_value, 0)
    return (*singles, double)


Workbench = tuple[tuple[Tile | None, ...], ...]


@dataclass(frozen=True, slots=True)
class State:
    """The whole table at one moment. Immutable: the rules return new states.

    ``builders[k]`` is seat *k*'s Builder, and seat *k* owns row *k* + 1 (ruling 2); ``None``
    until drawn. ``supply[k]``: the tiles seat *k* has still to place. ``workbench``: the active
    rows only, 5 squares each. ``tile_box``: the tiles of the Builders no seat has (yet), with
    the edition's Rivets and values, so a state carries its own tile data. ``switch_on``: the
    value of a Switch On card just drawn, owed as the player's next step. ``requirement``: the
    revealed Contrivance's requirement (ruling 7).
    """

    builders: tuple[str | None, ...]
    supply: tuple[tuple[Tile, ...], ...]
    workbench: Workbench
    hands: tuple[tuple[str, ...], ...]
    deck: tuple[Segment, ...]
    discard: tuple[str, ...] = ()
    box: tuple[str, ...] = ()
    contrivances: tuple[int, ...] = DEFAULT_EDITION.contrivances
    tile_box: tuple[Tile, ...] = ()
    requirement: int | None = None
    damage: int = START_DAMAGE
    phase: str = "building"
    current: int = 0
    turn: int = 0
    switch_on: int | None = None
    chance: tuple[ChanceEvent, ...] = ()

    @property
    def num_players(self) -> int:
        return len(self.builders)

    @property
    def game_over(self) -> bool:
        return self.phase == "over"

    @property
    def repaired(self) -> bool:
        """The game ended with the Contrivance repaired (ruling 17): bonuses apply (ruling 20)."""
        return self.damage <= REPAIRED_AT

    @property
    def round(self) -> int:
        """The 1-based round of the current phase (each Builder has one turn per round)."""
        n = self.num_players
        building = TILES_PER_BUILDER * n
        turns = self.turn if self.turn < building else self.turn - building
        return turns // n + 1

    def deck_size(self) -> int:
        return sum(len(cands) for cands, _ in self.deck)

    def tile_at(self, square: Square) -> Tile | None:
        row, col = square
        return self.workbench[row - 1][col - 1]

    def squares(self) -> Iterator[tuple[Square, Tile]]:
        """Every occupied square and its tile, row by row."""
        for r, row in enumerate(self.workbench):
            for c, tile in enumerate(row):
                if tile is not None:
                    yield (r + 1, c + 1), tile

    def to_json(self) -> dict[str, Any]:
        """The documented JSON form (docs/contrivance.md)."""
        return state_to_json(self)

    def dumps(self) -> str:
        return json.dumps(state_to_json(self), separators=(",", ":"))


# --------------------------------------------------------------------------- setup


def tool_deck() -> tuple[str, ...]:
    """The 48 Tool cards that are not Switch On cards (ruling 5), sorted."""
    return tuple(sorted(name for name, n in TOOLS for _ in range(n)))


def new_game(players: int, edition: Edition = DEFAULT_EDITION) -> State:
    """A fresh table before any random outcome (ruling 9): the 48 Tool cards shuffled, 2 x
    players of them set aside on top, the chosen Switch On cards shuffled into the rest, the
    unused ones in the box; chance events queued to draw each seat's Builder and deal 4 cards each.
    Resolve them with a random source or with what the table shows."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise StateError(f"players: Contrivance is for {MIN_PLAYERS}-{MAX_PLAYERS} players, got {players}")
    chosen = edition.switch_on_cards(players)
    unused = Counter(f"switch_on{v:+d}" for v in edition.switch_on)
    unused.subtract(Counter(chosen))
    chance: list[ChanceEvent] = [("builder", seat) for seat in range(players)]
    chance += [("deal", seat) for seat in range(players) for _ in range(HAND_LIMIT)]
    return State(
        builders=(None,) * players,
        supply=((),) * players,
        workbench=((None,) * COLUMNS,) * players,
        hands=((),) * players,
        deck=((tool_deck(), 2 * players), (chosen, len(chosen))),
        box=tuple(sorted(unused.elements())),
        contrivances=tuple(sorted(edition.contrivances)),
        tile_box=tuple(t for b in BUILDERS for t in builder_tiles(b, edition)),
        chance=tuple(chance),
    )


# --------------------------------------------------------------------------- JSON


def state_to_json(s: State) -> dict[str, Any]:
    """Serialise a state (docs/contrivance.md describes the schema)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "builders": list(s.builders),
        "supply": [[t.to_json() for t in tiles] for tiles in s.supply],
        "workbench": [[None if t is None else t.to_json() for t in row] for row in s.workbench],
        "hands": [list(h) for h in s.hands],
        "deck": [{"cards": list(cands), "count": n} for cands, n in s.deck],
        "discard": list(s.discard),
        "box": list(s.box),
        "contrivances": list(s.contrivances),
        "tile_box": [t.to_json() for t in s.tile_box],
        "requirement": s.requirement,
        "damage": s.damage,
        "phase": s.phase,
        "current": s.current,
        "turn": s.turn,
        "switch_on": s.switch_on,
        "chance": [list(e) for e in s.chance],
    }


def _need(raw: dict[str, Any], key: str, where: str) -> Any:
    if key not in raw:
        raise StateError(f"{where}: missing field '{key}'")
    return raw[key]


def _int(v: Any, where: str, lo: int, hi: int) -> int:
    if type(v) is not int or not lo <= v <= hi:
        raise StateError(f"{where}: expected an integer in {lo}..{hi}, got {v!r}")
    return v


def _list(v: Any, where: str) -> list[Any]:
    if not isinstance(v, list):
        raise StateError(f"{where}: expected a list")
    return v


def _cards(v: Any, where: str) -> tuple[str, ...]:
    from referee.contrivance.data import is_card

    for i, c in enumerate(_list(v, where)):
        if not is_card(c):
            raise StateError(f"{where}[{i}]: not a Tool card name: {c!r}")
    return tuple(sorted(v))


def _edge(v: Any, where: str) -> int:
    if v not in EDGES:
        raise StateError(f"{where}: expected one of {list(EDGES)}, got {v!r}")
    return EDGES.index(v)


def tile_from_json(raw: Any, where: str) -> Tile:
    """A tile from its JSON form (used by states and by a Workbench entered for scoring)."""
    if not isinstance(raw, dict):
        raise StateError(f"{where}: expected a tile object")
    unknown = sorted(set(raw) - {"id", "builder", "rivets", "value", "facing"})
    if unknown:
        raise StateError(f"{where}: unknown field(s) {unknown}")
    builder = _need(raw, "builder", where)
    if builder not in BUILDERS:
        raise StateError(f"{where}.builder: expected one of {list(BUILDERS)}, got {builder!r}")
    tid = _need(raw, "id", where)
    ids = {f"{builder}-{n}" for n in range(1, TILES_PER_BUILDER + 1)}
    if tid not in ids:
        raise StateError(f"{where}.id: expected one of {sorted(ids)}, got {tid!r}")
    rivets = _list(_need(raw, "rivets", where), f"{where}.rivets")
    if (
        not rivets
        or rivets[0] != 0
        or len(set(rivets)) != len(rivets)
        or any(type(r) is not int or not 0 <= r <= 3 for r in rivets)
    ):
        raise StateError(
            f"{where}.rivets: expected distinct quarter turns 0-3 starting with 0, got {rivets!r}"
        )
    double = tid.endswith(f"-{TILES_PER_BUILDER}")
    if double != (len(rivets) > 1):
        raise StateError(f"{where}.rivets: only the Double tile (-{TILES_PER_BUILDER}) has two Rivets")
    return Tile(
        id=tid,
        builder=builder,
        rivets=tuple(rivets),
        value=_int(_need(raw, "value", where), f"{where}.value", MIN_VALUE, MAX_VALUE),
        facing=_edge(_need(raw, "facing", where), f"{where}.facing"),
    )


def _chance_event(v: Any, where: str, players: int) -> ChanceEvent:
    ok = isinstance(v, list) and bool(v) and v[0] in CHANCE_EVENTS
    seats = [x for x in v[1:]] if ok else []
    if ok:
        size = CHANCE_EVENTS[v[0]]
        ok = len(v) == size and all(type(x) is int and 0 <= x < players for x in seats)
    if not ok:
        raise StateError(f"{where}: not a chance event: {v!r}")
    return tuple(v)


def state_from_json(raw: Any) -> State:
    """Parse and validate a state; raises :class:`StateError` naming the bad field or impossibility."""
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise StateError(f'state: expected a JSON object with "format": "{FORMAT}"')
    if raw.get("version") != VERSION:
        raise StateError(f"state: unsupported version {raw.get('version')!r} (this engine reads {VERSION})")
    builders_raw = _list(_need(raw, "builders", "state"), "state.builders")
    if not MIN_PLAYERS <= len(builders_raw) <= MAX_PLAYERS:
        raise StateError(f"state.builders: Contrivance is for {MIN_PLAYERS}-{MAX_PLAYERS} players")
    for i, b in enumerate(builders_raw):
        if b is not None and b not in BUILDERS:
            raise StateError(f"state.builders[{i}]: expected one of {list(BUILDERS)} or null, got {b!r}")
    n = len(builders_raw)

    def per_seat(key: str) -> list[Any]:
        v = _list(_need(raw, key, "state"), f"state.{key}")
        if len(v) != n:
            raise StateError(f"state.{key}: expected one entry per seat ({n})")
        return v

    supply = tuple(
        tuple(tile_from_json(t, f"supply[{k}][{i}]") for i, t in enumerate(_list(tiles, f"supply[{k}]")))
        for k, tiles in enumerate(per_seat("supply"))
    )
    rows = per_seat("workbench")
    workbench = []
    for r, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != COLUMNS:
            raise StateError(f"workbench[{r}]: expected {COLUMNS} squares")
        workbench.append(
            tuple(None if t is None else tile_from_json(t, f"workbench[{r}][{c}]") for c, t in enumerate(row))
        )
    hands = tuple(_cards(h, f"hands[{k}]") for k, h in enumerate(per_seat("hands")))
    deck = []
    for j, seg in enumerate(_list(_need(raw, "deck", "state"), "state.deck")):
        w = f"deck[{j}]"
        if not isinstance(seg, dict) or set(seg) != {"cards", "count"}:
            raise StateError(f'{w}: expected {{"cards": [...], "count": n}}')
        cands = _cards(seg["cards"], f"{w}.cards")
        deck.append((cands, _int(seg["count"], f"{w}.count", 1, max(1, len(cands)))))
    phase = _need(raw, "phase", "state")
    if phase not in PHASES:
        raise StateError(f"state.phase: expected one of {list(PHASES)}, got {phase!r}")
    requirement = _need(raw, "requirement", "state")
    switch_on = _need(raw, "switch_on", "state")
    state = State(
        builders=tuple(builders_raw),
        supply=supply,
        workbench=tuple(workbench),
        hands=hands,
        deck=tuple(deck),
        discard=_cards(_need(raw, "discard", "state"), "state.discard"),
        box=_cards(_need(raw, "box", "state"), "state.box"),
        contrivances=tuple(
            sorted(
                _int(v, f"contrivances[{i}]", 1, TILES_PER_BUILDER)
                for i, v in enumerate(_list(_need(raw, "contrivances", "state"), "state.contrivances"))
            )
        ),
        tile_box=tuple(
            tile_from_json(t, f"tile_box[{i}]")
            for i, t in enumerate(_list(_need(raw, "tile_box", "state"), "state.tile_box"))
        ),
        requirement=None if requirement is None else _int(requirement, "state.requirement", 1, 4),
        damage=_int(_need(raw, "damage", "state"), "state.damage", -30, 40),
        phase=phase,
        current=_int(_need(raw, "current", "state"), "state.current", 0, n - 1),
        turn=_int(_need(raw, "turn", "state"), "state.turn", 0, 10_000_000),
        switch_on=None if switch_on is None else _int(switch_on, "state.switch_on", -9, 9),
        chance=tuple(
            _chance_event(e, f"chance[{i}]", n)
            for i, e in enumerate(_list(_need(raw, "chance", "state"), "state.chance"))
        ),
    )
    check_invariants(state)
    return state


def state_from_text(text: str) -> State:
    """Parse a JSON text; malformed JSON becomes a :class:`StateError`."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StateError(f"state: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    return state_from_json(raw)


# --------------------------------------------------------------------------- invariants


def all_cards(s: State) -> Counter[str]:
    """Every card of the box's 62, wherever it is: deck, hands, discard pile, box, and the Switch
    On card just drawn and owed."""
    where: Counter[str] = Counter()
    for cands, _ in s.deck:
        where.update(cands)
    for h in s.hands:
        where.update(h)
    where.update(s.discard)
    where.update(s.box)
    if s.switch_on is not None:
        where[switch_on_card(s.switch_on)] += 1
    return where


def check_invariants(s: State) -> None:
    """Raise :class:`StateError` if the state is impossible: 62 cards (48 Tools as printed and
    14 Switch On), each active Builder's 4 tiles each exactly once in its supply or on one
    square, values 0-6, hands of at most 4 without Switch On cards, the phase and turn agreeing
    with the table, the damage within 1-9 while play goes on, queued chance events that fit."""
    n = s.num_players
    cards = all_cards(s)
    if sum(cards.values()) != TOTAL_CARDS:
        raise StateError(
            f"impossible state: {sum(cards.values())} cards are accounted for, not {TOTAL_CARDS}"
        )
    tools = Counter({c: k for c, k in cards.items() if switch_on_value(c) is None})
    if tools != Counter(dict(TOOLS)):
        diff = (tools - Counter(dict(TOOLS))) + (Counter(dict(TOOLS)) - tools)
        raise StateError(f"impossible state: the Tool cards do not match the printed deck ({sorted(diff)})")
    if sum(cards.values()) - sum(tools.values()) != SWITCH_ON_CARDS:
        raise StateError(f"impossible state: not {SWITCH_ON_CARDS} Switch On cards")
    for k, h in enumerate(s.hands):
        if len(h) > HAND_LIMIT:
            raise StateError(f"impossible state: seat {k}'s hand holds {len(h)} cards (at most {HAND_LIMIT})")
        if any(switch_on_value(c) is not None for c in h):
            raise StateError(f"impossible state: a Switch On card in seat {k}'s hand (it is played at once)")
    for i, (cands, count) in enumerate(s.deck):
        if not 1 <= count <= len(cands) or (i == len(s.deck) - 1 and count != len(cands)):
            raise StateError(f"impossible state: deck segment {i} draws {count} of {len(cands)} candidates")
    known = [b for b in s.builders if b is not None]
    if len(set(known)) != len(known):
        raise StateError("impossible state: two seats have the same Builder")
    seen: dict[str, str] = {}
    for t in s.tile_box:
        if t.builder in known:
            raise StateError(f"impossible state: {t.id} in the box, but a seat is the {t.builder}")
        if t.id in seen:
            raise StateError(f"impossible state: {t.id} is twice in the box")
        seen[t.id] = "the box"
    for k, (builder, tiles) in enumerate(zip(s.builders, s.supply, strict=True)):
        for t in tiles:
            if t.builder != builder:
                raise StateError(f"impossible state: {t.id} in seat {k}'s supply (seat {k} is {builder})")
            seen[t.id] = f"seat {k}'s supply"
    for square, t in s.squares():
        if t.id in seen:
            raise StateError(f"impossible state: {t.id} is both in {seen[t.id]} and on {square}")
        if t.builder not in known:
            raise StateError(f"impossible state: {t.id} on {square}, but no seat is the {t.builder}")
        seen[t.id] = f"square {square}"
    expected = {f"{b}-{i}" for b in BUILDERS for i in range(1, TILES_PER_BUILDER + 1)}
    if set(seen) != expected:
        missing = sorted(expected - set(seen))
        raise StateError(f"impossible state: tile(s) {missing[:4]} are nowhere")
    for t in (*s.tile_box, *(t for tiles in s.supply for t in tiles), *(t for _, t in s.squares())):
        if not MIN_VALUE <= t.value <= MAX_VALUE or not 0 <= t.facing < 4:
            raise StateError(
                f"impossible state: {t.id} has value {t.value} (0-6, ruling 4), facing {t.facing}"
            )
    placed = sum(1 for _ in s.squares())
    building_turns = TILES_PER_BUILDER * n
    if s.phase == "building":
        if placed != s.turn or s.turn >= building_turns or s.current != s.turn % n:
            raise StateError(f"impossible state: building turn {s.turn} with {placed} tiles placed")
        if any(row[COLUMNS - 1] is not None for row in s.workbench):
            raise StateError("impossible state: a tile in column 5 during the building phase (ruling 10)")
    elif placed != building_turns or s.turn < building_turns:
        raise StateError(f"impossible state: the {s.phase} phase before every tile is placed")
    playing = s.phase in ("building", "configuration")
    if playing != (REPAIRED_AT < s.damage < DESTROYED_AT):
        raise StateError(f"impossible state: damage {s.damage} in the {s.phase} phase (ruling 17)")
    if s.switch_on is not None and (s.phase != "configuration" or s.chance):
        raise StateError("impossible state: a Switch On card owed outside the configuration phase")
    if s.requirement is not None and (s.requirement not in s.contrivances or s.phase != "over"):
        raise StateError(
            f"impossible state: requirement {s.requirement} revealed during play or not a tile's"
        )
    if s.phase == "over" and (s.requirement is None or s.chance):
        raise StateError("impossible state: the game is over but the Contrivance is not revealed")
    _check_chance(s)


def _check_chance(s: State) -> None:
    for i, e in enumerate(s.chance):
        where = f"impossible state: chance[{i}] {list(e)}"
        kind = e[0]
        if kind == "builder" and s.builders[e[1]] is not None:
            raise StateError(f"{where}: seat {e[1]} already has a Builder")
        if kind in ("builder", "deal") and s.phase != "building":
            raise StateError(f"{where}: setup happens before the building phase")
        if kind in ("draw", "redraw", "take") and s.phase != "configuration":
            raise StateError(f"{where}: cards are drawn in the configuration phase")
        if kind == "take" and e[1] == e[2]:
            raise StateError(f"{where}: a Builder takes from another's hand")
        if kind == "reveal" and s.phase != "scoring":
            raise StateError(f"{where}: the Contrivance is revealed when the game ends")
    head = s.chance[0] if s.chance else ("",)
    if head[0] in ("deal", "draw", "redraw") and not s.deck:
        raise StateError(f"impossible state: chance[0] {list(head)} draws from an empty deck")
    if head[0] == "deal" and len(s.deck[0][0]) <= s.deck[0][1]:
        raise StateError("impossible state: no card is left to deal under the set-aside pile (ruling 9)")
    if head[0] == "take" and not s.hands[head[2]]:
        raise StateError(f"impossible state: chance[0] {list(head)} takes from an empty hand")
    if s.phase == "scoring" and s.chance != (("reveal",),):
        raise StateError("impossible state: the game ended; only the Contrivance's reveal is awaited")
