"""The benchmark's held-out style and deck, and white balance on the markers' paper."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

import cv2
import numpy as np

from benchmarks import heldout
from referee.contrivance.data import BUILDERS
from referee.gizmos.cards import default_cards
from vision.enrol import check
from vision.faces import BAND_MM, FACE_H, FACE_PX_PER_MM, drawn_faces
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


def test_the_lookalike_deck_shares_one_drawing_per_colour_and_type(tmp_path: Path) -> None:
    """Cards of one template differ only in the title band and the text box; cards of two
    templates differ in the picture too. Its phone photos enrol like the other deck's."""
    deck = heldout.lookalike_deck()
    cards = default_cards()
    assert len(deck) == len(cards)
    red_builds = [i for i, c in enumerate(cards) if (c.color, c.type) == ("red", "build")]
    blue_picks = [i for i, c in enumerate(cards) if (c.color, c.type) == ("blue", "pick")]
    band = round(BAND_MM * FACE_PX_PER_MM)
    picture = slice(band + 4, FACE_H - 110)
    a, b = deck[red_builds[0]], deck[red_builds[1]]
    assert np.array_equal(a[picture], b[picture]) and not np.array_equal(a[:band], b[:band])
    assert not np.array_equal(a[picture], deck[blue_picks[0]][picture])
    assert not any(np.array_equal(d, o) for d, o in zip(deck, heldout.other_deck(), strict=True))
    report = check(heldout.enrol_photos(tmp_path / "lookalike", deck, 1))
    assert len(report.enrolled) == len(deck) and not report.missing


def test_white_balance_on_the_markers_paper_undoes_a_lamp() -> None:
    warm = replace(heldout.STYLE, hand_prob=0.0, camera=partial(heldout.webcam, kelvin=2700))
    scene = _scene(11, warm)
    raw = paper_color(scene.image, scene.homography)
    assert raw is not None and raw[2] / raw[0] > 1.1  # a warm lamp: the paper looks orange
    fixed = paper_color(balance(scene.image, scene.homography), scene.homography)
    assert fixed is not None and abs(fixed[2] / fixed[0] - 1) < 0.03


# ------------------------------------------------------------- the held-out Contrivance letters


def _glyph_mask(draw: Callable[[np.ndarray], object], slant: float = 0.0) -> np.ndarray:
    """A glyph ``draw(mask)`` paints white about 100 px tall at (100, 100), slanted by ``slant``
    (x moves right by that share of the height above the centre), cut to its ink and resized to
    48x64 (so size and place do not count, only shape)."""
    m = np.zeros((200, 200), np.uint8)
    draw(m)
    shear = np.array([[1, -slant, 100 * slant], [0, 1, 0]], np.float32)
    slanted = cv2.warpAffine(m, shear, (200, 200))
    ys, xs = np.nonzero(slanted > 127)
    box = (slanted[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1] > 127).astype(np.uint8) * 255
    return cv2.resize(box, (48, 64), interpolation=cv2.INTER_AREA) > 127


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    return float((a & b).sum() / (a | b).sum())


#: How much a held-out glyph may overlap (IoU of the normalised masks) any glyph training draws:
#: under half, but C (one open arc) and I (one bar) are near-alike in any face.
GLYPH_OVERLAP = {"C": 0.65, "I": 0.7}


def test_held_out_letters_and_figures_are_drawn_by_no_training_font_or_stroke_letter() -> None:
    """Leave-one-style-out for the glyphs: the held-out Contrivance art's initials and dial
    values (its own polylines, ``workbench_heldout.GLYPHS``) differ from every OpenCV font a
    training style draws (``tiles.TRAIN_FONTS``, upright and slanted as the held-out italic is)
    and from the project's stroke letters (plain, with serifs, with thin horizontals); the
    OpenCV COMPLEX|ITALIC the art drew them in before is, in this OpenCV, a training font."""
    from benchmarks.workbench_heldout import FONT, GLYPHS, SLANT, draw_glyphs
    from vision.training.tiles import STROKE_LETTERS, TRAIN_FONTS, WHITE, _text, draw_initial

    def font(ch: str, f: int) -> Callable[[np.ndarray], object]:
        return partial(_text, txt=ch, c=(100, 100), height=100, font=f, col=WHITE, weight=8)

    assert set(GLYPHS) >= {b[0] for b in BUILDERS} | {str(v) for v in range(10)}  # dials, Damage
    for ch in sorted(GLYPHS):
        held = _glyph_mask(partial(draw_glyphs, text=ch, c=(100, 100), height=100, weight=8, col=255))
        seen = [_glyph_mask(font(ch, f), slant) for f in TRAIN_FONTS for slant in (0.0, SLANT)]
        if ch in STROKE_LETTERS:
            seen += [
                _glyph_mask(
                    partial(
                        draw_initial,
                        letter=ch,
                        c=(100, 100),
                        height=100,
                        weight=8,
                        serif=serif,
                        contrast=contrast,
                    ),
                    slant,
                )
                for serif, contrast in ((0.0, 1.0), (0.3, 1.0), (0.3, 0.4))
                for slant in (0.0, SLANT)
            ]
        worst = max(_iou(held, s) for s in seen)
        assert worst < GLYPH_OVERLAP.get(ch, 0.5), (ch, worst)
    # The old held-out font drew a training font's very pixels (and this measure tells).
    for ch in "EMRCA0123456":
        old = _glyph_mask(font(ch, FONT))
        assert max(_iou(old, _glyph_mask(font(ch, f))) for f in TRAIN_FONTS) > 0.95, ch


