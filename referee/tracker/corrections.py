"""People have the last word: what a person's correction makes of the game, as functions of the
state they correct. The tracker records a correction and starts the turn's reckoning afresh from
what these return (:meth:`referee.tracker.Tracker.correct`, ``reread_turns``, ``undo_turn``,
``decide``); a correction that cannot be made raises :class:`TrackerError` with one clear line.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from referee.events import Correction
from referee.gizmos import State, check_invariants, state_from_json
from referee.gizmos.cards import COLOR_INDEX, COLORS
from referee.gizmos.errors import StateError
from referee.tracker.base import TrackerError, TrackerSettings
from referee.tracker.explain import Explanation, Hints, explain
from referee.tracker.turns import LostTurns
from referee.tracker.view import TableView, adopt_view, zone_text


def corrected(s: State, c: Correction) -> State:
    """The state after correction ``c`` (see :meth:`referee.tracker.Tracker.correct`), checked."""
    new = _corrected(s, c)
    try:
        check_invariants(new, limits=False)
    except StateError as exc:
        raise TrackerError(f"correction refused: {exc}") from exc
    return new


def _corrected(s: State, c: Correction) -> State:
    p = c.payload
    if c.what == "state":
        try:
            return state_from_json(p.get("state"))
        except StateError as exc:
            raise TrackerError(f"correction refused: {exc}") from exc
    if c.what == "marble_color":
        return recolor(s, p)
    if c.what == "card_id":
        old, new = p.get("old"), p.get("new")
        if not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 112 for x in (old, new)):
            raise TrackerError(f"card_id: 'old' and 'new' must be card ids 0..111, got {old!r} and {new!r}")
        return swap_cards(s, old, new)  # type: ignore[arg-type]
    raise TrackerError(f"unknown correction {c.what!r} (marble_color, card_id or state)")


def recolor(s: State, p: dict[str, Any]) -> State:
    """ "That marble is blue": one marble in the Row or a ring changes color (the dispenser
    gives the true color and takes the misread one, so every color still adds up to 13)."""
    src, dst = p.get("from"), p.get("to")
    if src not in COLOR_INDEX or dst not in COLOR_INDEX:
        raise TrackerError(f"marble_color: 'from' and 'to' must be colours from {list(COLORS)}")
    a, b = COLOR_INDEX[src], COLOR_INDEX[dst]
    if s.dispenser[b] == 0:
        raise TrackerError(f"marble_color: no {dst} marble is left in the dispenser to swap in")
    disp = list(s.dispenser)
    disp[a] += 1
    disp[b] -= 1
    zone, seat = p.get("zone"), p.get("seat")
    if zone == "row":
        counts = list(s.row)
    elif (
        zone == "ring" and isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < s.num_players
    ):
        counts = list(s.players[seat].ring)
    else:
        raise TrackerError(f"marble_color: zone must be 'row', or 'ring' with a seat 0..{s.num_players - 1}")
    if counts[a] == 0:
        raise TrackerError(f"marble_color: there is no {src} marble there")
    counts[a] -= 1
    counts[b] += 1
    new_counts = (counts[0], counts[1], counts[2], counts[3])
    dispenser = (disp[0], disp[1], disp[2], disp[3])
    if zone == "row":
        return dataclasses.replace(s, row=new_counts, dispenser=dispenser)
    players = list(s.players)
    players[seat] = dataclasses.replace(players[seat], ring=new_counts)  # type: ignore[index]
    return dataclasses.replace(s, players=tuple(players), dispenser=dispenser)


def swap_cards(state: State, a: int, b: int) -> State:
    """The same table with cards ``a`` and ``b`` trading places (a card misidentified)."""
    if a == b:
        return state

    def sw(c: int | None) -> int | None:
        return b if c == a else a if c == b else c

    def sw_all(cs: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(sw(c) for c in cs)  # type: ignore[misc]

    players = tuple(
        dataclasses.replace(p, archive=sw_all(p.archive), gizmos=sw_all(p.gizmos)) for p in state.players
    )
    decks = tuple(tuple((tuple(sorted(sw_all(cands))), n) for cands, n in segs) for segs in state.decks)
    display = tuple(tuple(sw(c) for c in row) for row in state.display)
    pending = state.pending
    if pending is not None:
        pending = dataclasses.replace(pending, hand=sw_all(pending.hand))
    return dataclasses.replace(
        state,
        players=players,
        decks=decks,  # type: ignore[arg-type]
        display=display,
        box=tuple(sorted(sw_all(state.box))),
        triggered=frozenset(sw_all(tuple(state.triggered))),
        used=frozenset(sw_all(tuple(state.used))),
        pending=pending,
    )


def undo_target(turn_starts: list[State], state: State) -> State:
    """Where an undo goes: the start of the current turn, or of the previous one if nothing
    happened yet in this one."""
    target = turn_starts[-1]
    if target == state and len(turn_starts) > 1:
        target = turn_starts[-2]
    return target


def reread(
    turn_starts: list[State],
    state: State,
    view: TableView,
    from_turn: int,
    ends: int,
    names: list[str],
    settings: TrackerSettings,
) -> tuple[State, Explanation]:
    """A person's turn boundaries (see :meth:`referee.tracker.Tracker.reread_turns`): the start
    of turn ``from_turn`` and the explanation from there to ``view`` ending exactly ``ends`` turns."""
    starts = {t.turn: t for t in turn_starts}
    if isinstance(from_turn, bool) or not isinstance(from_turn, int) or from_turn not in starts:
        raise TrackerError(f"from_turn: expected one of the turns {sorted(starts)}, got {from_turn!r}")
    most = 2 * state.num_players
    if isinstance(ends, bool) or not isinstance(ends, int) or not 0 <= ends <= most:
        raise TrackerError(f"ends: expected a whole number of turns 0..{most}, got {ends!r}")
    if not view.complete():
        hidden = ", ".join(zone_text(z, names) for z in view.unknown()[:3])
        raise TrackerError(f"the table is not fully in view ({hidden}): show it to the camera first")
    start = starts[from_turn]
    hints = Hints(end_turns=ends, quiet_turns=True)
    found = explain(start, view, hints, settings.max_violations, settings.limits)
    if found is None:
        raise TrackerError(
            f"no sequence of steps from the start of turn {from_turn + 1} ends {ends} turn(s) and "
            "reaches the table seen"
        )
    return start, found


def adopted_table(state: State, view: TableView, turns: LostTurns | None = None) -> State:
    """The table as seen taken as the state (a confirmed reading nothing explains); raises
    :class:`StateError` for a view no real table can show. ``turns`` (camera only): the turns
    that passed meanwhile, by whose area changed: the turn moves on to the last mover's, their
    main action taken."""
    new = adopt_view(state, view)
    if turns is not None and turns[2]:
        _, seat, ends = turns
        new = dataclasses.replace(
            new,
            turn=new.turn + ends,
            current=seat,
            main_done=True,
            used=frozenset(),
            triggered=frozenset(),
            pending=None,
        )
        check_invariants(new, limits=False)
    return new
