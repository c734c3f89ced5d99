"""Frame -> table observation, in stages: calibrate, rectify, detect, zones, identify, assemble.

:class:`Observer` is the one composed pipeline: its still-frame gate, then each stage timed. It
returns a :class:`Sight`: the observation and what the stages made on the way (the homography,
the detections, the hand mask, seconds per stage) that the run loop draws and keeps. Its last
stages live in :class:`Assembler`, which takes detections already made (by the detector, or by an
oracle's known boxes: :mod:`vision.training.evaluate`, a recording's) so that they can be measured
on their own.

Zones a detected hand overlaps are reported as not seen (``None``), never guessed. Marbles in the
Energy Row are listed left to right, ring marbles in color order, built gizmos column by column
(upgrade, converter, file, pick, build) from the top band down, the Archive likewise. Every
sighting carries a confidence: the detector's, times the identifier's for cards.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.gizmos.cards import COLORS
from referee.observation import (
    CardSighting,
    MarbleSighting,
    Observation,
    PlayerSighting,
    ReachSighting,
    SlotSighting,
)
from vision.calibrate import Calibrator, SavedCalibration
from vision.detect import DEFAULT_BACKEND, Detection, Detector
from vision.display import LOW_SLOT_CONF, display_cards
from vision.embedding import CardEmbedder
from vision.errors import ModelFileError
from vision.faces import CARD_MM, FACE_PX_PER_MM, N_CARDS
from vision.frames import SUPPORTED_SIZES, check_frame
from vision.geometry import (
    CANON_PX_PER_MM,
    CANON_SIZE,
    MARBLE_CLASSES,
    MARBLE_MM,
    canonical_from_image,
    covered_zones,
    table_patch,
)
from vision.hands import HAND_SCALE, MASK_SIZE, HandSegmenter, mask_boxes_mm
from vision.heaps import LOW_CONF, RING_CROP_PX, HeapFinder
from vision.identify import (
    EMBEDDING_WEIGHT,
    EMBEDDING_WEIGHT_ENROLLED,
    EMBEDDING_WHOLE,
    STARTING,
    CardMemory,
    CardPlace,
    Identifier,
    Match,
    apply_color_map,
    assign,
    built_cards,
    color_map,
    column_cards,
    level_cards,
)
from vision.marbles import MarbleColors
from vision.motion import MotionGate
from vision.occlusion import LearnedTable, TableBackground, occluders
from vision.paths import LOCATIONS
from vision.plausible import bare_table_cards, plausible
from vision.reaches import reaches_of
from vision.stacks import LOW_BAND_CONF, stack_bands
from vision.tokens import (
    FAINT_FIVE_CONF,
    LOW_TOKEN_CONF,
    TokenReader,
    missed_tokens,
    token_points,
    token_values,
    tokens_seen_as_marbles,
)
from vision.unmoved import UnmovedCards
from vision.whitebalance import balance
from vision.zones import COLUMN_ORDER, COLUMN_PITCH, Rect, SeatZones, Zones, default_zones, inside

CARD_CLASSES = ("card", "card_band")
#: Two marble boxes whose centres are closer than this (mm) are one marble. Stage 4 of the
#: detector left two boxes on one marble or token 4.4-8.5 mm apart on development frames (seeds
#: 8,900,000+, 9,160,000+, 9,170,000+, 9,260,000+, 9,270,000+, 9,460,000+); its boxes on two
#: touching marbles, 16 mm apart in truth, are each drawn a few mm towards the other in a heap:
#: 24 such pairs lay 6.8-11.9 mm apart, and at 12 mm one box of each was dropped, at 9 mm 7
#: (docs/vision.md, "Eighteenth round").
ONE_MARBLE_MM = 9.0
#: ... and two round boxes of which one is a VP token, closer than this: tokens lie apart, not in
#: heaps, and a 5 (24 mm) leaves its two boxes further apart than a marble does (9.7 mm on a
#: development frame; 0.75 of a marble, the rule for every round thing before the eighteenth round).
ONE_TOKEN_MM = 0.75 * MARBLE_MM
TOKEN_CLASSES = ("vp1", "vp5")
ROUND_CLASSES = (*MARBLE_CLASSES, *TOKEN_CLASSES)
EMPTY_CONFIDENCE = 0.9  # a zone seen with nothing detected in it
#: What hides the zones its box overlaps: a hand (the hand network's), or anything else the
#: empty table says is there and no detection explains (vision/occlusion.py).
OCCLUDER_CLASSES = ("hand", "occluder")
STARTING_MASK = np.isin(np.arange(N_CARDS), STARTING)
NO_BONUS = np.zeros(N_CARDS, np.float32)
NO_SCORES = np.zeros(0, np.float32)  # a card detection not scored yet (Assembler._score)


#: A card seen whole whose identification is below this confidence (:attr:`Match.confidence`)
#: becomes a question (:attr:`Assembler.last_questions`): the referee cannot place it and asks.
ASK_CONFIDENCE = 0.6
#: A card the first pass identified at this confidence or more is not scored again on the frame
#: colour-mapped to the references (:func:`vision.identify.color_map`): the map mends the cards a
#: lamp or a photo's cast left unsure, and scoring the sure ones again was a third of
#: identification (docs/vision.md, twenty-first round: development frames read the same).
RESCORE_BELOW = 0.7


@dataclass(frozen=True, slots=True)
class Question:
    """A card seen whole that the referee cannot place: what to ask about it.

    ``face`` is the card as the camera saw it, upright, cropped to its box and white-balanced
    (face size, 4 px/mm); ``suggestions`` are the likeliest cards the table allows there, best
    first; ``where`` names the place (``display/<level>/<slot>``, ``<seat>/gizmos/<column>``,
    ``<seat>/archive``), ``center`` is the card's centre on the table (mm).
    """

    where: str
    center: tuple[float, float]  # table mm
    face: np.ndarray
    suggestions: tuple[int, ...]
    confidence: float


@dataclass(frozen=True, slots=True)
class Seen:
    """A detection in table millimetres."""

    cls: str
    confidence: float
    center: tuple[float, float]
    box: tuple[float, float, float, float]

    @classmethod
    def of(cls, d: Detection) -> Seen:
        """A canonical-frame detection in table millimetres."""
        x1, y1, x2, y2 = d.box_mm
        return cls(d.cls, d.confidence, ((x1 + x2) / 2, (y1 + y2) / 2), (x1, y1, x2, y2))


class Assembler:
    """Zones, card identification and marble color: detections -> the Observation."""

    def __init__(
        self,
        zones: Zones | None = None,
        identifier: Identifier | None = None,
        colors: MarbleColors | None = None,
        white_balance: bool = True,
        color_from_cards: bool = True,
        tokens: TokenReader | None = None,
    ) -> None:
        self.zones = zones or default_zones()
        self.identifier = identifier or Identifier()
        self.colors = colors  # None: the detector's marble class is the color
        #: The VP-token reader (a 1 or a 5 by its digit and rim, :class:`vision.tokens.TokenReader`);
        #: None: the tokens' sizes and colours alone decide (:func:`vision.tokens.token_values`).
        self.tokens = tokens
        #: Identification and marble color read the frame white-balanced on the markers' paper
        #: (vision/whitebalance.py): a 2700 K lamp took cards identified right from 74 % to 99.6 %.
        self.white_balance = white_balance
        #: Cards are identified a second time on the frame color-mapped to the references by
        #: the cards this frame shows whole (:func:`vision.identify.color_map`): enrolled photos
        #: were taken under another lamp and camera than the table's. Those the first pass was
        #: sure of (:data:`RESCORE_BELOW`) keep their first scores.
        self.color_from_cards = color_from_cards
        #: The color map of the last frame (3 x 4), or None when none was fitted.
        self.last_color_map: np.ndarray | None = None
        #: What the referee remembers (:meth:`know`, from the application layer, which follows the
        #: game): each seat's cards, the Display's and the cards still unseen. ``None``: the table
        #: alone decides.
        self.memory: CardMemory | None = None
        #: VP tokens are read together, by printing (:func:`vision.tokens.token_values`); False:
        #: each by its own size (:func:`vision.tokens.token_points`), as before (for comparison).
        self.tokens_together = True
        #: How the frame's cards are identified together (:func:`vision.identify.assign`).
        self.assignment = "optimal"
        #: Diagnostics of the last frame: each identified card's detection and the card chosen.
        self.last_cards: list[tuple[Seen, int]] = []
        #: The cards of the last frame seen whole but identified below :data:`ASK_CONFIDENCE`.
        self.last_questions: list[Question] = []
        #: Seconds the last frame's assembly spent scoring its cards against the faces (both
        #: passes: on the frame and on the colour-mapped frame): the identification's share.
        self.last_identify_s = 0.0
        #: The last frame's cards, whose scores a card that has not moved takes (vision/unmoved.py);
        #: None: every card is scored on every frame.
        self.unmoved: UnmovedCards | None = UnmovedCards()

    def know(self, memory: CardMemory | None) -> None:
        """Identify from now on with what the referee knows about the cards (``None``: forget).

        A card that moves keeps its identity (the card that left the Display is the one that
        appeared in a seat's column), only cards still unseen can appear, and a card that stays
        where the referee knows it is kept unless the picture clearly says otherwise
        (:class:`vision.identify.CardMemory`).
        """
        self.memory = memory

    def marble(self, frame: np.ndarray, h: np.ndarray, s: Seen) -> MarbleSighting:
        """A detected marble's color: from the color stage when there is one, else the detector's class."""
        if self.colors is None:
            return MarbleSighting(s.cls.removeprefix("marble_"), round(s.confidence, 4))
        color, p = self.colors.classify(frame, h, s.center, (s.cls.removeprefix("marble_"), s.confidence))
        return MarbleSighting(color, round(s.confidence * p, 4))

    def assemble(
        self,
        frame: np.ndarray,
        h: np.ndarray,
        detections: Sequence[Detection],
        seats: Sequence[int],
        t: float = 0.0,
        frame_no: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Observation:
        """The observation of ``frame`` (homography ``h``: table mm -> frame px) from its detections."""
        self.last_identify_s = 0.0
        if self.white_balance:
            frame = balance(frame, h, self.zones)
        # A VP-token box outside every VP zone is read nowhere; kept, it could only hide a marble
        # it lies on (a fine-tuned detector boxed a blue ring marble as a 1, surer than as a marble).
        vp_zones = [sz.vp for sz in self.zones.seats]
        seen = one_per_object(
            [
                s
                for s in map(Seen.of, detections)
                if plausible(s.cls, s.box)
                and (s.cls not in TOKEN_CLASSES or any(inside(r, *s.center) for r in vp_zones))
            ]
        )
        hands = [s.box for s in seen if s.cls in OCCLUDER_CLASSES]
        covered = covered_zones(self.zones, tuple(seats), hands)
        objs = [s for s in seen if s.cls not in OCCLUDER_CLASSES]

        def within(rect: Rect, classes: tuple[str, ...]) -> list[Seen]:
            return [s for s in objs if s.cls in classes and inside(rect, *s.center)]

        asks: list[_Ask] = []
        display: list[SlotSighting | _Ask] = []
        for level, slot, rect in self.zones.display:
            if f"display/{level}/{slot}" in covered:
                continue
            cands = within(rect, CARD_CLASSES)
            if not cands:
                display.append(SlotSighting(level, slot, None, EMPTY_CONFIDENCE))
                continue
            best = max(cands, key=lambda s: s.confidence)
            allowed, bonus = level_cards(level), NO_BONUS
            if self.memory is not None:
                allowed, bonus = self.memory.slot(level, slot, allowed)
            display.append(self._ask(asks, frame, h, best, 0, allowed, bonus, (level, slot)))
        row = None
        if "energy_row" not in covered:
            marbles = sorted(within(self.zones.energy_row, MARBLE_CLASSES), key=lambda s: s.center[0])
            row = tuple(self.marble(frame, h, s) for s in marbles)
        # VP tokens: the frame's tokens are read together (one printing's 1s look alike).
        tokens = {
            seat: within(self.zones.seat(seat).vp, TOKEN_CLASSES)
            for seat in seats
            if f"{seat}/vp" not in covered
        }
        every = [s for toks in tokens.values() for s in toks]
        if self.tokens_together:
            fives = None if self.tokens is None else self.tokens.fives(frame, h, [s.center for s in every])
            values = token_values(frame, h, [s.box for s in every], fives)
        else:
            values = [token_points(frame, h, s.box) for s in every]
        points = dict(zip(map(id, every), values, strict=True))
        players = []
        for seat in seats:
            sz = self.zones.seat(seat)

            def unseen(name: str, seat: int = seat) -> bool:
                return f"{seat}/{name}" in covered

            ring = None
            if not unseen("ring"):
                ring = tuple(
                    sorted(
                        (self.marble(frame, h, s) for s in within(sz.ring, MARBLE_CLASSES)), key=_color_order
                    )
                )
            vp = None
            if seat in tokens:
                toks = tokens[seat]
                vp = (
                    sum(points[id(s)] for s in toks),
                    round(min((s.confidence for s in toks), default=EMPTY_CONFIDENCE), 4),
                )
            archive = None
            if not unseen("archive"):
                archive = self._stack(asks, frame, h, sz, within(sz.archive, CARD_CLASSES), None)
            gizmos = None
            if not unseen("gizmos"):
                gizmos = self._stack(asks, frame, h, sz, within(sz.gizmos, CARD_CLASSES), seat)
            players.append((seat, ring, archive, gizmos, vp))
        places = [self._place(a) for a in asks]
        faces = self.identifier.faces
        kept: list[np.ndarray | None] = (
            [None] * len(asks) if self.unmoved is None else self.unmoved.recall(frame, h, faces, places)
        )
        fresh = [a for a, k in zip(asks, kept, strict=True) if k is None]
        for a, k in zip(asks, kept, strict=True):
            if k is not None:
                a.scores = k
        cosines = self._score(frame, h, fresh)  # the embedding's, read once for both passes
        matches = assign([a.scores + a.bonus for a in asks], [a.allowed for a in asks], self.assignment)
        self.last_color_map = None
        if self.color_from_cards and fresh:
            whole = [(a.seen.center, a.rotation, faces[m.card]) for a, m in zip(asks, matches, strict=True)]
            mat = color_map(frame, h, [w for w, a in zip(whole, asks, strict=True) if a.seen.cls == "card"])
            if mat is not None:
                self.last_color_map = mat
                mapped = apply_color_map(frame, mat)
                scored = {id(a) for a in fresh}
                unsure = [
                    a
                    for a, m in zip(asks, matches, strict=True)
                    if id(a) in scored and m.confidence < RESCORE_BELOW
                ]
                self._score(mapped, h, unsure, cosines)
                matches = assign(
                    [a.scores + a.bonus for a in asks], [a.allowed for a in asks], self.assignment
                )
        if self.unmoved is not None:
            self.unmoved.keep(frame, h, faces, places, [a.scores for a in asks])
        for a, m in zip(asks, matches, strict=True):
            a.card, a.confidence = m.card, round(a.seen.confidence * m.confidence, 4)
        self.last_cards = [(a.seen, m.card) for a, m in zip(asks, matches, strict=True)]
        self.last_questions = [
            self._question(frame, h, a, m)
            for a, m in zip(asks, matches, strict=True)
            if a.seen.cls == "card" and m.confidence < ASK_CONFIDENCE
        ]
        return Observation(
            time=t,
            display=tuple(d.slot_sighting() if isinstance(d, _Ask) else d for d in display),
            energy_row=row,
            players=tuple(
                PlayerSighting(
                    seat,
                    ring,
                    None if archive is None else tuple(a.sighting() for a in archive),
                    None if gizmos is None else tuple(a.sighting() for a in gizmos),
                    vp,
                )
                for seat, ring, archive, gizmos, vp in players
            ),
            frame=frame_no,
            extra={**(extra or {}), "covered": sorted(covered)},
        )

    def _ask(
        self,
        asks: list[_Ask],
        frame: np.ndarray,
        h: np.ndarray,
        s: Seen,
        rotation: int,
        allowed: np.ndarray,
        bonus: np.ndarray,
        slot: tuple[int, int] | None = None,
    ) -> _Ask:
        """A card detection to score against every face (:meth:`_score`, the frame's cards
        together) and identify later, jointly."""
        scaled = bonus * self.identifier.memory_scale(s.cls == "card")
        ask = _Ask(s, NO_SCORES, allowed, scaled, rotation, slot)
        asks.append(ask)
        return ask

    def _question(self, frame: np.ndarray, h: np.ndarray, a: _Ask, m: Match) -> Question:
        """What to ask about a card identified without confidence."""
        face = table_patch(frame, h, a.seen.center, CARD_MM, FACE_PX_PER_MM, a.rotation)
        best = np.argsort(-np.where(a.allowed, a.scores + a.bonus, -np.inf))[:3]
        suggestions = tuple(int(c) for c in best if a.allowed[c])
        return Question(a.where, a.seen.center, face, suggestions, round(m.confidence, 4))

    @staticmethod
    def _place(a: _Ask) -> CardPlace:
        """A card detection as the identifier scores it: where, which way up, the faces it is
        scored against (those allowed, and the Starting Gizmos with them where any is allowed:
        see :func:`vision.identify.assign`) and whether it is seen whole."""
        among = a.allowed | (STARTING_MASK if a.allowed[STARTING].any() else False)
        return (a.seen.center, a.rotation, among, a.seen.cls == "card")

    def _score(
        self,
        frame: np.ndarray,
        h: np.ndarray,
        asks: list[_Ask],
        cosines: dict[int, np.ndarray] | None = None,
    ) -> dict[int, np.ndarray]:
        """Each card detection's scores against the faces it may be (and the Starting Gizmos: see
        assign()), all of the frame's at once (:meth:`vision.identify.Identifier.scores`).
        ``cosines`` and the result: the learned embedding's cosines by ask (``id``), given when
        already read, returned for the color-mapped pass to reuse: the embedding
        was trained across lamps and casts, running it again on the mapped frame was a third of
        an enrolled deck's identification time, and reading it once lost no development frame
        (docs/vision.md, twenty-first round)."""
        if not asks:
            return {}
        t0 = time.perf_counter()
        places = [self._place(a) for a in asks]
        if cosines is None:
            by_place = self.identifier.band_cosines(frame, h, places)
        else:
            by_place = {k: cosines[id(a)] for k, a in enumerate(asks) if id(a) in cosines}
        for a, scores in zip(asks, self.identifier.scores(frame, h, places, by_place), strict=True):
            a.scores = scores
        self.last_identify_s += time.perf_counter() - t0
        return {id(asks[k]): v for k, v in by_place.items()}

    def _stack(
        self,
        asks: list[_Ask],
        frame: np.ndarray,
        h: np.ndarray,
        sz: SeatZones,
        cards: list[Seen],
        seat: int | None,
    ) -> list[_Ask]:
        """Cards of a stacked area, column by column, each from the top band down.

        ``seat`` is given for the dashboard (five columns, each holding its own type of gizmo)
        and ``None`` for the Archive (one column of any built card).
        """

        def column(s: Seen) -> int:
            if seat is None:
                return 0
            return int(np.clip(sz.to_local(*s.center)[0] // COLUMN_PITCH, 0, len(COLUMN_ORDER) - 1))

        out = []
        for s in sorted(cards, key=lambda s: (column(s), sz.to_local(*s.center)[1])):
            allowed = built_cards() if seat is None else column_cards(COLUMN_ORDER[column(s)], seat)
            bonus = NO_BONUS
            if self.memory is not None:
                allowed, bonus = self.memory.seat(sz.seat, allowed, archive=seat is None)
            ask = self._ask(asks, frame, h, s, sz.rotation, allowed, bonus)
            ask.area = f"{sz.seat}/archive" if seat is None else f"{sz.seat}/gizmos/{COLUMN_ORDER[column(s)]}"
            out.append(ask)
        return out


@dataclass(slots=True)
class _Ask:
    """A card detection awaiting identification: its scores, candidate mask, and where it goes."""

    seen: Seen
    scores: np.ndarray  # by card id (-inf: not a candidate); set by Assembler._score
    allowed: np.ndarray
    bonus: np.ndarray  # the referee's memory: added to the scores of the cards it expects here
    rotation: int  # the card's reading direction (its seat's)
    slot: tuple[int, int] | None = None  # (level, slot) for the Display
    area: str = ""  # ``<seat>/gizmos/<column>`` or ``<seat>/archive`` for a seat's card
    card: int | None = None
    confidence: float = 0.0

    @property
    def where(self) -> str:
        """The place's name, as :attr:`Question.where` gives it."""
        return f"display/{self.slot[0]}/{self.slot[1]}" if self.slot is not None else self.area

    def sighting(self) -> CardSighting:
        return CardSighting(self.card, self.confidence)

    def slot_sighting(self) -> SlotSighting:
        assert self.slot is not None
        return SlotSighting(*self.slot, self.card, self.confidence)


