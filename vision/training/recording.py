"""The bundled recording: a whole 3-player game, played by the rules engine and filmed as a camera would.

Three parts, each deterministic given the recording's seed:

1. **The game** (:func:`play_game`): three greedy players play a complete game (about 20
   rounds); on chosen turns one of them breaks a rule on purpose (a Pick with a full ring, a
   second main action, an underpaid Build, a gizmo used twice), replayed through
   :func:`referee.gizmos.force`. Every step, random outcome and the final scores are kept as
   the ground truth. The players and the rule breaks are the simulation's
   (:mod:`referee.simulation.players`, :mod:`referee.simulation.breaks`).
2. **The film** (:func:`film_game`): each step becomes what happens on a real table: a player's
   hand reaches in from their side, takes and puts things, leaves; the Energy Row refills from
   the dispenser; the player thinks, then presses the dispenser's turn button. The dispenser
   board's events (Row refills, blind draws, marbles returned, the button) are logged at the
   frame they happen.
3. **The pixels** (:func:`render`): one camera pose, lens and lighting for the whole game, the
   table drawn by :mod:`vision.training.synth`, the hand of :mod:`vision.training.synth` moved along its path,
   fresh sensor noise on every frame, JPEG frames on disk.

:func:`ensure_recording` renders it on first use (with progress) into ``data/recording/`` and
reuses it afterwards; the cache key covers the spec and the source of everything the pixels
depend on, so a changed renderer or rule engine regenerates it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import random
import shutil
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.gizmos import (
    State,
    default_cards,
    ranking,
)
from referee.gizmos.cards import COLORS
from referee.observation import Observation, PlayerSighting
from referee.simulation.breaks import BreakError, Played, PlayedGame, planned_game
from vision.errors import VisionError
from vision.geometry import CANON_PX_PER_MM, CANON_SIZE, canonical_from_image, covered_share, covered_zones
from vision.paths import LOCATIONS, source_file
from vision.progress import Progress
from vision.training.cachelock import render_lock
from vision.training.synth import (
    PlayerLayout,
    RenderSettings,
    SceneObject,
    TableLayout,
    _draw_table,
    _hand,
    camera_homography,
    ground_truth,
    photograph,
)
from vision.zones import COLUMN_ORDER, Zones, default_zones

CARDS = default_cards()
RECORDING_ROOT = LOCATIONS.data / "recording"
FORMAT = "gizmos-recording"
VERSION = 1
NAMES: tuple[str, ...] = ("Ana", "Ben", "Cleo", "Dev")

#: Where the dispenser sits on the table (mm): returned marbles go in its top, its button ends a turn.
DISPENSER_TOP: tuple[float, float] = (1025.0, 330.0)
DISPENSER_BUTTON: tuple[float, float] = (1070.0, 430.0)
TOKEN_SUPPLY: tuple[float, float] = (175.0, 380.0)
MAX_COLUMN = 6  # built gizmos a dashboard column holds before it runs off the table


class RecordingError(VisionError):
    """The recording cannot be made or read (the message says which file or why)."""


@dataclass(frozen=True, slots=True)
class RecordingSpec:
    """What to record. ``injections`` names the rule broken on purpose and the earliest turn for it."""

    seed: int = 14
    players: int = 3
    fps: int = 10
    size: tuple[int, int] = (1280, 720)
    camera_seed: int = 11
    injections: tuple[tuple[str, int], ...] = (
        ("SECOND_MAIN_ACTION", 8),
        ("RING_FULL", 18),
        ("UNDERPAID", 28),
        ("GIZMO_ALREADY_USED", 36),
    )
    jpeg_quality: int = 85
    noise_sigma: float = 2.5

    @property
    def names(self) -> tuple[str, ...]:
        return NAMES[: self.players]

    def key(self) -> str:
        """A digest of the spec and of every source file the recording depends on."""
        h = hashlib.sha256(json.dumps(dataclasses.asdict(self), sort_keys=True).encode())
        for path in _SOURCES:
            h.update(path.read_bytes())
        return h.hexdigest()[:16]


_SOURCES: tuple[Path, ...] = tuple(
    sorted(
        [
            Path(__file__),
            source_file("vision.training.synth"),
            source_file("vision.geometry"),
            source_file("vision.faces"),
            source_file("vision.zones"),
            *source_file("referee.gizmos").parent.glob("*.py"),
            *(source_file("referee.gizmos").parent / "data").glob("*.json"),
            source_file("referee.simulation.players"),
            source_file("referee.simulation.breaks"),
        ]
    )
)


# ============================================================================ 1. the game


def play_game(spec: RecordingSpec) -> PlayedGame:
    """Play the recording's game (deterministic given the spec): greedy players with the spec's
    rule breaks, by :func:`referee.simulation.breaks.planned_game`."""
    try:
        return planned_game(spec.players, spec.seed, spec.injections)
    except BreakError as exc:
        raise RecordingError(str(exc)) from exc


# ============================================================================ 2. the film


@dataclass(frozen=True, slots=True)
class Hand:
    """A hand in one frame: which rendered hand (its seed) and where its fingertips are (image px)."""

    seed: int
    tip: tuple[float, float]


@dataclass(frozen=True, slots=True)
class FrameSpec:
    """One frame: its time, which table it shows and the hand over it, if any."""

    time: float
    table: int
    hand: Hand | None = None


@dataclass(frozen=True, slots=True)
class SensorEvent:
    """One line the dispenser board sends: ``row``, ``draw``, ``return`` or ``button``."""

    time: float
    frame: int
    kind: str
    color: str | None = None
    colors: tuple[str, ...] = ()
    count: int = 0

    def to_json(self) -> dict[str, Any]:
        keep = ("time", "frame", "kind")
        return {k: v for k, v in dataclasses.asdict(self).items() if k in keep or v not in (None, (), 0)}


@dataclass(frozen=True, slots=True)
class Moment:
    """Where a step of the game becomes visible and settled: the first frame after its hand left."""

    step: int  # index into the game's steps
    frame: int


@dataclass(slots=True)
class Film:
    """The game as frames (tables and hands), dispenser events, and when each step was complete."""

    fps: int
    homography: np.ndarray
    tables: list[TableLayout] = field(default_factory=list)
    frames: list[FrameSpec] = field(default_factory=list)
    events: list[SensorEvent] = field(default_factory=list)
    moments: list[Moment] = field(default_factory=list)
    turn_frames: list[int] = field(default_factory=list)  # the first frame of each turn


def layout_of(state: State, row: Sequence[str]) -> TableLayout:
    """The table a state shows, with the Energy Row in its physical order (left to right)."""
    display = tuple(
        (lvl + 1, slot, card) for lvl, cards in enumerate(state.display) for slot, card in enumerate(cards)
    )
    players = []
    for seat, p in enumerate(state.players):
        cols = p.columns()
        players.append(
            PlayerLayout(
                seat,
                tuple(tuple(cols.get(kind, ())) for kind in COLUMN_ORDER),
                tuple(p.archive),
                tuple(COLORS[c] for c in range(4) for _ in range(p.ring[c])),
                p.vp_tokens % 5,
                p.vp_tokens // 5,
            )
        )
    return TableLayout(
        display=display,
        energy_row=tuple(row),
        players=tuple(players),
        decks=tuple(lvl for lvl in (1, 2, 3) if state.deck_size(lvl) > 0),
    )


def _centre(rect: tuple[float, float, float, float]) -> tuple[float, float]:
    return (rect[0] + rect[2] / 2, rect[1] + rect[3] / 2)


class _Camera:
    """Table mm -> image px for the fixed camera, and the hands that can reach in."""

    def __init__(self, h: np.ndarray, size: tuple[int, int], zones: Zones) -> None:
        self.h = h
        self.size = size
        self.zones = zones

    def px(self, mm: tuple[float, float]) -> tuple[float, float]:
        p = self.h @ np.array([mm[0], mm[1], 1.0])
        return (float(p[0] / p[2]), float(p[1] / p[2]))

    def hand_seed(self, seat: int, first: int) -> int:
        """The first hand seed from ``first`` on whose arm comes in from the seat's side of the table."""
        sz = self.zones.seat(seat)
        side_x = self.px(sz.to_table(170.0, 100.0))[0]
        edge = 1 if sz.rotation == 180 else 0
        for seed in range(first, first + 20_000):
            e, start = hand_start(seed, self.size, self.zones)
            if e == edge and abs(start[0] - side_x) < 140:
                return seed
        raise RecordingError(f"no hand found for seat {seat}")


