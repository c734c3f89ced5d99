"""The ``gizmos-referee`` command line. Every failure is one clear line, never a traceback.

The engine verbs (``new``, ``legal``, ``apply``, ``score``, ``simulate``) drive any registered
game through :class:`referee.game.Game`: ``new`` and ``simulate`` take ``--game``; the others
read the game from the state file's ``"format"``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from referee.app.broadcast import BroadcastError, add_broker_arguments
from referee.app.settings import Settings
from referee.game import Game, game_of_state, get_game, players_problem, registered_games
from referee.simulation.play import GameDidNotEnd, random_game

#: ``simulate``: random legal play longer than this many steps is reported as not terminating.
MAX_STEPS = 100_000


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def _read_text(arg: str, what: str) -> str:
    """``-`` is standard input, ``@path`` or a path is a file; anything else is literal JSON."""
    if arg == "-":
        return sys.stdin.read()
    path = Path(arg[1:] if arg.startswith("@") else arg)
    looks_like_json = arg.lstrip()[:1] in ("{", "[", '"')
    if arg.startswith("@") or (not looks_like_json and path.exists()):
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"cannot read {what} file {path}: {exc}") from exc
    if not looks_like_json:
        raise CliError(f"{what}: no such file {arg!r} (give a path, @path, - for stdin, or JSON text)")
    return arg


def _write_text(path: str, text: str) -> None:
    """Write an output file; a path that cannot be written is a one-line error."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _emit_state(game: Game[Any, Any], state: Any, out: str | None) -> None:
    text = json.dumps(game.state_to_json(state), indent=1) + "\n"
    if out:
        _write_text(out, text)
    else:
        sys.stdout.write(text)


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}" if what == "state" else f"column {exc.colno}"
        raise CliError(f"{what}: not valid JSON: {exc.msg} at {where}") from exc
    except RecursionError as exc:
        raise CliError(f"{what}: not valid JSON: nested too deeply") from exc


def _load_state(arg: str) -> tuple[Game[Any, Any], Any]:
    """A state file and the game it belongs to (its ``"format"`` names the game)."""
    raw = _json(_read_text(arg, "state"), "state")
    try:
        game = game_of_state(raw)
    except KeyError as exc:
        raise CliError(exc.args[0]) from exc
    return game, game.state_from_json(raw)


def _emit(obj: Any, out: TextIO, pretty: bool = True) -> None:
    out.write(json.dumps(obj, indent=1 if pretty else None) + "\n")


def _edition_game(path: str) -> Game[Any, Any]:
    """Contrivance with a table's own edition (the assumed Switch On values, requirements, Double)."""
    from referee.contrivance import ContrivanceGame, EditionError, edition_from_json

    try:
        return ContrivanceGame(edition=edition_from_json(_json(_read_text(path, "edition"), "edition")))
    except EditionError as exc:
        raise CliError(str(exc)) from exc


def cmd_new(args: argparse.Namespace) -> int:
    if args.edition and args.game != "contrivance":
        raise CliError("--edition: only Contrivance has an edition")
    game = _edition_game(args.edition) if args.edition else get_game(args.game)
    state = game.new_game(args.players, None if args.observed else random.Random(args.seed))
    _emit_state(game, state, args.out)
    return 0


def cmd_legal(args: argparse.Namespace) -> int:
    game, state = _load_state(args.state)
    steps = game.legal_steps(state)
    if args.text:
        for s in steps:
            print(game.describe(s))
    else:
        _emit([game.step_to_json(s) for s in steps], sys.stdout, pretty=False)
    return 0


def cmd_apply(args: argparse.Namespace) -> int:
    game, state = _load_state(args.state)
    step = game.step_from_json(_json(_read_text(args.step, "step"), "step"))
    seeded = random.Random(args.seed) if args.seed is not None else None
    try:
        after = game.apply(state, step, seeded)
    except game.illegal_step_type as exc:
        _emit(exc.to_json(), sys.stdout, pretty=False)  # type: ignore[attr-defined]
        return 1
    _emit_state(game, after, args.out)
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    game, state = _load_state(args.state)
    if args.json:
        _emit({"game_over": game.is_terminal(state), "ranking": game.score_table(state)}, sys.stdout)
    else:
        sys.stdout.write(game.score_report(state))
    return 0