#: Known boxes standing in for the detector and the hand network, by frame number: the canonical
#: frame's detections (a recording's true boxes, to measure everything but the detector).
Boxes = Callable[[int | None], Sequence[Detection]]


@dataclass(frozen=True, slots=True)
class Sight:
    """One frame through the pipeline: the observation, and what the stages made on the way that
    the run loop needs besides it (the camera view's drawing, a warning's evidence crops, the
    self-labelled frames): the homography (table mm -> frame px), the detections in the canonical
    frame (hands and occluders included), the hand network's mask (None without it) and the
    seconds each stage took."""

    observation: Observation
    homography: np.ndarray
    detections: list[Detection]
    hand_mask: np.ndarray | None
    timings: Mapping[str, float]


class Observer:
    """The whole pipeline, holding the calibration, detector, assembler and motion gate.

    ``gate``: the still-frame gate of :meth:`process` (default: each settled table once).
    ``boxes``: known boxes instead of the detector and the hand network (neither is loaded).
    ``ring_pass=False``: the heap stage's second pass on the whole frame, not on ring crops
    (the benchmarks time both).
    ``token_model``: the VP-token reader's file (default the committed ``models/tokens.onnx``).
    ``learn_table``: learn the table from the frames observed (:meth:`learn_table`), for a stream
    of one table (the live referee); an empty table given later takes its place.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        seats: Sequence[int] = (0, 1),
        zones: Zones | None = None,
        enrol_dir: str | None = None,
        backend: str = DEFAULT_BACKEND,
        conf: float = 0.35,
        color_stage: bool = True,
        hand_model: str | Path | None = None,
        hand_conf: float = 0.1,
        gate: MotionGate | None = None,
        boxes: Boxes | None = None,
        reaches: bool = False,
        heaps: bool = True,
        ring_pass: bool = True,
        token_model: str | Path | None = None,
        learn_table: bool = False,
    ) -> None:
        self.zones = zones or default_zones()
        self.seats = tuple(seats)
        for s in self.seats:
            self.zones.seat(s)  # raises ZonesError for an unknown seat
        self.boxes = boxes
        self.detector = Detector(model, backend) if boxes is None else None
        colors = MarbleColors() if color_stage else None
        # Top bands are read with the learned band embedding too, an enrolled deck's (a real
        # deck always is: the publisher's art is never shipped) and the project's drawn faces
        # alike; a card seen whole adds its band's embedding only for an enrolled deck: two drawn
        # faces of one colour, cost and VP have near-equal bands (16 and 17), and there it added
        # noise to faces the template reads (docs/vision.md, "Fifteenth round": `style`
        # development frames 45 -> 47 of 60 right, `own` unchanged).
        self.assembler = Assembler(
            self.zones,
            Identifier(
                enrol_dir=enrol_dir,
                embedding=CardEmbedder(),
                embedding_weight=EMBEDDING_WEIGHT_ENROLLED if enrol_dir is not None else EMBEDDING_WEIGHT,
                embedding_whole=EMBEDDING_WHOLE if enrol_dir is not None else 0.0,
            ),
            colors,
            tokens=TokenReader(LOCATIONS.tokens if token_model is None else Path(token_model)),
        )
        self.calibrator = Calibrator(self.zones)
        self.gate = gate or MotionGate()
        self.conf = conf
        #: Where hands are found: the hand network (``hand_model``: a path, default the committed
        #: one), or with ``hand_model="detector"`` the detector's own hand class (measured worse:
        #: a hand is bigger than its training tiles and comes out as several weak partial boxes,
        #: hence its lower threshold ``hand_conf``, chosen on development seeds; docs/vision.md).
        self.hands = None if hand_model == "detector" or boxes is not None else HandSegmenter(hand_model)
        self.hand_conf = hand_conf
        #: The heap stage (vision/heaps.py): marbles the detector missed in a touching heap, found
        #: again among its less sure boxes and on the frame with the marbles found painted over.
        #: ``heaps=False`` turns it off (the benchmark measures both).
        self.heaps = (
            HeapFinder(self.zones, self._detect_at, conf) if heaps and self.detector is not None else None
        )
        #: The detector loaded a second time at a ring crop's size: the heap stage's second pass
        #: then looks at each ring where something is left, not at the whole frame (docs/vision.md,
        #: "Seventh round"). ``None`` (the second pass covers the whole peeled frame, as before):
        #: with ``ring_pass=False``, or a model file exported at one fixed size (before this round).
        self.ring_detector: Detector | None = None
        if self.heaps is not None and ring_pass:
            try:
                self.ring_detector = Detector(model, backend, input_hw=(RING_CROP_PX, RING_CROP_PX))
            except ModelFileError:
                self.ring_detector = None
            else:
                self.heaps.detect_ring = self._detect_ring
        #: The marbles the heap stage added to the last frame's detections.
        self.last_heap_marbles: list[Detection] = []
        #: Card and top band boxes on bare table are dropped (vision/plausible.py:
        #: bare_table_cards); False keeps them (the benchmark measures both).
        self.bare_table = True
        #: The boxes that stage dropped from the last frame's detections.
        self.last_bare_table: list[Detection] = []
        #: Top bands the detector was not sure of, kept where a stack of built cards puts them
        #: (vision/stacks.py); False: its sure boxes alone (the benchmark measures both).
        self.stacks = self.detector is not None
        #: The bands that stage added to the last frame's detections.
        self.last_stack_bands: list[Detection] = []
        #: Whole cards the detector was not sure of, kept in a Display slot nothing else fills
        #: (vision/display.py); False: its sure boxes alone (the benchmark measures both).
        self.display_slots = self.detector is not None
        #: The cards that stage added to the last frame's detections.
        self.last_display_cards: list[Detection] = []
        #: VP tokens the detector was not sure of, kept from its less sure boxes where nothing
        #: else can be (vision/tokens.py: missed_tokens); False: its confident boxes alone.
        self.low_tokens = self.detector is not None
        #: The tokens that stage added to the last frame's detections.
        self.last_low_tokens: list[Detection] = []
        #: Marble boxes in the VP zones of the seats in play taken for VP tokens (a printing the
        #: detector never saw; vision/tokens.py: tokens_seen_as_marbles); False: left as marbles.
        self.marble_tokens = self.detector is not None
        #: The tokens that stage made of the last frame's marble boxes.
        self.last_marble_tokens: list[Detection] = []
        self._reaches = False
        self.reaches = reaches
        #: The homography (table mm -> frame px) and frame size of the last frame calibrated:
        #: the moving frames' arms (:meth:`arms`) are read through it, without calibrating again.
        self._camera: tuple[np.ndarray, tuple[int, ...]] | None = None
        self._last_hand_confidence = 0.0
        #: The hand mask of the last frame (network resolution), when the hand network is in use.
        self.last_hand_mask: np.ndarray | None = None
        #: The empty table (:meth:`learn_empty_table`): with it, a hand the network marks where
        #: the table looks as it did empty is dropped, and anything else there that no detection
        #: explains hides the zones under it (vision/occlusion.py). ``None``: the network alone.
        self.background: TableBackground | None = None
        #: The table learned from the frames observed (:meth:`learn_table`), the occlusion
        #: stage's background where there is no empty table. ``None``: not learned.
        self.learned: LearnedTable | None = None
        if learn_table:
            self.learn_table()
        #: The hand network's own mask of the last frame, before the empty table's say.
        self.last_network_mask: np.ndarray | None = None
        #: The detections of the last frame, as the assembler was given them.
        self.last_detections: list[Detection] = []
        self.frames = 0
        #: Diagnostics of the last observed frame: seconds per stage, and the rectified image.
        self.timings: dict[str, float] = {}
        self.last_canon: np.ndarray | None = None

    def _detect_at(self, canon: np.ndarray, conf: float) -> list[Detection]:
        """The detector's boxes on a canonical image at a confidence (the heap stage's second pass)."""
        assert self.detector is not None
        return self.detector.detect(canon, conf=conf)

    def _detect_ring(self, crop: np.ndarray, conf: float) -> list[Detection]:
        """The detector's boxes on a ring's crop of the canonical frame (the heap stage's second pass)."""
        assert self.ring_detector is not None
        return self.ring_detector.detect(crop, conf=conf)

    @property
    def reaches(self) -> bool:
        """Whether the reaching hands (whose arm, over what: :mod:`vision.reaches`) are reported:
        in each observation, and for the frames the still-frame gate drops (:meth:`arms`). Needs
        the hand network. Off by default: the tracker weighs every arm it is not told of as
        unseen, so only a caller that also reads the moving frames' arms (the live loop does,
        :mod:`referee.app.live`) should turn it on."""
        return self._reaches

    @reaches.setter
    def reaches(self, on: bool) -> None:
        self._reaches = bool(on) and self.hands is not None

    @property
    def identifier(self) -> Identifier:
        """The card identifier in use."""
        return self.assembler.identifier

    def know(self, memory: CardMemory | None) -> None:
        """What the referee knows about the cards, used from the next frame on (:meth:`Assembler.know`)."""
        self.assembler.know(memory)

    def process(
        self,
        frame: np.ndarray,
        t: float | None = None,
        frame_no: int | None = None,
        seats: Sequence[int] | None = None,
    ) -> Sight | None:
        """Stream entry point: the sight of a settled frame (the gate's), ``None`` while things
        move; ``frame_no`` defaults to the count of frames given."""
        self.frames += 1
        if not self.gate.update(frame):
            return None
        return self.sight(frame, t, self.frames if frame_no is None else frame_no, seats)

    def detect(
        self, frame: np.ndarray, frame_no: int | None = None, seats: Sequence[int] | None = None
    ) -> tuple[np.ndarray, list[Detection], dict[str, Any]]:
        """Calibrate, rectify and detect: the homography, the detections and calibration notes
        (``frame_no`` picks the known boxes of an observer given ``boxes``; ``seats`` overrides
        the seats in play, whose rings the heap stage looks at)."""
        check_frame(frame, SUPPORTED_SIZES)
        t0 = time.perf_counter()
        cal = self.calibrator.update(frame)
        t1 = time.perf_counter()
        self._camera = (cal.homography, frame.shape)
        notes = {"calibration": cal.state, "markers": list(cal.markers_seen)}
        if self.boxes is not None:
            self.last_canon, self.last_detections = None, list(self.boxes(frame_no))
            self.timings = {"calibration": t1 - t0, "boxes": time.perf_counter() - t1}
            return cal.homography, self.last_detections, notes
        assert self.detector is not None
        canon = cv2.warpPerspective(
            frame, canonical_from_image(cal.homography), CANON_SIZE, flags=cv2.INTER_LINEAR
        )
        t2 = time.perf_counter()
        # One decoding at the lowest confidence any stage needs; greedy NMS lets no less sure box
        # suppress a surer one, so the boxes kept at the pipeline's confidence are the same.
        floor = min(self.conf, LOW_CONF if self.heaps is not None else self.conf)
        if self.stacks:
            floor = min(floor, LOW_BAND_CONF)
        if self.display_slots:
            floor = min(floor, LOW_SLOT_CONF)
        if self.low_tokens:
            floor = min(floor, LOW_TOKEN_CONF)
        if self.marble_tokens:
            floor = min(floor, FAINT_FIVE_CONF)
        if self.hands is None:
            floor = min(floor, self.hand_conf)
        raw = self.detector.detect(canon, conf=floor)
        if self.hands is None:
            dets = [d for d in raw if d.confidence >= (self.hand_conf if d.cls == "hand" else self.conf)]
        else:
            dets = [d for d in raw if d.cls != "hand" and d.confidence >= self.conf]
        t3 = time.perf_counter()
        self.timings = {"calibration": t1 - t0, "rectify": t2 - t1, "detector": t3 - t2}
        # card-sized boxes on bare table (vision/plausible.py)
        self.last_bare_table = bare_table_cards(canon, dets) if self.bare_table else []
        if self.last_bare_table:
            bare = {id(d) for d in self.last_bare_table}
            dets = [d for d in dets if id(d) not in bare]
        self.timings["bare_table"] = time.perf_counter() - t3
        t3 = time.perf_counter()
        mask, confidence = None, 0.0
        if self.hands is not None:
            mask, confidence = self.hands.find(canon)
            self.timings["hands"] = time.perf_counter() - t3
        in_play = self.seats if seats is None else tuple(seats)
        self.last_heap_marbles = []
        # zones under a hand are reported unseen: nothing to look for there
        network_boxes = mask_boxes_mm(mask) if mask is not None else []
        hidden = network_boxes + [Seen.of(d).box for d in dets if d.cls == "hand"]
        if self.heaps is not None:
            t4 = time.perf_counter()
            low = [d for d in raw if d.cls in MARBLE_CLASSES and LOW_CONF <= d.confidence < self.conf]
            self.last_heap_marbles = self.heaps.find(canon, dets, low, in_play, hidden)
            dets += self.last_heap_marbles
            self.timings["heaps"] = time.perf_counter() - t4
        self.last_stack_bands = []
        if self.stacks:
            t7 = time.perf_counter()
            low = [d for d in raw if d.cls == "card_band" and LOW_BAND_CONF <= d.confidence < self.conf]
            self.last_stack_bands = stack_bands(canon, self.zones, dets, low, in_play, hidden)
            dets += self.last_stack_bands
            self.timings["stacks"] = time.perf_counter() - t7
        self.last_display_cards = []
        if self.display_slots:
            t8 = time.perf_counter()
            low = [d for d in raw if d.cls == "card" and LOW_SLOT_CONF <= d.confidence < self.conf]
            self.last_display_cards = display_cards(self.zones, dets, low, hidden, canon, in_play)
            dets += self.last_display_cards
            self.timings["display"] = time.perf_counter() - t8
        self.last_low_tokens, self.last_marble_tokens = [], []
        if self.low_tokens or self.marble_tokens:
            t6 = time.perf_counter()
            vp_zones = [self.zones.seat(s).vp for s in in_play]
            if self.marble_tokens:
                low = [d for d in raw if d.cls in MARBLE_CLASSES and d.confidence < self.conf]
                dets, self.last_marble_tokens = tokens_seen_as_marbles(
                    frame, cal.homography, dets, low, vp_zones
                )
                dets += self.last_marble_tokens
            if self.low_tokens:
                low = [d for d in raw if d.cls in TOKEN_CLASSES and d.confidence < self.conf]
                self.last_low_tokens = missed_tokens(frame, cal.homography, dets, low, vp_zones)
                dets += self.last_low_tokens
            self.timings["tokens"] = time.perf_counter() - t6
        if mask is not None:
            t5 = time.perf_counter()
            self._last_hand_confidence = confidence
            self.last_network_mask = mask
            others: list[np.ndarray] = []
            background = self.background
            if background is None and self.learned is not None:
                background = self.learned.background()
            hand_boxes = network_boxes  # the network's mask, unless the occlusion stage changes it
            if background is not None:
                mask, others = occluders(background, canon, mask, dets)
                hand_boxes = mask_boxes_mm(mask)
            self.last_hand_mask = mask
            occluder_boxes = [b for o in others for b in mask_boxes_mm(o)]
            for cls, box in [("hand", b) for b in hand_boxes] + [("occluder", b) for b in occluder_boxes]:
                px = tuple(v * CANON_PX_PER_MM for v in box)
                conf = confidence if cls == "hand" and confidence > 0 else 1.0
                dets.append(Detection(cls, round(conf, 4), px))  # type: ignore[arg-type]
            if self.learned is not None and self.background is None:
                self.learned.add(canon, dets, mask)
            self.timings["hands"] += time.perf_counter() - t5
        self.last_canon, self.last_detections = canon, dets
        return cal.homography, dets, notes

    def learn_empty_table(self, frame: np.ndarray, homography: np.ndarray | None = None) -> None:
        """Remember the empty table (a frame of the calibrated table before anything is put on
        it: markers, mats and the dispenser tray only) as the occlusion stage's background, seen
        through ``homography`` (default: the frame's own calibration)."""
        check_frame(frame, SUPPORTED_SIZES)
        h = self.calibrator.update(frame).homography if homography is None else homography
        self.background = TableBackground.from_frame(frame, h)

    def learn_table(self) -> None:
        """Learn the table from the frames observed from now on (vision/occlusion.py,
        :class:`LearnedTable`), for the occlusion stage where no empty table was seen: each
        frame's uncovered table is the background of the frames after it."""
        self.learned = LearnedTable()

    def start_from(self, saved: SavedCalibration) -> None:
        """Begin from a saved calibration (``run`` / ``serve --calibration``) and, when the empty
        table was saved with it, with the occlusion stage on."""
        self.calibrator.start_from(saved)
        if saved.empty_table is not None:
            self.learn_empty_table(saved.empty_table, saved.calibration.homography)

    def observe(
        self,
        frame: np.ndarray,
        t: float | None = None,
        frame_no: int | None = None,
        seats: Sequence[int] | None = None,
    ) -> Observation:
        """Observe one frame (no motion gating); ``seats`` overrides the seats in play."""
        return self.sight(frame, t, frame_no, seats).observation

    def sight(
        self,
        frame: np.ndarray,
        t: float | None = None,
        frame_no: int | None = None,
        seats: Sequence[int] | None = None,
    ) -> Sight:
        """One frame through every stage (no motion gating), each timed: the :class:`Sight`."""
        h, dets, notes = self.detect(frame, frame_no, seats)
        t0 = time.perf_counter()
        obs = self.assembler.assemble(
            frame,
            h,
            dets,
            self.seats if seats is None else tuple(seats),
            time.time() if t is None else t,
            frame_no,
            notes,
        )
        self.timings["assemble"] = time.perf_counter() - t0
        self.timings["identify"] = self.assembler.last_identify_s  # a part of "assemble"
        mask = self.last_hand_mask if self.hands is not None else None
        if self.reaches and mask is not None:
            in_play = self.seats if seats is None else tuple(seats)
            found = reaches_of(mask, self.zones, in_play, self._last_hand_confidence)
            obs = replace(obs, reaches=found)
        return Sight(obs, h, dets, mask, dict(self.timings))

    def arms(self, frame: np.ndarray, seats: Sequence[int] | None = None) -> tuple[ReachSighting, ...] | None:
        """The reaching hands of a frame the still-frame gate drops (a gesture passes in moving
        frames), cheaply: the frame is warped straight to the hand network's resolution through
        the last calibration (no marker search, no detector, no table read), and only the hand
        network runs. ``None`` when reaches are not reported or no frame was calibrated yet.
        No observation comes of it: the table is read from still frames only."""
        if not self._reaches or self.hands is None or self._camera is None:
            return None
        h, shape = self._camera
        check_frame(frame, SUPPORTED_SIZES)
        if frame.shape != shape:  # another camera or resolution: calibrate on a still frame first
            return None
        t0 = time.perf_counter()
        mask, confidence = self.hands.find(hand_view(frame, h))
        in_play = self.seats if seats is None else tuple(seats)
        found = reaches_of(mask, self.zones, in_play, confidence)
        self.timings = {"arms": time.perf_counter() - t0}
        return found


def hand_view(frame: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The rectified table at the hand network's own resolution (MASK_SIZE), made cheaply for a
    moving frame: the frame shrunk by area a whole number of times towards that scale first (a
    warp straight down aliases the hand's edges: mask IoU with the still frames' path 0.94, this
    0.98 on the recording), then warped once (``h``: table mm -> frame px). 1.3 ms for a 1280 x
    720 frame against 10.7 ms for the full rectification (measured together, load average 3.7)."""
    to_mask = np.diag([1.0 / HAND_SCALE, 1.0 / HAND_SCALE, 1.0]) @ canonical_from_image(h)
    # frame pixels per mask pixel, along the table's width
    ends = cv2.perspectiveTransform(np.array([[[0.0, 0.0], [MASK_SIZE[0], 0.0]]]), np.linalg.inv(to_mask))[0]
    shrink = round(float(np.linalg.norm(ends[1] - ends[0])) / MASK_SIZE[0])
    height, width = frame.shape[:2]
    if shrink >= 2 and width % shrink == 0 and height % shrink == 0:
        frame = cv2.resize(frame, (width // shrink, height // shrink), interpolation=cv2.INTER_AREA)
        to_mask = to_mask @ np.diag([float(shrink), float(shrink), 1.0])
    return cv2.warpPerspective(frame, to_mask, MASK_SIZE, flags=cv2.INTER_LINEAR)


def one_per_object(seen: list[Seen]) -> list[Seen]:
    """Drop a detection that repeats a surer one of the same physical object.

    The detector's NMS (IoU 0.5) leaves pairs of boxes on one small object when they are offset
    by a few millimetres. Physics says which pairs are one object: marbles and VP tokens cannot
    overlap (two touching marbles are 16 mm apart, a marble and a token 17 mm), so two round
    things whose centres are closer than :data:`ONE_MARBLE_MM` (two marbles) or
    :data:`ONE_TOKEN_MM` (a token and another round thing) are one; a card or top band more
    than half inside another card or band is the same card (a stacked band and its neighbours
    overlap by 3 mm at most). Hands are left alone.
    """
    kept: list[Seen] = []
    # Only round things can repeat round things, and cards cards: each is compared with the
    # kept ones of its own kind (a few hundred pair tests a frame instead of thousands).
    by_kind: dict[str, list[Seen]] = {"round": [], "card": []}
    for s in sorted(seen, key=lambda s: -s.confidence):
        kind = "round" if s.cls in ROUND_CLASSES else "card" if s.cls in CARD_CLASSES else None
        if kind is None:
            kept.append(s)
        elif not any(_same_object(s, k) for k in by_kind[kind]):
            kept.append(s)
            by_kind[kind].append(s)
    return kept


def _same_object(a: Seen, b: Seen) -> bool:
    if a.cls in ROUND_CLASSES and b.cls in ROUND_CLASSES:
        marbles = a.cls in MARBLE_CLASSES and b.cls in MARBLE_CLASSES
        return math.dist(a.center, b.center) < (ONE_MARBLE_MM if marbles else ONE_TOKEN_MM)
    if a.cls in CARD_CLASSES and b.cls in CARD_CLASSES:
        ix = min(a.box[2], b.box[2]) - max(a.box[0], b.box[0])
        iy = min(a.box[3], b.box[3]) - max(a.box[1], b.box[1])
        if ix <= 0 or iy <= 0:
            return False
        smaller = min((r.box[2] - r.box[0]) * (r.box[3] - r.box[1]) for r in (a, b))
        return ix * iy > 0.5 * smaller
    return False


def rotation_at(zones: Zones, x: float, y: float) -> int:
    """The reading direction of a card lying at (x, y) mm: its seat's rotation, else 0 (the Display)."""
    for sz in zones.seats:
        if inside(sz.gizmos, x, y) or inside(sz.archive, x, y):
            return sz.rotation
    return 0


def _color_order(m: MarbleSighting) -> int:
    return COLORS.index(m.color) if m.color in COLORS else len(COLORS)
