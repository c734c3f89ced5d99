"""The Contrivance referee at the camera: each turn's change of the Workbench explained as the
legal step of the engine that produces it, or a warning naming the player, the ruling and the fix.

Hands are hidden, so the referee never knows which card a Builder holds. It keeps the engine's
:class:`~referee.contrivance.State` for what the table shows (the Workbench, the Damage, whose
turn it is) and, for each turn, asks the engine itself: it gives the acting seat the card a
change needs (a *probe*), applies the step and compares what the engine's table would look like
with what the camera sees. What it can check of the hidden cards is the count of each Tool card
played: a seventh Move is impossible while no Move can have come back (a Redraw a Tool, which
leaves the Workbench as it was, or the discard pile reshuffled once the deck ran out).

A turn is explained when it ends (an end-of-turn signal: the dashboard, a key, a button), from
the stable view at its start to the stable view at its end, the cheapest explanation first:

1. nothing changed: a pass, a redraw, Take a Tool or Redraw a Tool (not told apart);
2. one legal step: a placement (building phase), a Tool card, or a Switch On card (the Damage);
3. one step that breaks a rule (a Move that turned its tile, a tile placed in column 5 during the
   building phase...): the engine's refusal names the rule;
4. two legal steps: two actions in one turn (``SECOND_ACTION``);
5. nothing explains it: a person is asked (an *uncertain* warning).

After a break the referee warns once, accepts the table as it is and goes on from the next turn,
so one break never cascades. A break that rests on a square read with low confidence is reported
as uncertain, never as a violation. Everything accepted goes to the :class:`GameRecord`.
"""

from __future__ import annotations

import random
import time
from collections import Counter, deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from referee.contrivance import (
    CONTRIVANCE,
    RULES,
    ContrivanceError,
    IllegalStep,
    State,
    Step,
    Tile,
    apply,
    edition_from_json,
    legal_steps,
    new_game,
)
from referee.contrivance.data import (
    BUILDERS,
    BUILDING_COLUMNS,
    COLUMNS,
    DEFAULT_EDITION,
    DESTROYED_AT,
    EDGES,
    HAND_LIMIT,
    REPAIRED_AT,
    TILES_PER_BUILDER,
    TOOLS,
    Edition,
)
from referee.contrivance.errors import Rule, StateError
from referee.contrivance.rules import resolve_chance
from referee.contrivance.state import PHASES, Square, tile_from_json
from referee.contrivance.steps import CARD_TITLES, describe, play_text
from referee.events import EndOfTurn
from referee.observation import WorkbenchObservation
from referee.tracker.base import LogLine, TrackerError
from referee.tracker.record import GameRecord, RecordError
from referee.tracker.verdicts import RefereeWarning

#: Rules only a referee watching a whole turn can see broken: the engine ends a turn after its
#: one action, so it never meets a second one.
REFEREE_RULES: dict[str, Rule] = {
    "SECOND_ACTION": Rule(
        "SECOND_ACTION", (10, 12), "A turn is one action: one tile placed, or one Tool or Switch On card."
    ),
}
#: The Tool cards that change the Workbench, in the order an ambiguous change is attributed.
BOARD_CARDS: tuple[str, ...] = (
    "move",
    "rotate",
    "swap_component",
    "swap_points",
    "points+1",
    "points-1",
    "points+2",
    "points-2",
    "points+3",
    "points-3",
)
COPIES: dict[str, int] = dict(TOOLS)
DAMAGE = "damage"
DISCARD = "discard"  # the discard pile's top card: read, but no turn is explained by it
Zone = Square | str  # a square (row, column) or "damage"


def rule_of(code: str) -> Rule:
    """The rule a warning's code names: the engine's, or one of :data:`REFEREE_RULES`."""
    return RULES[code] if code in RULES else REFEREE_RULES[code]


# =========================================================================== what is seen


@dataclass(frozen=True, slots=True)
class TileSeen:
    """What a camera can see of a tile: no id (the three single tiles of a Builder look alike);
    ``facing``/``value`` are ``None`` when they could not be read."""

    builder: str
    double: bool
    facing: int | None
    value: int | None

    def fits(self, tile: Tile | None) -> bool:
        """Whether ``tile`` looks like this (an unread facing or value fits any)."""
        return (
            tile is not None
            and tile.builder == self.builder
            and tile.double == self.double
            and self.facing in (None, tile.facing)
            and self.value in (None, tile.value)
        )


def seen_of(tile: Tile | None) -> TileSeen | None:
    return None if tile is None else TileSeen(tile.builder, tile.double, tile.facing, tile.value)


def shown_damage(damage: int) -> int:
    """The Damage track shows 0-10: a damage below 0 reads 0, above 10 reads 10."""
    return min(DESTROYED_AT, max(REPAIRED_AT, damage))


@dataclass(frozen=True, slots=True)
class BenchView:
    """The stable view of a Contrivance table: the known squares (a tile, or ``None`` seen
    empty), the Damage (``None``: unknown), and the zones read with low confidence."""

    squares: Mapping[Square, TileSeen | None] = field(default_factory=dict)
    damage: int | None = None
    unsure: frozenset[Zone] = frozenset()
    stale: frozenset[Zone] = frozenset()  # stable, but not read lately (a hand over it?)
    discard: str | None = None  # the discard pile's top card (None: empty or unknown)

    def key(self) -> tuple[object, ...]:
        return (tuple(sorted(self.squares.items(), key=lambda kv: kv[0])), self.damage)

    def complete(self, rows: int) -> bool:
        return self.damage is not None and all(
            (r, c) in self.squares for r in range(1, rows + 1) for c in range(1, COLUMNS + 1)
        )

    def differences(self, state: State) -> set[Zone]:
        """The known zones where ``state`` does not look like this view."""
        out: set[Zone] = set()
        for sq, seen in self.squares.items():
            tile = state.tile_at(sq)
            if (seen is None) != (tile is None) or (seen is not None and not seen.fits(tile)):
                out.add(sq)
        if self.damage is not None and self.damage != shown_damage(state.damage):
            out.add(DAMAGE)
        return out


