"""A recorded Contrivance game, as a camera above the Workbench would film it: the bundled
recording of ``gizmos-referee demo --game contrivance``.

Three parts, each deterministic given the recording's seed:

1. **The game** (:func:`play_recording`): four Builders play a whole game through the engine
   (each step and each random outcome kept as the ground truth); on chosen turns one of them
   breaks a rule on purpose (:data:`INJECTIONS`): a tile placed in column 5 during the building
   phase, a Move that turns its tile, two Tool actions in one turn. The table after a break is
   the table as the player left it, and the game goes on from there.
2. **The film** (:class:`Moment`): each turn becomes frames of the table: still, then the acting
   Builder's hand over the squares they work on (those squares are not seen), then still again,
   and an end-of-turn signal; at the end the Contrivance tile is revealed.
3. **The camera**: a moment becomes a :class:`~referee.observation.WorkbenchObservation`. Until
   the Workbench renderer and reader (vision) take over, :func:`observe_truth` makes it from the
   ground truth with realistic noise (:class:`Noise`: squares not seen, readings of low
   confidence, one-frame misreads). The seam is :data:`Camera`: any ``Moment -> observation``
   function, such as rendering the moment's pixels and reading them back.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from referee.contrivance import CONTRIVANCE, State, Step, apply, legal_steps, new_game
from referee.contrivance.data import BUILDERS, COLUMNS, HAND_LIMIT, MAX_VALUE, POINTS, switch_on_card
from referee.contrivance.rules import sample
from referee.contrivance.state import Square, Tile, Workbench
from referee.events import EndOfTurn
from referee.observation import SquareSighting, TileSighting, WorkbenchObservation

FORMAT = "contrivance-recording"
VERSION = 1
NAMES: tuple[str, ...] = ("Ana", "Ben", "Cleo", "Dev")
#: The rules broken on purpose, each with the earliest turn (1-based) it may happen on.
INJECTIONS: tuple[tuple[str, int], ...] = (
    ("COLUMN_FIVE_IN_BUILDING", 6),
    ("ORIENTATION_CHANGED", 24),
    ("SECOND_ACTION", 36),
)
BOARD_CARDS = ("move", "rotate", "swap_component", "swap_points", *POINTS)


class RecordingError(RuntimeError):
    """The recording's spec cannot be played (an injection that found no turn for it)."""


@dataclass(frozen=True, slots=True)
class RecordingSpec:
    """What to record: the seed, the players, the rules broken on purpose, the frame rate."""

    seed: int = 19
    players: int = 4
    injections: tuple[tuple[str, int], ...] = INJECTIONS
    fps: int = 10
    max_turns: int = 300

    @property
    def names(self) -> tuple[str, ...]:
        return NAMES[: self.players]


@dataclass(frozen=True, slots=True)
class TurnTruth:
    """One turn as it really happened: who, every step (chance included) and the rule broken."""

    turn: int  # 1-based, building turns included (the referee's warnings count the same way)
    round: int
    player: int
    phase: str
    steps: tuple[Step, ...]
    code: str | None
    damage: int

    def to_json(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "round": self.round,
            "player": self.player,
            "phase": self.phase,
            "steps": [s.to_json() for s in self.steps],
            "code": self.code,
            "damage": self.damage,
        }


@dataclass(frozen=True, slots=True)
class Moment:
    """One frame's truth: the table, and the squares a hand covers (not seen). A renderer draws
    exactly this; :func:`observe_truth` reports it with noise."""

    frame: int
    time: float
    workbench: Workbench
    damage: int
    discard_top: str | None
    covered: frozenset[Square] = frozenset()
    damage_covered: bool = False
    hand: int | None = None  # the seat whose hand is over the table


@dataclass(frozen=True, slots=True)
class Signal:
    """Something besides a frame, in the recording's order: an end-of-turn signal, or the
    Contrivance tile's requirement read at the end by a person."""

    time: float
    end_of_turn: EndOfTurn | None = None
    reveal: int | None = None


