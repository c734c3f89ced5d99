"""One test (or more) per numbered ruling of CONTRIVANCE_RULINGS.md: the allowed side and the
refused side, each refusal checked for its stable code and the ruling it names."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest

from referee.contrivance import (
    RULES,
    Edition,
    EditionError,
    IllegalStep,
    InvalidStep,
    State,
    StateError,
    Step,
    apply,
    chance_outcomes,
    check_invariants,
    edition_from_json,
    interlocked_sets,
    interlocks,
    legal_steps,
    new_game,
    resolve_chance,
    returns,
    score,
    state_from_json,
    step_from_json,
)
from referee.contrivance.data import BUILDERS, switch_on_value
from referee.contrivance.scoring import burn_outs
from referee.contrivance.state import all_cards, builder_tiles, tile_from_json, tool_deck
from tests.contrivance_tables import bench, table

N, E, S, W = 0, 1, 2, 3
FOUR = ("move", "rotate", "swap_component", "swap_points")


def illegal(state: State, step: Step, code: str, ruling: int) -> IllegalStep:
    with pytest.raises(IllegalStep) as info:
        apply(state, step)
    assert info.value.code == code, info.value
    assert ruling in RULES[code].rulings
    return info.value


def play(card: str, player: int = 0, **targets: object) -> Step:
    return Step("play", player, card, **targets)  # type: ignore[arg-type]


def setup(players: int, seed: int = 0) -> State:
    """The building phase's first turn, setup resolved from a seeded source."""
    return resolve_chance(new_game(players), random.Random(seed))


def built(players: int, seed: int = 0) -> State:
    """The configuration phase's first turn, after a random building phase."""
    rng = random.Random(seed)
    state = setup(players, seed)
    while state.phase == "building":
        state = apply(state, rng.choice(legal_steps(state)), rng)
    return state


# ---------------------------------------------------------------- components (1-8)


def test_r1_two_mats_of_five_columns_by_three_rows() -> None:
    for players, rows in ((2, 3), (3, 3), (4, 6), (6, 6)):
        fresh = new_game(players)
        assert len(fresh.workbench) == players <= rows and {len(r) for r in fresh.workbench} == {5}
    state = setup(3)
    own = state.supply[0][0].id
    after = apply(state, Step("place", 0, tile=own, to=(3, 4), facing=N))
    assert after.tile_at((3, 4)) is not None and after.tile_at((3, 4)).id == own  # type: ignore[union-attr]
    illegal(state, Step("place", 0, tile=own, to=(4, 1), facing=N), "NO_SUCH_SQUARE", 1)
    for square in ([1, 6], [7, 1], [0, 1]):
        with pytest.raises(InvalidStep, match=r"step\.to"):
            step_from_json({"kind": "place", "player": 0, "tile": own, "to": square, "facing": "N"})


def test_r2_two_to_six_players_each_a_different_builder_owning_row_k() -> None:
    for bad in (1, 7):
        with pytest.raises(StateError, match="2-6 players"):
            new_game(bad)
    six = setup(6, seed=3)
    assert sorted(six.builders) == sorted(BUILDERS)  # type: ignore[type-var]
    assert all(t.builder == six.builders[k] for k, tiles in enumerate(six.supply) for t in tiles)
    fresh = new_game(2)
    first = apply(fresh, Step("builder", builder="Regulator"))
    assert first.builders == ("Regulator", None)
    assert {s.builder for s, _ in chance_outcomes(first)} == set(BUILDERS) - {"Regulator"}
    illegal(first, Step("builder", builder="Regulator"), "IMPOSSIBLE_OUTCOME", 2)
    # seat k scores row k + 1
    lines = score(table(2, builders=("Mechanic", "Engineer"))).lines
    assert {(line.seat, line.builder, line.row) for line in lines} == {(0, "Mechanic", 1), (1, "Engineer", 2)}