def view_of(state: State) -> BenchView:
    """Everything a camera could see of a state (the model's expectation)."""
    squares = {sq: seen_of(state.tile_at(sq)) for sq in _all_squares(state.num_players)}
    return BenchView(squares, shown_damage(state.damage))


def _all_squares(rows: int) -> list[Square]:
    return [(r, c) for r in range(1, rows + 1) for c in range(1, COLUMNS + 1)]


def readings(
    obs: WorkbenchObservation, rows: int, threshold: float, sure: float
) -> dict[Zone, tuple[object, bool]]:
    """One observation as zone -> (value, read surely); a zone below ``threshold`` is left out
    (unknown), as is a tile whose Builder was not read."""
    out: dict[Zone, tuple[object, bool]] = {}
    for s in obs.squares:
        if s.row > rows or s.confidence < threshold:
            continue
        t = s.tile
        if t is None:
            out[(s.row, s.column)] = (None, s.confidence >= sure)
            continue
        if t.confidence < threshold or t.builder == "unknown":
            continue
        facing = t.facing if t.facing_confidence >= threshold else None
        value = t.value if t.value_confidence >= threshold else None
        low = min(s.confidence, t.confidence, t.facing_confidence, t.value_confidence)
        out[(s.row, s.column)] = (TileSeen(t.builder, t.double, facing, value), low >= sure)
    if obs.damage is not None and obs.damage[1] >= threshold:
        out[DAMAGE] = (obs.damage[0], obs.damage[1] >= sure)
    if obs.discard_top is not None and obs.discard_top[1] >= threshold:
        out[DISCARD] = (obs.discard_top[0], obs.discard_top[1] >= sure)
    return out


class BenchStabilizer:
    """Per zone, a reading counts once the zone's last ``frames`` readings agree, and then holds
    until another value does, so a single misread frame never reaches the referee; frames where
    a zone was not read (a hand over it, a faint reading) do not count for it, so a hand over one
    square leaves the others alone. A stable zone is *unsure* if one of the readings that made it
    stable was below ``sure``, and *stale* if it was not read in the last ``frames`` frames (a
    hand may be changing it) or its latest reading differs (a new value, or a misread, not yet
    confirmed)."""

    def __init__(self, rows: int, frames: int = 3, threshold: float = 0.6, sure: float = 0.85) -> None:
        if frames < 1 or not 0.0 <= threshold <= sure <= 1.0:
            raise ValueError("frames >= 1 and 0 <= threshold <= sure <= 1")
        self.rows, self.frames, self.threshold, self.sure = rows, frames, threshold, sure
        self._recent: dict[Zone, deque[tuple[object, bool]]] = {}
        self._stable: dict[Zone, tuple[object, bool]] = {}  # zone -> (value, read surely)
        self._read_at: dict[Zone, int] = {}
        self._pushed = 0

    def push(self, obs: WorkbenchObservation) -> BenchView:
        self._pushed += 1
        for zone, reading in readings(obs, self.rows, self.threshold, self.sure).items():
            recent = self._recent.setdefault(zone, deque(maxlen=self.frames))
            recent.append(reading)
            self._read_at[zone] = self._pushed
            if len(recent) == self.frames and all(r[0] == reading[0] for r in recent):
                self._stable[zone] = (reading[0], all(r[1] for r in recent))
        return self.stable()

    def guess(self, zone: Zone) -> tuple[object] | None:
        """The value ``zone`` read most often in its last readings (ties: the latest), or
        ``None`` if it was never read."""
        recent = self._recent.get(zone)
        if not recent:
            return None
        values = [r[0] for r in recent]
        return (max(reversed(values), key=values.count),)

    def stable(self) -> BenchView:
        squares: dict[Square, TileSeen | None] = {}
        damage: int | None = None
        discard: str | None = None
        for zone, (value, _) in self._stable.items():
            if zone == DAMAGE:
                damage = value  # type: ignore[assignment]
            elif zone == DISCARD:
                discard = value  # type: ignore[assignment]
            else:
                squares[zone] = value  # type: ignore[index, assignment]
        unsure = frozenset(z for z, (_, sure) in self._stable.items() if not sure)
        stale = frozenset(
            z
            for z, (value, _) in self._stable.items()
            if self._pushed - self._read_at[z] >= self.frames or self._recent[z][-1][0] != value
        )
        return BenchView(squares, damage, unsure, stale, discard)


# =========================================================================== explanations


@dataclass(slots=True)
class Explanation:
    """How a turn's change came about: the steps (the acting seat's), the Tool cards they use,
    the rule broken (if any) in a step-shaped form, and the table the referee accepts after it."""

    steps: list[Step]
    cards: list[str]
    after: State
    code: str | None = None
    message: str = ""
    remedy: str = ""
    uncertain: bool = False  # nothing explains it, or the break rests on low-confidence readings
    quiet: bool = False  # nothing visible changed


def _sq(square: Square) -> str:
    return f"row {square[0]}, column {square[1]}"


def _tile_name(tile: Tile) -> str:
    return f"the {tile.builder} {'Double ' if tile.double else ''}tile"


def _probe(state: State, seat: int, card: str | None = None) -> State:
    """The model with ``seat`` to act holding four ``card`` cards (what a play needs)."""
    hands = tuple((card,) * HAND_LIMIT if card and k == seat else () for k in range(state.num_players))
    return replace(state, hands=hands, current=seat, chance=(), switch_on=None)


def _settled(state: State) -> State:
    """An engine state back to the referee's model: hands, draws and the discard pile unknown."""
    chance = (("reveal",),) if state.phase == "scoring" else ()  # the end: the reveal is awaited
    return replace(state, hands=((),) * state.num_players, chance=chance, discard=(), switch_on=None)


