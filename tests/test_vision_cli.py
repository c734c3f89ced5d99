"""The vision CLI: commands work end to end and bad input is one clear line, exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.app.vision_cli import main
from referee.observation import Observation


def test_synth_calibrate_and_observe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["synth", "--out", str(tmp_path), "--count", "1", "--seed", "8300000", "--players", "2"]) == 0
    image = tmp_path / "scene_8300000.jpg"
    assert main(["calibrate", str(image), "--out", str(tmp_path / "cal.png")]) == 0
    assert cv2.imread(str(tmp_path / "cal.png")) is not None
    capsys.readouterr()
    assert main(["observe", str(image), "--players", "2"]) == 0
    obs = Observation.from_json(json.loads(capsys.readouterr().out.strip()))
    assert len(obs.players) == 2 and obs.energy_row is not None


def test_print_markers_and_faces(tmp_path: Path) -> None:
    assert main(["print-markers", "--out", str(tmp_path / "m.png")]) == 0
    assert main(["faces", "--out", str(tmp_path / "faces")]) == 0
    assert len(list((tmp_path / "faces").glob("*.png"))) == 112


def test_bad_input_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["observe", str(tmp_path / "none.jpg")]) == 2
    assert "no such image file" in capsys.readouterr().err
    (tmp_path / "enrol").mkdir()
    cv2.imwrite(str(tmp_path / "enrol" / "ace.png"), np.zeros((10, 10, 3), np.uint8))
    assert main(["enrol-check", str(tmp_path / "enrol")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: enrolment: unknown card id 'ace'") and "Traceback" not in err
    assert main(["observe", str(tmp_path / "none.jpg"), "--model", str(tmp_path / "m.onnx")]) == 2
    assert "m.onnx not found" in capsys.readouterr().err
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.zeros((720, 1280, 3), np.uint8))
    assert main(["calibrate", str(blank)]) == 2
    assert "blank image" in capsys.readouterr().err
    assert main(["train-hands", "--out", str(tmp_path / "run"), "--resume"]) == 2
    assert capsys.readouterr().err.startswith("error: hand training: nothing to resume in")
    assert main(["export-hands", "--weights", str(tmp_path / "w.pt")]) == 2
    assert "hand weights file" in capsys.readouterr().err


def test_print_markers_says_which_size_and_refuses_a_bad_one(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = str(tmp_path / "m.png")
    assert main(["print-markers", "--out", out, "--camera-height", "180", "--tilt", "15"]) == 0
    assert "print markers of at least" in capsys.readouterr().out
    assert main(["print-markers", "--out", out, "--marker-mm", "5"]) == 2
    assert "--marker-mm 5 is not" in capsys.readouterr().err