def hand_start(seed: int, size: tuple[int, int], zones: Zones) -> tuple[int, tuple[float, float]]:
    """The edge (0 bottom, 1 top, 2 left, 3 right) and point a hand of ``vision.training.synth._hand``
    with this seed comes in from, and where it would reach on its own (mm); see :func:`_draw_hand`."""
    e, start, _ = _hand_draws(seed, size, zones)
    return e, start


def _hand_draws(
    seed: int, size: tuple[int, int], zones: Zones
) -> tuple[int, tuple[float, float], tuple[float, float]]:
    """Replays the first draws of ``vision.training.synth._hand`` (target, edge, start) for a seed."""
    rng = np.random.default_rng(seed)
    iw, ih = size
    tw, th = zones.size
    target = (rng.uniform(0.1, 0.9) * tw, rng.uniform(0.1, 0.9) * th)
    edge = int(rng.integers(0, 4))
    starts = [
        (rng.uniform(0, iw), ih + 40),
        (rng.uniform(0, iw), -40),
        (-40, rng.uniform(0, ih)),
        (iw + 40, rng.uniform(0, ih)),
    ]
    return edge, (float(starts[edge][0]), float(starts[edge][1])), target


Waypoint = tuple[tuple[float, float], TableLayout | None, list[tuple[str, dict[str, Any]]]]


