"""Camera only (issue 13): turns inferred from whose area changes, with no end-of-turn signal and
no sensor. Constructed sequences: a turn that left no trace (a Research declined), a rule break
followed by the next players' legal turns (warned once, no cascade), a move out of turn told
apart by what follows, and every accepted step carrying its true turn and player."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from referee.gizmos import State, Step, apply, force, legal_steps
from referee.simulation.synthetic import Feeder, ReachNoise
from referee.tracker import Tracker, TrackerError
from referee.tracker.base import TrackerSettings
from referee.tracker.explain import Hints, explain
from referee.tracker.turns import VIOLATION_WEIGHT, quiet_first, weight
from referee.tracker.view import view_of
from tests.tables import table
from tests.test_tracker import B, K, R, Y, build, file, pick, referee


def declined(state: State) -> State:
    """The table after the current player researches and declines: the cards go back under the
    deck, nothing a camera sees changes (the Research is the turn's main action)."""
    seat = state.current
    state = apply(state, Step("research", seat, level=1))
    while state.chance:
        state = apply(state, Step("reveal", card=state.decks[0][0][0][0]))
    while (options := legal_steps(state))[0].kind != "end_turn":
        state = apply(state, next(o for o in options if o.kind in ("skip", "bottom")))
    return apply(state, Step("end_turn", seat))


def turns_of(feeder: object) -> list[tuple[int, int | None, str]]:
    """(turn, player, step kind) of every accepted player step."""
    return [
        (line.turn, line.player, line.step["kind"]) for line in feeder.tracker.log if line.player is not None
    ]  # type: ignore[attr-defined]


def test_the_current_players_turn_that_left_no_trace_is_inferred_from_the_next_players_move() -> None:
    feeder = referee(table(players=3, deck_order={1: [20, 21, 22]}))
    feeder.show(declined(feeder.state), frames=10)  # Ana declines a Research: nothing changes
    assert feeder.tracker.state.turn == 0 and not feeder.tracker.log  # nothing to explain yet
    feeder.play(pick(1, B), frames=6)  # Ben: Ana's turn is over, though nothing showed it
    feeder.play(Step("end_turn", 1), pick(2, K), frames=6)  # Cy
    t = feeder.tracker
    assert t.warnings == []
    assert (t.state.turn, t.state.current) == (2, 2)
    kinds = turns_of(feeder)
    assert (0, 0, "research") in kinds and (0, 0, "end_turn") in kinds
    assert (1, 1, "pick") in kinds and (2, 2, "pick") in kinds


def test_a_move_by_the_player_after_next_ends_two_turns_one_of_them_without_a_trace() -> None:
    feeder = referee(table(players=3, deck_order={1: [20, 21, 22]}))
    feeder.play(pick(0, R), frames=6)  # Ana
    feeder.show(declined(apply(feeder.state, Step("end_turn", 0))), frames=10)  # Ben declines
    feeder.play(pick(2, Y), frames=6)  # Cy
    feeder.play(Step("end_turn", 2), pick(0, K), frames=6)  # Ana's next turn
    t = feeder.tracker
    assert t.warnings == []
    assert [k for k in turns_of(feeder) if k[2] != "bottom"] == [
        (0, 0, "pick"),
        (0, 0, "end_turn"),
        (1, 1, "research"),
        (1, 1, "skip"),
        (1, 1, "end_turn"),
        (2, 2, "pick"),
        (2, 2, "end_turn"),
        (3, 0, "pick"),
    ]


def test_after_a_rule_break_the_next_players_legal_turns_are_not_warned() -> None:
    feeder = referee(table(players=3, display=[12]))
    feeder.play(pick(0, R), pick(0, B), frames=6)  # a second marble: one warning
    feeder.play(Step("end_turn", 0), pick(1, K), frames=6)  # Ben's legal turn
    feeder.play(Step("end_turn", 1), file(2, 12), frames=6)  # Cy's legal turn
    feeder.play(Step("end_turn", 2), pick(0, Y), frames=6)  # Ana's next one
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("SECOND_MAIN_ACTION", 0, 0)]
    steps = [k for k in turns_of(feeder) if k[2] in ("pick", "file")]
    assert steps == [(0, 0, "pick"), (0, 0, "pick"), (1, 1, "pick"), (2, 2, "file"), (3, 0, "pick")]


def test_a_move_out_of_turn_is_told_by_the_current_players_move_after_it() -> None:
    # Ben takes a marble before Ana's main action. Alone, that reads as Ana's turn passing
    # without a trace (a declined Research is likelier than a move out of turn); once Ana plays
    # next, the other reading needs two traceless turns (Ana's, then Cy's) and the move out of
    # turn is likelier: it is warned, on Ana's turn, and Ana's move stays hers.
    feeder = referee(table(players=3))
    feeder.play(pick(1, B), frames=6)
    assert feeder.tracker.warnings == []
    feeder.play(pick(0, R), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("NOT_YOUR_TURN", 1, 0)]
    assert (t.state.turn, t.state.current) == (0, 0)
    assert [k for k in turns_of(feeder)] == [(0, 1, "pick"), (0, 0, "pick")]


def test_the_same_player_again_after_the_main_action_is_their_turn_going_on() -> None:
    # Ana picks twice: a second marble, rather than Ben's and Cy's turns both passing unseen.
    feeder = referee(table(players=3))
    feeder.play(pick(0, R), frames=6)
    feeder.play(pick(0, B), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("SECOND_MAIN_ACTION", 0, 0)]
    assert t.state.turn == 0


def test_a_reading_gone_back_over_is_replayed_the_same_from_the_record(tmp_path: Path) -> None:
    path = tmp_path / "game.db"
    start = table(players=3)
    tracker = Tracker.create(path, ["Ana", "Ben", "Cy"], state=start)
    feeder = Feeder(tracker, state=start)
    feeder.show(frames=4)
    feeder.play(pick(1, B), frames=6)  # read as Ana's traceless turn, then gone back over
    feeder.play(pick(0, R), frames=6)
    assert [w.code for w in tracker.warnings] == ["NOT_YOUR_TURN"]
    revised = [e for e in tracker.record.entries("state") if e.payload["reason"] == "revise"]
    assert len(revised) == 1 and revised[0].payload["log"] == 0
    tracker.record.close()
    reopened = Tracker.open(path)
    assert reopened.state == tracker.state and reopened.log == tracker.log
    assert [w.code for w in reopened.warnings] == ["NOT_YOUR_TURN"]


