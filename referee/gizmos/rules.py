"""The rules: which steps are legal, and what a step does to the table.

Pure functions of immutable states. ``legal_steps(state)`` lists every legal next step with
no two leading to the same table; ``apply(state, step)`` returns the new state or raises
:class:`IllegalStep` with the code of the rule broken. Both are written from the same checks
(:func:`_check`), so ``apply`` accepts exactly what ``legal_steps`` offers.

Random events wait in ``state.chance`` until a chance step (``reveal``/``dispense``) resolves
them. Pass a :class:`random.Random` to ``apply`` to resolve them at once (simulation); leave it
out to supply outcomes yourself (the referee, from what the camera and sensors saw).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from referee.gizmos.cards import COLORS, Card, default_cards
from referee.gizmos.errors import IllegalStep
from referee.gizmos.payments import ANY_COLOR, FREE, Payment, most_energy, payments
from referee.gizmos.state import (
    DISPLAY_SLOTS,
    END_GIZMOS,
    END_LEVEL3,
    ChanceEvent,
    Converter,
    Pending,
    Player,
    Profile,
    Segment,
    State,
    event_void,
)
from referee.gizmos.steps import Step, check_shape, marbles

CARDS: tuple[Card, ...] = default_cards()


# =========================================================================== helpers


def _color_name(c: int) -> str:
    return COLORS[c]


def _build_need(card: Card, prof: Profile, source: str) -> int:
    """The cost after discounts (ruling 22): archive, research and Level II discounts stack."""
    discount = prof.discount_level2 if card.level == 2 else 0
    if source == "archive":
        discount += prof.discount_archive
    elif source == "research":
        discount += prof.discount_research
    return max(0, card.cost - discount)


def _unused_converters(state: State, prof: Profile) -> tuple[Converter, ...]:
    used = state.used
    if not used:
        return prof.converters
    return tuple(c for c in prof.converters if c.id not in used)


#: What each card is paid in: its color index, or ANY_COLOR for a multicolor card.
_TARGET: tuple[int, ...] = tuple(c.color_index if c.color_index >= 0 else ANY_COLOR for c in CARDS)


def _card_payments(state: State, player: Player, card: Card, source: str) -> tuple[Payment, ...]:
    prof = player.profile
    need = _build_need(card, prof, source)
    return payments(player.ring, _TARGET[card.id], need, _unused_converters(state, prof))


def _display_cards(state: State) -> list[int]:
    return [c for row in state.display for c in row if c is not None]


def _nonempty_decks(state: State) -> list[int]:
    return [lvl for lvl in (1, 2, 3) if state.decks[lvl - 1]]


# =========================================================================== legality checks


class _Checks:
    """Where rule checks report a broken rule: strict (raise at once) or lenient (record it).

    Lenient checks let the referee replay what physically happened on the table and collect
    every rule it broke (:func:`force`). ``fatal`` failures are physically impossible (a marble
    not in the Row, a card nowhere to be had) and raise in both modes.
    """

    __slots__ = ("lenient", "violations")

    def __init__(self, lenient: bool = False) -> None:
        self.lenient = lenient
        self.violations: list[IllegalStep] = []

    def fail(self, code: str, message: str, fatal: bool = False) -> None:
        err = IllegalStep(code, message)
        if not self.lenient or fatal:
            raise err
        self.violations.append(err)


STRICT = _Checks()


def _check_file(ck: _Checks, state: State, player: Player, card: int | None, from_hand: bool) -> None:
    prof = player.profile
    if prof.forbid_file:
        ck.fail("ACTION_FORBIDDEN", "an upgrade you built forbids the File action for the rest of the game")
    if len(player.archive) >= prof.file_limit:
        ck.fail(
            "ARCHIVE_FULL", f"your Archive holds {len(player.archive)} of {prof.file_limit}: you cannot File"
        )
    if from_hand:
        assert state.pending is not None
        if card not in state.pending.hand:
            ck.fail("CARD_NOT_AVAILABLE", f"#{card} is not among the cards this Research drew")
    elif card not in _display_cards(state):
        ck.fail("CARD_NOT_AVAILABLE", f"#{card} is not face up in the Display")


def _check_pick(ck: _Checks, state: State, player: Player, color: int) -> None:
    prof = player.profile
    if state.row[color] == 0:
        ck.fail("COLOR_NOT_IN_ROW", f"there is no {_color_name(color)} marble in the Energy Row", fatal=True)
    if sum(player.ring) >= prof.energy_limit:
        ck.fail("RING_FULL", f"your ring holds {sum(player.ring)} of {prof.energy_limit}: you cannot Pick")


def _check_research(ck: _Checks, state: State, player: Player, level: int) -> None:
    if not state.decks[level - 1]:
        ck.fail("DECK_EMPTY", f"the Level {level} deck is empty", fatal=True)
    if player.profile.forbid_research:
        ck.fail(
            "ACTION_FORBIDDEN", "an upgrade you built forbids the Research action for the rest of the game"
        )


def _build_source(ck: _Checks, state: State, player: Player, card: int, mode: str) -> str:
    """Where a Build takes the card from in this mode ('main', 'free', 'research').

    A card taken from anywhere else (another player's Archive, a deck) is ``"elsewhere"``: a
    broken rule that a lenient check can still replay.
    """
    if mode == "research":
        assert state.pending is not None
        if card in state.pending.hand:
            return "research"
        ck.fail(
            "CARD_NOT_AVAILABLE",
            f"#{card} is not among the cards this Research drew (ruling 11: not the Display)",
        )
        source = "elsewhere"
    elif card in player.archive:
        source = "archive"
    elif card in _display_cards(state):
        source = "display"
    else:
        ck.fail("CARD_NOT_AVAILABLE", f"#{card} is neither face up in the Display nor in your Archive")
        source = "elsewhere"
    if mode == "free" and CARDS[card].level != 1:
        ck.fail("NOT_LEVEL_ONE", f"#{card} is Level {CARDS[card].level}; the free Build takes Level I only")
    return source


def _check_payment(ck: _Checks, state: State, player: Player, step: Step, source: str, free: bool) -> None:
    card = CARDS[step.card or 0]
    pay = step.pay or (0, 0, 0, 0)
    for c in range(4):
        if pay[c] > player.ring[c]:
            ck.fail(
                "NOT_AFFORDABLE",
                f"you pay {pay[c]} {COLORS[c]} but your ring holds {player.ring[c]}",
                fatal=True,
            )
    if free:
        if any(pay) or step.converters:
            ck.fail("BAD_PAYMENT", f"#{card.id} is built for free: pay nothing and use no converter")
        return
    prof = player.profile
    mine = {c.id: c for c in prof.converters}
    for cid in step.converters:
        if cid not in mine:
            ck.fail("BAD_PAYMENT", f"#{cid} is not one of your built converters", fatal=True)
        if cid in state.used:
            ck.fail("GIZMO_ALREADY_USED", f"converter #{cid} was already used this turn (ruling 19)")
    look = source if source != "elsewhere" else "display"
    options = _card_payments(state, player, card, look)
    if (pay, step.converters) in options:
        return
    target = _TARGET[card.id]
    if any(cid in state.used for cid in step.converters):
        need = _build_need(card, prof, look)
        if (pay, step.converters) in payments(player.ring, target, need, prof.converters):
            return  # (lenient) exact but for a converter used twice: that is the one rule broken
    chosen = tuple(mine[c] for c in step.converters)
    cost = _cost_text(card, prof, look)
    if most_energy(pay, target, chosen) < _build_need(card, prof, look):
        ck.fail("UNDERPAID", f"{marbles(pay, empty='paying nothing')} does not cover #{card.id} ({cost})")
    elif not options:
        ck.fail("NOT_AFFORDABLE", f"your ring cannot pay for #{card.id} ({cost})")
    else:
        ck.fail(
            "BAD_PAYMENT",
            f"{marbles(pay, empty='paying nothing')} with converters {list(step.converters)} is not an "
            f"exact payment for #{card.id} ({cost})",
        )


def _cost_text(card: Card, prof: Profile, source: str) -> str:
    need = _build_need(card, prof, source)
    color = "energy of any colours" if card.color == "any" else card.color
    return f"costs {need} {color}" + (f" after discounts (printed {card.cost})" if need != card.cost else "")


def _use_blocker(state: State, player: Player, gizmo: int) -> IllegalStep | None:
    """Why a triggered gizmo's effect could not happen now (None when it can)."""
    e = CARDS[gizmo].effect
    prof = player.profile
    r = e.reward
    if r in ("draw_random", "pick_row"):
        if sum(player.ring) >= prof.energy_limit:
            return IllegalStep("RING_FULL", f"your ring is full: #{gizmo} would bring nothing (ruling 12)")
        source = state.dispenser if r == "draw_random" else state.row
        if not any(source):
            where = "dispenser" if r == "draw_random" else "Energy Row"
            return IllegalStep("NOTHING_TO_TAKE", f"the {where} is empty")
    elif r == "file_action":
        if prof.forbid_file:
            return IllegalStep(
                "ACTION_FORBIDDEN", "File is forbidden for you, even when a gizmo grants it (ruling 23)"
            )
        if len(player.archive) >= prof.file_limit:
            return IllegalStep("ARCHIVE_FULL", "your Archive is full")
        if not _display_cards(state):
            return IllegalStep("NOTHING_TO_TAKE", "the Display is empty")
    elif r == "research_action":
        if prof.forbid_research:
            return IllegalStep(
                "ACTION_FORBIDDEN", "Research is forbidden for you, even when a gizmo grants it (ruling 23)"
            )
        if not _nonempty_decks(state):
            return IllegalStep("NOTHING_TO_TAKE", "every level deck is empty")
    elif r == "build_free" and not any(
        CARDS[c].level == e.level for c in (*_display_cards(state), *player.archive)
    ):
        return IllegalStep("NOTHING_TO_TAKE", "there is no Level I gizmo in the Display or your Archive")
    return None


def _main_action_possible(state: State, player: Player) -> bool:
    """Whether any main action is legal (a turn with none may simply end)."""
    prof = player.profile
    if not prof.forbid_file and len(player.archive) < prof.file_limit and _display_cards(state):
        return True
    if sum(player.ring) < prof.energy_limit and any(state.row):
        return True
    if not prof.forbid_research and _nonempty_decks(state):
        return True
    for c in (*_display_cards(state), *player.archive):
        source = "archive" if c in player.archive else "display"
        if _card_payments(state, player, CARDS[c], source):
            return True
    return False


# =========================================================================== legal steps


def legal_steps(state: State) -> list[Step]:
    """Every legal next step. At a chance node: every possible outcome (see :func:`chance_outcomes`)."""
    if state.game_over:
        return []
    if state.chance:
        return [s for s, _ in chance_outcomes(state)]
    seat = state.current
    player = state.players[seat]
    pend = state.pending
    out: list[Step] = []
    if pend is not None:
        k = pend.kind
        if k == "research" and pend.chosen:
            return [Step("bottom", seat, card=c) for c in pend.hand]
        out.append(Step("skip", seat))
        if k == "picks":
            out += _pick_steps(state, player, seat)
        elif k == "file":
            out += _file_steps(state, player, seat, _display_cards(state))
        elif k == "research_offer":
            out += [Step("research", seat, level=lvl) for lvl in _nonempty_decks(state)]
        elif k == "free_build":
            for c in (*_display_cards(state), *player.archive):
                if CARDS[c].level == pend.level:
                    out.append(Step("build", seat, card=c, pay=FREE[0], converters=()))
        else:  # research hand
            out += _file_steps(state, player, seat, list(pend.hand))
            out += _build_steps(state, player, seat, pend.hand, "research")
        return out
    if not state.main_done:
        prof = player.profile
        out += _file_steps(state, player, seat, _display_cards(state))
        out += _pick_steps(state, player, seat)
        out += _build_steps(state, player, seat, _display_cards(state), "display")
        out += _build_steps(state, player, seat, player.archive, "archive")
        if not prof.forbid_research:
            out += [Step("research", seat, level=lvl) for lvl in _nonempty_decks(state)]
        if not out:
            out.append(Step("end_turn", seat))
        return out
    for g in sorted(state.triggered):
        if _use_blocker(state, player, g) is None:
            out.append(Step("use", seat, gizmo=g))
    out.append(Step("end_turn", seat))
    return out


def _file_steps(state: State, player: Player, seat: int, cards: list[int]) -> list[Step]:
    prof = player.profile
    if prof.forbid_file or len(player.archive) >= prof.file_limit:
        return []
    return [Step("file", seat, card=c) for c in cards]


def _pick_steps(state: State, player: Player, seat: int) -> list[Step]:
    if sum(player.ring) >= player.profile.energy_limit:
        return []
    return [Step("pick", seat, color=c) for c in range(4) if state.row[c]]


def _build_steps(state: State, player: Player, seat: int, cards: Sequence[int], source: str) -> list[Step]:
    """Every Build of each card from ``source``: one step per distinct payment."""
    if not cards:
        return []
    prof = player.profile
    converters = _unused_converters(state, prof)
    ring = player.ring
    return [
        Step("build", seat, card=c, pay=spent, converters=conv)
        for c in cards
        for spent, conv in payments(ring, _TARGET[c], _build_need(CARDS[c], prof, source), converters)
    ]


def chance_outcomes(state: State) -> list[tuple[Step, float]]:
    """The possible outcomes of the next chance event, with their probabilities."""
    if not state.chance:
        return []
    event = state.chance[0]
    if event[0] in ("display", "research"):
        level = event[1]
        cands, _ = state.decks[level - 1][0]
        p = 1.0 / len(cands)
        return [(Step("reveal", card=c), p) for c in cands]
    total = sum(state.dispenser)
    return [(Step("dispense", color=c), n / total) for c, n in enumerate(state.dispenser) if n]


# =========================================================================== apply


class _Table:
    """A mutable scratch copy of a state, used inside :func:`apply` only."""

    __slots__ = (
        "box",
        "chance",
        "current",
        "decks",
        "dispenser",
        "display",
        "end_triggered",
        "game_over",
        "main_done",
        "pending",
        "players",
        "row",
        "triggered",
        "turn",
        "used",
    )

    def __init__(self, s: State) -> None:
        self.players = list(s.players)
        self.dispenser = list(s.dispenser)
        self.row = list(s.row)
        self.decks = list(s.decks)
        self.display = s.display
        self.box = s.box
        self.current = s.current
        self.turn = s.turn
        self.main_done = s.main_done
        self.triggered = s.triggered
        self.used = s.used
        self.pending = s.pending
        self.chance = list(s.chance)
        self.end_triggered = s.end_triggered
        self.game_over = s.game_over

    def freeze(self) -> State:
        d, r = self.dispenser, self.row
        return State(
            players=tuple(self.players),
            dispenser=(d[0], d[1], d[2], d[3]),
            row=(r[0], r[1], r[2], r[3]),
            decks=tuple(self.decks),  # type: ignore[arg-type]
            display=self.display,
            box=self.box,
            current=self.current,
            turn=self.turn,
            main_done=self.main_done,
            triggered=self.triggered,
            used=self.used,
            pending=self.pending,
            chance=tuple(self.chance),
            end_triggered=self.end_triggered,
            game_over=self.game_over,
        )

    # ---- table operations

    def set_player(self, seat: int, **changes: object) -> None:
        p = self.players[seat]
        self.players[seat] = Player(
            ring=changes.get("ring", p.ring),  # type: ignore[arg-type]
            archive=changes.get("archive", p.archive),  # type: ignore[arg-type]
            gizmos=changes.get("gizmos", p.gizmos),  # type: ignore[arg-type]
            vp_tokens=changes.get("vp_tokens", p.vp_tokens),  # type: ignore[arg-type]
        )

    def take_from_display(self, card: int) -> bool:
        rows = list(self.display)
        for lvl, row in enumerate(rows):
            if card in row:
                slot = row.index(card)
                rows[lvl] = row[:slot] + (None,) + row[slot + 1 :]
                self.display = tuple(rows)
                self.chance.append(("display", lvl + 1, slot))
                return True
        return False

    def take_card(self, card: int) -> None:
        """Take a card from wherever it is (a lenient replay of a card taken from the wrong place)."""
        if self.take_from_display(card):
            return
        for seat, p in enumerate(self.players):
            if card in p.archive:
                self.set_player(seat, archive=tuple(c for c in p.archive if c != card))
                return
        for lvl, segs in enumerate(self.decks):
            for i, (cands, n) in enumerate(segs):
                if card in cands:
                    rest = tuple(c for c in cands if c != card)
                    kept = (
                        (*segs[:i], (rest, n - 1), *segs[i + 1 :]) if n > 1 else (*segs[:i], *segs[i + 1 :])
                    )
                    if n == 1 and rest:
                        self.box = tuple(sorted((*self.box, *rest)))
                    self.decks[lvl] = kept
                    return
        if card in self.box:
            self.box = tuple(c for c in self.box if c != card)
            return
        if self.pending is not None and card in self.pending.hand:
            self.pending = Pending(
                self.pending.kind,
                self.pending.count,
                self.pending.level,
                tuple(c for c in self.pending.hand if c != card),
                self.pending.chosen,
            )
            return
        raise IllegalStep("CARD_NOT_AVAILABLE", f"#{card} is already built and cannot be taken")

    def trigger(
        self, seat: int, gizmos: tuple[int, ...], test: Callable[[Card], bool], exclude: int = -1
    ) -> None:
        if seat != self.current:  # an out-of-turn action (lenient replay) triggers nothing
            return
        new = [g for g in gizmos if g != exclude and g not in self.used and test(CARDS[g])]
        if new:
            self.triggered = self.triggered | frozenset(new)

    def do_file(self, seat: int, card: int, from_hand: bool) -> None:
        p = self.players[seat]
        if not from_hand:
            self.take_card(card)
            p = self.players[seat]
        self.set_player(seat, archive=(*p.archive, card))
        self.trigger(seat, p.profile.file_gizmos, lambda g: True)

    def do_pick(self, seat: int, color: int) -> None:
        p = self.players[seat]
        self.row[color] -= 1
        ring = list(p.ring)
        ring[color] += 1
        self.set_player(seat, ring=tuple(ring))
        self.chance.append(("row",))
        self.trigger(seat, p.profile.pick_gizmos, lambda g: color in g.effect.colors)

    def do_build(self, seat: int, step: Step, source: str) -> None:
        card_id = step.card or 0
        card = CARDS[card_id]
        pay = step.pay or (0, 0, 0, 0)
        if source in ("display", "elsewhere"):
            self.take_card(card_id)
        p = self.players[seat]
        archive = p.archive
        if source == "archive":
            archive = tuple(c for c in archive if c != card_id)
        ring = tuple(p.ring[i] - pay[i] for i in range(4))
        for i in range(4):
            self.dispenser[i] += pay[i]
        if step.converters:
            self.used = self.used | frozenset(step.converters)
        gizmos = (*p.gizmos, card_id)
        self.set_player(seat, ring=ring, archive=archive, gizmos=gizmos)
        prof = self.players[seat].profile
        if prof.count >= END_GIZMOS or prof.level3 >= END_LEVEL3:
            self.end_triggered = True
        color = card.color_index

        def fires(g: Card) -> bool:
            e = g.effect
            if e.kind == "on_build":
                return color < 0 or color in e.colors  # multicolor counts as every color (18)
            if e.kind == "on_build_from_archive":
                return source == "archive"
            return card.level == e.level  # on_build_level

        # The gizmo just built is not triggered by the Build that built it (ruling 15).
        self.trigger(seat, p.profile.build_gizmos, fires, exclude=card_id)

    def do_research(self, seat: int, level: int) -> None:
        size = sum(n for _, n in self.decks[level - 1])
        n = min(self.players[seat].profile.research, size)
        self.pending = Pending("research", level=level)
        self.chance.extend([("research", level)] * n)

    def bottom(self, level: int, card: int) -> None:
        seg: Segment = ((card,), 1)
        self.decks[level - 1] = (*self.decks[level - 1], seg)

    def draw_card(self, level: int, card: int) -> None:
        segs = list(self.decks[level - 1])
        cands, n = segs[0]
        rest = tuple(c for c in cands if c != card)
        if n == 1:
            segs.pop(0)
            if rest:  # the candidates never drawn were removed at setup (ruling 3)
                self.box = tuple(sorted((*self.box, *rest)))
        else:
            segs[0] = (rest, n - 1)
        self.decks[level - 1] = tuple(segs)


def apply(state: State, step: Step, rng: random.Random | None = None) -> State:
    """The state after ``step``; raises :class:`IllegalStep` if it breaks a rule, and
    :class:`InvalidStep` if the step is malformed (see :func:`check_shape`).

    With ``rng``, chance events the step causes are resolved at once from that random source.
    """
    check_shape(step, len(state.players))
    t = _Table(state)
    _apply_into(STRICT, state, t, step)
    _drop_void_events(t)
    if rng is not None:
        while t.chance:
            _resolve(t, _sample(t, rng))
            _drop_void_events(t)
    return t.freeze()


def force(state: State, step: Step) -> tuple[State, list[IllegalStep]]:
    """Replay a step that physically happened on the table, legal or not.

    Returns the resulting state and every rule the step broke (empty when legal). The result
    may break limits (a ring over its limit is what the table shows); :func:`check_invariants`
    with ``limits=False`` still holds. Raises :class:`IllegalStep` only for what cannot
    physically happen (a marble that is not in the Row, marbles the ring does not hold), and
    :class:`InvalidStep` for a malformed step. Chance events are left for the caller to resolve.
    """
    check_shape(step, len(state.players))
    ck = _Checks(lenient=True)
    t = _Table(state)
    _apply_into(ck, state, t, step)
    _drop_void_events(t)
    return t.freeze(), ck.violations


def _apply_into(ck: _Checks, state: State, t: _Table, step: Step) -> None:
    if state.chance:
        if not step.is_chance:
            ck.fail(
                "OUT_OF_SEQUENCE", f"a random outcome is awaited first ({event_text(state.chance[0])})", True
            )
        _check_outcome(state, step)
        _resolve(t, step)
        return
    if step.is_chance:
        ck.fail(
            "OUT_OF_SEQUENCE", f"no random outcome is awaited; '{step.kind}' does not fit now", fatal=True
        )
    seat = step.player if step.player is not None else state.current
    try:
        if state.game_over:
            ck.fail("GAME_OVER", "the game is over; nothing more can be played")
        elif seat != state.current:  # after the end, whose turn it would be does not matter
            ck.fail("NOT_YOUR_TURN", f"it is seat {state.current}'s turn, not seat {seat}'s")
        _apply_player_step(ck, state, t, step, seat)
    except IllegalStep as exc:
        exc.player = seat
        raise
    for v in ck.violations:
        v.player = seat


def _apply_player_step(ck: _Checks, state: State, t: _Table, step: Step, seat: int) -> None:
    player = state.players[seat]
    pend = state.pending if seat == state.current else None
    k = step.kind
    if pend is not None:
        if _apply_pending(ck, state, t, step, pend, player, seat):
            return
        t.pending = None  # lenient: the owed choice was abandoned; replay the step as it stands
    if k in ("skip", "bottom"):
        ck.fail("OUT_OF_SEQUENCE", f"there is no choice pending to '{k}'", fatal=True)
    if k in ("file", "pick", "build", "research"):
        if seat == state.current:
            if state.main_done:
                ck.fail("SECOND_MAIN_ACTION", "you have already taken this turn's main action (ruling 7)")
            t.main_done = True
        _do_action(ck, state, t, step, player, "main", seat)
        return
    if k == "use":
        _apply_use(ck, state, t, step, player, seat)
        return
    # end_turn
    if not state.main_done and _main_action_possible(state, player):
        ck.fail("NO_MAIN_ACTION", "take a main action (File, Pick, Build or Research) before ending the turn")
    _end_turn(t)


def _do_action(
    ck: _Checks, state: State, t: _Table, step: Step, player: Player, mode: str, seat: int
) -> None:
    """A File/Pick/Build/Research, whether main, granted by a gizmo, or inside a Research."""
    k = step.kind
    if k == "file":
        _check_file(ck, state, player, step.card, from_hand=False)
        t.do_file(seat, step.card or 0, from_hand=False)
    elif k == "pick":
        _check_pick(ck, state, player, step.color or 0)
        t.do_pick(seat, step.color or 0)
    elif k == "build":
        source = _build_source(ck, state, player, step.card or 0, mode)
        _check_payment(ck, state, player, step, source, free=mode == "free")
        t.do_build(seat, step, source)
    elif k == "research":
        _check_research(ck, state, player, step.level or 1)
        t.do_research(seat, step.level or 1)
    else:
        ck.fail("OUT_OF_SEQUENCE", f"'{k}' is not an action", fatal=True)


def _apply_pending(
    ck: _Checks, state: State, t: _Table, step: Step, pend: Pending, player: Player, seat: int
) -> bool:
    """Apply a step while a choice is owed; False when (lenient) the step ignored the choice."""
    k = step.kind
    if pend.kind == "research" and pend.chosen:
        if k != "bottom":
            ck.fail("CHOICE_PENDING", "put the remaining Research cards under the deck first ('bottom')")
            return False
        if step.card not in pend.hand:
            ck.fail(
                "CARD_NOT_AVAILABLE", f"#{step.card} is not among the Research cards left to return", True
            )
        t.bottom(pend.level, step.card or 0)
        _leave_research(t, pend, tuple(c for c in pend.hand if c != step.card))
        return True
    if k == "skip":
        if pend.kind == "research":
            _leave_research(t, pend, pend.hand)
        else:
            t.pending = None
        return True
    if pend.kind == "research":
        if k == "file":
            _check_file(ck, state, player, step.card, from_hand=True)
            t.do_file(seat, step.card or 0, from_hand=step.card in pend.hand)
        elif k == "build":
            source = _build_source(ck, state, player, step.card or 0, "research")
            _check_payment(ck, state, player, step, source, free=False)
            t.do_build(seat, step, source)
        else:
            ck.fail("CHOICE_PENDING", "choose from the Research: File one, Build one, or 'skip'")
            return False
        _leave_research(t, pend, tuple(c for c in pend.hand if c != step.card))
        return True
    expected = {"picks": "pick", "file": "file", "research_offer": "research", "free_build": "build"}
    if k != expected[pend.kind]:
        what = {
            "picks": "pick from the Row",
            "file": "File",
            "research_offer": "Research",
            "free_build": "Build",
        }
        ck.fail("CHOICE_PENDING", f"a gizmo granted you a {what[pend.kind]}: do it or 'skip' first")
        return False
    mode = "free" if pend.kind == "free_build" else "bonus"
    _do_action(ck, state, t, step, player, mode, seat)
    if pend.kind == "picks" and pend.count > 1:
        if t.pending is pend:
            t.pending = Pending("picks", count=pend.count - 1)
    elif t.pending is pend:
        t.pending = None
    return True


def _leave_research(t: _Table, pend: Pending, rest: tuple[int, ...]) -> None:
    """After the Research choice: the rest go under the deck; one card left needs no order."""
    if len(rest) <= 1:
        for c in rest:
            t.bottom(pend.level, c)
        t.pending = None
    else:
        t.pending = Pending("research", level=pend.level, hand=rest, chosen=True)


def _apply_use(ck: _Checks, state: State, t: _Table, step: Step, player: Player, seat: int) -> None:
    g = step.gizmo if step.gizmo is not None else -1
    if g not in player.gizmos:
        ck.fail("CARD_NOT_AVAILABLE", f"#{g} is not one of your built gizmos", fatal=True)
    if g in state.used:
        ck.fail("GIZMO_ALREADY_USED", f"#{g} has already been used this turn (ruling 14)")
    elif g not in state.triggered:
        why = (
            "a converter is used only while paying for a Build"
            if CARDS[g].type == "converter"
            else "no action this turn has triggered it"
        )
        ck.fail("NOT_TRIGGERED", f"#{g} is not triggered: {why}")
    blocker = _use_blocker(state, player, g)
    if blocker is not None:
        ck.fail(blocker.code, blocker.message)
    if seat == state.current:
        t.triggered = state.triggered - {g}
        t.used = state.used | {g}
    e = CARDS[g].effect
    r = e.reward
    if r == "draw_random":
        t.chance.extend([("draw", seat)] * e.count)
    elif r == "vp_tokens":
        t.set_player(seat, vp_tokens=player.vp_tokens + e.count)
    elif seat != state.current:
        return  # granted actions out of turn are replayed as the steps they become
    elif r == "pick_row":
        t.pending = Pending("picks", count=e.count)
    elif r == "file_action":
        t.pending = Pending("file")
    elif r == "research_action":
        t.pending = Pending("research_offer")
    else:  # build_free
        t.pending = Pending("free_build", level=e.level)


def _end_turn(t: _Table) -> None:
    n = len(t.players)
    t.turn += 1
    if t.end_triggered and t.current == n - 1:
        t.game_over = True  # the round is finished (ruling 24)
    else:
        t.current = (t.current + 1) % n
    t.main_done = False
    t.triggered = frozenset()
    t.used = frozenset()


# =========================================================================== chance


def event_text(e: ChanceEvent) -> str:
    """The random outcome a chance event awaits, in words ("the marble refilling the Energy Row")."""
    if e[0] == "display":
        return f"the card refilling Level {e[1]} Display slot {e[2] + 1}"
    if e[0] == "research":
        return f"the next card of the Level {e[1]} deck for the Research"
    if e[0] == "row":
        return "the marble refilling the Energy Row"
    return f"the colour of the marble seat {e[1]} draws"


def _drop_void_events(t: _Table) -> None:
    while t.chance and event_void(t.chance[0], t.decks, t.dispenser, t.row, t.players):
        t.chance.pop(0)


def _check_outcome(state: State, step: Step) -> None:
    e = state.chance[0]
    if e[0] in ("display", "research"):
        if step.kind != "reveal":
            raise IllegalStep("OUT_OF_SEQUENCE", f"awaiting {event_text(e)}: a 'reveal' step")
        cands, _ = state.decks[e[1] - 1][0]
        if step.card not in cands:
            raise IllegalStep(
                "IMPOSSIBLE_OUTCOME", f"#{step.card} cannot come next off the Level {e[1]} deck"
            )
    else:
        if step.kind != "dispense":
            raise IllegalStep("OUT_OF_SEQUENCE", f"awaiting {event_text(e)}: a 'dispense' step")
        if state.dispenser[step.color or 0] == 0:
            raise IllegalStep(
                "IMPOSSIBLE_OUTCOME", f"the dispenser holds no {COLORS[step.color or 0]} marble"
            )


def _sample(t: _Table, rng: random.Random) -> Step:
    e = t.chance[0]
    if e[0] in ("display", "research"):
        cands, _ = t.decks[e[1] - 1][0]
        return Step("reveal", card=cands[rng.randrange(len(cands))])
    x = rng.randrange(sum(t.dispenser))
    for c in range(4):
        x -= t.dispenser[c]
        if x < 0:
            return Step("dispense", color=c)
    raise AssertionError("unreachable")


def _resolve(t: _Table, step: Step) -> None:
    e = t.chance.pop(0)
    if e[0] in ("display", "research"):
        card = step.card or 0
        t.draw_card(e[1], card)
        if e[0] == "display":
            rows = list(t.display)
            row = rows[e[1] - 1]
            rows[e[1] - 1] = row[: e[2]] + (card,) + row[e[2] + 1 :]
            t.display = tuple(rows)
        else:
            assert t.pending is not None
            t.pending = Pending("research", level=e[1], hand=(*t.pending.hand, card))
        return
    color = step.color or 0
    t.dispenser[color] -= 1
    if e[0] == "row":
        t.row[color] += 1
    else:
        seat = e[1]
        p = t.players[seat]
        ring = list(p.ring)
        ring[color] += 1
        t.set_player(seat, ring=tuple(ring))


def resolve_chance(state: State, rng: random.Random) -> State:
    """Resolve every queued chance event from a random source (e.g. after :func:`new_game`)."""
    t = _Table(state)
    _drop_void_events(t)
    while t.chance:
        _resolve(t, _sample(t, rng))
        _drop_void_events(t)
    return t.freeze()


def display_slot_count(level: int) -> int:
    """Slots in a Display row (4/3/2)."""
    return DISPLAY_SLOTS[level - 1]