class _Director:
    """Turns the game's steps into frames: pauses, hand gestures, instant changes, sensor events."""

    def __init__(self, spec: RecordingSpec, camera: _Camera, first: TableLayout) -> None:
        self.spec = spec
        self.cam = camera
        self.rng = random.Random(spec.seed * 7919 + 1)
        self.film = Film(spec.fps, camera.h, tables=[first])
        self.table = 0
        self.pending_moments: list[int] = []
        self.gestures = 0

    # -- primitives -------------------------------------------------------------------------

    def _frame(self, hand: Hand | None = None) -> int:
        f = len(self.film.frames)
        self.film.frames.append(FrameSpec(round(f / self.spec.fps, 3), self.table, hand))
        if hand is None and self.pending_moments:
            self.film.moments += [Moment(i, f) for i in self.pending_moments]
            self.pending_moments = []
        return f

    def show(self, layout: TableLayout) -> None:
        """The table changes (from the next frame on)."""
        if layout != self.film.tables[self.table]:
            self.film.tables.append(layout)
            self.table = len(self.film.tables) - 1

    def event(self, kind: str, **fields: Any) -> None:
        f = len(self.film.frames)
        self.film.events.append(SensorEvent(round(f / self.spec.fps, 3), f, kind, **fields))

    def pause(self, frames: int) -> None:
        for _ in range(frames):
            self._frame()

    def gesture(self, seat: int, waypoints: list[Waypoint]) -> None:
        """A hand comes in from the seat's side, visits each waypoint (where the table may
        change and events fire), and leaves."""
        self.gestures += 1
        seed = self.cam.hand_seed(seat, 1_000 * (self.spec.seed + 1) + 37 * self.gestures)
        _, start, _ = _hand_draws(seed, self.spec.size, self.cam.zones)
        pts = [self.cam.px(mm) for mm, _, _ in waypoints]

        def toward(p: tuple[float, float], f: float) -> tuple[float, float]:
            return (start[0] + f * (p[0] - start[0]), start[1] + f * (p[1] - start[1]))

        for f in (0.45, 0.8):
            self._frame(Hand(seed, toward(pts[0], f)))
        for i, ((_, layout, events), p) in enumerate(zip(waypoints, pts, strict=True)):
            if i:
                prev = pts[i - 1]
                self._frame(Hand(seed, ((prev[0] + p[0]) / 2, (prev[1] + p[1]) / 2)))
            if layout is not None:
                self.show(layout)
            for kind, fields in events:
                self.event(kind, **fields)
            self._frame(Hand(seed, p))
        for f in (0.75, 0.4):
            self._frame(Hand(seed, toward(pts[-1], f)))


def _slot_mm(zones: Zones, level: int, slot: int) -> tuple[float, float]:
    for lv, sl, rect in zones.display:
        if (lv, sl) == (level, slot):
            return _centre(rect)
    raise RecordingError(f"zones: no Display slot {level}/{slot}")