def _board_steps(state: State, seat: int, diff: set[Zone]) -> Iterator[tuple[str, Step]]:
    """Every legal Tool play by ``seat`` acting on a square that changed."""
    for card in BOARD_CARDS:
        for step in legal_steps(_probe(state, seat, card)):
            if step.kind == "play" and step.at in diff:
                yield card, step


def _effect(state: State, seat: int, card: str, step: Step) -> State:
    """The Workbench after ``step`` by ``seat``, whoever's turn the model says it is."""
    return _settled(apply(_probe(state, seat, card), step))


def adopt(state: State, view: BenchView) -> State:
    """The table as seen, with the tiles' identities carried over from ``state``: a square that
    looks like its tile keeps it (facing and value as read); a tile seen where the model has
    another comes from the tiles that left their squares, else from a seat's supply."""
    grid = [list(row) for row in state.workbench]
    pool: list[Tile] = []
    for (r, c), seen in sorted(view.squares.items()):
        tile = grid[r - 1][c - 1]
        if tile is not None and (seen is None or (tile.builder, tile.double) != (seen.builder, seen.double)):
            pool.append(tile)
            grid[r - 1][c - 1] = None
    supply = [list(tiles) for tiles in state.supply]
    for (r, c), seen in sorted(view.squares.items()):
        if seen is None:
            continue
        tile = grid[r - 1][c - 1]
        if tile is None:
            kin = [t for t in pool if (t.builder, t.double) == (seen.builder, seen.double)]
            kin += [
                t for tiles in supply for t in tiles if (t.builder, t.double) == (seen.builder, seen.double)
            ]
            kin.sort(key=lambda t: t.value != seen.value)
            if not kin:
                continue  # a tile of a Builder nobody has: left out (the warning says what was seen)
            tile = kin[0]
            if tile in pool:
                pool.remove(tile)
            else:
                for tiles in supply:
                    if tile in tiles:
                        tiles.remove(tile)
        grid[r - 1][c - 1] = replace(
            tile,
            facing=tile.facing if seen.facing is None else seen.facing,
            value=tile.value if seen.value is None else seen.value,
        )
    return replace(
        state,
        workbench=tuple(tuple(row) for row in grid),
        supply=tuple(tuple(tiles) for tiles in supply),
    )


