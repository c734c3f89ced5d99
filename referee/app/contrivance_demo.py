"""``gizmos-referee demo --game contrivance``: referee the bundled recorded Contrivance game.

The recording (:mod:`referee.simulation.workbench`: four Builders, a whole game, three rules
broken on purpose) is made from its seed on first use. Each of its frames goes through a camera
(:data:`referee.simulation.workbench.Camera`) into a Workbench observation, then the Workbench
tracker (:mod:`referee.tracker.workbench`), with the recording's end-of-turn signals and, at the
end, the Contrivance tile's requirement as a person would enter it. At the end the demo prints
the engine's final scoring (every burn-out and bonus with its reason) and every warning, next to
the recording's ground truth, and says where they differ.

The camera is the ground truth made into observations with noise (squares not seen, readings of
low confidence, one-frame misreads), or (``--source camera``) a frame rendered from each moment
and read back by the Workbench reader, the Damage token included (:func:`recording_camera`).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from referee.app.demo import differences
from referee.app.summary import write_comparison, write_warnings
from referee.observation import WorkbenchObservation
from referee.simulation.workbench import (
    Camera,
    Moment,
    Noise,
    Recording,
    RecordingSpec,
    inputs,
    observe_truth,
    play_recording,
)
from referee.tracker import TrackerError
from referee.tracker.workbench import WorkbenchTracker, WorkbenchUpdate

#: Where the demo's observations come from: ``truth`` (the ground truth with camera-like noise)
#: or ``camera`` (each moment rendered by the Workbench renderer, read back by the reader).
SOURCES = ("truth", "camera")


@dataclass(frozen=True, slots=True)
class ContrivanceDemoOptions:
    """How to run the Contrivance demo."""

    speed: float = 0.0  # 1: the recording's own pace; 0: as fast as possible
    seed: int = RecordingSpec().seed
    source: str = "truth"  # where observations come from (SOURCES)
    model: Path | None = None  # the Workbench reader's model (source "camera")
    frames_root: Path | None = None  # where its frames are rendered (default data/contrivance-recording)
    workers: int = 2  # processes rendering the frames on first use (source "camera")
    steps: bool = False  # print every accepted step as it happens


@dataclass(slots=True)
class ContrivanceDemoResult:
    """What the referee made of the recording, and the recording's ground truth."""

    names: list[str]
    builders: list[str]
    scores: list[dict[str, Any]]
    score_report: str
    warnings: list[dict[str, Any]]
    truth_scores: list[dict[str, Any]]
    injections: list[dict[str, Any]]
    game_over: bool
    frames: int
    signals: int
    seconds: float
    source: str
    problems: list[str] = field(default_factory=list)


def recording_camera(
    recording: Recording,
    source: str,
    model: Path | None = None,
    workers: int = 2,
    frames_root: Path | None = None,
) -> Camera:
    """The camera the demo films the recording with: the ground truth with noise, or the frames
    rendered on first use and read by the Workbench reader (``model``: default
    ``models/workbench.onnx``; the Damage token by ``models/damage.onnx``)."""
    if source == "truth":
        return observe_truth(Noise(), seed=recording.spec.seed)
    if source != "camera":
        raise ValueError(f"source: expected one of {list(SOURCES)}, got {source!r}")
    from referee.app.errors import LiveError
    from vision.errors import CalibrationError, ModelFileError
    from vision.training.contrivance_recording import FRAMES_ROOT, ROWS, ensure_frames, load_frame
    from vision.workbench import WorkbenchObserver

    try:  # a missing model is one line, before any rendering
        observer = WorkbenchObserver(model, rows=ROWS)
    except ModelFileError as exc:
        raise LiveError(
            f"{exc}: train the Workbench reader (python -m vision.training.workbench) or pass "
            "--workbench-model; --source truth needs no model"
        ) from None
    folder = ensure_frames(recording, frames_root or FRAMES_ROOT, workers=workers)

    def camera(m: Moment) -> WorkbenchObservation:
        try:
            obs = observer.observe(load_frame(folder, m.frame), m.time, m.frame)
        except CalibrationError as exc:  # markers under a hand: this frame shows nothing
            failures.append(m.frame)
            return WorkbenchObservation(m.time, source=f"camera; {exc}", frame=m.frame)
        return obs

    failures: list[int] = []
    camera.calibration_failures = failures  # type: ignore[attr-defined]

    return camera


