"""Tables as a camera would see them: perfect or noisy observations of known states, and whole
simulated games (with rule breaks injected on purpose) turned into observation sequences.

Used by the tests and the referee benchmark to feed the tracker the way a camera
pipeline would: each table for several frames, items missing, confidences dipping, a hand
covering a zone for a few frames, an occasional misread; the tables caught half-way through a
refill; an end-of-turn signal after each turn; optionally the dispenser's sensor events.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from referee.events import DispenserEvent, EndOfTurn
from referee.gizmos import IllegalStep, State, Step, apply, default_cards, force, legal_steps, new_game
from referee.gizmos.cards import COLORS
from referee.gizmos.rules import resolve_chance
from referee.gizmos.state import Counts
from referee.observation import (
    CardSighting,
    MarbleSighting,
    Observation,
    PlayerSighting,
    ReachSighting,
    SlotSighting,
)
from referee.simulation.breaks import END_CODES, VIOLATIONS, Injected, end_break, hidden_pick, start_break
from referee.simulation.players import TASTES, choose_step

CARDS = default_cards()


@dataclass(frozen=True, slots=True)
class Noise:
    """Per-frame probabilities of each kind of trouble."""

    missing: float = 0.0  # a zone reported as not seen
    dip: float = 0.0  # one item's confidence falls below the threshold
    hand: float = 0.0  # a hand starts covering a zone (it stays for `hand_frames` frames)
    hand_frames: int = 3
    misread: float = 0.0  # one marble color or card id read wrong in one frame

    @classmethod
    def default(cls) -> Noise:
        """The default noise level of the referee benchmark."""
        return cls(missing=0.03, dip=0.05, hand=0.03, hand_frames=3, misread=0.02)


@dataclass(frozen=True, slots=True)
class ReachNoise:
    """How a camera sees players' arms reach over the table (:class:`ReachSighting`): per
    gesture, and per frame of a gesture."""

    missed: float = 0.0  # a whole gesture not seen (too quick, blurred, under another arm)
    unknown_seat: float = 0.0  # a frame's sighting whose arm's side cannot be told
    wrong_seat: float = 0.0  # ... read as another seat's arm (a player leaning across)
    unknown_zone: float = 0.0  # a frame's hand over no zone the camera can tell ("table")
    wrong_zone: float = 0.0  # ... read over another zone (the arm on its way in or out)
    stray: float = 0.0  # per frame: a hand seen that is no move (pointing, leaning) at a random seat and zone

    @classmethod
    def default(cls) -> ReachNoise:
        """The default of the referee benchmark (docs/referee.md, Camera only): about what the
        vision stage measured on the recording, and gestures missed more often."""
        return cls(
            missed=0.05, unknown_seat=0.05, wrong_seat=0.01, unknown_zone=0.1, wrong_zone=0.05, stray=0.002
        )


#: A gesture: the seat whose arm reaches in and the zone its hand is over (:data:`REACH_ZONES`).
Gesture = tuple[int, str]


def reach_zone(state: State, step: Step) -> str | None:
    """Where the acting player's hand goes for ``step`` (``None``: no gesture, such as ending
    the turn or declining a triggered gizmo): the Row for a Pick, the tier's deck for a
    Research and for putting its cards back, the card's Display slot or the Archive for a File
    or Build (from the Research hand: the own Archive, or the own gizmos), the VP token supply,
    the dispenser or the gizmo itself for a gizmo used."""
    seat = step.player if step.player is not None else state.current
    k = step.kind
    if k == "pick":
        return "energy_row"
    if k == "research":
        return f"deck/{step.level or 1}"
    if k == "bottom":
        return f"deck/{state.pending.level if state.pending is not None else 1}"
    if k in ("file", "build"):
        for lvl, row in enumerate(state.display):
            if step.card in row:
                return f"display/{lvl + 1}/{row.index(step.card)}"
        if any(step.card in p.archive for p in state.players):
            return f"{seat}/archive"
        return f"{seat}/archive" if k == "file" else f"{seat}/gizmos"
    if k == "use" and step.gizmo is not None:
        reward = CARDS[step.gizmo].effect.reward
        return {"vp_tokens": f"{seat}/vp", "draw_random": "dispenser", "pick_row": "energy_row"}.get(
            reward, f"{seat}/gizmos"
        )
    return None


def _camera_zone(zone: str) -> str | None:
    """The :func:`zones` name of the view zone a reach's hand covers (a deck covers none)."""
    if zone == "energy_row":
        return "row"
    if zone.startswith("display/"):
        return "display"
    seat, _, part = zone.partition("/")
    if seat.isdigit():
        return {"ring": "ring", "archive": "archive", "gizmos": "gizmos", "vp": "vp"}[part] + seat
    return None


