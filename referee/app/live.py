"""The live referee: camera (or recording) and dispenser board in, the tracker and the dashboard out.

One thread owns the loop: read a frame, hand the dispenser board's events to the tracker,
pass the frame through the still-frame gate, and for settled frames run the vision pipeline
(:class:`vision.observe.Observer`) and give the observation to the tracker. Every tracker call
goes through the game's lock (:meth:`web.hub.LiveGame.locked`, or :class:`LocalGame` without a
dashboard), so the dashboard publishes each change as soon as the call returns.

The gate lets through a short *burst* of settled frames after each motion (and after each
sensor event) rather than one: the tracker counts a zone only once it reads the same in
several frames, and a view no legal step explains must persist before it is judged.

Sources: a camera index, a network stream's URL (:mod:`referee.app.streams`), a video file, a
folder of images, or a rendered recording (:mod:`vision.training.recording`). Files are played at
their own pace by default (``speed`` 1: frames the pipeline cannot keep up with are dropped, as
from a live camera) or as fast as possible (``speed`` 0: every frame is processed, in order, and
the run is deterministic).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import queue
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

import cv2
import numpy as np

from referee.app.evidence import EvidenceKeeper
from referee.events import DispenserEvent
from referee.game import get_game, players_problem
from referee.gizmos import State
from referee.observation import Observation
from referee.tracker import Tracker, TrackerSettings, Update
from referee.tracker.explain import Limits
from referee.tracker.record import RecordWriteError
from referee.tracker.view import matches, view_of_observation
from vision.detect import Detection
from vision.errors import CalibrationError, FrameError, VisionError
from vision.frames import IMAGE_SUFFIXES, read_frame
from vision.framing import assess
from vision.geometry import CANON_PX_PER_MM, CANON_SIZE, canonical_from_image, rectify, yolo_row, yolo_text
from vision.motion import MOTION_THRESHOLD, MotionGate

if TYPE_CHECKING:
    from hardware.driver import DispenserDriver, StatusEvent
    from referee.app.cameras import CameraSettings
    from referee.app.streams import PhoneFrames
    from vision.observe import Assembler, Observer
    from web.live import FrameBuffer


class LiveError(Exception):
    """A camera, file, port or setting that cannot be used; the message names it and says why."""


# ============================================================================ frames


@dataclass(frozen=True, slots=True)
class Frame:
    """One camera frame: its index in the source, its capture time (s from the start), the image."""

    index: int
    time: float
    image: np.ndarray


class FrameFeed(Protocol):
    """Where frames come from; ``frames()`` ends when the source does (a camera never does)."""

    name: str
    live: bool  # a camera: frames come at their own pace and are never paced or dropped here

    def frames(self) -> Iterator[Frame]: ...

    def close(self) -> None: ...


class VideoFrames:
    """A video file, frame by frame, timed by its frame rate."""

    live = False

    def __init__(self, path: Path) -> None:
        self.name = f"video {path.name}"
        self.cap = cv2.VideoCapture(str(path))
        if not self.cap.isOpened():
            raise LiveError(f"video file {path}: cannot be opened (not a video, or an unsupported codec)")
        fps = self.cap.get(cv2.CAP_PROP_FPS)
        self.fps = fps if fps and fps > 0 else 10.0

    def frames(self) -> Iterator[Frame]:
        index = 0
        while True:
            ok, image = self.cap.read()
            if not ok or image is None:
                return
            yield Frame(index, index / self.fps, image)
            index += 1

    def close(self) -> None:
        self.cap.release()


class FolderFrames:
    """A folder of still images, in name order, at ``fps`` frames per second."""

    live = False

    def __init__(self, folder: Path, fps: float = 10.0) -> None:
        self.name = f"images {folder}"
        self.paths = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self.paths:
            raise LiveError(f"image folder {folder}: holds no images ({', '.join(IMAGE_SUFFIXES)})")
        if fps <= 0:
            raise LiveError(f"--fps: expected a positive frame rate, got {fps}")
        self.fps = fps

    def frames(self) -> Iterator[Frame]:
        for index, path in enumerate(self.paths):
            try:
                image = read_frame(path)
            except FrameError as exc:
                raise LiveError(str(exc)) from exc
            yield Frame(index, index / self.fps, image)

    def close(self) -> None:
        pass


class RecordingFrames:
    """A rendered recording's frames (:class:`vision.training.recording.Recording`), at their own times."""

    live = False

    def __init__(self, recording: Any) -> None:
        self.recording = recording
        self.name = f"recording {recording.path.name}"

    def frames(self) -> Iterator[Frame]:
        for index, t, path in self.recording.frames():
            try:
                image = read_frame(path)
            except FrameError as exc:
                raise LiveError(
                    f"recording {self.recording.path}: {exc} (delete the folder to render it again)"
                ) from exc
            yield Frame(index, t, image)

    def close(self) -> None:
        pass


