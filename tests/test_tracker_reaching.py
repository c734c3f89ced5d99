"""Whose arm reached in, weighed against a reading (referee.tracker.reaching): the pure parts."""

from __future__ import annotations

import dataclasses

from referee.gizmos import Step, apply
from referee.observation import ReachSighting
from referee.tracker.reaching import (
    PAUSE,
    PAUSE_FRAMES,
    W_MISSED,
    W_ORDER,
    W_PAUSE,
    W_STRAY,
    ArmLog,
    actors,
    goes_on,
    orders,
    reach_cost,
    refill_unseen,
    stray,
    zone_class,
)
from tests.tables import table
from tests.test_tracker import K, R, pick


def test_a_round_of_declined_research_is_three_players_acting_a_second_marble_one() -> None:
    start = table(players=3)
    research_round = [pick(0, R), Step("end_turn", 0), Step("end_turn", 1), Step("end_turn", 2), pick(0, K)]
    second_marble = [pick(0, R), pick(0, K)]
    assert actors(start, research_round) == [0, 1, 2, 0]
    assert actors(start, second_marble) == [0]
    arms = [0, 0, 1, 1, 1, 2, 0]  # frames: Ana's arm, Ben's to a deck, Cy's, Ana's again
    assert reach_cost(actors(start, research_round), arms) == 0
    # Ben's arm seen in three frames, Cy's in one, both unexplained
    assert reach_cost(actors(start, second_marble), arms) == stray(3) + stray(1)
    assert stray(1) == W_STRAY < stray(2) < stray(3) and stray(50) == stray(10)
    # every arm missed: the round of Research costs three players unseen
    assert reach_cost(actors(start, research_round), []) == 4 * W_MISSED


def test_a_move_out_of_turn_is_its_players_arm_and_an_arm_seen_twice_counts_once() -> None:
    start = table(players=3)
    out_of_turn = [pick(1, R)]  # Ben takes a marble during Ana's turn
    traceless = [Step("end_turn", 0), pick(1, R)]  # Ana declined a Research, then Ben
    assert actors(start, out_of_turn) == [1] and actors(start, traceless) == [0, 1]
    assert reach_cost([1], [1, 1, 1]) == 0
    assert reach_cost([0, 1], [1]) == W_MISSED  # Ana's arm unseen
    assert reach_cost([1], [0, 1]) == W_STRAY  # ... or seen: then the traceless turn fits
    assert reach_cost([0, 1, 0], [0, 2, 0]) == W_MISSED + W_STRAY  # a seat misread
    assert reach_cost([0], [0, 2, 0]) == W_STRAY  # a stray arm between two of Ana's


def test_the_log_keeps_what_came_after_the_table_and_counts_nothing_when_hands_are_not_reported() -> None:
    start = table(players=3)
    log = ArmLog()
    log = log.add(1, None).add(2, None)
    assert not log.reported and log.cost(start, [pick(1, R)], 10) == 0
    log = log.add(3, ()).add(4, (ReachSighting(1, "energy_row", 0.9), ReachSighting(None, "table", 0.9)))
    log = log.add(5, (ReachSighting(2, "energy_row", 0.3),))  # too unsure to count
    log = log.add(7, (ReachSighting(2, "energy_row", 0.9),))
    assert log.reported and log.before(7) == (1,) and log.before(8) == (1, 2)
    assert log.turns(start, 8) == 2 and log.turns(start, 4) is None
    later = log.consume(7)
    assert later.before(100) == (2,) and later.spent == ((1, "row"),)
    assert later.cost(start, [Step("end_turn", 0), pick(1, R)], 5, again=True) == W_MISSED