def _marbles(counts: Counts, conf: float) -> tuple[MarbleSighting, ...]:
    return tuple(MarbleSighting(COLORS[c], conf) for c in range(4) for _ in range(counts[c]))


def perfect_observation(
    state: State, time: float = 0.0, frame: int | None = None, conf: float = 0.99
) -> Observation:
    """Everything on the table, seen with confidence ``conf``."""
    display = tuple(
        SlotSighting(lvl + 1, s, c, conf) for lvl, row in enumerate(state.display) for s, c in enumerate(row)
    )
    players = tuple(
        PlayerSighting(
            seat=i,
            ring=_marbles(p.ring, conf),
            archive=tuple(CardSighting(c, conf) for c in p.archive),
            gizmos=tuple(CardSighting(c, conf) for c in p.gizmos),
            vp_tokens=(p.vp_tokens, conf),
        )
        for i, p in enumerate(state.players)
    )
    return Observation(
        time=time, display=display, energy_row=_marbles(state.row, conf), players=players, frame=frame
    )


def zones(players: int) -> list[str]:
    """Every zone a hand can cover: the Row, the Display and each player's ring, Archive,
    gizmos and VP tokens."""
    return ["row", "display"] + [
        f"{z}{i}" for i in range(players) for z in ("ring", "archive", "gizmos", "vp")
    ]


