"""Frame -> table observation: calibrate, rectify, detect, assign to zones, identify cards.

Zones a detected hand overlaps are reported as not seen (``None``), never guessed. Marbles in the
Energy Row are listed left to right, ring marbles in colour order, built gizmos column by column
(upgrade, converter, file, pick, build) from the top band down, the Archive likewise. Every
sighting carries a confidence: the detector's, times the identifier's for cards.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from referee.gizmos.cards import COLORS
from referee.observation import CardSighting, MarbleSighting, Observation, PlayerSighting, SlotSighting
from vision.calibrate import Calibrator
from vision.detect import DEFAULT_MODEL, Detection, Detector
from vision.frames import SUPPORTED_SIZES, check_frame
from vision.identify import Identifier
from vision.motion import MotionGate
from vision.synth import CANON_PX_PER_MM, CANON_SIZE, canonical_from_image, covered_zones
from vision.zones import COLUMN_ORDER, COLUMN_PITCH, Rect, SeatZones, Zones, default_zones, inside

CARD_CLASSES = ("card", "card_band")


@dataclass(frozen=True, slots=True)
class _Seen:
    """A detection in table millimetres."""

    cls: str
    confidence: float
    center: tuple[float, float]
    box: tuple[float, float, float, float]


def _to_mm(d: Detection) -> _Seen:
    box = tuple(v / CANON_PX_PER_MM for v in d.box)
    return _Seen(d.cls, d.confidence, ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), box)  # type: ignore[arg-type]


def strip_confidence(obs: Observation) -> dict:
    """The observation's content without confidences, time or source: what 'exactly right' compares."""
    j = obs.to_json()

    def clean(v: object) -> object:
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if k not in ("confidence", "time", "source", "frame")}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    return clean(j)  # type: ignore[return-value]


class Observer:
    """The whole pipeline, holding the calibration, detector, identifier and motion gate."""

    def __init__(
        self,
        model: str | Path = DEFAULT_MODEL,
        seats: Sequence[int] = (0, 1),
        zones: Zones | None = None,
        enrol_dir: str | None = None,
        backend: str = "onnxruntime",
        conf: float = 0.35,
    ) -> None:
        self.zones = zones or default_zones()
        self.seats = tuple(seats)
        for s in self.seats:
            self.zones.seat(s)  # raises ZonesError for an unknown seat
        self.detector = Detector(model, backend)
        self.identifier = Identifier(enrol_dir=enrol_dir)
        self.calibrator = Calibrator(self.zones)
        self.gate = MotionGate()
        self.conf = conf
        self.frames = 0

    def process(self, frame: np.ndarray, t: float | None = None) -> Observation | None:
        """Stream entry point: an observation for a settled frame, ``None`` while things move."""
        self.frames += 1
        if not self.gate.update(frame):
            return None
        return self.observe(frame, t, self.frames)

    def observe(
        self,
        frame: np.ndarray,
        t: float | None = None,
        frame_no: int | None = None,
        seats: Sequence[int] | None = None,
    ) -> Observation:
        """Observe one frame (no motion gating); ``seats`` overrides the seats in play."""
        check_frame(frame, SUPPORTED_SIZES)
        seats = self.seats if seats is None else tuple(seats)
        cal = self.calibrator.update(frame)
        h = cal.homography
        canon = cv2.warpPerspective(frame, canonical_from_image(h), CANON_SIZE, flags=cv2.INTER_LINEAR)
        seen = [_to_mm(d) for d in self.detector.detect(canon, conf=self.conf)]
        hands = [s.box for s in seen if s.cls == "hand"]
        covered = covered_zones(self.zones, seats, list(hands))
        objs = [s for s in seen if s.cls != "hand"]

        def within(rect: Rect, classes: tuple[str, ...]) -> list[_Seen]:
            return [s for s in objs if s.cls in classes and inside(rect, *s.center)]

        display = []
        for level, slot, rect in self.zones.display:
            if f"display/{level}/{slot}" in covered:
                continue
            cands = within(rect, CARD_CLASSES)
            if not cands:
                display.append(SlotSighting(level, slot, None, 0.9))
                continue
            best = max(cands, key=lambda s: s.confidence)
            m = self.identifier.identify_card(frame, h, best.center, 0)
            display.append(SlotSighting(level, slot, m.card, round(best.confidence * m.confidence, 4)))
        row = None
        if "energy_row" not in covered:
            marbles = sorted(within(self.zones.energy_row, _MARBLES), key=lambda s: s.center[0])
            row = tuple(_marble(s) for s in marbles)
        players = []
        for seat in seats:
            sz = self.zones.seat(seat)

            def zone(name: str, seat: int = seat) -> bool:
                return f"{seat}/{name}" not in covered

            ring = None
            if zone("ring"):
                ring = tuple(
                    sorted(
                        (_marble(s) for s in within(sz.ring, _MARBLES)), key=lambda m: COLORS.index(m.color)
                    )
                )
            vp = None
            if zone("vp"):
                toks = within(sz.vp, ("vp1", "vp5"))
                vp = (
                    sum(1 if s.cls == "vp1" else 5 for s in toks),
                    round(min((s.confidence for s in toks), default=0.9), 4),
                )
            players.append(
                PlayerSighting(
                    seat=seat,
                    ring=ring,
                    archive=self._stack(frame, h, sz, within(sz.archive, CARD_CLASSES), 1)
                    if zone("archive")
                    else None,
                    gizmos=self._stack(frame, h, sz, within(sz.gizmos, CARD_CLASSES), len(COLUMN_ORDER))
                    if zone("gizmos")
                    else None,
                    vp_tokens=vp,
                )
            )
        return Observation(
            time=time.time() if t is None else t,
            display=tuple(display),
            energy_row=row,
            players=tuple(players),
            frame=frame_no,
            extra={
                "calibration": "fresh" if cal.fresh else "reused",
                "markers": list(cal.markers_seen),
                "covered": sorted(covered),
            },
        )

    def _stack(
        self, frame: np.ndarray, h: np.ndarray, sz: SeatZones, cards: list[_Seen], columns: int
    ) -> tuple[CardSighting, ...]:
        """Cards of a seat's stacked area, column by column, from the top band down."""

        def key(s: _Seen) -> tuple[int, float]:
            lx, ly = sz.to_local(*s.center)
            col = 0 if columns == 1 else int(np.clip(lx // COLUMN_PITCH, 0, columns - 1))
            return col, ly

        out = []
        for s in sorted(cards, key=key):
            ident = self.identifier.identify_card if s.cls == "card" else self.identifier.identify_band
            m = ident(frame, h, s.center, sz.rotation)
            out.append(CardSighting(m.card, round(s.confidence * m.confidence, 4)))
        return tuple(out)


_MARBLES = tuple(f"marble_{c}" for c in COLORS)


def rotation_at(zones: Zones, x: float, y: float) -> int:
    """The reading direction of a card lying at (x, y) mm: its seat's rotation, else 0 (the Display)."""
    for sz in zones.seats:
        if inside(sz.gizmos, x, y) or inside(sz.archive, x, y):
            return sz.rotation
    return 0


def _marble(s: _Seen) -> MarbleSighting:
    return MarbleSighting(s.cls.removeprefix("marble_"), round(s.confidence, 4))
