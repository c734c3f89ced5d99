"""What can be seen of a table: the view of a state, the view in an observation, and noise.

A :class:`TableView` holds only what a camera can see (Display slots, the Energy Row, each
player's ring, Archive, built gizmos and VP tokens); any part may be unknown (``None``). The
:class:`Stabilizer` turns noisy observations into a stable view: an item below the confidence
threshold is unknown, and a zone counts only once it has read the same for several frames, so
a single misread frame never reaches the tracker.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from typing import TypeVar, cast

from referee.gizmos.cards import COLOR_INDEX, default_cards
from referee.gizmos.state import (
    DISPLAY_SLOTS,
    MARBLES_PER_COLOR,
    Counts,
    Player,
    State,
    StateError,
    check_invariants,
)
from referee.gizmos.steps import marbles
from referee.observation import CardSighting, MarbleSighting, Observation

Slot = tuple[int, int]  # (level, slot)
_Zone = TypeVar("_Zone")


@dataclass(frozen=True, slots=True)
class SeatView:
    """One player's visible area; ``None`` fields were not seen."""

    ring: Counts | None = None
    archive: frozenset[int] | None = None
    gizmos: frozenset[int] | None = None
    vp: int | None = None


@dataclass(frozen=True, slots=True)
class TableView:
    """The visible table. ``display`` maps known slots to a card id or ``None`` (seen empty).

    ``unsure`` names the known zones read with a confidence below the "sure" level (see
    :func:`zone_names`): they count, but a broken rule that rests on them could be a misreading.
    """

    display: dict[Slot, int | None] = field(default_factory=dict)
    row: Counts | None = None
    seats: tuple[SeatView, ...] = ()
    turn_player: int | None = None
    unsure: frozenset[str] = frozenset()

    def key(self) -> tuple[object, ...]:
        """A hashable summary, to tell whether two views are the same."""
        return (tuple(sorted(self.display.items())), self.row, self.seats, self.turn_player)

    def complete(self) -> bool:
        """Every zone is known: the whole Display, the Row and every player's area."""
        return (
            len(self.display) == sum(DISPLAY_SLOTS)
            and self.row is not None
            and all(None not in (s.ring, s.archive, s.gizmos, s.vp) for s in self.seats)
        )

    def unknown(self) -> list[str]:
        """The zones not known, by name (for messages)."""
        out = [f"display{lvl}.{s}" for lvl in (1, 2, 3) for s in range(DISPLAY_SLOTS[lvl - 1])]
        out = [z for z in out if _slot_of(z) not in self.display]
        if self.row is None:
            out.append("row")
        for i, sv in enumerate(self.seats):
            out += [f"{z}{i}" for z in SEAT_ZONES if getattr(sv, z) is None]
        return out

    def without(self, zones: frozenset[str] | set[str]) -> TableView:
        """The same view with the named zones unknown."""
        if not zones:
            return self
        display = {k: v for k, v in self.display.items() if f"display{k[0]}.{k[1]}" not in zones}
        seats = tuple(
            SeatView(
                ring=None if f"ring{i}" in zones else sv.ring,
                archive=None if f"archive{i}" in zones else sv.archive,
                gizmos=None if f"gizmos{i}" in zones else sv.gizmos,
                vp=None if f"vp{i}" in zones else sv.vp,
            )
            for i, sv in enumerate(self.seats)
        )
        return TableView(
            display=display,
            row=None if "row" in zones else self.row,
            seats=seats,
            turn_player=self.turn_player,
            unsure=self.unsure - frozenset(zones),
        )

    def filled(self, accepted: TableView) -> TableView:
        """The view with each zone it does not know (a hand over it, a reading still settling)
        taken from ``accepted``, the table as last accepted: unknown is not empty, a covered
        zone keeps what it last held. What the tracker explains while a hand covers part of
        the table (it accepts only a change that leaves the covered zones alone)."""
        display = {**accepted.display, **self.display}
        seats = tuple(
            SeatView(
                ring=_known_or(sv.ring, old.ring),
                archive=_known_or(sv.archive, old.archive),
                gizmos=_known_or(sv.gizmos, old.gizmos),
                vp=_known_or(sv.vp, old.vp),
            )
            for sv, old in zip(self.seats, accepted.seats, strict=True)
        )
        return replace(self, display=display, row=_known_or(self.row, accepted.row), seats=seats)


