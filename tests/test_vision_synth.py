"""Scene synthesis: deterministic renders whose ground truth follows the layout exactly."""

from __future__ import annotations

import numpy as np

from referee.observation import Observation
from vision.geometry import CLASSES
from vision.training.synth import PlayerLayout, RenderSettings, TableLayout, random_layout, render_table

LAYOUT = TableLayout(
    display=(
        (1, 0, 10),
        (1, 1, 11),
        (1, 2, None),
        (1, 3, 13),
        (2, 0, 40),
        (2, 1, 41),
        (2, 2, 42),
        (3, 0, 80),
        (3, 1, 81),
    ),
    energy_row=("red", "blue", "black", "yellow", "red", "blue"),
    players=(
        PlayerLayout(
            0,
            columns=((50,), (), (0, 20), (), (30, 31, 32)),
            archive=(60,),
            ring=("yellow", "red"),
            vp_ones=2,
            vp_fives=1,
        ),
        PlayerLayout(1, columns=((), (4,), (1,), (), ()), ring=("black",)),
    ),
)


def test_render_is_deterministic_and_sized() -> None:
    a = render_table(LAYOUT, 3, RenderSettings(size=(1280, 720), hand_prob=0))
    b = render_table(LAYOUT, 3, RenderSettings(size=(1280, 720), hand_prob=0))
    assert a.image.shape == (720, 1280, 3)
    assert np.array_equal(a.image, b.image)
    big = render_table(LAYOUT, 3, RenderSettings(size=(1920, 1080), hand_prob=0))
    assert big.image.shape == (1080, 1920, 3)


def test_ground_truth_is_the_layout_as_an_observation() -> None:
    scene = render_table(LAYOUT, 4, RenderSettings(hand_prob=0))
    t = scene.truth
    assert {(s.level, s.slot): s.card for s in t.display}[(1, 2)] is None
    assert [m.color for m in t.energy_row or ()] == list(LAYOUT.energy_row)
    p0 = t.player(0)
    assert p0 is not None
    assert [c.card for c in p0.gizmos or ()] == [50, 0, 20, 30, 31, 32]
    assert [m.color for m in p0.ring or ()] == ["red", "yellow"]  # ring in color order
    assert p0.vp_tokens == (7, 1.0)
    assert Observation.from_json(t.to_json()) == t  # valid in the shared format
    kinds = [o.cls for o in scene.objects]
    assert kinds.count("card_band") == 3  # 0 over 20, 30 and 31 over 32
    assert kinds.count("card_back") == 3


def test_yolo_labels_are_normalised_and_cover_every_marble() -> None:
    scene = render_table(LAYOUT, 5, RenderSettings(hand_prob=0))
    labels = scene.yolo_labels()
    assert all(0 <= c < len(CLASSES) for c, *_ in labels)
    assert all(0 <= v <= 1 for _, *box in labels for v in box)
    marbles = sum(1 for c, *_ in labels if CLASSES[c].startswith("marble_"))
    assert marbles == 6 + 3 + len(LAYOUT.dispenser)


def test_a_hand_hides_the_zones_it_covers() -> None:
    rng = np.random.default_rng(11)
    hidden = 0
    for seed in range(6):
        scene = render_table(random_layout(rng), seed, RenderSettings(hand_prob=1.0))
        assert any(o.cls == "hand" for o in scene.objects)
        covered = [p for p in scene.truth.players if p.gizmos is None or p.ring is None]
        hidden += len(covered) + (scene.truth.energy_row is None) + (len(scene.truth.display) < 9)
        assert all(o.visible for o in scene.objects if o.cls == "hand")
    assert hidden > 0