def test_a_person_moves_the_inferred_boundary_and_the_record_replays_it(tmp_path: Path) -> None:
    # Ana picks twice with nothing between: read as a second marble. A person who saw Ben and Cy
    # decline a Research each says three turns ended since the start of turn 1.
    path = tmp_path / "game.db"
    start = table(players=3)
    tracker = Tracker.create(path, ["Ana", "Ben", "Cy"], state=start)
    feeder = Feeder(tracker, state=start)
    feeder.show(frames=4)
    feeder.play(pick(0, R), frames=6)
    feeder.play(pick(0, B), frames=6)
    assert [w.code for w in tracker.warnings] == ["SECOND_MAIN_ACTION"]
    update = tracker.reread_turns(0, 3, "Cleo")
    assert (tracker.state.turn, tracker.state.current) == (3, 0)
    ends = [(line.turn, line.player, line.ended) for line in tracker.log if line.step["kind"] == "end_turn"]
    assert ends == [(0, 0, "person"), (1, 1, "person"), (2, 2, "person")]
    assert [line.turn for line in tracker.log if line.step["kind"] == "pick"] == [0, 3]
    assert update.warnings == [] and any("Cleo set 3 turn end(s)" in n for n in tracker.notes)
    feeder.show(frames=6)  # the same table: nothing more to explain, no new warning
    assert [w.code for w in tracker.warnings] == ["SECOND_MAIN_ACTION"]
    tracker.record.close()
    reopened = Tracker.open(path)
    assert reopened.state == tracker.state and reopened.log == tracker.log


def test_moving_a_boundary_is_refused_with_one_clear_reason() -> None:
    feeder = referee(table(players=3))
    feeder.play(pick(0, R), frames=6)
    t = feeder.tracker
    for args, words in (
        ((7, 1), "from_turn: expected one of the turns [0]"),
        ((0, -1), "ends: expected a whole number of turns 0..6"),
    ):
        with pytest.raises(TrackerError, match=re.escape(words)):
            t.reread_turns(*args, "Cleo")
    feeder.camera.hidden = {"ring1"}
    feeder.show(frames=4)
    with pytest.raises(TrackerError, match="not fully in view"):
        t.reread_turns(0, 1, "Cleo")


def test_a_table_nothing_explains_is_taken_as_seen_once_play_goes_on_past_it() -> None:
    start = table(players=3, rings={0: (1, 0, 0, 0)})
    feeder = referee(start)
    t = feeder.tracker
    # Ana's red marble reads blue (nothing explains it): asked, and kept for a person to answer.
    blue = dataclasses.replace(
        start,
        players=(dataclasses.replace(start.players[0], ring=(0, 1, 0, 0)), *start.players[1:]),
        dispenser=(start.dispenser[0] + 1, start.dispenser[1] - 1, *start.dispenser[2:]),
    )
    feeder.show(blue, frames=8)
    assert [w.kind for w in t.warnings] == ["uncertain"] and t.state.players[0].ring == (1, 0, 0, 0)
    # Nobody answers and play goes on (Ana takes a marble): still nothing explains the table, so
    # the referee goes on from the table as seen instead of waiting.
    feeder.play(pick(0, K), frames=20)
    assert t.state.players[0].ring == feeder.state.players[0].ring
    assert any("play went on" in n and "taken as seen" in n for n in t.notes)
    assert all(w.kind == "uncertain" for w in t.warnings)


def seen_arms(feeder: Feeder) -> Feeder:
    """The camera reports the players' arms from now on, without error."""
    feeder.camera.reach_noise = ReachNoise()
    return feeder


def test_a_round_of_declined_research_seen_by_the_arms_is_not_a_second_marble() -> None:
    # The table alone reads Ana's second marble (test above); Ben's and Cy's arms reaching to
    # the deck say their turns passed: a round of declined Research, no warning.
    feeder = seen_arms(referee(table(players=3, deck_order={1: [20, 21, 22]})))
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, R), frames=6)
    state = apply(feeder.state, Step("end_turn", 0))
    for seat in (1, 2):
        feeder.reach(seat, "deck/1", 3)
        state = declined(state)
        feeder.show(state, frames=4)
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, B), frames=6)
    t = feeder.tracker
    assert t.warnings == []
    assert (t.state.turn, t.state.current) == (3, 0)
    assert [k for k in turns_of(feeder) if k[2] == "pick"] == [(0, 0, "pick"), (3, 0, "pick")]
    assert {(turn, player) for turn, player, kind in turns_of(feeder) if kind == "research"} == {
        (1, 1),
        (2, 2),
    }


def test_a_move_out_of_turn_is_told_by_whose_arm_made_it() -> None:
    # Ben's arm takes a marble while Ana has not reached for anything: a move out of turn,
    # read so at once (not first as Ana's turn passing without a trace).
    feeder = seen_arms(referee(table(players=3)))
    feeder.reach(1, "energy_row")
    feeder.play(pick(1, B), frames=6)
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, R), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("NOT_YOUR_TURN", 1, 0)]
    assert [k for k in turns_of(feeder)] == [(0, 1, "pick"), (0, 0, "pick")]
    assert not any("re-explained" in n for n in t.notes)