def open_source(text: str, fps: float = 10.0, camera: CameraSettings | None = None) -> FrameFeed:
    """A frame source from what a user types: a camera index (opened under ``camera``'s settings,
    :mod:`referee.app.cameras`), a stream URL (http:// MJPEG, rtsp://), a video file, or a folder
    of images (a folder holding ``recording.json`` is a rendered recording)."""
    text = text.strip()
    if not text:
        raise LiveError(
            "camera source: none given (a camera index such as 0, a stream URL, a video file "
            "or an image folder)"
        )
    from referee.app.streams import PHONE_SOURCE, StreamFrames, is_stream_url  # streams imports this module

    if text.lower() == PHONE_SOURCE:
        raise LiveError(
            "camera source 'phone': the phone's browser sends its frames to the dashboard's HTTPS "
            "page, which only run --camera phone serves (restart the run with it)"
        )
    if is_stream_url(text):
        return StreamFrames(text)
    if text.isdigit():
        from referee.app.cameras import CameraFrames  # cameras imports this module

        return CameraFrames(int(text), camera)
    path = Path(text).expanduser()
    if path.is_dir():
        if (path / "recording.json").is_file():
            from vision.training.recording import Recording

            try:
                return RecordingFrames(Recording.open(path))
            except VisionError as exc:
                raise LiveError(str(exc)) from exc
        return FolderFrames(path, fps)
    if path.is_file():
        if path.suffix.lower() in IMAGE_SUFFIXES:
            raise LiveError(
                f"camera source {text!r}: a single image is not a video (put frames in a folder, "
                "or give a video file or a camera index)"
            )
        return VideoFrames(path)
    raise LiveError(f"camera source {text!r}: no such camera index, video file or image folder")


def paced(frames: Iterator[Frame], speed: float, stats: RunStats) -> Iterator[Frame]:
    """Deliver file frames at ``speed`` times their own pace, dropping those the reader is too late
    for (as a live camera would); ``speed`` 0 delivers every frame at once."""
    if speed <= 0:
        yield from frames
        return
    start: float | None = None
    last = 0.0
    for frame in frames:
        if start is None:
            start = time.monotonic() - frame.time / speed
        due = start + frame.time / speed
        now = time.monotonic()
        interval = max(1e-3, (frame.time - last) / speed)
        last = frame.time
        if now < due:
            time.sleep(due - now)
        elif now - due > interval:
            stats.dropped += 1
            continue
        yield frame


# ============================================================================ the dispenser


