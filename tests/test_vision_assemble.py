"""The stages after the detector, measured on their own with an oracle detector (no model needed).

The oracle hands the assembler the rendered scene's true boxes; what comes out must be the
ground-truth observation exactly: zones, Display slots, the Energy Row, stacked top bands,
the Archive, VP tokens, rotated seats and hands covering zones.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from referee.observation import CardSighting, MarbleSighting, Observation, PlayerSighting, SlotSighting
from vision.detect import Detection
from vision.geometry import CANON_PX_PER_MM
from vision.identify import MEMORY_BONUS, STARTING, CardMemory, assign, built_cards, column_cards, level_cards
from vision.observe import Assembler, Seen, one_per_object
from vision.plausible import plausible
from vision.training.evaluate import (
    Tally,
    average_precision,
    content,
    differences,
    error_causes,
    lagging_memory,
    layout_memory,
    match,
    oracle_detections,
    scene_for_seed,
    table_differences,
)
from vision.training.synth import PlayerLayout, RenderedScene, RenderSettings, TableLayout, render_table


@pytest.fixture(scope="module")
def assembler() -> Assembler:
    return Assembler()


def _assemble(assembler: Assembler, scene) -> Observation:  # type: ignore[no-untyped-def]
    seats = tuple(p.seat for p in scene.layout.players)
    return assembler.assemble(scene.image, scene.homography, oracle_detections(scene), seats)


FOUR_SEATS = TableLayout(
    display=(
        *((1, slot, card) for slot, card in enumerate((10, None, 12, 13))),
        *((2, slot, card) for slot, card in enumerate((40, 41, 42))),
        *((3, slot, card) for slot, card in enumerate((80, 81))),
    ),
    energy_row=("red", "blue", "black", "yellow", "yellow", "blue"),
    players=(
        PlayerLayout(0, ((14, 17), (5,), (0, 20), (), (32, 36, 37)), (60, 61), ("yellow", "red"), 2, 1),
        PlayerLayout(1, ((52,), (7, 44), (1,), (26,), (33, 34)), (62,), ("black", "black", "blue"), 0, 2),
        PlayerLayout(2, ((), (), (2, 21, 22), (27, 28), ()), (), (), 4, 0),
        PlayerLayout(3, ((15,), (), (3,), (), (35,)), (63, 64, 65), ("red",) * 5, 1, 1),
    ),
)


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_four_seats_with_stacks_archives_and_tokens(assembler: Assembler, size: tuple[int, int]) -> None:
    scene = render_table(FOUR_SEATS, 41, RenderSettings(size=size, hand_prob=0))
    obs = _assemble(assembler, scene)
    assert content(obs) == content(scene.truth), differences(obs, scene.truth)
    p1 = obs.player(1)  # a seat across the table: its cards are read upside down
    assert p1 is not None and p1.gizmos is not None and p1.archive is not None
    assert [c.card for c in p1.gizmos] == [52, 7, 44, 1, 26, 33, 34]
    assert [c.card for c in p1.archive] == [62]
    assert p1.vp_tokens is not None and p1.vp_tokens[0] == 10
    assert {(s.level, s.slot): s.card for s in obs.display}[(1, 1)] is None  # seen empty


def test_random_tables_are_read_exactly(assembler: Assembler) -> None:
    exact = Tally()
    for seed in range(8_400_000, 8_400_006):
        scene = scene_for_seed(seed, RenderSettings(hand_prob=0))
        obs = _assemble(assembler, scene)
        exact.add(content(obs) == content(scene.truth))
        assert content(obs) == content(scene.truth), (seed, differences(obs, scene.truth))
    assert exact.n == exact.ok == 6


def test_hands_hide_the_zones_they_cover(assembler: Assembler) -> None:
    checked = 0
    for seed in range(8_500_000, 8_500_012):
        scene = scene_for_seed(seed, RenderSettings(hand_prob=1.0))
        obs = _assemble(assembler, scene)
        if not obs.extra["covered"]:
            continue
        checked += 1
        assert content(obs) == content(scene.truth), (seed, differences(obs, scene.truth))
        for key in obs.extra["covered"]:
            if key == "energy_row":
                assert obs.energy_row is None
            elif key.startswith("display/"):
                level, slot = (int(v) for v in key.split("/")[1:])
                assert all((s.level, s.slot) != (level, slot) for s in obs.display)
            else:
                seat, zone = key.split("/")
                p = obs.player(int(seat))
                assert p is not None
                assert getattr(p, {"vp": "vp_tokens"}.get(zone, zone)) is None
    assert checked >= 5


def test_heldout_scenes_are_deterministic() -> None:
    a, b = scene_for_seed(9_000_003), scene_for_seed(9_000_003)
    assert a.image.shape == (1080, 1920, 3) and np.array_equal(a.image, b.image)
    assert scene_for_seed(9_000_004).image.shape == (720, 1280, 3)


def _scores(best: dict[int, float]) -> np.ndarray:
    s = np.zeros(112, np.float32)
    for k, v in best.items():
        s[k] = v
    return s


def test_assignment_uses_each_card_once() -> None:
    # A blurred band that looks a little more like 9 than 8, while 9 is seen clearly elsewhere.
    clear, blurred = _scores({9: 0.95, 8: 0.6}), _scores({9: 0.74, 8: 0.73})
    every = np.ones(112, bool)
    got = assign([blurred, clear], [every, every])
    assert [m.card for m in got] == [8, 9]


def test_the_optimal_assignment_settles_a_card_two_places_want() -> None:
    """Card 98 was just built: the memory still expects it in the Display (its bonus lifts a
    middling match there above the new card 79), while the column shows 98 clearly. Settling the
    surest first keeps 98 in the Display and leaves the column a wrong card; the assignment with
    the best total puts each card where its picture matches."""
    display, column = _scores({98: 0.85, 79: 0.8}), _scores({98: 0.8, 99: 0.4})
    every = np.ones(112, bool)
    assert [m.card for m in assign([display, column], [every, every], "greedy")] == [98, 99]
    got = assign([display, column], [every, every])
    assert [m.card for m in got] == [79, 98]
    assert got[1].score == pytest.approx(0.8) and got[1].margin == pytest.approx(0.4)  # 98 vs 99
    with pytest.raises(ValueError, match="unknown assignment method"):
        assign([display], [every], "best")


def test_display_rows_and_columns_narrow_the_candidates() -> None:
    looks_like_33 = _scores({33: 0.70, 41: 0.69})  # 33 is level 1, 41 level 2 (a converter)
    assert assign([looks_like_33], [level_cards(2)])[0].card == 41
    assert assign([looks_like_33], [column_cards("converter", 0)])[0].card == 41
    assert not built_cards()[STARTING].any()
    with pytest.raises(ValueError, match="no candidate card for detection 0"):
        assign([looks_like_33], [np.zeros(112, bool)])


def test_a_starting_gizmo_is_the_seats_own() -> None:
    # The four Starting Gizmos are identical on real copies; seat 2's is card 2 whatever matched best.
    looks_like_0 = _scores({0: 0.9, 1: 0.8, 2: 0.7, 3: 0.6})
    got = assign([looks_like_0], [column_cards("file", 2)])[0]
    assert got.card == 2 and got.score == pytest.approx(0.9)


def test_content_ignores_listing_order() -> None:
    def obs(ring: tuple[str, ...], gizmos: tuple[int, ...]) -> Observation:
        marbles = tuple(MarbleSighting(c, 0.5) for c in ring)
        cards = tuple(CardSighting(g, 0.7) for g in gizmos)
        return Observation(time=0.0, players=(PlayerSighting(0, marbles, (), cards),))

    assert content(obs(("red", "blue"), (0, 20))) == content(obs(("blue", "red"), (20, 0)))
    slots = (SlotSighting(1, 0, 5, 0.9), SlotSighting(3, 1, None, 0.9))
    assert content(Observation(0.0, slots)) == content(Observation(0.0, slots[::-1]))
    assert content(obs(("red", "blue"), (0, 20))) != content(obs(("red", "red"), (0, 20)))
    assert differences(obs(("red",), (0,)), obs(("blue",), (0,))) == ["seat 0 ring: got [red], truth [blue]"]


def test_error_causes_name_each_wrong_zone_and_how_it_is_wrong() -> None:
    def obs(ring: tuple[str, ...] | None, gizmos: tuple[int, ...], vp: int = 3) -> Observation:
        marbles = None if ring is None else tuple(MarbleSighting(c, 0.5) for c in ring)
        cards = tuple(CardSighting(g, 0.7) for g in gizmos)
        slots = (SlotSighting(1, 0, 5, 0.9), SlotSighting(1, 1, 6, 0.9))
        return Observation(0.0, slots, players=(PlayerSighting(0, marbles, (), cards, (vp, 0.9)),))

    truth = obs(("red", "blue"), (0, 20))
    assert error_causes(truth, truth) == set()
    assert error_causes(obs(("red",), (0, 20)), truth) == {"ring: missed"}
    assert error_causes(obs(("red", "red"), (0, 21), vp=7), truth) == {
        "ring: colour",
        "gizmos: misidentified",
        "vp_tokens: too many points",
    }
    assert error_causes(obs(None, (0,)), truth) == {"ring: hidden or shown", "gizmos: missed"}
    empty_slot = Observation(
        0.0, (SlotSighting(1, 0, None, 0.9), SlotSighting(1, 1, 7, 0.9)), players=truth.players
    )
    assert error_causes(empty_slot, truth) == {"display: missed", "display: misidentified"}
    assert error_causes(Observation(0.0, truth.display[:1], players=truth.players), truth) == {
        "display: hidden or shown"
    }


def test_average_precision_and_matching() -> None:
    assert average_precision([(0.9, True), (0.8, True)], 2) == pytest.approx(1.0)
    assert average_precision([(0.9, False), (0.8, True)], 1) == pytest.approx(0.5)
    assert average_precision([(0.9, True)], 2) == pytest.approx(0.5)
    assert np.isnan(average_precision([], 0))
    from vision.detect import Detection

    dets = [Detection("card", 0.9, (0, 0, 10, 10)), Detection("card", 0.8, (0, 0, 10, 10))]
    pairs = match(dets, [("card", (1, 0, 10, 10))], same_class=True)
    assert [t for _, t in pairs] == [0, None]  # one truth box is matched once


def _seen(cls: str, box: tuple[float, float, float, float], confidence: float = 0.9) -> Seen:
    return Seen(cls, confidence, ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), box)


def test_one_detection_per_physical_object() -> None:
    marble = _seen("marble_red", (100, 100, 116, 116))
    offset = _seen("marble_red", (104, 103, 120, 119), 0.6)  # the same marble, boxes 5 mm apart
    touching = _seen("marble_blue", (116.5, 100, 132.5, 116), 0.6)  # the next marble in the row
    assert one_per_object([offset, marble, touching]) == [marble, touching]
    # in a heap, the boxes of two touching marbles are drawn towards each other: 10.5 mm apart
    heaped = _seen("marble_blue", (110.5, 100, 126.5, 116), 0.6)
    assert one_per_object([marble, heaped]) == [marble, heaped]
    # a 5 token (24 mm) leaves its two boxes further apart; tokens lie apart, not in heaps
    five = _seen("vp5", (200, 200, 224, 224))
    again_five = _seen("vp5", (210, 200, 234, 224), 0.5)
    assert one_per_object([five, again_five]) == [five]
    band = _seen("card_band", (10, 10, 73, 30))
    again = _seen("card_band", (11, 14, 74, 33), 0.5)  # mostly inside the first
    below = _seen("card", (10, 28, 73, 116), 0.8)  # the next card of the stack overlaps 2 mm
    assert one_per_object([band, again, below]) == [band, below]
    hands = [_seen("hand", (0, 0, 300, 300)), _seen("hand", (10, 10, 310, 310), 0.5)]
    assert one_per_object(hands) == hands


def test_a_token_box_on_a_ring_marble_hides_no_marble(assembler: Assembler) -> None:
    """A VP-token box outside every VP zone is read nowhere: it must not take the place of the
    marble it lies on, even when the detector is surer of it than of the marble."""
    scene = render_table(FOUR_SEATS, 41, RenderSettings(hand_prob=0))
    dets = oracle_detections(scene)
    ring = assembler.zones.seat(1).ring
    k = next(i for i, d in enumerate(dets) if d.cls.startswith("marble_") and _inside(ring, dets[i]))
    dets[k] = replace(dets[k], confidence=0.5)
    token = Detection("vp1", 0.9, dets[k].box)
    seats = tuple(p.seat for p in scene.layout.players)
    obs = assembler.assemble(scene.image, scene.homography, [*dets, token], seats)
    assert content(obs) == content(scene.truth), differences(obs, scene.truth)


def _inside(rect: tuple[float, float, float, float], d: Detection) -> bool:
    x, y = d.center_mm
    return rect[0] <= x <= rect[0] + rect[2] and rect[1] <= y <= rect[1] + rect[3]


def _hand_scene(want_hidden: bool) -> RenderedScene:
    """A held-out scene whose hand's box touches some zone, hiding an object or nothing."""
    for seed in range(9_000_000, 9_000_200):
        scene = scene_for_seed(seed, RenderSettings(hand_prob=1.0))
        if scene.truth != scene.uncovered and bool(scene.hidden) == want_hidden:
            return scene
    raise AssertionError(f"no held-out scene with a hand (hiding something: {want_hidden})")