def test_declined_research_whose_arms_were_seen_around_a_move_is_no_move_out_of_turn() -> None:
    # "A traceless turn, a move, a traceless turn" reads from the table alone like Ben's move out
    # of turn (test above); Ana's and Cy's arms reaching to the deck say they declined a Research.
    feeder = seen_arms(referee(table(players=3, deck_order={1: [20, 21, 22]})))
    feeder.reach(0, "deck/1", 3)
    feeder.show(declined(feeder.state), frames=4)
    feeder.reach(1, "energy_row")
    feeder.play(pick(1, B), frames=6)
    feeder.reach(2, "deck/1", 3)
    feeder.show(declined(apply(feeder.state, Step("end_turn", 1))), frames=4)
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, R), frames=6)
    t = feeder.tracker
    assert t.warnings == []
    assert (t.state.turn, t.state.current) == (3, 0)
    assert [k for k in turns_of(feeder) if k[2] == "pick"] == [(1, 1, "pick"), (3, 0, "pick")]


def test_a_marble_taken_after_a_pause_that_ended_ones_turn_is_a_move_out_of_turn() -> None:
    # Ana takes her marble and the table stands still, nobody reaching in: her turn is over.
    # Her arm then takes another before Ben moves: the same tables and arms as a second marble
    # in her turn (test below), but the pause between says Ben's turn had begun.
    feeder = seen_arms(referee(table(players=3)))
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, R), frames=12)
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, B), frames=6)
    feeder.reach(1, "energy_row")
    feeder.play(pick(1, K), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("NOT_YOUR_TURN", 0, 1)]
    assert [k for k in turns_of(feeder) if k[2] == "pick"] == [(0, 0, "pick"), (1, 0, "pick"), (1, 1, "pick")]


def test_a_second_marble_taken_without_a_pause_is_the_turn_going_on() -> None:
    feeder = seen_arms(referee(table(players=3)))
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, R), frames=4)
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, B), frames=6)
    feeder.reach(1, "energy_row")
    feeder.play(pick(1, K), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("SECOND_MAIN_ACTION", 0, 0)]
    assert [k for k in turns_of(feeder) if k[2] == "pick"] == [(0, 0, "pick"), (0, 0, "pick"), (1, 1, "pick")]


def test_turns_that_left_no_trace_may_come_first_and_end_on_another_players_turn() -> None:
    # Ana has taken her marble; Ana takes another. Read with her turn ended first (the arms or
    # a pause put it there), the end of her turn comes before the marble, which is then out of
    # turn in Ben's: the table after her turn is Ben's turn, not a whole round later.
    start = apply(apply(table(players=3), pick(0, R)), Step("dispense", color=R))
    assert start.main_done and not start.chance
    seen = dataclasses.replace(view_of(force(start, pick(0, B))[0]), turn_player=None)  # as a camera sees it
    hints = Hints(end_turns=1, quiet_turns=True)
    late = quiet_first(start, seen, 1, 0, hints, TrackerSettings())
    assert late is not None
    assert [(st.kind, st.player) for st in late.steps if not st.is_chance] == [("end_turn", 0), ("pick", 0)]
    assert [e.code for _, e in late.violations] == ["NOT_YOUR_TURN"]


def test_the_arms_choose_between_a_second_marble_and_a_move_out_of_turn_the_search_both_finds() -> None:
    # Ana has her marble, and her turn is over (a pause). Cy's arm takes one, then Ben's, then
    # Cy's another, seen together: two turns ended, and either Cy took two in his turn (the
    # search's first reading) or his first was out of turn, in Ben's, before Ben's own. The
    # arms' order says the second.
    feeder = seen_arms(referee(table(players=3)))
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, R), frames=12)
    feeder.reach(2, "energy_row")
    feeder.play(pick(2, K), frames=1)
    feeder.reach(1, "energy_row")
    feeder.play(pick(1, B), frames=1)
    feeder.reach(2, "energy_row")
    feeder.play(pick(2, Y), frames=6)
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, R), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("NOT_YOUR_TURN", 2, 1)]
    assert [k for k in turns_of(feeder)] == [
        (0, 0, "pick"),
        (0, 0, "end_turn"),
        (1, 2, "pick"),
        (1, 1, "pick"),
        (1, 1, "end_turn"),
        (2, 2, "pick"),
        (2, 2, "end_turn"),
        (3, 0, "pick"),
    ]


def test_the_search_reads_a_rule_break_as_a_move_out_of_turn_first_when_asked() -> None:
    start = apply(apply(table(players=3), pick(0, R)), Step("dispense", color=R))
    # Ben takes two marbles (the Row refilled after each): in his turn, or one of them in Ana's
    ben = apply(force(start, pick(1, B))[0], Step("dispense", color=Y))
    seen = force(apply(ben, Step("end_turn", 0)), pick(1, K))[0]
    view = dataclasses.replace(view_of(seen), turn_player=None)
    hints = Hints(end_turns=1, quiet_turns=True)
    own = explain(start, view, hints, 2)
    other = explain(start, view, dataclasses.replace(hints, out_of_turn_first=True), 2)
    assert own is not None and other is not None
    assert [e.code for _, e in own.violations] == ["SECOND_MAIN_ACTION"]
    assert [e.code for _, e in other.violations] == ["NOT_YOUR_TURN"]


def test_a_move_out_of_turn_is_no_trace_of_the_turn_it_falls_in() -> None:
    # Ben takes a marble during Ana's turn, Ana declines a Research (no trace), Ben takes another
    # in his own turn: Ana's turn still left no trace, whoever else moved in it.
    start = table(players=3, deck_order={1: [20, 21, 22]})
    ben = apply(force(start, pick(1, B))[0], Step("dispense", color=Y))
    seen = force(apply(declined(ben), pick(1, K)), Step("dispense", color=Y))[0]
    view = dataclasses.replace(view_of(seen), turn_player=None)
    hints = Hints(end_turns=1, quiet_turns=True, out_of_turn_first=True)
    found = explain(start, view, hints, 2)
    assert found is not None
    assert [e.code for _, e in found.violations] == ["NOT_YOUR_TURN"]
    assert [(st.kind, st.player) for st in found.steps if st.kind in ("pick", "end_turn")] == [
        ("pick", 1),
        ("end_turn", 0),
        ("pick", 1),
    ]
    assert found.quiet == 1


