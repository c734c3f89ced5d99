"""The rules: which steps are legal, and what a step does to the table.

Pure functions of immutable states, written as in Gizmos. ``legal_steps(state)`` lists every
legal next step; ``apply(state, step)`` returns the new state or raises :class:`IllegalStep` with
the code of the rule broken (and the rulings it enforces). Random events wait in
``state.chance`` until a chance step resolves them: pass a :class:`random.Random` to ``apply``
to resolve them at once (simulation), or supply them (the referee, from what the table showed).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from typing import NoReturn

from referee.contrivance.data import (
    BUILDERS,
    BUILDING_COLUMNS,
    COLUMNS,
    DESTROYED_AT,
    EDGES,
    HAND_LIMIT,
    MAX_VALUE,
    MIN_VALUE,
    POINTS,
    REPAIRED_AT,
    TILES_PER_BUILDER,
    switch_on_card,
    switch_on_value,
)
from referee.contrivance.errors import IllegalStep
from referee.contrivance.state import ChanceEvent, Segment, Square, State, Tile
from referee.contrivance.steps import Step, check_shape


def _sorted_add(cards: tuple[str, ...], *more: str) -> tuple[str, ...]:
    return tuple(sorted((*cards, *more)))


def _remove(cards: tuple[str, ...], card: str) -> tuple[str, ...]:
    i = cards.index(card)
    return cards[:i] + cards[i + 1 :]


def _sq(square: Square) -> str:
    return f"row {square[0]}, column {square[1]}"


# =========================================================================== legal steps


def legal_steps(state: State) -> list[Step]:
    """Every legal next step. At a chance node: every possible outcome (:func:`chance_outcomes`)."""
    if state.chance:
        return [s for s, _ in chance_outcomes(state)]
    if state.phase in ("scoring", "over"):
        return []
    seat = state.current
    if state.switch_on is not None:
        return [Step("switch_on", seat, value=state.switch_on)]
    if state.phase == "building":
        empties = [
            (r + 1, c + 1)
            for r, row in enumerate(state.workbench)
            for c in range(BUILDING_COLUMNS)
            if row[c] is None
        ]
        return [
            Step("place", seat, tile=t.id, to=sq, facing=f)
            for t in state.supply[seat]
            for sq in empties
            for f in range(4)
        ]
    hand = state.hands[seat]
    kinds = sorted(set(hand))
    out = [Step("pass", seat)]
    out += [Step("redraw", seat, card=c) for c in kinds]
    if len(hand) == HAND_LIMIT:
        for card in kinds:
            out += _tool_steps(state, seat, card)
    return out


def _tool_steps(state: State, seat: int, card: str) -> list[Step]:
    """Every legal play of ``card`` (ruling 14): one step per distinct set of targets."""
    tiles = list(state.squares())
    if card == "move":
        empties = [
            (r + 1, c + 1) for r, row in enumerate(state.workbench) for c in range(COLUMNS) if row[c] is None
        ]
        return [Step("play", seat, card, at=sq, to=e, facing=t.facing) for sq, t in tiles for e in empties]
    if card == "rotate":
        return [
            Step("play", seat, card, at=sq, facing=f) for sq, t in tiles for f in range(4) if f != t.facing
        ]
    if card in ("swap_component", "swap_points"):
        return [
            Step("play", seat, card, at=a, to=b) for i, (a, _) in enumerate(tiles) for b, _ in tiles[i + 1 :]
        ]
    if card in POINTS:
        return [Step("play", seat, card, at=sq) for sq, _ in tiles]
    if card == "take_a_tool":
        return [Step("play", seat, card, target=k) for k, h in enumerate(state.hands) if k != seat and h]
    # redraw_a_tool
    return [
        Step("play", seat, card, retrieve=c) for c in sorted(set(state.discard)) if switch_on_value(c) is None
    ]


def chance_outcomes(state: State) -> list[tuple[Step, float]]:
    """The possible outcomes of the next chance event, with their probabilities."""
    if not state.chance:
        return []
    e = state.chance[0]
    kind = e[0]
    if kind == "builder":
        left = [b for b in BUILDERS if b not in state.builders]
        return [(Step("builder", builder=b), 1 / len(left)) for b in left]
    if kind == "reveal":
        pool = state.contrivances
        return [(Step("reveal", value=v), n / len(pool)) for v, n in sorted(Counter(pool).items())]
    cards = state.hands[e[2]] if kind == "take" else state.deck[0][0]
    counts = Counter(cards)
    step_kind = "take" if kind == "take" else "draw"
    return [(Step(step_kind, card=c), n / len(cards)) for c, n in sorted(counts.items())]


# =========================================================================== apply


class _Table:
    """A mutable scratch copy of a state, used inside :func:`apply` only."""

    __slots__ = (
        "box",
        "builders",
        "chance",
        "contrivances",
        "current",
        "damage",
        "deck",
        "discard",
        "hands",
        "phase",
        "requirement",
        "supply",
        "switch_on",
        "tile_box",
        "turn",
        "workbench",
    )

    def __init__(self, s: State) -> None:
        self.builders = list(s.builders)
        self.supply = list(s.supply)
        self.workbench = [list(row) for row in s.workbench]
        self.hands = list(s.hands)
        self.deck = list(s.deck)
        self.discard = s.discard
        self.box = s.box
        self.contrivances = s.contrivances
        self.tile_box = s.tile_box
        self.requirement = s.requirement
        self.damage = s.damage
        self.phase = s.phase
        self.current = s.current
        self.turn = s.turn
        self.switch_on = s.switch_on
        self.chance = list(s.chance)

    def freeze(self) -> State:
        return State(
            builders=tuple(self.builders),
            supply=tuple(self.supply),
            workbench=tuple(tuple(row) for row in self.workbench),
            hands=tuple(self.hands),
            deck=tuple(self.deck),
            discard=self.discard,
            box=self.box,
            contrivances=self.contrivances,
            tile_box=self.tile_box,
            requirement=self.requirement,
            damage=self.damage,
            phase=self.phase,
            current=self.current,
            turn=self.turn,
            switch_on=self.switch_on,
            chance=tuple(self.chance),
        )

    @property
    def players(self) -> int:
        return len(self.builders)

    def get(self, sq: Square) -> Tile | None:
        return self.workbench[sq[0] - 1][sq[1] - 1]

    def put(self, sq: Square, tile: Tile | None) -> None:
        self.workbench[sq[0] - 1][sq[1] - 1] = tile

    def end_turn(self) -> None:
        """The next Builder's turn; in the configuration phase from round 2 on it starts by
        drawing up to 4, one card at a time (ruling 11)."""
        n = self.players
        self.turn += 1
        self.current = (self.current + 1) % n
        building = TILES_PER_BUILDER * n
        if self.turn == building:
            self.phase = "configuration"
        if self.turn >= building + n and len(self.hands[self.current]) < HAND_LIMIT:
            self.chance.append(("draw", self.current))

    def draw_top(self, card: str, deal: bool) -> None:
        """Take ``card`` from the top segment. A deal comes from under the set-aside pile (ruling
        9), so it leaves the segment's count alone; a segment used up passes its undrawn
        candidates down to the next one."""
        cands, count = self.deck[0]
        cands = _remove(cands, card)
        if deal:
            self.deck[0] = (cands, count)
            return
        if count > 1:
            self.deck[0] = (cands, count - 1)
            return
        rest: list[Segment] = self.deck[1:]
        if cands:
            below, n = rest[0]
            rest[0] = (_sorted_add(below, *cands), n + len(cands))
        self.deck = rest

    def settle(self) -> None:
        """Before a card must be drawn from an empty deck, the discard pile is shuffled into a new
        deck (ruling 13); with no card anywhere, the draw does not happen."""
        while self.chance and self.chance[0][0] in ("draw", "redraw") and not self.deck:
            if self.discard:
                self.deck = [(self.discard, len(self.discard))]
                self.discard = ()
                return
            event = self.chance.pop(0)
            if event[0] == "redraw":
                self.end_turn()

    def end_game_if_over(self) -> None:
        if not REPAIRED_AT < self.damage < DESTROYED_AT:
            self.phase = "scoring"  # ruling 17: no further action; reveal and score
            self.chance = [("reveal",)]


def apply(state: State, step: Step, rng: random.Random | None = None) -> State:
    """The state after ``step``; raises :class:`IllegalStep` if it breaks a rule, and
    :class:`~referee.contrivance.errors.InvalidStep` if the step is malformed.

    With ``rng``, the chance events the step causes are resolved at once from that source.
    """
    check_shape(step, state.num_players)
    t = _Table(state)
    try:
        if state.phase in ("scoring", "over") and not step.is_chance:
            _fail("GAME_OVER", "the game is over; nothing more can be played (ruling 17)")
        if state.chance:
            if not step.is_chance:
                _fail(
                    "OUT_OF_SEQUENCE", f"a random outcome is awaited first ({_event_text(state.chance[0])})"
                )
            _resolve(t, step)
        elif step.is_chance:
            _fail("OUT_OF_SEQUENCE", f"no random outcome is awaited; '{step.kind}' does not fit now")
        else:
            _player_step(state, t, step)
    except IllegalStep as exc:
        exc.player = step.player
        raise
    t.settle()
    if rng is not None:
        while t.chance:
            _resolve(t, sample(t, rng))
            t.settle()
    return t.freeze()


def resolve_chance(state: State, rng: random.Random) -> State:
    """Resolve every queued chance event from a random source (e.g. after :func:`new_game`)."""
    t = _Table(state)
    t.settle()
    while t.chance:
        _resolve(t, sample(t, rng))
        t.settle()
    return t.freeze()


def sample(state: State | _Table, rng: random.Random) -> Step:
    """One outcome of the next chance event, drawn from ``rng`` with the true probabilities."""
    e = state.chance[0]
    if e[0] == "builder":
        left = [b for b in BUILDERS if b not in state.builders]
        return Step("builder", builder=left[rng.randrange(len(left))])
    if e[0] == "reveal":
        return Step("reveal", value=state.contrivances[rng.randrange(len(state.contrivances))])
    if e[0] == "take":
        hand = state.hands[e[2]]
        return Step("take", card=hand[rng.randrange(len(hand))])
    cands = state.deck[0][0]
    return Step("draw", card=cands[rng.randrange(len(cands))])


def _fail(code: str, message: str) -> NoReturn:
    raise IllegalStep(code, message)


def _event_text(e: ChanceEvent) -> str:
    kind = e[0]
    if kind == "reveal":
        return "the revealed Contrivance's requirement"
    seat = e[1]
    if kind == "builder":
        return f"the Builder seat {seat} draws"
    if kind == "deal":
        return f"a card dealt to seat {seat}"
    if kind == "redraw":
        return f"the card seat {seat}'s redraw brings"
    if kind == "take":
        return f"the card seat {seat} takes from seat {e[2]}"
    return f"the card seat {seat} draws"


# ---------------------------------------------------------------- chance


def _resolve(t: _Table, step: Step) -> None:
    e = t.chance[0]
    kind = e[0]
    expected = {"builder": "builder", "reveal": "reveal", "take": "take"}.get(kind, "draw")
    if step.kind != expected:
        _fail("OUT_OF_SEQUENCE", f"awaiting {_event_text(e)}: a '{expected}' step, not '{step.kind}'")
    t.chance.pop(0)
    if kind == "builder":
        if step.builder in t.builders:
            _fail("IMPOSSIBLE_OUTCOME", f"the {step.builder} is already another seat's Builder (ruling 2)")
        seat = e[1]
        t.builders[seat] = step.builder
        t.supply[seat] = tuple(tile for tile in t.tile_box if tile.builder == step.builder)
        t.tile_box = tuple(tile for tile in t.tile_box if tile.builder != step.builder)
        return
    if kind == "reveal":
        if step.value not in t.contrivances:
            _fail(
                "IMPOSSIBLE_OUTCOME",
                f"no Contrivance tile requires {step.value} (they require {list(t.contrivances)}; ruling 7)",
            )
        t.requirement = step.value
        t.phase = "over"
        return
    card = step.card or ""
    seat = e[1]
    if kind == "take":
        victim = e[2]
        if card not in t.hands[victim]:
            _fail("IMPOSSIBLE_OUTCOME", f"seat {victim}'s hand holds no {card} card")
        t.hands[victim] = _remove(t.hands[victim], card)
        t.hands[seat] = _sorted_add(t.hands[seat], card)
        t.end_turn()
        return
    cands, count = t.deck[0]
    if card not in cands:
        why = (
            f"no Switch On card can come up in the first {count} draws (ruling 9)"
            if switch_on_value(card) is not None and len(t.deck) > 1
            else "no such card is left in the deck (rulings 5, 6, 13)"
        )
        _fail("IMPOSSIBLE_OUTCOME", f"{card} cannot come off the deck now: {why}")
    if kind == "deal" and len(cands) <= count:
        _fail("IMPOSSIBLE_OUTCOME", "no card is left to deal under the set-aside pile (ruling 9)")
    t.draw_top(card, deal=kind == "deal")
    value = switch_on_value(card)
    if value is not None:
        t.switch_on = value  # ruling 11: played at once, as the Builder's next step
        return
    t.hands[seat] = _sorted_add(t.hands[seat], card)
    if kind == "redraw":
        t.end_turn()
    elif kind == "draw" and len(t.hands[seat]) < HAND_LIMIT:
        t.chance.insert(0, ("draw", seat))


# ---------------------------------------------------------------- player steps


def _player_step(state: State, t: _Table, step: Step) -> None:
    seat = step.player if step.player is not None else state.current
    if seat != state.current:
        _fail("NOT_YOUR_TURN", f"it is seat {state.current}'s turn, not seat {seat}'s")
    k = step.kind
    if state.switch_on is not None:
        if k != "switch_on":
            _fail(
                "SWITCH_ON_FIRST",
                f"a Switch On card ({state.switch_on:+d}) was drawn: it is played at once and ends the turn",
            )
        if step.value != state.switch_on:
            _fail(
                "WRONG_SWITCH_ON_VALUE",
                f"the Switch On card drawn is {state.switch_on:+d}, not {step.value:+d}",
            )
        t.damage = state.damage + state.switch_on
        t.discard = _sorted_add(state.discard, switch_on_card(state.switch_on))
        t.switch_on = None
        t.end_game_if_over()
        if t.phase == "configuration":
            t.end_turn()
        return
    if k == "switch_on":
        _fail("OUT_OF_SEQUENCE", "no Switch On card has been drawn")
    if state.phase == "building":
        if k != "place":
            _fail("OUT_OF_PHASE", "the building phase: place one of your tiles; Tool cards are not used yet")
        _place(state, t, step, seat)
        t.end_turn()
        return
    if k == "place":
        _fail("OUT_OF_PHASE", "every tile is placed: the configuration phase uses Tool cards")
    hand = state.hands[seat]
    if k == "pass":
        t.end_turn()
        return
    card = step.card or ""
    if card not in hand:
        _fail("NO_SUCH_CARD", f"your hand holds no {card} card (it holds {list(hand)})")
    t.hands[seat] = _remove(hand, card)
    if k == "redraw":
        t.discard = _sorted_add(state.discard, card)
        t.chance.append(("redraw", seat))
        return
    if len(hand) != HAND_LIMIT:
        _fail("HAND_NOT_FULL", f"you hold {len(hand)} cards: a Tool card is played only with {HAND_LIMIT}")
    _play(state, t, step, seat, card)
    t.discard = _sorted_add(t.discard, card)  # after its effect: Redraw a Tool cannot take itself back
    if card != "take_a_tool":
        t.end_turn()


def _active(state: State, sq: Square, what: str) -> None:
    if sq[0] > state.num_players:
        _fail(
            "NO_SUCH_SQUARE",
            f"{what} {_sq(sq)}: with {state.num_players} Builders only rows 1-{state.num_players} are used",
        )


def _place(state: State, t: _Table, step: Step, seat: int) -> None:
    tile_id, sq = step.tile or "", step.to or (0, 0)
    builder = state.builders[seat]
    if tile_id.rpartition("-")[0] != builder:
        _fail("NOT_YOUR_TILE", f"{tile_id} is not yours: you are the {builder} and place {builder} tiles")
    mine = [tile for tile in state.supply[seat] if tile.id == tile_id]
    if not mine:
        _fail("TILE_ALREADY_PLACED", f"{tile_id} is already on the Workbench")
    _active(state, sq, "place on")
    if sq[1] > BUILDING_COLUMNS:
        _fail("COLUMN_FIVE_IN_BUILDING", "column 5 (the marked square) is not used in the building phase")
    if state.tile_at(sq) is not None:
        _fail("SQUARE_TAKEN", f"{_sq(sq)} already holds {state.tile_at(sq).id}")  # type: ignore[union-attr]
    t.supply[seat] = tuple(tile for tile in state.supply[seat] if tile.id != tile_id)
    t.put(sq, replace(mine[0], facing=step.facing or 0))


def _occupied(state: State, sq: Square | None) -> Tile:
    assert sq is not None
    _active(state, sq, "the Tool acts on")
    tile = state.tile_at(sq)
    if tile is None:
        _fail("SQUARE_EMPTY", f"there is no tile on {_sq(sq)}")
    assert tile is not None
    return tile


def _play(state: State, t: _Table, step: Step, seat: int, card: str) -> None:
    """A Tool card's effect (ruling 14); any tile may be its target."""
    if card in ("move", "rotate", "swap_component", "swap_points") or card in POINTS:
        tile = _occupied(state, step.at)
        at = step.at or (0, 0)
    if card == "move":
        to = step.to or (0, 0)
        _active(state, to, "move to")
        if state.tile_at(to) is not None:
            _fail("SQUARE_TAKEN", f"{_sq(to)} already holds {state.tile_at(to).id}")  # type: ignore[union-attr]
        if step.facing != tile.facing:
            _fail(
                "ORIENTATION_CHANGED",
                f"a moved tile keeps its orientation: {tile.id} faces {EDGES[tile.facing]}, "
                f"not {EDGES[step.facing or 0]}",
            )
        t.put(at, None)
        t.put(to, tile)
    elif card == "rotate":
        if step.facing == tile.facing:
            _fail(
                "NOT_A_TURN", f"{tile.id} already faces {EDGES[tile.facing]}: turn it 90, 180 or 270 degrees"
            )
        t.put(at, replace(tile, facing=step.facing or 0))
    elif card in ("swap_component", "swap_points"):
        other = _occupied(state, step.to)
        to = step.to or (0, 0)
        if to == at:
            _fail("SAME_SQUARE", "a swap exchanges two different tiles")
        if card == "swap_component":
            t.put(at, other)
            t.put(to, tile)
        else:
            t.put(at, replace(tile, value=other.value))
            t.put(to, replace(other, value=tile.value))
    elif card in POINTS:
        value = min(MAX_VALUE, max(MIN_VALUE, tile.value + POINTS[card]))  # clamped (ruling 14)
        t.put(at, replace(tile, value=value))
    elif card == "take_a_tool":
        victim = step.target if step.target is not None else -1
        if victim == seat:
            _fail("OWN_HAND", "Take a Tool takes a card from another Builder's hand")
        if not state.hands[victim]:
            _fail("NOTHING_TO_TAKE", f"seat {victim}'s hand is empty")
        t.chance.append(("take", seat, victim))
    else:  # redraw_a_tool
        wanted = step.retrieve or ""
        if switch_on_value(wanted) is not None:
            _fail("NOT_RETRIEVABLE", "Redraw a Tool never takes a Switch On card")
        if wanted not in state.discard:
            _fail("NOT_IN_DISCARD", f"the discard pile holds no {wanted} card")
        t.discard = _remove(state.discard, wanted)
        t.hands[seat] = _sorted_add(t.hands[seat], wanted)