class Camera:
    """Frames of a table with noise; hands persist over frames like real ones."""

    def __init__(self, noise: Noise, seed: int = 0, reaches: ReachNoise | None = None) -> None:
        self.noise = noise
        self.rng = random.Random(seed)
        self.frame = 0
        self.covered: dict[str, int] = {}  # zone -> frames left under a hand
        self.hidden: set[str] = set()  # zones kept out of view until removed (a test's hand)
        #: Whether the camera reports reaching hands (``None``: it does not; the frames' reaches
        #: are ``None``), and how it errs. Drawn from a source of its own, so the rest of the
        #: noise is the same with or without.
        self.reach_noise = reaches
        self.reach_rng = random.Random(seed * 104_729 + 7)

    def gesture_seen(self) -> bool:
        """Whether the camera will see the next gesture at all (see :class:`ReachNoise`)."""
        n = self.reach_noise
        return n is not None and not (n.missed and self.reach_rng.random() < n.missed)

    def _reaches(self, players: int, gesture: Gesture | None) -> tuple[ReachSighting, ...] | None:
        n, rng = self.reach_noise, self.reach_rng
        if n is None:
            return None
        out = []
        if gesture is not None:
            seat: int | None = gesture[0]
            if n.unknown_seat and rng.random() < n.unknown_seat:
                seat = None
            elif n.wrong_seat and players > 1 and rng.random() < n.wrong_seat:
                seat = rng.choice([s for s in range(players) if s != gesture[0]])
            zone = gesture[1]
            if n.unknown_zone and rng.random() < n.unknown_zone:
                zone = "table"
            elif n.wrong_zone and rng.random() < n.wrong_zone:
                zone = rng.choice(["energy_row", "display/1/0", "deck/2", f"{gesture[0]}/gizmos"])
            out.append(ReachSighting(seat, zone, round(rng.uniform(0.6, 0.95), 3)))
        if n.stray and rng.random() < n.stray:
            zone = rng.choice(
                ["energy_row", "display/1/0", "deck/2", "table", f"{rng.randrange(players)}/ring"]
            )
            out.append(ReachSighting(rng.randrange(players), zone, round(rng.uniform(0.6, 0.95), 3)))
        return tuple(out)

    def shoot(
        self, state: State, time: float, gesture: Gesture | None = None, seen: bool = True
    ) -> Observation:
        """One frame of ``state`` (with ``gesture``: an arm reaching in, its hand hiding the zone
        it is over; reported among the frame's reaches if ``seen``)."""
        rng, n = self.rng, self.noise
        self.frame += 1
        reaches = self._reaches(state.num_players, gesture if seen else None)
        all_zones = zones(state.num_players)
        obs = perfect_observation(state, time, self.frame, conf=round(rng.uniform(0.9, 0.99), 3))
        if n.hand and rng.random() < n.hand:
            self.covered[rng.choice(all_zones)] = n.hand_frames
        hidden = {z for z, left in self.covered.items() if left > 0} | self.hidden
        under = _camera_zone(gesture[1]) if gesture is not None else None
        if under is not None:
            hidden.add(under)
        self.covered = {z: left - 1 for z, left in self.covered.items() if left > 1}
        if n.missing and rng.random() < n.missing:
            hidden.add(rng.choice(all_zones))
        dip = rng.choice(all_zones) if n.dip and rng.random() < n.dip else None
        misread = rng.choice(all_zones) if n.misread and rng.random() < n.misread else None

        def marbles(zone: str, ms: tuple[MarbleSighting, ...] | None) -> tuple[MarbleSighting, ...] | None:
            if zone in hidden or ms is None:
                return None
            if ms and zone == dip:
                i = rng.randrange(len(ms))
                ms = (*ms[:i], MarbleSighting(ms[i].color, 0.3), *ms[i + 1 :])
            if ms and zone == misread:
                i = rng.randrange(len(ms))
                wrong = rng.choice([c for c in COLORS if c != ms[i].color])
                ms = (*ms[:i], MarbleSighting(wrong, 0.9), *ms[i + 1 :])
            return ms

        def cards(zone: str, cs: tuple[CardSighting, ...] | None) -> tuple[CardSighting, ...] | None:
            if zone in hidden or cs is None:
                return None
            if cs and zone == dip:
                i = rng.randrange(len(cs))
                cs = (*cs[:i], CardSighting(cs[i].card, 0.3), *cs[i + 1 :])
            if cs and zone == misread:
                i = rng.randrange(len(cs))
                cs = (*cs[:i], CardSighting(rng.randrange(112), 0.9), *cs[i + 1 :])
            return cs

        display = obs.display
        if "display" in hidden:
            display = ()
        elif dip == "display" or misread == "display":
            i = rng.randrange(len(display))
            s = display[i]
            s = (
                replace(s, confidence=0.3)
                if dip == "display"
                else replace(s, card=rng.randrange(112), confidence=0.9)
            )
            display = (*display[:i], s, *display[i + 1 :])
        players = tuple(
            PlayerSighting(
                seat=p.seat,
                ring=marbles(f"ring{p.seat}", p.ring),
                archive=cards(f"archive{p.seat}", p.archive),
                gizmos=cards(f"gizmos{p.seat}", p.gizmos),
                vp_tokens=None
                if f"vp{p.seat}" in hidden or p.vp_tokens is None
                else (p.vp_tokens[0], 0.3 if dip == f"vp{p.seat}" else p.vp_tokens[1]),
            )
            for p in obs.players
        )
        return Observation(
            time=time,
            display=display,
            energy_row=marbles("row", obs.energy_row),
            players=players,
            frame=self.frame,
            reaches=reaches,
        )


# --------------------------------------------------------------------------- physical play