def _deck_mm(zones: Zones, level: int) -> tuple[float, float]:
    return _centre(dict(zones.decks)[level])


def _card_place(state: State, card: int, zones: Zones) -> tuple[float, float]:
    """Where a card lies now: its Display slot, or an Archive."""
    for lvl, row in enumerate(state.display):
        for slot, c in enumerate(row):
            if c == card:
                return _slot_mm(zones, lvl + 1, slot)
    for seat, p in enumerate(state.players):
        if card in p.archive:
            return _centre(zones.seat(seat).archive)
    return _hand_rest(zones, state.current)


def _hand_rest(zones: Zones, seat: int) -> tuple[float, float]:
    """Where a player holds cards drawn by Research: over their own area."""
    return zones.seat(seat).to_table(300.0, 150.0)


def _column_mm(zones: Zones, seat: int, card: int) -> tuple[float, float]:
    sz = zones.seat(seat)
    col = COLUMN_ORDER.index(CARDS[card].type)
    return sz.to_table(3.0 + 66.0 * col + 31.5, 120.0)


def film_game(spec: RecordingSpec, game: PlayedGame, h: np.ndarray, zones: Zones | None = None) -> Film:
    """The frames, sensor events and step moments of a played game (no pixels yet)."""
    z = zones or default_zones()
    first = game.steps[0].before
    # The setup happened before the camera started: the film opens on the dealt table.
    setup_end = next((i for i, p in enumerate(game.steps) if not p.step.is_chance), len(game.steps))
    start_state = game.steps[setup_end - 1].after if setup_end else first
    row: list[str] = []
    for p in game.steps[:setup_end]:
        if p.step.kind == "dispense":
            row.append(COLORS[p.step.color or 0])
    d = _Director(spec, _Camera(h, spec.size, z), layout_of(start_state, row))
    for color in row:  # the players filled the Row from the dispenser while setting up
        d.event("row", color=color)
    d.film.moments += [Moment(i, 0) for i in range(setup_end)]
    rng = d.rng
    d.pause(12)
    turn = -1
    i = setup_end
    steps = game.steps
    while i < len(steps):
        played = steps[i]
        before, after, step = played.before, played.after, played.step
        if before.turn != turn:
            turn = before.turn
            d.film.turn_frames.append(len(d.film.frames))
            d.pause(rng.randint(2, 4))
        # the random outcomes this step causes come with it
        j = i + 1
        while j < len(steps) and steps[j].step.is_chance:
            j += 1
        outcome = steps[i + 1 : j]
        at = _film_step(d, z, played, outcome, row, rng)
        if at is None:
            d.pending_moments += list(range(i, j))
        else:
            d.film.moments += [Moment(x, at) for x in range(i, j)]
        if step.kind == "end_turn":
            if after.game_over:
                d.pause(15)
        elif not after.game_over:
            d.pause(rng.choice((1, 1, 2, 2, 5)))
        i = j
    d.pause(10)
    if d.pending_moments:
        raise RecordingError("film: steps left without a frame showing them")
    return d.film