class _Search:
    """The explanation search of one turn: the seat to act moved the table from the model
    (``tracker.state``, at the turn's start) to ``view``."""

    def __init__(self, tracker: WorkbenchTracker, view: BenchView) -> None:
        self.t = tracker
        self.state = tracker.state
        self.seat = tracker.state.current
        self.view = tracker.asked.settle(view, tracker.state)
        self.who = tracker.names[self.seat]
        self.diff = view.differences(self.state)

    def fits(self, state: State) -> bool:
        return not self.view.differences(state)

    def explain(self) -> Explanation | None:
        """The cheapest explanation, or ``None`` while a building turn has placed nothing."""
        s, diff = self.state, self.diff
        if s.phase == "building":
            return self.building()
        if not diff:
            step = Step("pass", self.seat)
            return Explanation([step], [], _settled(apply(s, step)), quiet=True)
        if diff == {DAMAGE}:
            return self.switch_on()
        searches = (
            (self.one_tool, self.broken_tool, self.two_tools)
            if DAMAGE not in diff
            else (self.switch_on_and_tool,)
        )
        for search in searches:
            found = search()
            if found is not None:
                return found
        return self.unexplained()

    # ------------------------------------------------------------------ building phase
    def building(self) -> Explanation | None:
        s, seat = self.state, self.seat
        if not self.diff:
            return None
        if DAMAGE in self.diff:
            return self.unexplained("the Damage changed during the building phase, when no card is drawn")
        new = [z for z in sorted(self.diff, key=str) if isinstance(z, tuple) and s.tile_at(z) is None]
        if len(new) != len(self.diff) or len(new) > 2:
            return self.unexplained()
        steps = [self.placement(s, seat, sq) for sq in new]
        placed = [p for p in steps if p is not None]
        if len(placed) != len(steps):
            return self.unexplained()
        after, code, message, fix = s, None, "", ""
        for i, step in enumerate(placed):
            probe = _probe(after, seat) if i else after
            try:
                after = _settled(apply(probe, step))
            except IllegalStep as exc:
                code = exc.code
                message, fix = self.placement_break(step, exc)
                after = self.placed_anyway(probe, step)
        if len(placed) == 2:
            first, second = placed
            turn = s.turn + 1
            after = replace(
                after,
                turn=turn,
                current=turn % s.num_players,
                phase="building" if turn < TILES_PER_BUILDER * s.num_players else "configuration",
            )
            code = "SECOND_ACTION"
            message = (
                f"{self.who} placed two tiles in one turn ({first.tile} on {_sq(first.to or (0, 0))} and "
                f"{second.tile} on {_sq(second.to or (0, 0))}): each Builder places one tile per turn"
            )
            fix = f"take {second.tile} back off {_sq(second.to or (0, 0))} until your next turn"
        return self.found(placed, [], after, code, message, fix)

    def placement(self, state: State, seat: int, sq: Square) -> Step | None:
        """The placement that put the tile seen on ``sq``: one of the seat's own tiles that looks
        like it (the one showing the value read), else another seat's."""
        seen = self.view.squares.get(sq)
        if seen is None or seen.facing is None:
            return None
        kind = (seen.builder, seen.double)
        mine = [t for t in state.supply[seat] if (t.builder, t.double) == kind]
        others = [t for tiles in state.supply for t in tiles if (t.builder, t.double) == kind]
        kin = sorted(mine or others, key=lambda t: t.value != seen.value)
        return Step("place", seat, tile=kin[0].id, to=sq, facing=seen.facing) if kin else None

    def placement_break(self, step: Step, exc: IllegalStep) -> tuple[str, str]:
        to = step.to or (0, 0)
        builder = (step.tile or "").rpartition("-")[0]
        what = f"{self.who} placed the {builder} tile on {_sq(to)}"
        if exc.code == "COLUMN_FIVE_IN_BUILDING":
            return (
                f"{what} during the building phase: column 5 is not used until every tile is placed",
                f"move it to an empty square of columns 1-{BUILDING_COLUMNS}",
            )
        if exc.code == "NOT_YOUR_TILE":
            return (
                f"{what}: in the building phase a Builder places only their own tiles",
                f"give the {builder} tile back and place a {self.t.builders[self.seat]} tile instead",
            )
        return f"{what}: {exc.message}", "take the tile back and place it where the rules allow"

    def placed_anyway(self, state: State, step: Step) -> State:
        """The building turn as the table shows it: the turn ends, the tile stays where it was seen."""
        seat = step.player if step.player is not None else state.current
        options = [p for p in legal_steps(_probe(state, seat)) if p.kind == "place"]
        same = [p for p in options if p.tile == step.tile] or options
        if not same:
            return adopt(state, self.view)
        return adopt(_settled(apply(_probe(state, seat), same[0])), self.view)

    # ------------------------------------------------------------------ configuration phase
    def one_tool(self) -> Explanation | None:
        """One legal Tool play; of several that fit (a value at its limit), one whose card can
        still be in a hand."""
        options = [
            (card, step, after)
            for card, step in _board_steps(self.state, self.seat, self.diff)
            if self.fits(after := _effect(self.state, self.seat, card, step))
        ]
        if not options:
            return None
        for card, step, after in options:
            if self.t.can_play(card):
                return self.found([step], [card], after)
        card, step, after = options[0]
        message, fix = self.card_break(step, card)
        return self.found([step], [card], after, "NO_SUCH_CARD", message, fix)

    def broken_tool(self) -> Explanation | None:
        """A Move or a Swap Component that also turned its tile(s): the engine refuses it with
        ``ORIENTATION_CHANGED``; the table is accepted with the tiles as turned."""
        for card, step in _board_steps(self.state, self.seat, self.diff):
            if card not in ("move", "swap_component"):
                continue
            legal = _effect(self.state, self.seat, card, step)
            turned = legal
            for sq in [step.to or (0, 0)] + ([step.at or (0, 0)] if card == "swap_component" else []):
                tile, seen = legal.tile_at(sq), self.view.squares.get(sq)
                if tile is not None and seen is not None and seen.facing not in (None, tile.facing):
                    turned = _with_tile(turned, sq, replace(tile, facing=seen.facing))
            if turned is legal or not self.fits(turned):
                continue
            code = "ORIENTATION_CHANGED"
            if card == "move":  # the engine's own refusal of the Move as it was made
                try:
                    seen_facing = self.view.squares[step.to or (0, 0)]
                    apply(
                        _probe(self.state, self.seat, card),
                        replace(step, facing=seen_facing.facing if seen_facing else None),
                    )
                except IllegalStep as exc:
                    code = exc.code
            message, fix = self.turned(card, step)
            return self.found([step], [card], turned, code, message, fix)
        return None

    def turned(self, card: str, step: Step) -> tuple[str, str]:
        at, to = step.at or (0, 0), step.to or (0, 0)
        tile = self.state.tile_at(at)
        assert tile is not None
        if card == "move":
            return (
                f"{self.who} moved {_tile_name(tile)} from {_sq(at)} to {_sq(to)} and turned it: "
                f"a Move keeps the tile's orientation",
                f"turn {_tile_name(tile)} on {_sq(to)} back to face {EDGES[tile.facing]}",
            )
        other = self.state.tile_at(to)
        assert other is not None
        return (
            f"{self.who} swapped {_tile_name(tile)} on {_sq(at)} with {_tile_name(other)} on {_sq(to)} and "
            f"turned them: Swap Component keeps each tile's orientation",
            f"turn them back: {_tile_name(tile)} (now on {_sq(to)}) to face {EDGES[tile.facing]}, "
            f"{_tile_name(other)} (now on {_sq(at)}) to face {EDGES[other.facing]}",
        )

    def two_tools(self) -> Explanation | None:
        """Two legal Tool plays by the same Builder in one turn (``SECOND_ACTION``)."""
        s, seat = self.state, self.seat
        for card, step in _board_steps(s, seat, self.diff):
            mid = _effect(s, seat, card, step)
            rest = self.view.differences(mid)
            if not rest or len(rest) > len(self.diff):
                continue
            here = replace(mid, current=seat)
            for card2, step2 in _board_steps(here, seat, rest):
                board = _effect(here, seat, card2, step2)
                if self.fits(board):
                    message = (
                        f"{self.who} took two Tool actions in one turn: {play_text(step)}, "
                        f"then {play_text(step2)}; a turn is one action"
                    )
                    fix = f"undo the second: {self.undo(step2, mid)}"
                    after = replace(mid, workbench=board.workbench)
                    return self.found([step, step2], [card, card2], after, "SECOND_ACTION", message, fix)
        return None

    def switch_on(self) -> Explanation:
        """The Damage changed: the Switch On card drawn, if one can have been."""
        s, seat = self.state, self.seat
        shown, was = self.view.damage, shown_damage(s.damage)
        assert shown is not None
        deck = self.t.edition.switch_on_by_players[s.num_players]
        values = sorted({v for v in deck if shown_damage(s.damage + v) == shown}, key=abs)
        first_round = s.turn < (TILES_PER_BUILDER + 1) * s.num_players
        if not values:
            change = shown - was
            why = f"the Damage went from {was} to {shown}: no Switch On card changes it by {change:+d}"
            return self.damage_break(change, "WRONG_SWITCH_ON_VALUE", why)
        if first_round:
            why = (
                f"the Damage went from {was} to {shown} in the first configuration round, when no card is "
                "drawn, so no Switch On card can come up"
            )
            return self.damage_break(values[0], "OUT_OF_SEQUENCE", why)
        left = [v for v in values if self.t.can_play(_switch_card(v))]
        if not left:
            v = values[0]
            why = (
                f"the Damage went from {was} to {shown} by a {v:+d} Switch On card, but the deck's "
                f"{deck.count(v)} such card(s) have been played and none can have come back"
            )
            return self.damage_break(v, "IMPOSSIBLE_OUTCOME", why)
        step = Step("switch_on", seat, value=left[0])
        after = _settled(apply(replace(_probe(s, seat), switch_on=left[0]), step))
        return self.found([step], [_switch_card(left[0])], after)

    def damage_break(self, value: int, code: str, why: str) -> Explanation:
        """A Damage change no card can have made: accepted as a Switch On card of that change."""
        s, seat = self.state, self.seat
        step = Step("switch_on", seat, value=value)
        after = _settled(apply(replace(_probe(s, seat), switch_on=value), step))
        fix = f"set the Damage back to {shown_damage(s.damage)}"
        return self.found([step], [], after, code, f"{self.who}'s turn: {why}", fix)

    def switch_on_and_tool(self) -> Explanation | None:
        """The Damage and the Workbench both changed: a Switch On card drawn ends the turn, so
        a Tool card played with it is a second action."""
        sw = self.switch_on()
        if sw.code is not None:
            return None
        here = replace(sw.after, current=self.seat)
        rest = self.view.differences(here) - {DAMAGE}
        for card, step in _board_steps(here, self.seat, rest):
            board = _effect(here, self.seat, card, step)
            if self.fits(replace(sw.after, workbench=board.workbench)):
                value = sw.steps[0].value or 0
                message = (
                    f"{self.who} took two actions in one turn: a Switch On card ({value:+d}) was drawn, "
                    f"which ends the turn, and {play_text(step)}"
                )
                fix = f"undo the Tool card: {self.undo(step, sw.after)}"
                after = replace(sw.after, workbench=board.workbench)
                return self.found([*sw.steps, step], [*sw.cards, card], after, "SECOND_ACTION", message, fix)
        return None

    def unexplained(self, why: str = "") -> Explanation:
        """Nothing explains the change: a person is asked, and the table is taken as seen."""
        changed = sorted(_sq(z) if isinstance(z, tuple) else "the Damage" for z in self.diff)
        message = why or f"no legal step explains the change of {', '.join(changed)}"
        s, seat = self.state, self.seat
        change = None if self.view.damage is None else self.view.damage - shown_damage(s.damage)
        if (
            s.phase == "configuration" and change
        ):  # the Damage as seen, through the engine: it may end the game
            step = Step("switch_on", seat, value=change)
            after = adopt(_settled(apply(replace(_probe(s, seat), switch_on=change), step)), self.view)
        elif s.phase == "configuration":
            step = Step("pass", seat)
            after = adopt(_settled(apply(s, step)), self.view)
        else:
            options = [p for p in legal_steps(_probe(s, seat)) if p.kind == "place"]
            step = options[0] if options else Step("pass", seat)
            after = self.placed_anyway(s, step) if options else adopt(s, self.view)
        if self.view.damage is not None and self.view.damage != shown_damage(after.damage):
            after = replace(after, damage=self.view.damage)
        fix = "check the table, and correct the referee if it misread it"
        return Explanation([step], [], after, None, f"{self.who}'s turn: {message}", fix, uncertain=True)

    # ------------------------------------------------------------------ wording
    def card_break(self, step: Step, card: str) -> tuple[str, str]:
        n = self.t.played[card] + 1
        return (
            f"{self.who} played a Tool card no hand can hold ({play_text(step)}): it would be "
            f"{CARD_TITLES[card]} card number {n} of the {COPIES[card]} in the box, and none can have come "
            "back (no turn could have been a Redraw a Tool, and the deck has not run out)",
            f"undo it: {self.undo(step, self.state)}",
        )

    def undo(self, step: Step, before: State) -> str:
        at, to = step.at or (0, 0), step.to or (0, 0)
        tile = before.tile_at(at)
        if tile is None:
            return "put the table back as it was"
        card = step.card or ""
        if card == "move":
            return f"put {_tile_name(tile)} back from {_sq(to)} on {_sq(at)}"
        if card == "rotate":
            return f"turn {_tile_name(tile)} on {_sq(at)} back to face {EDGES[tile.facing]}"
        if card in ("swap_component", "swap_points"):
            return f"swap {_sq(at)} and {_sq(to)} back"
        return f"set the dial of {_tile_name(tile)} on {_sq(at)} back to {tile.value}"

    def found(
        self,
        steps: list[Step],
        cards: list[str],
        after: State,
        code: str | None = None,
        message: str = "",
        fix: str = "",
    ) -> Explanation:
        """An explanation; a broken rule is named with its rulings, and is only *uncertain* when
        a changed square was read with low confidence."""
        if code:
            rulings = ", ".join(str(r) for r in rule_of(code).rulings)
            message = f"{message} (ruling {rulings}, {code})"
        return Explanation(
            steps,
            cards,
            after,
            code,
            message,
            fix,
            uncertain=bool(code) and bool(self.diff & self.view.unsure),
        )


