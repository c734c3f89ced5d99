"""``gizmos-referee hub``: the tournament hub (subscribe, store, confirm, serve the organiser's page).

``hub --broker mqtts://hub:PASSWORD@broker.lan --broker-ca ca.pem`` joins an event's broker;
``hub --demo N`` starts a local Mosquitto with the tournament's ACL and N simulated tables and
shows the page. Bad input is one line and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import tempfile
import threading
import time
from pathlib import Path

from referee.broadcast import BroadcastError, add_broker_arguments, broker_from_args
from web.security import PinError, check_pin_format
from web.tournament.board import Board
from web.tournament.broker import BrokerError, Mosquitto
from web.tournament.receiver import Receiver
from web.tournament.store import StoreError, open_store


#: The demo's tables share one process, and paho's select() loop cannot use descriptors past 1024
#: (about 9 per table: its record, the broadcaster's reader, its socket). benchmarks/tournament.py
#: runs more in several processes; a real table runs one broadcaster.
MAX_DEMO_TABLES = 100


class HubCliError(Exception):
    """One line for the user, exit status 2."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "The tournament hub: every table's record through an MQTT broker into one store, "
        "and the organiser's page (read-only without the organiser's PIN: $GIZMOS_ADMIN_PIN, "
        "else a random one, printed)."
    )
    add_broker_arguments(p, table=False)
    p.add_argument(
        "--store",
        default="tournament.sqlite",
        help="the hub's copy: a SQLite file (default tournament.sqlite) or a postgresql:// URL",
    )
    p.add_argument("--host", default="127.0.0.1", help="page address (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8100, help="page port (default 8100; 0: any free port)")
    p.add_argument("--title", default="Tournament", help="the page's title")
    p.add_argument("--demo", type=int, metavar="N", help="start a local broker and N simulated tables")
    p.add_argument(
        "--pace", type=float, default=1.0, help="--demo: seconds between a table's accepted steps (default 1)"
    )
    p.add_argument("--seconds", type=float, help="stop after this many seconds (default: at Ctrl-C)")


def run(args: argparse.Namespace) -> int:
    from werkzeug.serving import make_server

    from referee.simulated_table import Fleet
    from web.tournament.app import create_app

    if args.demo is not None and not 1 <= args.demo <= MAX_DEMO_TABLES:
        raise HubCliError(f"--demo: expected 1 to {MAX_DEMO_TABLES} tables, got {args.demo}")
    if args.demo is None and not args.broker:
        raise HubCliError("--broker is required (or --demo N for a local broker and N simulated tables)")
    if args.pace <= 0:
        raise HubCliError(f"--pace: expected seconds above 0, got {args.pace}")
    pin = os.environ.get("GIZMOS_ADMIN_PIN") or f"{secrets.randbelow(10**6):06d}"
    check_pin_format(pin)
    broker: Mosquitto | None = None
    fleet: Fleet | None = None
    work = tempfile.TemporaryDirectory(prefix="gizmos-hub-demo-") if args.demo else None
    if args.demo:
        assert work is not None
        tables = [f"t{i:02d}" for i in range(1, args.demo + 1)]
        users = {"hub": secrets.token_urlsafe(12), **{t: secrets.token_urlsafe(12) for t in tables}}
        broker = Mosquitto(users).start()
        config = broker.config("hub")
        store_at = args.store if args.store != "tournament.sqlite" else str(Path(work.name) / "hub.sqlite")
    else:
        config = broker_from_args(args)
        store_at = args.store
    store = open_store(store_at)
    board = Board(store)
    receiver = Receiver(config, store, board).start()
    app = create_app(board, {"ADMIN_PIN": pin, "TOURNAMENT_TITLE": args.title}, receiver=receiver)
    try:
        server = make_server(args.host, args.port, app, threaded=True)
    except OSError as exc:
        raise HubCliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from exc
    if broker is not None:
        assert work is not None
        fleet = Fleet(
            Path(work.name) / "tables", {t: broker.config(t) for t in tables}, pace=args.pace
        ).start()
        print(f"hub: demo broker on 127.0.0.1:{broker.port}; {args.demo} simulated tables playing")
    print(f"hub: organiser page http://{args.host}:{server.server_port}/  (organiser PIN {pin})")
    print(f"hub: storing into {store_at}")
    sys.stdout.flush()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        end = time.monotonic() + args.seconds if args.seconds else None
        while end is None or time.monotonic() < end:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        if fleet is not None:
            fleet.stop(drain_s=5.0)
        server.shutdown()
        receiver.stop()
        games = store.games()
        stats = receiver.stats
        print(f"hub: {len(games)} games, {stats.stored} entries stored, {stats.refused} refused")
        store.close()
        if broker is not None:
            broker.close()
        if work is not None:
            work.cleanup()
    return 0


ERRORS = (HubCliError, BroadcastError, StoreError, BrokerError, PinError)
