"""A hand over one zone does not hold up a change elsewhere (issue 13's delay): a change whose
own zones are in view and steady is explained at once, while the covered zone keeps what it
last held (unknown is not empty, and it is not explained). A change that acts on the covered
zone, and every rule break, still waits for a clear view."""

from __future__ import annotations

from referee.gizmos import Step, apply
from referee.tracker.explain import explain, zones_moved
from referee.tracker.view import view_of, zones_changed
from tests.tables import table
from tests.test_tracker import build, pick, referee, warnings_of
from tests.test_tracker_camera_only import seen_arms

R, B = 0, 1


def test_a_change_elsewhere_is_explained_while_a_hand_covers_a_zone() -> None:
    feeder = referee(table(players=3, archives={1: [20]}))
    t = feeder.tracker
    feeder.camera.hidden = {"archive1"}  # a hand over Ben's Archive
    feeder.play(pick(0, R), frames=4)  # Ana's Pick settles while the hand stays
    assert [line.step["kind"] for line in t.log] == ["pick", "dispense"]  # the Row refilled
    assert t.state.players[0].ring == feeder.state.players[0].ring
    assert t.state.players[1].archive == (20,)  # the covered zone keeps its last content
    assert t.warnings == []
    feeder.camera.hidden = set()
    feeder.show(frames=4)  # the hand leaves: nothing more to explain
    assert len(t.log) == 2 and t.warnings == [] and t.state == feeder.state


def test_without_the_hand_the_same_change_is_explained_alike() -> None:
    covered, clear = referee(table(players=3)), referee(table(players=3))
    covered.camera.hidden = {"gizmos2", "vp1"}
    covered.play(pick(0, R), frames=4)
    clear.play(pick(0, R), frames=4)
    assert covered.tracker.state == clear.tracker.state
    assert [line.step for line in covered.tracker.log] == [line.step for line in clear.tracker.log]


def test_a_change_that_acts_on_the_covered_zone_waits_for_the_hand_to_leave() -> None:
    feeder = referee(table())
    t = feeder.tracker
    feeder.camera.hidden = {"ring0"}  # the marble goes into the ring under the hand
    feeder.play(pick(0, R), frames=6)
    assert t.log == [] and t.warnings == []  # the Row lost a marble; where it went is not seen
    feeder.camera.hidden = set()
    feeder.show(frames=4)
    assert [line.step["kind"] for line in t.log] == ["pick", "dispense"] and t.warnings == []


def test_a_rule_break_waits_for_a_clear_view() -> None:
    feeder = referee(table(players=3))  # with two, a whole round of Ben's is likelier (test_tracker)
    t = feeder.tracker
    feeder.play(pick(0, R), frames=6)
    feeder.camera.hidden = {"archive1"}
    feeder.play(pick(0, B), frames=8)  # a second marble while a hand covers Ben's Archive
    assert warnings_of(feeder) == [] and len(t.log) == 2  # Ana's first Pick and its refill
    feeder.camera.hidden = set()
    feeder.show(frames=6)
    [w] = warnings_of(feeder)
    assert (w.code, w.player, w.turn) == ("SECOND_MAIN_ACTION", 0, 0)


def test_with_signals_the_next_turn_is_explained_while_a_hand_covers_a_zone() -> None:
    feeder = referee(table(players=3))
    t = feeder.tracker
    feeder.play(pick(0, R), frames=6)
    feeder.end_turn()
    feeder.camera.hidden = {"archive2"}
    feeder.play(pick(1, B), frames=4)  # Ben's Pick, a hand over Cy's Archive
    moves = [(line.player, line.step["kind"]) for line in t.log if line.player is not None]
    assert moves == [(0, "pick"), (0, "end_turn"), (1, "pick")]
    assert t.warnings == [] and t.state.current == 1