def _film_step(
    d: _Director, z: Zones, played: Played, outcome: tuple[Played, ...], row: list[str], rng: random.Random
) -> int | None:
    """The gestures and events of one player step and the random outcomes it causes. Returns the
    frame where the step is complete when that is not the first frame after the hand left (the
    turn button's press)."""
    step, before, after = played.step, played.before, played.after
    seat = before.current
    state = after
    refills: list[str] = []
    follow: list[tuple[Played, str]] = []  # (outcome, what it is)
    for o in outcome:
        head = o.before.chance[0][0]
        if o.step.kind == "dispense" and head == "row":
            refills.append(COLORS[o.step.color or 0])
        else:
            follow.append((o, head))
    final = outcome[-1].after if outcome else after

    def look(s: State, r: Sequence[str] | None = None) -> TableLayout:
        return layout_of(s, row if r is None else r)

    k = step.kind
    if k == "pick":
        color = COLORS[step.color or 0]
        pos = row.index(color)
        src = (z.energy_row[0] + 15 + 28 * pos, z.energy_row[1] + z.energy_row[3] / 2)
        del row[pos]
        d.gesture(seat, [(src, None, []), (_centre(z.seat(seat).ring), look(state), [])])
    elif k == "file":
        d.gesture(
            seat,
            [
                (_card_place(before, step.card or 0, z), None, []),
                (_centre(z.seat(seat).archive), look(state), []),
            ],
        )
    elif k == "build":
        # Pay first (the marbles go into the dispenser's top), then take the card to the column:
        # one gesture, so the table never shows a card built but unpaid.
        card = step.card or 0
        paid = [COLORS[c] for c in range(4) for _ in range((step.pay or (0, 0, 0, 0))[c])]
        pay: list[Waypoint] = []
        if paid:
            ret = [("return", {"count": len(paid), "colors": tuple(paid)})]
            picked_up = look(before)
            ring = look(state).players[seat].ring
            picked_up = dataclasses.replace(
                picked_up,
                players=tuple(
                    dataclasses.replace(pl, ring=ring) if pl.seat == seat else pl for pl in picked_up.players
                ),
            )
            pay = [(_centre(z.seat(seat).ring), picked_up, []), (DISPENSER_TOP, None, ret)]
        take: list[Waypoint] = [
            (_card_place(before, card, z), None, []),
            (_column_mm(z, seat, card), look(state), []),
        ]
        d.gesture(seat, pay + take)
    elif k == "research":
        d.gesture(seat, [(_deck_mm(z, step.level or 1), None, [])])
    elif k == "bottom":
        if before.pending is not None and len(before.pending.hand) == 2:  # the last card goes by itself
            d.gesture(seat, [(_deck_mm(z, before.pending.level), None, [])])
    elif k == "use" and CARDS[step.gizmo or 0].effect.reward == "vp_tokens":
        d.gesture(seat, [(TOKEN_SUPPLY, None, []), (_centre(z.seat(seat).vp), look(state), [])])
    elif k == "end_turn":
        d.pause(rng.randint(8, 11))
        d.gesture(seat, [(DISPENSER_BUTTON, None, [("button", {})])])
        d.show(look(final))
        return d.film.events[-1].frame
    # a Row refill rolls in from the dispenser as the hand leaves
    if refills:
        row.extend(refills)
        for color in refills:
            d.event("row", color=color)
    for o, head in follow:
        if head == "draw":  # a marble drawn blind from the dispenser into the ring
            color = COLORS[o.step.color or 0]
            d.pause(1)
            d.gesture(
                o.before.current,
                [
                    (DISPENSER_TOP, None, [("draw", {"color": color})]),
                    (_centre(z.seat(o.before.current).ring), look(o.after), []),
                ],
            )
        elif head == "display":  # the player refills the Display from the deck
            _, level, slot = o.before.chance[0]
            d.pause(1)
            d.gesture(seat, [(_deck_mm(z, level), None, []), (_slot_mm(z, level, slot), look(o.after), [])])
    d.show(look(final))
    return None


# ============================================================================ 3. the pixels


@dataclass(frozen=True, slots=True)
class Stage:
    """What stays fixed for the whole recording: the camera, its lens and the room's light."""

    homography: np.ndarray  # table mm -> image px
    light: np.ndarray  # per-pixel gain (h, w, 3): lamp gradient, vignetting, color cast
    size: tuple[int, int]


def camera_of(spec: RecordingSpec, zones: Zones | None = None) -> np.ndarray:
    """The recording's camera: about 95 cm above the table, slightly tilted (table mm -> image px)."""
    settings = RenderSettings(size=spec.size, height_mm=(950.0, 950.0), max_tilt_deg=10.0, max_yaw_deg=2.0)
    return camera_homography(np.random.default_rng(spec.camera_seed), zones or default_zones(), settings)


@cache
def stage_of(spec: RecordingSpec) -> Stage:
    """The fixed camera and light of a recording."""
    w, h = spec.size
    rng = np.random.default_rng(spec.camera_seed + 1)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = rng.uniform(0, 2 * math.pi)
    ramp = math.cos(a) * (xx / w - 0.5) + math.sin(a) * (yy / h - 0.5)
    gain = rng.uniform(0.92, 1.05) * (1 + rng.uniform(0.12, 0.25) * ramp)
    vignette = 1 - rng.uniform(0.08, 0.18) * ((xx / w - 0.5) ** 2 + (yy / h - 0.5) ** 2) * 2
    cast = rng.uniform(0.95, 1.05, 3).astype(np.float32)
    light = (gain * vignette)[..., None] * cast[None, None, :]
    return Stage(camera_of(spec), light.astype(np.float32), spec.size)


