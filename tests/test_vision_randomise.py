"""Domain-randomised training scenes: a smoke test of the generator (no training runs here)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from benchmarks import heldout
from vision.faces import drawn_faces
from vision.geometry import rectify
from vision.training.dataset import DatasetSpec, generate
from vision.training.randomise import (
    _HELD_OUT_TOKENS,
    _MAT,
    TOKEN_DIGITS_DARK,
    TOKEN_DIGITS_LIGHT,
    TOKEN_FONTS,
    TOKEN_RIM_PX,
    marble_look,
    random_deck,
    random_hand_look,
    randomised,
    same_color_texture,
    token_print,
    with_distractors,
)
from vision.training.synth import (
    MARBLE_MM,
    RenderSettings,
    TableLayout,
    TokenPrint,
    marble_sprite,
    render_table,
)


@pytest.mark.parametrize("look", [1, 2, 3])
def test_randomised_dataset_renders_labelled_tiles_deterministically(tmp_path: Path, look: int) -> None:
    spec = DatasetSpec(tmp_path / "a", train_scenes=2, val_scenes=1, tiles_per_scene=1, randomise=look)
    generate(spec, workers=1)
    labels = sorted((tmp_path / "a" / "labels" / "train").glob("*.txt"))
    assert len(labels) == 2 and any(p.read_text().strip() for p in labels)
    again = DatasetSpec(tmp_path / "b", train_scenes=2, val_scenes=1, tiles_per_scene=1, randomise=look)
    generate(again, workers=1)
    for p in labels:
        assert (tmp_path / "b" / "labels" / "train" / p.name).read_text() == p.read_text()
        image = Path(str(p).replace("labels", "images")).with_suffix(".jpg")
        assert Path(str(image).replace("/a/", "/b/")).read_bytes() == image.read_bytes()


def test_look_two_adds_its_hooks_without_changing_look_one() -> None:
    for seed in range(1_000_000, 1_000_010):
        one, faces_one = randomised(seed, look=1)
        two, faces_two = randomised(seed, look=2)
        assert one.marble_look is None and one.token_print is None and not one.tray_heaps
        assert two.marble_look is not None and two.token_print is not None
        # look 1's own draws are untouched by look 2's (which come from a stream of their own)
        assert (one.jitter_mm, one.jitter_deg, one.touching_marbles) == (
            two.jitter_mm,
            two.jitter_deg,
            two.touching_marbles,
        )
        assert faces_one is faces_two
        assert all(math.dist(c, _MAT) >= 60 for c in two.token_fills)
    with pytest.raises(ValueError, match="look 4 is not one of"):
        randomised(1_000_000, look=4)


def test_look_three_adds_arms_without_changing_look_two() -> None:
    for seed in range(1_000_000, 1_000_010):
        two, faces_two = randomised(seed, look=2)
        three, faces_three = randomised(seed, look=3)
        assert two.hand_look is None and three.hand_look is not None
        assert replace(three, hand_look=None, marble_look=None, texture=None) == replace(
            two, marble_look=None, texture=None
        )
        assert faces_two is faces_three


def test_arm_looks_colour_the_arm_and_only_the_arm() -> None:
    """A look paints the arm where the hand's mask is (the truth the hand network learns): it never
    moves the hand, and the table round it is untouched."""
    layout = TableLayout(display=(), energy_row=(), players=())
    grey = RenderSettings(
        hand_prob=1.0, effects=False, texture=lambda rng, w, h: np.full((h, w, 3), 128, np.uint8)
    )
    for seed in range(4):
        scene = render_table(
            layout, seed, replace(grey, hand_look=random_hand_look(np.random.default_rng(seed)))
        )
        bare = render_table(layout, seed, grey)
        assert scene.hand_mask is not None and bare.hand_mask is not None
        assert np.array_equal(scene.hand_mask, bare.hand_mask)
        canon = rectify(scene.image, scene.homography).astype(int)
        far = (cv2.dilate(scene.hand_mask, np.ones((41, 41), np.uint8)) == 0) & (canon.sum(2) > 0)
        assert far.any() and np.abs(canon[far] - 128).mean() < 12


def test_arm_looks_reach_beyond_the_projects_one_skin_range() -> None:
    """Hands from dark to pale (the project's own arm: channel means 103-187 before shading), and
    arms whose forearm is not the hand's colour (a sleeve, a glove) in about the shares drawn."""
    along, across = np.mgrid[0:200, -60:60].astype(np.float32)
    hands, two_coloured = [], 0
    for seed in range(200):
        arm = random_hand_look(np.random.default_rng(seed))(np.random.default_rng(0), along, across, 150.0)
        hand, elbow = arm[195].mean(0), arm[10].mean(0)
        hands.append(float(hand.mean()))
        two_coloured += int(np.abs(elbow - hand).max() > 20)
    assert min(hands) < 70 and max(hands) > 190
    assert 0.4 < two_coloured / 200 < 0.9  # sleeves 60 %, gloves 15 % of the rest


def test_marble_materials_keep_the_marbles_color() -> None:
    light = np.array([0.4, 0.3, 0.866], np.float32)
    glossy_alpha = marble_sprite("red", light)[1].mean()
    see_through = 0
    for seed in range(40):
        make = marble_look(np.random.default_rng(seed))
        for color, channel in (("red", 2), ("blue", 0)):
            rgb, alpha = make(color, light)
            assert alpha.min() >= 0 and alpha.max() <= 1 and alpha.mean() <= glossy_alpha + 1e-6
            see_through += alpha.mean() < 0.9 * glossy_alpha
            body = np.median(rgb[alpha[..., 0] > 0.5], axis=0)  # the body, not the highlight
            assert int(np.argmax(body)) == channel, (seed, color, body)
    assert see_through > 0  # glass marbles among the 40 scenes


def test_same_color_tables_and_tray_heaps() -> None:
    hues = []
    for seed in range(20):
        t = same_color_texture(np.random.default_rng(seed), 64, 48)
        assert t.shape == (48, 64, 3) and t.dtype == np.uint8
        hues.append(t.reshape(-1, 3).mean(0))
    assert any(h[2] > 1.5 * h[0] and h[2] > 1.5 * h[1] for h in hues)  # a red table
    assert any(h.max() < 70 for h in hues)  # a dark one (black marbles)
    layout = TableLayout((), (), (), decks=(), dispenser=("red",) * 7)
    scene = render_table(layout, 3, RenderSettings(tray_heaps=True, hand_prob=0, effects=False))
    centres = [((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2) for o in scene.objects]
    nearest = [min(math.dist(a, b) for b in centres if b is not a) for a in centres]
    assert len(centres) == 7 and max(nearest) < MARBLE_MM + 0.5  # every marble touches another


def test_randomised_looks_keep_clear_of_the_held_out_style() -> None:
    assert heldout.STYLE.texture is not None and heldout.STYLE.camera is not None
    decks = set()
    for seed in range(1_000_000, 1_000_040):
        s, faces = randomised(seed)
        assert s.texture is not heldout.STYLE.texture and s.camera is not heldout.STYLE.camera
        assert all(math.dist(c, h) >= 60 for c in s.token_fills for h in _HELD_OUT_TOKENS)
        decks.add(id(faces))
    assert len(decks) > 2  # several decks across scenes, not one
    deck = random_deck(1)
    assert not any(np.array_equal(a, b) for a, b in zip(deck, drawn_faces(), strict=True))
    assert not any(np.array_equal(a, b) for a, b in zip(deck, heldout.other_deck(), strict=True))
    assert not any(np.array_equal(a, b) for a, b in zip(deck, heldout.lookalike_deck(), strict=True))


def test_distractors_lie_on_the_table_deterministically() -> None:
    def plain(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
        return np.full((h, w, 3), 90, np.uint8)

    with_things = with_distractors(plain)
    a = with_things(np.random.default_rng(5), 800, 600)
    assert np.array_equal(a, with_things(np.random.default_rng(5), 800, 600))
    assert (a != 90).any(axis=2).mean() > 0.005  # something lies on it
    assert any(
        randomised(seed, look=2)[0].texture.__name__ == "draw"  # type: ignore[union-attr]
        for seed in range(1_000_000, 1_000_010)
    )


def _trained_printing(tp: TokenPrint) -> bool:
    """Whether a printing lies inside what training draws (:func:`token_print`'s ranges)."""
    light = all(v >= TOKEN_DIGITS_LIGHT for v in tp.digits)
    dark = all(v <= TOKEN_DIGITS_DARK for v in tp.digits)
    return tp.lettering is None and tp.font in TOKEN_FONTS and tp.rim_px <= TOKEN_RIM_PX and (light or dark)


def test_the_held_out_token_printing_is_one_no_training_draws() -> None:
    """The held-out style's VP tokens are another printing, not the project's with new fills:
    lettering of its own (no OpenCV font), a rim wider and digits of a color no training
    printing has; every printing training draws (look 2's, and the project's own) lies inside
    the ranges the held-out one is outside of."""
    held = heldout.STYLE.token_print
    assert held is heldout.TOKEN_PRINT and held is not None
    assert held.lettering is not None and held.rim_px > TOKEN_RIM_PX
    assert not all(v >= TOKEN_DIGITS_LIGHT for v in held.digits)
    assert not all(v <= TOKEN_DIGITS_DARK for v in held.digits)
    assert not _trained_printing(held)
    assert _trained_printing(TokenPrint())
    for seed in range(2_000):
        assert _trained_printing(token_print(np.random.default_rng(seed))), seed
    assert all(
        _trained_printing(s.token_print or TokenPrint())
        for s in (randomised(seed, look=look)[0] for seed in range(1_000_000, 1_000_008) for look in (1, 2))
    )
