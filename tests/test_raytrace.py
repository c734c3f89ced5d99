"""The ray-traced tables (benchmarks/raytrace.py): a renderer of another kind for the benchmark."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from benchmarks import raytrace
from vision.calibrate import Calibrator
from vision.training.synth import PlayerLayout, TableLayout, random_layout
from vision.zones import default_zones


def need_povray() -> None:
    if shutil.which("povray") is None:
        pytest.fail(
            "the ray-tracing tests need Debian's povray: run scripts/setup.sh --dev (as root it installs it)"
        )


def test_a_missing_povray_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(raytrace.shutil, "which", lambda _name: None)
    with pytest.raises(raytrace.RaytraceError, match=r"POV-Ray is not installed \(Debian package 'povray'"):
        raytrace.povray()


def test_a_scene_povray_cannot_read_is_one_clear_error(tmp_path: Path) -> None:
    need_povray()
    (tmp_path / "scene.pov").write_text("#version 3.7;\nsphere { <0,0,0> 1 nonsense }\n", encoding="utf-8")
    with pytest.raises(raytrace.RaytraceError, match=r"POV-Ray failed on .*scene\.pov"):
        raytrace._trace(tmp_path, (64, 36), tmp_path / "cache")


def _column_layout() -> TableLayout:
    seat = PlayerLayout(seat=0, columns=((11, 12, 13), (), (), (), ()))
    return TableLayout(display=(), energy_row=(), players=(seat,), decks=())


def test_stacked_cards_lie_on_each_other() -> None:
    """A gizmo column's cards are card stock on card stock: each lies one card higher."""
    from vision.training.synth import Placed, _draw_table

    z = default_zones()
    placed: list[Placed] = []
    s = raytrace.STYLE_TRACED
    rng = np.random.default_rng(3)
    blank = tuple(np.zeros((8, 8, 3), np.uint8) for _ in range(112))
    _draw_table(_column_layout(), z, rng, s, blank, [], placed)
    assert [p.card for p in placed if p.kind == "card"] == [11, 12, 13]
    k, rot, t = raytrace.random_camera(rng, z, s)
    text, kelvin = raytrace.scene_file(placed, z, k, rot, t, s.size, z.size, np.random.default_rng(0))
    face_box = r'box \{ <[^>]*, (-[0-9.]+)>, <[^>]*> texture \{ pigment \{ image_map \{ png "face'
    tops = [float(m) for m in re.findall(face_box, text)]
    assert tops == pytest.approx([-0.35, -0.70, -1.05])
    assert 2700 <= kelvin <= 6500


def test_a_traced_table_is_where_its_camera_puts_it_and_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pipeline's calibration of a traced frame agrees with the scene's homography (the truth
    every figure is measured against), and a second render of the seed comes from the cache."""
    need_povray()
    monkeypatch.setenv("GIZMOS_RAYTRACE_CACHE", str(tmp_path / "cache"))
    settings = replace(raytrace.STYLE_TRACED, size=(960, 540))
    seed = 12_345
    layout = random_layout(np.random.default_rng(seed))
    scene = raytrace.render_raytraced(layout, seed, settings)
    assert scene.image.shape == (540, 960, 3)
    assert scene.objects and not scene.hands_mm
    z = default_zones()
    cal = Calibrator(z).update(scene.image)
    assert cal.fresh and len(cal.markers_seen) == 4
    tw, th = z.size
    table = np.array([[x, y, 1.0] for x in (0, tw / 2, tw) for y in (0, th / 2, th)])
    ours, theirs = table @ cal.homography.T, table @ scene.homography.T
    err = np.linalg.norm(ours[:, :2] / ours[:, 2:] - theirs[:, :2] / theirs[:, 2:], axis=1)
    assert err.max() < 2.0, err  # pixels at 960x540, across the whole table

    def no_povray(*_a: object, **_k: object) -> None:
        raise AssertionError("traced again instead of read from the cache")

    monkeypatch.setattr(subprocess, "run", no_povray)
    again = raytrace.render_raytraced(layout, seed, settings)
    assert np.array_equal(again.image, scene.image)
