"""The Workbench tracker: every kind of turn explained as the engine's step, every warning with
its code, ruling, player and fix, and the camera's noise kept out of the verdicts.

Tables are set by hand (tests/contrivance_tables.py), filmed by the perfect camera of the
recording module, and the turn is closed by an end-of-turn signal."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from referee.contrivance import State, Step, apply, legal_steps, new_game, resolve_chance
from referee.contrivance.state import Square, Tile
from referee.events import EndOfTurn
from referee.observation import SquareSighting, TileSighting, WorkbenchObservation
from referee.simulation.workbench import Moment, Noise, observe_truth
from referee.tracker import TrackerError
from referee.tracker.workbench import BenchStabilizer, WorkbenchTracker, WorkbenchUpdate
from tests.contrivance_tables import table

N, E, S, W = 0, 1, 2, 3
NAMES = ("Ana", "Ben", "Cleo", "Dev")
PERFECT = observe_truth(Noise.none())


def put(state: State, sq: Square, tile: Tile | None) -> State:
    grid = [list(row) for row in state.workbench]
    grid[sq[0] - 1][sq[1] - 1] = tile
    return replace(state, workbench=tuple(tuple(row) for row in grid))


def moved(state: State, a: Square, b: Square, facing: int | None = None) -> State:
    tile = state.tile_at(a)
    assert tile is not None
    return put(put(state, a, None), b, tile if facing is None else replace(tile, facing=facing))


def changed(state: State, sq: Square, **fields: int) -> State:
    tile = state.tile_at(sq)
    assert tile is not None
    return put(state, sq, replace(tile, **fields))


def show(tracker: WorkbenchTracker, table_now: State, frames: int = 3, damage: int | None = None) -> None:
    for i in range(frames):
        m = Moment(i, float(i), table_now.workbench, table_now.damage if damage is None else damage, None)
        tracker.observe(PERFECT(m))


def turn(tracker: WorkbenchTracker, table_after: State, damage: int | None = None) -> WorkbenchUpdate:
    """The table after a turn, seen steadily, then the end-of-turn signal."""
    show(tracker, table_after, damage=damage)
    return tracker.end_turn(EndOfTurn(0.0, "button"))


def referee(state: State, players: int | None = None) -> WorkbenchTracker:
    n = players or state.num_players
    tracker = WorkbenchTracker.at(NAMES[:n], state)
    show(tracker, state)
    return tracker


def only_warning(update: WorkbenchUpdate, code: str | None, kind: str = "violation") -> str:
    assert len(update.warnings) == 1, update.warnings
    w = update.warnings[0]
    assert (w.code, w.kind) == (code, kind), w
    return w.message


# ------------------------------------------------------------------ explained as legal steps


def test_a_placement_in_the_building_phase_is_explained() -> None:
    start = resolve_chance(new_game(2), random.Random(1))
    tracker = WorkbenchTracker(NAMES[:2], [b or "" for b in start.builders])
    show(tracker, start)
    builder = start.builders[0]
    after = apply(start, Step("place", 0, tile=f"{builder}-2", to=(2, 3), facing=W))
    update = turn(tracker, after)
    assert [s.to_json() for s in update.steps] == [
        {"kind": "place", "player": 0, "tile": f"{builder}-2", "to": [2, 3], "facing": "W"}
    ]
    assert not update.warnings and tracker.state.current == 1


def test_a_building_turn_with_nothing_placed_is_still_that_builders() -> None:
    start = resolve_chance(new_game(2), random.Random(1))
    tracker = WorkbenchTracker(NAMES[:2], [b or "" for b in start.builders])
    update = turn(tracker, start)
    assert not update.steps and "has placed no tile yet" in update.notes[0]
    assert tracker.state.current == 0


@pytest.mark.parametrize(
    ("after", "card"),
    [
        (lambda s: moved(s, (1, 1), (2, 5)), "move"),
        (lambda s: changed(s, (1, 2), facing=S), "rotate"),
        (lambda s: put(put(s, (1, 1), s.tile_at((2, 2))), (2, 2), s.tile_at((1, 1))), "swap_component"),
        (
            lambda s: changed(
                changed(s, (1, 3), value=s.tile_at((2, 1)).value), (2, 1), value=s.tile_at((1, 3)).value
            ),
            "swap_points",
        ),
        (lambda s: changed(s, (1, 4), value=5), "points-1"),  # the Double shows 6
        (lambda s: changed(s, (1, 3), value=6), "points+3"),  # 3 + 3
    ],
    ids=["move", "rotate", "swap_component", "swap_points", "points-1", "points+3"],
)
def test_each_tool_card_is_explained(after, card) -> None:  # type: ignore[no-untyped-def]
    start = table(2, current=1)
    tracker = referee(start)
    update = turn(tracker, after(start))
    assert not update.warnings, update.warnings
    assert [s.card for s in update.steps] == [card] and update.steps[0].player == 1
    assert tracker.played[card] == 1 and tracker.state.current == 0


def test_a_points_card_at_the_limit_is_clamped() -> None:
    start = changed(table(2), (1, 1), value=5)
    tracker = referee(start)
    update = turn(tracker, changed(start, (1, 1), value=6))  # +1 fits exactly; +2, +3 would clamp
    assert [s.card for s in update.steps] == ["points+1"]
    start = changed(table(2), (1, 1), value=1)
    tracker = referee(start)
    update = turn(tracker, changed(start, (1, 1), value=0))
    assert [s.card for s in update.steps] == ["points-1"] and not update.warnings


def test_a_switch_on_card_is_the_damage_changing() -> None:
    start = table(2, damage=6)
    tracker = referee(start)
    update = turn(tracker, replace(start, damage=4))
    assert [s.to_json() for s in update.steps] == [{"kind": "switch_on", "player": 0, "value": -2}]
    assert tracker.state.damage == 4 and not update.warnings


def test_the_switch_on_card_that_repairs_ends_the_game_then_the_reveal_scores_it() -> None:
    start = table(2, damage=1)
    tracker = referee(start)
    with pytest.raises(TrackerError, match="reveal"):
        tracker.reveal(2)  # not over yet
    turn(tracker, replace(start, damage=0))  # -1, -2 or -3: the track shows 0
    assert tracker.state.phase == "scoring"
    tracker.reveal(2)
    assert tracker.state.game_over and tracker.state.requirement == 2
    assert {row["seat"] for row in tracker.scores()} == {0, 1} and "requires 2" in tracker.score_report()


def test_a_turn_that_changes_nothing_is_a_pass_or_a_hidden_card() -> None:
    start = table(2)
    tracker = referee(start)
    update = turn(tracker, start)
    assert [s.kind for s in update.steps] == ["pass"] and tracker.redraws == 1


# ------------------------------------------------------------------ warnings


def test_a_move_that_turns_the_tile_is_orientation_changed() -> None:
    start = table(2, {(2, 3): ("Regulator-1", "N", 0)}, current=1, builders=("Engineer", "Regulator"))
    tracker = referee(start)
    update = turn(tracker, moved(start, (2, 3), (1, 5), facing=E))
    message = only_warning(update, "ORIENTATION_CHANGED")
    assert message.startswith(
        "Ben moved the Regulator tile from row 2, column 3 to row 1, column 5 and turned it: "
        "a Move keeps the tile's orientation (ruling 14"
    )
    w = update.warnings[0]
    assert w.player == 1 and 14 in w.rulings and "back to face N" in w.remedy
    assert tracker.state.tile_at((1, 5)) == Tile("Regulator-1", "Regulator", (0,), 0, E)  # the table accepted


def test_a_swap_component_that_turns_the_tiles_is_orientation_changed() -> None:
    start = table(2)
    a, b = start.tile_at((1, 1)), start.tile_at((2, 1))
    assert a is not None and b is not None
    after = put(put(start, (1, 1), replace(b, facing=(b.facing + 1) % 4)), (2, 1), a)
    update = turn(referee(start), after)
    assert "Swap Component keeps each tile's orientation" in only_warning(update, "ORIENTATION_CHANGED")


def _building(players: int = 4, placed: int = 0) -> State:
    rng = random.Random(7)
    state = resolve_chance(new_game(players), rng)
    for _ in range(placed):
        state = apply(state, rng.choice(legal_steps(state)), rng)
    return state


def test_a_tile_placed_in_column_five_during_the_building_phase() -> None:
    start = _building(4, placed=5)
    seat = start.current
    tile = start.supply[seat][0]
    tracker = WorkbenchTracker.at(NAMES, start)
    show(tracker, start)
    update = turn(tracker, put(start, (3, 5), replace(tile, facing=S)))
    message = only_warning(update, "COLUMN_FIVE_IN_BUILDING")
    assert message.startswith(
        f"{NAMES[seat]} placed the {tile.builder} tile on row 3, column 5 during the building phase"
    )
    assert update.warnings[0].turn == 6 and "columns 1-4" in update.warnings[0].remedy
    assert tracker.state.tile_at((3, 5)) is not None and tracker.state.current == (seat + 1) % 4
    nxt = tracker.state  # no cascade: the next Builder's placement is explained as usual
    free = next(sq for sq in [(r, c) for r in range(1, 5) for c in range(1, 5)] if nxt.tile_at(sq) is None)
    after = put(nxt, free, replace(nxt.supply[nxt.current][0], facing=W))
    update = turn(tracker, after)
    assert not update.warnings and [s.kind for s in update.steps] == ["place"]


def test_another_builders_tile_placed_is_not_your_tile() -> None:
    start = _building(2, placed=0)
    other = start.supply[1][0]
    tracker = WorkbenchTracker.at(NAMES[:2], start)
    show(tracker, start)
    update = turn(tracker, put(start, (1, 1), other))
    assert "places only their own tiles" in only_warning(update, "NOT_YOUR_TILE")


def test_two_tiles_placed_in_one_building_turn() -> None:
    start = _building(2, placed=0)
    mine = start.supply[0]
    tracker = WorkbenchTracker.at(NAMES[:2], start)
    show(tracker, start)
    update = turn(tracker, put(put(start, (1, 1), mine[0]), (2, 2), mine[1]))
    assert "placed two tiles in one turn" in only_warning(update, "SECOND_ACTION")
    assert tracker.state.current == 1 and tracker.state.turn == 1


def test_two_tool_actions_in_one_turn() -> None:
    start = table(2, current=1)
    after = changed(changed(start, (1, 2), facing=W), (2, 3), value=start.tile_at((2, 3)).value + 1)  # type: ignore[union-attr]
    tracker = referee(start)
    update = turn(tracker, after)
    message = only_warning(update, "SECOND_ACTION")
    assert message.startswith("Ben took two Tool actions in one turn") and "a turn is one action" in message
    assert [s.card for s in update.steps] == ["rotate", "points+1"] and "undo the second" in update.warnings[
        0
    ].remedy
    nxt = turn(tracker, changed(after, (1, 1), facing=E))  # no cascade: Ana's turn is explained as usual
    assert not nxt.warnings and [s.card for s in nxt.steps] == ["rotate"]


def test_a_tool_played_with_a_switch_on_card_is_a_second_action() -> None:
    start = table(2)
    update = turn(referee(start), replace(changed(start, (1, 2), facing=W), damage=5))
    assert "a Switch On card (-1) was drawn, which ends the turn" in only_warning(update, "SECOND_ACTION")


def test_a_seventh_move_is_impossible_unless_a_card_can_have_come_back() -> None:
    state = table(2)
    tracker = referee(state)
    hole = (1, 5)
    for k, src in enumerate([(1, 1), (1, 2), (1, 3), (1, 4), (2, 1), (2, 2), (2, 3)]):
        state = moved(state, src, hole)  # each turn one tile moves into the square left empty
        hole = src
        update = turn(tracker, state)
        if k < 6:
            assert not update.warnings and [s.card for s in update.steps] == ["move"], update.warnings
    message = only_warning(update, "NO_SUCH_CARD")
    assert "Move card number 7 of the 6 in the box" in message and update.warnings[0].player == 0


def test_a_quiet_turn_with_another_card_on_the_discard_pile_was_no_redraw_a_tool() -> None:
    start = table(2)
    tracker = referee(start)
    tracker.played.update({"move": 6})
    for i in range(3):  # the pile shows the card a redraw discarded: not a Redraw a Tool
        tracker.observe(
            replace(
                PERFECT(Moment(i, float(i), start.workbench, start.damage, "rotate")),
                discard_top=("rotate", 0.95),
            )
        )
    update = tracker.end_turn(EndOfTurn(3.0))
    assert [s.kind for s in update.steps] == ["pass"] and tracker.redraws == 0
    assert not tracker.can_play("move")
    for i in range(3):  # Redraw a Tool on top: it may have brought a Move back
        tracker.observe(PERFECT(Moment(i, float(i), start.workbench, start.damage, "redraw_a_tool")))
    tracker.end_turn(EndOfTurn(4.0))
    assert tracker.redraws == 1 and tracker.can_play("move")


def test_a_quiet_turn_could_have_brought_a_move_back() -> None:
    start = table(2)
    tracker = referee(start)
    tracker.played.update({"move": 6, "switch_on-3": 1})  # all of them (2 players: one -3 card)
    assert not tracker.can_play("move") and not tracker.can_play("switch_on-3")
    turn(tracker, start)  # nothing changed: perhaps Redraw a Tool took a Move from the discard pile
    assert tracker.can_play("move") and not tracker.can_play("switch_on-3")


def test_a_switch_on_card_in_the_first_configuration_round_is_out_of_sequence() -> None:
    start = table(2, later_round=False)
    update = turn(referee(start), replace(start, damage=4))
    assert "first configuration round" in only_warning(update, "OUT_OF_SEQUENCE")


def test_a_damage_change_no_switch_on_card_makes() -> None:
    start = table(2, damage=6)
    update = turn(referee(start), replace(start, damage=2))
    assert "no Switch On card changes it by -4" in only_warning(update, "WRONG_SWITCH_ON_VALUE")


def test_a_second_minus_three_with_four_players_is_impossible() -> None:
    start = table(4, damage=8)
    tracker = referee(start)
    assert not turn(tracker, replace(start, damage=5, current=1)).warnings  # the deck's one -3
    state = replace(tracker.state)
    update = turn(tracker, replace(state, damage=2))
    assert "-3 Switch On card" in only_warning(update, "IMPOSSIBLE_OUTCOME")


def test_a_change_nothing_explains_asks_a_person() -> None:
    start = table(2)
    tile = start.tile_at((1, 1))
    assert tile is not None
    update = turn(referee(start), put(start, (1, 1), None))  # a tile vanished
    assert "no legal step explains the change of row 1, column 1" in only_warning(update, None, "uncertain")


def test_a_break_read_with_low_confidence_is_only_uncertain() -> None:
    start = table(2)
    after = moved(start, (1, 1), (2, 5), facing=(start.tile_at((1, 1)).facing + 1) % 4)  # type: ignore[union-attr]
    tracker = referee(start)
    unsure = observe_truth(Noise(missing=0, faint=0, unsure=1.0, misread=0))
    for i in range(20):  # the break never reads surely
        tracker.observe(unsure(Moment(i, float(i), after.workbench, after.damage, None)))
        if i == 2:
            update = tracker.end_turn(EndOfTurn(2.0))
            assert not update.warnings  # it waits for a sure reading first
    (w,) = tracker.warnings
    assert (w.code, w.kind) == ("ORIENTATION_CHANGED", "uncertain")


# ------------------------------------------------------------------ noise


def _obs(tile: TileSighting | None, conf: float = 0.97) -> WorkbenchObservation:
    return WorkbenchObservation(0.0, (SquareSighting(1, 1, tile, conf),), damage=(6, 0.97))


def test_one_misread_frame_never_reaches_the_view() -> None:
    st = BenchStabilizer(rows=1)
    good = TileSighting("Engineer", False, N, 3, 0.97, 0.97, 0.97)
    for _ in range(3):
        view = st.push(_obs(good))
    assert view.squares[(1, 1)] is not None and view.squares[(1, 1)].value == 3  # type: ignore[union-attr]
    view = st.push(_obs(replace(good, value=5)))  # one misread frame
    assert view.squares[(1, 1)].value == 3 and (1, 1) in view.stale  # type: ignore[union-attr]
    view = st.push(_obs(good))
    assert (1, 1) not in view.stale
    view = st.push(WorkbenchObservation(0.0, (), damage=(6, 0.97)))  # a hand over it: kept, not emptied
    assert view.squares[(1, 1)].value == 3  # type: ignore[union-attr]
    view = st.push(_obs(replace(good, value=None, value_confidence=0.3)))  # a faint dial: value unknown
    assert view.squares[(1, 1)].value == 3  # type: ignore[union-attr]


def test_a_low_confidence_square_is_unknown_and_unsure_readings_are_marked() -> None:
    st = BenchStabilizer(rows=1)
    for _ in range(3):
        view = st.push(_obs(None, conf=0.5))
    assert (1, 1) not in view.squares
    for _ in range(3):
        view = st.push(_obs(None, conf=0.7))
    assert view.squares[(1, 1)] is None and (1, 1) in view.unsure


def test_the_record_keeps_every_step_and_warning() -> None:
    start = table(2, current=1)
    tracker = referee(start)
    turn(tracker, changed(changed(start, (1, 2), facing=W), (2, 3), value=0))
    kinds = [e.kind for e in tracker.record.entries()]
    assert kinds[0] == "setup" and kinds.count("warning") == 1 and "step" in kinds and kinds[-1] == "state"


def test_a_bad_setup_is_one_error_naming_it() -> None:
    with pytest.raises(TrackerError, match="builders: expected different Builders"):
        WorkbenchTracker(NAMES[:2], ["Engineer", "Wizard"])
    with pytest.raises(TrackerError, match="builders: expected different Builders"):
        WorkbenchTracker(NAMES[:2], ["Engineer", "Engineer"])
    with pytest.raises(TrackerError, match="one Builder per seat"):
        WorkbenchTracker(NAMES[:3], ["Engineer", "Mechanic"])
    with pytest.raises(TrackerError, match="players: Contrivance is for 2-6 players, got 1"):
        WorkbenchTracker(NAMES[:1], ["Engineer"])


def test_a_game_resumes_from_its_record(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from referee.tracker.record import GameRecord, RecordError

    path = tmp_path / "contrivance.sqlite"
    start = table(2, current=1, damage=1)
    tracker = WorkbenchTracker.at(NAMES[:2], start, record=GameRecord(path))
    show(tracker, start)
    after = changed(changed(start, (1, 2), facing=W), (2, 3), value=0)
    turn(tracker, after)  # a second action: warned
    turn(tracker, moved(after, (1, 1), (1, 5)))
    turn(tracker, replace(moved(after, (1, 1), (1, 5)), damage=0))  # repaired: the game ends
    tracker.reveal(3)
    tracker.record.close()
    again = WorkbenchTracker.open(path)
    fields = ("workbench", "supply", "damage", "phase", "current", "turn", "requirement")
    assert [getattr(again.state, f) for f in fields] == [getattr(tracker.state, f) for f in fields]
    assert again.state.game_over
    assert again.warnings == tracker.warnings and again.played == tracker.played
    assert [line.text for line in again.log] == [line.text for line in tracker.log]
    assert again.scores() == tracker.scores()
    with pytest.raises(RecordError, match="no such game record"):
        WorkbenchTracker.open(tmp_path / "missing.sqlite")
    (tmp_path / "notes.txt").write_text("not a record")
    with pytest.raises(RecordError):
        WorkbenchTracker.open(tmp_path / "notes.txt")


def test_a_doubtful_reading_is_asked_about_once() -> None:
    start = table(2)  # the Engineer and the Mechanic: no seat has the Regulator
    tile = start.tile_at((1, 1))
    assert tile is not None
    misread = put(start, (1, 1), Tile("Regulator-1", "Regulator", (0,), tile.value, tile.facing))
    tracker = referee(start)
    update = turn(tracker, misread)
    assert "row 1, column 1" in only_warning(update, None, "uncertain")
    update = turn(tracker, changed(misread, (2, 2), facing=W))  # the same reading, and a Rotate elsewhere
    assert not update.warnings and [s.card for s in update.steps] == ["rotate"]


def test_an_unexplained_turn_that_repairs_the_contrivance_still_ends_the_game() -> None:
    start = table(2, damage=1)
    tracker = referee(start)
    update = turn(tracker, replace(put(start, (1, 1), None), damage=0))
    only_warning(update, None, "uncertain")
    assert tracker.state.phase == "scoring"
    tracker.reveal(1)
    assert tracker.state.game_over