def _with_tile(state: State, sq: Square, tile: Tile | None) -> State:
    grid = [list(row) for row in state.workbench]
    grid[sq[0] - 1][sq[1] - 1] = tile
    return replace(state, workbench=tuple(tuple(row) for row in grid))


def _switch_card(value: int) -> str:
    return f"switch_on{value:+d}"


def _zones(view: BenchView) -> dict[Zone, object]:
    out: dict[Zone, object] = {sq: seen for sq, seen in view.squares.items()}
    if view.damage is not None:
        out[DAMAGE] = view.damage
    return out


def _merged(at_signal: BenchView, now: BenchView, doubt: set[Zone]) -> BenchView:
    """The view at the signal, with each zone in doubt as it reads now (if it reads clearly)."""
    zones = {z: v for z, v in _zones(at_signal).items() if z not in doubt}
    unsure = {z for z in at_signal.unsure if z not in doubt}
    stale: set[Zone] = set()
    current = _zones(now)
    for z in doubt:
        if z in current and z not in now.stale:
            zones[z] = current[z]
            if z in now.unsure:
                unsure.add(z)
        elif z in current:
            zones[z] = current[z]
            stale.add(z)
    damage = zones.pop(DAMAGE, None)
    squares = {z: v for z, v in zones.items() if isinstance(z, tuple)}
    return BenchView(squares, damage, frozenset(unsure), frozenset(stale), at_signal.discard)  # type: ignore[arg-type]


