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
from vision.paths import LOCATIONS, Locations, find_root


def test_settings_come_from_the_environment_given() -> None:
    assert Settings.from_env({}) == Settings(None, None)
    assert (
        Settings.from_env({"GIZMOS_DETECTOR": " ", "GIZMOS_ENROL_DIR": "", "GIZMOS_HOME": ""}) == Settings()
    )
    s = Settings.from_env({"GIZMOS_DETECTOR": "/m/d.onnx", "GIZMOS_ENROL_DIR": "/cards"})
    assert s == Settings(Path("/m/d.onnx"), Path("/cards"))
    assert s.detector_file() == Path("/m/d.onnx") and Settings().detector_file() == LOCATIONS.detector
    home = Settings.from_env({"GIZMOS_HOME": "/srv/gizmos"})
    assert home.locations() == Locations(Path("/srv/gizmos")) and Settings().locations() == LOCATIONS
    assert home.detector_file() == Path("/srv/gizmos/models/detector.onnx")


def test_the_project_folders_are_found_from_a_clone_and_from_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vision.paths

    # this checkout: the packages are imported from it, and it holds the committed models
    assert (LOCATIONS.root / "vision" / "paths.py").is_file() and LOCATIONS.detector.is_file()
    assert find_root(tmp_path) == LOCATIONS.root  # the packages' own clone comes first
    # a copy installed into site-packages, run from (a folder inside) a clone
    clone, installed = tmp_path / "clone", tmp_path / "venv" / "site-packages" / "vision"
    for folder in (clone / "models", clone / "docs", installed):
        folder.mkdir(parents=True)
    (clone / "pyproject.toml").write_text("")
    monkeypatch.setattr(vision.paths, "__file__", str(installed / "paths.py"))
    assert find_root(clone / "docs") == clone
    assert find_root(tmp_path) == tmp_path  # no clone anywhere: the current folder
    assert Locations(clone).detector == clone / "models" / "detector.onnx"
    assert Locations(clone).data == clone / "data" and Locations(clone).runs == clone / "runs"


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
    home = Settings(home=Path("/srv/gizmos")).fill(parser.parse_args(["demo", "--headless"]))
    assert home.model == Path("/srv/gizmos/models/detector.onnx") and home.locations.root == Path(
        "/srv/gizmos"
    )


def test_vision_does_not_read_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GIZMOS_DETECTOR", str(tmp_path / "elsewhere.onnx"))
    monkeypatch.setenv("GIZMOS_ENROL_DIR", str(tmp_path / "no-such-folder"))
    monkeypatch.setenv("GIZMOS_HOME", str(tmp_path))
    assert default_model() == LOCATIONS.detector and find_root() == LOCATIONS.root
    assert face_set() is drawn_faces() and face_set(None) is drawn_faces()


def test_the_dashboards_card_art_takes_the_enrolment_setting(tmp_path: Path) -> None:
    art = DrawnCardArt(Settings(enrol_dir=tmp_path / "cards"))
    assert art.enrol_dir == tmp_path / "cards"
    assert np.array_equal(DrawnCardArt(Settings()).face(3, None), drawn_faces()[3])