def test_r3_four_tiles_per_builder_three_single_one_double_with_opposite_rivets() -> None:
    tiles = builder_tiles("Mechanic")
    assert [t.id for t in tiles] == ["Mechanic-1", "Mechanic-2", "Mechanic-3", "Mechanic-4"]
    assert [t.rivets for t in tiles] == [(0,), (0,), (0,), (0, 2)]
    double = replace(tiles[3], facing=E)
    assert double.edges == {E, W} and replace(tiles[0], facing=E).edges == {E}
    other = builder_tiles("Mechanic", Edition(double_rivets=(0, 1)))[3]  # a copy whose Double differs
    assert replace(other, facing=E).edges == {E, S}
    raw = tiles[0].to_json() | {"rivets": [0, 2]}
    with pytest.raises(StateError, match="only the Double tile"):
        tile_from_json(raw, "tile")


def test_r4_point_values_0_to_6_set_up_as_0_1_3_and_6() -> None:
    assert sorted(t.value for t in builder_tiles("Engineer")) == [0, 1, 3, 6]
    assert builder_tiles("Engineer")[3].value == 6  # the Double tile
    raw = table(2).to_json()
    raw["workbench"][0][0]["value"] = 7
    with pytest.raises(StateError, match=r"workbench\[0\]\[0\].value"):
        state_from_json(raw)


def test_r5_sixty_two_tool_cards() -> None:
    state = setup(4)
    cards = all_cards(state)
    assert sum(cards.values()) == 62
    assert Counter({c: n for c, n in cards.items() if switch_on_value(c) is None}) == Counter(tool_deck())
    assert (
        Counter(tool_deck())["move"] == 6 and Counter(tool_deck())["points+3"] == 1 and len(tool_deck()) == 48
    )
    raw = state.to_json()
    raw["discard"] = ["move"]
    with pytest.raises(StateError, match="63 cards"):
        state_from_json(raw)


def test_r6_switch_on_values_are_data_and_the_one_drawn_is_played() -> None:
    for players, used in ((2, 8), (3, 10), (4, 12), (5, 14), (6, 14)):
        fresh = new_game(players)
        deck_on = list(fresh.deck[1][0])
        assert len(deck_on) == used and len(fresh.box) == 14 - used
    assert sorted(new_game(2).deck[1][0]) == sorted(
        ["switch_on-3", "switch_on-2", "switch_on-2", "switch_on-1", "switch_on-1"]
        + ["switch_on+1", "switch_on+1", "switch_on+2"]
    )
    custom = edition_from_json({"switch_on_by_players": {str(p): [-3, -3, 2] for p in range(2, 7)}})
    assert new_game(2, custom).deck[1][0] == ("switch_on+2", "switch_on-3", "switch_on-3")
    with pytest.raises(EditionError, match="uses a \\+4 card"):
        edition_from_json({"switch_on_by_players": {str(p): [4] for p in range(2, 7)}})
    owed = drawn(table(2, hands=[FOUR, FOUR[:3]]), "switch_on-2")
    assert legal_steps(owed) == [Step("switch_on", 1, value=-2)]
    illegal(owed, Step("switch_on", 1, value=-1), "WRONG_SWITCH_ON_VALUE", 6)
    assert apply(owed, Step("switch_on", 1, value=-2)).damage == 4


def drawn(state: State, card: str) -> State:
    """Seat 0 passes; seat 1 (short of cards) draws ``card``."""
    after = apply(state, Step("pass", 0))
    assert after.chance == (("draw", 1),)
    return apply(after, Step("draw", card=card))


def test_r7_the_contrivance_requirement_is_revealed_at_the_end() -> None:
    over = end_by_switch_on(damage=1, value=-1)
    assert over.phase == "scoring"
    outcomes = dict((s.value, p) for s, p in chance_outcomes(over))
    assert outcomes == {1: pytest.approx(1 / 3), 2: pytest.approx(1 / 3), 3: pytest.approx(1 / 3)}
    illegal(over, Step("reveal", value=4), "IMPOSSIBLE_OUTCOME", 7)
    revealed = apply(over, Step("reveal", value=2))
    assert revealed.requirement == 2 and revealed.game_over
    assert new_game(2, Edition(contrivances=(3,) * 6)).contrivances == (3,) * 6


def test_r8_damage_starts_at_six() -> None:
    assert new_game(2).damage == 6 and setup(5).damage == 6


# ---------------------------------------------------------------- setup (9)