def test_a_move_out_of_turn_may_come_before_or_after_the_turns_own_moves() -> None:
    start = table(players=3)
    # the search put Cy's marble after Ana's own move; the arms saw it first
    reading = [pick(0, R), pick(2, K)]
    assert actors(start, reading) == [0, 2]
    assert sorted([seat for seat, _ in order] for order in orders(start, reading)) == [[0, 2], [2, 0]]
    log = (
        ArmLog().add(1, (ReachSighting(2, "energy_row", 0.9),)).add(2, (ReachSighting(0, "energy_row", 0.9),))
    )
    assert log.cost(start, reading, 3) == 0
    # Ana's arm after Cy's: Cy's move out of turn is settled (Ana played on after it)
    assert log.settles(start, reading, 1, 3) and not log.settles(start, reading, 0, 3)
    assert not ArmLog().add(1, (ReachSighting(2, "energy_row", 0.9),)).settles(start, reading, 1, 3)


def test_a_reading_accepted_in_part_spends_only_its_own_arms() -> None:
    start = table(players=3)
    sightings = [0, 0, 2, 1, 1, 2, 2]  # Ana, a stray Cy, Ben, Cy
    log = ArmLog()
    for frame, seat in enumerate(sightings):
        log = log.add(frame, (ReachSighting(seat, "deck/1", 0.9),))
    part = log.consume_steps(start, [Step("end_turn", 0), Step("end_turn", 1)])  # Ana's and Ben's
    assert [seat for seat, _ in part.spent] == [0, 0, 2, 1, 1] and part.before(100) == (2, 2)
    # the current player's arm spent this turn: ending the turn expects no arm of theirs again
    after = ArmLog(True, (), ((0, "deck"),))
    assert after.cost(start, [Step("end_turn", 0), pick(1, R)], 5) == W_MISSED  # Ben's arm unseen
    assert ArmLog(True).cost(start, [Step("end_turn", 0), pick(1, R)], 5) == 2 * W_MISSED


def test_a_reading_accepted_in_part_leaves_its_players_arms_over_other_places() -> None:
    # Ben has played; Cy's arm goes to a deck three times (a Research declined), then to the
    # Row (a marble out of turn in Ana's turn, its verdict still to come). Accepting Cy's
    # traceless turn spends the arms over the deck, not those over the Row: they are the move's
    # (spent, the rest of the reading would see no arm at all and read Ana's turn as traceless).
    start = table(players=3, current=1, main_done=True)
    log = ArmLog()
    for frame, zone in enumerate(["deck/1", "deck/1", "deck/1", "energy_row", "energy_row"]):
        log = log.add(frame, (ReachSighting(2, zone, 0.9),))
    part = log.consume_steps(start, [Step("end_turn", 1), Step("end_turn", 2)])  # Ben's, Cy's
    assert part.spent == ((2, "deck"),) * 3 and part.sightings(100) == ((2, "row"), (2, "row"))


def test_an_arm_seen_over_another_place_than_the_reading_says_is_weighed_as_stray() -> None:
    start = table(players=3)
    pick_now = [pick(0, K), Step("end_turn", 0), pick(1, R)]  # Ana picks, then Ben
    research = [pick(0, K), Step("end_turn", 0), Step("end_turn", 1)]  # Ben declines a Research
    ana = [(0, "row")]
    over_deck = ana + [(1, "deck")] * 3  # Ben's arm three frames over a deck
    assert reach_cost(orders(start, research)[0], over_deck) == 0
    assert reach_cost(orders(start, pick_now)[0], over_deck) == stray(3)  # a Pick is no deck
    assert reach_cost(orders(start, pick_now)[0], ana + [(1, "table")] * 3) == 0  # not told where
    assert reach_cost(orders(start, pick_now)[0], ana + [(1, "deck"), (1, "row")]) == 0
    assert zone_class("deck/2") == "deck" and zone_class("display/1/0") == "display"
    assert zone_class("2/archive") == "archive" and zone_class("0/vp") == "area"
    assert zone_class("energy_row") == "row" and zone_class("dispenser") == "table"