def test_one_rule_broken_twice_in_a_turn_by_one_player_is_warned_once() -> None:
    # Ana takes three marbles: the second and the third break the same rule in the same turn.
    # The referee warns once ("warns once, accepts the table as it now is for the rest of that
    # turn"); Ben's next turn is his and legal.
    feeder = referee(table(players=3))
    feeder.play(pick(0, R), pick(0, B), frames=6)
    feeder.play(pick(0, Y), frames=6)
    feeder.play(Step("end_turn", 0), pick(1, K), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("SECOND_MAIN_ACTION", 0, 0)]
    assert [k for k in turns_of(feeder) if k[2] == "pick"] == [(0, 0, "pick")] * 3 + [(1, 1, "pick")]


def test_a_player_moving_out_of_turn_twice_in_a_turn_is_warned_once() -> None:
    # Ben takes two marbles, one after the other, before Ana has played: one warning per
    # player, rule and turn, the table then taken as it now is; Ana's move is her turn's,
    # and Ben's own next turn is not warned.
    feeder = seen_arms(referee(table(players=3)))
    feeder.reach(1, "energy_row")
    feeder.play(pick(1, B), frames=6)
    feeder.reach(1, "energy_row")
    feeder.play(pick(1, K), frames=6)
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, R), frames=6)
    feeder.reach(1, "energy_row")
    feeder.play(Step("end_turn", 0), pick(1, Y), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("NOT_YOUR_TURN", 1, 0)]
    picks = [k for k in turns_of(feeder) if k[2] == "pick"]
    assert picks == [(0, 1, "pick"), (0, 1, "pick"), (0, 0, "pick"), (1, 1, "pick")]


def test_the_search_takes_a_rule_a_player_was_warned_about_this_turn_as_seen() -> None:
    # Ben was warned for a move out of turn in this turn: his next one costs no violation (and
    # gets no second warning); a move out of turn by Cy still costs one.
    start = table(players=3)
    view = dataclasses.replace(view_of(force(start, pick(1, B))[0]), turn_player=None)
    warned = Hints(warned=frozenset({(1, "NOT_YOUR_TURN")}))
    found = explain(start, view, warned, 1)
    assert found is not None and found.legal and [st.player for st in found.steps if st.kind == "pick"] == [1]
    found = explain(start, view, Hints(), 1)
    assert found is not None and [e.code for _, e in found.violations] == ["NOT_YOUR_TURN"]
    cy = dataclasses.replace(view_of(force(start, pick(2, B))[0]), turn_player=None)
    found = explain(start, cy, warned, 1)
    assert found is not None and [e.code for _, e in found.violations] == ["NOT_YOUR_TURN"]


def test_a_rule_taken_as_seen_still_weighs_against_the_other_readings_of_the_table() -> None:
    # Ben's second move out of turn in a turn he was warned for costs no violation (no second
    # warning), but it is no likelier than his first: read against turns that left no trace (Ana's
    # Research declined, then Ben's own marble), it weighs as a broken rule does.
    start = table(players=3)
    view = dataclasses.replace(view_of(force(start, pick(1, B))[0]), turn_player=None)
    warned = Hints(warned=frozenset({(1, "NOT_YOUR_TURN")}), quiet_turns=True)
    found = explain(start, view, warned, 1)
    assert found is not None and found.legal and any(found.forced)
    assert weight(found) == VIOLATION_WEIGHT
    traceless = explain(start, view, dataclasses.replace(warned, end_turns=1), 1)
    assert traceless is not None and traceless.legal and weight(traceless) == 1 < weight(found)
    # the rest of a turn whose rule break was warned is taken as seen, and weighs nothing: Ana's
    # third marble after her warned second one is her turn going on
    twice = force(apply(apply(start, pick(0, R)), Step("dispense", color=R)), pick(0, K))[0]
    twice = apply(twice, Step("dispense", color=K))
    third = dataclasses.replace(view_of(force(twice, pick(0, Y))[0]), turn_player=None)
    rest = explain(twice, third, Hints(free_until_end=True, quiet_turns=True), 1)
    assert rest is not None and rest.legal and any(rest.forced) and weight(rest) == 0


def test_a_move_out_of_turn_before_a_declined_research_is_told_by_the_arms_order() -> None:
    # Ana has taken her marble, and her turn is over (a pause). Cy takes a marble during Ben's
    # turn, then Ben reaches to a deck and declines the Research (no trace), all before the table
    # settles (the Row out of view); then Cy takes a marble in his own turn. Legal play explains
    # the first table (Ben's turn leaving no trace, then Cy's own marble), but the arms came the
    # other way round: Cy's before Ben's. The move out of turn, then Ben's turn that left no
    # trace, fits them.
    feeder = seen_arms(referee(table(players=3, deck_order={1: [20, 21, 22]})))
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, R), frames=12)
    feeder.camera.hidden = {"row"}
    feeder.reach(2, "energy_row")
    feeder.play(pick(2, B), frames=2)
    feeder.reach(1, "deck/1", 2)
    feeder.camera.hidden = set()
    feeder.show(declined(apply(feeder.state, Step("end_turn", 0))), frames=4)
    feeder.reach(2, "energy_row")
    feeder.play(pick(2, K), frames=6)
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, Y), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("NOT_YOUR_TURN", 2, 1)]
    assert [k for k in turns_of(feeder) if k[2] == "pick"] == [
        (0, 0, "pick"),
        (1, 2, "pick"),
        (2, 2, "pick"),
        (3, 0, "pick"),
    ]


