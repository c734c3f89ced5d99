"""Cards that have not moved keep their scores (vision/unmoved.py), and nothing else does."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from referee.gizmos.cards import default_cards
from vision.faces import drawn_faces
from vision.observe import Assembler
from vision.training.evaluate import content, layout_memory, oracle_detections
from vision.training.synth import RenderedScene, RenderSettings, TableLayout, random_layout, render_table
from vision.unmoved import UnmovedCards, looks_the_same, thumbnail

SEED = 41


def _scene(layout: TableLayout) -> RenderedScene:
    """The table without a hand in the frame, and one other frame of it (an arm or none)."""
    return render_table(layout, SEED, RenderSettings(hand_prob=0.0, other_frames=1))


@pytest.fixture(scope="module")
def layout() -> TableLayout:
    return random_layout(np.random.default_rng(SEED), 3)


def _seats(layout: TableLayout) -> tuple[int, ...]:
    return tuple(p.seat for p in layout.players)


def _swapped(layout: TableLayout) -> tuple[TableLayout, int, int]:
    """The layout with one Display card replaced by an unused card of its level: (layout, old, new)."""
    used = {c for _, _, c in layout.display if c is not None}
    for p in layout.players:
        used |= {c for col in p.columns for c in col} | set(p.archive)
    k, (level, slot, old) = next((k, d) for k, d in enumerate(layout.display) if d[2] is not None)
    new = next(c.id for c in default_cards() if c.level == level and c.id not in used)
    display = (*layout.display[:k], (level, slot, new), *layout.display[k + 1 :])
    return replace(layout, display=display), int(old), new  # type: ignore[arg-type]


def test_a_table_seen_again_keeps_its_cards_scores_and_reads_the_same(layout: TableLayout) -> None:
    scene = _scene(layout)
    seats = _seats(layout)
    other = scene.other_images[0]
    fresh = Assembler()
    fresh.unmoved = None
    want = content(fresh.assemble(other, scene.homography, oracle_detections(scene), seats))
    keeping = Assembler()
    assert keeping.unmoved is not None
    first = keeping.assemble(scene.image, scene.homography, oracle_detections(scene), seats)
    assert keeping.unmoved.last_recalled == 0  # nothing seen before
    assert content(first) == content(scene.truth)
    got = keeping.assemble(other, scene.homography, oracle_detections(scene), seats)
    cards = len(keeping.last_cards)
    assert keeping.unmoved.last_recalled >= 0.7 * cards  # all but those an arm may cover
    assert content(got) == want


def test_a_card_swapped_at_its_place_is_scored_afresh(layout: TableLayout) -> None:
    scene = _scene(layout)
    swapped_layout, old, new = _swapped(layout)
    swapped = _scene(swapped_layout)
    seats = _seats(layout)
    assembler = Assembler()
    assembler.assemble(scene.image, scene.homography, oracle_detections(scene), seats)
    got = assembler.assemble(swapped.image, swapped.homography, oracle_detections(swapped), seats)
    assert assembler.unmoved is not None
    assert assembler.unmoved.last_recalled == len(assembler.last_cards) - 1  # every card but one
    ids = [card for _, card in assembler.last_cards]
    assert new in ids and old not in ids
    assert content(got) == content(swapped.truth)


def test_a_card_of_the_same_drawing_swapped_is_not_the_same(layout: TableLayout) -> None:
    """Thumbnails: the same place in two frames looks the same; another card there does not,
    even one whose face differs from it only in its effect text (the lookalike deck's case)."""
    scene = _scene(layout)
    o = next(o for o in scene.objects if o.cls == "card")
    c = ((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2)
    place = (c, 0, None, True)
    a = thumbnail(scene.image, scene.homography, place)
    assert looks_the_same(a, a + np.random.default_rng(0).normal(0, 3, a.shape).astype(np.float32))
    faces = drawn_faces()
    assert o.card is not None
    twin = faces[o.card].copy()
    twin[200:240, 60:200] = 255 - twin[200:240, 60:200]  # the same drawing, other effect text
    lookalike = render_table(
        layout, SEED, RenderSettings(hand_prob=0.0), faces=(*faces[: o.card], twin, *faces[o.card + 1 :])
    )
    assert not looks_the_same(a, thumbnail(lookalike.image, lookalike.homography, place))


def test_nothing_is_kept_across_an_enrolment_or_other_candidates(layout: TableLayout) -> None:
    scene = _scene(layout)
    seats = _seats(layout)
    assembler = Assembler()
    assert assembler.unmoved is not None
    assembler.assemble(scene.image, scene.homography, oracle_detections(scene), seats)
    memory = layout_memory(layout)
    assembler.know(memory)  # the memory narrows what each place may be: the kept scores serve
    got = assembler.assemble(scene.image, scene.homography, oracle_detections(scene), seats)
    assert assembler.unmoved.last_recalled == len(assembler.last_cards)
    fresh = Assembler()
    fresh.unmoved = None
    fresh.know(memory)
    want = fresh.assemble(scene.image, scene.homography, oracle_detections(scene), seats)
    assert content(got) == content(want) and assembler.last_cards == fresh.last_cards
    assembler.know(None)  # forgotten: more candidates than the kept scores have
    assembler.assemble(scene.image, scene.homography, oracle_detections(scene), seats)
    assert assembler.unmoved.last_recalled < len(assembler.last_cards)
    assembler.assemble(scene.image, scene.homography, oracle_detections(scene), seats)
    assert assembler.unmoved.last_recalled == len(assembler.last_cards)  # the same again: all
    card = next(c for _, c in assembler.last_cards)
    assembler.identifier.enrol(card, drawn_faces()[card])
    assembler.assemble(scene.image, scene.homography, oracle_detections(scene), seats)
    assert assembler.unmoved.last_recalled == 0
    assembler.unmoved.forget()
    assembler.assemble(scene.image, scene.homography, oracle_detections(scene), seats)
    assert assembler.unmoved.last_recalled == 0


def test_an_empty_kept_set_recalls_nothing() -> None:
    unmoved = UnmovedCards()
    frame = np.zeros((720, 1280, 3), np.uint8)
    place = ((100.0, 100.0), 180, np.ones(3, bool), False)
    assert unmoved.recall(frame, np.eye(3), None, [place]) == [None]
