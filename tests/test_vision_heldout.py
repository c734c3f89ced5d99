"""The benchmark's held-out style and deck, and white balance on the markers' paper."""

from __future__ import annotations

import ast
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np

from benchmarks import heldout
from vision.enrol import check
from vision.faces import drawn_faces
from vision.geometry import MARBLE_MM
from vision.training.synth import random_layout, render_table
from vision.whitebalance import balance, paper_color

ROOT = Path(__file__).resolve().parent.parent


def test_no_project_code_can_see_the_held_out_style() -> None:
    """Leave-one-style-out: nothing outside benchmarks/ and tests/ imports the held-out style."""
    for path in ROOT.glob("*/**/*.py"):
        top = path.relative_to(ROOT).parts[0]
        if top in ("benchmarks", "tests", ".venv") or "site-packages" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n.startswith("benchmarks") for n in names), f"{path} imports {names}"


def _scene(seed: int, settings=heldout.STYLE):  # type: ignore[no-untyped-def]
    return render_table(random_layout(np.random.default_rng(seed)), seed, settings)


def test_held_out_style_is_deterministic_and_heaps_ring_marbles() -> None:
    a, b = _scene(5), _scene(5)
    assert np.array_equal(a.image, b.image)
    own = render_table(
        random_layout(np.random.default_rng(5)), 5, replace(heldout.STYLE, texture=None, camera=None)
    )
    assert not np.array_equal(a.image, own.image)
    touching = 0
    centres = [
        ((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2) for o in a.objects if o.color
    ]
    for i, c in enumerate(centres):
        touching += any(abs(np.hypot(c[0] - d[0], c[1] - d[1]) - MARBLE_MM) < 0.5 for d in centres[i + 1 :])
    assert touching >= 3


def test_other_deck_is_other_art_and_its_phone_photos_enrol(tmp_path: Path) -> None:
    deck = heldout.other_deck()
    assert len(deck) == len(drawn_faces())
    assert all(
        d.shape == f.shape and not np.array_equal(d, f) for d, f in zip(deck, drawn_faces(), strict=True)
    )
    report = check(heldout.enrol_other_deck(tmp_path / "deck"))
    assert len(report.enrolled) == len(deck) and not report.missing


def test_white_balance_on_the_markers_paper_undoes_a_lamp() -> None:
    warm = replace(heldout.STYLE, hand_prob=0.0, camera=partial(heldout.webcam, kelvin=2700))
    scene = _scene(11, warm)
    raw = paper_color(scene.image, scene.homography)
    assert raw is not None and raw[2] / raw[0] > 1.1  # a warm lamp: the paper looks orange
    fixed = paper_color(balance(scene.image, scene.homography), scene.homography)
    assert fixed is not None and abs(fixed[2] / fixed[0] - 1) < 0.03