def zones_changed(before: TableView, after: TableView) -> set[str]:
    """The zones (named as in :attr:`TableView.unsure`) that read differently in two views,
    a zone unknown in one of them included."""
    out = {
        f"display{lvl}.{slot}"
        for lvl in (1, 2, 3)
        for slot in range(DISPLAY_SLOTS[lvl - 1])
        if (lvl, slot) not in before.display
        or (lvl, slot) not in after.display
        or before.display[lvl, slot] != after.display[lvl, slot]
    }
    if before.row is None or before.row != after.row:
        out.add("row")
    for i, (b, a) in enumerate(zip(before.seats, after.seats, strict=True)):
        out |= {f"{z}{i}" for z in SEAT_ZONES if getattr(b, z) is None or getattr(b, z) != getattr(a, z)}
    return out


def _known_or(value: _Zone | None, remembered: object) -> _Zone | None:
    """``value`` when the zone is known now, else what it last read (memory keeps each zone's own type)."""
    return value if value is not None else cast("_Zone | None", remembered)


#: The zones of a player's area, as named in :attr:`TableView.unsure` (``ring0``, ``vp2``...).
SEAT_ZONES: tuple[str, ...] = ("ring", "archive", "gizmos", "vp")


def _slot_of(zone: str) -> Slot:
    lvl, slot = zone.removeprefix("display").split(".")
    return int(lvl), int(slot)


def zone_text(zone: str, names: list[str] | None = None) -> str:
    """A zone name in words: ``ring1`` -> "player 2's ring", ``display2.0`` -> "Level II slot 1"."""
    if zone == "row":
        return "the Energy Row"
    if zone.startswith("display"):
        lvl, slot = _slot_of(zone)
        return f"Display Level {'I' * lvl} slot {slot + 1}"
    for z in SEAT_ZONES:
        if zone.startswith(z) and zone[len(z) :].isdigit():
            seat = int(zone[len(z) :])
            who = names[seat] if names and seat < len(names) else f"seat {seat}"
            label = {"ring": "ring", "archive": "Archive", "gizmos": "gizmos", "vp": "VP tokens"}[z]
            return f"{who}'s {label}"
    return zone


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
        who = f"seat {seat}"
        if sv.ring is not None and sv.ring != p.ring:
            out.append(f"{who}'s ring: {_counts(p.ring)} expected, {_counts(sv.ring)} seen")
        if sv.archive is not None and sv.archive != frozenset(p.archive):
            out.append(f"{who}'s Archive: {_cards(p.archive)} expected, {_cards(sv.archive)} seen")
        if sv.gizmos is not None and sv.gizmos != frozenset(p.gizmos):
            out.append(f"{who}'s gizmos: {_cards(p.gizmos)} expected, {_cards(sv.gizmos)} seen")
        if sv.vp is not None and sv.vp != p.vp_tokens:
            out.append(f"{who}'s VP tokens: {p.vp_tokens} expected, {sv.vp} seen")
    if turn and view.turn_player is not None and view.turn_player != state.current:
        out.append(f"turn: seat {state.current} expected, seat {view.turn_player} seen")
    return out


def seat_matches(player: Player, sv: SeatView) -> bool:
    """Whether a player's area agrees with the known parts of its view."""
    return (
        (sv.ring is None or sv.ring == player.ring)
        and (sv.gizmos is None or sv.gizmos == frozenset(player.gizmos))
        and (sv.archive is None or sv.archive == frozenset(player.archive))
        and (sv.vp is None or sv.vp == player.vp_tokens)
    )


def matches(state: State, view: TableView, turn: bool = False) -> bool:
    """Whether a state agrees with every known part of a view."""
    for (lvl, slot), card in view.display.items():
        if state.display[lvl - 1][slot] != card:
            return False
    if view.row is not None and view.row != state.row:
        return False
    if not all(seat_matches(p, sv) for p, sv in zip(state.players, view.seats, strict=False)):
        return False
    return not (turn and view.turn_player is not None and view.turn_player != state.current)


def _card(c: int | None) -> str:
    return "empty" if c is None else f"#{c}"


def _cards(cs: object) -> str:
    items = sorted(cs)  # type: ignore[call-overload]
    return "[" + ", ".join(f"#{c}" for c in items) + "]"


def _counts(c: Counts) -> str:
    return marbles(c, empty="none")


# --------------------------------------------------------------------------- observations


def _marbles(ms: tuple[MarbleSighting, ...] | None, threshold: float) -> tuple[Counts | None, float]:
    if ms is None:
        return None, 0.0
    counts = [0, 0, 0, 0]
    for m in ms:
        if m.color not in COLOR_INDEX or m.confidence < threshold:
            return None, 0.0  # one doubtful marble makes the whole zone unknown
        counts[COLOR_INDEX[m.color]] += 1
    return (counts[0], counts[1], counts[2], counts[3]), min((m.confidence for m in ms), default=1.0)