@pytest.mark.parametrize("stray", [False, True])
def test_a_marble_taken_after_ones_own_declined_research_and_a_pause_is_a_move_out_of_turn(
    stray: bool,
) -> None:
    # Ben's turn: his arm reaches to a deck again and again (a Research declined: no trace), then
    # the table stands still, nobody reaching in: his turn is over. His arm then takes a marble
    # before Cy moves. From the table alone, and the seats of the arms, that is Ben's own Pick;
    # his arms over the deck and the pause between say it came in Cy's turn. (``stray``: an arm
    # read as Ana's for a frame just before Ben's, which the arms' count in seat order takes for
    # a round more: his arm before and after the pause still says one turn ended there.)
    feeder = seen_arms(referee(table(players=3, deck_order={1: [20, 21, 22]})))
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, R), frames=12)
    feeder.reach(1, "deck/1", 3)
    feeder.show(frames=3)
    feeder.reach(1, "deck/1", 2)
    feeder.show(declined(apply(feeder.state, Step("end_turn", 0))), frames=10)
    if stray:
        feeder.reach(0, "table", 1)
    feeder.reach(1, "energy_row")
    feeder.play(pick(1, B), frames=4)
    feeder.reach(2, "display/1/0")
    feeder.play(file(2, feeder.state.display[0][0]), frames=6)
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, Y), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("NOT_YOUR_TURN", 1, 2)]
    assert [k for k in turns_of(feeder) if k[2] in ("pick", "file")] == [
        (0, 0, "pick"),
        (2, 1, "pick"),
        (2, 2, "file"),
        (3, 0, "pick"),
    ]


def test_the_order_players_areas_were_read_changing_in_tells_a_move_out_of_turn() -> None:
    # Ana has taken her marble, and her turn is over (a pause). Cy takes a marble during Ben's turn;
    # his ring reads changed steadily while Ben's still reads as it was; then Ben takes his, his arm
    # read over the Display (on its way), not the Row. From the arms alone Ben's own marble then
    # Cy's in his own turn (Ben's arm missed, a stray one) weighs about what Cy's move out of turn
    # does (Ben's arm over the wrong place); the table's order says Cy's marble came first.
    feeder = seen_arms(referee(table(players=3)))
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, R), frames=12)
    feeder.reach(2, "energy_row")
    feeder.play(pick(2, K), frames=1, between=1)
    feeder.reach(1, "display/1/0", 1)
    feeder.play(pick(1, B), frames=8)
    feeder.reach(2, "energy_row")
    feeder.play(pick(2, Y), frames=6)
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, R), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("NOT_YOUR_TURN", 2, 1)]
    # (within Ben's turn the search puts Cy's marble where the table allows: before or after his)
    assert sorted(k for k in turns_of(feeder) if k[2] == "pick") == [
        (0, 0, "pick"),
        (1, 1, "pick"),
        (1, 2, "pick"),
        (2, 2, "pick"),
        (3, 0, "pick"),
    ]


def test_a_refill_of_the_colour_taken_lands_unseen_and_makes_no_pause() -> None:
    # Ana takes a red marble and the Row is refilled with red: the Row without it stands two
    # frames (never read steadily), then reads as before. Her table stands five frames after the
    # refill, seven after her Pick's change: counted from the Pick, a pause that would end her
    # turn. Her second marble is then a second main action in her turn, not one taken in Ben's.
    feeder = seen_arms(referee(table(players=3)))
    assert feeder.state.row[R] > 0
    feeder.reach(0, "energy_row", frames=1)
    feeder.play(pick(0, R), Step("dispense", color=R), between=2, frames=5)
    feeder.reach(0, "energy_row", frames=1)
    feeder.play(pick(0, K), frames=8)
    feeder.reach(1, "energy_row")
    feeder.play(Step("end_turn", 0), pick(1, B), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("SECOND_MAIN_ACTION", 0, 0)]
    assert [k for k in turns_of(feeder) if k[2] == "pick"] == [(0, 0, "pick"), (0, 0, "pick"), (1, 1, "pick")]


def last_turn(*gizmos: int) -> State:
    """Cy's turn, the game's last: he has built, and may still use the triggered ``gizmos``."""
    return table(
        players=3,
        gizmos={2: list(gizmos)},
        current=2,
        main_done=True,
        end_triggered=True,
        triggered=gizmos,
        turn=29,
    )


def test_the_last_turn_does_not_end_while_a_zone_out_of_view_may_be_changing() -> None:
    # Cy's last turn: he takes a black marble, and #29 draws him one from the dispenser. His ring
    # is out of view for nine frames after his arm leaves (the drawn marble settling, a glare):
    # no arm, but the table is not known to stand; the turn ends only once it is seen whole, and
    # the drawn marble is #29's, not play after the game.
    state = table(players=3, gizmos={2: [29]}, current=2, end_triggered=True, turn=29)
    feeder = seen_arms(referee(state))
    feeder.reach(2, "energy_row", frames=1)
    feeder.play(pick(2, K), Step("dispense", color=R), frames=4)
    feeder.reach(2, "dispenser", frames=2)
    feeder.camera.hidden = {"ring2"}
    feeder.play(Step("use", 2, gizmo=29), Step("dispense", color=B), frames=9)
    feeder.camera.hidden = set()
    feeder.show(frames=8)
    t = feeder.tracker
    assert t.warnings == [] and t.state.game_over
    assert [(line.turn, line.step["kind"]) for line in t.log if line.player is not None] == [
        (29, "pick"),
        (29, "use"),
        (29, "end_turn"),
    ]


def test_a_pause_ends_the_last_turn_though_a_triggered_gizmo_is_left() -> None:
    # Cy uses #37 (a VP token) and may still use #34; his table then stands eight frames, no arm
    # over it: a pause, which ends a turn (the player is done), so his marble after it is
    # GAME_OVER rather than #34's reward, though the twelve frames the tracker waits for a clear
    # view had not passed.
    feeder = seen_arms(referee(last_turn(34, 37)))
    feeder.reach(2, "2/vp", frames=2)
    feeder.play(Step("use", 2, gizmo=37), frames=8)
    log = feeder.tracker.log
    assert [(line.step["kind"], line.ended) for line in log] == [("use", None), ("end_turn", "table")]
    feeder.reach(2, "energy_row", frames=1)
    feeder.play(pick(2, R), frames=8)
    t = feeder.tracker
    assert t.state.game_over
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("GAME_OVER", 2, 30)]
    # ... and with the arm back within the pause, #34's reward in the turn
    feeder = seen_arms(referee(last_turn(34, 37)))
    feeder.reach(2, "2/vp", frames=2)
    feeder.play(Step("use", 2, gizmo=37), frames=4)
    feeder.reach(2, "energy_row", frames=1)
    feeder.play(Step("use", 2, gizmo=34), pick(2, R), frames=8)
    assert feeder.tracker.warnings == []
    assert [(line.turn, line.step["kind"]) for line in feeder.tracker.log if line.player is not None] == [
        (29, "use"),
        (29, "use"),
        (29, "pick"),
        (29, "end_turn"),
    ]


