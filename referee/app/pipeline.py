"""The vision pipeline as the run loop sees it (:class:`Pipeline`): :class:`vision.observe.Observer`
itself, with the detector or with a recording's true boxes for a perfect detector
(:func:`oracle_observer`), or one loaded on first use for the dashboard (:class:`LazyVision`); the
camera view's drawing; and the saver of self-labelled frames for fine-tuning.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import cv2
import numpy as np

from referee.app.errors import LiveError
from referee.gizmos import State
from referee.observation import Observation, ReachSighting
from referee.tracker.view import matches, view_of_observation
from vision.detect import Detection
from vision.geometry import CANON_PX_PER_MM, CANON_SIZE, canonical_from_image, rectify, yolo_row, yolo_text

if TYPE_CHECKING:
    from vision.calibrate import SavedCalibration
    from vision.identify import CardMemory
    from vision.motion import MotionGate
    from vision.observe import Assembler, Observer, Sight
    from vision.zones import Zones


# ============================================================================ the pipeline


class Pipeline(Protocol):
    """What the loop runs on each frame: :class:`vision.observe.Observer`'s still-frame gate, then
    its stages (calibrate, rectify, detect; zones, identification) on a settled frame. The loop
    gives it a fresh ``gate`` for each run and re-arms it on each sensor event, and says whether
    the players' arms are read (``reaches``: in each observation, and by :meth:`arms` on frames
    the gate drops)."""

    gate: MotionGate
    reaches: bool

    @property
    def zones(self) -> Zones | None: ...

    @property
    def assembler(self) -> Assembler:
        """The zones and identification stage (its last frame's unplaced cards are asked about)."""
        ...

    def know(self, memory: CardMemory | None) -> None:
        """Identify from the next frame on with what the referee knows of the cards."""
        ...

    def process(
        self,
        frame: np.ndarray,
        t: float | None = None,
        frame_no: int | None = None,
        seats: Sequence[int] | None = None,
    ) -> Sight | None: ...

    def sight(
        self,
        frame: np.ndarray,
        t: float | None = None,
        frame_no: int | None = None,
        seats: Sequence[int] | None = None,
    ) -> Sight: ...

    def arms(self, frame: np.ndarray, seats: Sequence[int] | None = None) -> tuple[ReachSighting, ...] | None:
        """The reaching hands of a frame the gate dropped (the hand network alone), ``None``
        when arms are not read."""
        ...


def oracle_observer(recording: Any) -> Observer:
    """The pipeline with a perfect detector: a recording's true boxes stand in for YOLO (real
    calibration, zones and identification; marble colors from the boxes' classes). It measures
    everything but the detector, as :func:`vision.training.evaluate.oracle_detections` does for
    single scenes."""
    from vision.observe import Observer

    def boxes(frame_no: int | None) -> list[Detection]:
        assert frame_no is not None, "the oracle needs the recording's frame number"
        return [
            Detection(cls, 1.0, tuple(v * CANON_PX_PER_MM for v in box))
            for cls, box in recording.objects(frame_no)
        ]

    return Observer(seats=tuple(range(len(recording.names))), color_stage=False, boxes=boxes)


class LazyVision:
    """The vision pipeline of a dashboard started by ``serve``: the detector is loaded when live
    refereeing first starts, not when the server does (most game nights may never use it)."""

    def __init__(
        self,
        model: Path | None = None,
        zones: str | None = None,
        enrol: str | None = None,
        calibration: SavedCalibration | None = None,
    ) -> None:
        self.model, self.zones_file, self.enrol = model, zones, enrol
        self.calibration = calibration  # ``serve --calibration``: the zones known from the first frame
        self._observer: Observer | None = None

    def build(self) -> Observer:
        """The pipeline, made on first use; a missing model is a :class:`LiveError` naming it."""
        if self._observer is None:
            from vision.detect import default_model
            from vision.observe import Observer
            from vision.zones import load_zones

            model = self.model or default_model()
            if not Path(model).is_file():
                raise LiveError(f"detector model {model} not found: train and export it (docs/vision.md)")
            self._observer = Observer(
                model,
                seats=(0, 1, 2, 3),
                zones=load_zones(self.zones_file),
                enrol_dir=self.enrol,
                learn_table=True,
            )
            if self.calibration is not None:  # the markers still check it on every frame
                self._observer.start_from(self.calibration)
        return self._observer

    @property
    def gate(self) -> MotionGate:
        return self.build().gate

    @gate.setter
    def gate(self, gate: MotionGate) -> None:
        self.build().gate = gate

    @property
    def reaches(self) -> bool:
        return self.build().reaches

    @reaches.setter
    def reaches(self, on: bool) -> None:
        self.build().reaches = on

    @property
    def zones(self) -> Zones | None:
        return self.build().zones

    @property
    def assembler(self) -> Assembler:
        return self.build().assembler

    def know(self, memory: CardMemory | None) -> None:
        self.build().know(memory)

    def process(
        self,
        frame: np.ndarray,
        t: float | None = None,
        frame_no: int | None = None,
        seats: Sequence[int] | None = None,
    ) -> Sight | None:
        return self.build().process(frame, t, frame_no, seats)

    def sight(
        self,
        frame: np.ndarray,
        t: float | None = None,
        frame_no: int | None = None,
        seats: Sequence[int] | None = None,
    ) -> Sight:
        return self.build().sight(frame, t, frame_no, seats)

    def arms(self, frame: np.ndarray, seats: Sequence[int] | None = None) -> tuple[ReachSighting, ...] | None:
        return self.build().arms(frame, seats)


# ============================================================================ self-labelled frames


class FrameSaver:
    """Saves frames the tracker accepted as YOLO training data for :mod:`vision.training.finetune`.

    A frame qualifies when nothing is hidden and everything the pipeline saw agrees with the
    game state the tracker holds after it (every card where the state puts one, every marble's
    color): then each detection's class is right, and its box is the detector's own. One frame
    is kept per accepted table. Images are the rectified table (960 × 608), the detector's input;
    labels are YOLO text files in the same frame.
    """

    def __init__(self, folder: Path, prefix: str | None = None) -> None:
        self.folder = folder
        self.prefix = prefix or time.strftime("%Y%m%d-%H%M%S")
        for sub in ("images", "labels"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        self.saved = 0
        self._last: object = None

    def offer(
        self, image: np.ndarray, h: np.ndarray, detections: list[Detection], obs: Observation, state: State
    ) -> Path | None:
        """Save the frame if the state vouches for it; returns the image path when saved."""
        view = view_of_observation(obs, state.num_players)
        if not view.complete() or not matches(state, view) or view.key() == self._last:
            return None
        self._last = view.key()
        canon = rectify(image, h)
        name = f"{self.prefix}_{obs.frame if obs.frame is not None else self.saved:06d}"
        img_path = self.folder / "images" / f"{name}.jpg"
        if not cv2.imwrite(str(img_path), canon, [cv2.IMWRITE_JPEG_QUALITY, 95]):
            raise LiveError(f"--save-frames: cannot write {img_path}")
        (self.folder / "labels" / f"{name}.txt").write_text(yolo_lines(detections), encoding="utf-8")
        self.saved += 1
        return img_path


def yolo_lines(detections: list[Detection]) -> str:
    """Detections in the canonical frame as YOLO label lines (class cx cy w h, normalised)."""
    rows = (yolo_row(d.cls, d.box) for d in detections)
    return yolo_text(r for r in rows if r is not None)


# ============================================================================ the camera view


CLASS_COLORS: dict[str, tuple[int, int, int]] = {
    "card": (255, 200, 0),
    "card_band": (255, 140, 0),
    "card_back": (160, 160, 160),
    "marble_red": (40, 40, 230),
    "marble_blue": (230, 120, 30),
    "marble_black": (30, 30, 30),
    "marble_yellow": (30, 220, 240),
    "vp1": (60, 170, 200),
    "vp5": (230, 120, 40),
    "hand": (200, 60, 200),
}


def annotate(image: np.ndarray, h: np.ndarray, detections: list[Detection], obs: Observation) -> np.ndarray:
    """The frame with the play area, every detection and what is hidden, for the dashboard's camera view."""
    out = image.copy()
    to_image = np.linalg.inv(canonical_from_image(h))
    cw, ch = CANON_SIZE
    area = np.array([[[0, 0], [cw, 0], [cw, ch], [0, ch]]], np.float32)
    cv2.polylines(out, [cv2.perspectiveTransform(area, to_image)[0].astype(np.int32)], True, (0, 255, 0), 2)
    for d in detections:
        x1, y1, x2, y2 = d.box
        box = np.array([[[x1, y1], [x2, y1], [x2, y2], [x1, y2]]], np.float32)
        pts = cv2.perspectiveTransform(box, to_image)[0].astype(np.int32)
        color = CLASS_COLORS.get(d.cls, (255, 255, 255))
        cv2.polylines(out, [pts], True, color, 2 if d.cls == "hand" else 1, cv2.LINE_AA)
    hidden = obs.extra.get("covered", [])
    text = f"frame {obs.frame}: {len(detections)} detections" + (
        f", not seen: {len(hidden)} zones" if hidden else ""
    )
    cv2.putText(out, text, (10, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 255, 0), 2, cv2.LINE_AA)
    return out