def test_after_the_main_action_the_current_players_own_arms_are_not_strays() -> None:
    # Ana has taken her main action (a Research whose cards she still puts back under the
    # deck): her arms over the deck before Ben's pick weigh nothing; Ben's own arm is needed.
    start = dataclasses.replace(table(players=3), main_done=True)
    log = ArmLog(True, tuple((f, 0, "deck") for f in range(4)) + ((5, 1, "row"),))
    assert log.cost(start, [Step("end_turn", 0), pick(1, R)], 10) == 0
    assert log.cost(start, [Step("end_turn", 0), pick(1, R)], 5) == W_MISSED  # Ben's arm not yet seen
    before = dataclasses.replace(start, main_done=False)  # before it, they are her Research
    assert log.cost(before, [Step("end_turn", 0), pick(1, R)], 10) == 0
    assert log.cost(before, [pick(0, K), Step("end_turn", 0), pick(1, R)], 10) == stray(4)


def test_a_pause_is_the_table_standing_still_with_no_arm_after_the_accepted_one() -> None:
    # The last accepted table stands from frame 10; Ana's arm comes back at frame 20 and the
    # table changes at 22: ten frames of stillness, a pause; with her arm at 14, none.
    start = dataclasses.replace(table(players=3), main_done=True)
    accepted = ArmLog(True).consume(10)
    assert accepted.still_from == 10
    later = accepted.add(20, (ReachSighting(0, "energy_row", 0.9),)).moved(22)
    assert later.paused(22, start)
    arm = (ReachSighting(0, "energy_row", 0.9),)
    assert PAUSE_FRAMES <= 10 and not accepted.add(14, arm).paused(16, start)
    # ... nor when the table changed in between (a refill landing, a second step seen)
    assert not accepted.moved(14).add(20, (ReachSighting(0, "energy_row", 0.9),)).paused(22, start)
    # ... nor while the accepted table still owed a refill (it landed unseen, maybe under a hand)
    owing = apply(table(players=3), pick(0, R))
    assert owing.chance and not later.paused(22, owing)
    # nor without arms reported, nor when it is not known where the table began
    assert not ArmLog().consume(10).paused(22, start) and not ArmLog(True).paused(22, start)


def test_a_reading_that_has_the_turn_go_on_past_a_pause_weighs_more() -> None:
    start = dataclasses.replace(table(players=3), main_done=True)
    log = ArmLog(True).consume(10).add(20, (ReachSighting(0, "energy_row", 0.9),))
    second_marble = [pick(0, K)]  # Ana's turn goes on: a second marble
    after_her_turn = [Step("end_turn", 0), pick(0, K)]  # her turn was over: a move out of turn
    assert goes_on(second_marble) and not goes_on(after_her_turn)
    assert log.cost(start, second_marble, 22) == W_PAUSE + log.cost(start, after_her_turn, 22)
    quick = ArmLog(True).consume(10).add(13, (ReachSighting(0, "energy_row", 0.9),))
    assert quick.cost(start, second_marble, 15) == quick.cost(start, after_her_turn, 15)


def test_a_reading_that_goes_back_over_the_last_explanation_weighs_the_pause_before_it() -> None:
    # Ana's table stood still from frame 10 to 20 (a pause), then a reading from it was accepted
    # (the table from frame 22 on). Read again from before that explanation, a reading that has
    # her turn go on past the pause weighs the pause as it did the first time; without a pause
    # before it, nothing.
    start = dataclasses.replace(table(players=3), main_done=True)
    arm = (ReachSighting(0, "energy_row", 0.9),)
    after_her_turn = [Step("end_turn", 0), pick(0, K)]
    second_marble = [pick(0, K)]
    accepted = ArmLog(True).consume(10).add(20, arm).consume(22, start, after_her_turn)
    assert accepted.earlier_pause and accepted.again().paused(30, start)
    again = accepted.cost(start, second_marble, 30, again=True)
    assert again == W_PAUSE + accepted.cost(start, after_her_turn, 30, again=True)
    quick = ArmLog(True).consume(10).add(13, arm).consume(15, start, after_her_turn)
    assert not quick.earlier_pause and not quick.again().paused(30, start)
    assert quick.cost(start, second_marble, 30, again=True) == quick.cost(
        start, after_her_turn, 30, again=True
    )


