"""Settings are read from the environment at the edge (referee/app/settings.py) and passed in:
vision never reads them itself."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from referee.app.card_art import DrawnCardArt
from referee.app.cli import build_parser
from referee.app.settings import Settings
from vision.detect import default_model
from vision.faces import drawn_faces, face_set
from vision.paths import DETECTOR_ONNX


def test_settings_come_from_the_environment_given() -> None:
    assert Settings.from_env({}) == Settings(None, None)
    assert Settings.from_env({"GIZMOS_DETECTOR": " ", "GIZMOS_ENROL_DIR": ""}) == Settings(None, None)
    s = Settings.from_env({"GIZMOS_DETECTOR": "/m/d.onnx", "GIZMOS_ENROL_DIR": "/cards"})
    assert s == Settings(Path("/m/d.onnx"), Path("/cards"))
    assert s.detector_file() == Path("/m/d.onnx") and Settings().detector_file() == DETECTOR_ONNX


def test_options_left_out_take_the_settings_and_given_ones_win() -> None:
    s = Settings(Path("/m/d.onnx"), Path("/cards"))
    parser = build_parser()
    run = s.fill(parser.parse_args(["run", "--camera", "0", "--players", "Ana", "Ben"]))
    assert (run.model, run.enrol) == (Path("/m/d.onnx"), Path("/cards"))
    given = s.fill(
        parser.parse_args(
            ["run", "--camera", "0", "--players", "Ana", "Ben", "--model", "x.onnx", "--enrol", "e"]
        )
    )
    assert (given.model, given.enrol) == ("x.onnx", "e")
    observe = s.fill(parser.parse_args(["vision", "observe", "f.png"]))
    assert (observe.model, observe.enrol) == (Path("/m/d.onnx"), Path("/cards"))
    new = s.fill(parser.parse_args(["new", "--players", "2"]))  # no such options: untouched
    assert not hasattr(new, "model") and not hasattr(new, "enrol")
    assert (
        Settings().fill(parser.parse_args(["run", "--camera", "0", "--players", "Ana", "Ben"])).model is None
    )


def test_vision_does_not_read_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GIZMOS_DETECTOR", str(tmp_path / "elsewhere.onnx"))
    monkeypatch.setenv("GIZMOS_ENROL_DIR", str(tmp_path / "no-such-folder"))
    assert default_model() == DETECTOR_ONNX
    assert face_set() is drawn_faces() and face_set(None) is drawn_faces()


def test_the_dashboards_card_art_takes_the_enrolment_setting(tmp_path: Path) -> None:
    art = DrawnCardArt(Settings(enrol_dir=tmp_path / "cards"))
    assert art.enrol_dir == tmp_path / "cards"
    assert np.array_equal(DrawnCardArt(Settings()).face(3, None), drawn_faces()[3])
