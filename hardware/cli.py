"""``gizmos-referee hardware ...``: run the simulator, watch a board, calibrate, check vectors.

Every subcommand returns an exit status instead of raising: 0 success, 1 a check failed,
2 bad input (the message says which argument or file was wrong).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hardware.calibration import CalibrationAborted, ColorCalibration, ColorCalibrationError, walk_through
from hardware.driver import DispenserDriver, StatusEvent
from hardware.simulator import Faults, PtyLink, Simulator, TcpLink, VirtualBoard
from hardware.vectors import VECTORS_PATH, VectorsError, check_python, load_vectors
from referee.events import DispenserEvent


def _positive(kind: Callable[[str], float]) -> Callable[[str], float]:
    def check(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value

    return check


def _faults(text: str) -> Faults:
    try:
        return Faults.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """The ``hardware`` commands, added to ``gizmos-referee hardware``'s subparsers."""

    s = sub.add_parser("simulate", help="run a virtual dispenser on a pseudo-terminal and print its path")
    s.add_argument("--link", type=Path, help="symlink to create for the pty (default: a temporary path)")
    s.add_argument(
        "--tcp", type=int, metavar="PORT", help="serve on socket://127.0.0.1:PORT instead of a pty"
    )
    s.add_argument("--rate", type=_positive(float), default=1.0, help="events per second (default 1)")
    s.add_argument("--count", type=_positive(int), help="stop after this many events (default: until Ctrl-C)")
    s.add_argument("--seed", type=int, default=0, help="random seed for events and faults")
    s.add_argument(
        "--faults",
        type=_faults,
        default=Faults(),
        metavar="SPEC",
        help="per-line fault probabilities, e.g. garbage=0.01,drop=0.01,corrupt=0.01 (default: none)",
    )

    li = sub.add_parser("listen", help="print the events and status a board (or simulator) reports")
    li.add_argument("port", help="device path (/dev/ttyACM0) or pyserial URL (socket://127.0.0.1:7000)")
    li.add_argument("--baud", type=_positive(int), default=115200, help="serial speed")
    li.add_argument("--calibration", type=Path, help="classify colours with this calibration file")
    li.add_argument("--count", type=_positive(int), help="exit after this many events")
    li.add_argument("--json", action="store_true", help="one JSON object per line")

    c = sub.add_parser("calibrate", help="record a colour calibration by dropping marbles of each colour")
    c.add_argument("port", help="device path (/dev/ttyACM0) or pyserial URL")
    c.add_argument("--out", type=Path, required=True, help="calibration file to write (JSON)")
    c.add_argument("--baud", type=_positive(int), default=115200, help="serial speed")
    c.add_argument(
        "--per-colour", type=_positive(int), default=5, dest="per_color", help="marbles to drop per colour"
    )

    v = sub.add_parser("vectors", help="check the protocol code against the shared test vectors")
    v.add_argument("--file", type=Path, default=VECTORS_PATH, help="test vectors file (JSON)")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gizmos-referee hardware", description="The energy dispenser's sensor board."
    )
    add_commands(p.add_subparsers(dest="hardware_command", required=True, metavar="COMMAND"))
    return p


def _simulate(args: argparse.Namespace) -> int:
    link = TcpLink(args.tcp) if args.tcp is not None else PtyLink(args.link)
    sim = Simulator(link, VirtualBoard(seed=args.seed, faults=args.faults))
    port = sim.plug()
    print(port, flush=True)
    if isinstance(link, PtyLink):
        print(f"# pty {link.tty}; listen with: gizmos-referee hardware listen {port}", file=sys.stderr)
    else:
        print("# waiting for a listener to connect", file=sys.stderr)
    sim.reset()
    sent, next_beat = 0, time.monotonic() + 1.0
    try:
        while args.count is None or sent < args.count:
            time.sleep(1.0 / args.rate)
            sim.send(sim.board.random_payload())
            sent += 1
            if time.monotonic() >= next_beat:
                sim.heartbeat()
                next_beat += 1.0
    except KeyboardInterrupt:
        pass
    except ConnectionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        sim.close()
    return 0


def _print_status(status: StatusEvent) -> None:
    print(f"# {status.time:.3f} {status.kind}: {status.detail}", file=sys.stderr, flush=True)


def _format(event: DispenserEvent, as_json: bool) -> str:
    if as_json:
        return json.dumps(event.to_json())
    extra = {
        "row_refill": f"{event.color} rgbc={event.rgbc}",
        "draw": f"{event.color}",
        "return": f"{event.count} {' '.join(event.colors)}",
        "button": "",
    }[event.kind]
    return f"{event.time:.3f} #{event.seq} {event.kind} {extra}".rstrip()


def _listen(args: argparse.Namespace) -> int:
    classify = ColorCalibration.load(args.calibration).classify if args.calibration else None
    driver = DispenserDriver(args.port, baudrate=args.baud, on_status=_print_status, classify=classify)
    seen = 0
    try:
        with driver:
            for event in driver.events():
                print(_format(event, args.json), flush=True)
                seen += 1
                if args.count is not None and seen >= args.count:
                    break
    except KeyboardInterrupt:
        pass
    c = driver.status().counters
    print(
        f"# lines_ok={c.lines_ok} events={c.events} corrupt={c.corrupt} garbage={c.garbage} gaps={c.gaps} "
        f"lost={c.lost} duplicates={c.duplicates} resets={c.resets} reconnects={c.reconnects}",
        file=sys.stderr,
    )
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    driver = DispenserDriver(args.port, baudrate=args.baud, on_status=_print_status)

    def read(timeout: float) -> tuple[int, int, int, int] | None:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            event = driver.get(timeout=left)
            if event is not None and event.kind == "row_refill" and event.rgbc is not None:
                return event.rgbc
        return None

    try:
        with driver:
            calibration = walk_through(read, input, print, per_color=args.per_color)
    except (CalibrationAborted, EOFError, KeyboardInterrupt):
        print("calibration cancelled; nothing written", file=sys.stderr)
        return 1
    calibration.save(args.out)
    print(f"saved calibration to {args.out}")
    return 0


def _vectors(args: argparse.Namespace) -> int:
    vectors = load_vectors(args.file)
    failures = check_python(vectors)
    for failure in failures:
        print(f"FAIL {failure}")
    print(
        f"{len(vectors.valid)} valid and {len(vectors.invalid)} invalid vectors: "
        f"{'all pass' if not failures else f'{len(failures)} failure(s)'}"
    )
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``hardware.cli.main(["listen", "/dev/ttyACM0"])``; returns the exit status."""
    return run(_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Run a parsed ``hardware`` command; bad input is one line on stderr and exit status 2."""
    commands = {"simulate": _simulate, "listen": _listen, "calibrate": _calibrate, "vectors": _vectors}
    try:
        return commands[args.hardware_command](args)
    except (ColorCalibrationError, VectorsError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