def test_a_hand_over_no_place_the_camera_can_tell_does_not_excuse_the_frames_over_a_wrong_one() -> None:
    start = table(players=3)
    pick_now = [pick(0, K), Step("end_turn", 0), pick(1, R)]  # Ana picks, then Ben
    ana = [(0, "row")]
    # Ben's arm over a deck for three frames and over no told place for one: a Pick is no deck
    assert reach_cost(orders(start, pick_now)[0], ana + [(1, "deck")] * 3 + [(1, "table")]) == stray(3)
    assert reach_cost(orders(start, pick_now)[0], ana + [(1, "table")] * 4) == 0


def test_a_pause_between_two_arms_splits_them_and_ends_the_turn_of_the_player_who_paused() -> None:
    # Ben's arm over a deck (frames 1-3), the table still until his arm takes a marble at frame 12:
    # a pause between them. His Research declined and his turn over, the marble is out of turn in
    # Cy's; read as his own Pick, his arms over the deck are unexplained.
    start = dataclasses.replace(table(players=3), current=1, turn=1)
    deck = tuple((f, 1, "deck") for f in (1, 2)) + ((3, 1, "table"),)
    log = ArmLog(True, deck + ((12, 1, "row"),))
    assert log.marked(20) == ((1, "deck"), (1, "deck"), (1, "table"), PAUSE, (1, "row"))
    assert log.turns(start, 20) == 1  # Ben's turn ended, the marble in Cy's
    assert log.across_pause(1, 20) and not log.across_pause(1, 5) and not log.across_pause(0, 20)
    own_pick = [pick(1, R)]
    after_research = [Step("end_turn", 1), pick(1, R)]
    # the table stood as accepted through the pause: the Pick came after it, and the arm before
    # it (three frames) is no step's; and Ben's turn goes on past the pause that ended it
    assert log.cost(start, own_pick, 20) == stray(3) + W_PAUSE
    assert log.cost(start, after_research, 20) == 0
    # the table changing in between is no stillness, and neither are shorter gaps: no pause
    assert PAUSE not in log.moved(7).marked(20)
    quick = ArmLog(True, deck + ((3 + PAUSE_FRAMES, 1, "row"), (4 + PAUSE_FRAMES, 1, "row")))
    assert PAUSE not in quick.marked(20) and quick.turns(start, 20) is None
    assert not quick.across_pause(1, 20)
    assert quick.cost(start, own_pick, 20) == 0  # one run, as many frames over the Row as not


def test_a_reading_that_changes_the_areas_in_another_order_than_they_were_read_weighs_more() -> None:
    # Cy's ring read changed while Ben's (and Ana's) still read as accepted: Cy's marble came
    # first. Ben's Pick in his turn, then Cy's in his, contradicts that; Cy's marble out of turn
    # in Ben's turn does not, wherever the search put it among Ben's moves (the arms decide that).
    start = dataclasses.replace(table(players=3), current=1, turn=1)
    log = ArmLog(True).area_changed(5, 2, (0, 1)).area_changed(9, 1, (0,))
    assert log.area_changed(12, 2, ()).areas == log.areas  # only the first change counts
    in_turn = [pick(1, R), Step("end_turn", 1), pick(2, K)]
    assert log.order_breaks(start, in_turn) == 1
    assert log.order_breaks(start, [pick(1, R), pick(2, K)]) == 0  # Cy out of turn, after Ben's
    assert log.order_breaks(start, [pick(2, K), pick(1, R)]) == 0
    assert log.cost(start, in_turn, 20) == W_ORDER + ArmLog(True).cost(start, in_turn, 20)
    assert log.cost(start, in_turn, 20, again=True) == ArmLog(True).cost(start, in_turn, 20, again=True)
    # the areas are read anew against each accepted table, and kept while part is accepted
    assert log.consume(20).areas == () and log.consume_steps(start, in_turn[:1]).areas == log.areas