@dataclass(slots=True)
class Recording:
    """The whole recorded game: ground truth and film."""

    spec: RecordingSpec
    builders: tuple[str, ...]
    turns: list[TurnTruth]
    final: State
    timeline: list[Moment | Signal] = field(default_factory=list)

    @property
    def names(self) -> tuple[str, ...]:
        return self.spec.names

    def frames(self) -> int:
        return sum(isinstance(m, Moment) for m in self.timeline)

    def scores(self) -> list[dict[str, Any]]:
        """The ground truth's final scoring, best first (the engine's table)."""
        return [row | {"name": self.names[row["seat"]]} for row in CONTRIVANCE.score_table(self.final)]

    def injections(self) -> list[dict[str, Any]]:
        return [{"turn": t.turn, "player": t.player, "code": t.code} for t in self.turns if t.code]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "seed": self.spec.seed,
            "names": list(self.names),
            "builders": list(self.builders),
            "turns": [t.to_json() for t in self.turns],
            "injections": self.injections(),
            "scores": self.scores(),
            "final": self.final.to_json(),
        }


# =========================================================================== the game


def _put(state: State, sq: Square, tile: Tile | None) -> State:
    grid = [list(row) for row in state.workbench]
    grid[sq[0] - 1][sq[1] - 1] = tile
    return replace(state, workbench=tuple(tuple(row) for row in grid))


def _probe_effect(state: State, seat: int, step: Step) -> State:
    """What ``step`` does to the Workbench whoever's turn it is and whatever the hand: how a
    Builder physically makes a second move the rules would refuse."""
    card = step.card or ""
    hands = tuple((card,) * HAND_LIMIT if k == seat else () for k in range(state.num_players))
    return apply(replace(state, hands=hands, current=seat, chance=(), switch_on=None), step)


def _choose(state: State, rng: random.Random) -> Step:
    """A Builder's step: the board Tools are played more often than passing, so the table moves."""
    options = legal_steps(state)
    board = [s for s in options if s.kind == "play" and s.card in BOARD_CARDS]
    if board and rng.random() < 0.75:
        return rng.choice(board)
    others = [s for s in options if s not in board]
    return rng.choice(others or options)


class _Game:
    """The game being recorded: the state, and every step with its chance outcomes."""

    def __init__(self, spec: RecordingSpec) -> None:
        self.rng = random.Random(spec.seed)
        self.state = new_game(spec.players)
        self.setup: list[Step] = []
        self.resolve(self.setup)

    def resolve(self, into: list[Step]) -> None:
        """Resolve the chance events waiting (not the final reveal: the referee is told that)."""
        while self.state.chance and self.state.chance[0][0] != "reveal":
            step = sample(self.state, self.rng)
            self.state = apply(self.state, step)
            into.append(step)

    def play(self, step: Step, into: list[Step]) -> None:
        self.state = apply(self.state, step)
        into.append(step)
        self.resolve(into)


def _inject(game: _Game, code: str, seat: int, steps: list[Step]) -> bool:
    """Break ``code`` on this turn if the table allows it; the table is left as the player left it."""
    s, rng = game.state, game.rng
    if code == "COLUMN_FIVE_IN_BUILDING" and s.phase == "building":
        step = _choose(s, rng)
        row = rng.randrange(s.num_players) + 1
        if s.tile_at((row, COLUMNS)) is not None or step.to is None:
            return False
        game.play(step, steps)
        tile = game.state.tile_at(step.to)
        game.state = _put(_put(game.state, step.to, None), (row, COLUMNS), tile)
        steps[steps.index(step)] = replace(step, to=(row, COLUMNS))  # what really happened
        return True
    if s.phase != "configuration" or s.switch_on is not None or s.chance or len(s.hands[seat]) != HAND_LIMIT:
        return False
    plays = [o for o in legal_steps(s) if o.kind == "play"]
    if code == "ORIENTATION_CHANGED":
        moves = [o for o in plays if o.card == "move"]
        if not moves:
            return False
        step = rng.choice(moves)
        game.play(step, steps)
        tile = game.state.tile_at(step.to or (0, 0))
        assert tile is not None and step.to is not None
        game.state = _put(game.state, step.to, replace(tile, facing=(tile.facing + 1) % 4))
        return True
    if code == "SECOND_ACTION":
        rotates = [o for o in plays if o.card == "rotate"]
        hand = list(s.hands[seat])
        if not rotates or "rotate" not in hand:
            return False
        hand.remove("rotate")
        second = next((c for c in hand if c in POINTS), None)
        if second is None:
            return False
        first = rng.choice(rotates)
        targets = [
            sq
            for sq, t in s.squares()
            if sq != first.at and 0 <= t.value + POINTS[second] <= MAX_VALUE  # the dial really moves
        ]
        if not targets:
            return False
        game.play(first, steps)
        step2 = Step("play", seat, second, at=rng.choice(targets))
        board = _probe_effect(game.state, seat, step2).workbench
        hands = list(game.state.hands)
        rest = list(hands[seat])
        rest.remove(second)
        hands[seat] = tuple(rest)
        game.state = replace(
            game.state,
            workbench=board,
            hands=tuple(hands),
            discard=tuple(sorted((*game.state.discard, second))),
        )
        steps.append(step2)
        return True
    raise RecordingError(f"injection: no recipe for rule {code!r}")