class DispenserFeed:
    """The dispenser board through the real serial driver; its events wait in a queue for the
    runner's thread (the tracker is called from that thread only)."""

    def __init__(self, port: str, clock: Callable[[], float] = time.time, classify: Any = None) -> None:
        check_port(port)
        from hardware.driver import DispenserDriver

        self.port = port
        self.queue: queue.SimpleQueue[DispenserEvent] = queue.SimpleQueue()
        self.status_lines: list[str] = []
        self._count = 0
        self._cond = threading.Condition()
        self.driver: DispenserDriver = DispenserDriver(
            port, sink=self._sink, on_status=self._status, clock=clock, classify=classify
        )

    def _sink(self, event: DispenserEvent) -> None:
        self.queue.put(event)
        with self._cond:
            self._count += 1
            self._cond.notify_all()

    def _status(self, event: StatusEvent) -> None:
        self.status_lines.append(f"dispenser {event.kind}: {event.detail}")

    def start(self) -> DispenserFeed:
        self.driver.start()
        return self

    def wait_connected(self, timeout: float = 5.0) -> None:
        """Wait until the driver holds the port: opening a port flushes what is queued on it, so a
        board (the simulated one) must not speak before."""
        deadline = time.monotonic() + timeout
        while not self.driver.status().connected:
            if time.monotonic() > deadline:
                raise LiveError(f"dispenser on {self.port}: the driver could not open the port")
            time.sleep(0.01)

    def wait_for(self, count: int, timeout: float = 5.0) -> None:
        """Wait until ``count`` events have arrived in all (the simulated board's lock-step mode)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._count >= count, timeout):
                raise LiveError(
                    f"dispenser on {self.port}: {count - self._count} event(s) the board sent never arrived"
                )

    def drain(self) -> list[DispenserEvent]:
        out = []
        while True:
            try:
                out.append(self.queue.get_nowait())
            except queue.Empty:
                return out

    def close(self) -> None:
        self.driver.stop()


def check_port(port: str) -> None:
    """Open the serial port once, so a wrong name is one clear error now rather than retries later."""
    import serial

    if "://" not in port and not Path(port).exists():
        raise LiveError(f"serial port {port}: no such device (is the dispenser board plugged in?)")
    try:
        serial.serial_for_url(port, baudrate=115200, timeout=0.05).close()
    except (serial.SerialException, OSError, ValueError) as exc:
        raise LiveError(f"serial port {port}: cannot open it: {exc}") from exc


class SimulatedDispenser:
    """A recording's dispenser log played by a virtual board on a pseudo-terminal (the real
    protocol, read back by the real driver). ``send_until(t)`` sends every event up to time ``t``;
    :meth:`play` sends them at their own pace from a thread instead."""

    def __init__(self, events: list[dict[str, Any]], seed: int = 0) -> None:
        from hardware.simulator import PtyLink, Simulator, VirtualBoard

        self.events = sorted(events, key=lambda e: e["time"])
        self.sim = Simulator(PtyLink(), VirtualBoard(board="sim-dispenser", seed=seed))
        self.port = self.sim.plug()
        self.rng = random.Random(seed)
        self.sent = 0
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def hello(self) -> None:
        """The board's start: boot noise and HELLO (send once the driver listens)."""
        self.sim.reset()

    def _payload(self, e: dict[str, Any]) -> Any:
        from hardware.protocol import Button, Draw, Return, Row
        from hardware.simulator import sample_rgbc

        kind = e["kind"]
        if kind == "row":
            return Row(e["color"], sample_rgbc(e["color"], self.rng))
        if kind == "draw":
            return Draw(e["color"], sample_rgbc(e["color"], self.rng))
        if kind == "return":
            return Return(int(e["count"]), tuple(e.get("colors", ())))
        if kind == "button":
            return Button()
        raise LiveError(f"recording: unknown dispenser event {kind!r}")

    def send_until(self, t: float) -> int:
        """Send every event up to time ``t``; returns how many have been sent in all."""
        while self.sent < len(self.events) and self.events[self.sent]["time"] <= t + 1e-9:
            self.sim.send(self._payload(self.events[self.sent]))
            self.sent += 1
        return self.sent

    def play(self, speed: float) -> None:
        """Send the events at their own pace (``speed`` times real time), with a heartbeat each second."""

        def run() -> None:
            start = time.monotonic()
            beat = 1.0
            while self.sent < len(self.events) and not self._stop.is_set():
                now = (time.monotonic() - start) * speed
                if now >= beat:
                    self.sim.heartbeat()
                    beat += 1.0
                self.send_until(now)
                self._stop.wait(0.005)

        self._thread = threading.Thread(target=run, name="simulated-dispenser", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
        self.sim.close()


# ============================================================================ the game


class GameAccess(Protocol):
    """A game whose tracker is used under a lock (``web.hub.LiveGame`` or :class:`LocalGame`)."""

    tracker: Tracker

    def locked(self) -> contextlib.AbstractContextManager[Tracker]: ...


class LocalGame:
    """A tracker behind a lock, for refereeing without the dashboard."""

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker
        self._lock = threading.RLock()

    @contextlib.contextmanager
    def locked(self) -> Iterator[Tracker]:
        with self._lock:
            yield self.tracker


def replay_settings(base: TrackerSettings | None = None, seconds: float = 10.0) -> TrackerSettings:
    """Tracker settings whose searches are bounded by node counts only, so a replay as fast as
    possible gives the same verdicts on any machine however busy (the default time bounds keep a
    live game responsive instead)."""
    base = base or TrackerSettings()
    bounds = {
        f.name: dataclasses.replace(getattr(base, f.name), max_seconds=seconds)
        for f in dataclasses.fields(base)
        if isinstance(getattr(base, f.name), Limits)
    }
    return dataclasses.replace(base, **bounds)


# ============================================================================ self-labelled frames


class FrameSaver:
    """Saves frames the tracker accepted as YOLO training data for :mod:`vision.training.finetune`.

    A frame qualifies when nothing is hidden and everything the pipeline saw agrees with the
    game state the tracker holds after it (every card where the state puts one, every marble's
    colour): then each detection's class is right, and its box is the detector's own. One frame
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


# ============================================================================ the pipeline


class Pipeline(Protocol):
    """The vision stages the loop runs on a settled frame: detection (calibrate, rectify, detect),
    then assembly into an observation (zones, identification)."""

    @property
    def assembler(self) -> Assembler: ...

    def detect(self, frame: Frame) -> tuple[np.ndarray, list[Detection], dict[str, Any]]: ...


class VisionPipeline:
    """The real thing: :class:`vision.observe.Observer` (ArUco calibration and the YOLO detector)."""

    def __init__(self, observer: Observer) -> None:
        self.observer = observer
        self.assembler = observer.assembler

    def detect(self, frame: Frame) -> tuple[np.ndarray, list[Detection], dict[str, Any]]:
        return self.observer.detect(frame.image)


class OraclePipeline:
    """The pipeline with a perfect detector: a recording's true boxes stand in for YOLO (real
    calibration, zones and identification). It measures everything but the detector, as
    :func:`vision.training.evaluate.oracle_detections` does for single scenes."""

    def __init__(self, recording: Any) -> None:
        from vision.calibrate import Calibrator
        from vision.observe import Assembler

        self.recording = recording
        self.calibrator = Calibrator()
        self.assembler = Assembler()

    def detect(self, frame: Frame) -> tuple[np.ndarray, list[Detection], dict[str, Any]]:
        cal = self.calibrator.update(frame.image)
        dets = [
            Detection(cls, 1.0, tuple(v * CANON_PX_PER_MM for v in box))
            for cls, box in self.recording.objects(frame.index)
        ]
        notes = {"calibration": cal.state, "markers": list(cal.markers_seen)}
        return cal.homography, dets, notes


# ============================================================================ the runner


@dataclass(slots=True)
class RunOptions:
    """How the loop runs."""

    speed: float = 1.0  # files: 1 = their own pace (late frames dropped), 0 = every frame at once
    motion: float = MOTION_THRESHOLD  # grey-level change of the gate's thumbnail that counts as motion
    settle: int = 2  # still frames after motion before the pipeline runs
    burst: int = 6  # settled frames observed after each motion or sensor event
    show_every: float = 0.25  # seconds between dashboard images while nothing is observed
    framing_every: float = 1.0  # seconds between the framing assistant's verdicts on the dashboard (0: none)
    save_frames: Path | None = None


@dataclass(slots=True)
class Change:
    """An input that changed the game: when (wall clock and frame), and what."""

    wall: float
    frame: int
    frame_time: float
    steps: list[dict[str, Any]]
    warnings: list[dict[str, Any]]
    turn: int  # the game's turn after the change
    lines: list[dict[str, Any]] = field(default_factory=list)  # the move log's new lines (tracker.log)


@dataclass(slots=True)
class RunStats:
    """What a run did, for the demo's summary and the benchmark."""

    frames: int = 0
    observed: int = 0
    dropped: int = 0
    saved: int = 0
    events: int = 0
    seconds: float = 0.0
    observe_seconds: float = 0.0
    calibration_failures: int = 0
    write_failures: int = 0  # tracker calls refused because the record could not be written
    started: float = 0.0  # wall clock of the first frame
    first_frame_time: float = 0.0
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def fps(self) -> float:
        return self.frames / self.seconds if self.seconds else 0.0