def test_a_refill_of_the_colour_taken_is_dated_after_the_last_change_read() -> None:
    # Ana's Pick read changed at frame 10; the Row refilled with red reads as before it, so the
    # refill's landing was never read: the table stands from up to two frames later (a Row
    # without the marble read fewer than three frames is never read steadily).
    start = table(players=3)
    same = [pick(0, R), Step("dispense", color=R)]
    other = [pick(0, R), Step("dispense", color=K)]
    assert refill_unseen(same) and not refill_unseen(other)
    assert not refill_unseen([pick(0, R)]) and not refill_unseen(
        [Step("end_turn", 0), Step("dispense", color=R)]
    )
    log = ArmLog(True).moved(10)
    assert log.consume(15, start, same, steady=3).still_from == 12
    assert log.consume(15, start, other, steady=3).still_from == 10
    assert log.consume(11, start, same, steady=3).still_from == 11  # not past the table's own first frame


def test_two_players_changes_read_with_a_pause_between_them_fall_in_two_turns() -> None:
    # Ana has had her main action. Ben's area read changed at frame 10, Ana's at 25, nothing
    # moved between: a pause, which ended Ben's turn. A reading with Ana's marble in Ben's turn
    # weighs W_PAUSE more than one with it in Cy's; with an arm seen at 17 and the table
    # changing at 21, no pause.
    start = dataclasses.replace(table(players=3), main_done=True)
    in_bens = [Step("end_turn", 0), pick(1, R), pick(0, K)]
    in_cys = [Step("end_turn", 0), pick(1, R), Step("end_turn", 1), pick(0, K)]
    log = ArmLog(True).area_changed(10, 1, (0, 2)).area_changed(25, 0, (2,))
    assert log.pauses_within(start, in_bens) == 1 and log.pauses_within(start, in_cys) == 0
    assert log.cost(start, in_bens, 30) - log.cost(start, in_cys, 30) == W_PAUSE
    busy = log.add(17, (ReachSighting(2, "table", 0.9),)).moved(21)
    assert busy.pauses_within(start, in_bens) == 0


def test_the_table_stands_from_its_last_change_or_arm() -> None:
    log = ArmLog(True).moved(10).consume(12)  # the accepted table stands from frame 10
    assert log.stood(16) == 7 and log.stood(9) == 0
    assert log.add(14, (ReachSighting(2, "energy_row", 0.9),)).stood(16) == 2  # an arm at 14
    assert log.moved(15).stood(16) == 2  # the table changed at 15
    assert ArmLog(True).stood(16) == 0 and ArmLog().moved(10).consume(12).stood(16) == 0  # not known


def test_the_accepted_table_stands_from_the_last_arm_over_it_if_that_came_after_its_change() -> None:
    # The table changed at frame 10; an arm reached over it at 14 and changed nothing that the
    # camera saw (a gizmo used before its reward is taken); the reading accepted at 17 accounts
    # for that arm. The table stands from 15, not 10: no pause at 20.
    start = dataclasses.replace(table(players=3), main_done=True)
    log = ArmLog(True).moved(10).add(14, (ReachSighting(0, "energy_row", 0.9),))
    accepted = log.consume(17, start, [pick(0, R)])
    assert accepted.spent == ((0, "row"),) and accepted.still_from == 15
    assert accepted.stood(20) == 6 and not accepted.paused(20, start)