#: How much a held-out figure may overlap a stroke figure of any of 100 random hands (IoU of
#: the normalised masks, upright and slanted as the held-out italic): a 0 is an oval and an 8
#: two loops in every hand (0.84 and 0.68 measured), the others under 0.65 (0.43-0.63; medians
#: 0.22-0.44, the training fonts 0.39-0.49 at most).
FIGURE_OVERLAP = {"0": 0.9, "8": 0.75}


def test_held_out_figures_are_not_among_the_stroke_figures() -> None:
    """Leave-one-style-out for the Damage token's numbers: the training's stroke figures
    (``tiles.random_figures``: random ways, widths, waists, serifs, contrast, wobble) never draw
    the held-out italic's figures; on average they are no closer to them than the training
    fonts are (median under 0.45)."""
    from benchmarks.workbench_heldout import SLANT, draw_glyphs
    from vision.training.tiles import random_figures

    rng = np.random.default_rng(0)
    hands = [random_figures(rng) for _ in range(100)]
    for ch in "0123456789":
        held = _glyph_mask(partial(draw_glyphs, text=ch, c=(100, 100), height=100, weight=8, col=255))
        ious = [
            _iou(held, _glyph_mask(partial(h, text=ch, c=(100, 100), height=100, weight=8, col=255), slant))
            for h in hands
            for slant in (0.0, SLANT)
        ]
        assert max(ious) < FIGURE_OVERLAP.get(ch, 0.65), (ch, max(ious))
        assert float(np.median(ious)) < 0.45, (ch, float(np.median(ious)))


def test_held_out_token_numerals_are_drawn_by_no_training_font() -> None:
    """The held-out VP tokens' 1 and 5 (``heldout.TOKEN_PRINT``: the held-out italic) differ
    from the same numerals in every font a training token printing draws (``randomise.
    TOKEN_FONTS``, the project's own among them), upright and slanted."""
    from benchmarks.workbench_heldout import SLANT, draw_glyphs
    from vision.training.randomise import TOKEN_FONTS
    from vision.training.synth import TokenPrint
    from vision.training.tiles import WHITE, _text

    assert heldout.TOKEN_PRINT.lettering is draw_glyphs and TokenPrint().font in TOKEN_FONTS
    for ch in "15":
        held = _glyph_mask(partial(draw_glyphs, text=ch, c=(100, 100), height=100, weight=8, col=255))
        seen = [
            _glyph_mask(partial(_text, txt=ch, c=(100, 100), height=100, font=f, col=WHITE, weight=8), slant)
            for f in TOKEN_FONTS
            for slant in (0.0, SLANT)
        ]
        worst = max(_iou(held, s) for s in seen)
        assert worst < 0.5, (ch, worst)


def test_the_held_out_damage_token_prints_the_held_out_glyphs() -> None:
    """The held-out Damage token draws its numbers with ``draw_glyphs`` (no OpenCV font, which
    training draws), every value 0-10 differently, a turned 6 still not a 9; the same token
    drawn with the old font is another picture."""
    from benchmarks.workbench_heldout import FONT, HELD_OUT_DAMAGE, draw_glyphs
    from vision.training.tiles import DAMAGE_VALUES, damage_token

    assert HELD_OUT_DAMAGE.font is draw_glyphs
    tokens = [damage_token(HELD_OUT_DAMAGE, v) for v in DAMAGE_VALUES]
    assert len({t.tobytes() for t in tokens}) == len(DAMAGE_VALUES)
    assert np.abs(np.rot90(tokens[6][..., :3], 2).astype(int) - tokens[9][..., :3]).mean() > 2.0
    for v in (0, 4, 10):
        old = damage_token(replace(HELD_OUT_DAMAGE, font=FONT), v)
        assert np.abs(old[..., :3].astype(int) - tokens[v][..., :3]).mean() > 2.0