#: Card placement noise of the recorded table: small, as cards are laid down carefully once.
TABLE_SETTINGS = RenderSettings(jitter_mm=0.6, jitter_deg=0.6)


def truth_of(layout: TableLayout) -> Observation:
    """What a perfect pipeline reports for a table with nothing hidden (confidence 1)."""
    rings = {
        f"{pl.seat}/ring": [SceneObject(f"marble_{c}", (0.0, 0.0, 0.0, 0.0), color=c) for c in pl.ring]
        for pl in layout.players
    }
    return ground_truth(layout, rings, set())


def render_table_image(
    spec: RecordingSpec, layout: TableLayout, zones: Zones | None = None
) -> tuple[np.ndarray, list[SceneObject], Observation]:
    """One table as the fixed camera sees it with no hand: the image, its objects (mm) and truth.

    The table's texture and the light's direction come first from the same seed every time,
    so they never change during the recording."""
    z = zones or default_zones()
    stage = stage_of(spec)
    from vision.faces import face_set

    canvas, objects, _ = _draw_table(
        layout, z, np.random.default_rng(spec.camera_seed), TABLE_SETTINGS, face_set()
    )
    img = photograph(canvas, stage.homography, spec.size)
    img = cv2.GaussianBlur(img, (0, 0), 0.6)  # the lens
    img = np.clip(img.astype(np.float32) * stage.light, 0, 255).astype(np.uint8)
    return img, objects, truth_of(layout)


def draw_hand(
    spec: RecordingSpec, image: np.ndarray, hand: Hand, zones: Zones | None = None
) -> tuple[float, ...]:
    """Draw a hand (``synth``'s) with its fingertips at ``hand.tip``; returns its box in table mm.

    ``_hand`` reaches for a target it draws from its seed; shifting the homography it projects
    with moves that target onto ``hand.tip`` while the arm still comes in from the same edge."""
    z = zones or default_zones()
    h = stage_of(spec).homography
    _, _, target = _hand_draws(hand.seed, spec.size, z)
    p = h @ np.array([target[0], target[1], 1.0])
    dx, dy = hand.tip[0] - p[0] / p[2], hand.tip[1] - p[1] / p[2]
    shift = np.array([[1.0, 0, dx], [0, 1.0, dy], [0, 0, 1.0]])
    mask = _hand(np.random.default_rng(hand.seed), image, shift @ h, z)
    tx, ty = round(hand.tip[0]), round(hand.tip[1])
    if 0 <= tx < spec.size[0] and 0 <= ty < spec.size[1] and mask[ty, tx] < 128:
        raise RecordingError(
            "vision.training.synth._hand no longer draws the hand this recording expects; "
            "update vision/training/recording.py"
        )
    canon = cv2.warpPerspective(mask, canonical_from_image(h), CANON_SIZE, flags=cv2.INTER_NEAREST)
    ys, xs = np.nonzero(canon > 127)
    if not len(xs):
        return ()
    return (
        round(xs.min() / CANON_PX_PER_MM, 1),
        round(ys.min() / CANON_PX_PER_MM, 1),
        round((xs.max() + 1) / CANON_PX_PER_MM, 1),
        round((ys.max() + 1) / CANON_PX_PER_MM, 1),
    )


@cache
def _noise_bank(spec: RecordingSpec) -> tuple[np.ndarray, ...]:
    w, h = spec.size
    rng = np.random.default_rng(spec.seed + 99)
    return tuple(
        np.round(rng.standard_normal((h, w, 3), dtype=np.float32) * spec.noise_sigma).astype(np.int16)
        for _ in range(6)
    )


def sensor_noise(spec: RecordingSpec, image: np.ndarray, frame: int) -> np.ndarray:
    """Fresh sensor noise for one frame (a noise field from a small bank, shifted per frame)."""
    bank = _noise_bank(spec)
    h, w = image.shape[:2]
    noise = np.roll(bank[frame % len(bank)], ((frame * 37) % h, (frame * 101) % w), axis=(0, 1))
    return np.clip(image.astype(np.int16) + noise, 0, 255).astype(np.uint8)