def _model_json(state: State) -> dict[str, Any]:
    """What the referee knows of a table, for its record: the Workbench, the tiles still to
    place, the Damage and whose turn it is (hands, deck and discard pile are hidden). After a
    break this may be a table the rules could not reach, so it is not an engine state."""
    return {
        "workbench": [[None if t is None else t.to_json() for t in row] for row in state.workbench],
        "supply": [[t.to_json() for t in tiles] for tiles in state.supply],
        "damage": state.damage,
        "phase": state.phase,
        "current": state.current,
        "turn": state.turn,
        "requirement": state.requirement,
        "chance": [list(e) for e in state.chance],
    }


def _model_from_json(base: State, raw: Any) -> State:
    """The referee's table from its record (:func:`_model_json`) on the game's fresh ``base``."""
    if not isinstance(raw, dict) or raw.get("phase") not in PHASES:
        raise StateError("state: expected the referee's table with a known phase")
    n = base.num_players
    workbench = tuple(
        tuple(None if t is None else tile_from_json(t, f"workbench[{r}][{c}]") for c, t in enumerate(row))
        for r, row in enumerate(raw["workbench"])
    )
    if len(workbench) != n or any(len(row) != COLUMNS for row in workbench):
        raise StateError(f"workbench: expected {n} rows of {COLUMNS} squares")
    supply = tuple(
        tuple(tile_from_json(t, f"supply[{k}][{i}]") for i, t in enumerate(tiles))
        for k, tiles in enumerate(raw["supply"])
    )
    numbers = {key: raw[key] for key in ("damage", "current", "turn")}
    if any(type(v) is not int for v in numbers.values()) or not 0 <= numbers["current"] < n:
        raise StateError(f"state: expected integers for {sorted(numbers)}")
    return replace(
        base,
        workbench=workbench,
        supply=supply,
        damage=numbers["damage"],
        phase=raw["phase"],
        current=numbers["current"],
        turn=numbers["turn"],
        requirement=raw["requirement"],
        chance=tuple(tuple(e) for e in raw["chance"]),
    )


class Asked:
    """Squares the referee could not take as read (a tile of a Builder nobody has: a misreading?)
    after asking a person: while a square reads the same, it is taken as the referee's table has
    it, so one doubtful reading is asked about once, not every turn after."""

    def __init__(self) -> None:
        self.readings: dict[Square, TileSeen | None] = {}

    def settle(self, view: BenchView, state: State) -> BenchView:
        """``view`` with each square still reading as it was when asked taken as ``state`` has it."""
        squares = dict(view.squares)
        for sq, seen in list(self.readings.items()):
            if sq in squares and squares[sq] != seen:
                del self.readings[sq]  # it reads otherwise now: new evidence
            elif sq in squares:
                squares[sq] = seen_of(state.tile_at(sq))
        return replace(view, squares=squares)

    def remember(self, view: BenchView, accepted: State) -> None:
        """After an unexplained turn: the squares the accepted table still disagrees with."""
        for sq, seen in view.squares.items():
            tile = accepted.tile_at(sq)
            if (seen is None) != (tile is None) or (seen is not None and not seen.fits(tile)):
                self.readings[sq] = seen


# =========================================================================== the tracker


@dataclass(frozen=True, slots=True)
class WorkbenchSettings:
    """Noise handling: as the Gizmos tracker's (docs/observation.md)."""

    frames: int = 3  # a square counts once it reads the same this many frames in a row
    threshold: float = 0.6  # readings below this confidence are unknown
    sure: float = 0.85  # no rule break is reported on a reading below this
    eot_wait: int = 12  # frames to wait for a complete, sure view after an end-of-turn signal