def test_the_last_turn_stays_open_while_the_players_arm_keeps_reaching_in() -> None:
    # Cy uses #37 (a VP token) and may still use #34. His arm reaches over a deck now and then
    # (cards put back under it: nothing the camera sees changes) for twelve frames, then he
    # uses #34 and takes a marble: his turn was never still for a pause, so the marble is #34's.
    feeder = seen_arms(referee(last_turn(34, 37)))
    feeder.reach(2, "2/vp", frames=2)
    feeder.play(Step("use", 2, gizmo=37), frames=3)
    for _ in range(3):
        feeder.reach(2, "deck/1", frames=1)
        feeder.show(frames=3)
    feeder.reach(2, "energy_row", frames=1)
    feeder.play(Step("use", 2, gizmo=34), pick(2, R), frames=8)
    t = feeder.tracker
    assert t.warnings == []
    assert [(line.turn, line.step["kind"]) for line in t.log if line.player is not None] == [
        (29, "use"),
        (29, "use"),
        (29, "pick"),
        (29, "end_turn"),
    ]


def test_a_zone_that_changed_out_of_view_moved_when_it_went_out_of_view() -> None:
    # Ana takes a marble; her table stands five frames; her arm, missed by the camera, hides
    # the Row for two frames while she takes a second one. The Row reads changed only once the
    # hand has gone, but it went out of view with the hand: the table moved then, after five
    # still frames, not seven (a pause that would have ended her turn before the second marble).
    feeder = seen_arms(referee(table(players=3)))
    feeder.reach(0, "energy_row", frames=1)
    feeder.play(pick(0, R), Step("dispense", color=B), frames=5)
    feeder.show(None, 2, (0, "energy_row"), seen=False)
    feeder.play(pick(0, K), Step("dispense", color=Y), frames=8)
    feeder.reach(1, "energy_row")
    feeder.play(Step("end_turn", 0), pick(1, B), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("SECOND_MAIN_ACTION", 0, 0)]
    assert [k for k in turns_of(feeder) if k[2] == "pick"] == [(0, 0, "pick"), (0, 0, "pick"), (1, 1, "pick")]


def test_a_move_read_after_a_pause_that_followed_another_players_move_is_in_a_later_turn() -> None:
    # Ana has taken her marble. Ben takes one (his arm seen in one frame), and the table stands
    # still, nobody reaching in, while Cy's Archive is out of view (nothing is explained yet).
    # Then Ana's arm takes a marble, then Cy's. The pause after Ben's move ended his turn: Ana's
    # marble is out of turn in Cy's turn, not in Ben's (the same tables and arms without the
    # pause would read either way).
    start = apply(apply(table(players=3), pick(0, R)), Step("dispense", color=B))
    feeder = seen_arms(referee(start))
    feeder.camera.hidden = {"archive2"}
    feeder.reach(1, "energy_row", frames=1)
    feeder.play(Step("end_turn", 0), pick(1, Y), Step("dispense", color=B), frames=13)
    feeder.reach(0, "energy_row", frames=1)
    feeder.play(pick(0, R), Step("dispense", color=B), frames=3)
    feeder.camera.hidden = set()
    feeder.show(frames=5)
    feeder.reach(2, "energy_row")
    feeder.play(Step("end_turn", 1), pick(2, K), frames=8)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("NOT_YOUR_TURN", 0, 2)]
    assert [k for k in turns_of(feeder) if k[2] == "pick"] == [(1, 1, "pick"), (2, 0, "pick"), (2, 2, "pick")]


def test_the_benchmark_pairs_steps_by_the_longest_common_sequence_not_the_longest_run() -> None:
    # Seed 4040's game 4043, turns 67-71, as step keys: Cy's declined Research put back cards
    # the camera never saw (the tracker names others), and Ben's end of turn followed by Cy's
    # Research declined putting #6 back first recurs three turns later. The longest run first
    # (difflib) pairs the tracker's turn 67-68 with the true turns 70-71; the longest common
    # sequence pairs every step with its own turn.
    from benchmarks.referee import _align

    truth = [
        "e1",
        "r2",
        "s2",
        "b77",
        "b88",
        "b85",
        "e2",
        "u8",
        "e0",
        "p0",
        "u37",
        "e1",
        "r2",
        "s2",
        "b6",
        "b25",
        "b28",
        "e2",
    ]
    got = [
        "e1",
        "r2",
        "s2",
        "b6",
        "b11",
        "b16",
        "e2",
        "u8",
        "e0",
        "u37",
        "p0",
        "e1",
        "r2",
        "s2",
        "b6",
        "b16",
        "b19",
        "e2",
    ]
    turns_true = [67, 68, 68, 68, 68, 68, 68, 69, 69, 70, 70, 70, 71, 71, 71, 71, 71, 71]
    turns_got = [67, 68, 68, 68, 68, 68, 68, 69, 69, 70, 70, 70, 71, 71, 71, 71, 71, 71]
    pairs = _align([(k,) for k in truth], [(k,) for k in got])
    assert len(pairs) == 12 and (11, 0) not in pairs  # difflib: truth 11-14 with got 0-3, and 5 pairs in all
    assert all(turns_true[i] == turns_got[j] for i, j in pairs)