def _render_run(
    job: tuple[RecordingSpec, TableLayout, list[tuple[int, Hand | None]], str],
) -> tuple[list[tuple[str, tuple[float, ...]]], list[tuple[int, tuple[float, ...]]], dict[str, Any]]:
    """Render one table and the frames that show it (a worker's job)."""
    spec, layout, frames, out = job
    base, objects, truth = render_table_image(spec, layout)
    boxes = []
    for index, hand in frames:
        img = base.copy()
        box: tuple[float, ...] = ()
        if hand is not None:
            box = draw_hand(spec, img, hand)
        img = sensor_noise(spec, img, index)
        if not cv2.imwrite(
            str(Path(out) / f"{index:06d}.jpg"), img, [cv2.IMWRITE_JPEG_QUALITY, spec.jpeg_quality]
        ):
            raise RecordingError(f"cannot write frame {index} under {out}")
        boxes.append((index, box))
    objs = [(o.cls, tuple(round(v, 2) for v in o.box_mm)) for o in objects]
    return objs, boxes, truth.to_json()


def render(spec: RecordingSpec, out: Path, workers: int = 2, quiet: bool = False) -> Path:
    """Play, film and render the recording into ``out`` (frames/ and recording.json)."""
    game = play_game(spec)
    stage = stage_of(spec)
    film = film_game(spec, game, stage.homography)
    frames_dir = out / "frames"
    frames_dir.mkdir(parents=True, exist_ok=True)
    runs: dict[int, list[tuple[int, Hand | None]]] = {}
    for i, f in enumerate(film.frames):
        runs.setdefault(f.table, []).append((i, f.hand))
    jobs = [(spec, film.tables[t], runs.get(t, []), str(frames_dir)) for t in range(len(film.tables))]
    progress = None if quiet else Progress("recording: frames", len(film.frames))
    results: list[Any] = []
    if workers <= 1:
        for job in jobs:
            results.append(_render_run(job))
            if progress:
                progress.step(len(job[2]))
    else:
        with ProcessPoolExecutor(workers) as pool:
            for job, res in zip(jobs, pool.map(_render_run, jobs), strict=True):
                results.append(res)
                if progress:
                    progress.step(len(job[2]))
    hands: dict[int, tuple[float, ...]] = {}
    for _, boxes, _ in results:
        hands.update(dict(boxes))
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "key": spec.key(),
        "spec": dataclasses.asdict(spec),
        "names": list(spec.names),
        "fps": spec.fps,
        "size": list(spec.size),
        "homography": stage.homography.tolist(),
        "frames": [
            [f.time, f.table, list(hands[i]) if hands.get(i) else None] for i, f in enumerate(film.frames)
        ],
        "tables": [{"objects": [[c, *b] for c, b in objs], "truth": truth} for objs, _, truth in results],
        "events": [e.to_json() for e in film.events],
        "steps": _steps_json(game, film),
        "turn_frames": film.turn_frames,
        "injections": [i.to_json() for i in game.injections],
        "final": {"state": game.final.to_json(), "scores": [r.to_json() for r in ranking(game.final)]},
    }
    tmp = out / "recording.json.tmp"
    tmp.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")
    os.replace(tmp, out / "recording.json")
    return out


def _steps_json(game: PlayedGame, film: Film) -> list[dict[str, Any]]:
    at = {m.step: m.frame for m in film.moments}
    return [
        {
            "step": p.step.to_json(),
            "turn": p.before.turn,
            "round": p.before.round,
            "codes": list(p.codes),
            "frame": at.get(i),
        }
        for i, p in enumerate(game.steps)
    ]


# ============================================================================ reading it back


