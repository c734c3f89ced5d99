"""``gizmos-referee serve``: run the dashboard on this machine (127.0.0.1 unless told otherwise).

The admin PIN comes from ``$GIZMOS_ADMIN_PIN``, else it is asked for on the terminal, else (no
terminal) a random 8-digit PIN is made and printed once. Only its salted hash is kept.
"""

from __future__ import annotations

import argparse
import errno
import getpass
import ipaddress
import os
import sys
from collections.abc import Sequence
from typing import Any

PIN_ENV = "GIZMOS_ADMIN_PIN"
LOOPBACK_NAMES = ["127.0.0.1", "localhost"]


class ServeError(Exception):
    """A bad option or a server that cannot start: one line, exit status 2."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``serve`` options (``referee/app/cli.py`` adds them to its ``serve`` command)."""
    p.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free port)")
    p.add_argument("--games-dir", default="games", help="folder of game records (default ./games)")
    p.add_argument(
        "--enrol", help="folder of enrolled card photos (else $GIZMOS_ENROL_DIR, else drawn faces)"
    )
    p.add_argument(
        "--camera-source",
        default="",
        help="camera source for live refereeing (0, a stream URL, a video file), saved in "
        "GAMES_DIR/settings.json; Start it on the setup page",
    )
    p.add_argument(
        "--serial-port",
        default="",
        help="serial port of the dispenser sensors, saved in GAMES_DIR/settings.json",
    )
    p.add_argument(
        "--demo",
        type=int,
        metavar="TURNS",
        help="open a dealt demo game with TURNS random legal turns played (no table needed)",
    )
    p.add_argument(
        "--trusted-host",
        action="append",
        default=[],
        help="a host name the pages may be reached by (repeatable); with --host 0.0.0.0 give this "
        "machine's LAN name or address",
    )


def admin_pin(out: Any = None) -> str:
    """The PIN from the environment, the terminal, or a fresh random one (printed; ``out``
    defaults to the standard error stream of the moment)."""
    out = out if out is not None else sys.stderr
    from web.security import PinError, check_pin_format, random_pin

    pin = os.environ.get(PIN_ENV)
    if pin is None and sys.stdin.isatty():
        pin = getpass.getpass("Admin PIN for this table (4-64 characters): ")
        if pin != getpass.getpass("Again: "):
            raise ServeError("the two PINs differ")
    if pin is None:
        pin = random_pin()
        out.write(f"serve: admin PIN for this session: {pin} (set ${PIN_ENV} to choose one)\n")
    try:
        return check_pin_format(pin)
    except PinError as exc:
        raise ServeError(str(exc)) from exc


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def trusted_hosts(host: str, names: Sequence[str]) -> list[str] | None:
    """The app's ``TRUSTED_HOSTS`` for a server on ``host``: the names given, and on a loopback
    address the loopback names too; ``None`` (any name) when that leaves none."""
    trusted = list(names) + (LOOPBACK_NAMES if is_loopback(host) else [])
    return trusted or None


def exposure_warning(host: str) -> str | None:
    """What to tell the person starting a server on ``host`` that others can reach, else None."""
    if is_loopback(host):
        return None
    return f"listening on {host}: anyone on this network can see the game (changes still need the PIN)"


def check_port(port: int, option: str = "--port") -> int:
    """A TCP port to listen on: 1..65535, or 0 for any free port."""
    if not 0 <= port < 65536:
        raise ServeError(f"{option}: expected 1..65535 (or 0: any free port), got {port}")
    return port


def make_dashboard_server(host: str, port: int, app: Any, ssl_context: Any = None) -> Any:
    """A threaded WSGI server for ``app`` on ``host:port`` (HTTPS with ``ssl_context``,
    :func:`web.tls.server_context`); a bad address or a busy port is a :class:`ServeError` (one
    line), and responses carry no ``Server: Werkzeug/… Python/…`` banner.

    The socket is bound here, not by Werkzeug, whose own bind failure prints several lines and
    exits with status 1."""
    import socket

    from werkzeug.serving import WSGIRequestHandler, make_server

    class Handler(WSGIRequestHandler):
        def version_string(self) -> str:
            return "gizmos-referee"

    check_port(port)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, _, _, _, address = infos[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ServeError(f"cannot listen on {host}:{port}: not an address of this machine ({exc})") from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        return make_server(
            host, port, app, threaded=True, request_handler=Handler, ssl_context=ssl_context, fd=sock.fileno()
        )
    except OSError as exc:
        why = "the port is in use by another program" if exc.errno == errno.EADDRINUSE else exc.strerror
        raise ServeError(f"cannot listen on {host}:{port}: {why or exc}") from exc
    finally:
        sock.close()  # the server holds its own duplicate of the socket


def config_from(args: argparse.Namespace, pin: str) -> dict[str, Any]:
    """The app's configuration from the command line."""
    check_port(args.port)
    return {
        "ADMIN_PIN": pin,
        "GAMES_DIR": args.games_dir,
        "ENROL_DIR": args.enrol,
        "CAMERA_SOURCE": args.camera_source,
        "SERIAL_PORT": args.serial_port,
        "TRUSTED_HOSTS": trusted_hosts(args.host, args.trusted_host),
    }


def run(args: argparse.Namespace, card_art: Any = None, live: Any = None) -> int:
    """Serve until Ctrl-C; a bad option, a busy port or an unreadable settings file is one line
    and exit status 2.

    ``card_art`` draws the card pictures and ``live()`` gives the live runner and frame source
    (the application layer passes vision's; without them the dashboard is manual mode only).
    """
    from web.hub import HubError

    try:
        from web import create_app

        hooks: dict[str, Any] = {}
        if live is not None:
            hooks["LIVE_RUNNER"], hooks["FRAME_SOURCE"] = live()
            hooks["CARD_QUESTIONS"] = getattr(hooks["LIVE_RUNNER"], "questions", None)
            hooks["SPREAD_ENROLMENT"] = getattr(hooks["CARD_QUESTIONS"], "spread", None)
        app = create_app({**config_from(args, admin_pin()), "CARD_ART": card_art, **hooks})
        settings = app.extensions["gizmos_hub"].settings
        if live is None and settings.camera_source:
            sys.stderr.write(
                f"serve: camera source {settings.camera_source!r} is saved, but this server has no camera "
                f"pipeline: referee from it with `gizmos-referee run --camera {settings.camera_source} "
                "--players NAME NAME`\n"
            )
        elif settings.camera_source:
            sys.stderr.write(
                f"serve: camera source {settings.camera_source!r}: create a game, then Start live "
                "refereeing on the setup page\n"
            )
        if args.demo is not None:
            from web.demo import demo_game

            if args.demo < 0:
                raise ServeError(f"--demo: expected a number of turns >= 0, got {args.demo}")
            game = demo_game(app.extensions["gizmos_hub"], turns=args.demo)
            sys.stderr.write(f"serve: demo game {game.id} ({args.demo} turns played)\n")
        warning = exposure_warning(args.host)
        if warning:
            sys.stderr.write(f"serve: {warning}\n")
        server = make_dashboard_server(args.host, args.port, app)
        shown = f"[{args.host}]" if ":" in args.host else args.host
        sys.stderr.write(f"serve: the dashboard is at http://{shown}:{server.port}/ (Ctrl-C stops it)\n")
        server.serve_forever()
    except ServeError as exc:
        sys.stderr.write(f"gizmos-referee serve: error: {exc}\n")
        return 2
    except HubError as exc:
        sys.stderr.write(f"gizmos-referee serve: error: {exc.message}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("serve: stopped\n")
    return 0