def _cardset(cs: tuple[CardSighting, ...] | None, threshold: float) -> tuple[frozenset[int] | None, float]:
    if cs is None or any(c.card is None or c.confidence < threshold for c in cs):
        return None, 0.0
    return frozenset(c.card for c in cs if c.card is not None), min((c.confidence for c in cs), default=1.0)


def view_of_observation(
    obs: Observation, players: int, threshold: float = 0.6, sure: float = 0.85
) -> TableView:
    """One observation as a view: low-confidence items make their zone unknown; zones read
    below ``sure`` are marked unsure."""
    display = {(s.level, s.slot): s.card for s in obs.display if s.confidence >= threshold}
    unsure = {f"display{s.level}.{s.slot}" for s in obs.display if threshold <= s.confidence < sure}
    seats = []
    for seat in range(players):
        p = obs.player(seat)
        if p is None:
            seats.append(SeatView())
            continue
        vp = p.vp_tokens[0] if p.vp_tokens is not None and p.vp_tokens[1] >= threshold else None
        if vp is not None and p.vp_tokens is not None and p.vp_tokens[1] < sure:
            unsure.add(f"vp{seat}")
        ring, ring_conf = _marbles(p.ring, threshold)
        archive, archive_conf = _cardset(p.archive, threshold)
        gizmos, gizmos_conf = _cardset(p.gizmos, threshold)
        for zone, value, conf in (("ring", ring, ring_conf), ("archive", archive, archive_conf)):
            if value is not None and conf < sure:
                unsure.add(f"{zone}{seat}")
        if gizmos is not None and gizmos_conf < sure:
            unsure.add(f"gizmos{seat}")
        seats.append(SeatView(ring=ring, archive=archive, gizmos=gizmos, vp=vp))
    row, row_conf = _marbles(obs.energy_row, threshold)
    if row is not None and row_conf < sure:
        unsure.add("row")
    return TableView(
        display=display, row=row, seats=tuple(seats), turn_player=obs.turn_player, unsure=frozenset(unsure)
    )


class Stabilizer:
    """Per zone, a value counts once the last ``frames`` views agree on it (else unknown).

    The stable view holds zone by zone: a hand covering one area leaves that area unknown
    without disturbing the others. A stable zone is unsure if any of those frames read it
    below the ``sure`` confidence.
    """

    def __init__(self, players: int, frames: int = 3, threshold: float = 0.6, sure: float = 0.85) -> None:
        if frames < 1:
            raise ValueError("frames must be at least 1")
        if not 0.0 <= threshold <= sure <= 1.0:
            raise ValueError("confidences: expected 0 <= threshold <= sure <= 1")
        self.players = players
        self.frames = frames
        self.threshold = threshold
        self.sure = sure
        self._history: deque[TableView] = deque(maxlen=frames)
        self._pushed = 0
        self._last: TableView | None = None  # the stable view after the latest push
        self._memory: dict[str, tuple[object, int]] = {}  # zone -> (last stable value, push count)

    def push(self, obs: Observation) -> TableView:
        """Add one observation; returns the current stable view."""
        self._history.append(view_of_observation(obs, self.players, self.threshold, self.sure))
        self._pushed += 1
        view = self.stable()
        self._last = view
        for (lvl, slot), card in view.display.items():
            self._memory[f"display{lvl}.{slot}"] = (card, self._pushed)
        if view.row is not None:
            self._memory["row"] = (view.row, self._pushed)
        for i, sv in enumerate(view.seats):
            for z in SEAT_ZONES:
                value = getattr(sv, z)
                if value is not None:
                    self._memory[f"{z}{i}"] = (value, self._pushed)
        return view

    def reset(self) -> None:
        self._history.clear()
        self._memory.clear()
        self._last = None

    def recent(self, frames: int) -> TableView:
        """The stable view, with each zone unknown now (a hand over it) filled in with the value
        it last read steadily, if that was at most ``frames`` frames ago: what the table looked
        like just before a signal, as near as the camera can tell."""
        now = self._last or self.stable()
        fresh = {z: v for z, (v, at) in self._memory.items() if self._pushed - at <= frames}
        display = dict(now.display)
        for z, v in fresh.items():
            if z.startswith("display") and _slot_of(z) not in display:
                display[_slot_of(z)] = v  # type: ignore[assignment]
        seats = tuple(
            SeatView(
                ring=_known_or(sv.ring, fresh.get(f"ring{i}")),
                archive=_known_or(sv.archive, fresh.get(f"archive{i}")),
                gizmos=_known_or(sv.gizmos, fresh.get(f"gizmos{i}")),
                vp=_known_or(sv.vp, fresh.get(f"vp{i}")),
            )
            for i, sv in enumerate(now.seats)
        )
        row = _known_or(now.row, fresh.get("row"))
        return replace(now, display=display, row=row, seats=seats)

    def stable(self, frames: int | None = None) -> TableView:
        """The zones that read the same (and known) in each of the last ``frames`` views (by
        default the stabiliser's own number; fewer: what a provisional reading rests on)."""
        frames = self.frames if frames is None else min(frames, self.frames)
        hist = list(self._history)[-frames:]
        if len(hist) < frames:
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
        unsure: set[str] = set()
        for h in hist:
            unsure |= h.unsure
        view = TableView(display=display, row=row, seats=tuple(seats), turn_player=turn)
        known = set(unsure) - set(view.unknown())
        return replace(view, unsure=frozenset(known))


