"""The ray tracer (vision/training/raytrace.py) and the benchmark's traced conditions."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from benchmarks.raytrace import STYLE_TRACED
from vision.calibrate import Calibrator
from vision.training import raytrace
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
    s = STYLE_TRACED
    rng = np.random.default_rng(3)
    blank = tuple(np.zeros((8, 8, 3), np.uint8) for _ in range(112))
    _draw_table(_column_layout(), z, rng, s, blank, [], placed)
    assert [p.card for p in placed if p.kind == "card"] == [11, 12, 13]
    k, rot, t = raytrace.random_camera(rng, z, s)
    text, kelvin = raytrace.scene_file(placed, z, k, rot, t, s.size, np.random.default_rng(0))
    face_box = r'box \{ <[^>]*, (-[0-9.]+)>, <[^>]*> texture \{ pigment \{ image_map \{ png "face'
    tops = [float(m) for m in re.findall(face_box, text)]
    assert tops == pytest.approx([-0.35, -0.70, -1.05])
    assert 2700 <= kelvin <= 6500


def test_a_later_card_always_lies_higher_than_the_cards_it_overlaps() -> None:
    """Each card lies on the highest card it overlaps that was put down before it: down a long
    column every card is higher than the one before (counting the cards under it left the fifth
    and sixth level), and a card whose edge lies on a neighbouring column stays under the card
    laid on it (counting had put it above: the traced image then showed the wrong card whole)."""
    from vision.training.synth import Placed

    column = [Placed("card", (100.0, 100.0 + 20.0 * k), card=10 + k) for k in range(7)]
    # the next column's two cards, 60 mm across: their left edges overlap the first column's cards
    neighbour = [Placed("card", (160.0, 100.0 + 20.0 * k), card=30 + k) for k in range(2)]
    z = default_zones()
    k, rot, t = raytrace.random_camera(np.random.default_rng(3), z, STYLE_TRACED)
    text, _ = raytrace.scene_file(column + neighbour, z, k, rot, t, (640, 360), np.random.default_rng(0))
    face_box = r'box \{ <[^>]*, (-[0-9.]+)>, <[^>]*> texture \{ pigment \{ image_map \{ png "face(\d+)'
    tops = {int(card): -float(top) for top, card in re.findall(face_box, text)}
    down_the_column = [tops[10 + k] for k in range(7)]
    assert all(b > a for a, b in pairwise(down_the_column))
    assert tops[31] > tops[30] > tops[10]


def test_a_traced_table_is_where_its_camera_puts_it_and_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pipeline's calibration of a traced frame agrees with the scene's homography (the truth
    every figure is measured against), and a second render of the seed comes from the cache."""
    need_povray()
    monkeypatch.setenv("GIZMOS_RAYTRACE_CACHE", str(tmp_path / "cache"))
    settings = replace(STYLE_TRACED, size=(960, 540), empty_table=True)
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
    # The bare table under the same lamp and camera: the markers alike, the cards gone.
    assert scene.empty_image is not None and scene.empty_image.shape == scene.image.shape
    diff = np.abs(scene.image.astype(np.float32) - scene.empty_image).mean(2)
    cards = [o for o in scene.objects if o.cls == "card"]
    x1, y1, x2, y2 = cards[0].box_mm
    p = np.array([(x1 + x2) / 2, (y1 + y2) / 2, 1.0]) @ scene.homography.T
    u, v = int(p[0] / p[2]), int(p[1] / p[2])
    _, (mx, my) = z.marker_tiles[0]
    q = np.array([mx + z.marker_mm / 2, my + z.marker_mm / 2, 1.0]) @ scene.homography.T
    mu, mv = int(q[0] / q[2]), int(q[1] / q[2])
    assert diff[v - 3 : v + 4, u - 3 : u + 4].mean() > 3 * diff[mv - 3 : mv + 4, mu - 3 : mu + 4].mean()

    def no_povray(*_a: object, **_k: object) -> None:
        raise AssertionError("traced again instead of read from the cache")

    monkeypatch.setattr(subprocess, "run", no_povray)
    again = raytrace.render_raytraced(layout, seed, settings)
    assert np.array_equal(again.image, scene.image)


def test_a_training_set_can_be_ray_traced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``vision dataset --raytrace``: the randomiser's scenes traced (a frame in the trace cache)
    and cut into labelled tiles like any other set."""
    need_povray()
    from vision.training.dataset import DatasetSpec, generate

    monkeypatch.setenv("GIZMOS_RAYTRACE_CACHE", str(tmp_path / "cache"))
    spec = DatasetSpec(tmp_path / "set", train_scenes=1, val_scenes=0, randomise=2, raytrace=True)
    generate(spec, workers=1, seed_offset=900_000)
    assert len(list((tmp_path / "cache").glob("*.png"))) == 1
    tiles = sorted((tmp_path / "set" / "images" / "train").glob("*.jpg"))
    labels = sorted((tmp_path / "set" / "labels" / "train").glob("*.txt"))
    assert len(tiles) == len(labels) == spec.tiles_per_scene
    assert any(path.read_text().strip() for path in labels)


def test_traced_frames_are_cached_in_the_ignored_data_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default cache is the checkout's git-ignored ``data/`` (never inside the package)."""
    monkeypatch.delenv("GIZMOS_RAYTRACE_CACHE", raising=False)
    root = Path(__file__).resolve().parents[1]
    assert raytrace.cache_dir() == root / "data" / "raytrace-cache"
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", str(raytrace.cache_dir() / "frame.png")], cwd=root, check=False
    )
    assert ignored.returncode == 0


def test_the_dataset_command_without_povray_is_one_line_and_exit_2(tmp_path: Path) -> None:
    import os
    import sys

    env = {**os.environ, "PATH": str(tmp_path / "no-such-bin")}
    cmd = [
        sys.executable,
        "-m",
        "referee.app.cli",
        "vision",
        "dataset",
        "--raytrace",
        "--out",
        str(tmp_path / "s"),
    ]
    run = subprocess.run(
        [*cmd, "--train", "1", "--val", "0", "--workers", "1", "--seed-offset", "950000"],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[1],
        check=False,
    )
    assert run.returncode == 2
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("error: raytrace: POV-Ray is not installed (Debian package 'povray'")
    assert "Traceback" not in run.stderr