def play_recording(spec: RecordingSpec = RecordingSpec()) -> Recording:
    """Play and film the game of ``spec`` (deterministic); raises :class:`RecordingError` when
    an injection finds no turn or the game does not end within ``spec.max_turns`` turns."""
    game = _Game(spec)
    plan = list(spec.injections)
    turns: list[TurnTruth] = []
    film = _Film(spec)
    film.still(game.state, 6)
    while game.state.phase in ("building", "configuration"):
        s = game.state
        if s.turn >= spec.max_turns:
            raise RecordingError(f"seed {spec.seed}: the game did not end in {spec.max_turns} turns")
        seat, number = s.current, s.turn + 1
        before = s
        steps: list[Step] = []
        code = None
        due = [c for c, earliest in plan if number >= earliest]
        if due and (not turns or turns[-1].code is None) and _inject(game, due[0], seat, steps):
            code = due[0]
            plan = [(c, t) for c, t in plan if c != code]
        else:
            while game.state.turn == s.turn and game.state.phase in ("building", "configuration"):
                game.play(_choose(game.state, game.rng), steps)
        turns.append(
            TurnTruth(number, before.round, seat, before.phase, tuple(steps), code, game.state.damage)
        )
        film.discarded(steps)
        film.turn(before, game.state, seat)
    if plan:
        raise RecordingError(f"seed {spec.seed}: no turn for the injection(s) {[c for c, _ in plan]}")
    reveal = sample(game.state, game.rng)
    final = apply(game.state, reveal)
    turns[-1] = replace(turns[-1], steps=(*turns[-1].steps, reveal))
    film.still(final, 6)
    film.signal(Signal(film.clock(), reveal=reveal.value))
    builders = tuple(b or BUILDERS[0] for b in final.builders)
    return Recording(spec, builders, turns, final, film.timeline)