def test_table_differences_forgive_a_zone_the_hand_box_touches_but_hides_nothing_of() -> None:
    scene = _hand_scene(want_hidden=False)
    assert scene.uncovered is not None
    assert differences(scene.uncovered, scene.truth)  # the strict measure wants it unseen
    assert not table_differences(scene.truth, scene)  # unseen is right
    assert not table_differences(scene.uncovered, scene)  # and so is the true content


def test_table_differences_refuse_a_reading_of_what_the_hand_hides() -> None:
    scene = _hand_scene(want_hidden=True)
    assert scene.uncovered is not None
    assert not table_differences(scene.truth, scene)
    assert table_differences(scene.uncovered, scene)  # nobody can read what is under the hand


def test_the_referees_memory_narrows_identification(assembler: Assembler) -> None:
    """With what the referee knows, the table is read as it is; a card the memory puts in a seat
    is not read in the Display; a card just built from the Display keeps its identity in the
    column it moved to; a card never appears in a seat that does not own it or could not get it."""
    scene = scene_for_seed(9_300_001)
    truth = content(scene.truth)
    memory = layout_memory(scene.layout)
    try:
        assembler.know(memory)
        assert content(_assemble(assembler, scene)) == truth
        slot = next(s for s in truth["display"] if s["card"] is not None)
        first = scene.layout.players[0].seat
        gizmos = {**memory.gizmos, first: {*memory.gizmos[first], slot["card"]}}  # "that card is built"
        display = {k: c for k, c in memory.display.items() if c != slot["card"]}
        assembler.know(CardMemory(gizmos, memory.archive, display, memory.unseen))
        got = {(s["level"], s["slot"]): s["card"] for s in content(_assemble(assembler, scene))["display"]}
        assert got[slot["level"], slot["slot"]] != slot["card"]
        # One move behind: the memory still has a seat's last card in the Display; the frame shows
        # it in the seat's column (and a card from the deck in that slot): both read right.
        lag = lagging_memory(scene.layout, np.random.default_rng(1))
        assert lag != memory
        assembler.know(lag)
        assert content(_assemble(assembler, scene)) == truth
    finally:
        assembler.know(None)