def _step_logger(
    game: Game[Any, Any], seed: int, log: TextIO | None
) -> Callable[[Any, Any, Any], None] | None:
    """``simulate --log``: every step as a JSON line, with the seed and the turn it was taken in."""
    if log is None:
        return None

    def write(before: Any, step: Any, after: Any) -> None:
        turn = getattr(before, "turn", None)  # both games' states count turns
        log.write(json.dumps({"seed": seed, "turn": turn, "step": game.step_to_json(step)}) + "\n")

    return write


def cmd_simulate(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    try:
        log: TextIO | None = open(args.log, "w", encoding="utf-8") if args.log else None  # noqa: SIM115
    except OSError as exc:
        raise CliError(f"cannot write {args.log}: {exc.strerror or exc}") from exc
    started = time.perf_counter()
    total_steps = 0
    wins = [0] * args.players
    turns: list[int] = []
    try:
        for i in range(args.games):
            try:
                play = random_game(
                    game, args.players, args.seed + i, _step_logger(game, args.seed + i, log), MAX_STEPS
                )
            except GameDidNotEnd as exc:
                raise CliError(str(exc)) from exc
            final = play.final
            total_steps += play.steps
            turns.append(getattr(final, "turn", 0))
            for seat, won in enumerate(game.returns(final)):
                wins[seat] += won == 1.0  # equal totals share a win (Contrivance ruling 21)
            if args.games > 1 and not args.quiet:
                sys.stderr.write(f"\rsimulate: {i + 1}/{args.games} games")
                sys.stderr.flush()
        if args.games > 1 and not args.quiet:
            sys.stderr.write("\n")
    finally:
        if log is not None:
            log.close()
    elapsed = time.perf_counter() - started
    summary = {
        "game": game.name,
        "games": args.games,
        "players": args.players,
        "first_seed": args.seed,
        "steps": total_steps,
        "mean_turns": sum(turns) / len(turns),
        "wins_by_seat": wins,
        "seconds": round(elapsed, 3),
        "steps_per_second": round(total_steps / elapsed) if elapsed else None,
    }
    _emit(summary, sys.stdout)
    if args.games == 1:
        sys.stdout.write(game.score_report(final))
    return 0


def _edge(module: str, function: str, args: argparse.Namespace) -> int:
    """Run a camera/serial/web command; its bad input (camera, port, files) is one line, exit 2."""
    import importlib

    from referee.app.errors import LiveError
    from referee.tracker import TrackerError
    from referee.tracker.record import RecordError
    from vision.errors import VisionError

    try:
        return int(getattr(importlib.import_module(module), function)(args))
    except (LiveError, VisionError, RecordError, TrackerError, BroadcastError) as exc:
        raise CliError(str(exc)) from exc


def cmd_demo(args: argparse.Namespace) -> int:
    """The README's main job: referee the bundled recorded game end to end."""
    if args.game == "contrivance":
        gizmos_only = [
            name for name, value in (("--oracle", args.oracle), ("--camera-only", args.camera_only)) if value
        ]
        if gizmos_only:
            raise CliError(f"{gizmos_only[0]} is an option of the Gizmos demo, not of --game contrivance")
        return _edge("referee.app.contrivance_demo", "run_contrivance_demo", args)
    if args.seed is not None or args.source != "truth" or args.workbench_model:
        raise CliError("--seed, --source and --workbench-model are options of --game contrivance")
    return _edge("referee.app.demo", "run_demo", args)


def add_table_arguments(p: Any) -> None:
    """``--zones`` and ``--calibration``: the table a camera pipeline reads (``run`` and ``serve``)."""
    p.add_argument("--zones", help="zones/calibration YAML file (default: the built-in table)")
    p.add_argument(
        "--calibration",
        metavar="FILE",
        help="start from the calibration 'vision calibrate --live' saved (calibration.json): the zones "
        "are known while hands cover markers; each frame still checks it against the markers",
    )


def add_arms_argument(p: Any) -> None:
    """``--arms-every``: how often the live loop reads the players' arms (``run`` and ``demo``)."""
    p.add_argument(
        "--arms-every",
        type=int,
        metavar="K",
        help="read the players' arms (the hand network alone) on every K-th frame the still-frame "
        "gate drops while the table moves (default 3); 0: the table alone, no arms",
    )


def add_model_argument(p: Any) -> None:
    """``--model``: the detector a camera pipeline loads (``run`` and ``serve``)."""
    p.add_argument("--model", help="detector ONNX file (default $GIZMOS_DETECTOR, else models/detector.onnx)")


def cmd_run(args: argparse.Namespace) -> int:
    """Referee a real table: camera (or video, or images), dispenser port, zones, players."""
    return _edge("referee.app.run_cli", "run_table", args)


def cmd_cameras(args: argparse.Namespace) -> int:
    """List the local cameras found, with their resolution and frame rate."""
    return _edge("referee.app.cameras", "run_cameras", args)


def cmd_finetune(args: argparse.Namespace) -> int:
    """Fine-tune the detector on frames saved by ``run --save-frames`` and enrolled card faces."""
    return _edge("vision.training.finetune", "run_finetune", args)


def cmd_serve(args: argparse.Namespace) -> int:
    """The dashboard (web/serve.py); its live refereeing uses ``--model``, ``--zones`` and
    ``--calibration`` as ``run`` does, and a bad zones or calibration file is said now, not when
    Start is pressed."""
    return _edge("referee.app.dashboard", "serve_command", args)


def cmd_hub(args: argparse.Namespace) -> int:
    """The tournament hub (referee/app/tournament.py)."""
    from referee.app.tournament import ERRORS, run

    try:
        return run(args)
    except ERRORS as exc:
        raise CliError(str(exc)) from exc


def cmd_vision(args: argparse.Namespace) -> int:
    """A ``vision`` command (referee/app/vision_cli.py)."""
    from referee.app import vision_cli

    return vision_cli.run(args)


def cmd_hardware(args: argparse.Namespace) -> int:
    """A ``hardware`` command (hardware/cli.py)."""
    from hardware import cli

    return cli.run(args)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help shows its default, unless it has none or the help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or action.default in (None, False, [], argparse.SUPPRESS):
            return text
        return super()._get_help_string(action) or text


class Parser(argparse.ArgumentParser):
    """The parser of every command and group: subparsers inherit it, so all use :class:`HelpFormatter`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree: argparse subparsers all the way down (tests walk it for ``--help``)."""
    p = Parser(
        prog="gizmos-referee",
        description="A rule-enforcing referee for physical games of Gizmos.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    games = sorted(registered_games())
    gizmos = get_game("gizmos")
    s = sub.add_parser("new", help="a new game as JSON from the number of players and a seed")
    s.add_argument("--game", choices=games, default="gizmos", help="the game (default gizmos)")
    allowed = ", ".join(
        f"{g.name.capitalize()} {g.min_players}-{g.max_players}" for g in registered_games().values()
    )
    s.add_argument("--players", type=int, default=2, help=f"{allowed} players (default 2)")
    s.add_argument("--seed", type=int, default=0, help="seed of the random setup (default 0)")
    s.add_argument("--observed", action="store_true", help="leave the setup's random outcomes to be supplied")
    s.add_argument(
        "--edition",
        help="Contrivance: a JSON file of the assumed parts of your box (docs/contrivance.md)",
    )
    s.add_argument("--out", help="write the state here instead of standard output")
    s.set_defaults(func=cmd_new)

    s = sub.add_parser("legal", help="the legal steps of a state file")
    s.add_argument("state", help="state file (or - for stdin)")
    s.add_argument("--text", action="store_true", help="plain sentences instead of JSON")
    s.set_defaults(func=cmd_legal)

    s = sub.add_parser("apply", help="apply a step to a state: the new state, or the rule broken (exit 1)")
    s.add_argument("state", help="state file (or - for stdin)")
    s.add_argument(
        "step", help='step as JSON text, e.g. \'{"kind":"pick","player":0,"color":"red"}\', or @file'
    )
    s.add_argument("--seed", type=int, help="resolve random outcomes from this seed (else they stay pending)")
    s.add_argument("--out", help="write the new state here instead of standard output")
    s.set_defaults(func=cmd_apply)

    s = sub.add_parser("score", help="the scoring table of a state")
    s.add_argument("state", help="state file (or - for stdin)")
    s.add_argument("--json", action="store_true", help="JSON instead of a table")
    s.set_defaults(func=cmd_score)

    s = sub.add_parser("simulate", help="N random legal games from a seed, with a summary")
    s.add_argument("--game", choices=games, default="gizmos", help="the game")
    s.add_argument("--games", type=int, default=10, help="games to play")
    s.add_argument("--players", type=int, default=2, help="players per game (the game's limits)")
    s.add_argument("--seed", type=int, default=0, help="seed of the first game (then +1 each)")
    s.add_argument("--log", help="write every step as JSON lines here")
    s.add_argument("--quiet", action="store_true", help="no progress line")
    s.set_defaults(func=cmd_simulate)

    s = sub.add_parser(
        "demo",
        help="referee the bundled recorded game (no camera or hardware needed)",
        description="Referee the bundled recording of a 3-player game (rendered on first use into "
        "data/recording/): frames -> still-frame gate -> YOLO -> observations -> tracker, with the "
        "simulated dispenser board on a pseudo-terminal, and the dashboard on 127.0.0.1. Prints the "
        "final scores and every warning, next to the recording's ground truth. Exit status 1 if the "
        "referee differs from the ground truth.",
    )
    s.add_argument(
        "--headless",
        "--no-serve",
        dest="headless",
        action="store_true",
        help="no dashboard; play every frame as fast as possible (deterministic) and exit at the end",
    )
    s.add_argument("--port", type=int, default=8000, help="dashboard port (default 8000, else any free)")
    s.add_argument(
        "--speed",
        type=float,
        help="playback speed: 1 = the recording's own pace (default with the dashboard), 0 = as fast "
        "as possible, every frame (default headless)",
    )
    s.add_argument("--exit", action="store_true", help="stop the dashboard when the game ends (no Ctrl-C)")
    s.add_argument("--model", help="detector ONNX file (default $GIZMOS_DETECTOR, else models/detector.onnx)")
    s.add_argument(
        "--oracle", action="store_true", help="the recording's true boxes instead of YOLO (a stage check)"
    )
    s.add_argument("--workers", type=int, default=2, help="processes rendering the recording on first use")
    s.add_argument(
        "--camera-only",
        action="store_true",
        help="the camera alone: no dispenser board, so no sensor events and no end-of-turn button; "
        "turns are inferred from the table",
    )
    add_arms_argument(s)
    s.add_argument(
        "--game",
        choices=games,
        default="gizmos",
        help="which recorded game: gizmos (default) or contrivance (a 4-player game with three rules "
        "broken on purpose; docs/contrivance.md)",
    )
    s.add_argument(
        "--seed", type=int, help="contrivance: the seed the recorded game is made from (default 19)"
    )
    s.add_argument(
        "--source",
        choices=("truth", "camera"),
        default="truth",
        help="contrivance: where observations come from: truth = the recording's ground truth with "
        "camera-like noise; camera = frames rendered on first use (data/contrivance-recording/) and read "
        "by the Workbench reader (--workbench-model)",
    )
    s.add_argument(
        "--workbench-model",
        help="contrivance, --source camera: the Workbench reader's ONNX file (default models/workbench.onnx)",
    )
    s.set_defaults(func=cmd_demo)

    s = sub.add_parser(
        "cameras",
        help="list the local cameras found (index, resolution, frame rate)",
        description="List the cameras OpenCV can open at indexes 0-9, each with the resolution and "
        "frame rate it delivers when asked for 1280 x 720 (as run --camera N asks). Phone and IP "
        "cameras are not searched for: give their stream URL to run --camera.",
    )
    s.set_defaults(func=cmd_cameras)

    s = sub.add_parser(
        "run",
        help="referee a real table: camera, dispenser port, zones file, players",
        description="Referee a real game. Frames come from --camera (a camera index such as 0, a "
        "network stream URL (HTTP MJPEG, RTSP), phone (a phone's browser over HTTPS), a video file, "
        "or a folder of images); dispenser "
        "events from --serial (a device such as "
        "/dev/ttyACM0 or a pyserial URL such as socket://127.0.0.1:7000; none: camera only). The "
        "table layout (marker positions and zones, in mm) comes from --zones (default: the built-in "
        "table, vision/data/zones.yaml). The dashboard runs on 127.0.0.1 (--host to change it) "
        "unless --no-serve. Ctrl-C ends the run and prints the scores and every warning.",
    )
    s.add_argument(
        "--camera",
        required=True,
        help="camera index (0, 1...), stream URL (http://PHONE:8080/video MJPEG, rtsp://...), "
        "phone (a phone's browser: the dashboard serves an HTTPS page it pairs with and streams from), "
        "video file or image folder",
    )
    s.add_argument("--serial", help="dispenser board port (device path or pyserial URL); default: none")
    add_table_arguments(s)
    usb = s.add_argument_group(
        "USB camera (--camera N)",
        "exposure, white balance and focus are locked by default at what the camera's automatics "
        "choose in its first second, so they do not drift during the game; the run prints what the "
        "driver accepted (docs/cameras.md)",
    )
    usb.add_argument("--resolution", metavar="WxH", help="resolution to ask for (default 1280x720)")
    usb.add_argument("--camera-fps", metavar="N", help="frame rate to ask for (default: the camera's)")
    usb.add_argument("--exposure", metavar="auto|lock|N", help="exposure (driver units; default lock)")
    usb.add_argument("--white-balance", metavar="auto|lock|K", help="white balance in kelvin (default lock)")
    usb.add_argument("--focus", metavar="auto|lock|N", help="focus (driver units; default lock)")
    usb.add_argument(
        "--camera-config",
        metavar="FILE",
        help="YAML with any of resolution, fps, exposure, white_balance, focus (options override it)",
    )
    s.add_argument(
        "--players",
        dest="names",
        nargs="+",
        metavar="NAME",
        help=f"{gizmos.min_players}-{gizmos.max_players} names in seat order (required unless --resume)",
    )
    add_model_argument(s)
    s.add_argument("--enrol", help="folder of enrolled card photos (else $GIZMOS_ENROL_DIR or drawn faces)")
    s.add_argument("--fps", type=float, default=10.0, help="frame rate of an image folder (default 10)")
    s.add_argument(
        "--speed", type=float, default=1.0, help="video or images: 1 = own pace (default), 0 = at once"
    )
    s.add_argument(
        "--save-frames", metavar="DIR", help="save accepted frames with YOLO labels here (for finetune)"
    )
    add_arms_argument(s)
    s.add_argument("--record", help="new game record file (SQLite; default: games/<time>.sqlite)")
    s.add_argument(
        "--resume",
        metavar="RECORD",
        help="continue the game recorded in RECORD (after a crash, a full disk or Ctrl-C); the "
        "players' names come from the record",
    )
    s.add_argument("--games-dir", default="games", help="folder of game records (default ./games)")
    s.add_argument("--no-serve", action="store_true", help="no dashboard; print changes as they happen")
    s.add_argument("--port", type=int, default=8000, help="dashboard port (default 8000)")
    s.add_argument(
        "--host", default="127.0.0.1", help="dashboard address (default 127.0.0.1: this machine only)"
    )
    s.add_argument(
        "--trusted-host",
        action="append",
        default=[],
        help="a host name the dashboard may be reached by (repeatable); with --host 0.0.0.0 give "
        "this machine's LAN name or address",
    )
    add_broker_arguments(s, table=True)
    s.set_defaults(func=cmd_run)

    s = sub.add_parser(
        "finetune",
        help="adapt the detector to your table: frames saved by 'run --save-frames' plus enrolled faces",
        description="Fine-tune the committed detector (models/detector.pt) on frames saved by "
        "'run --save-frames' (cut into training tiles) together with rendered tables showing your "
        "enrolled card faces, then export ONNX into --out. Progress is printed; --resume continues an "
        "interrupted run. Use the result with 'run --model OUT/detector.onnx'.",
    )
    s.add_argument("saved", nargs="+", help="folders written by 'run --save-frames'")
    s.add_argument("--out", default="runs/finetune", help="output folder (default runs/finetune)")
    s.add_argument("--base", help="weights to start from (default models/detector.pt)")
    s.add_argument("--enrol", help="folder of enrolled card photos (else $GIZMOS_ENROL_DIR or drawn faces)")
    s.add_argument("--epochs", type=int, default=5, help="training epochs (default 5)")
    s.add_argument("--scenes", type=int, default=60, help="rendered tables with your faces (default 60)")
    s.add_argument("--imgsz", type=int, default=384, help="training tile size in px (default 384)")
    s.add_argument("--batch", type=int, default=8, help="batch size (default 8)")
    s.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    s.add_argument("--resume", action="store_true", help="continue the interrupted run in --out")
    s.set_defaults(func=cmd_finetune)

    from web.serve import add_arguments as serve_arguments

    s = sub.add_parser("serve", help="the dashboard in a browser (127.0.0.1:8000 unless told otherwise)")
    serve_arguments(s)
    live = s.add_argument_group("live refereeing (the setup page's Start), as for 'run'")
    add_model_argument(live)
    add_table_arguments(live)
    s.set_defaults(func=cmd_serve)

    from referee.app.tournament import add_arguments as hub_arguments

    s = sub.add_parser("hub", help="tournament hub: every table through an MQTT broker, one live page")
    hub_arguments(s)
    s.set_defaults(func=cmd_hub)

    from hardware.cli import add_commands as hardware_commands
    from referee.app.vision_cli import add_commands as vision_commands

    s = sub.add_parser("hardware", help="dispenser sensors: simulate, listen, calibrate, vectors")
    hardware_commands(s.add_subparsers(dest="hardware_command", required=True, metavar="COMMAND"))
    s.set_defaults(func=cmd_hardware)
    s = sub.add_parser("vision", help="camera pipeline: faces, synth, dataset, train, calibrate, observe")
    vision_commands(s.add_subparsers(dest="cmd", required=True, metavar="COMMAND"))
    s.set_defaults(func=cmd_vision)
    return p


#: Native libraries' own chatter, off unless the user set it: ffmpeg's "moov atom not found"
#: and OpenCV's warnings would otherwise come beside the one line the referee prints.
QUIET_NATIVE_LOGS = {"OPENCV_FFMPEG_LOGLEVEL": "-8", "OPENCV_LOG_LEVEL": "ERROR"}


def main(argv: Sequence[str] | None = None) -> int:
    for key, value in QUIET_NATIVE_LOGS.items():
        os.environ.setdefault(key, value)
    parser = build_parser()
    args = Settings.from_env().fill(parser.parse_args(argv))
    players = getattr(args, "players", None)
    game_name = getattr(args, "game", "gizmos")
    problem = None if players is None else players_problem(get_game(game_name), players)
    if problem:
        parser.error(f"--players: {problem}")
    if getattr(args, "games", 1) < 1:
        parser.error("--games: must be at least 1")
    bad_input: tuple[type[Exception], ...] = (
        CliError,
        *(game.error_type for game in registered_games().values()),
    )
    try:
        return int(args.func(args))
    except bad_input as exc:
        sys.stderr.write(f"gizmos-referee {args.command}: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
