"""What can be seen of a table: the view of a state, the view in an observation, and noise.

A :class:`TableView` holds only what a camera can see (Display slots, the Energy Row, each
player's ring, Archive, built gizmos and VP tokens); any part may be unknown (``None``). The
:class:`Stabilizer` turns noisy observations into a stable view: an item below the confidence
threshold is unknown, and a zone counts only once it has read the same for several frames, so
a single misread frame never reaches the tracker.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from referee.gizmos.cards import COLOR_INDEX, COLORS
from referee.gizmos.state import Counts, State
from referee.observation import CardSighting, MarbleSighting, Observation

Slot = tuple[int, int]  # (level, slot)


@dataclass(frozen=True, slots=True)
class SeatView:
    """One player's visible area; ``None`` fields were not seen."""

    ring: Counts | None = None
    archive: frozenset[int] | None = None
    gizmos: frozenset[int] | None = None
    vp: int | None = None


@dataclass(frozen=True, slots=True)
class TableView:
    """The visible table. ``display`` maps known slots to a card id or ``None`` (seen empty)."""

    display: dict[Slot, int | None] = field(default_factory=dict)
    row: Counts | None = None
    seats: tuple[SeatView, ...] = ()
    turn_player: int | None = None

    def key(self) -> tuple[object, ...]:
        """A hashable summary, to tell whether two views are the same."""
        return (tuple(sorted(self.display.items())), self.row, self.seats, self.turn_player)


def view_of(state: State) -> TableView:
    """Everything a camera could see of a state."""
    display = {(lvl + 1, s): c for lvl, row in enumerate(state.display) for s, c in enumerate(row)}
    seats = tuple(
        SeatView(ring=p.ring, archive=frozenset(p.archive), gizmos=frozenset(p.gizmos), vp=p.vp_tokens)
        for p in state.players
    )
    return TableView(display=display, row=state.row, seats=seats, turn_player=state.current)


def mismatches(state: State, view: TableView, turn: bool = False) -> list[str]:
    """Where a state disagrees with the known parts of a view (empty: they match)."""
    out: list[str] = []
    for (lvl, slot), card in view.display.items():
        actual = state.display[lvl - 1][slot]
        if actual != card:
            out.append(f"Display {lvl}/{slot + 1}: {_card(actual)} expected, {_card(card)} seen")
    if view.row is not None and view.row != state.row:
        out.append(f"Energy Row: {_counts(state.row)} expected, {_counts(view.row)} seen")
    for seat, sv in enumerate(view.seats):
        if seat >= len(state.players):
            break
        p = state.players[seat]
        who = f"player {seat + 1}"
        if sv.ring is not None and sv.ring != p.ring:
            out.append(f"{who}'s ring: {_counts(p.ring)} expected, {_counts(sv.ring)} seen")
        if sv.archive is not None and sv.archive != frozenset(p.archive):
            out.append(f"{who}'s Archive: {_cards(p.archive)} expected, {_cards(sv.archive)} seen")
        if sv.gizmos is not None and sv.gizmos != frozenset(p.gizmos):
            out.append(f"{who}'s gizmos: {_cards(p.gizmos)} expected, {_cards(sv.gizmos)} seen")
        if sv.vp is not None and sv.vp != p.vp_tokens:
            out.append(f"{who}'s VP tokens: {p.vp_tokens} expected, {sv.vp} seen")
    if turn and view.turn_player is not None and view.turn_player != state.current:
        out.append(f"turn: player {state.current + 1} expected, player {view.turn_player + 1} seen")
    return out


def matches(state: State, view: TableView, turn: bool = False) -> bool:
    """Whether a state agrees with every known part of a view."""
    for (lvl, slot), card in view.display.items():
        if state.display[lvl - 1][slot] != card:
            return False
    if view.row is not None and view.row != state.row:
        return False
    for seat, sv in enumerate(view.seats):
        p = state.players[seat]
        if sv.ring is not None and sv.ring != p.ring:
            return False
        if sv.gizmos is not None and sv.gizmos != frozenset(p.gizmos):
            return False
        if sv.archive is not None and sv.archive != frozenset(p.archive):
            return False
        if sv.vp is not None and sv.vp != p.vp_tokens:
            return False
    return not (turn and view.turn_player is not None and view.turn_player != state.current)


