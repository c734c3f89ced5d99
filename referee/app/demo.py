"""The README's main job: referee the bundled recorded game, with no camera and no hardware.

The recording (:mod:`vision.training.recording`: a whole 3-player game filmed at 10 frames/s, with four
rules broken on purpose) is rendered on first use. Its frames go through the real pipeline:
still-frame gate, ArUco calibration, the YOLO detector (``models/detector.onnx``), card
identification, the table observation, the tracker. Its dispenser log is played by the virtual
dispenser board on a pseudo-terminal and read back by the real serial driver. The dashboard
shows it all live at the printed address. At the end the demo prints the final scores and
every warning, next to the recording's ground truth.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from referee.app.dashboard import serve_dashboard
from referee.app.dispenser import DispenserFeed, SimulatedDispenser
from referee.app.errors import LiveError
from referee.app.live import (
    ARMS_EVERY,
    Feed,
    LiveReferee,
    LocalGame,
    RunOptions,
    RunStats,
    replay_settings,
)
from referee.app.pipeline import Pipeline, oracle_observer
from referee.app.sources import RecordingFrames
from referee.app.summary import change_printer, write_comparison, write_summary
from referee.tracker import Tracker


@dataclass(frozen=True, slots=True)
class DemoOptions:
    """How to run the demo."""

    serve: bool = True  # the dashboard on 127.0.0.1, kept up after the game until Ctrl-C
    port: int = 8000
    speed: float = 1.0  # 1: the recording's own pace (frames the pipeline cannot keep up with drop)
    model: Path | None = None  # the detector (default models/detector.onnx)
    oracle: bool = False  # perfect detections from the recording instead of YOLO (stage check)
    workers: int = 2  # processes rendering the recording on first use
    recording_root: Path | None = None
    games_dir: Path | None = None
    keep_serving: bool = True
    camera_only: bool = False  # no dispenser board: no sensor events and no end-of-turn button
    arms_every: int = ARMS_EVERY  # arms read on every k-th frame the gate drops (0: none)


@dataclass(slots=True)
class DemoResult:
    """What the referee made of the recording, and the recording's own ground truth."""

    names: list[str]
    scores: list[dict[str, Any]]
    warnings: list[dict[str, Any]]
    truth_scores: list[dict[str, Any]]
    injections: list[dict[str, Any]]
    stats: RunStats
    game_over: bool
    url: str | None = None
    problems: list[str] = field(default_factory=list)
    camera_only: bool = False

    @classmethod
    def of(
        cls, game: Any, recording: Any, stats: RunStats, url: str | None = None, camera_only: bool = False
    ) -> DemoResult:
        """What the referee of ``game`` made of ``recording``, compared with its ground truth."""
        with game.locked() as tracker:
            result = cls(
                names=list(recording.names),
                scores=tracker.scores(),
                warnings=[w.to_json() for w in tracker.warnings],
                truth_scores=recording.scores(),
                injections=recording.injections(),
                stats=stats,
                game_over=tracker.state.game_over,
                url=url,
                camera_only=camera_only,
            )
        result.problems = result.check()
        return result

    def check(self) -> list[str]:
        """Where the referee and the ground truth differ (empty: it refereed the game exactly)."""
        return differences(self.scores, self.truth_scores, self.warnings, self.injections, self.game_over)


def differences(
    scores: list[dict[str, Any]],
    truth_scores: list[dict[str, Any]],
    warnings: list[dict[str, Any]],
    injections: list[dict[str, Any]],
    game_over: bool,
) -> list[str]:
    """Where a referee's result and a recording's ground truth differ (empty: it refereed the
    game exactly): the final totals by seat, every rule broken on purpose flagged on its turn
    with its code, no other warning, and the game seen to end. Every game's demo checks this."""
    out = []
    got = [(s["seat"], s["total"]) for s in scores]
    want = [(s["seat"], s["total"]) for s in truth_scores]
    if got != want:
        out.append(f"final scores {got} (seat, total), the ground truth says {want}")
    flagged = [(w["turn"], w["code"]) for w in warnings]
    for inj in injections:
        if (inj["turn"], inj["code"]) not in flagged:
            out.append(f"the {inj['code']} of turn {inj['turn']} was not flagged")
    expected = {(i["turn"], i["code"]) for i in injections}
    for w in warnings:
        if (w["turn"], w["code"]) not in expected:
            out.append(f"unexpected warning on turn {w['turn']}: {w['message']}")
    if not game_over:
        out.append("the referee did not see the game end")
    return out


