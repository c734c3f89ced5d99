"""A local Mosquitto broker for ``hub --demo``, the tests and the benchmark, with the tournament's
credentials and access list (the same files an organiser gives the broker of a real event).

Every table logs in with its table id as user name; the access list's ``%u`` patterns let it
write only under ``<root>/<its id>/`` and read only its own confirmations. The hub's user reads
every table and writes the confirmations. Anonymous clients are refused.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from referee.app.broadcast import ROOT, BrokerConfig

MOSQUITTO_PATHS = ("/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto")


class BrokerError(RuntimeError):
    """Mosquitto is missing, or would not start; the message says which and why."""


def find_mosquitto() -> str | None:
    """The mosquitto executable, or None (``scripts/setup.sh`` installs it where it can)."""
    found = shutil.which("mosquitto")
    if found:
        return found
    return next((p for p in MOSQUITTO_PATHS if Path(p).is_file()), None)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def acl_text(hub_user: str = "hub", root: str = ROOT) -> str:
    """The access list: a table (user ``%u``) publishes only as itself; the hub reads all tables."""
    return (
        f"user {hub_user}\n"
        f"topic read {root}/+/entries\n"
        f"topic read {root}/+/summary\n"
        f"topic read {root}/+/status\n"
        f"topic write {root}/+/ack/#\n"
        "\n"
        f"pattern write {root}/%u/entries\n"
        f"pattern write {root}/%u/summary\n"
        f"pattern write {root}/%u/status\n"
        f"pattern read {root}/%u/ack/#\n"
    )


@dataclass
class Mosquitto:
    """A Mosquitto process on 127.0.0.1 with password and ACL files in its own folder.

    ``users`` maps user name to password (the hub's and each table's). With ``tls`` (a
    ``(ca, cert, key)`` triple of PEM files) the listener speaks TLS only.
    """

    users: dict[str, str]
    port: int = 0
    folder: Path | None = None
    tls: tuple[str, str, str] | None = None
    hub_user: str = "hub"
    root: str = ROOT
    _proc: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _tmp: tempfile.TemporaryDirectory[str] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        exe = find_mosquitto()
        if exe is None:
            raise BrokerError(
                "mosquitto is not installed (scripts/setup.sh installs it from Debian's packages)"
            )
        self.exe = exe
        if self.folder is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="gizmos-broker-")
            self.folder = Path(self._tmp.name)
        self.folder.mkdir(parents=True, exist_ok=True)
        if not self.port:
            self.port = free_port()
        self._write_files()

    def _write_files(self) -> None:
        assert self.folder is not None
        passwd = self.folder / "passwd"
        passwd.write_text("", encoding="utf-8")
        passwd.chmod(0o600)
        for user, password in self.users.items():
            subprocess.run(
                ["mosquitto_passwd", "-b", str(passwd), user, password],
                check=True,
                capture_output=True,
            )
        (self.folder / "acl").write_text(acl_text(self.hub_user, self.root), encoding="utf-8")
        (self.folder / "acl").chmod(0o600)
        lines = [
            "per_listener_settings false",
            "allow_anonymous false",
            f"password_file {passwd}",
            f"acl_file {self.folder / 'acl'}",
            "persistence true",
            f"persistence_location {self.folder}/",
            "autosave_interval 1",
            "max_queued_messages 100000",
            "log_dest stderr",
            "log_type error",
            "log_type warning",
            f"listener {self.port} 127.0.0.1",
        ]
        if self.tls is not None:
            # Mosquitto reads them after dropping to its own user: keep copies in its folder.
            for option, source in zip(("cafile", "certfile", "keyfile"), self.tls, strict=True):
                copy = self.folder / f"{option}.pem"
                shutil.copyfile(source, copy)
                copy.chmod(0o600)
                lines.append(f"{option} {copy}")
        (self.folder / "mosquitto.conf").write_text("\n".join(lines) + "\n", encoding="utf-8")
        self._hand_to_broker_user()

    def _hand_to_broker_user(self) -> None:
        """Started as root, mosquitto drops to its own user: that user must read (and own) the folder."""
        if os.geteuid() != 0:
            return
        try:
            who = pwd.getpwnam("mosquitto")
        except KeyError:
            return
        assert self.folder is not None
        for path in [self.folder, *self.folder.iterdir()]:
            os.chown(path, who.pw_uid, who.pw_gid)

    def config(self, user: str) -> BrokerConfig:
        """How ``user`` connects to this broker."""
        return BrokerConfig(
            host="127.0.0.1",
            port=self.port,
            username=user,
            password=self.users[user],
            tls=self.tls is not None,
            ca_file=self.tls[0] if self.tls else None,
        )

    def start(self, timeout: float = 10.0) -> Mosquitto:
        assert self.folder is not None
        log = self.folder / "mosquitto.log"
        with log.open("ab") as sink:
            self._proc = subprocess.Popen(
                [self.exe, "-c", str(self.folder / "mosquitto.conf")],
                stdout=subprocess.DEVNULL,
                stderr=sink,
            )
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self._proc.poll() is not None:
                err = log.read_text(errors="replace").strip().splitlines()[-1:]
                raise BrokerError(f"mosquitto exited at start (status {self._proc.returncode}): {err}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 0.2):
                return self
            time.sleep(0.05)
        self.stop()
        raise BrokerError(f"mosquitto did not listen on 127.0.0.1:{self.port} within {timeout} s")

    def stop(self, crash: bool = False) -> None:
        """Stop the broker: SIGTERM saves its persistent state; ``crash`` (SIGKILL) loses what it
        had not saved yet (up to a second of retained confirmations and queued messages)."""
        if self._proc is not None and self._proc.poll() is None:
            if crash:
                self._proc.kill()
            else:
                self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def close(self) -> None:
        self.stop()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> Mosquitto:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.close()
