"""Hand-built tables for rule tests: say what matters, the helper makes the rest consistent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from referee.gizmos import Pending, Player, State, check_invariants, default_cards
from referee.gizmos.state import DISPLAY_SLOTS, LEVEL3_IN_PLAY, Counts

CARDS = default_cards()


def table(
    players: int = 2,
    gizmos: Mapping[int, Sequence[int]] | None = None,
    rings: Mapping[int, Counts] | None = None,
    archives: Mapping[int, Sequence[int]] | None = None,
    vp: Mapping[int, int] | None = None,
    display: Sequence[int] = (),
    row: Counts = (2, 2, 1, 1),
    current: int = 0,
    main_done: bool = False,
    triggered: Sequence[int] = (),
    used: Sequence[int] = (),
    pending: Pending | None = None,
    end_triggered: bool = False,
    turn: int = 0,
    deck_order: Mapping[int, Sequence[int]] | None = None,
) -> State:
    """A consistent state. ``gizmos`` are built on top of each seat's Starting Gizmo; ``display``
    cards go into their level's row first (the rest is filled from the lowest free ids);
    ``deck_order`` fixes the top of a deck as one-card segments (so draws are predictable)."""
    gizmos = gizmos or {}
    rings = rings or {}
    archives = archives or {}
    vp = vp or {}
    taken: set[int] = set(range(4))
    seats = []
    for s in range(players):
        g = tuple(gizmos.get(s, ()))
        a = tuple(archives.get(s, ()))
        taken |= set(g) | set(a)
        seats.append(
            Player(ring=rings.get(s, (0, 0, 0, 0)), archive=a, gizmos=(s, *g), vp_tokens=vp.get(s, 0))
        )
    if pending is not None:
        taken |= set(pending.hand)
    rows: list[list[int | None]] = [[], [], []]
    for c in display:
        rows[CARDS[c].level - 1].append(c)
        taken.add(c)
    fixed = deck_order or {}
    for lvl in (1, 2, 3):
        taken |= set(fixed.get(lvl, ()))
    for lvl in (1, 2, 3):
        free = (c.id for c in CARDS if c.level == lvl and c.id not in taken)
        while len(rows[lvl - 1]) < DISPLAY_SLOTS[lvl - 1]:
            c = next(free)
            rows[lvl - 1].append(c)
            taken.add(c)
    decks = []
    for lvl in (1, 2, 3):
        top = tuple(((c,), 1) for c in fixed.get(lvl, ()))
        rest = tuple(c.id for c in CARDS if c.level == lvl and c.id not in taken)
        # Level III: 16 cards in play (ruling 3); the rest of the segment are removed candidates.
        count = len(rest) if lvl < 3 else LEVEL3_IN_PLAY - sum(1 for c in taken if CARDS[c].level == 3)
        decks.append((*top, (rest, count)) if rest and count > 0 else top)
    dispenser = tuple(13 - row[c] - sum(p.ring[c] for p in seats) for c in range(4))
    state = State(
        players=tuple(seats),
        dispenser=dispenser,  # type: ignore[arg-type]
        row=row,
        decks=tuple(decks),  # type: ignore[arg-type]
        display=tuple(tuple(r) for r in rows),
        box=tuple(range(players, 4)),
        current=current,
        turn=turn,
        main_done=main_done,
        triggered=frozenset(triggered),
        used=frozenset(used),
        pending=pending,
        end_triggered=end_triggered,
    )
    check_invariants(state)
    return state