@dataclass(slots=True)
class WorkbenchUpdate:
    """What one input changed: the accepted steps, new warnings, and notes."""

    steps: list[Step] = field(default_factory=list)
    warnings: list[RefereeWarning] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class WorkbenchTracker:
    """Referees one Contrivance game from Workbench observations and end-of-turn signals.

    ``builders[k]`` is seat *k*'s Builder (drawn at setup; seat *k* owns row *k* + 1). The
    Contrivance's requirement is revealed at the end (:meth:`reveal`: a person reads the tile).
    """

    def __init__(
        self,
        names: Sequence[str],
        builders: Sequence[str],
        settings: WorkbenchSettings | None = None,
        record: GameRecord | None = None,
        edition: Edition = DEFAULT_EDITION,
    ) -> None:
        if len(names) != len(builders):
            raise TrackerError("names and builders: one Builder per seat")
        unknown = [b for b in builders if b not in BUILDERS]
        if unknown or len(set(builders)) != len(builders):
            raise TrackerError(
                f"builders: expected different Builders of {list(BUILDERS)}, got {list(builders)}"
            )
        self._start(names, builders, settings, record, edition)
        self.record.append(
            "setup",
            {
                "game": "contrivance",
                "names": self.names,
                "builders": self.builders,
                "edition": edition.to_json(),
            },
        )

    def _start(
        self,
        names: Sequence[str],
        builders: Sequence[str],
        settings: WorkbenchSettings | None,
        record: GameRecord | None,
        edition: Edition,
    ) -> None:
        self.names = list(names)
        self.builders = list(builders)
        self.settings = settings or WorkbenchSettings()
        self.edition = edition
        self.record = record if record is not None else GameRecord(":memory:")
        state = new_game(len(names), edition)
        for b in builders:
            state = apply(state, Step("builder", builder=b))
        self.state: State = _settled(resolve_chance(state, random.Random(0)))  # the deal is hidden
        self.stabilizer = BenchStabilizer(
            len(names), self.settings.frames, self.settings.threshold, self.settings.sure
        )
        self.warnings: list[RefereeWarning] = []
        self.log: list[LogLine] = []
        self.played: Counter[str] = Counter()  # Tool and Switch On cards seen played
        self.redraws = (
            0  # turns that may have been a Redraw a Tool (nothing changed, the pile's top allows it)
        )
        self._view = BenchView()
        self._pending: int | None = None  # frames since an end-of-turn signal not yet concluded
        self._signalled: BenchView | None = None  # the view when the end of the turn was signalled
        self._doubt: set[Zone] = set()  # its zones not clear then, read again from later frames
        self._clear: BenchView | None = None  # the latest clear view since the signal
        self.asked = Asked()  # readings a person was asked about and the table kept

    @classmethod
    def at(
        cls,
        names: Sequence[str],
        state: State,
        settings: WorkbenchSettings | None = None,
        record: GameRecord | None = None,
    ) -> WorkbenchTracker:
        """A referee that starts watching a game already under way: the table as ``state``
        has it (its hands, deck and discard pile are not what the referee knows, and are dropped)."""
        builders = [b for b in state.builders if b is not None]
        tracker = cls(names, builders, settings, record)
        tracker.state = _settled(state)
        tracker.record.append("state", {"state": _model_json(tracker.state), "reason": "joined"})
        return tracker

    @classmethod
    def open(cls, path: str | Path, settings: WorkbenchSettings | None = None) -> WorkbenchTracker:
        """Resume a refereed game from its record after a crash or a restart: the table, the
        Tool cards counted, the warnings and the move log stand as the last accepted turn left
        them (a turn not yet explained is explained again from the next frames)."""
        if str(path) != ":memory:" and not Path(path).exists():
            raise RecordError(f"{path}: no such game record")
        record = GameRecord(path)
        entries = list(record.entries())
        if not entries or entries[0].kind != "setup" or entries[0].payload.get("game") != "contrivance":
            raise RecordError(f"{path}: not a Contrivance game record")
        setup = entries[0].payload
        edition = edition_from_json(setup["edition"])
        tracker = cls.__new__(cls)
        tracker._start(setup["names"], setup["builders"], settings, record, edition)
        try:
            for entry in entries[1:]:
                tracker._replay(entry.kind, entry.payload, entry.who)
        except (KeyError, TypeError, ValueError, ContrivanceError) as exc:
            raise RecordError(f"{path}: a corrupt entry ({exc})") from exc
        return tracker

    def _replay(self, kind: str, payload: dict[str, Any], who: str) -> None:
        if kind == "state":
            self.state = _model_from_json(self.state, payload["state"])
            self.played = Counter(payload.get("played", {}))
            self.redraws = int(payload.get("redraws", 0))
        elif kind == "warning":
            self.warnings.append(RefereeWarning.from_json(payload))
        elif kind == "step":
            line = LogLine(**payload["line"])
            self.log.append(line)
            if line.step["kind"] == "reveal":
                self.state = apply(self.state, CONTRIVANCE.step_from_json(line.step))

    # ------------------------------------------------------------------ inputs
    def observe(self, obs: WorkbenchObservation) -> WorkbenchUpdate:
        """One observation (frame); a turn whose end was signalled is explained once its view is clear."""
        self._view = self.stabilizer.push(obs)
        if self._pending is None:
            return WorkbenchUpdate()
        self._pending += 1
        return self._conclude()

    def end_turn(self, signal: EndOfTurn) -> WorkbenchUpdate:
        """The turn ended: explain it now if the view is clear, else within the next frames."""
        self.record.append("event", signal.to_json())
        earlier = WorkbenchUpdate()
        if self._pending is not None:  # the turn before is still waiting for a clear view: it ends now
            self._pending = self.settings.eot_wait
            earlier = self._conclude()
        self._pending = 0
        update = self._conclude()
        return WorkbenchUpdate(
            earlier.steps + update.steps, earlier.warnings + update.warnings, earlier.notes + update.notes
        )

    def reveal(self, requirement: int, who: str = "referee") -> WorkbenchUpdate:
        """The Contrivance tile revealed at the end: its requirement, read by a person."""
        step = Step("reveal", value=requirement)
        try:
            after = apply(self.state, step)
        except IllegalStep as exc:
            raise TrackerError(f"reveal: {exc.message}") from exc
        line = self._line(step, who, self.state)
        self.record.append("step", {"line": line.to_json(), "forced": False}, who=who)
        self.state = after
        self.log.append(line)
        return WorkbenchUpdate(steps=[step])

    # ------------------------------------------------------------------ the turn
    def _ready(self, view: BenchView) -> bool:
        """A view to explain a turn by: every square and the Damage known, none stale."""
        return view.complete(self.state.num_players) and not view.stale

    def _conclude(self) -> WorkbenchUpdate:
        """Explain the turn whose end was signalled, by the table as it stood at the signal.
        Zones in doubt then (not seen lately, or a new reading not yet confirmed) are taken from
        the following frames once they read clearly; every other zone stays as it was at the
        signal, so the next Builder's hands never leak into this turn. A break that rests on a
        low-confidence reading waits a few frames for a sure one; then it is reported as
        uncertain."""
        assert self._pending is not None
        update = WorkbenchUpdate()
        if self.state.phase not in ("building", "configuration"):
            self._pending = self._signalled = self._clear = None
            update.notes.append("the game is over: nothing more is played")
            return update
        if self._signalled is None:
            self._signalled = self._view
            every: list[Zone] = [*_all_squares(self.state.num_players), DAMAGE]
            self._doubt = {z for z in every if z not in _zones(self._view)} | set(self._view.stale)
        view, final = (
            _merged(self._signalled, self._view, self._doubt),
            self._pending >= self.settings.eot_wait,
        )
        if self._ready(view) and self._clear is not None and view.key() != self._clear.key():
            view, final = self._clear, True  # the table moved on since its clear view: that decides
        elif self._ready(view):
            self._clear = view
        elif not final:
            return update
        else:  # the first clear view since the signal, else the best guess
            view = self._clear or self._filled(view, update)
        found = _Search(self, view).explain()
        if found is not None and found.uncertain and found.code and not final:
            self._doubt |= view.differences(self.state) & view.unsure  # read them again
            return update
        self._pending = self._signalled = self._clear = None
        if found is None:
            update.notes.append(f"{self.names[self.state.current]} has placed no tile yet: still their turn")
            return update
        self._accept(found, view, update)
        if found.uncertain and found.code is None:
            self.asked.remember(self.asked.settle(view, self.state), self.state)
        return update

    def _filled(self, view: BenchView, update: WorkbenchUpdate) -> BenchView:
        """The view once waiting is over: a square whose new reading was never confirmed takes
        the value it read most often lately (ties: the latest); a square not read at all is
        assumed unchanged. Both are marked unsure, so no rule break rests on them."""
        known = view_of(self.state)
        squares = dict(view.squares)
        unsure = set(view.unsure)
        guessed = unread = 0
        for sq in _all_squares(self.state.num_players):
            if sq in view.squares and sq not in view.stale:
                continue
            guess = self.stabilizer.guess(sq)
            if guess is not None:
                squares[sq] = guess[0]  # type: ignore[assignment]
                guessed += 1
            else:
                squares[sq] = known.squares[sq]
                unread += 1
            unsure.add(sq)
        if guessed or unread:
            update.notes.append(
                f"at the end of the turn {guessed} square(s) were read without confirmation and "
                f"{unread} not at all (assumed unchanged)"
            )
        damage = view.damage if view.damage is not None else known.damage
        return BenchView(squares, damage, frozenset(unsure), discard=view.discard)

    def _accept(self, found: Explanation, view: BenchView, update: WorkbenchUpdate) -> None:
        """Record the turn (one transaction), then take it: memory never runs ahead of the record."""
        before = self.state
        seat = before.current
        lines = [self._line(step, self.names[seat], before) for step in found.steps]
        warning = None
        if found.code or found.uncertain:
            warning = RefereeWarning(
                id=len(self.warnings) + 1,
                kind="uncertain" if found.uncertain else "violation",
                turn=before.turn + 1,
                round=before.round,
                player=seat,
                code=found.code,
                rulings=rule_of(found.code).rulings if found.code else (),
                message=found.message,
                remedy=found.remedy,
                time=time.time(),
            )
        played = self.played + Counter(found.cards)
        top = view.discard if DISCARD not in view.unsure else None
        maybe_redraw = found.quiet and before.phase == "configuration" and top in (None, "redraw_a_tool")
        redraws = self.redraws + maybe_redraw
        with self.record.transaction():
            self.record.append("observation", {"squares": len(view.squares), "damage": view.damage})
            for line in lines:
                self.record.append("step", {"line": line.to_json(), "forced": found.code is not None})
            if warning is not None:
                self.record.append("warning", warning.to_json())
            self.record.append(
                "state",
                {
                    "state": found.after.to_json(),
                    "reason": "turn",
                    "played": dict(played),
                    "redraws": redraws,
                },
            )
        self.log += lines
        update.steps += found.steps
        if warning is not None:
            self.warnings.append(warning)
            update.warnings.append(warning)
        self.state, self.played, self.redraws = found.after, played, redraws

    def _line(self, step: Step, who: str, before: State) -> LogLine:
        """The move log's line for a step taken from the table ``before``."""
        text = describe(step, who) if step.player is not None else describe(step)
        return LogLine(
            turn=before.turn + 1, round=before.round, player=step.player, text=text, step=step.to_json()
        )

    # ------------------------------------------------------------------ hidden cards
    def can_play(self, card: str) -> bool:
        """Whether one more ``card`` can have been played: its copies in the deck, plus one per
        configuration turn that changed nothing (each could have been a Redraw a Tool bringing it
        back), and any number once the deck can have run out and the discard pile been reshuffled."""
        s = self.state
        n = s.num_players
        switch = self.edition.switch_on_by_players[n]
        copies = COPIES.get(card)
        if copies is None:
            copies = sum(1 for v in switch if _switch_card(v) == card)
        config_turns = max(0, s.turn - TILES_PER_BUILDER * n)
        deck = sum(COPIES.values()) + len(switch) - HAND_LIMIT * n  # what is left after the deal
        if config_turns + 1 >= deck:  # each turn draws at most one card more than it discards
            return True
        back = self.redraws if card in COPIES else 0  # Redraw a Tool never takes a Switch On card
        return self.played[card] < copies + back

    # ------------------------------------------------------------------ results
    def scores(self) -> list[dict[str, Any]]:
        """The ranking (the engine's), each row with the seat's name."""
        return [row | {"name": self.names[row["seat"]]} for row in CONTRIVANCE.score_table(self.state)]

    def score_report(self) -> str:
        """The engine's scoring: every burn-out and bonus with its reason."""
        return CONTRIVANCE.score_report(self.state)

    def snapshot(self) -> dict[str, Any]:
        return {
            "names": self.names,
            "state": self.state.to_json(),
            "warnings": [w.to_json() for w in self.warnings],
            "log": [line.to_json() for line in self.log],
            "played": dict(sorted(self.played.items())),
        }


__all__ = [
    "BOARD_CARDS",
    "REFEREE_RULES",
    "BenchStabilizer",
    "BenchView",
    "Explanation",
    "TileSeen",
    "WorkbenchSettings",
    "WorkbenchTracker",
    "WorkbenchUpdate",
    "adopt",
    "rule_of",
    "view_of",
]