def physically(state: State, step: Step) -> tuple[State, list[IllegalStep]]:
    """What happens on the table when ``step`` is played, legal or not (random outcomes still
    owed): the step applied, or replayed with the rules it breaks."""
    try:
        return apply(state, step), []
    except IllegalStep:
        return force(state, step)


def tables_of(state: State, steps: list[Step], rng: random.Random) -> list[State]:
    """The tables a camera sees while ``steps`` are played: after each step, the table with its
    refills still owed (if any), then with them resolved from ``rng`` (unless chance steps
    follow in ``steps`` to say what came out)."""
    out = []
    for i, step in enumerate(steps):
        if step.is_chance:
            state = apply(state, step)
        else:
            state, _ = physically(state, step)
        out.append(state)
        given = i + 1 < len(steps) and steps[i + 1].is_chance
        if state.chance and not given:
            state = resolve_chance(state, rng)
            out.append(state)
    return out


# --------------------------------------------------------------------------- simulated games


@dataclass(slots=True)
class Moment:
    """A table as it stood for ``frames`` camera frames; ``gestures``: the arms that reached in
    to make it (a Research declined leaves the table as it was, but not the player's arm)."""

    state: State
    frames: int
    gestures: tuple[Gesture, ...] = ()


@dataclass(slots=True)
class TurnScript:
    """One turn (or the setup, or play after the end) as the camera and the sensors see it."""

    turn: int
    player: int
    moments: list[Moment]
    injected: Injected | None = None
    end_signal: bool = True
    sensors: list[DispenserEvent] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)  # what the players did, in order (no chance steps)

    @property
    def final(self) -> State:
        return self.moments[-1].state


#: Decides whether a rule-breaking table is really unexplainable by legal play (the simulator
#: only counts injections that are): ``legal(before, after, ends) -> bool``.
LegalCheck = Callable[[State, State, int], bool]


def _sensor_events(before: State, after: State, settled: State) -> list[DispenserEvent]:
    """What the dispenser board reports for one step: marbles paid back into the top, and the
    colors that rolled into the Row while it was refilled."""
    out = []
    paid = sum(after.dispenser) - sum(before.dispenser)
    if paid > 0:
        out.append(DispenserEvent("return", 0.0, count=paid))
    for c in range(4):
        out += [DispenserEvent("row_refill", 0.0, color=COLORS[c])] * (settled.row[c] - after.row[c])
    return out