def _card(c: int | None) -> str:
    return "empty" if c is None else f"#{c}"


def _cards(cs: object) -> str:
    items = sorted(cs)  # type: ignore[call-overload]
    return "[" + ", ".join(f"#{c}" for c in items) + "]"


def _counts(c: Counts) -> str:
    parts = [f"{n} {COLORS[i]}" for i, n in enumerate(c) if n]
    return ", ".join(parts) if parts else "none"


# --------------------------------------------------------------------------- observations


def _marbles(ms: tuple[MarbleSighting, ...] | None, threshold: float) -> Counts | None:
    if ms is None:
        return None
    counts = [0, 0, 0, 0]
    for m in ms:
        if m.color not in COLOR_INDEX or m.confidence < threshold:
            return None  # one doubtful marble makes the whole zone unknown
        counts[COLOR_INDEX[m.color]] += 1
    return (counts[0], counts[1], counts[2], counts[3])


def _cardset(cs: tuple[CardSighting, ...] | None, threshold: float) -> frozenset[int] | None:
    if cs is None or any(c.card is None or c.confidence < threshold for c in cs):
        return None
    return frozenset(c.card for c in cs if c.card is not None)


def view_of_observation(obs: Observation, players: int, threshold: float = 0.6) -> TableView:
    """One observation as a view: low-confidence items make their zone unknown."""
    display = {(s.level, s.slot): s.card for s in obs.display if s.confidence >= threshold}
    seats = []
    for seat in range(players):
        p = obs.player(seat)
        if p is None:
            seats.append(SeatView())
            continue
        vp = p.vp_tokens[0] if p.vp_tokens is not None and p.vp_tokens[1] >= threshold else None
        seats.append(
            SeatView(
                ring=_marbles(p.ring, threshold),
                archive=_cardset(p.archive, threshold),
                gizmos=_cardset(p.gizmos, threshold),
                vp=vp,
            )
        )
    return TableView(
        display=display,
        row=_marbles(obs.energy_row, threshold),
        seats=tuple(seats),
        turn_player=obs.turn_player,
    )


class Stabilizer:
    """Per zone, a value counts once the last ``frames`` views agree on it (else unknown).

    The stable view holds zone by zone: a hand covering one area leaves that area unknown
    without disturbing the others.
    """

    def __init__(self, players: int, frames: int = 3, threshold: float = 0.6) -> None:
        if frames < 1:
            raise ValueError("frames must be at least 1")
        self.players = players
        self.frames = frames
        self.threshold = threshold
        self._history: deque[TableView] = deque(maxlen=frames)

    def push(self, obs: Observation) -> TableView:
        """Add one observation; returns the current stable view."""
        self._history.append(view_of_observation(obs, self.players, self.threshold))
        return self.stable()

    def reset(self) -> None:
        self._history.clear()

    def stable(self) -> TableView:
        """The zones that read the same (and known) in each of the last ``frames`` views."""
        hist = list(self._history)
        if len(hist) < self.frames:
            return TableView(seats=tuple(SeatView() for _ in range(self.players)))
        last = hist[-1]
        display = {
            k: v for k, v in last.display.items() if all(k in h.display and h.display[k] == v for h in hist)
        }
        row = last.row if all(h.row == last.row for h in hist) else None
        seats = []
        for i, sv in enumerate(last.seats):

            def same(attr: str, i: int = i) -> bool:
                return all(getattr(h.seats[i], attr) == getattr(last.seats[i], attr) for h in hist)

            seats.append(
                SeatView(
                    ring=sv.ring if same("ring") else None,
                    archive=sv.archive if same("archive") else None,
                    gizmos=sv.gizmos if same("gizmos") else None,
                    vp=sv.vp if same("vp") else None,
                )
            )
        turn = last.turn_player if all(h.turn_player == last.turn_player for h in hist) else None
        return TableView(display=display, row=row, seats=tuple(seats), turn_player=turn)