def test_r9_no_switch_on_before_two_draws_per_player() -> None:
    state = built(2, seed=4)
    assert state.deck[0][1] == 4 and len(state.deck[0][0]) == 48 - 8  # set-aside 2 x 2, 8 dealt
    assert all(len(h) == 4 for h in state.hands)
    draws = 0
    while draws < 4:  # the set-aside pile: redraws bring only Tool cards
        seat = state.current
        state = apply(state, Step("redraw", seat, card=state.hands[seat][0]))
        outcomes = {s.card or "" for s in legal_steps(state)}
        assert outcomes and not any(switch_on_value(c or "") for c in outcomes)
        if draws == 0:
            illegal(state, Step("draw", card="switch_on-1"), "IMPOSSIBLE_OUTCOME", 9)
        state = apply(state, Step("draw", card=sorted(outcomes)[0]))
        draws += 1
    state = apply(state, Step("redraw", state.current, card=state.hands[state.current][0]))
    assert {"switch_on-1", "switch_on+2"} <= {s.card for s in legal_steps(state)}


# ---------------------------------------------------------------- building phase (10)


def test_r10_building_own_tiles_on_columns_1_to_4_of_any_row() -> None:
    state = setup(2, seed=1)
    me, other = state.supply[0][0].id, state.supply[1][0].id
    after = apply(state, Step("place", 0, tile=me, to=(2, 4), facing=W))  # another Builder's row
    assert after.tile_at((2, 4)).facing == W and after.current == 1  # type: ignore[union-attr]
    illegal(state, Step("place", 0, tile=other, to=(1, 1), facing=N), "NOT_YOUR_TILE", 10)
    illegal(state, Step("place", 0, tile=me, to=(1, 5), facing=N), "COLUMN_FIVE_IN_BUILDING", 10)
    illegal(state, Step("place", 1, tile=other, to=(1, 1), facing=N), "NOT_YOUR_TURN", 10)
    illegal(state, play("move", at=(1, 1), to=(1, 2), facing=N), "OUT_OF_PHASE", 10)
    illegal(state, Step("pass", 0), "OUT_OF_PHASE", 10)
    second = apply(after, Step("place", 1, tile=other, to=(1, 1), facing=N))
    illegal(second, Step("place", 0, tile=me, to=(1, 2), facing=N), "TILE_ALREADY_PLACED", 10)
    illegal(second, Step("place", 0, tile=second.supply[0][0].id, to=(1, 1), facing=N), "SQUARE_TAKEN", 10)
    final = built(2, seed=1)  # four rounds fill exactly columns 1-4
    assert final.phase == "configuration" and final.turn == 8 and final.current == 0
    assert all(row[c] is not None for row in final.workbench for c in range(4))
    assert all(row[4] is None for row in final.workbench) and final.supply == ((), ())
    illegal(final, Step("place", 0, tile=me, to=(1, 5), facing=N), "OUT_OF_PHASE", 10)


# ---------------------------------------------------------------- configuration phase (11-14)


def test_r11_draw_up_one_at_a_time_from_round_two_and_switch_on_at_once() -> None:
    first_round = table(2, hands=[FOUR, FOUR[:3]], later_round=False)
    assert apply(first_round, Step("pass", 0)).chance == ()  # no draw in the first round
    short = table(2, hands=[FOUR, FOUR[:2]])
    after = apply(short, Step("pass", 0))
    assert after.chance == (("draw", 1),) and legal_steps(after)[0].kind == "draw"
    after = apply(after, Step("draw", card="move"))
    assert after.chance == (("draw", 1),) and len(after.hands[1]) == 3  # one card at a time
    after = apply(after, Step("draw", card="take_a_tool"))
    assert after.chance == () and len(after.hands[1]) == 4 and after.current == 1
    owed = drawn(table(2, hands=[FOUR, FOUR[:2]]), "switch_on+1")
    illegal(owed, Step("pass", 1), "SWITCH_ON_FIRST", 11)
    illegal(owed, Step("switch_on", 0, value=1), "NOT_YOUR_TURN", 11)
    done = apply(owed, Step("switch_on", 1, value=1))
    assert done.damage == 7 and "switch_on+1" in done.discard
    assert done.current == 0 and len(done.hands[1]) == 2 and done.chance == ()  # turn over, no more draws
    illegal(table(2), Step("switch_on", 0, value=1), "OUT_OF_SEQUENCE", 11)


