"""hardware.cli.main: vectors, listen, simulate and calibrate, end to end over ptys."""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path

import pytest

from hardware import cli
from hardware.calibration import ColorCalibration
from hardware.driver import DispenserDriver
from hardware.protocol import Button, Row
from hardware.simulator import Simulator, VirtualBoard, sample_rgbc
from hardware.vectors import VECTORS_PATH
from referee.gizmos.cards import COLORS


def test_vectors_command_passes_and_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["vectors"]) == 0
    assert "all pass" in capsys.readouterr().out
    doc = json.loads(VECTORS_PATH.read_text())
    doc["valid"][0]["line"] = doc["valid"][0]["line"][:-1] + "0"
    bad = tmp_path / "v.json"
    bad.write_text(json.dumps(doc))
    assert cli.main(["vectors", "--file", str(bad)]) == 1
    assert "FAIL valid[0]" in capsys.readouterr().out
    assert cli.main(["vectors", "--file", str(tmp_path / "none.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_bad_arguments_are_named(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["simulate", "--faults", "drop=lots"])
    assert exc.value.code == 2
    assert "fault drop: 'lots' is not a number" in capsys.readouterr().err


def test_listen_prints_events_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    with Simulator(board=VirtualBoard(record=False)) as sim:
        port = sim.plug()

        def feed() -> None:
            time.sleep(0.3)  # the listener opens the port meanwhile (opening flushes older bytes)
            for _ in range(20):
                sim.send(Button())
                time.sleep(0.02)

        threading.Thread(target=feed, daemon=True).start()
        assert cli.main(["listen", port, "--count", "3", "--json"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(out) == 3 and all(e["type"] == "dispenser" and e["kind"] == "button" for e in out)


def test_listen_refuses_a_broken_calibration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c.json").write_text("[]")
    assert cli.main(["listen", "/dev/null", "--calibration", str(tmp_path / "c.json")]) == 2
    assert "not a dispenser calibration" in capsys.readouterr().err


def test_simulate_serves_a_pty_that_listen_can_read(tmp_path: Path) -> None:
    link = tmp_path / "dispenser"
    result: list[int] = []
    sim = threading.Thread(
        target=lambda: result.append(
            cli.main(["simulate", "--link", str(link), "--rate", "100", "--count", "150"])
        )
    )
    sim.start()
    deadline = time.monotonic() + 5
    while not link.exists():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with DispenserDriver(str(link)) as driver:
        first = driver.get(timeout=5)
    sim.join(10)
    assert first is not None and result == [0]
    assert not link.exists()  # the simulator cleans up after itself


def test_simulate_outlives_a_listener_that_leaves(tmp_path: Path) -> None:
    # `simulate --tcp`: the listener connects, reads, and quits; the board keeps running (its
    # lines go nowhere, as on a UART with no host) instead of ending with "Broken pipe".
    import socket
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "hardware.cli", "simulate", "--tcp", "0", "--rate", "200", "--count", "300"]
    proc = subprocess.Popen(
        cmd,
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as listener:
        assert listener.recv(64)  # it is sending
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Broken pipe" not in err and "error" not in err, err


def test_calibrate_walks_through_and_saves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "cal.json"
    colors = iter(COLORS)
    rng = random.Random(3)
    with Simulator(board=VirtualBoard(record=False)) as sim:
        port = sim.plug()

        def answer(question: str) -> str:
            color = next(colors)
            assert color in question

            def drop() -> None:
                time.sleep(0.2)
                for _ in range(3):
                    sim.send(Row("unknown", sample_rgbc(color, rng)))

            threading.Thread(target=drop, daemon=True).start()
            return ""

        monkeypatch.setattr("builtins.input", answer)
        assert cli.main(["calibrate", port, "--out", str(out), "--per-colour", "3"]) == 0
    cal = ColorCalibration.load(out)
    assert cal.classify(sample_rgbc("yellow", rng)) == "yellow"
    assert all(len(cal.samples[c]) == 3 for c in COLORS)
