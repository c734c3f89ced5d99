"""The marble color stage: reads rendered marbles right, says "unknown" rather than guess."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from referee.gizmos.cards import COLORS
from vision.errors import ModelFileError
from vision.marbles import DEFAULT_PARAMS, ColorModel, MarbleColors, features, fit
from vision.training.evaluate import Tally, scene_for_seed
from vision.training.marbles import FIT_SEED_BASE, samples
from vision.training.synth import RenderSettings


@pytest.fixture(scope="module")
def colors() -> MarbleColors:
    return MarbleColors()


def test_rendered_marbles_are_read_right(colors: MarbleColors) -> None:
    right = Tally()
    for seed in range(8_600_000, 8_600_004):
        scene = scene_for_seed(seed, RenderSettings(hand_prob=0))
        for o in scene.objects:
            if o.color is not None:
                c = ((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2)
                right.add(colors.classify(scene.image, scene.homography, c)[0] == o.color)
    assert right.n > 60
    assert right.rate >= 0.99, right


def _disc_patch(bgr: tuple[int, int, int]) -> np.ndarray:
    patch = np.full((48, 48, 3), 200, np.uint8)
    yy, xx = np.mgrid[0:48, 0:48] - 23.5
    patch[np.hypot(xx, yy) < 15] = bgr
    return patch


@pytest.mark.parametrize("bgr", [(40, 200, 40), (200, 40, 200), (0, 128, 255), (250, 250, 250)])
def test_a_color_no_marble_has_is_unknown(colors: MarbleColors, bgr: tuple[int, int, int]) -> None:
    assert colors.classify_features(features(_disc_patch(bgr)))[0][0] == "unknown"


def test_a_plain_marble_color_is_read(colors: MarbleColors) -> None:
    red = colors.classify_features(features(_disc_patch((40, 35, 200))))[0]
    assert red[0] == "red" and red[1] > 0.99


def test_a_marble_a_few_mm_off_its_box_is_read_where_it_lies(
    colors: MarbleColors, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A box drawn off its marble samples table with it: "unknown" at the box's centre, the
    marble's colour at the most marble-like offset; a box on no marble stays unknown."""
    import cv2

    from vision import marbles

    h = np.diag([2.0, 2.0, 1.0])  # table mm -> frame px at 2 px/mm
    frame = np.full((200, 200, 3), 200, np.uint8)
    cv2.circle(frame, (100, 100), 16, (40, 35, 200), -1)  # a red marble at (50, 50) mm
    off = (50.0, 57.5)  # its box's centre, 7.5 mm below it: half the disc read is table
    assert colors.classify(frame, h, off)[0] == "red"
    monkeypatch.setattr(marbles, "SEARCH_MM", 0.0)
    assert colors.classify(frame, h, off)[0] == "unknown"  # without the search
    monkeypatch.undo()
    assert colors.classify(frame, h, (20.0, 20.0))[0] == "unknown"  # bare table
    green = frame.copy()
    cv2.circle(green, (100, 100), 16, (40, 200, 40), -1)
    assert colors.classify(green, h, off)[0] == "unknown"  # like no marble at any offset


def test_where_two_colors_are_alike_it_is_unknown(colors: MarbleColors) -> None:
    m = colors.model.means
    red, yellow = m[COLORS.index("red")], m[COLORS.index("yellow")]
    line = [red + t * (yellow - red) for t in np.linspace(0, 1, 201)]
    got = colors.classify_features(np.array(line))
    assert got[0][0] == "red" and got[-1][0] == "yellow"
    # Where the line crosses from red to yellow, neither is clearly ahead.
    first_yellow = next(i for i, (c, _) in enumerate(got) if c == "yellow")
    assert got[first_yellow - 1][0] == "unknown"


def test_where_the_stage_is_unsure_a_sure_detector_decides(colors: MarbleColors) -> None:
    """Between black and yellow the stage is unsure: the detector's color is taken when it is sure
    (its confidence then the posterior), never when it is unsure, and never for an outlier."""
    m = colors.model.means
    black, yellow = m[COLORS.index("black")], m[COLORS.index("yellow")]
    line = np.array([black + t * (yellow - black) for t in np.linspace(0, 1, 201)])
    alone = colors.classify_features(line)
    unsure = [i for i, (c, _) in enumerate(alone) if c == "unknown"]
    assert unsure, "the line must cross a stretch where the stage is unsure"
    x = line[unsure[0]]
    assert colors.classify_features(x, ("black", 0.92))[0] == ("black", 0.92)
    assert colors.classify_features(x, ("black", 0.6))[0][0] == "unknown"
    outlier = features(_disc_patch((40, 200, 40)))  # green: like no marble at all
    assert colors.classify_features(outlier, ("black", 0.99))[0][0] == "unknown"
    sure = colors.classify_features(m[COLORS.index("red")], ("blue", 0.99))[0]
    assert sure[0] == "red"  # a stage sure of its color is not overruled


def test_fitting_recovers_the_colors() -> None:
    x, y = samples(FIT_SEED_BASE + 500_000, 3)
    assert len(y) > 40 and set(y) == set(COLORS)
    got = [c for c, _ in MarbleColors(fit(x, y)).classify_features(x)]
    assert np.mean(np.array(got) == np.array(y)) >= 0.99


def test_shipped_parameters_load_and_bad_files_are_named(tmp_path: Path) -> None:
    assert ColorModel.load(DEFAULT_PARAMS).means.shape == (4, 3)
    with pytest.raises(ModelFileError, match=r"cannot load .*missing\.json"):
        MarbleColors(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "gizmos-marble-colours", "colours": ["red"]}))
    with pytest.raises(ModelFileError, match="not a marble colour model"):
        MarbleColors(bad)