def simulated_game(
    players: int,
    seed: int,
    violation_rate: float = 0.0,
    legal: LegalCheck | None = None,
    max_turns: int = 400,
    game_over_rate: float = 0.0,
    frames: tuple[int, int] = (1, 5),
    final_frames: int = 8,
    setup_frames: int = 30,
) -> Iterator[TurnScript]:
    """A seeded random game as the camera sees it, turn by turn (the setup first).

    Legal play by simple players (:func:`~referee.simulation.players.choose_step`,
    :data:`~referee.simulation.players.TASTES`); the referee is started on the set-up
    table, which stays ``setup_frames`` before the first move. About ``violation_rate`` of the
    turns carry one injected rule break
    (a class from :data:`.breaks.VIOLATIONS` that the table allows at that moment, chosen at random),
    kept only if ``legal`` confirms no legal play from the start of the turn explains the table
    it makes (before and after its refills) and, for a Pick, the Row shows it (a refill of the
    color taken hides it); the player then ends the turn. Intermediate
    tables stay ``frames`` (a random range) camera frames, the last table of a turn
    ``final_frames``. After the end, with probability ``game_over_rate``, a player takes a
    marble anyway (``GAME_OVER``).
    """
    rng = random.Random(seed)
    inject_rng = random.Random(seed * 7919 + 1)
    state = new_game(players)
    setup = resolve_chance(state, rng)
    yield TurnScript(-1, 0, [Moment(setup, setup_frames)], end_signal=False)
    state = setup
    turns = injected = 0
    counts: dict[str, int] = dict.fromkeys(VIOLATIONS, 0)

    def counts_as_injection(turn_start: State, before: State, step: Step, after: State) -> State | None:
        """The table after a rule-breaking step with its refills made, if the step counts as an
        injection: the Row shows it and no legal play from the start of the turn explains it."""
        settled = resolve_chance(after, rng)
        if hidden_pick(before, step, settled):
            return None
        if legal is not None and (legal(turn_start, after, 0) or legal(turn_start, settled, 0)):
            return None
        return settled

    def play(
        state: State,
        step: Step,
        after: State | None,
        moments: list[Moment],
        sensors: list[DispenserEvent],
        settled: State | None = None,
    ) -> State:
        """Play one step (``after``: its rule-breaking result, ``settled``: that with its refills
        made) and note the tables it shows."""
        played.append(step)
        zone = reach_zone(state, step)
        gestures = (
            () if zone is None else ((step.player if step.player is not None else state.current, zone),)
        )
        if after is None:
            after = apply(state, step)
        if after.chance:
            moments.append(Moment(after, rng.randint(*frames), gestures))
            gestures = ()
        if settled is None:
            settled = resolve_chance(after, rng)
        sensors.extend(_sensor_events(state, after, settled))
        moments.append(Moment(settled, rng.randint(*frames), gestures))
        return settled

    while not state.game_over and state.turn < max_turns:
        turn, seat = state.turn, state.current
        turn_start = state  # an injection counts only if nothing legal from here explains its table
        moments: list[Moment] = []
        sensors: list[DispenserEvent] = []
        played: list[Step] = []
        mark: Injected | None = None
        want = violation_rate and injected < violation_rate * (turns + 1)
        codes = list(VIOLATIONS[:-1]) if want else []
        inject_rng.shuffle(codes)
        codes.sort(key=lambda c: counts[c])  # the classes injected least so far first
        end: list[str] = []
        for i, code in enumerate(codes):
            if code in END_CODES:  # tried after the main action; so are the end codes after it
                end = [c for c in codes[i:] if c in END_CODES]
                break
            found = start_break(state, code, inject_rng)
            if found is None:
                continue
            step, after = found
            settled = counts_as_injection(turn_start, state, step, after)
            if settled is None:
                continue
            mark = Injected(code, step.player if step.player is not None else seat, turn)
            state = play(state, step, after, moments, sensors, settled)
            break
        # After a rule-breaking main action the player stops: what followed could otherwise
        # make the same table with a different rule broken, and the class would be a guess.
        stop = mark is not None and mark.code != "NOT_YOUR_TURN"
        while True:
            options = legal_steps(state)
            step = choose_step(options, rng, TASTES[seat % len(TASTES)])
            if stop:
                step = next((o for o in options if o.kind in ("end_turn", "skip", "bottom")), step)
            if step.kind == "end_turn" and mark is None and end and state.main_done and state.pending is None:
                for code in end:
                    found = end_break(state, code, inject_rng)
                    if found is None:
                        continue
                    bad, after = found
                    settled = counts_as_injection(turn_start, state, bad, after)
                    if settled is None:
                        continue
                    mark = Injected(code, seat, turn)
                    state = play(state, bad, after, moments, sensors, settled)
                    break
            if step.kind == "end_turn":
                state = apply(state, step)
                played.append(step)
                break
            state = play(state, step, None, moments, sensors)
        turns += 1
        if mark is not None:
            injected += 1
            counts[mark.code] += 1
        if not moments:  # nothing visible happened (e.g. a Research declined)
            moments.append(Moment(state, final_frames))
        else:
            moments[-1].frames = final_frames
        yield TurnScript(turn, seat, moments, mark, True, sensors, played)
    if state.game_over and game_over_rate and rng.random() < game_over_rate:
        seat = rng.randrange(players)
        colors = [c for c in range(4) if state.row[c]]
        if colors:
            pick = Step("pick", seat, color=rng.choice(colors))
            after, _ = force(state, pick)
            mark = Injected("GAME_OVER", seat, state.turn)
            moment = Moment(after, final_frames, ((seat, "energy_row"),))
            yield TurnScript(state.turn, seat, [moment], mark, False, steps=[pick])