def play_demo(options: DemoOptions, out: TextIO | None = None, err: TextIO | None = None) -> DemoResult:
    """Render (first run) and referee the recording; returns what the referee made of it. The
    streams default to the process's at call time (a default bound at import outlives a test's
    captured stream)."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    from vision.training.recording import RECORDING_ROOT, ensure_recording
    from web.serve import ServeError, check_port

    if options.serve:
        try:
            check_port(options.port)  # before minutes of rendering, not after
        except ServeError as exc:
            raise LiveError(str(exc)) from None
    recording = ensure_recording(root=options.recording_root or RECORDING_ROOT, workers=options.workers)
    names = recording.names
    pipeline = recording_pipeline(recording, options.model, options.oracle)
    lockstep = options.speed <= 0

    runner: LiveReferee

    def opener(settings: Any = None) -> Feed:
        return recording_feed(recording, runner, lockstep, options.camera_only)

    frames = None
    server = None
    url = None
    games_dir = options.games_dir or Path(tempfile.mkdtemp(prefix="gizmos-demo-games-"))
    if options.serve:
        from web.live import FrameBuffer

        frames = FrameBuffer(f"recording {recording.path.name}")
    printer = change_printer(names, err, steps=False)
    runner = LiveReferee(
        pipeline,
        opener,
        RunOptions(speed=options.speed, arms_every=options.arms_every),
        frames,
        on_change=printer,
    )
    if options.serve:
        app, server, url = serve_dashboard(runner, frames, games_dir, options.port, err)
        game: Any = app.extensions["gizmos_hub"].create(names, seed=None, deal=False)
        err.write(f"demo: the dashboard is at {url} (game {game.id})\n")
    else:
        game = LocalGame(Tracker.create(":memory:", names))
    if lockstep:
        with game.locked() as tracker:
            tracker.settings = replay_settings(tracker.settings)
    err.write(
        f"demo: refereeing {len(recording)} frames ({len(recording) / recording.fps:.0f} s of play at "
        f"{recording.fps} frames/s){' as fast as possible' if lockstep else ''}"
        f"{', camera only: no dispenser board, no end-of-turn signals' if options.camera_only else ''}\n"
    )
    runner.launch(game, opener(None))
    last = time.monotonic()
    while runner.status() != "stopped":
        time.sleep(0.2)
        if time.monotonic() - last >= 10:
            last = time.monotonic()
            s = runner.stats
            err.write(f"demo: frame {s.frames}/{len(recording)}, turn {game.tracker.state.turn + 1}\n")
    stats = runner.wait()
    result = DemoResult.of(game, recording, stats, url, options.camera_only)
    report(result, out)
    if server is not None:
        if options.keep_serving:
            err.write(f"demo: the game is over; the dashboard stays up at {url} (Ctrl-C to stop)\n")
            try:
                while True:
                    time.sleep(1)
            except KeyboardInterrupt:
                err.write("demo: stopped\n")
        server.shutdown()
    return result


def recording_pipeline(recording: Any, model: Path | None = None, oracle: bool = False) -> Pipeline:
    """The vision pipeline for a recording: the detector (default the committed one), or the
    recording's own true boxes (``oracle``) to measure everything but the detector."""
    if oracle:
        return oracle_observer(recording)
    from vision.detect import default_model
    from vision.observe import Observer

    model = model or default_model()
    if not Path(model).is_file():
        raise LiveError(
            f"detector model {model} not found: train and export it (docs/vision.md), or pass --model"
        )
    return Observer(model, seats=tuple(range(len(recording.names))), learn_table=True)


def recording_feed(recording: Any, runner: LiveReferee, lockstep: bool, camera_only: bool = False) -> Feed:
    """The recording's frames, and its dispenser log played by a virtual board on a pty and read
    back by the real driver. In lock-step (every frame, as fast as possible) the driver's clock is
    the time of the frame in hand, so events keep their place among the frames. ``camera_only``:
    the frames alone (no board: no sensor events, nobody pressing its end-of-turn button)."""
    if camera_only:
        return Feed(RecordingFrames(recording))
    board = SimulatedDispenser(recording.events())
    clock = (lambda: runner.clock) if lockstep else time.time
    return Feed(RecordingFrames(recording), DispenserFeed(board.port, clock=clock), board)


def report(result: DemoResult, out: TextIO) -> None:
    """The final scores, every warning, and how they compare with the recording's ground truth."""
    s = result.stats
    out.write(
        f"\nRefereed {s.frames} frames in {s.seconds:.0f} s ({s.fps:.1f} frames/s; {s.observed} went through "
        f"the detector, {s.glanced} were read for arms alone, {s.dropped} dropped), "
        f"{s.events} dispenser events"
        f"{' (camera only: turns inferred from the table)' if result.camera_only else ''}.\n\n"
    )
    write_summary(result.names, result.scores, result.warnings, out)
    write_comparison(result.names, result.truth_scores, result.injections, result.problems, out)


def run_demo(args: Any) -> int:
    """``gizmos-referee demo``."""
    serve = not args.headless
    speed = args.speed if args.speed is not None else (1.0 if serve else 0.0)
    options = DemoOptions(
        serve=serve,
        port=args.port,
        speed=speed,
        model=Path(args.model) if args.model else None,
        oracle=args.oracle,
        workers=args.workers,
        keep_serving=serve and not args.exit,
        camera_only=args.camera_only,
        arms_every=ARMS_EVERY if args.arms_every is None else args.arms_every,
        recording_root=args.locations.data / "recording" if hasattr(args, "locations") else None,
    )
    result = play_demo(options)
    return 0 if not result.problems else 1