def test_a_refill_accepted_past_a_hand_dates_the_table_it_leaves() -> None:
    # Ana takes a marble; the Row without it is read, then refilled while her VP tokens are out
    # of view: the refill is accepted past the hidden zone (her own area, her own arm). Her table
    # then stands eight frames from the refill, nobody reaching in: a pause (counted from the
    # Pick's table, it stood four frames before the refill moved it). Her marble after it is out
    # of turn in Ben's turn, not a second one in hers.
    feeder = seen_arms(referee(table(players=3)))
    feeder.reach(0, "energy_row", frames=1)
    caught = apply(feeder.state, pick(0, R))
    feeder.show(caught, frames=4)  # the Row before its refill
    feeder.camera.hidden = {"vp0"}
    feeder.show(apply(caught, Step("dispense", color=B)), frames=9)
    assert [line.step["kind"] for line in feeder.tracker.log] == ["pick", "dispense"]  # past the hand
    feeder.camera.hidden = set()
    feeder.reach(0, "energy_row", frames=1)
    feeder.play(pick(0, K), Step("dispense", color=Y), frames=6)
    feeder.reach(1, "energy_row")
    feeder.play(pick(1, B), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("NOT_YOUR_TURN", 0, 1)]
    assert [k for k in turns_of(feeder) if k[2] == "pick"] == [(0, 0, "pick"), (1, 0, "pick"), (1, 1, "pick")]


def test_a_rule_broken_in_the_last_turn_is_decided_once_the_table_stands() -> None:
    # Cy, in the game's last turn, uses #37 though nothing triggered it (NOT_TRIGGERED, which
    # waits for the end of the turn: the trigger may still come). No next player will show the
    # turn over; his table stands still, nobody reaching in: the turn is over, the break certain,
    # and the game ends.
    state = table(players=3, gizmos={2: [37]}, current=2, main_done=True, end_triggered=True, turn=29)
    feeder = seen_arms(referee(state))
    feeder.reach(2, "2/vp", frames=2)
    feeder.play(Step("use", 2, gizmo=37), frames=10)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("NOT_TRIGGERED", 2, 29)]
    assert t.state.game_over
    assert [(line.turn, line.step["kind"]) for line in t.log if line.player is not None] == [
        (29, "use"),
        (29, "end_turn"),
    ]


def test_a_table_never_seen_whole_is_read_zone_by_zone() -> None:
    # Cy, in the game's last turn, takes a marble, then a second (SECOND_MAIN_ACTION). The table
    # after it stands nine frames, but never all in view at once: Ben's gizmos, then his Archive,
    # are out of view (a glare, no arm), each zone read steadily after the marble, before it went.
    # Then Ben, whose ring is full, takes a marble after the game's end. Read zone by zone, Cy's
    # table is his turn's, and Ben's marble is play after the game; before, the two changes were
    # read together and nothing explained them (three rules broken).
    state = table(players=3, current=2, end_triggered=True, turn=29, rings={1: (2, 2, 1, 0)})
    feeder = seen_arms(referee(state))
    feeder.reach(2, "energy_row", frames=1)
    feeder.play(pick(2, R), Step("dispense", color=B), frames=2)
    feeder.reach(2, "energy_row", frames=1)
    feeder.play(pick(2, K), Step("dispense", color=Y), frames=2)
    feeder.camera.hidden = {"gizmos1"}
    feeder.show(frames=3)
    feeder.camera.hidden = {"archive1"}
    feeder.show(frames=4)
    feeder.camera.hidden = set()
    feeder.reach(1, "energy_row")
    feeder.play(pick(1, B), frames=8)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [
        ("SECOND_MAIN_ACTION", 2, 29),
        ("GAME_OVER", 1, 30),
    ]
    assert t.state.game_over


def test_a_marble_taken_after_ones_declined_research_and_a_pause_by_an_arm_not_told() -> None:
    # Ana has taken her marble. Ben's arm goes to the deck again and again (a Research declined;
    # one frame read over the Row), his table stands eight frames, nobody reaching in, then the
    # Row and his ring change under an arm whose side the camera cannot tell, and Cy takes a
    # marble. Ben was done at the pause (ArmLog.paused_before_change): his marble is out of turn
    # in Cy's turn, not his own Pick, which leaves seven frames of his arm over a deck
    # unexplained (one frame over the Row no longer excuses them). Once his declined Research is
    # accepted, with his arms, the rest is asked for with Cy's turn not over (the reading's rest).
    ana = apply(table(players=3, deck_order={1: [20, 21, 22]}), pick(0, R))
    start = apply(ana, Step("dispense", color=B))
    feeder = seen_arms(referee(start))
    for zone, frames in (("deck/1", 2), ("deck/1", 2), ("energy_row", 1), ("deck/1", 3)):
        feeder.reach(1, zone, frames)
        feeder.show(frames=1)
    feeder.show(declined(apply(feeder.state, Step("end_turn", 0))), frames=8)
    feeder.show(None, 1, (1, "energy_row"), seen=False)
    feeder.play(pick(1, Y), frames=6)
    feeder.reach(2, "energy_row")
    feeder.play(pick(2, K), frames=8)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("NOT_YOUR_TURN", 1, 2)]
    assert [k for k in turns_of(feeder) if k[2] in ("pick", "research")] == [
        (1, 1, "research"),
        (2, 1, "pick"),
        (2, 2, "pick"),
    ]


def test_arms_before_a_pause_the_table_stood_through_are_no_step_after_it() -> None:
    # Ben's turn: his arm reaches to a deck, two frames of it read over his own area (where a
    # Pick's marble goes), then the table stands still as it was, nobody reaching in; then his
    # arm takes a marble, and Cy files a card. Nothing on the table changed before the pause
    # ended: the marble came after it, so his arms before it are no Pick's but his Research
    # declined, and the marble is out of turn in Cy's turn (read as his own Pick, his frames over
    # his area made the run fit it as well as the deck).
    feeder = seen_arms(referee(table(players=3, current=1, turn=1, deck_order={1: [20, 21, 22]})))
    feeder.reach(1, "deck/1", 2)
    feeder.show(frames=2)
    feeder.reach(1, "1/gizmos", 2)
    feeder.show(declined(feeder.state), frames=10)
    feeder.reach(1, "energy_row")
    feeder.play(pick(1, B), frames=4)
    feeder.reach(2, "display/1/0")
    feeder.play(file(2, feeder.state.display[0][0]), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("NOT_YOUR_TURN", 1, 2)]
    assert [k for k in turns_of(feeder) if k[2] in ("pick", "file", "research")] == [
        (1, 1, "research"),
        (2, 1, "pick"),
        (2, 2, "file"),
    ]