def test_r12_redraw_pass_or_play_with_four_cards() -> None:
    state = table(2, hands=[("rotate", "move", "move"), FOUR])
    illegal(state, play("rotate", at=(1, 1), facing=E), "HAND_NOT_FULL", 12)
    illegal(state, Step("redraw", 0, card="points+1"), "NO_SUCH_CARD", 12)
    redrawn = apply(state, Step("redraw", 0, card="rotate"))
    assert redrawn.chance == (("redraw", 0),) and "rotate" in redrawn.discard
    redrawn = apply(redrawn, Step("draw", card="points+1"))
    assert redrawn.hands[0] == ("move", "move", "points+1") and redrawn.current == 1
    assert apply(state, Step("pass", 0)).current == 1
    full = table(2)
    illegal(full, play("points+1", at=(1, 1)), "NO_SUCH_CARD", 12)
    played = apply(full, play("rotate", at=(1, 1), facing=E))
    assert played.hands[0] == ("move", "swap_component", "swap_points") and played.discard == ("rotate",)
    assert played.current == 1 and played.chance == ()  # not refilled until the next turn
    illegal(played, play("move", at=(1, 1), to=(1, 5), facing=E), "NOT_YOUR_TURN", 12)


def test_r13_an_empty_deck_is_the_discard_pile_shuffled() -> None:
    hands = [FOUR, ("points+3", "rotate", "rotate", "rotate")]  # the only +3 Points card is held
    rest = Counter(tool_deck()) + Counter(new_game(2).deck[1][0])
    rest.subtract(Counter(c for h in hands for c in h))
    state = table(2, hands=hands, discard=tuple(rest.elements()))
    assert state.deck == ()
    after = apply(state, Step("redraw", 0, card="move"))
    assert after.discard == () and after.deck_size() == 49 and after.chance == (("redraw", 0),)
    assert {s.card for s in legal_steps(after)} == {c for c, n in rest.items() if n} | {"move"}
    illegal(after, Step("draw", card="points+3"), "IMPOSSIBLE_OUTCOME", 13)
    again = apply(after, Step("draw", card="move"))
    assert again.hands[0] == FOUR and again.deck_size() == 48


TOOLS_LAYOUT = {
    (1, 1): ("Engineer-1", "E", 1),
    (1, 2): ("Engineer-2", "N", 5),
    (2, 4): ("Mechanic-4", "W", 6),
}


def tools_table(*hand: str, discard: tuple[str, ...] = ()) -> State:
    return table(2, TOOLS_LAYOUT, hands=[hand, FOUR], discard=discard)


def test_r14_move_keeps_orientation_to_any_empty_square_column_5_included() -> None:
    state = tools_table("move", "move", "rotate", "rotate")
    moved = apply(state, play("move", at=(1, 1), to=(2, 5), facing=E))
    assert moved.tile_at((1, 1)) is None and moved.tile_at((2, 5)).id == "Engineer-1"  # type: ignore[union-attr]
    assert moved.tile_at((2, 5)).facing == E  # type: ignore[union-attr]
    illegal(state, play("move", at=(1, 1), to=(2, 5), facing=N), "ORIENTATION_CHANGED", 14)
    illegal(state, play("move", at=(1, 1), to=(1, 2), facing=E), "SQUARE_TAKEN", 14)
    illegal(state, play("move", at=(1, 5), to=(2, 5), facing=E), "SQUARE_EMPTY", 14)
    illegal(state, play("move", at=(1, 1), to=(3, 5), facing=E), "NO_SUCH_SQUARE", 14)


def test_r14_rotate_turns_90_180_or_270_degrees() -> None:
    state = tools_table("move", "move", "rotate", "rotate")
    for facing in (N, S, W):
        assert apply(state, play("rotate", at=(1, 1), facing=facing)).tile_at((1, 1)).facing == facing  # type: ignore[union-attr]
    illegal(state, play("rotate", at=(1, 1), facing=E), "NOT_A_TURN", 14)
    assert (
        len([s for s in legal_steps(state) if s.kind == "play" and s.card == "rotate"]) == 3 * 8
    )  # 8 tiles, 3 turns each