class _Film:
    """Turns become moments: the table still, a hand over the squares worked on, still again,
    then the end-of-turn signal."""

    def __init__(self, spec: RecordingSpec) -> None:
        self.spec = spec
        self.timeline: list[Moment | Signal] = []
        self.frame = 0
        self.top: str | None = None  # the discard pile's top card
        self.rng = random.Random(spec.seed + 1)

    def clock(self) -> float:
        return self.frame / self.spec.fps

    def moment(self, state: State, covered: frozenset[Square] = frozenset(), **more: Any) -> None:
        top = self.top if state.discard else None  # the engine keeps the pile as a multiset, not its order
        self.timeline.append(
            Moment(self.frame, self.clock(), state.workbench, state.damage, top, covered, **more)
        )
        self.frame += 1

    def discarded(self, steps: Sequence[Step]) -> None:
        """Follow the top card of the discard pile through a turn's steps (the last card discarded)."""
        for step in steps:
            if step.kind in ("redraw", "play"):
                self.top = step.card
            elif step.kind == "switch_on" and step.value is not None:
                self.top = switch_on_card(step.value)

    def still(self, state: State, frames: int) -> None:
        for _ in range(frames):
            self.moment(state)

    def signal(self, signal: Signal) -> None:
        self.timeline.append(signal)

    def turn(self, before: State, after: State, seat: int) -> None:
        changed = {
            (r + 1, c + 1)
            for r in range(before.num_players)
            for c in range(COLUMNS)
            if before.workbench[r][c] != after.workbench[r][c]
        }
        rows = before.num_players
        near = {(r, c + d) for r, c in changed for d in (-1, 1) if 1 <= c + d <= COLUMNS}
        covered = frozenset(changed | {sq for sq in near if self.rng.random() < 0.5 and sq[0] <= rows})
        if changed:
            for _ in range(self.rng.randint(4, 7)):
                self.moment(before if self.rng.random() < 0.5 else after, covered, hand=seat)
        if after.damage != before.damage:
            for _ in range(self.rng.randint(3, 5)):
                self.moment(after, frozenset(), damage_covered=True, hand=seat)
        self.still(after, self.rng.randint(4, 6))
        self.signal(Signal(self.clock(), end_of_turn=EndOfTurn(self.clock(), source="button", player=seat)))
        self.still(after, 2)


# =========================================================================== the camera

#: A camera: a moment of the table as a Workbench observation (ground truth with noise, or the
#: moment rendered and read back by the vision reader).
Camera = Callable[[Moment], WorkbenchObservation]


@dataclass(frozen=True, slots=True)
class Noise:
    """Per-frame, per-square probabilities of each kind of trouble."""

    missing: float = 0.02  # the square not reported (glare, a sleeve)
    faint: float = 0.03  # the reading below the tracker's threshold (unknown)
    unsure: float = 0.04  # the reading between the threshold and "sure"
    misread: float = 0.01  # a wrong facing or dial value read confidently, for one frame

    @classmethod
    def none(cls) -> Noise:
        return cls(0.0, 0.0, 0.0, 0.0)


def _sighting(
    tile: Tile | None, rng: random.Random, noise: Noise
) -> tuple[TileSighting | None, float] | None:
    """A square as read, with its confidence; ``None``: not reported."""
    u = rng.random()
    if u < noise.missing:
        return None
    conf = (
        0.5
        if u < noise.missing + noise.faint
        else 0.75
        if u < noise.missing + noise.faint + noise.unsure
        else 0.97
    )
    if tile is None:
        return None, conf
    facing, value = tile.facing, tile.value
    if rng.random() < noise.misread:
        if rng.random() < 0.5:
            facing = (facing + rng.choice((1, 2, 3))) % 4
        else:
            value = (value + rng.choice((1, 2))) % (MAX_VALUE + 1)
    return TileSighting(tile.builder, tile.double, facing, value, conf, conf, conf), 0.98


def observe_truth(noise: Noise = Noise(), seed: int = 0) -> Camera:
    """The camera made from the ground truth: every square outside the hand's reach reported with
    :class:`Noise`; covered squares and a covered Damage track are not reported."""
    rng = random.Random(seed)

    def camera(m: Moment) -> WorkbenchObservation:
        squares = []
        for r, row in enumerate(m.workbench):
            for c, tile in enumerate(row):
                if (r + 1, c + 1) in m.covered:
                    continue
                read = _sighting(tile, rng, noise)
                if read is not None:
                    squares.append(SquareSighting(r + 1, c + 1, read[0], read[1]))
        damage = None if m.damage_covered else (max(0, min(10, m.damage)), 0.97)
        top = None if m.discard_top is None else (m.discard_top, 0.9)
        return WorkbenchObservation(m.time, tuple(squares), damage, top, source="truth", frame=m.frame)

    return camera


def inputs(recording: Recording, camera: Camera) -> Iterator[WorkbenchObservation | Signal]:
    """The recording as the referee receives it: observations and signals, in order."""
    for item in recording.timeline:
        yield camera(item) if isinstance(item, Moment) else item