@pytest.mark.parametrize("hidden_first", [False, True])
def test_a_marble_taken_after_a_research_declined_the_last_table_stood_through_is_out_of_turn(
    hidden_first: bool,
) -> None:
    # Ana's marble is accepted (her turn goes on until the table shows it over). Ben declines a
    # Research, his arm seen over the deck in two frames only (the rest of the gesture missed),
    # the table stands still, nobody reaching in, then he takes a marble before Cy moves, and Cy
    # files. Ben's arms before the pause are his declined Research, the marble after it out of
    # turn: read as his own Pick, his arms before the pause explain nothing (two frames weigh
    # a little less than a turn that left no trace and a broken rule) and his turn goes on past
    # the pause that ended it. (``hidden_first``: his hand, missed, hides the Row a frame before
    # his arm is seen over it: the table changed as the pause ended, not before it.)
    feeder = seen_arms(referee(table(players=3, deck_order={1: [20, 21, 22]})))
    feeder.reach(0, "energy_row")
    feeder.play(pick(0, R), frames=8)
    feeder.reach(1, "deck/1", 1)
    feeder.show(frames=3)
    feeder.reach(1, "deck/1", 1)
    feeder.show(declined(apply(feeder.state, Step("end_turn", 0))), frames=10)
    if hidden_first:
        feeder.show(None, 1, (1, "energy_row"), seen=False)
    feeder.reach(1, "energy_row", 1)
    feeder.play(pick(1, B), frames=4)
    feeder.reach(2, "display/1/0")
    feeder.play(file(2, feeder.state.display[0][0]), frames=6)
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("NOT_YOUR_TURN", 1, 2)]
    assert [k for k in turns_of(feeder) if k[2] in ("pick", "file", "research")] == [
        (0, 0, "pick"),
        (1, 1, "research"),
        (2, 1, "pick"),
        (2, 2, "file"),
    ]


def test_with_nothing_legal_left_the_last_turn_still_ends_only_at_a_pause() -> None:
    # Cy's last turn: he uses #37 (a VP token), the last gizmo it triggered, so nothing legal is
    # left but ending the turn; four frames later, within a moment and no pause, he takes a
    # marble: his turn going on, a second main action, not play after the game (the three
    # frames ``final_wait`` gives a turn with nothing left, shorter than a pause, had ended it).
    feeder = seen_arms(referee(last_turn(37)))
    feeder.reach(2, "2/vp", frames=2)
    feeder.play(Step("use", 2, gizmo=37), frames=4)
    assert not feeder.tracker.state.game_over
    feeder.reach(2, "energy_row", frames=1)
    feeder.play(pick(2, R), frames=10)
    t = feeder.tracker
    assert t.state.game_over
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("SECOND_MAIN_ACTION", 2, 29)]


def test_a_recording_that_ends_before_a_pause_ends_its_last_turn() -> None:
    # The same last turn, and the recording ends four frames after its use, within a moment: no
    # one can go on after a recording's end, so the turn is over after the shorter wait of a turn
    # with nothing left (the bundled recording ends so); at its first frame it is not yet.
    feeder = seen_arms(referee(last_turn(37)))
    feeder.reach(2, "2/vp", frames=2)
    feeder.play(Step("use", 2, gizmo=37), frames=1)
    t = feeder.tracker
    assert not t.footage_ended().steps
    assert not t.state.game_over
    feeder.show(frames=3)  # the same table, three frames more
    assert not t.state.game_over
    update = t.footage_ended()
    assert [s.kind for s in update.steps] == ["end_turn"]
    assert t.state.game_over and not t.warnings


def test_a_move_out_of_turn_leaves_the_current_players_own_steps_refereed_as_usual() -> None:
    # Ben takes a marble during Ana's turn (warned). Ana then researches, thinks over the cards
    # (the table stands still, a pause), builds one of them and puts the others back. Ben's move
    # out of turn is no rule Ana broke: her steps are refereed as usual, so a Build of a card
    # from a deck is no free step, and the Research that drew it is read (seed 7272, turn 71:
    # taken as seen, the one-step Build was found first, weighed down by her arms over the deck,
    # and "her Research declined, then that Build out of turn" won; her turn closed while she
    # was still putting cards back, and the count slipped).
    feeder = seen_arms(referee(table(players=3, rings={0: (0, 1, 0, 0)}, deck_order={1: [20, 21, 22]})))
    feeder.reach(1, "energy_row")
    feeder.play(pick(1, K), frames=6)
    feeder.reach(0, "deck/1", 3)
    feeder.play(Step("research", 0, level=1), frames=10)
    feeder.reach(0, "0/gizmos", 1)
    feeder.play(build(0, 21, (0, 1, 0, 0)), frames=4)
    feeder.reach(0, "deck/1", 2)
    feeder.play(Step("bottom", 0, card=20), frames=3)
    feeder.reach(0, "deck/1", 3)  # the last card goes back under the deck by itself
    feeder.show(frames=8)
    feeder.reach(1, "energy_row")
    feeder.play(Step("end_turn", 0), pick(1, R), frames=6)
    t = feeder.tracker
    assert [(w.kind, w.code, w.player, w.turn) for w in t.warnings] == [("violation", "NOT_YOUR_TURN", 1, 0)]
    assert [k for k in turns_of(feeder) if k[2] in ("pick", "research", "build")] == [
        (0, 1, "pick"),
        (0, 0, "research"),
        (0, 0, "build"),
        (1, 1, "pick"),
    ]
    assert t.state.players[0].gizmos == (0, 21)
