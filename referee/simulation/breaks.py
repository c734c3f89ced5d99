"""Rule breaks put into simulated Gizmos games on purpose: the one injector.

A rule break counts only if forcing its step breaks exactly the one rule meant
(:func:`breaks_only`), so the referee's answer can be checked against a known code. Two
recipes use it:

- single steps for the benchmark corpus (:mod:`referee.simulation.synthetic`): a rule-breaking
  main action at the start of a turn (:func:`start_break`) or a rule-breaking step after it
  (:func:`end_break`), any class of :data:`VIOLATIONS` the table allows, chosen at random;
- whole turns for the bundled recording (:func:`planned_game`): greedy players
  (:func:`referee.simulation.players.greedy_step`) play a game, and on planned turns one of them
  breaks a rule so that no legal turn could leave the same table (:func:`break_turn`).

Pure: the engine only, deterministic given the seeds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

from referee.gizmos import IllegalStep, State, Step, apply, default_cards, force, legal_steps, new_game
from referee.gizmos.cards import COLOR_INDEX
from referee.gizmos.rules import chance_outcomes
from referee.simulation.players import greedy_step, has_room

CARDS = default_cards()

#: Rule breaks the simulator can inject, by the code the referee must report.
VIOLATIONS = (
    "SECOND_MAIN_ACTION",
    "RING_FULL",
    "ARCHIVE_FULL",
    "UNDERPAID",
    "GIZMO_ALREADY_USED",
    "NOT_TRIGGERED",
    "ACTION_FORBIDDEN",
    "CARD_NOT_AVAILABLE",
    "NOT_YOUR_TURN",
    "GAME_OVER",
)
#: The classes :func:`start_break` makes (a main action) and :func:`end_break` (after it).
START_CODES = (
    "RING_FULL",
    "ARCHIVE_FULL",
    "ACTION_FORBIDDEN",
    "CARD_NOT_AVAILABLE",
    "NOT_YOUR_TURN",
    "UNDERPAID",
)
END_CODES = ("SECOND_MAIN_ACTION", "GIZMO_ALREADY_USED", "NOT_TRIGGERED")


class BreakError(RuntimeError):
    """A planned rule break cannot be played (the message says which and why)."""


@dataclass(frozen=True, slots=True)
class Injected:
    """A rule broken on purpose: the code, the player who broke it, the turn and (when kept)
    the rule-breaking step."""

    code: str
    player: int
    turn: int
    step: Step | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "turn": self.turn,
            "player": self.player,
            "step": self.step.to_json() if self.step is not None else None,
        }


def breaks_only(state: State, step: Step, code: str) -> State | None:
    """The table after forcing ``step`` if it breaks exactly the rule ``code`` (and nothing
    else), else None."""
    try:
        after, broken = force(state, step)
    except IllegalStep:
        return None
    return after if [b.code for b in broken] == [code] else None


# --------------------------------------------------------------------------- single steps (the corpus)


def _main_actions(state: State) -> list[Step]:
    return [s for s in legal_steps(state) if s.kind in ("file", "pick", "build", "research")]


def start_break(state: State, code: str, rng: random.Random) -> tuple[Step, State] | None:
    """A rule-breaking main action (or an out-of-turn Pick) at the start of a turn."""
    seat = state.current
    p = state.players[seat]
    display = [c for row in state.display for c in row if c is not None]
    steps: list[Step] = []
    if code == "RING_FULL":
        steps = [Step("pick", seat, color=c) for c in range(4) if state.row[c]]
    elif code in ("ARCHIVE_FULL", "ACTION_FORBIDDEN"):
        steps = [Step("file", seat, card=c) for c in display]
    elif code == "CARD_NOT_AVAILABLE":
        others = [c for i, o in enumerate(state.players) if i != seat for c in o.archive]
        steps = [Step("file", seat, card=c) for c in others]
    elif code == "NOT_YOUR_TURN":
        steps = [
            Step("pick", o, color=c)
            for o in range(state.num_players)
            if o != seat
            for c in range(4)
            if state.row[c]
        ]
    elif code == "UNDERPAID":
        for b in _main_actions(state):
            if b.kind == "build" and not b.converters and b.pay and sum(b.pay) >= 1:
                color = max(range(4), key=lambda i: (b.pay or (0, 0, 0, 0))[i])
                pay = tuple(n - (i == color) for i, n in enumerate(b.pay))
                steps.append(replace(b, pay=pay))  # type: ignore[arg-type]
    rng.shuffle(steps)
    for step in steps:
        after = breaks_only(state, step, code)
        if after is not None and (code != "RING_FULL" or sum(p.ring) >= p.profile.energy_limit):
            return step, after
    return None


def end_break(state: State, code: str, rng: random.Random) -> tuple[Step, State] | None:
    """A rule-breaking step after the main action, before the turn ends."""
    seat = state.current
    p = state.players[seat]
    steps: list[Step] = []
    if code == "SECOND_MAIN_ACTION":
        steps = [Step("pick", seat, color=c) for c in range(4) if state.row[c]]
        if any(CARDS[g].effect.reward == "pick_row" for g in state.triggered):
            steps = []  # a triggered pick gizmo would make a second pick legal
    elif code in ("GIZMO_ALREADY_USED", "NOT_TRIGGERED"):
        # A VP token taken again (used) or without its trigger. Only when no other VP gizmo of
        # the player's gives the same points: else the camera cannot tell which rule broke.
        vp = [g for g in p.gizmos if CARDS[g].effect.reward == "vp_tokens" and g not in state.triggered]
        points = [CARDS[g].effect.count for g in vp]
        used = code == "GIZMO_ALREADY_USED"
        steps = [
            Step("use", seat, gizmo=g)
            for g in vp
            if (g in state.used) == used and points.count(CARDS[g].effect.count) == 1
        ]
    rng.shuffle(steps)
    for step in steps:
        after = breaks_only(state, step, code)
        if after is not None:
            return step, after
    return None


def hidden_pick(before: State, step: Step, settled: State) -> bool:
    """A Pick whose refill brought back the color taken: the Row looks untouched, so the table
    reads as a marble drawn blind, or paid one short; no camera can tell which rule broke."""
    return step.kind == "pick" and settled.row == before.row


# --------------------------------------------------------------------------- whole turns (the recording)


@dataclass(frozen=True, slots=True)
class Played:
    """One step of the game as it happened: the states around it and the rules it broke."""

    step: Step
    before: State
    after: State
    codes: tuple[str, ...] = ()

    @property
    def forced(self) -> bool:
        return bool(self.codes)


@dataclass(frozen=True, slots=True)
class PlayedGame:
    """The game as played: every step (chance included), the injected violations, the final state."""

    steps: tuple[Played, ...]
    injections: tuple[Injected, ...]
    final: State


class _Game:
    """The game being played: applies steps, resolves chance with a seeded source, keeps the log."""

    def __init__(self, players: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.state = new_game(players)
        self.log: list[Played] = []
        self.resolve()

    def play(self, step: Step, forced: bool = False, avoid: int | None = None) -> tuple[str, ...]:
        """Apply (or force) a step, then every random outcome it causes; returns the rules broken.
        ``avoid``: a color the next Row refill should not be (an injected turn stays unambiguous)."""
        before = self.state
        if forced:
            after, errs = force(before, step)
            codes = tuple(e.code for e in errs)
        else:
            after, codes = apply(before, step), ()
        self.log.append(Played(step, before, after, codes))
        self.state = after
        self.resolve(avoid)
        return codes

    def resolve(self, avoid: int | None = None) -> None:
        while self.state.chance and not self.state.game_over:
            outcomes = chance_outcomes(self.state)
            if avoid is not None and self.state.chance[0][0] == "row":
                outcomes = [(s, w) for s, w in outcomes if s.color != avoid] or outcomes
            step = self.rng.choices([s for s, _ in outcomes], weights=[w for _, w in outcomes])[0]
            before = self.state
            self.state = apply(before, step)
            self.log.append(Played(step, before, self.state))

    def finish_turn(self) -> None:
        """The greedy player's remaining steps until the turn ends."""
        turn = self.state.turn
        while not self.state.game_over and self.state.turn == turn:
            self.play(greedy_step(self.state, self.rng))

    def rewind(self, state: State, log_length: int, rng_state: Any) -> None:
        """Back to a snapshot taken earlier (a recipe that found the turn unfit)."""
        self.state = state
        del self.log[log_length:]
        self.rng = random.Random()
        self.rng.setstate(rng_state)