def test_with_only_the_current_player_s_arm_seen_their_change_is_explained_past_their_own_zone() -> None:
    # Camera only with the arms: the current player's arm alone, and a zone of their own out of
    # view (a reading that keeps flickering: the recording's Archive after Ana's Pick of frame
    # 2149): the arms tell no other story than Ana going on, so her Pick in view is accepted at
    # once, as without the arms (it waited 4.3 s there for the next player's move).
    feeder = seen_arms(referee(table(players=3, archives={0: [20]})))
    t = feeder.tracker
    feeder.reach(0, "energy_row")
    feeder.camera.hidden = {"archive0"}
    feeder.play(pick(0, R), frames=4)
    assert [line.step["kind"] for line in t.log] == ["pick", "dispense"] and t.warnings == []
    feeder.camera.hidden = set()
    feeder.show(frames=4)
    assert len(t.log) == 2 and t.warnings == [] and t.state == feeder.state


def test_with_another_player_s_arm_seen_or_area_out_of_view_the_change_waits() -> None:
    # Ben's arm seen too, or Ben's area out of view (his hand there, its arm unseen): the arms
    # may tell another story (a move out of turn), which the shortcut does not weigh.
    for arm, hidden in ((1, "archive0"), (None, "archive1")):
        feeder = seen_arms(referee(table(players=3, archives={0: [20], 1: [21]})))
        t = feeder.tracker
        if arm is not None:
            feeder.reach(arm, "1/gizmos")
        feeder.reach(0, "energy_row")
        feeder.camera.hidden = {hidden}
        feeder.play(pick(0, R), frames=4)
        assert t.log == [], hidden
        feeder.camera.hidden = set()
        feeder.show(frames=4)
        assert [line.step["kind"] for line in t.log][:2] == ["pick", "dispense"], hidden


def test_zones_moved_names_what_an_explanation_acts_on() -> None:
    start = table(rings={0: (1, 0, 0, 0)}, display=[12])
    after = apply(apply(start, pick(0, R)), Step("dispense", color=B))
    found = explain(start, view_of(after))
    assert found is not None and zones_moved(start, found) == {"row", "ring0"}
    # A Build acts on the ring that pays for it, even where the payment reads nothing.
    built = apply(start, build(0, 12, (1, 0, 0, 0)))
    found = explain(start, view_of(built))
    assert found is not None and "ring0" in zones_moved(start, found)
    assert "gizmos0" in zones_moved(start, found)


def test_filled_keeps_the_accepted_content_of_unknown_zones() -> None:
    start = view_of(table())
    seen = start.without({"ring1", "display1.0", "row"})
    assert seen.filled(start) == start
    assert zones_changed(start, seen) == {"ring1", "display1.0", "row"}
    assert zones_changed(start, start) == set()


def test_an_end_signal_ends_the_turn_at_once_while_a_hand_covers_another_zone() -> None:
    feeder = referee(table())
    t = feeder.tracker
    feeder.play(pick(0, R), frames=6)
    feeder.camera.hidden = {"display"}  # a hand over the Display as the signal comes
    feeder.show(frames=3)
    update = feeder.end_turn()
    assert [step.kind for step in update.steps] == ["end_turn"] and t.state.current == 1
    feeder.camera.hidden = set()
    feeder.play(pick(1, B), frames=6)
    moves = [(line.player, line.step["kind"]) for line in t.log if line.player is not None]
    assert moves == [(0, "pick"), (0, "end_turn"), (1, "pick")] and t.warnings == []


def test_with_arms_reported_a_change_waits_for_the_clear_view() -> None:
    # Camera only with the players' arms reported, the arms weigh every reading (reaching.py)
    # and a hand over the table is an arm telling the turn: no shortcut past it.
    feeder = seen_arms(referee(table(players=3, archives={1: [20]})))
    t = feeder.tracker
    feeder.reach(0, "energy_row")
    feeder.camera.hidden = {"archive1"}
    feeder.play(pick(0, R), frames=4)
    assert t.log == []  # waits while the hand stays
    feeder.camera.hidden = set()
    feeder.show(frames=4)
    assert [line.step["kind"] for line in t.log] == ["pick", "dispense"] and t.warnings == []
