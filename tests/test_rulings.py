"""One test (or more) per numbered ruling in RULINGS.md: the legal side and the illegal side."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from referee.gizmos import (
    IllegalStep,
    Pending,
    Player,
    State,
    Step,
    apply,
    check_invariants,
    legal_steps,
    new_game,
    ranking,
    resolve_chance,
    returns,
    state_from_json,
)
from referee.gizmos.state import StateError
from tests.tables import table

R, B, K, Y = 0, 1, 2, 3


def play(state: State, *steps: Step, seed: int = 0) -> State:
    """Apply steps, resolving chance from a seeded source after each."""
    rng = random.Random(seed)
    for s in steps:
        state = apply(state, s, rng)
        check_invariants(state)
    return state


def illegal(state: State, step: Step, code: str) -> IllegalStep:
    with pytest.raises(IllegalStep) as info:
        apply(state, step)
    assert info.value.code == code, info.value
    return info.value


def build(card: int, pay: tuple[int, int, int, int] = (0, 0, 0, 0), *conv: int, player: int = 0) -> Step:
    return Step("build", player, card=card, pay=pay, converters=tuple(sorted(conv)))


def use(g: int, player: int = 0) -> Step:
    return Step("use", player, gizmo=g)


def pick(c: int, player: int = 0) -> Step:
    return Step("pick", player, color=c)


def legal_set(state: State) -> set[Step]:
    return set(legal_steps(state))


# ---------------------------------------------------------------- components and setup (1-6)


def test_r1_52_marbles_13_per_color() -> None:
    s = new_game(3)
    assert s.dispenser == (13, 13, 13, 13)
    s = resolve_chance(s, random.Random(5))
    totals = [s.dispenser[c] + s.row[c] + sum(p.ring[c] for p in s.players) for c in range(4)]
    assert totals == [13, 13, 13, 13]


def test_r1_sixty_marbles_is_an_impossible_state() -> None:
    s = resolve_chance(new_game(2), random.Random(1)).to_json()
    s["dispenser"]["red"] += 1
    with pytest.raises(StateError, match="14 red marbles"):
        state_from_json(s)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_r2_players_start_with_their_starting_gizmo(n: int) -> None:
    s = resolve_chance(new_game(n), random.Random(n))
    assert [p.gizmos for p in s.players] == [(i,) for i in range(n)]
    assert s.players[0].columns() == {"file": [0]}


@pytest.mark.parametrize("n", [1, 5])
def test_r2_player_count_outside_2_to_4_is_refused(n: int) -> None:
    with pytest.raises(StateError, match="2-4 players"):
        new_game(n)


def test_r3_level_three_trimmed_to_16_and_display_4_3_2() -> None:
    s = resolve_chance(new_game(2), random.Random(3))
    assert [len(r) for r in s.display] == [4, 3, 2]
    assert all(c is not None for r in s.display for c in r)
    assert [s.deck_size(lvl) for lvl in (1, 2, 3)] == [32, 33, 14]


def test_r3_removed_level_three_cards_go_to_the_box_when_the_deck_runs_out() -> None:
    s = resolve_chance(new_game(2), random.Random(3))
    decks = list(s.decks)
    _, n = decks[2][0]
    # Draw the whole Level III deck through Research-sized chance events.
    t = s
    for _ in range(n):
        from referee.gizmos.rules import _resolve, _Table  # white-box: drive the deck alone

        tab = _Table(t)
        tab.chance = [("research", 3)]
        tab.pending = Pending("research", level=3)
        _resolve(tab, Step("reveal", card=tab.decks[2][0][0][0]))
        t = tab.freeze()
    assert t.deck_size(3) == 0
    assert len([c for c in t.box if c >= 76]) == 20


def test_r3_a_card_off_the_deck_must_be_one_still_in_it() -> None:
    s = new_game(2)
    s = apply(s, Step("reveal", card=4))  # Level I slot 1: #4
    illegal(s, Step("reveal", card=4), "IMPOSSIBLE_OUTCOME")  # already face up
    illegal(s, Step("reveal", card=80), "IMPOSSIBLE_OUTCOME")  # a Level III card for a Level I slot


def test_r3_seventeen_level_three_cards_is_impossible() -> None:
    s = resolve_chance(new_game(2), random.Random(3))
    (cands, n), *rest = s.decks[2]
    with pytest.raises(StateError, match="17 Level III cards are in play"):
        check_invariants(replace(s, decks=(s.decks[0], s.decks[1], ((cands, n + 1), *rest))))


def test_r4_six_marbles_in_the_row() -> None:
    s = resolve_chance(new_game(4), random.Random(9))
    assert sum(s.row) == 6


def test_r4_a_seventh_marble_in_the_row_is_impossible() -> None:
    s = resolve_chance(new_game(2), random.Random(9))
    c = next(i for i in range(4) if s.dispenser[i])
    row = tuple(n + (i == c) for i, n in enumerate(s.row))
    disp = tuple(n - (i == c) for i, n in enumerate(s.dispenser))
    with pytest.raises(StateError, match="holds 7 marbles"):
        check_invariants(replace(s, row=row, dispenser=disp))


def test_r5_starting_limits() -> None:
    p = resolve_chance(new_game(2), random.Random(0)).players[0].profile
    assert (p.energy_limit, p.file_limit, p.research) == (5, 1, 3)


def test_r5_upgrades_raise_limits() -> None:
    p = table(gizmos={0: [12, 13, 52]}).players[0].profile
    assert (p.energy_limit, p.file_limit, p.research) == (5 + 1 + 1 + 2, 1 + 1 + 1, 3 + 1 + 2)


def test_r5_research_draws_the_research_amount_and_no_more() -> None:
    s = play(table(deck_order={1: [20, 21, 22, 23]}), Step("research", 0, level=1))
    assert s.pending is not None and len(s.pending.hand) == 3 and 23 not in s.pending.hand


def test_r5_a_ring_over_its_limit_is_not_legal_play() -> None:
    s = table()
    over = replace(s, players=(Player((2, 2, 1, 1), (), (0,)), s.players[1]), dispenser=(11, 11, 12, 12))
    over = replace(over, row=(0, 0, 0, 0))
    with pytest.raises(StateError, match=r"ring holds 6 \(limit 5\)"):
        check_invariants(over)


def test_r6_token_points_are_a_number_without_a_physical_limit() -> None:
    s = table(gizmos={0: [36]}, rings={0: (1, 0, 0, 0)}, vp={0: 200}, display=[4])
    s = play(s, build(4, (1, 0, 0, 0)), use(36))
    assert s.players[0].vp_tokens == 201


def test_r6_negative_token_points_are_refused() -> None:
    raw = table().to_json()
    raw["players"][0]["vp_tokens"] = -1
    with pytest.raises(StateError, match="vp_tokens"):
        state_from_json(raw)


# ---------------------------------------------------------------- turn (7-12)


def test_r7_one_main_action_per_turn() -> None:
    s = table(rings={0: (0, 0, 0, 0)})
    s = play(s, pick(R))
    assert s.main_done
    err = illegal(s, pick(B), "SECOND_MAIN_ACTION")
    assert err.player == 0 and 7 in err.rule.rulings
    assert Step("end_turn", 0) in legal_set(s)


def test_r7_turn_needs_a_main_action() -> None:
    s = table()
    illegal(s, Step("end_turn", 0), "NO_MAIN_ACTION")
    assert Step("end_turn", 0) not in legal_set(s)


def test_r7_only_the_current_player_acts() -> None:
    s = table(current=1)
    illegal(s, pick(R, player=0), "NOT_YOUR_TURN")
    s2 = play(s, pick(R, player=1), Step("end_turn", 1))
    assert s2.current == 0 and s2.turn == 1


def test_r8_file_moves_a_display_card_to_the_archive_and_refills() -> None:
    s = table(display=[20])
    s = apply(s, Step("file", 0, card=20))
    assert s.players[0].archive == (20,)
    assert s.display[0][0] is None and s.chance[0] == ("display", 1, 0)
    s = apply(s, Step("reveal", card=s.decks[0][0][0][5]))
    assert s.display[0][0] is not None and not s.chance


def test_r8_file_with_a_full_archive() -> None:
    s = table(archives={0: [21]}, display=[20])
    illegal(s, Step("file", 0, card=20), "ARCHIVE_FULL")
    assert not any(x.kind == "file" for x in legal_steps(s))


def test_r8_file_a_card_not_in_the_display() -> None:
    s = table(display=[20])
    illegal(s, Step("file", 0, card=25), "CARD_NOT_AVAILABLE")


def test_r9_pick_takes_a_row_marble_and_the_row_refills() -> None:
    s = table(row=(2, 2, 1, 1))
    s = apply(s, pick(K))
    assert s.players[0].ring == (0, 0, 1, 0) and s.row == (2, 2, 0, 1) and s.chance == (("row",),)
    s = apply(s, Step("dispense", color=Y))
    assert s.row == (2, 2, 0, 2)


def test_r9_pick_with_a_full_ring() -> None:
    s = table(rings={0: (2, 1, 1, 1)})
    illegal(s, pick(R), "RING_FULL")
    assert not any(x.kind == "pick" for x in legal_steps(s))


def test_r9_pick_a_color_absent_from_the_row() -> None:
    s = table(row=(3, 3, 0, 0))
    illegal(s, pick(K), "COLOR_NOT_IN_ROW")


def test_r10_build_from_display_pays_into_dispenser_and_refills() -> None:
    s = table(rings={0: (1, 0, 0, 0)}, display=[4])
    before = s.dispenser[R]
    s = apply(s, build(4, (1, 0, 0, 0)))
    assert s.players[0].gizmos == (0, 4) and s.players[0].ring == (0, 0, 0, 0)
    assert s.dispenser[R] == before + 1 and s.chance == (("display", 1, 0),)


def test_r10_build_from_archive() -> None:
    s = table(rings={0: (0, 1, 0, 0)}, archives={0: [8]})
    s = apply(s, build(8, (0, 1, 0, 0)))
    assert s.players[0].archive == () and 8 in s.players[0].gizmos and not s.chance


def test_r10_build_without_the_energy() -> None:
    s = table(rings={0: (0, 1, 0, 0)}, display=[4])
    illegal(s, build(4, (1, 0, 0, 0)), "NOT_AFFORDABLE")
    illegal(s, build(4, (0, 1, 0, 0)), "NOT_AFFORDABLE")  # no way to pay red from a blue


def test_r10_underpaying_a_build() -> None:
    s = table(rings={0: (0, 0, 3, 0)}, display=[45])  # #45 costs 3 black
    illegal(s, build(45, (0, 0, 2, 0)), "UNDERPAID")
    s = play(s, build(45, (0, 0, 3, 0)))
    assert 45 in s.players[0].gizmos


def test_r10_multicolor_costs_seven_in_any_mix() -> None:
    s = table(gizmos={0: [80]}, rings={0: (2, 2, 2, 1)}, display=[92])
    options = [x for x in legal_steps(s) if x.kind == "build" and x.card == 92]
    assert [x.pay for x in options] == [(2, 2, 2, 1)]
    s = play(s, build(92, (2, 2, 2, 1)))
    assert 92 in s.players[0].gizmos
    s2 = table(gizmos={0: [80]}, rings={0: (2, 2, 2, 0)}, display=[92])
    illegal(s2, build(92, (2, 2, 2, 0)), "UNDERPAID")


def test_r11_research_draws_the_research_amount_from_one_deck() -> None:
    s = table(deck_order={1: [20, 21, 22, 23]})
    s = play(s, Step("research", 0, level=1))
    assert s.pending is not None and s.pending.hand == (20, 21, 22) and s.deck_size(1) == 36 - 4 - 3


def _level_one_elsewhere(keep: tuple[int, ...]) -> dict[int, list[int]]:
    """Level I cards to build so that only ``keep`` stay in the Level I deck (display: 4..7)."""
    rest = [c for c in range(8, 40) if c not in keep]
    return {0: rest[:15], 1: rest[15:30]}


def test_r11_research_at_a_deck_with_fewer_cards_than_the_amount() -> None:
    s = table(gizmos=_level_one_elsewhere((20, 21)), display=[4, 5, 6, 7], deck_order={1: [20, 21]})
    assert s.deck_size(1) == 2
    s = play(s, Step("research", 0, level=1))
    assert s.pending is not None and sorted(s.pending.hand) == [20, 21] and s.deck_size(1) == 0


def test_r11_research_file_build_or_neither_and_order_the_rest() -> None:
    s = table(deck_order={1: [20, 21, 22]}, rings={0: (0, 1, 0, 0)})
    s = play(s, Step("research", 0, level=1))
    ls = legal_set(s)
    assert Step("file", 0, card=21) in ls and build(21, (0, 1, 0, 0)) in ls and Step("skip", 0) in ls
    s = play(s, Step("file", 0, card=21))
    assert s.players[0].archive == (21,) and s.pending is not None and s.pending.chosen
    assert legal_set(s) == {Step("bottom", 0, card=20), Step("bottom", 0, card=22)}
    s = play(s, Step("bottom", 0, card=22))
    assert s.pending is None
    assert s.decks[0][-2:] == (((22,), 1), ((20,), 1))


def test_r11_research_neither_returns_all_in_chosen_order() -> None:
    s = play(table(deck_order={1: [20, 21, 22]}), Step("research", 0, level=1), Step("skip", 0))
    s = play(s, Step("bottom", 0, card=21), Step("bottom", 0, card=20))
    assert [seg[0] for seg in s.decks[0][-3:]] == [(21,), (20,), (22,)]


def test_r11_research_cannot_take_a_display_card() -> None:
    s = table(deck_order={1: [20, 21, 22]}, display=[23], rings={0: (0, 0, 0, 1)})
    s = play(s, Step("research", 0, level=1))
    illegal(s, Step("file", 0, card=23), "CARD_NOT_AVAILABLE")
    illegal(s, build(23, (0, 0, 0, 1)), "CARD_NOT_AVAILABLE")


def test_r11_research_file_needs_archive_room() -> None:
    s = table(deck_order={1: [20, 21, 22]}, archives={0: [23]})
    s = play(s, Step("research", 0, level=1))
    illegal(s, Step("file", 0, card=20), "ARCHIVE_FULL")


def test_r11_research_with_an_empty_deck() -> None:
    lvl1 = _level_one_elsewhere((20, 21))
    s = table(gizmos=lvl1, archives={0: [20], 1: [21]}, display=[4, 5, 6, 7])
    assert s.deck_size(1) == 0
    illegal(s, Step("research", 0, level=1), "DECK_EMPTY")
    assert Step("research", 0, level=2) in legal_set(s)
    assert Step("research", 0, level=1) not in legal_set(s)


def test_r11_file_and_build_inside_research_trigger_gizmos() -> None:
    s = table(gizmos={0: [98, 36]}, deck_order={1: [20, 4, 22]}, rings={0: (1, 0, 0, 0)})
    s = play(s, Step("research", 0, level=1), Step("file", 0, card=20))
    assert {0, 98} <= s.triggered
    s2 = table(gizmos={0: [98, 36]}, deck_order={1: [20, 4, 22]}, rings={0: (1, 0, 0, 0)})
    s2 = play(s2, Step("research", 0, level=1), build(4, (1, 0, 0, 0)))
    assert 36 in s2.triggered


def test_r12_a_draw_is_not_a_pick() -> None:
    # Filing triggers the Starting Gizmo (draw 1); the drawn red marble must not trigger #24.
    s = table(gizmos={0: [24]}, display=[20])
    s = apply(s, Step("file", 0, card=20), random.Random(0))
    s = apply(s, use(0))
    s = apply(s, Step("dispense", color=R))
    assert s.players[0].ring == (1, 0, 0, 0) and 24 not in s.triggered
    illegal(s, use(24), "NOT_TRIGGERED")


def test_r12_extras_are_lost_and_nothing_swapped() -> None:
    s = table(gizmos={0: [96, 80]}, rings={0: (3, 2, 2, 0)}, display=[20])  # limit 9, holds 7
    s = play(s, Step("file", 0, card=20), use(96))  # draw 3, only 2 fit
    assert sum(s.players[0].ring) == 9
    assert not any(x.kind == "use" and x.gizmo == 0 for x in legal_steps(s))
    illegal(s, use(0), "RING_FULL")


# ---------------------------------------------------------------- triggers (13-18)


def test_r13_triggered_gizmos_are_optional_and_in_any_order() -> None:
    s = table(gizmos={0: [98, 20]}, display=[21])
    s = play(s, Step("file", 0, card=21))
    assert {Step("use", 0, gizmo=g) for g in (0, 20, 98)} <= legal_set(s)
    a = play(s, use(98), use(20), pick(R))
    b = play(s, use(20), pick(R), use(98))
    assert a.players[0] == b.players[0]
    c = play(s, Step("end_turn", 0))  # none used: fine
    assert c.current == 1


def test_r13_a_gizmo_of_another_column_is_not_triggered() -> None:
    s = play(table(gizmos={0: [98]}), pick(R))
    illegal(s, use(98), "NOT_TRIGGERED")


def test_r14_each_gizmo_once_per_turn() -> None:
    s = play(table(gizmos={0: [98]}, display=[21]), Step("file", 0, card=21), use(98))
    illegal(s, use(98), "GIZMO_ALREADY_USED")


def test_r14_two_color_trigger_fires_once() -> None:
    # #56: pick red or blue -> draw 1. A Pick (red), then #20's granted pick (blue).
    s = table(gizmos={0: [56, 32]}, rings={0: (1, 0, 0, 0)}, display=[4], row=(2, 2, 1, 1))
    s = play(s, build(4, (1, 0, 0, 0)), use(32), pick(R))
    assert 56 in s.triggered
    s = play(s, use(56))
    s2 = table(gizmos={0: [56, 32, 60]}, rings={0: (1, 0, 0, 0)}, display=[4], row=(2, 2, 1, 1))
    s2 = play(s2, build(4, (1, 0, 0, 0)), use(32), pick(R), use(56), use(60), pick(B))
    assert 56 not in s2.triggered and 56 in s2.used


def test_r15_not_triggered_by_the_build_that_built_it() -> None:
    # #72 triggers on any Build from the Archive; building #72 itself from the Archive does not.
    s = table(gizmos={0: [13]}, rings={0: (3, 0, 0, 0)}, archives={0: [72, 4]})
    s = play(s, build(72, (3, 0, 0, 0)))
    assert 72 not in s.triggered
    illegal(s, use(72), "NOT_TRIGGERED")


def test_r15_but_a_later_action_that_turn_may_trigger_it() -> None:
    # Build #102 (yellow, build red/black -> File). Its own build does not trigger it; then
    # #106's free build of a red Level I gizmo does.
    s = table(gizmos={0: [106]}, rings={0: (0, 0, 0, 5)}, display=[102, 4])  # #106: red/yellow
    s = play(s, build(102, (0, 0, 0, 5)))
    assert 102 not in s.triggered and 106 in s.triggered
    s = play(s, use(106), build(4))
    assert 102 in s.triggered  # #4 is red: the later Build triggers #102
    s = play(s, use(102))
    assert s.pending is not None and s.pending.kind == "file"


def test_r16_granted_actions_chain() -> None:
    # File -> #20 grants a pick -> the pick (red) triggers #24 (draw) -> chain.
    s = table(gizmos={0: [20, 24]}, display=[21], row=(2, 2, 1, 1))
    s = play(s, Step("file", 0, card=21), use(20), pick(R))
    assert 24 in s.triggered
    s = play(s, use(24))
    assert sum(s.players[0].ring) == 2


def test_r16_granted_file_and_research_are_actions() -> None:
    s = table(
        gizmos={0: [102, 98, 104]}, rings={0: (1, 0, 0, 0)}, display=[4, 21], deck_order={1: [22, 23, 5]}
    )
    s = play(s, build(4, (1, 0, 0, 0)), use(102), Step("file", 0, card=21))
    assert 98 in s.triggered
    s = play(s, use(104), Step("research", 0, level=1))
    assert s.pending is not None and s.pending.kind == "research"


def test_r16_draw_and_vp_tokens_are_not_actions() -> None:
    s = table(gizmos={0: [98, 20]}, display=[21])
    s = play(s, Step("file", 0, card=21), use(98), use(0))
    assert s.triggered == frozenset({20})


def test_r16_a_granted_action_is_done_or_skipped_first() -> None:
    s = table(gizmos={0: [20, 98]}, display=[21])
    s = play(s, Step("file", 0, card=21), use(20))
    illegal(s, use(98), "CHOICE_PENDING")
    illegal(s, Step("end_turn", 0), "CHOICE_PENDING")
    s = play(s, Step("skip", 0), use(98))
    assert s.players[0].vp_tokens == 1


def test_r17_free_build_level_one_from_display_or_archive() -> None:
    s = table(gizmos={0: [106]}, rings={0: (1, 0, 0, 0)}, display=[4, 26], archives={0: [10]})
    s = play(s, build(4, (1, 0, 0, 0)), use(106))
    assert build(26) in legal_set(s) and build(10) in legal_set(s)
    illegal(s, build(26, (0, 0, 0, 0), 4), "BAD_PAYMENT")
    after = play(s, build(10))
    assert 10 in after.players[0].gizmos and after.players[0].archive == ()


def test_r17_free_build_takes_level_one_only() -> None:
    s = table(gizmos={0: [106]}, rings={0: (1, 0, 0, 0)}, display=[4, 44])
    s = play(s, build(4, (1, 0, 0, 0)), use(106))
    illegal(s, build(44), "NOT_LEVEL_ONE")


def test_r17_free_build_is_a_build_that_triggers() -> None:
    s = table(gizmos={0: [106, 36]}, rings={0: (0, 0, 0, 1)}, display=[5, 4])
    s = play(s, build(5, (0, 0, 0, 1)), use(106), build(4))
    assert 36 in s.triggered


def test_r18_multicolor_counts_as_every_color() -> None:
    s = table(gizmos={0: [36, 37, 80]}, rings={0: (2, 2, 2, 1)}, display=[92])
    s = play(s, build(92, (2, 2, 2, 1)))
    assert {36, 37} <= s.triggered


def test_r18_another_color_does_not_trigger() -> None:
    s = play(table(gizmos={0: [37]}, rings={0: (1, 0, 0, 0)}, display=[4]), build(4, (1, 0, 0, 0)))
    illegal(s, use(37), "NOT_TRIGGERED")  # #37: Build a blue gizmo; #4 is red


# ---------------------------------------------------------------- paying (19-23)


def test_r19_converter_once_per_turn() -> None:
    # Pay #15 (blue) with red via #8; #105 (build blue/black -> Research) grants a second Build.
    s = table(gizmos={0: [8, 105]}, rings={0: (2, 0, 0, 0)}, display=[15], deck_order={1: [30, 14, 21, 22]})
    s = play(s, build(15, (1, 0, 0, 0), 8), use(105), Step("research", 0, level=1))
    illegal(s, build(14, (1, 0, 0, 0), 8), "GIZMO_ALREADY_USED")


def test_r19_converters_are_not_triggered_gizmos() -> None:
    s = play(table(gizmos={0: [8]}), pick(R))
    err = illegal(s, use(8), "NOT_TRIGGERED")
    assert "paying" in err.message


def test_r20_level_one_converts_one_marble() -> None:
    s = table(gizmos={0: [8]}, rings={0: (2, 0, 0, 0)}, display=[40])  # #40 costs 2 blue
    illegal(s, build(40, (2, 0, 0, 0), 8), "NOT_AFFORDABLE")
    illegal(s, build(40, (1, 0, 0, 0), 8), "UNDERPAID")
    s2 = table(gizmos={0: [8]}, rings={0: (1, 1, 0, 0)}, display=[40])
    assert build(40, (1, 1, 0, 0), 8) in legal_set(s2)


def test_r20_level_two_converts_one_or_two() -> None:
    s = table(gizmos={0: [42]}, rings={0: (2, 1, 0, 0)}, display=[40])  # #42: red -> any, two uses
    ls = {x for x in legal_steps(s) if x.kind == "build" and x.card == 40}
    assert ls == {build(40, (2, 0, 0, 0), 42), build(40, (1, 1, 0, 0), 42)}


def test_r20_level_three_converts_any_color() -> None:
    s = table(gizmos={0: [76]}, rings={0: (0, 1, 0, 1)}, display=[40])
    ls = {x.pay for x in legal_steps(s) if x.kind == "build" and x.card == 40}
    assert ls == {(0, 1, 0, 1)}
    illegal(s, build(40, (0, 0, 0, 2), 76), "NOT_AFFORDABLE")


def test_r21_converter_chain_yellow_to_red_then_double() -> None:
    # #10 yellow -> any, #44 doubles red: one yellow pays 2 red for #43 (red, cost 2).
    s = table(gizmos={0: [10, 44]}, rings={0: (0, 0, 0, 1)}, display=[43])
    step = build(43, (0, 0, 0, 1), 10, 44)
    assert step in legal_set(s)
    s = play(s, step)
    assert 43 in s.players[0].gizmos and s.used == {10, 44}


def test_r21_a_doubler_doubles_one_marble() -> None:
    s = table(gizmos={0: [44]}, rings={0: (2, 0, 0, 0)}, display=[88])  # #88: red, cost 4
    illegal(s, build(88, (2, 0, 0, 0), 44), "UNDERPAID")
    s = table(gizmos={0: [44]}, rings={0: (3, 0, 0, 0)}, display=[88])
    assert build(88, (3, 0, 0, 0), 44) in legal_set(s)


def test_r21_every_distinct_payment_once() -> None:
    s = table(gizmos={0: [8, 44]}, rings={0: (3, 1, 0, 0)}, display=[40])  # #40: 2 blue
    pays = [(x.pay, x.converters) for x in legal_steps(s) if x.kind == "build" and x.card == 40]
    assert len(pays) == len(set(pays))
    assert set(pays) == {((1, 1, 0, 0), (8,))}  # the doubler doubles red only
    s = table(gizmos={0: [46, 8]}, rings={0: (1, 2, 0, 0)}, display=[40])
    pays = {(x.pay, x.converters) for x in legal_steps(s) if x.kind == "build" and x.card == 40}
    assert pays == {((0, 2, 0, 0), ()), ((0, 1, 0, 0), (46,)), ((1, 1, 0, 0), (8,)), ((1, 0, 0, 0), (8, 46))}


def test_r22_discounts_stack_and_never_below_zero() -> None:
    s = table(gizmos={0: [82, 86]}, rings={0: (0, 0, 0, 0)}, archives={0: [40]})  # 2 blue, -1 -1
    s2 = play(s, build(40))
    assert 40 in s2.players[0].gizmos
    s = table(gizmos={0: [82, 86]}, rings={0: (0, 1, 0, 0)}, archives={0: [40]})
    illegal(s, build(40, (0, 1, 0, 0)), "BAD_PAYMENT")  # overpaying is not a payment


def test_r22_research_discount() -> None:
    s = table(gizmos={0: [84]}, rings={0: (0, 0, 0, 0)}, deck_order={1: [20, 21, 22]})
    s = play(s, Step("research", 0, level=1), build(20))
    assert 20 in s.players[0].gizmos


def test_r23_forbidden_file() -> None:
    s = table(gizmos={0: [88]}, display=[20])
    illegal(s, Step("file", 0, card=20), "ACTION_FORBIDDEN")


def test_r23_forbidden_file_even_when_granted() -> None:
    s = table(gizmos={0: [88, 102]}, rings={0: (1, 0, 0, 0)}, display=[4])
    s = play(s, build(4, (1, 0, 0, 0)))
    err = illegal(s, use(102), "ACTION_FORBIDDEN")
    assert "23" in err.message


def test_r23_forbidden_research() -> None:
    s = table(gizmos={0: [90]})
    illegal(s, Step("research", 0, level=1), "ACTION_FORBIDDEN")
    assert not any(x.kind == "research" for x in legal_steps(s))


def test_r23_forbidden_file_inside_research() -> None:
    s = table(gizmos={0: [88]}, deck_order={1: [20, 21, 22]})
    s = play(s, Step("research", 0, level=1))
    illegal(s, Step("file", 0, card=20), "ACTION_FORBIDDEN")


# ---------------------------------------------------------------- end and scoring (24-26)


def _fifteen_built() -> list[int]:
    return [12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25]  # 14 + Starting Gizmo = 15


@pytest.mark.parametrize("n,trigger_seat", [(2, 0), (2, 1), (3, 1), (4, 0), (4, 3)])
def test_r24_sixteenth_gizmo_ends_after_the_round(n: int, trigger_seat: int) -> None:
    s = table(
        players=n,
        gizmos={trigger_seat: _fifteen_built()},
        rings={trigger_seat: (1, 0, 0, 0)},
        display=[4],
        current=trigger_seat,
        turn=trigger_seat,
    )
    s = play(s, build(4, (1, 0, 0, 0), player=trigger_seat))
    assert s.end_triggered and not s.game_over
    seat = trigger_seat
    s = play(s, Step("end_turn", seat))
    while not s.game_over:
        seat = s.current
        s = play(s, Step("research", seat, level=2), Step("skip", seat))
        while s.pending is not None:
            s = play(s, Step("bottom", seat, card=s.pending.hand[0]))
        s = play(s, Step("end_turn", seat))
    assert seat == n - 1 and s.turn == n  # everybody had the same number of turns
    illegal(s, Step("end_turn", 0), "GAME_OVER")
    assert legal_steps(s) == []


def test_r24_fourth_level_three_gizmo_ends() -> None:
    s = table(gizmos={0: [80, 81, 96]}, rings={0: (0, 0, 0, 4)}, display=[97])
    s = play(s, build(97, (0, 0, 0, 4)))
    assert s.end_triggered


def test_r24_fifteen_gizmos_do_not_end() -> None:
    s = table(gizmos={0: _fifteen_built()[:-1]}, rings={0: (1, 0, 0, 0)}, display=[4])
    assert not play(s, build(4, (1, 0, 0, 0))).end_triggered


def test_r25_score_components() -> None:
    s = table(gizmos={0: [92, 94, 44]}, rings={0: (1, 1, 1, 0)}, vp={0: 6})
    line = next(r for r in ranking(s) if r.seat == 0)
    assert (line.printed_vp, line.token_points, line.end_cards) == (0 + 0 + 3, 6, 3 + 6)
    assert line.total == 3 + 6 + 9


def test_r25_archived_cards_and_an_unfinished_game_score_nothing_extra() -> None:
    s = table(gizmos={0: [40]}, archives={0: [41]})
    line = next(r for r in ranking(s) if r.seat == 0)
    assert line.printed_vp == 2 and line.total == 2  # #41 in the Archive is not built
    assert returns(s) == [0.0, 0.0]  # returns are only paid out when the game is over


def test_r26_ties_broken_by_gizmos() -> None:
    s = table(gizmos={0: [4, 5], 1: [40]}, vp={})
    r = ranking(s)
    assert [x.seat for x in r] == [0, 1] and r[0].decided_by == "gizmos"


def test_r26_then_by_energy() -> None:
    s = table(gizmos={0: [4], 1: [5]}, rings={0: (1, 0, 0, 0), 1: (1, 1, 0, 0)})
    r = ranking(s)
    assert [x.seat for x in r] == [1, 0] and r[0].decided_by == "energy"


def test_r26_then_latest_in_turn_order() -> None:
    s = table(players=3, gizmos={0: [4], 1: [5], 2: [6]})
    r = ranking(s)
    assert [x.seat for x in r] == [2, 1, 0] and r[0].decided_by == "seat"


def test_r26_every_tie_break_in_one_ranking() -> None:
    # All on 2 VP. P4: 3 gizmos; P2, P3, P1: 2 gizmos; P2 has 1 energy; P3 is later than P1.
    s = table(players=4, gizmos={3: [4, 5], 1: [40], 2: [41], 0: [42]}, rings={1: (1, 0, 0, 0)})
    r = ranking(s)
    assert [x.seat for x in r] == [3, 1, 2, 0]
    assert [x.decided_by for x in r] == ["gizmos", "energy", "seat", ""]
    assert {x.total for x in r} == {2}


def test_r26_total_first() -> None:
    s = table(gizmos={0: [4]}, vp={1: 2})
    r = ranking(s)
    assert r[0].seat == 1 and r[0].decided_by == "total"


@pytest.mark.parametrize(
    "gizmo,kind", [(90, "research_offer"), (90, "research"), (88, "file")]
)  # 90: no more Research, 88: no more File
def test_r23_a_state_owing_a_forbidden_action_is_refused(gizmo: int, kind: str) -> None:
    # Legal play never owes a File/Research to a player whose upgrade forbids it: the gizmo that
    # would grant it cannot be used (ruling 23). Such a state would make legal_steps offer a step
    # that apply refuses, so state_from_json rejects it.
    pending = {"kind": kind, "count": 0, "level": 1 if kind == "research" else 0, "hand": [], "chosen": False}
    raw = table(gizmos={0: [gizmo]}).to_json()
    raw["pending"] = pending
    with pytest.raises(StateError, match=r"seat 0 is owed a (File|Research) .* forbids .*ruling 23"):
        state_from_json(raw)
    if kind != "research":  # the same choice without the forbidding upgrade is a reachable state
        raw = table().to_json()
        raw["pending"] = pending
        assert state_from_json(raw).pending is not None


def test_r21_converter_feeds_a_doubler_on_a_multicolor_card() -> None:
    # Ruling 21: yellow->red (#10), then double red (#44), pays 2 of the 7 for #92 (multicolor);
    # #12/#52 only make room for the marbles (+1/+2 storage).
    s = table(gizmos={0: [10, 44, 12]}, rings={0: (0, 0, 5, 1)}, display=[92])
    step = build(92, (0, 0, 5, 1), 10, 44)
    assert step in legal_set(s)
    s = play(s, step)
    assert 92 in s.players[0].gizmos and s.used == {10, 44}
    # Without the converter the red doubler has no red marble to double: 6 marbles are 6 energy.
    s = table(gizmos={0: [44, 12]}, rings={0: (0, 0, 5, 1)}, display=[92])
    assert not any(x.kind == "build" and x.card == 92 for x in legal_steps(s))
    illegal(s, build(92, (0, 0, 5, 1), 44), "NOT_AFFORDABLE")
    # A converter that feeds no doubler is wasted, so it is not part of a payment.
    s = table(gizmos={0: [10, 44, 52]}, rings={0: (1, 0, 5, 1)}, display=[92])
    illegal(s, build(92, (1, 0, 5, 0), 10, 44), "BAD_PAYMENT")