@dataclass(frozen=True, slots=True)
class Recording:
    """A rendered recording on disk: frames, the dispenser's log and the ground truth."""

    path: Path
    doc: dict[str, Any]

    @classmethod
    def open(cls, path: str | Path) -> Recording:
        """Read ``path/recording.json`` (a clear error if it is missing, corrupt or of another format)."""
        p = Path(path)
        meta = p / "recording.json"
        try:
            doc = json.loads(meta.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RecordingError(f"recording: {meta} not found") from None
        except (OSError, ValueError) as exc:
            raise RecordingError(f"recording: cannot read {meta}: {exc}") from exc
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
            raise RecordingError(f"recording: {meta} is not a {FORMAT} version {VERSION} file")
        return cls(p, doc)

    @property
    def names(self) -> list[str]:
        return list(self.doc["names"])

    @property
    def fps(self) -> int:
        return int(self.doc["fps"])

    def __len__(self) -> int:
        return len(self.doc["frames"])

    def frame_path(self, index: int) -> Path:
        return self.path / "frames" / f"{index:06d}.jpg"

    def time(self, index: int) -> float:
        return float(self.doc["frames"][index][0])

    def hand(self, index: int) -> tuple[float, float, float, float] | None:
        box = self.doc["frames"][index][2]
        return tuple(box) if box else None

    def table(self, index: int) -> int:
        return int(self.doc["frames"][index][1])

    def truth(self, index: int) -> Observation:
        """What a perfect pipeline reports for a frame: its table, with the zones a hand covers unseen."""
        obs = Observation.from_json(self.doc["tables"][self.table(index)]["truth"])
        hand = self.hand(index)
        covered = covered_zones(default_zones(), tuple(p.seat for p in obs.players), [hand] if hand else [])
        return hide(dataclasses.replace(obs, time=self.time(index), frame=index), covered)

    def objects(self, index: int) -> list[tuple[str, tuple[float, float, float, float]]]:
        """The frame's labelled objects in table mm (the hand included; objects under it left out)."""
        out = []
        hand = self.hand(index)
        for cls, *box in self.doc["tables"][self.table(index)]["objects"]:
            if hand is None or covered_share(tuple(box), hand) < 0.3:
                out.append((cls, tuple(box)))
        if hand is not None:
            out.append(("hand", hand))
        return out

    def events(self) -> list[dict[str, Any]]:
        return list(self.doc["events"])

    def injections(self) -> list[dict[str, Any]]:
        return list(self.doc["injections"])

    def scores(self) -> list[dict[str, Any]]:
        return list(self.doc["final"]["scores"])

    def final_state(self) -> State:
        from referee.gizmos import state_from_json

        return state_from_json(self.doc["final"]["state"])

    def steps(self) -> list[dict[str, Any]]:
        return list(self.doc["steps"])

    def frames(self) -> Iterator[tuple[int, float, Path]]:
        """Every frame in order: (index, time in seconds, image path)."""
        for i, (t, _, _) in enumerate(self.doc["frames"]):
            yield i, float(t), self.frame_path(i)


def hide(obs: Observation, covered: set[str]) -> Observation:
    """The observation with the zones named as in :func:`vision.training.synth.covered_zones` unseen."""
    if not covered:
        return obs
    display = tuple(s for s in obs.display if f"display/{s.level}/{s.slot}" not in covered)
    players = tuple(
        PlayerSighting(
            p.seat,
            None if f"{p.seat}/ring" in covered else p.ring,
            None if f"{p.seat}/archive" in covered else p.archive,
            None if f"{p.seat}/gizmos" in covered else p.gizmos,
            None if f"{p.seat}/vp" in covered else p.vp_tokens,
        )
        for p in obs.players
    )
    row = None if "energy_row" in covered else obs.energy_row
    return dataclasses.replace(obs, display=display, energy_row=row, players=players)


def ensure_recording(
    spec: RecordingSpec | None = None, root: Path = RECORDING_ROOT, workers: int = 2, quiet: bool = False
) -> Recording:
    """The recording for ``spec``, rendered on first use (deterministic, with progress) and cached."""
    spec = spec or RecordingSpec()
    out = root / f"game-{spec.seed}"
    with render_lock(out):
        return _ensure_recording(spec, out, root, workers, quiet)


def _ensure_recording(spec: RecordingSpec, out: Path, root: Path, workers: int, quiet: bool) -> Recording:
    key = spec.key()
    meta = out / "recording.json"
    if meta.is_file():
        try:
            rec = Recording.open(out)
            if rec.doc.get("key") == key and all(rec.frame_path(i).is_file() for i in range(len(rec))):
                return rec
        except RecordingError:
            pass
    partial = root / f"game-{spec.seed}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    if not quiet:
        print(f"rendering the recorded game into {out} (first run only)", flush=True)
    render(spec, partial, workers=workers, quiet=quiet)
    shutil.rmtree(out, ignore_errors=True)
    os.replace(partial, out)
    return Recording.open(out)