def test_a_run_mostly_over_places_the_reading_does_not_send_the_hand_to_is_a_stray() -> None:
    # One frame over the Row in a run of eight over a deck is a misread zone, not a Pick's
    # gesture (before, any one frame over a right place excused the whole run); a misread frame
    # in a run mostly over the Row stays free.
    pick_places = (1, frozenset({"row", "area"}))
    assert reach_cost([pick_places], [(1, "deck")] * 7 + [(1, "row")]) == stray(7)
    assert reach_cost([pick_places], [(1, "row")] * 3 + [(1, "deck")]) == 0
    assert reach_cost([pick_places], [(1, "deck"), (1, "row")]) == 0  # as many: not told apart


def test_a_player_done_before_a_pause_that_ended_with_the_tables_change() -> None:
    # Ben's arm over a deck (frames 1-3), then the table stands until it changes at frame 12
    # (his marble, his arm unseen): he was done at the pause, and the change came after it.
    deck = tuple((f, 1, "deck") for f in (1, 2, 3))
    assert ArmLog(True, deck, changes=(12,)).paused_before_change(1, 13)
    assert not ArmLog(True, deck, changes=(3 + PAUSE_FRAMES,)).paused_before_change(1, 13)  # no pause
    assert not ArmLog(True, deck[:1], changes=(12,)).paused_before_change(1, 13)  # one frame: a stray?
    assert not ArmLog(True, deck, changes=(12,)).paused_before_change(2, 13)  # not Cy's


def test_an_arm_seen_before_the_table_began_to_change_is_weighed_with_the_reading() -> None:
    # Cy's arm over a deck while Ben's turn goes on: seen after the table began to change (at
    # frame 10), it is the next player reaching in while the table settled, left for the next
    # reading; seen before it, it came before what the reading explains, and weighs as a stray
    # (Cy's Research declined, then Ana's marble after the game's end: read as Ana's marble out
    # of turn in Cy's turn, his arms were set aside).
    start = table(players=3, current=1, main_done=True)
    reading = [pick(1, R)]
    before = ArmLog(True, tuple((f, 2, "deck") for f in (1, 2, 3)), changes=(10,))
    after = ArmLog(True, tuple((f, 2, "deck") for f in (11, 12, 13)), changes=(10,))
    assert after.cost(start, reading, 20) == W_MISSED  # Ben's arm unseen; Cy's left for later
    assert before.cost(start, reading, 20) == W_MISSED + stray(3)
    assert after.consume(20, start, reading).before(100) == (2, 2, 2)
    assert before.consume(20, start, reading).before(100) == ()


def test_after_the_main_action_arms_before_a_pause_are_weighed_apart_and_a_research_goes_on_past_it() -> None:
    # Ana has built (her turn goes on until the table shows it over). Ben's arm reaches to a deck,
    # the table stands still for a pause, his arm over the deck again (a Research's cards put
    # back), then Cy's marble, his arm missed. The arms before the pause are Ben's Research, not
    # a Pick's; the Research goes on after the pause. Before, after the main action the arms
    # were not split at the pause at all (Ben's marble taken out of turn after his declined
    # Research read as his own Pick); split, the arms after it had to be the Pick's.
    start = dataclasses.replace(table(players=3), main_done=True)
    log = ArmLog(True, ((1, 1, "deck"), (2, 1, "deck"), (12, 1, "deck"), (13, 1, "deck")))
    assert log.marked(20) == ((1, "deck"), (1, "deck"), PAUSE, (1, "deck"), (1, "deck"))
    research = [Step("end_turn", 0), Step("research", 1, level=1), Step("end_turn", 1)]
    assert log.cost(start, [*research, pick(2, R)], 20) == W_MISSED  # only Cy's arm, unseen
    # Ben's own marble after the pause, his arms before it no step's: they weigh as strays, so
    # do those after it over the deck, and his turn goes on past the pause that ended it
    assert log.cost(start, [Step("end_turn", 0), pick(1, R)], 20) == 2 * stray(2) + W_PAUSE
