"""``gizmos-referee run``: referee a real table from a camera (or a file) and a dispenser port,
with the dashboard or without.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.app.dashboard import serve_dashboard
from referee.app.dispenser import DispenserFeed
from referee.app.errors import LiveError
from referee.app.live import ARMS_EVERY, Feed, LiveReferee, LocalGame, RunOptions
from referee.app.questions import CardQuestions
from referee.app.sources import FrameFeed, open_source
from referee.app.summary import change_printer, write_summary
from referee.game import get_game, players_problem
from referee.tracker import Tracker

if TYPE_CHECKING:
    from referee.app.streams import PhoneFrames
    from web.live import FrameBuffer


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
    rules = get_game("gizmos")
    if not args.names:
        raise LiveError(
            f"--players: give {rules.min_players}-{rules.max_players} names in seat order "
            "(or --resume a recorded game)"
        )
    names = [" ".join(n.split()) for n in args.names]
    problem = players_problem(rules, len(names))
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
        observer = Observer(
            model, seats=tuple(range(len(names))), zones=zones, enrol_dir=args.enrol, learn_table=True
        )
        if saved is not None:  # the zones are known from the first frame; the markers still check it
            observer.start_from(saved)
            err.write(f"run: starting from the calibration in {calibration}\n")
            if saved.empty_table is not None:
                err.write("run: the empty table saved with it tells what covers the table (occlusion on)\n")
    except BaseException:
        feed.close()
        raise
    options = RunOptions(
        speed=args.speed,
        save_frames=Path(args.save_frames).expanduser() if args.save_frames else None,
        arms_every=ARMS_EVERY if args.arms_every is None else args.arms_every,
    )
    if not args.no_serve:
        from web.live import FrameBuffer

        frames = FrameBuffer(feed.source.name)
        frames.follow_link(getattr(feed.source, "link_status", None))
    runner = LiveReferee(observer, opener, options, frames, change_printer(names, sys.stdout))
    runner.ask(CardQuestions(args.enrol))  # cards it cannot place are asked on the dashboard
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
    if observer.background is None:  # said once everything is open, with the run's other lines
        err.write("run: no empty table saved: the table is learned from its frames (occlusion on)\n")
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
        f"{stats.dropped} dropped, {stats.glanced} read for arms alone"
        + (f", {stats.saved} saved with labels in {options.save_frames}" if options.save_frames else "")
        + "\n"
    )
    if caster is not None:
        caster.stop(drain_s=10.0)  # what is not confirmed by then is republished on the next run
    if server is not None:
        server.shutdown()
    return 0
