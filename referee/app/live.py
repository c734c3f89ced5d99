"""The live referee: camera (or recording) and dispenser board in, the tracker and the dashboard out.

One thread owns the loop: read a frame, hand the dispenser board's events to the tracker,
and pass the frame to the vision pipeline (:class:`vision.observe.Observer`: its still-frame gate,
then its stages on settled frames), giving each observation to the tracker. Every tracker call
goes through the game's lock (:meth:`web.hub.LiveGame.locked`, or :class:`LocalGame` without a
dashboard), so the dashboard publishes each change as soon as the call returns.

The gate lets through a short *burst* of settled frames after each motion (and after each
sensor event) rather than one: the tracker counts a zone only once it reads the same in
several frames, and a view no legal step explains must persist before it is judged.

Sources (:mod:`referee.app.sources`): a camera index (:mod:`referee.app.cameras`), a network
stream's URL (:mod:`referee.app.streams`), a video file, a folder of images, or a rendered
recording (:mod:`vision.training.recording`). Files are played at
their own pace by default (``speed`` 1: frames the pipeline cannot keep up with are dropped, as
from a live camera) or as fast as possible (``speed`` 0: every frame is processed, in order, and
the run is deterministic).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from referee.app.dispenser import DispenserFeed, SimulatedDispenser
from referee.app.errors import LiveError
from referee.app.evidence import EvidenceKeeper
from referee.app.memory import card_memory
from referee.app.pipeline import FrameSaver, Pipeline, annotate
from referee.app.questions import CardQuestions
from referee.app.sources import Frame, FrameFeed
from referee.events import DispenserEvent
from referee.tracker import Tracker, TrackerSettings, Update
from referee.tracker.explain import Limits
from referee.tracker.record import RecordWriteError
from referee.tracker.turns import turn_over
from vision.errors import CalibrationError, VisionError
from vision.framing import assess
from vision.motion import MOTION_THRESHOLD, MotionGate

if TYPE_CHECKING:
    import numpy as np

    from vision.observe import Sight
    from web.live import FrameBuffer


# ============================================================================ pacing


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


# ============================================================================ the runner


#: The players' arms are read on every this many frames the still-frame gate drops while the
#: table moves (:attr:`RunOptions.arms_every`): in the bundled recording (10 frames/s) a hand is
#: in view for 5 to 11 frames in a row (median 7), so each is read about twice.
ARMS_EVERY = 3


@dataclass(slots=True)
class RunOptions:
    """How the loop runs."""

    speed: float = 1.0  # files: 1 = their own pace (late frames dropped), 0 = every frame at once
    motion: float = MOTION_THRESHOLD  # grey-level change of the gate's thumbnail that counts as motion
    settle: int = 2  # still frames after motion before the pipeline runs
    burst: int = 6  # settled frames observed after each motion or sensor event
    show_every: float = 0.25  # seconds between dashboard images while nothing is observed
    #: The players' arms (camera only: whose arm reaches where tells whose turn it is): reported
    #: in each observation, and read by the hand network alone on every ``arms_every``-th frame
    #: the gate drops while the table moves or settles (0: the table alone, no arms).
    arms_every: int = ARMS_EVERY
    framing_every: float = 1.0  # seconds between the framing assistant's verdicts on the dashboard (0: none)
    save_frames: Path | None = None

    def __post_init__(self) -> None:
        if isinstance(self.arms_every, bool) or not isinstance(self.arms_every, int) or self.arms_every < 0:
            got = self.arms_every
            raise LiveError(
                f"--arms-every: expected 0 (the table alone) or a whole number of frames, got {got!r}"
            )


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
    #: After the change the current player has nothing legal left but ending the turn: the dashboard
    #: shows the turn over from now on (:func:`referee.tracker.turns.turn_over`), before the record
    #: ends it (camera only: when the next player's change is seen).
    turn_over: bool = False
    #: The tracker's provisional reading after the change (:mod:`referee.tracker.provisional`,
    #: :meth:`Provisional.to_json`): what the dashboard shows, marked provisional, before the
    #: record accepts it; None: nothing. A change may bring only this.
    provisional: dict[str, Any] | None = None


def shown_after(tracker: Tracker) -> tuple[int, bool, dict[str, Any] | None]:
    """What the dashboard shows after a tracker call besides the move log: the game's turn,
    whether that turn is over (:func:`referee.tracker.turns.turn_over`) and the provisional
    reading (JSON, or None)."""
    shown = tracker.provisional
    return (
        tracker.state.turn,
        turn_over(tracker.state),
        None if shown is None else shown.to_json(tracker.game),
    )


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
    glanced: int = 0  # frames the gate dropped whose arms were read (RunOptions.arms_every)
    arms_seconds: float = 0.0  # ... and the seconds that took
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
        #: Cards seen whole but not placed, asked on the dashboard (referee/app/questions.py); set
        #: by :meth:`ask`.
        self.questions: CardQuestions | None = None
        self._known: object = None  # the state the pipeline's card memory was made from
        self._still: np.ndarray | None = None  # the latest frame the pipeline read whole

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

    def ask(self, questions: CardQuestions) -> None:
        """Ask ``questions`` about the cards this loop cannot place; their spread enrolment takes
        its camera frames from this loop while it runs (the camera is the loop's then)."""
        self.questions = questions
        questions.spread.live_still = self.still_frame

    def still_frame(self) -> np.ndarray | None:
        """The latest still frame read while a game is refereed (None when stopped): a spread is
        taken from it while the loop holds the camera (``SpreadEnrolment.live_still``)."""
        return self._still if self.status() != "stopped" else None

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
        saver = FrameSaver(opt.save_frames) if opt.save_frames else None
        seats = tuple(range(len(game.tracker.names)))
        shown = framed = 0.0
        lockstep = feed.board is not None and (opt.speed <= 0 or feed.source.live)
        source = feed.source.frames()
        first = next(source, None)  # a phone or stream may send nothing until the referee stops
        zones = None  # the table's zones, once a frame has come (a pipeline without zones has none)
        if first is not None:
            self.pipeline.gate = MotionGate(threshold=opt.motion, settle=opt.settle, burst=opt.burst)
            self.pipeline.reaches = opt.arms_every > 0
            zones = self.pipeline.zones
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
        unsettled = 0  # frames the gate dropped while the table moved or settled
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
                        self.pipeline.gate.rearm()
                        for i, event in enumerate(events):
                            try:
                                with game.locked() as tracker:
                                    logged, warned = len(tracker.log), len(tracker.warnings)
                                    update = tracker.dispenser(event)
                                    if self.evidence is not None:
                                        self.evidence.observed(tracker, warned)
                                    lines = [line.to_json() for line in tracker.log[logged:]]
                                    turn, over, reading = shown_after(tracker)
                            except RecordWriteError as exc:
                                self._unwritten = events[i:]  # handed over again at the next frame
                                self._record_down(exc)
                                break
                            self._record_up()
                            self._changed(update, frame, turn, lines, over, reading)
                if (
                    self.frame_buffer is not None
                    and opt.framing_every > 0
                    and time.monotonic() - framed >= opt.framing_every
                ):
                    framed = time.monotonic()
                    self.frame_buffer.set_framing(assess(frame.image, zones).to_json())
                self._know(game)
                t0 = time.perf_counter()
                try:
                    sight = self.pipeline.process(frame.image, frame.time, frame.index, seats)
                except CalibrationError as exc:
                    self._uncalibrated(frame, exc)
                    shown = time.monotonic()
                    continue
                if sight is not None:
                    stats.observe_seconds += time.perf_counter() - t0
                    self._observe(game, frame, sight, saver)
                    shown = time.monotonic()
                elif opt.arms_every > 0 and not self.pipeline.gate.fired:
                    unsettled += 1
                    if unsettled % opt.arms_every == 0:
                        self._glance(game, frame, seats)
                if (
                    sight is None
                    and self.frame_buffer is not None
                    and time.monotonic() - shown >= opt.show_every
                ):
                    self.frame_buffer.publish_image(frame.image)
                    shown = time.monotonic()
            else:
                if stats.frames and not feed.source.live:
                    self._footage_ended(game, frame)
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
            self.pipeline.sight(frame.image, frame.time, frame.index, seats)

    def _know(self, game: GameAccess) -> None:
        """Identify with what the referee knows (referee/app/memory.py), renewed when the accepted
        state changes: each seat's cards, the Display's, and the cards still unseen."""
        with game.locked() as tracker:
            state = tracker.state
        if state is not self._known:
            self._known = state
            self.pipeline.know(card_memory(state))

    def _glance(self, game: GameAccess, frame: Frame, seats: tuple[int, ...]) -> None:
        """The arms of a frame the gate dropped (a gesture passes in moving frames), read by the
        hand network alone (:meth:`vision.observe.Observer.arms`) and handed to the tracker
        (:meth:`referee.tracker.Tracker.reached`), which keeps them with the frames observed so
        far. The table itself is read from still frames only."""
        t0 = time.perf_counter()
        try:
            reaches = self.pipeline.arms(frame.image, seats)
        except VisionError:  # a frame of another size: its table is not read either
            return
        if reaches is None:  # the pipeline reads no arms (no hand network, none calibrated yet)
            return
        self.stats.glanced += 1
        self.stats.arms_seconds += time.perf_counter() - t0
        if not reaches:
            return
        try:
            with game.locked() as tracker:
                tracker.reached(reaches)
        except RecordWriteError as exc:  # not kept; the next frames are read again
            self._record_down(exc)
            return
        self._record_up()

    def _uncalibrated(self, frame: Frame, exc: CalibrationError) -> None:
        """A settled frame whose table could not be calibrated: counted, and said on the dashboard."""
        self.stats.calibration_failures += 1
        if self.frame_buffer is not None:
            self.frame_buffer.set_status(False, str(exc))
            self.frame_buffer.publish_image(frame.image)

    def _observe(self, game: GameAccess, frame: Frame, sight: Sight, saver: FrameSaver | None) -> None:
        obs, h, detections = sight.observation, sight.homography, sight.detections
        self._still = frame.image
        notes = obs.extra  # the calibration's notes, and the zones covered
        self.stats.observed += 1
        if self.questions is not None:
            self.questions.offer(self.pipeline.assembler, frame.index)
        try:
            with game.locked() as tracker:
                logged, warned = len(tracker.log), len(tracker.warnings)
                update = tracker.observe(obs)
                if self.evidence is not None:
                    self.evidence.observed(tracker, warned, frame.image, h, obs)
                lines = [line.to_json() for line in tracker.log[logged:]]
                turn, over, reading = shown_after(tracker)
                if saver is not None:
                    saver.offer(frame.image, h, detections, obs, tracker.state)
        except RecordWriteError as exc:  # nothing was kept: the next still frame tries again
            self._record_down(exc)
            return
        self._record_up()
        self._changed(update, frame, turn, lines, over, reading)
        if self.frame_buffer is not None:
            self.frame_buffer.set_status(
                True, f"markers {notes.get('markers')}, calibration {notes.get('calibration')}"
            )
            self.frame_buffer.publish_image(annotate(frame.image, h, detections, obs))

    def _footage_ended(self, game: GameAccess, frame: Frame) -> None:
        """A recording's frames ran out (not a stop, not a camera): its last turn may end there
        (:meth:`referee.tracker.Tracker.footage_ended`)."""
        try:
            with game.locked() as tracker:
                logged = len(tracker.log)
                update = tracker.footage_ended()
                lines = [line.to_json() for line in tracker.log[logged:]]
                turn, over, reading = shown_after(tracker)
        except RecordWriteError as exc:
            self._record_down(exc)
            return
        self._changed(update, frame, turn, lines, over, reading)

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

    def _changed(
        self,
        update: Update,
        frame: Frame,
        turn: int,
        lines: list[dict[str, Any]],
        over: bool,
        reading: dict[str, Any] | None = None,
    ) -> None:
        if not (update.changed or update.provisional):
            return
        change = Change(
            time.time(),
            frame.index,
            frame.time,
            [s.to_json() for s in update.steps],
            [w.to_json() for w in update.warnings],
            turn,
            lines,
            over,
            reading,
        )
        self.stats.changes.append(change)
        if self.on_change is not None:
            self.on_change(change)
