"""Every effect kind (and every reward) on a real card, played through ``apply``.

``test_every_effect_in_the_card_file_is_covered`` ties this file to the card data: a new kind
or reward in the cards without a test here fails.
"""

from __future__ import annotations

from referee.gizmos import Step, default_cards, legal_steps, ranking
from tests.tables import table
from tests.test_rulings import build, illegal, pick, play, use

CARDS = default_cards()
R, B, K, Y = 0, 1, 2, 3

#: (column, effect kind, reward) -> the cards the tests below play.
COVERED: dict[tuple[str, str, str], tuple[int, ...]] = {
    ("file", "on_file", "draw_random"): (0, 96),
    ("file", "on_file", "pick_row"): (20,),
    ("file", "on_file", "vp_tokens"): (98,),
    ("pick", "on_pick", "draw_random"): (24, 56),
    ("build", "on_build", "pick_row"): (32,),
    ("build", "on_build", "vp_tokens"): (36, 100),
    ("build", "on_build", "file_action"): (102,),
    ("build", "on_build", "research_action"): (104,),
    ("build", "on_build", "build_free"): (106,),
    ("build", "on_build_from_archive", "pick_row"): (72,),
    ("build", "on_build_from_archive", "vp_tokens"): (108,),
    ("build", "on_build_level", "pick_row"): (110,),
    ("converter", "convert_to_any", ""): (8, 42, 76),
    ("converter", "convert_double", ""): (44, 78),
    ("upgrade", "upgrade_limits", ""): (52,),
    ("upgrade", "discount", ""): (82, 84, 86),
    ("upgrade", "forbid_action", ""): (88, 90),
    ("upgrade", "end_vp", ""): (92, 94),
}


def test_every_effect_in_the_card_file_is_covered() -> None:
    in_data = {(c.type, c.effect.kind, c.effect.reward) for c in CARDS}
    assert in_data == set(COVERED)
    for combo, ids in COVERED.items():
        assert all((CARDS[i].type, CARDS[i].effect.kind, CARDS[i].effect.reward) == combo for i in ids)


# ---------------------------------------------------------------- File column


def test_on_file_draw_random() -> None:
    s = table(gizmos={0: [96]}, display=[20])
    s = play(s, Step("file", 0, card=20))
    assert s.triggered == {0, 96}
    s = play(s, use(96))
    assert sum(s.players[0].ring) == 3  # three random draws
    s = play(s, use(0))
    assert sum(s.players[0].ring) == 4 and not s.triggered


def test_on_file_pick_row() -> None:
    s = play(table(gizmos={0: [20]}, display=[21], row=(2, 2, 1, 1)), Step("file", 0, card=21), use(20))
    assert s.pending is not None and s.pending.kind == "picks" and s.pending.count == 1
    s = play(s, pick(K))
    assert s.players[0].ring == (0, 0, 1, 0) and s.pending is None and sum(s.row) == 6


def test_on_file_vp_tokens() -> None:
    s = play(table(gizmos={0: [98]}, display=[21]), Step("file", 0, card=21), use(98))
    assert s.players[0].vp_tokens == 1


# ---------------------------------------------------------------- Pick column


def test_on_pick_draw_random_only_for_its_colors() -> None:
    s = play(table(gizmos={0: [24, 56]}, row=(2, 2, 1, 1)), pick(R))
    assert s.triggered == {24, 56}
    s = play(s, use(24), use(56))
    assert sum(s.players[0].ring) == 3
    s = play(table(gizmos={0: [24, 56]}, row=(2, 2, 1, 1)), pick(B))
    assert s.triggered == {56}
    illegal(s, use(24), "NOT_TRIGGERED")


# ---------------------------------------------------------------- Build column


def test_on_build_pick_row() -> None:
    s = play(table(gizmos={0: [32]}, rings={0: (1, 0, 0, 0)}, display=[4]), build(4, (1, 0, 0, 0)), use(32))
    assert s.pending is not None and s.pending.kind == "picks"
    s = play(s, pick(Y))
    assert s.players[0].ring == (0, 0, 0, 1)


def test_on_build_vp_tokens_one_and_two_points() -> None:
    s = table(gizmos={0: [36, 100]}, rings={0: (1, 0, 0, 0)}, display=[4])
    s = play(s, build(4, (1, 0, 0, 0)), use(36), use(100))
    assert s.players[0].vp_tokens == 1 + 2


def test_on_build_file_action() -> None:
    s = table(gizmos={0: [102]}, rings={0: (1, 0, 0, 0)}, display=[4, 21])
    s = play(s, build(4, (1, 0, 0, 0)), use(102))
    assert s.pending is not None and s.pending.kind == "file"
    assert Step("file", 0, card=21) in legal_steps(s)
    s = play(s, Step("file", 0, card=21))
    assert s.players[0].archive == (21,)


def test_on_build_research_action() -> None:
    s = table(gizmos={0: [104]}, rings={0: (1, 0, 0, 0)}, display=[4], deck_order={2: [60, 61, 62]})
    s = play(s, build(4, (1, 0, 0, 0)), use(104))
    assert s.pending is not None and s.pending.kind == "research_offer"
    s = play(s, Step("research", 0, level=2))
    assert s.pending is not None and s.pending.hand == (60, 61, 62)


def test_on_build_build_free() -> None:
    s = table(gizmos={0: [106]}, rings={0: (1, 0, 0, 0)}, display=[4, 5])
    s = play(s, build(4, (1, 0, 0, 0)), use(106))
    assert s.pending is not None and s.pending.kind == "free_build"
    s = play(s, build(5))
    assert 5 in s.players[0].gizmos and s.players[0].ring == (0, 0, 0, 0)