def test_r14_swap_component_and_swap_points_on_any_two_tiles() -> None:
    state = tools_table("swap_component", "swap_points", "move", "move")
    swapped = apply(state, play("swap_component", at=(1, 1), to=(2, 4)))
    a, b = swapped.tile_at((1, 1)), swapped.tile_at((2, 4))
    assert (a.id, a.facing, b.id, b.facing) == ("Mechanic-4", W, "Engineer-1", E)  # type: ignore[union-attr]
    assert apply(state, play("swap_component", at=(2, 4), to=(1, 1))) == swapped  # either order
    illegal(state, play("swap_component", at=(1, 1), to=(1, 1)), "SAME_SQUARE", 14)
    illegal(state, play("swap_component", at=(1, 1), to=(2, 5)), "SQUARE_EMPTY", 14)
    points = apply(state, play("swap_points", at=(1, 1), to=(2, 4)))
    assert points.tile_at((1, 1)).value == 6 and points.tile_at((2, 4)).value == 1  # type: ignore[union-attr]
    assert points.tile_at((1, 1)).id == "Engineer-1"  # type: ignore[union-attr]


def test_r14_points_cards_clamp_to_0_and_6() -> None:
    state = tools_table("points+3", "points-2", "points+1", "move")
    assert apply(state, play("points+3", at=(1, 2))).tile_at((1, 2)).value == 6  # type: ignore[union-attr]
    assert apply(state, play("points-2", at=(1, 1))).tile_at((1, 1)).value == 0  # type: ignore[union-attr]
    assert apply(state, play("points+1", at=(2, 4))).tile_at((2, 4)).value == 6  # type: ignore[union-attr]
    assert apply(state, play("points+1", at=(1, 2))).tile_at((1, 2)).value == 6  # type: ignore[union-attr]
    illegal(state, play("points+3", at=(2, 5)), "SQUARE_EMPTY", 14)


def test_r14_take_a_tool_takes_one_unseen_card_from_another_hand() -> None:
    state = table(2, hands=[("take_a_tool", "move", "move", "move"), ("rotate", "rotate", "points-3")])
    taking = apply(state, play("take_a_tool", target=1))
    assert taking.chance == (("take", 0, 1),) and taking.current == 0
    odds = {s.card: p for s, p in chance_outcomes(taking)}
    assert odds == {"rotate": pytest.approx(2 / 3), "points-3": pytest.approx(1 / 3)}
    illegal(taking, Step("take", card="move"), "IMPOSSIBLE_OUTCOME", 14)  # not in that hand
    took = apply(taking, Step("take", card="points-3"))
    assert took.hands == (("move", "move", "move", "points-3"), ("rotate", "rotate")) and took.current == 1
    assert "take_a_tool" in took.discard
    illegal(state, play("take_a_tool", target=0), "OWN_HAND", 14)
    empty = table(2, hands=[("take_a_tool", "move", "move", "move"), ()])
    illegal(empty, play("take_a_tool", target=1), "NOTHING_TO_TAKE", 14)


def test_r14_redraw_a_tool_takes_a_chosen_card_never_a_switch_on() -> None:
    hand = ("redraw_a_tool", "move", "move", "move")
    state = tools_table(*hand, discard=("rotate", "switch_on-1"))
    back = apply(state, play("redraw_a_tool", retrieve="rotate"))
    assert back.hands[0] == ("move", "move", "move", "rotate") and back.discard == (
        "redraw_a_tool",
        "switch_on-1",
    )
    illegal(state, play("redraw_a_tool", retrieve="switch_on-1"), "NOT_RETRIEVABLE", 14)
    illegal(state, play("redraw_a_tool", retrieve="points+1"), "NOT_IN_DISCARD", 14)
    illegal(state, play("redraw_a_tool", retrieve="redraw_a_tool"), "NOT_IN_DISCARD", 14)  # not itself
    assert {s.retrieve for s in legal_steps(state) if s.kind == "play" and s.card == "redraw_a_tool"} == {
        "rotate"
    }


# ---------------------------------------------------------------- interlocking (15-16)


