"""Tournament benchmark: N simulated tables -> Mosquitto -> the hub, at game pace and at 10x.

For each N (default 10, 50, 200) and each pace, a fresh local Mosquitto (with the tournament's
passwords and ACL) and a fresh hub process (``gizmos-referee hub``; a SQLite store, or with
``--store postgresql`` a fresh database on a throw-away local PostgreSQL) run; processes
of 50 simulated tables each write their game records and broadcast them (one table's referee
runs one broadcaster; paho's select() loop cannot use descriptors past 1024, so one process
holds at most ~100 tables). A client
reads the organiser page's event stream. Printed per run:

- events/s: record entries written by all tables per second (and entries stored by the hub)
- publish -> stored: from a table publishing an entry to the hub's commit (median, p99)
- publish -> page: from a table publishing its summary to the page's event stream delivering it
- memory: peak resident memory of the hub process and of the broker; the tables' processes (summed)
- complete: tables whose whole record the hub confirmed at the end (nothing lost)

"Game pace" is one accepted entry per table every ``--pace`` seconds (default 2 s, jittered
0.5-1.5x): a 3-player game of ~430 entries in ~15 minutes, brisker than a real table.
Target (issue 18): 200 tables at game pace with p99 lag under 1 s.

    nice -n 10 .venv/bin/python benchmarks/tournament.py [--tables 10 50 200] [--seconds 30]
        [--store sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT_DIR))

from referee.app.broker import Mosquitto, free_port  # noqa: E402
from referee.app.simulated_tables import Fleet  # noqa: E402
from referee.app.tournament import percentiles  # noqa: E402


def peak_rss_mb(pid: int | str = "self") -> float:
    """Peak resident set (VmHWM) of a process, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def rss_mb(pid: int | str = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class PageReader(threading.Thread):
    """Reads the organiser page's event stream; the lag of each table summary it delivers."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.lags: list[float] = []
        self.events = 0
        self.stop = threading.Event()

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request("GET", "/api/stream?since=-1")
        resp = conn.getresponse()
        while not self.stop.is_set():
            line = resp.readline()
            if not line:
                return
            if line.startswith(b"data: "):
                now = time.time()
                snap = json.loads(line[6:])
                self.events += 1
                for row in snap["tables"]:
                    sent = (row.get("summary") or {}).get("sent")
                    if isinstance(sent, float):
                        self.lags.append(now - sent)


def wait_http(port: int, timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/board", timeout=1).read()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the hub did not serve on 127.0.0.1:{port} within {timeout} s")


TABLES_PER_PROCESS = 50  # paho's select() loop cannot use descriptors past 1024 (~9 per table)


def play_tables(
    ids: list[str],
    users: dict[str, str],
    port: int,
    pace: float,
    seconds: float,
    folder: str,
    seed: int,
    out: Any,
) -> None:
    """One process of tables (spawned): deal, play ``seconds``, wait for every confirmation."""
    from referee.app.broadcast import BrokerConfig

    configs = {t: BrokerConfig("127.0.0.1", port, t, users[t]) for t in ids}
    fleet = Fleet(Path(folder), configs, pace=pace, seed=seed).start()
    started = time.monotonic()
    time.sleep(seconds)
    fleet.halt()
    played_s = time.monotonic() - started
    written = sum(len(sim.record) for sim, _, _ in fleet.tables.values())  # setup entries too
    deadline = time.monotonic() + 60
    complete = 0
    while time.monotonic() < deadline:
        complete = sum(c.confirmed >= len(sim.record) for sim, c, _ in fleet.tables.values())
        if complete == len(ids):
            break
        time.sleep(0.2)
    out.put(
        {
            "written": written,
            "played_s": played_s,
            "complete": complete,
            "republished": sum(c.stats.republished for _, c, _ in fleet.tables.values()),
            "rss_mb": rss_mb(),
        }
    )
    fleet.stop()


def one_run(tables: int, pace: float, seconds: float, label: str, postgres: Any = None) -> dict[str, Any]:
    ids = [f"t{i:03d}" for i in range(1, tables + 1)]
    users = {"hub": secrets.token_urlsafe(12), **{t: secrets.token_urlsafe(12) for t in ids}}
    with tempfile.TemporaryDirectory(prefix="gizmos-bench-") as work, Mosquitto(users) as broker:
        store = postgres.create_database() if postgres is not None else str(Path(work) / "hub.sqlite")
        page_port = free_port()
        env = {**os.environ, "GIZMOS_ADMIN_PIN": "bench-pin", "PYTHONPATH": str(ROOT_DIR)}
        hub = subprocess.Popen(
            [
                sys.executable, "-m", "referee.app.cli", "hub",
                "--broker", f"mqtt://hub:{users['hub']}@127.0.0.1:{broker.port}",
                "--store", store,
                "--port", str(page_port),
                "--seconds", str(seconds + 300),
            ],
            cwd=ROOT_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            wait_http(page_port, 30)
            reader = PageReader(page_port)
            reader.start()
            ctx = multiprocessing.get_context("spawn")
            out = ctx.Queue()
            groups = [ids[i : i + TABLES_PER_PROCESS] for i in range(0, tables, TABLES_PER_PROCESS)]
            sys.stderr.write(
                f"[{label}] {tables} tables in {len(groups)} processes: {seconds:.0f} s of play\n"
            )
            workers = [
                ctx.Process(
                    target=play_tables,
                    args=(
                        g,
                        users,
                        broker.port,
                        pace,
                        seconds,
                        str(Path(work) / f"p{k}"),
                        tables * 10 + k,
                        out,
                    ),
                )
                for k, g in enumerate(groups)
            ]
            for w in workers:
                w.start()
            parts = [out.get(timeout=seconds + 300) for _ in workers]
            for w in workers:
                w.join(timeout=60)
            stats = json.loads(
                urllib.request.urlopen(f"http://127.0.0.1:{page_port}/api/stats", timeout=10).read()
            )
            hub_mb = peak_rss_mb(hub.pid)
            broker_mb = peak_rss_mb(broker._proc.pid) if broker._proc else float("nan")
            reader.stop.set()
        finally:
            hub.terminate()
            hub.wait(timeout=30)
    played_s = max(p["played_s"] for p in parts)
    written = sum(p["written"] for p in parts)
    page = percentiles(reader.lags)
    sys.stderr.write(f"[{label}] {tables} tables: {written} entries written, {stats['stored']} stored\n")
    return {
        "label": label,
        "store": "postgresql" if postgres is not None else "sqlite",
        "tables": tables,
        "pace_s": pace,
        "seconds": round(played_s, 1),
        "events_per_s": round(written / played_s, 1),
        "stored": stats["stored"],
        "stored_per_s": round(stats["stored"] / played_s, 1),
        "publish_to_stored": stats["publish_to_stored"],
        "recorded_to_stored": stats["recorded_to_stored"],
        "publish_to_page": page,
        "page_events": reader.events,
        "hub_peak_mb": round(hub_mb, 1),
        "broker_peak_mb": round(broker_mb, 1),
        "tables_process_mb": round(sum(p["rss_mb"] for p in parts), 1),
        "complete_tables": sum(p["complete"] for p in parts),
        "republished": sum(p["republished"] for p in parts),
    }


def ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1000:.0f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tables", type=int, nargs="+", default=[10, 50, 200])
    p.add_argument("--pace", type=float, default=2.0, help="game pace: seconds between a table's entries")
    p.add_argument("--speeds", type=float, nargs="+", default=[1.0, 10.0], help="multiples of game pace")
    p.add_argument("--seconds", type=float, default=30.0, help="seconds of play per run (default 30)")
    p.add_argument("--json", help="also write the results here")
    p.add_argument(
        "--store",
        choices=("sqlite", "postgresql"),
        default="sqlite",
        help="the hub's store: a SQLite file, or a throw-away local PostgreSQL (as the tests start it)",
    )
    args = p.parse_args(argv)
    if any(n < 1 or n > 500 for n in args.tables) or args.pace <= 0 or args.seconds <= 0:
        p.error("--tables 1-500, --pace and --seconds above 0")
    postgres = None
    if args.store == "postgresql":
        from tests.postgres_server import PostgresServer, PostgresUnavailable

        try:
            postgres = PostgresServer().start()
        except PostgresUnavailable as why:
            p.error(f"--store postgresql: {why}")
    results = []
    try:
        for speed in args.speeds:
            for n in args.tables:
                label = "game pace" if speed == 1 else f"{speed:g}x pace"
                results.append(one_run(n, args.pace / speed, args.seconds, label, postgres))
    finally:
        if postgres is not None:
            postgres.stop()
    print(f"hub store: {args.store}")
    print(
        f"{'run':<11}{'tables':>7}{'events/s':>10}{'stored/s':>10}"
        f"{'stored med/p99 ms':>19}{'page med/p99 ms':>17}{'hub MB':>8}{'broker MB':>10}"
        f"{'tables MB':>10}{'complete':>10}"
    )
    for r in results:
        st, pg = r["publish_to_stored"], r["publish_to_page"]
        print(
            f"{r['label']:<11}{r['tables']:>7}{r['events_per_s']:>10}{r['stored_per_s']:>10}"
            f"{ms(st['median']) + ' / ' + ms(st['p99']):>19}{ms(pg['median']) + ' / ' + ms(pg['p99']):>17}"
            f"{r['hub_peak_mb']:>8}{r['broker_peak_mb']:>10}{r['tables_process_mb']:>10}"
            f"{str(r['complete_tables']) + '/' + str(r['tables']):>10}"
        )
    target = [r for r in results if r["tables"] == 200 and r["label"] == "game pace"]
    for r in target:
        worst = max(r["publish_to_stored"]["p99"] or 0, r["publish_to_page"]["p99"] or 0)
        verdict = "met" if worst < 1.0 and r["complete_tables"] == 200 else "NOT met"
        print(
            f"target (200 tables at game pace, p99 < 1 s, nothing lost): {verdict} (worst p99 {worst:.3f} s)"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