@dataclass(slots=True)
class Feed:
    """What a run reads: frames, and the dispenser (a port, or the recording's simulated board)."""

    source: FrameFeed
    dispenser: DispenserFeed | None = None
    board: SimulatedDispenser | None = None

    def close(self) -> None:
        if self.dispenser is not None:
            self.dispenser.close()
        if self.board is not None:
            self.board.close()
        self.source.close()


Opener = Callable[[Any], Feed]  # settings (web.hub.Settings or None) -> an opened Feed


class LiveReferee:
    """Runs the loop; also the dashboard's live runner (``start``/``pause``/``stop``/``status``)."""

    def __init__(
        self,
        pipeline: Pipeline,
        opener: Opener,
        options: RunOptions | None = None,
        frames: FrameBuffer | None = None,
        on_change: Callable[[Change], None] | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.opener = opener
        self.options = options or RunOptions()
        self.frame_buffer = frames
        self.on_change = on_change
        self.stats = RunStats()
        self.error: BaseException | None = None
        self.clock = 0.0  # the time of the frame in hand (the dispenser's clock in lock-step mode)
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._paused = threading.Event()
        self._game: GameAccess | None = None
        self._source: FrameFeed | None = None
        self._unwritten: list[DispenserEvent] = []  # sensor events to hand over again
        self._write_down = False  # the record could not be written at the last try
        self.evidence: EvidenceKeeper | None = None  # crops for each warning (referee/app/evidence.py)

    # -- the dashboard's live-runner protocol ---------------------------------------------------

    def start(self, game: GameAccess, settings: Any = None) -> None:
        """Start refereeing ``game`` in a thread (or resume it after a pause)."""
        if self._thread is not None and self._thread.is_alive():
            if self._paused.is_set() and game is self._game:
                self._paused.clear()
                return
            raise RuntimeError("the live referee is already running; stop it first")
        try:
            feed = self.opener(settings)
        except (LiveError, VisionError) as exc:
            raise RuntimeError(str(exc)) from exc
        self.launch(game, feed)

    def pause(self) -> None:
        self._paused.set()

    def stop(self) -> None:
        self._stop.set()
        self._paused.clear()
        # A source that waits for frames pushed to it (a network stream, the phone) may wait long:
        # it is woken now (its close() is thread-safe), not after the join's timeout.
        interrupt = getattr(self._source, "interrupt", None)
        if interrupt is not None:
            interrupt()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(10.0)

    def status(self) -> str:
        if self._thread is None or not self._thread.is_alive():
            return "stopped"
        return "paused" if self._paused.is_set() else "running"

    # -- running ------------------------------------------------------------------------------

    def launch(self, game: GameAccess, feed: Feed) -> None:
        """Referee ``game`` from an opened feed in a thread of its own."""
        self._stop.clear()
        self._paused.clear()
        self._game = game
        self._source = feed.source
        self.error = None
        self._thread = threading.Thread(
            target=self._guarded, args=(game, feed), name="live-referee", daemon=True
        )
        self._thread.start()

    def _guarded(self, game: GameAccess, feed: Feed) -> None:
        try:
            self.referee(game, feed)
        except BaseException as exc:  # reported by wait() and on the dashboard
            self.error = exc
            if self.frame_buffer is not None:
                self.frame_buffer.set_status(False, f"stopped: {exc}")

    def run(self, game: GameAccess, feed: Feed) -> RunStats:
        """Referee until the source ends (or :meth:`stop`), in a thread; raise what stopped it."""
        self.launch(game, feed)
        return self.wait()

    def wait(self) -> RunStats:
        while self._thread is not None and self._thread.is_alive():
            self._thread.join(0.2)
        if self.error is not None:
            raise self.error
        return self.stats

    def referee(self, game: GameAccess, feed: Feed) -> RunStats:
        """The loop (blocking, in the calling thread); closes the feed when done."""
        opt = self.options
        stats = self.stats = RunStats()
        gate = MotionGate(threshold=opt.motion, settle=opt.settle)
        saver = FrameSaver(opt.save_frames) if opt.save_frames else None
        seats = tuple(range(len(game.tracker.names)))
        burst = opt.burst
        shown = framed = 0.0
        lockstep = feed.board is not None and (opt.speed <= 0 or feed.source.live)
        source = feed.source.frames()
        first = next(source, None)  # a phone or stream may send nothing until the referee stops
        if first is not None:
            zones = getattr(self.pipeline.assembler, "zones", None)  # a test's stand-in may have none
            self.evidence = EvidenceKeeper(zones, len(seats)) if zones is not None else None
            self._warm_up(first, seats)
        if feed.board is not None and feed.dispenser is not None:
            feed.dispenser.start().wait_connected()
            feed.board.hello()
            if not lockstep:
                feed.board.play(opt.speed)
        elif feed.dispenser is not None:
            feed.dispenser.start()
        both = itertools.chain([first] if first is not None else [], source)
        frames = both if feed.source.live else paced(both, opt.speed, stats)
        start = time.perf_counter()
        try:
            for frame in frames:
                if self._stop.is_set():
                    break
                if not stats.frames:
                    stats.started, stats.first_frame_time = time.time(), frame.time
                stats.frames += 1
                self.clock = frame.time
                if self._paused.is_set():
                    continue
                if feed.dispenser is not None:
                    if lockstep and feed.board is not None:
                        feed.dispenser.wait_for(feed.board.send_until(frame.time))
                    events = feed.dispenser.drain()
                    stats.events += len(events)
                    events = self._unwritten + events
                    self._unwritten = []
                    if events:
                        burst = opt.burst
                        for i, event in enumerate(events):
                            try:
                                with game.locked() as tracker:
                                    logged, warned = len(tracker.log), len(tracker.warnings)
                                    update = tracker.dispenser(event)
                                    if self.evidence is not None:
                                        self.evidence.observed(tracker, warned)
                                    lines = [line.to_json() for line in tracker.log[logged:]]
                                    turn = tracker.state.turn
                            except RecordWriteError as exc:
                                self._unwritten = events[i:]  # handed over again at the next frame
                                self._record_down(exc)
                                break
                            self._record_up()
                            self._changed(update, frame, turn, lines)
                if (
                    self.frame_buffer is not None
                    and opt.framing_every > 0
                    and time.monotonic() - framed >= opt.framing_every
                ):
                    framed = time.monotonic()
                    zones = getattr(self.pipeline.assembler, "zones", None)
                    self.frame_buffer.set_framing(assess(frame.image, zones).to_json())
                gate.update(frame.image)
                if gate.still == 0:
                    burst = opt.burst
                if gate.still >= opt.settle and burst > 0:
                    burst -= 1
                    self._observe(game, frame, seats, saver)
                    shown = time.monotonic()
                elif self.frame_buffer is not None and time.monotonic() - shown >= opt.show_every:
                    self.frame_buffer.publish_image(frame.image)
                    shown = time.monotonic()
        finally:
            stats.seconds = time.perf_counter() - start
            stats.saved = saver.saved if saver else 0
            if feed.dispenser is not None:
                stats.notes += feed.dispenser.status_lines
            feed.close()
        return stats

    def _warm_up(self, frame: Frame, seats: tuple[int, ...]) -> None:
        """Run the pipeline once before the clock starts: the first observation builds the card
        references and loads the model, and must not make a live feed fall behind its sensors."""
        with contextlib.suppress(VisionError):
            h, detections, notes = self.pipeline.detect(frame)
            self.pipeline.assembler.assemble(
                frame.image, h, detections, seats, frame.time, frame.index, notes
            )

    def _observe(
        self, game: GameAccess, frame: Frame, seats: tuple[int, ...], saver: FrameSaver | None
    ) -> None:
        stats = self.stats
        t0 = time.perf_counter()
        try:
            h, detections, notes = self.pipeline.detect(frame)
        except CalibrationError as exc:
            stats.calibration_failures += 1
            if self.frame_buffer is not None:
                self.frame_buffer.set_status(False, str(exc))
                self.frame_buffer.publish_image(frame.image)
            return
        obs = self.pipeline.assembler.assemble(
            frame.image, h, detections, seats, frame.time, frame.index, notes
        )
        stats.observe_seconds += time.perf_counter() - t0
        stats.observed += 1
        try:
            with game.locked() as tracker:
                logged, warned = len(tracker.log), len(tracker.warnings)
                update = tracker.observe(obs)
                if self.evidence is not None:
                    self.evidence.observed(tracker, warned, frame.image, h, obs)
                lines = [line.to_json() for line in tracker.log[logged:]]
                turn = tracker.state.turn
                if saver is not None:
                    saver.offer(frame.image, h, detections, obs, tracker.state)
        except RecordWriteError as exc:  # nothing was kept: the next still frame tries again
            self._record_down(exc)
            return
        self._record_up()
        self._changed(update, frame, turn, lines)
        if self.frame_buffer is not None:
            self.frame_buffer.set_status(
                True, f"markers {notes.get('markers')}, calibration {notes.get('calibration')}"
            )
            self.frame_buffer.publish_image(annotate(frame.image, h, detections, obs))

    def _record_down(self, exc: RecordWriteError) -> None:
        """A write failed (disk full): the tracker is as it was; say so once, and go on."""
        self.stats.write_failures += 1
        if not self._write_down:
            self._write_down = True
            sys.stderr.write(f"run: {exc}; refereeing goes on and records again once it can write\n")
            if self.frame_buffer is not None:
                self.frame_buffer.set_status(False, str(exc))

    def _record_up(self) -> None:
        if self._write_down:
            self._write_down = False
            sys.stderr.write("run: the game record is being written again\n")

    def _changed(self, update: Update, frame: Frame, turn: int, lines: list[dict[str, Any]]) -> None:
        if not update.changed:
            return
        change = Change(
            time.time(),
            frame.index,
            frame.time,
            [s.to_json() for s in update.steps],
            [w.to_json() for w in update.warnings],
            turn,
            lines,
        )
        self.stats.changes.append(change)
        if self.on_change is not None:
            self.on_change(change)


class LazyVision:
    """The vision pipeline of a dashboard started by ``serve``: the detector is loaded when live
    refereeing first starts, not when the server does (most game nights may never use it)."""

    def __init__(self, model: Path | None = None, zones: str | None = None, enrol: str | None = None) -> None:
        self.model, self.zones, self.enrol = model, zones, enrol
        self._pipeline: VisionPipeline | None = None

    def build(self) -> VisionPipeline:
        """The pipeline, made on first use; a missing model is a :class:`LiveError` naming it."""
        if self._pipeline is None:
            from vision.detect import default_model
            from vision.observe import Observer
            from vision.zones import load_zones

            model = self.model or default_model()
            if not Path(model).is_file():
                raise LiveError(f"detector model {model} not found: train and export it (docs/vision.md)")
            observer = Observer(model, seats=(0, 1, 2, 3), zones=load_zones(self.zones), enrol_dir=self.enrol)
            self._pipeline = VisionPipeline(observer)
        return self._pipeline

    @property
    def assembler(self) -> Assembler:
        return self.build().assembler

    def detect(self, frame: Frame) -> tuple[np.ndarray, list[Detection], dict[str, Any]]:
        return self.build().detect(frame)


def serve_runner(enrol: str | None = None, fps: float = 10.0) -> tuple[LiveReferee, FrameBuffer]:
    """The live runner and frame source ``gizmos-referee serve`` attaches to the dashboard: the
    setup page's Start opens the camera source and the serial port of the settings (saved beside
    the game records) and referees the game from the camera, as ``run`` does."""
    from web.live import FrameBuffer

    frames = FrameBuffer("camera (not started)")
    vision = LazyVision(enrol=enrol)

    def opener(settings: Any = None) -> Feed:
        camera = str(getattr(settings, "camera_source", "") or "").strip()
        if not camera:
            raise LiveError(
                "no camera source: set one on the setup page (0 for the first camera, a stream URL, "
                "a video file or a folder of images)"
            )
        port = str(getattr(settings, "serial_port", "") or "").strip()
        source = open_source(camera, fps)
        try:
            vision.build()  # a missing model is said now, not from the runner's thread
        except LiveError:
            source.close()
            raise
        frames.set_status(False, "starting", source=source.name)
        frames.follow_link(getattr(source, "link_status", None))
        try:
            dispenser = DispenserFeed(port) if port and port.lower() != "none" else None
        except LiveError:
            source.close()
            raise
        return Feed(source, dispenser)

    return LiveReferee(vision, opener, RunOptions(), frames), frames


# ============================================================================ the camera view


CLASS_COLOURS: dict[str, tuple[int, int, int]] = {
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
        colour = CLASS_COLOURS.get(d.cls, (255, 255, 255))
        cv2.polylines(out, [pts], True, colour, 2 if d.cls == "hand" else 1, cv2.LINE_AA)
    hidden = obs.extra.get("covered", [])
    text = f"frame {obs.frame}: {len(detections)} detections" + (
        f", not seen: {len(hidden)} zones" if hidden else ""
    )
    cv2.putText(out, text, (10, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 255, 0), 2, cv2.LINE_AA)
    return out


# ============================================================================ commands


def serve_dashboard(
    runner: LiveReferee,
    frames: FrameBuffer | None,
    games_dir: Path,
    port: int,
    err: TextIO,
    camera_source: str = "",
    serial_port: str = "",
    host: str = "127.0.0.1",
    trusted_hosts: Sequence[str] = (),
    phone: PhoneFrames | None = None,
) -> tuple[Any, Any, str]:
    """The dashboard on ``host`` (this machine only unless told otherwise) with this runner
    attached, served from a thread. Returns the app, the server and its address. The admin PIN
    is ``$GIZMOS_ADMIN_PIN`` or a random one, printed. Host names the pages may be reached by
    are checked as ``serve`` checks them (``web/serve.py``). With ``phone`` the phone's browser
    is the camera: the dashboard is served over HTTPS with a certificate made on this machine
    (``web/tls.py``), and the phone page's address, the certificate's fingerprint and a
    pairing code are printed."""
    from referee.app.card_art import DrawnCardArt
    from web import create_app
    from web.security import random_pin
    from web.serve import PIN_ENV, ServeError, exposure_warning, make_dashboard_server
    from web.serve import trusted_hosts as trusted_names

    pin = os.environ.get(PIN_ENV) or random_pin()
    if PIN_ENV not in os.environ:
        err.write(f"admin PIN for the dashboard: {pin} (set ${PIN_ENV} to choose one)\n")
    warning = exposure_warning(host)
    if warning:
        err.write(f"run: the dashboard is {warning}\n")
    config: dict[str, Any] = {
        "ADMIN_PIN": pin,
        "GAMES_DIR": str(games_dir),
        "FRAME_SOURCE": frames,
        "LIVE_RUNNER": runner,
        "CARD_ART": DrawnCardArt(),
        "CAMERA_SOURCE": camera_source,
        "SERIAL_PORT": serial_port,
        "TRUSTED_HOSTS": trusted_names(host, trusted_hosts),
    }
    context = None
    if phone is not None:
        from web.tls import CertificateError, ensure_certificate, local_names, server_context

        try:
            cert = ensure_certificate(games_dir / "tls", local_names(host, trusted_hosts))
        except CertificateError as exc:
            raise LiveError(str(exc)) from None
        context = server_context(cert)
        config.update(PHONE_CAMERA=phone, SESSION_COOKIE_SECURE=True)
    app = create_app(config)
    try:  # a busy port is an error, never another port
        server = make_dashboard_server(host, port, app, ssl_context=context)
    except ServeError as exc:
        raise LiveError(str(exc)) from None
    threading.Thread(target=server.serve_forever, name="dashboard", daemon=True).start()
    shown = f"[{host}]" if ":" in host else host
    url = f"{'https' if phone is not None else 'http'}://{shown}:{server.port}/"
    if phone is not None:
        from web.phone import pairing_of
        from web.serve import is_loopback

        code, ttl = pairing_of(app).new_code()
        reach = host
        if host in ("0.0.0.0", "::"):  # the phone needs an address it can reach, not the wildcard
            lan = [n for n in cert.names if n not in ("localhost", "127.0.0.1", "::1")]
            reach = next(iter(trusted_hosts), lan[0] if lan else host)
        phone_url = f"https://{f'[{reach}]' if ':' in reach else reach}:{server.port}/phone"
        err.write(
            f"run: the phone camera: open {phone_url} on the phone, accept the certificate warning "
            f"once (this referee made its own; SHA-256 {cert.fingerprint}), then pair with the code "
            f"{code} (good once, {ttl / 60:g} minutes; a new one at {phone_url}/pair) or the admin PIN\n"
        )
        if is_loopback(host):
            err.write(
                f"run: note: {host} is this machine only; for a phone on the network listen on it "
                "(--host 0.0.0.0 --trusted-host THIS-MACHINE'S-ADDRESS)\n"
            )
    return app, server, url


def write_summary(
    names: list[str], scores: list[dict[str, Any]], warnings: list[dict[str, Any]], out: TextIO
) -> None:
    """The scoring table and every warning (who, rule, what happened, the fix), for the terminal."""
    out.write("Final scores\n" if scores and scores[0].get("final", True) else "Scores\n")
    out.write(f"{'rank':<6}{'player':<12}{'total':>6}{'printed':>9}{'tokens':>8}{'gizmos':>8}\n")
    for r in scores:
        out.write(
            f"{r['rank']:<6}{r['name'][:11]:<12}{r['total']:>6}{r['printed_vp']:>9}{r['token_points']:>8}"
            f"{r['gizmos']:>8}\n"
        )
    write_warnings(names, warnings, out)


def write_warnings(names: Sequence[str], warnings: list[dict[str, Any]], out: TextIO) -> None:
    """Every warning (who, rule, what happened, the fix), for the terminal; any game's."""
    out.write(f"\nWarnings ({len(warnings)})\n")
    for w in warnings:
        who = names[w["player"]] if w.get("player") is not None else "the table"
        rulings = ", ".join(str(r) for r in w.get("rulings", ()))
        label = f"{w['code']} (ruling {rulings})" if w.get("code") else "please check"
        out.write(f"  #{w['id']} turn {w['turn']} (round {w['round']}), {who}: {label}\n")
        out.write(f"      {w['message']}\n      fix: {w['remedy']}\n")


def change_printer(names: list[str], out: TextIO, steps: bool = True) -> Callable[[Change], None]:
    """Prints each accepted step (the move log's line) and each warning as it happens."""

    def show(change: Change) -> None:
        if steps:
            for line in change.lines:
                out.write(f"round {line['round']}, turn {line['turn']}: {line['text']}\n")
        for w in change.warnings:
            who = names[w["player"]] if w.get("player") is not None else "the table"
            out.write(f"WARNING turn {w['turn']}, {who}: {w.get('code') or 'please check'}: {w['message']}\n")
        out.flush()

    return show


def _writable_folder(folder: Path, option: str) -> None:
    """Make ``folder`` (and its parents) now and check it can be written: a path under a file
    or on read-only media is one line before anything starts, not a traceback later."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LiveError(f"{option}: cannot create folder {folder}: {exc.strerror or exc}") from None
    if not os.access(folder, os.W_OK):
        raise LiveError(f"{option}: folder {folder} cannot be written (read-only?)")


def run_table(args: Any) -> int:
    """``gizmos-referee run``: referee a real table until the source ends or Ctrl-C."""
    from referee.app.broadcast import broadcast_live_game
    from referee.app.cameras import given_controls, settings_from
    from referee.app.streams import PHONE_SOURCE, PhoneFrames
    from referee.tracker import TrackerError
    from referee.tracker.record import RecordError
    from vision.calibrate import load_calibration
    from vision.detect import default_model
    from vision.observe import Observer
    from vision.zones import load_zones
    from web.hub import HubError

    resume = Path(args.resume).expanduser() if getattr(args, "resume", None) else None
    serial = None if (args.serial or "").strip().lower() in ("", "none") else args.serial
    if not args.no_serve:
        from web.serve import ServeError, check_port

        try:
            check_port(args.port)
        except ServeError as exc:
            raise LiveError(str(exc)) from None
    games = Path(args.games_dir).expanduser()
    _writable_folder(games, "--games-dir")
    if args.save_frames:
        _writable_folder(Path(args.save_frames).expanduser(), "--save-frames")
    resumed: Tracker | None = None
    if resume is not None:
        if args.record:
            raise LiveError("--resume and --record: give one (--resume continues the record it names)")
        resumed = Tracker.open(resume)
        if args.names and [" ".join(n.split()) for n in args.names] != resumed.names:
            raise LiveError(f"--players: the record {resume} is a game of {', '.join(resumed.names)}")
        args.names = resumed.names
    if not args.names:
        raise LiveError("--players: give 2-4 names in seat order (or --resume a recorded game)")
    names = [" ".join(n.split()) for n in args.names]
    problem = players_problem(get_game("gizmos"), len(names))
    if problem:
        raise LiveError(f"--players: {problem} names")
    if len({n.casefold() for n in names}) != len(names) or not all(names):
        raise LiveError("--players: every player needs a different, non-empty name")
    zones = load_zones(args.zones)
    for seat in range(len(names)):
        zones.seat(seat)  # a zones file without this seat is a ZonesError naming it
    calibration = getattr(args, "calibration", None)  # run --calibration: the saved starting point
    saved = load_calibration(Path(calibration).expanduser(), zones) if calibration else None

    camera_settings = settings_from(args)
    if not str(args.camera).strip().isdigit() and given_controls(args):
        raise LiveError(
            f"{given_controls(args)[0]}: camera controls apply to a USB camera (--camera 0, 1, ...); "
            "a phone or IP camera sets its own"
        )
    frames: FrameBuffer | None = None
    phone: PhoneFrames | None = None
    if str(args.camera).strip().lower() == PHONE_SOURCE:
        if args.no_serve:
            raise LiveError("--camera phone: the phone sends its frames to the dashboard; drop --no-serve")
        phone = PhoneFrames()

    def opener(settings: Any = None) -> Feed:
        camera = (getattr(settings, "camera_source", "") or args.camera) if settings else args.camera
        port = (getattr(settings, "serial_port", "") or serial) if settings else serial
        port = None if (port or "").strip().lower() in ("", "none") else port
        is_phone = phone is not None and str(camera).strip().lower() == PHONE_SOURCE
        source: FrameFeed = (
            phone if is_phone and phone is not None else open_source(str(camera), args.fps, camera_settings)
        )
        report = getattr(source, "report", None)
        if report:  # what a webcam's driver accepted of the settings asked for
            sys.stderr.write(f"run: {source.name}: {'; '.join(report)}\n")
        if frames is not None:  # a network stream's link state on the dashboard
            frames.follow_link(getattr(source, "link_status", None))
        try:
            dispenser = DispenserFeed(port) if port else None
        except LiveError:
            source.close()
            raise
        return Feed(source, dispenser)

    feed = opener()  # a missing camera or a bad port is reported now, before anything else starts
    err = sys.stderr
    try:
        model = Path(args.model) if args.model else default_model()
        if not model.is_file():
            raise LiveError(
                f"--model: detector model {model} not found (train and export it: docs/vision.md)"
            )
        observer = Observer(model, seats=tuple(range(len(names))), zones=zones, enrol_dir=args.enrol)
        if saved is not None:  # the zones are known from the first frame; the markers still check it
            observer.calibrator.start_from(saved)
            err.write(f"run: starting from the calibration in {calibration}\n")
    except BaseException:
        feed.close()
        raise
    options = RunOptions(
        speed=args.speed, save_frames=Path(args.save_frames).expanduser() if args.save_frames else None
    )
    if not args.no_serve:
        from web.live import FrameBuffer

        frames = FrameBuffer(feed.source.name)
        frames.follow_link(getattr(feed.source, "link_status", None))
    runner = LiveReferee(VisionPipeline(observer), opener, options, frames, change_printer(names, sys.stdout))
    server = None
    if args.no_serve:
        record = Path(args.record) if args.record else games / f"{time.strftime('%Y%m%d-%H%M%S')}.sqlite"
        record = resume or record
        # With neither a dispenser board nor a dashboard nobody signals the end of a turn: the
        # tracker infers each from the table (as it always may).
        try:
            tracker = resumed or Tracker.create(record, names)
        except (TrackerError, RecordError):
            feed.close()
            raise
        game: Any = LocalGame(tracker)
        how = "resumed from" if resumed else "recorded in"
        err.write(f"run: refereeing {feed.source.name}; the game is {how} {record} (Ctrl-C ends it)\n")
    else:
        try:
            app, server, url = serve_dashboard(
                runner,
                frames,
                resume.parent if resume else games,
                args.port,
                err,
                str(args.camera),
                serial or "",
                host=args.host,
                trusted_hosts=args.trusted_host,
                phone=phone,
            )
            hub = app.extensions["gizmos_hub"]
            if resume is not None:
                if resumed is not None:
                    resumed.record.close()
                game = hub.get(resume.name.removesuffix(".sqlite"))
                hub.active = game.id
            else:
                game = hub.create(names, seed=None, deal=False)
        except (LiveError, HubError) as exc:
            feed.close()
            raise LiveError(getattr(exc, "message", str(exc))) from None
        err.write(f"run: the dashboard is at {url} (game {game.id}); Ctrl-C ends the run\n")
    try:
        caster = broadcast_live_game(args, game, runner, None if server is None else url)
    except BaseException:
        feed.close()
        if server is not None:
            server.shutdown()
        raise
    runner.launch(game, feed)
    try:
        stats = runner.wait()
    except KeyboardInterrupt:
        runner.stop()
        stats = runner.stats
        err.write("run: stopped\n")
    with game.locked() as tracker:
        write_summary(names, tracker.scores(), [w.to_json() for w in tracker.warnings], sys.stdout)
    sys.stdout.write(
        f"\n{stats.frames} frames in {stats.seconds:.0f} s, {stats.observed} observed, "
        f"{stats.dropped} dropped"
        + (f", {stats.saved} saved with labels in {options.save_frames}" if options.save_frames else "")
        + "\n"
    )
    if caster is not None:
        caster.stop(drain_s=10.0)  # what is not confirmed by then is republished on the next run
    if server is not None:
        server.shutdown()
    return 0