def adopt_view(state: State, view: TableView) -> State:
    """The state with everything visible taken from a complete ``view``: what a person means by
    "the table is right as it is" when no sequence of steps explains it.

    Cards that came onto the table leave their deck (a Level III card leaves the trimmed deck's
    count too); cards no longer anywhere in view go to the bottom of their level's deck; the
    dispenser holds what the Row and the rings do not. The turn stays with the same player and
    its main action as it was (what changed is not known to be one), with nothing owed; the
    current player's gizmos already used or triggered this turn stay so while still in view (a
    gizmo used before the muddle cannot be used again just because the table was adopted).
    Raises :class:`StateError` for an incomplete view or one no real table can show.
    """
    if not view.complete():
        raise StateError(f"cannot adopt the table: {', '.join(view.unknown()[:3])} not seen")
    if len(view.seats) != len(state.players):
        raise StateError(
            f"cannot adopt the table: {len(view.seats)} players seen, {len(state.players)} playing"
        )
    row = view.row or (0, 0, 0, 0)
    rings = [sv.ring or (0, 0, 0, 0) for sv in view.seats]
    dispenser = tuple(MARBLES_PER_COLOR - row[c] - sum(r[c] for r in rings) for c in range(4))
    if min(dispenser) < 0:
        raise StateError(f"cannot adopt the table: more than {MARBLES_PER_COLOR} marbles of a colour seen")
    shown: set[int] = {c for c in view.display.values() if c is not None}
    for sv in view.seats:
        for cards in (sv.archive or frozenset(), sv.gizmos or frozenset()):
            if shown & cards:
                raise StateError(f"cannot adopt the table: #{min(shown & cards)} seen in two places")
            shown |= cards
    before = {c for row_ in state.display for c in row_ if c is not None}
    for p in state.players:
        before |= set(p.archive) | set(p.gizmos)
    level = {c.id: c.level for c in default_cards()}
    decks = []
    for lvl, segs in enumerate(state.decks, start=1):
        kept = []
        for cands, n in segs:
            left = tuple(c for c in cands if c not in shown)
            if left:
                kept.append((left, min(n, len(left)) if lvl == 3 else len(left)))
        gone = tuple(sorted(c for c in before - shown if level[c] == lvl))
        decks.append(tuple(kept) + (((gone, len(gone)),) if gone else ()))
    box = tuple(c for c in state.box if c not in shown)

    def as_seen(held: tuple[int, ...], seen: frozenset[int] | None) -> tuple[int, ...]:
        """The cards seen, in the order they were held, the newcomers after them."""
        seen = seen or frozenset()
        return tuple(c for c in held if c in seen) + tuple(sorted(seen - set(held)))

    players = [
        Player(
            ring=sv.ring or (0, 0, 0, 0),
            archive=as_seen(p.archive, sv.archive),
            gizmos=as_seen(p.gizmos, sv.gizmos),
            vp_tokens=sv.vp or 0,
        )
        for p, sv in zip(state.players, view.seats, strict=True)
    ]
    display = tuple(
        tuple(view.display.get((lvl, s)) for s in range(n)) for lvl, n in enumerate(DISPLAY_SLOTS, start=1)
    )
    mine = frozenset(players[state.current].gizmos)
    new = replace(
        state,
        players=tuple(players),
        dispenser=dispenser,  # type: ignore[arg-type]
        row=row,
        decks=tuple(decks),  # type: ignore[arg-type]
        display=display,
        box=box,
        triggered=state.triggered & mine,
        used=state.used & mine,
        pending=None,
        chance=(),
    )
    check_invariants(new, limits=False)
    return new