# --------------------------------------------------------------------------- feeding a tracker


class Feeder:
    """Shows tables to a tracker through a camera, frame by frame, with the signals: scripted
    turns (:meth:`turn`), or a table played step by step by hand (:meth:`play`, tests).

    ``on_call(seconds)`` is told how long each tracker call took (the benchmark's timing).
    With ``signals`` off nobody signals the end of a turn (a camera alone)."""

    def __init__(
        self,
        tracker: Any,
        camera: Camera | None = None,
        fps: float = 10.0,
        sensors: bool = False,
        on_call: Callable[[float], None] | None = None,
        state: State | None = None,
        seed: int = 0,
        signals: bool = True,
    ) -> None:
        self.tracker = tracker
        self.signals = signals
        self.camera = camera or Camera(Noise())
        self.time = 0.0
        self.dt = 1.0 / fps
        self.sensors = sensors
        self.on_call = on_call
        self.state = state if state is not None else tracker.state
        self.rng = random.Random(seed)
        self.updates: list[Any] = []

    def _call(self, fn: Callable[..., Any], *args: object) -> Any:
        t0 = time.perf_counter()
        out = fn(*args)
        if self.on_call is not None:
            self.on_call(time.perf_counter() - t0)
        self.updates.append(out)
        return out

    def show(
        self, state: State | None = None, frames: int = 6, gesture: Gesture | None = None, seen: bool = True
    ) -> list[Any]:
        """``frames`` camera frames of one table (by default the current one), with an arm
        reaching in if ``gesture`` (its seat and zone) is given, reported if ``seen``; the updates."""
        if state is not None:
            self.state = state
        out = []
        for _ in range(frames):
            self.time += self.dt
            frame = self.camera.shoot(self.state, self.time, gesture, seen)
            out.append(self._call(self.tracker.observe, frame))
        return out

    def reach(self, seat: int, zone: str, frames: int = 2) -> list[Any]:
        """A player's arm reaching over ``zone`` while the table stays as it is (a Research
        declined, a hand over the Row before the marble is taken): ``frames`` frames."""
        return self.show(None, frames, (seat, zone))

    def gestures(self, moment: Moment) -> None:
        """The arms that reach in to make a moment's table, over the table before it: each for
        1-3 frames, or not at all when the camera misses it (its :class:`ReachNoise`). Only
        with a camera that reports hands."""
        for seat, zone in moment.gestures if self.camera.reach_noise is not None else ():
            frames = self.rng.randint(1, 3)
            self.show(None, frames, (seat, zone), seen=self.camera.gesture_seen())

    def play(self, *steps: Step, frames: int = 6, between: int = 0) -> list[Any]:
        """Play steps on the table, legal or not (random outcomes from the seeded source unless
        chance steps follow), showing each table passed ``between`` frames and the last one
        ``frames``; the updates."""
        tables = tables_of(self.state, list(steps), self.rng)
        out = []
        for table in tables[:-1]:
            out += self.show(table, between)
        return out + self.show(tables[-1], frames)

    def end_turn(self) -> Any:
        """The end-of-turn signal (the keyboard)."""
        return self._call(self.tracker.end_of_turn, EndOfTurn(self.time, "keyboard"))

    def sense(self, kind: str, **fields: Any) -> Any:
        """A dispenser sensor event now."""
        return self._call(self.tracker.dispenser, DispenserEvent(kind, self.time, **fields))

    def turn(self, script: TurnScript) -> None:
        """Every table of a turn (with the arms reaching in before each, if the camera reports
        hands), then the sensor events and the end-of-turn signal (if any)."""
        for moment in script.moments:
            self.gestures(moment)
            self.show(moment.state, moment.frames)
        if self.sensors:
            for event in script.sensors:
                self._call(self.tracker.dispenser, replace(event, time=self.time))
        if script.end_signal and self.signals:
            self.end_turn()