def test_r15_rivets_facing_across_a_row_and_columns_do_not_wrap() -> None:
    row = bench(2, {(1, 1): ("Engineer-1", "E", 1), (1, 2): ("Engineer-2", "W", 3)})
    assert interlocks(row) == [((1, 1), (1, 2))]
    one_sided = bench(2, {(1, 1): ("Engineer-1", "E", 1), (1, 2): ("Engineer-2", "N", 3)})
    assert interlocks(one_sided) == []
    gap = bench(2, {(1, 1): ("Engineer-1", "E", 1), (1, 3): ("Engineer-2", "W", 3)})
    assert interlocks(gap) == []
    ends = bench(2, {(1, 5): ("Engineer-1", "E", 1), (1, 1): ("Engineer-2", "W", 3)})
    assert interlocks(ends) == []


def test_r15_columns_join_rows_and_the_last_row_wraps_to_the_first() -> None:
    down = bench(3, {(1, 2): ("Engineer-1", "S", 1), (2, 2): ("Mechanic-1", "N", 0)})
    assert interlocks(down) == [((1, 2), (2, 2))]
    mats = bench(4, {(3, 1): ("Engineer-1", "S", 1), (4, 1): ("Mechanic-1", "N", 0)})
    assert interlocks(mats) == [((3, 1), (4, 1))]  # rows 3 and 4 across the two mats
    wrap = bench(3, {(3, 1): ("Engineer-1", "S", 1), (1, 1): ("Mechanic-1", "N", 0)})
    assert interlocks(wrap) == [((1, 1), (3, 1))]
    not_wrap = bench(3, {(1, 1): ("Engineer-1", "S", 1), (3, 1): ("Mechanic-1", "N", 0)})
    assert interlocks(not_wrap) == []
    for a, b in (("S", "N"), ("N", "S")):  # 2 players: both borders join rows 1 and 2
        two = bench(2, {(1, 4): ("Engineer-1", a, 1), (2, 4): ("Mechanic-1", b, 0)})
        assert interlocks(two) == [((1, 4), (2, 4))]
    both = bench(2, {(1, 4): ("Engineer-4", "N", 1), (2, 4): ("Mechanic-4", "N", 0)})
    assert interlocks(both) == [((1, 4), (2, 4))]  # one interlock however many edges join it


def test_r16_interlocked_sets_are_connected_groups() -> None:
    layout = {
        (1, 1): ("Engineer-1", "E", 1),
        (1, 2): ("Engineer-4", "E", 4),  # the Double: Rivets E and W
        (1, 3): ("Engineer-2", "W", 2),
        (2, 1): ("Mechanic-1", "E", 1),
        (2, 2): ("Mechanic-2", "W", 5),
        (2, 4): ("Mechanic-3", "N", 3),
    }
    assert interlocked_sets(bench(2, layout)) == [((1, 1), (1, 2), (1, 3)), ((2, 1), (2, 2))]
    del layout[(1, 2)]
    assert interlocked_sets(bench(2, layout)) == [((2, 1), (2, 2))]


# ---------------------------------------------------------------- end and scoring (17-21)


def end_by_switch_on(damage: int, value: int) -> State:
    owed = drawn(table(2, hands=[FOUR, FOUR[:3]], damage=damage), f"switch_on{value:+d}")
    return apply(owed, Step("switch_on", 1, value=value))


def test_r17_the_game_ends_at_damage_0_or_10() -> None:
    repaired = end_by_switch_on(damage=2, value=-2)
    assert repaired.damage == 0 and repaired.phase == "scoring" and repaired.chance == (("reveal",),)
    assert {s.kind for s in legal_steps(repaired)} == {"reveal"}
    illegal(repaired, Step("pass", 0), "GAME_OVER", 17)
    over = apply(repaired, Step("reveal", value=1))
    assert over.game_over and legal_steps(over) == []
    illegal(over, Step("pass", 0), "GAME_OVER", 17)
    assert end_by_switch_on(damage=3, value=-2).phase == "configuration"  # damage 1 goes on
    destroyed = end_by_switch_on(damage=8, value=2)
    assert destroyed.damage == 10 and destroyed.phase == "scoring"
    assert end_by_switch_on(damage=7, value=2).phase == "configuration"  # damage 9 goes on
    with pytest.raises(StateError, match="damage 0 in the configuration phase"):
        check_invariants(replace(table(2), damage=0))


