"""Hand-made Contrivance tables for the tests: a Workbench laid out square by square, hands as
given, every other card in one shuffled deck, every invariant checked."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from referee.contrivance.data import BUILDERS, COLUMNS, DEFAULT_EDITION, EDGES, TILES_PER_BUILDER
from referee.contrivance.state import (
    Square,
    State,
    Tile,
    Workbench,
    builder_tiles,
    check_invariants,
    new_game,
    tool_deck,
)

#: A square's tile as the tests write it: (tile id, facing "N"/"E"/"S"/"W", value).
Spec = tuple[str, str, int]


def tile(tile_id: str, facing: str = "N", value: int = 0, double_rivets: tuple[int, ...] = (0, 2)) -> Tile:
    """A tile by id: ``Engineer-4`` is the Engineer's Double tile."""
    builder, _, n = tile_id.rpartition("-")
    rivets = double_rivets if n == str(TILES_PER_BUILDER) else (0,)
    return Tile(tile_id, builder, rivets, value, EDGES.index(facing))


def bench(rows: int, layout: Mapping[Square, Spec]) -> Workbench:
    """A Workbench of ``rows`` active rows holding exactly the tiles of ``layout``."""
    grid: list[list[Tile | None]] = [[None] * COLUMNS for _ in range(rows)]
    for (r, c), (tid, facing, value) in layout.items():
        grid[r - 1][c - 1] = tile(tid, facing, value)
    return tuple(tuple(row) for row in grid)


def table(
    players: int = 2,
    layout: Mapping[Square, Spec] | None = None,
    hands: Sequence[Sequence[str]] | None = None,
    discard: Sequence[str] = (),
    damage: int = 6,
    current: int = 0,
    later_round: bool = True,
    builders: Sequence[str] | None = None,
) -> State:
    """A configuration-phase table. Row *k* belongs to ``builders[k]`` (default: the first
    ``players`` Builders in the seed's order). ``layout`` fixes some squares; every other tile
    fills the next free square of columns 1-4, singles facing N and Doubles E (so these fillers
    interlock with each other nowhere; with what ``layout`` places they may). Hands default to
    Move, Rotate, Swap Component, Swap Points; every card not in a hand, the discard pile or the
    box is in one shuffled deck.
    ``later_round``: a turn of round 2 or later (draws happen), else of round 1."""
    layout = dict(layout or {})
    names = tuple(builders or BUILDERS[:players])
    grid: list[list[Tile | None]] = [[None] * COLUMNS for _ in range(players)]
    for (r, c), (tid, facing, value) in layout.items():
        grid[r - 1][c - 1] = tile(tid, facing, value)
    placed = {spec[0] for spec in layout.values()}
    free = [(r, c) for r in range(players) for c in range(4) if grid[r][c] is None]
    for b in names:
        for t in builder_tiles(b):
            if t.id not in placed:
                r, c = free.pop(0)
                grid[r][c] = replace(t, facing=1) if t.double else t  # the Double across the row
    fresh = new_game(players)
    held = [
        tuple(sorted(h)) for h in (hands or [("move", "rotate", "swap_component", "swap_points")] * players)
    ]
    rest = Counter(tool_deck()) + Counter(DEFAULT_EDITION.switch_on_cards(players))
    rest.subtract(Counter(c for h in held for c in h))
    rest.subtract(Counter(discard))
    assert all(n >= 0 for n in rest.values()), rest
    deck_cards = tuple(sorted(rest.elements()))
    state = State(
        builders=names,
        supply=((),) * players,
        workbench=tuple(tuple(row) for row in grid),
        hands=tuple(held),
        deck=((deck_cards, len(deck_cards)),) if deck_cards else (),
        discard=tuple(sorted(discard)),
        box=fresh.box,
        contrivances=fresh.contrivances,
        tile_box=tuple(t for t in fresh.tile_box if t.builder not in names),
        damage=damage,
        phase="configuration",
        current=current,
        turn=TILES_PER_BUILDER * players + (players if later_round else 0) + current,
    )
    check_invariants(state)
    return state