def play_contrivance_demo(
    options: ContrivanceDemoOptions, out: TextIO | None = None, err: TextIO | None = None
) -> ContrivanceDemoResult:
    """Referee the recording; returns what the referee made of it (and prints the report)."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    recording = play_recording(RecordingSpec(seed=options.seed))
    names = list(recording.names)
    tracker = WorkbenchTracker(names, recording.builders)
    camera = recording_camera(recording, options.source, options.model, options.workers, options.frames_root)
    seats = ", ".join(
        f"{n} ({b}, row {k + 1})" for k, (n, b) in enumerate(zip(names, recording.builders, strict=True))
    )
    err.write(
        f"demo: refereeing the recorded Contrivance game (seed {options.seed}): {seats}; "
        f"{recording.frames()} frames at {recording.spec.fps} frames/s"
        f"{' as fast as possible' if options.speed <= 0 else ''}\n"
    )
    started = time.monotonic()
    frames = signals = 0
    for item in inputs(recording, camera):
        if isinstance(item, WorkbenchObservation):
            frames += 1
            if options.speed > 0:
                time.sleep(1 / (recording.spec.fps * options.speed))
            update = tracker.observe(item)
        elif item.end_of_turn is not None:
            signals += 1
            update = tracker.end_turn(item.end_of_turn)
        else:
            assert item.reveal is not None
            err.write(f"demo: the Contrivance tile is revealed: it requires {item.reveal}\n")
            try:
                update = tracker.reveal(item.reveal, who="demo")
            except TrackerError as exc:  # the referee did not see the game end: the result says so
                err.write(f"demo: {exc}\n")
                continue
        _show(update, tracker, options.steps, err)
    result = ContrivanceDemoResult(
        names=names,
        builders=list(recording.builders),
        scores=tracker.scores(),
        score_report=tracker.score_report() if tracker.state.game_over else "",
        warnings=[w.to_json() for w in tracker.warnings],
        truth_scores=recording.scores(),
        injections=recording.injections(),
        game_over=tracker.state.game_over,
        frames=frames,
        signals=signals,
        seconds=time.monotonic() - started,
        source=options.source,
    )
    failed = getattr(camera, "calibration_failures", [])
    if failed:
        err.write(
            f"demo: {len(failed)} frame(s) could not be calibrated (markers covered) and showed nothing\n"
        )
    result.problems = differences(
        result.scores, result.truth_scores, result.warnings, result.injections, result.game_over
    )
    report(result, out)
    return result


def _show(update: WorkbenchUpdate, tracker: WorkbenchTracker, steps: bool, err: TextIO) -> None:
    if steps:
        for line in tracker.log[len(tracker.log) - len(update.steps) :]:
            err.write(f"round {line.round}, turn {line.turn}: {line.text}\n")
    for w in update.warnings:
        who = tracker.names[w.player] if w.player is not None else "the table"
        err.write(f"WARNING turn {w.turn}, {who}: {w.code or 'please check'}: {w.message}\n")


def report(result: ContrivanceDemoResult, out: TextIO) -> None:
    """The final scoring, every warning, and how they compare with the recording's ground truth."""
    fps = result.frames / result.seconds if result.seconds else 0.0
    camera = (
        "observations made from the recording's ground truth with noise"
        if result.source == "truth"
        else "frames rendered and read by the Workbench reader"
    )
    out.write(
        f"\nRefereed {result.frames} frames and {result.signals} end-of-turn signals in "
        f"{result.seconds:.1f} s ({fps:.0f} frames/s; {camera}).\n\n"
    )
    seats = zip(result.names, result.builders, strict=True)
    out.write("Seats: " + ", ".join(f"seat {k} {n} ({b})" for k, (n, b) in enumerate(seats)) + "\n")
    out.write("Final scoring\n" + (result.score_report or "(the game did not end)\n"))
    write_warnings(result.names, result.warnings, out)
    write_comparison(result.names, result.truth_scores, result.injections, result.problems, out)


def run_contrivance_demo(args: Any) -> int:
    """``gizmos-referee demo --game contrivance``."""
    speed = args.speed if args.speed is not None else (0.0 if args.headless else 1.0)
    seed = args.seed if args.seed is not None else RecordingSpec().seed
    locations = getattr(args, "locations", None)  # the settings' folders (referee/app/settings.py)
    workbench = Path(args.workbench_model) if args.workbench_model else None
    if workbench is None and locations is not None:
        workbench = locations.workbench
    options = ContrivanceDemoOptions(
        speed=speed,
        seed=seed,
        source=args.source,
        steps=not args.headless,
        model=workbench,
        workers=args.workers,
        frames_root=None if locations is None else locations.data / "contrivance-recording",
    )
    result = play_contrivance_demo(options)
    return 0 if not result.problems else 1