SET = {
    (2, 3): ("Mechanic-1", "S", 1),
    (3, 3): ("Regulator-2", "N", 4),
}


def test_r18_unlinked_tiles_and_each_sets_lowest_burn_out() -> None:
    verdicts = {v.square: v for v in burn_outs(bench(3, SET | {(1, 1): ("Engineer-3", "E", 6)}))}
    assert verdicts[(2, 3)].reason == "row 2, column 3: lowest of the set {2:3, 3:3} (value 1): burnt out"
    assert verdicts[(2, 3)].burnt and not verdicts[(3, 3)].burnt
    assert verdicts[(1, 1)].burnt and verdicts[(1, 1)].reason.endswith(
        "in no interlocked set (value 6): burnt out"
    )
    equal = bench(3, {(2, 3): ("Mechanic-1", "S", 4), (3, 3): ("Regulator-2", "N", 4)})
    assert all(v.burnt for v in burn_outs(equal))


def test_r19_base_score_is_the_surviving_values_in_the_row_whatever_their_type() -> None:
    layout = {
        (1, 1): ("Mechanic-1", "E", 5),  # a Mechanic tile surviving in the Engineer's row
        (1, 2): ("Engineer-1", "W", 2),
        (2, 1): ("Engineer-4", "N", 6),  # un-interlocked: burns
    }
    state = replace(table(2, layout), phase="over", damage=5 + 5, requirement=1)
    lines = {line.builder: line for line in score(state).lines}
    assert lines["Engineer"].base == 5 and lines["Engineer"].survivors == ("1:1 (5)",)
    assert lines["Mechanic"].base == 0


def test_r20_bonus_only_when_repaired_and_the_requirement_is_met() -> None:
    layout = {
        (1, 1): ("Engineer-1", "E", 3),  # an equal pair: both burn, both interlocked
        (1, 2): ("Engineer-2", "W", 3),
        (1, 3): ("Mechanic-1", "N", 0),
        (1, 4): ("Mechanic-2", "N", 1),
        (2, 1): ("Engineer-3", "N", 5),
        (2, 2): ("Engineer-4", "N", 6),
        (2, 3): ("Mechanic-3", "N", 3),
        (2, 4): ("Mechanic-4", "E", 6),
    }
    base = table(2, layout)

    def engineer(damage: int, requirement: int) -> tuple[int, str]:
        final = replace(base, phase="over", damage=damage, requirement=requirement)
        line = next(x for x in score(final).lines if x.builder == "Engineer")
        return line.bonus, line.bonus_reason

    points, reason = engineer(damage=0, requirement=2)  # 2 Engineer tiles in row 1, burnt ones count
    assert points == 6 and reason.endswith("interlocked burnt-out tiles in row 1: 1:1 (3) + 1:2 (3) = 6")
    points, reason = engineer(damage=-2, requirement=3)
    assert points == 0 and "2 Engineer tile(s) in row 1; the Contrivance needs 3" in reason
    points, reason = engineer(damage=10, requirement=1)
    assert points == 0 and "destroyed" in reason


def test_r21_highest_total_wins_and_equal_totals_share() -> None:
    tie = {
        (1, 1): ("Engineer-1", "E", 4),
        (1, 2): ("Engineer-2", "W", 0),
        (2, 1): ("Mechanic-1", "E", 4),
        (2, 2): ("Mechanic-2", "W", 0),
    }
    state = replace(table(2, tie), phase="over", damage=4 + 6, requirement=1)
    lines = score(state).lines
    assert [(x.total, x.rank, x.won) for x in lines] == [(4, 1, True), (4, 1, True)]
    assert returns(state) == [1.0, 1.0]
    ahead = replace(table(2, tie | {(1, 1): ("Engineer-1", "E", 5)}), phase="over", damage=10, requirement=1)
    assert returns(ahead) == [1.0, 0.0]
    assert [(x.seat, x.total, x.rank, x.won) for x in score(ahead).lines] == [
        (0, 5, 1, True),
        (1, 4, 2, False),
    ]