def break_turn(game: _Game, code: str) -> Step | None:
    """Play the current turn breaking ``code``, if this turn allows it unambiguously; else None."""
    s = game.state
    seat = s.current
    p = s.players[seat]
    room = p.profile.energy_limit - sum(p.ring)
    if code == "RING_FULL":
        colors = [c for c in range(4) if s.row[c]]
        if room != 0 or not colors or s.pending is not None:
            return None
        step = Step("pick", seat, color=colors[0])
        if breaks_only(s, step, code) is None:
            return None
        game.play(step, forced=True)
    elif code == "SECOND_MAIN_ACTION":
        # A Pick, then a second Pick of another color. Refills never bring back the second
        # color, and no Pick gizmo draws it, so no legal turn leaves the same table.
        if room < 2 or s.pending is not None or p.profile.pick_gizmos:
            return None
        colors = [c for c in range(4) if s.row[c]]
        if len(colors) < 2:
            return None
        first, second = colors[0], colors[1]
        game.play(Step("pick", seat, color=first), avoid=second)
        step = Step("pick", seat, color=second)
        if breaks_only(game.state, step, code) is None:
            raise BreakError(f"injection {code}: the second Pick breaks other rules too")
        game.play(step, forced=True, avoid=second)
    elif code == "UNDERPAID":
        if s.pending is not None:
            return None
        for legal in legal_steps(s):
            if legal.kind != "build" or legal.converters or legal.pay is None or sum(legal.pay) < 2:
                continue
            card = legal.card or 0
            color = COLOR_INDEX.get(CARDS[card].color)
            if color is None or not has_room(s, seat, card) or legal.pay[color] < 2 or card in p.archive:
                continue
            pay = list(legal.pay)
            pay[color] -= 1
            short = Step("build", seat, card=card, pay=(pay[0], pay[1], pay[2], pay[3]))
            same = [x for x in legal_steps(s) if x.kind == "build" and x.card == card and x.pay == short.pay]
            if same or breaks_only(s, short, code) is None:
                continue
            game.play(short, forced=True)
            step = short
            break
        else:
            return None
    elif code == "GIZMO_ALREADY_USED":
        # The greedy player builds; one VP gizmo it triggers is used twice. No second VP gizmo
        # may be triggered by the same Build, or using both would be legal and look the same.
        snapshot = (game.state, len(game.log), game.rng.getstate())
        game.play(greedy_step(s, game.rng))
        t = game.state
        vp = [g for g in t.triggered if CARDS[g].effect.reward == "vp_tokens"]
        if t.current != seat or t.pending is not None or len(vp) != 1 or not t.main_done:
            game.rewind(*snapshot)
            return None
        game.play(Step("use", seat, gizmo=vp[0]))
        step = Step("use", seat, gizmo=vp[0])
        if breaks_only(game.state, step, code) is None:
            raise BreakError(f"injection {code}: the second use breaks other rules too")
        game.play(step, forced=True)
    else:
        raise BreakError(f"injection: no recipe for rule {code!r}")
    # The rule breaker ends the turn at once (no further gizmos), keeping the turn easy to read.
    try:
        game.play(Step("end_turn", seat))
    except IllegalStep:
        game.finish_turn()
    return step