def test_card_memory_candidates() -> None:
    """A Display slot: its known card (with the bonus) or an unseen card of its level; a seat's
    gizmos: its own cards (with the bonus), a Display card or an unseen one; never another seat's;
    its Archive the same but its built gizmos; a memory that leaves no candidate is ignored."""
    memory = CardMemory(
        gizmos={0: {0, 20}, 1: {1, 30}},
        archive={0: {21}},
        display={(1, 0): 10, (1, 1): 11},
        unseen={12, 13, 50},
    )
    allowed, bonus = memory.slot(1, 0, level_cards(1))
    assert set(np.flatnonzero(allowed)) == {10, 11, 12, 13}
    assert bonus[10] == MEMORY_BONUS and np.count_nonzero(bonus) == 1
    allowed, bonus = memory.seat(0, built_cards())
    assert set(np.flatnonzero(allowed)) == {20, 21, 10, 11, 12, 13, 50}
    assert bonus[20] == bonus[0] == MEMORY_BONUS and bonus[21] == bonus[30] == 0 and not allowed[30]
    allowed, bonus = memory.seat(0, built_cards(), archive=True)  # the Archive expects its own cards
    assert bonus[21] == MEMORY_BONUS and np.count_nonzero(bonus) == 1
    assert set(np.flatnonzero(allowed)) == {21, 10, 11, 12, 13, 50}  # never a built gizmo (20)
    column = column_cards("upgrade", 1)
    allowed, _ = CardMemory(gizmos={1: {1}}).seat(1, column)  # no upgrade card can be there: wrong memory
    assert np.array_equal(allowed, column)  # so the table's own candidates stay