def test_on_build_from_archive_pick_row_up_to_two() -> None:
    s = table(gizmos={0: [72]}, rings={0: (1, 0, 0, 0)}, archives={0: [4]}, row=(2, 2, 1, 1))
    s = play(s, build(4, (1, 0, 0, 0)), use(72))
    assert s.pending is not None and s.pending.count == 2
    both = play(s, pick(R), pick(B))
    assert both.players[0].ring == (1, 1, 0, 0) and both.pending is None
    one = play(s, pick(R), Step("skip", 0))  # "up to": stop after one
    assert one.players[0].ring == (1, 0, 0, 0) and one.pending is None


def test_on_build_from_archive_vp_tokens_not_from_the_display() -> None:
    s = play(table(gizmos={0: [108]}, rings={0: (1, 0, 0, 0)}, archives={0: [4]}), build(4, (1, 0, 0, 0)))
    s = play(s, use(108))
    assert s.players[0].vp_tokens == 2
    s = play(table(gizmos={0: [108]}, rings={0: (1, 0, 0, 0)}, display=[4]), build(4, (1, 0, 0, 0)))
    illegal(s, use(108), "NOT_TRIGGERED")


def test_on_build_level_two_pick_row() -> None:
    s = play(table(gizmos={0: [110]}, rings={0: (2, 0, 0, 0)}, display=[43]), build(43, (2, 0, 0, 0)))
    s = play(s, use(110))
    assert s.pending is not None and s.pending.count == 2
    s = play(table(gizmos={0: [110]}, rings={0: (1, 0, 0, 0)}, display=[4]), build(4, (1, 0, 0, 0)))
    illegal(s, use(110), "NOT_TRIGGERED")  # a Level I Build


# ---------------------------------------------------------------- converters


def _pays(s: object, card: int) -> set[tuple[tuple[int, int, int, int], tuple[int, ...]]]:
    return {
        (x.pay, x.converters)
        for x in legal_steps(s)  # type: ignore[arg-type]
        if x.kind == "build" and x.card == card and x.pay is not None
    }


def test_convert_to_any_levels_one_two_three() -> None:
    # #45: 3 black. #8 turns one red; #42 one or two red; #76 one marble of any color.
    assert _pays(table(gizmos={0: [8]}, rings={0: (1, 0, 2, 0)}, display=[45]), 45) == {((1, 0, 2, 0), (8,))}
    assert _pays(table(gizmos={0: [42]}, rings={0: (2, 0, 1, 0)}, display=[45]), 45) == {
        ((2, 0, 1, 0), (42,))
    }
    assert _pays(table(gizmos={0: [76]}, rings={0: (0, 0, 2, 1)}, display=[45]), 45) == {
        ((0, 0, 2, 1), (76,))
    }
    s = play(table(gizmos={0: [42]}, rings={0: (2, 0, 1, 0)}, display=[45]), build(45, (2, 0, 1, 0), 42))
    assert 45 in s.players[0].gizmos and s.used == {42}


def test_convert_double_one_and_two_colors() -> None:
    assert ((1, 0, 0, 0), (44,)) in _pays(table(gizmos={0: [44]}, rings={0: (1, 0, 0, 0)}, display=[43]), 43)
    # #78 doubles one red and one black: on a multicolor card (7) both count twice.
    s = table(gizmos={0: [78, 80]}, rings={0: (1, 1, 1, 2)}, display=[92])
    assert ((1, 1, 1, 2), (78,)) in _pays(s, 92)
    s = play(s, build(92, (1, 1, 1, 2), 78))
    assert 92 in s.players[0].gizmos


# ---------------------------------------------------------------- upgrades


def test_upgrade_limits_raise_ring_archive_and_research() -> None:
    s = table(gizmos={0: [52]}, rings={0: (2, 2, 1, 1)}, archives={0: [21]}, display=[20])
    assert Step("pick", 0, color=R) in legal_steps(s)  # 6 marbles, limit 7
    assert Step("file", 0, card=20) in legal_steps(s)  # 1 filed, limit 2
    s = play(s, Step("research", 0, level=1))
    assert s.pending is not None and len(s.pending.hand) == 5  # 3 + 2


def test_discounts_archive_research_and_level_two() -> None:
    s = table(gizmos={0: [82]}, rings={0: (0, 0, 1, 0)}, archives={0: [45]})  # 3 black -> 2
    assert _pays(s, 45) == set()
    s = table(gizmos={0: [82]}, rings={0: (0, 0, 2, 0)}, archives={0: [45]})
    assert _pays(s, 45) == {((0, 0, 2, 0), ())}
    s = play(table(gizmos={0: [84]}, deck_order={1: [21, 22, 23]}), Step("research", 0, level=1))
    assert build(21) in legal_steps(s)  # 1 blue -> 0 out of a Research
    s = table(gizmos={0: [86]}, rings={0: (0, 0, 2, 0)}, display=[45])
    assert _pays(s, 45) == {((0, 0, 2, 0), ())}


def test_forbid_action_file_and_research() -> None:
    s = table(gizmos={0: [88]}, display=[20])
    assert not any(x.kind == "file" for x in legal_steps(s))
    illegal(s, Step("file", 0, card=20), "ACTION_FORBIDDEN")
    s = table(gizmos={0: [90]})
    assert not any(x.kind == "research" for x in legal_steps(s))
    illegal(s, Step("research", 0, level=3), "ACTION_FORBIDDEN")


def test_end_vp_per_energy_and_per_token_point() -> None:
    s = table(gizmos={0: [92], 1: [94]}, rings={0: (1, 1, 1, 1)}, vp={0: 3, 1: 5})
    lines = {r.seat: r for r in ranking(s)}
    assert lines[0].end_cards == 4 and lines[0].total == 4 + 3
    assert lines[1].end_cards == 5 and lines[1].total == 5 + 5