def planned_game(players: int, seed: int, plan: tuple[tuple[str, int], ...]) -> PlayedGame:
    """A whole game of greedy players with the rule breaks of ``plan`` (code, earliest turn).

    A rule break is played on the first turn at or after its planned turn that allows it
    unambiguously (:func:`break_turn`), at least three turns after the previous one. For a Pick
    with a full ring, one player saves up (picks every turn) until their ring is full.
    """
    game = _Game(players, seed)
    todo = list(plan)
    done: list[Injected] = []
    last_injected = -10
    saver: int | None = None
    while not game.state.game_over:
        s = game.state
        if s.turn > 400:
            raise BreakError("the planned game did not end (400 turns)")
        due = [code for code, turn in todo if s.turn >= turn] if s.turn - last_injected >= 3 else []
        for code in due:
            turn, seat = s.turn, s.current
            step = break_turn(game, code)
            if step is not None:
                done.append(Injected(code, seat, turn, step))
                todo = [x for x in todo if x[0] != code]
                last_injected = turn
                saver = None if code == "RING_FULL" else saver
                break
        else:
            if "RING_FULL" in due and saver is None:
                saver = s.current
            if s.current == saver and s.pending is None and not s.main_done:
                picks = [x for x in legal_steps(s) if x.kind == "pick"]
                if picks:
                    game.play(picks[0])
            game.finish_turn()
    if todo:
        raise BreakError(f"the game ended before these rule breaks could be played: {[c for c, _ in todo]}")
    return PlayedGame(tuple(game.log), tuple(done), game.state)