def test_a_card_box_of_no_cards_size_is_dropped(assembler: Assembler) -> None:
    """The fine-tune's stray card boxes (a card back's half, a thin strip of a stack) are sizes
    no upright card shows; a true card's or top band's, hand-placed and a few degrees turned, pass."""
    assert plausible("card", (0, 0, 63, 88)) and plausible("card", (0, 0, 70.5, 93.3))
    assert plausible("card_band", (0, 0, 63, 20)) and plausible("card_band", (0, 0, 64.6, 25.4))
    assert not plausible("card", (0, 0, 34, 95)) and not plausible("card", (0, 0, 63, 48))
    assert not plausible("card_band", (0, 0, 43, 21)) and not plausible("card_band", (0, 0, 64, 40))
    assert plausible("marble_red", (0, 0, 3, 3))  # only cards are judged by their size
    scene = render_table(FOUR_SEATS, 41, RenderSettings(hand_prob=0))
    sz = assembler.zones.seat(2)
    x, y = sz.gizmos[0] + sz.gizmos[2] - 20, sz.gizmos[1] + sz.gizmos[3] / 2  # right of seat 2's columns
    stray = Detection("card", 0.9, tuple(v * CANON_PX_PER_MM for v in (x - 17, y - 47, x + 17, y + 48)))  # type: ignore[arg-type]
    obs = assembler.assemble(scene.image, scene.homography, [*oracle_detections(scene), stray], (0, 1, 2, 3))
    assert content(obs) == content(scene.truth), differences(obs, scene.truth)
