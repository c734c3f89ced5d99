"""A throw-away PostgreSQL server for the tests: ``initdb`` into a temporary folder, ``pg_ctl
start`` listening only on a Unix socket in that folder (no TCP port to collide on), stopped and
deleted afterwards.

PostgreSQL refuses to run as root ("root execution of the PostgreSQL server is not permitted"),
so under root the folder is handed to the ``postgres`` user that Debian's package creates and
``initdb``/``pg_ctl`` run as that user (``subprocess``'s ``user=``/``group=``). The test
process, root, can still use the socket. Debian keeps the programs in
``/usr/lib/postgresql/<version>/bin``, off the PATH: they are looked for there too.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

SERVER_USER = "postgres"
DB_USER = "hub"


class PostgresUnavailable(Exception):
    """This machine cannot run a test PostgreSQL; the message says exactly why (a skip reason)."""


def find_bin(name: str) -> str | None:
    """``initdb``/``pg_ctl`` on the PATH, else from Debian's newest ``/usr/lib/postgresql/N/bin``."""
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(
        (p for p in Path("/usr/lib/postgresql").glob("*/bin") if p.parent.name.isdigit()),
        key=lambda p: int(p.parent.name),
        reverse=True,
    )
    return next((str(v / name) for v in versions if (v / name).is_file()), None)


class PostgresServer:
    """One server for a test session; :meth:`create_database` gives each test a fresh database."""

    def __init__(self) -> None:
        self.initdb, self.pg_ctl = find_bin("initdb"), find_bin("pg_ctl")
        if self.initdb is None or self.pg_ctl is None:
            raise PostgresUnavailable(
                "PostgreSQL is not installed (initdb/pg_ctl not found; scripts/setup.sh --dev: "
                "apt-get install postgresql)"
            )
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise PostgresUnavailable(
                "psycopg is not installed (scripts/setup.sh --dev; or pip install 'psycopg[binary]')"
            ) from None
        self.run_as: dict[str, Any] = {}
        if os.geteuid() == 0:
            try:
                who = pwd.getpwnam(SERVER_USER)
            except KeyError:
                raise PostgresUnavailable(
                    f"running as root and there is no '{SERVER_USER}' user to run PostgreSQL as "
                    "(PostgreSQL refuses to run as root; Debian's postgresql package creates the user)"
                ) from None
            self.run_as = {"user": who.pw_uid, "group": who.pw_gid, "extra_groups": []}
        self.folder = Path(tempfile.mkdtemp(prefix="gizmos-pg-"))
        if self.run_as:
            os.chown(self.folder, self.run_as["user"], self.run_as["group"])
        self.data = self.folder / "data"
        self.port = 5432  # the socket is in our own folder: no other server can collide
        self._count = 0
        self._started = False

    def _call(self, *argv: str, timeout: float = 120) -> None:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, cwd=self.folder, **self.run_as
        )
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            log = self.folder / "server.log"
            if log.is_file():
                tail += log.read_text(errors="replace").strip().splitlines()[-3:]
            raise RuntimeError(f"{Path(argv[0]).name} failed (status {done.returncode}): {' | '.join(tail)}")

    def start(self) -> PostgresServer:
        """``initdb`` (trust on the socket, C locale) and ``pg_ctl start``, waiting until it accepts."""
        assert self.initdb and self.pg_ctl
        self._call(self.initdb, "-D", str(self.data), "-U", DB_USER, "-A", "trust", "-E", "UTF8",
                   "--locale=C", "--no-sync")  # fmt: skip
        options = f"-k {self.folder} -c listen_addresses='' -p {self.port}"
        self._call(self.pg_ctl, "-D", str(self.data), "-o", options, "-l", str(self.folder / "server.log"),
                   "-w", "-t", "60", "start")  # fmt: skip
        self._started = True
        return self

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every client's connection is cut (a database server restart)."""
        assert self.pg_ctl
        options = f"-k {self.folder} -c listen_addresses='' -p {self.port}"
        self._call(self.pg_ctl, "-D", str(self.data), "-o", options, "-l", str(self.folder / "server.log"),
                   "-m", "fast", "-w", "-t", "60", "restart")  # fmt: skip

    def url(self, dbname: str = "postgres") -> str:
        """A ``postgresql://`` URL for ``dbname`` over the server's socket."""
        return f"postgresql://{DB_USER}@/{dbname}?host={quote(str(self.folder), safe='')}&port={self.port}"

    def create_database(self) -> str:
        """A new, empty database; its URL."""
        import psycopg

        self._count += 1
        name = f"test_{self._count}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.split("/")[3].split("?")[0]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        if self._started and self.pg_ctl:
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                self._call(self.pg_ctl, "-D", str(self.data), "-m", "fast", "-w", "stop", timeout=60)
            self._started = False
        shutil.rmtree(self.folder, ignore_errors=True)
