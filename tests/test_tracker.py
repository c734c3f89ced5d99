"""The referee on scripted games: each class of rule break gives the right warning (code, ruling,
player, turn) on the right turn, mid-turn as soon as it is certain; legal play, long chain
reactions included, gives none; several explanations of one table are noted, not warned."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from referee.gizmos import State, Step, apply, legal_steps
from referee.gizmos.errors import RULES
from referee.simulation.synthetic import Feeder, tables_of
from referee.tracker import Tracker, TrackerSettings
from referee.tracker.verdicts import RefereeWarning
from referee.tracker.view import view_of
from tests.tables import table

R, B, K, Y = 0, 1, 2, 3  # red, blue, black, yellow
NAMES = ["Ana", "Ben", "Cy", "Di"]


def referee(state: State, **settings: object) -> Feeder:
    """A tracker refereeing ``state`` (already seen by the camera), and the table to play on."""
    tracker = Tracker.create(
        ":memory:",
        NAMES[: state.num_players],
        state=state,
        settings=TrackerSettings(**settings) if settings else None,  # type: ignore[arg-type]
    )
    feeder = Feeder(tracker, state=state)
    feeder.show(frames=4)
    assert not feeder.tracker.warnings
    return feeder


def warnings_of(feeder: Feeder, kind: str = "violation") -> list[RefereeWarning]:
    return [w for w in feeder.tracker.warnings if w.kind == kind]


def pick(seat: int, color: int) -> Step:
    return Step("pick", seat, color=color)


def file(seat: int, card: int) -> Step:
    return Step("file", seat, card=card)


def build(seat: int, card: int, pay: tuple[int, int, int, int], converters: tuple[int, ...] = ()) -> Step:
    return Step("build", seat, card=card, pay=pay, converters=converters)


def use(seat: int, gizmo: int) -> Step:
    return Step("use", seat, gizmo=gizmo)


def over(state: State) -> State:
    return dataclasses.replace(state, end_triggered=True, game_over=True)


@dataclass(frozen=True)
class Break:
    """A scripted rule break: the table, what is played, and the warning expected."""

    name: str
    table: Callable[[], State]
    steps: tuple[Step, ...]
    code: str
    player: int
    mid_turn: bool  # certain before the end of the turn


BREAKS = [
    Break(
        "two main actions",
        lambda: table(display=[12]),
        (pick(0, R), file(0, 12)),
        "SECOND_MAIN_ACTION",
        0,
        True,
    ),
    Break(
        "Pick with a full ring", lambda: table(rings={0: (2, 2, 1, 0)}), (pick(0, R),), "RING_FULL", 0, True
    ),
    Break(
        "File with a full Archive",
        lambda: table(archives={0: [13]}, display=[12]),
        (file(0, 12),),
        "ARCHIVE_FULL",
        0,
        True,
    ),
    Break(
        "underpaying a Build",
        lambda: table(rings={0: (3, 0, 0, 0)}, display=[52]),
        (build(0, 52, (2, 0, 0, 0)),),
        "UNDERPAID",
        0,
        False,
    ),
    Break(
        "overpaying a Build",
        lambda: table(rings={0: (3, 0, 0, 0)}, display=[12]),
        (build(0, 12, (2, 0, 0, 0)),),
        "BAD_PAYMENT",
        0,
        False,
    ),
    Break(
        "a converter used twice",
        # #8 turns a red into any color once a turn; #105 grants a Research on a blue Build.
        lambda: table(
            gizmos={0: [8, 105]}, rings={0: (2, 0, 0, 0)}, display=[14], deck_order={1: [29, 16, 17, 18]}
        ),
        (
            build(0, 14, (1, 0, 0, 0), (8,)),
            use(0, 105),
            Step("research", 0, level=1),
            build(0, 16, (1, 0, 0, 0), (8,)),
            Step("bottom", 0, card=17),
        ),
        "GIZMO_ALREADY_USED",
        0,
        True,
    ),
    Break(
        "a gizmo triggered twice",
        lambda: table(gizmos={0: [36]}, rings={0: (1, 0, 0, 0)}, display=[12]),
        (build(0, 12, (1, 0, 0, 0)), use(0, 36), use(0, 36)),
        "GIZMO_ALREADY_USED",
        0,
        True,
    ),
    Break(
        "a gizmo triggered by the Build that built it",
        lambda: table(archives={0: [108]}, rings={0: (5, 0, 0, 0)}),
        (build(0, 108, (5, 0, 0, 0)), use(0, 108)),
        "NOT_TRIGGERED",
        0,
        False,
    ),
    Break(
        "a trigger that did not apply",
        lambda: table(gizmos={0: [36]}, rings={0: (0, 1, 0, 0)}, display=[14]),
        (build(0, 14, (0, 1, 0, 0)), use(0, 36)),
        "NOT_TRIGGERED",
        0,
        False,
    ),
    Break(
        "a forbidden action",
        lambda: table(gizmos={0: [88]}, display=[12]),
        (file(0, 12),),
        "ACTION_FORBIDDEN",
        0,
        True,
    ),
    Break(
        "taking from the Row more than allowed",
        lambda: table(gizmos={0: [20]}, display=[12]),
        (file(0, 12), use(0, 20), pick(0, R), pick(0, B)),
        "SECOND_MAIN_ACTION",
        0,
        True,
    ),
    Break(
        "building a card not on the Display or in the Archive",
        lambda: table(archives={1: [13]}, rings={0: (1, 0, 0, 0)}),
        (build(0, 13, (1, 0, 0, 0)),),
        "CARD_NOT_AVAILABLE",
        0,
        True,
    ),
    Break("playing out of turn", lambda: table(), (pick(1, R),), "NOT_YOUR_TURN", 1, False),
    Break(
        "playing on after the game ended", lambda: over(table(turn=30)), (pick(0, R),), "GAME_OVER", 0, True
    ),
]


@pytest.mark.parametrize("case", BREAKS, ids=[b.name for b in BREAKS])
def test_each_rule_break_is_warned_on_its_turn(case: Break) -> None:
    start = case.table()
    feeder = referee(start)
    feeder.play(*case.steps, frames=8)
    mid = warnings_of(feeder)
    if case.mid_turn:
        assert [w.code for w in mid] == [case.code], "certain mid-turn: warned before the end of the turn"
    else:
        assert mid == [], "not certain before the end of the turn (it could still be put right)"
    if not start.game_over:
        feeder.end_turn()
    [w] = warnings_of(feeder)
    assert (w.code, w.player, w.turn, w.rulings) == (
        case.code,
        case.player,
        start.turn,
        RULES[case.code].rulings,
    )
    assert NAMES[case.player] in w.message and w.code in w.message and w.remedy
    assert not warnings_of(feeder, "uncertain")
    if not start.game_over:  # the tracker follows what physically happened
        assert view_of(feeder.tracker.state).key()[:3] == view_of(feeder.state).key()[:3]
    else:  # play after the end is never scored
        assert feeder.tracker.state == start


def test_warning_says_who_what_and_how_to_put_it_right() -> None:
    feeder = referee(table(gizmos={0: [20]}, display=[12]))
    feeder.play(file(0, 12), use(0, 20), pick(0, R), pick(0, B), frames=8)
    [w] = warnings_of(feeder)
    assert w.message.startswith(
        "Ana took a second marble (blue) from the Energy Row; only one Pick was available"
    )
    assert "(ruling 7, SECOND_MAIN_ACTION)" in w.message
    assert w.remedy == "put one back (the blue marble) in the Energy Row"


def test_underpaid_build_finished_before_the_end_of_the_turn_is_not_warned() -> None:
    start = table(rings={0: (3, 0, 0, 0)}, display=[52])
    feeder = referee(start)
    refill = Step("reveal", card=start.decks[1][0][0][0])
    feeder.play(build(0, 52, (2, 0, 0, 0)), refill, frames=10)  # built, one marble still to pay
    assert not feeder.tracker.warnings
    [paid] = tables_of(start, [build(0, 52, (3, 0, 0, 0)), refill], random.Random(0))[-1:]
    feeder.show(paid, frames=6)  # ... and now it is in the dispenser too
    feeder.end_turn()
    assert not feeder.tracker.warnings
    assert [line.step["kind"] for line in feeder.tracker.log] == ["build", "reveal", "end_turn"]
    assert feeder.tracker.log[0].step["pay"] == {"red": 3}


def _chain_table() -> State:
    # Build red #12 -> #32 (pick), #36 (1 VP), #102 (File); the File -> #0 (draw), #20 (pick);
    # picking red -> #24 (draw).
    return table(
        gizmos={0: [102, 20, 32, 36, 24]}, rings={0: (3, 0, 0, 0)}, display=[12, 13], row=(2, 2, 1, 1)
    )


CHAIN = (
    build(0, 12, (1, 0, 0, 0)),
    use(0, 36),
    use(0, 32),
    pick(0, R),
    use(0, 24),
    use(0, 102),
    file(0, 13),
    use(0, 0),
    use(0, 20),
    pick(0, B),
)


@pytest.mark.parametrize(
    "between", [0, 1, 6], ids=["seen at the end", "tables too quick to settle", "every table settled"]
)
def test_long_chain_reaction_is_legal(between: int) -> None:
    feeder = referee(_chain_table())
    feeder.play(*CHAIN, frames=6, between=between)
    feeder.end_turn()
    assert feeder.tracker.warnings == []
    t = feeder.tracker
    assert view_of(t.state).key()[:3] == view_of(feeder.state).key()[:3]
    assert t.state.turn == 1 and t.state.current == 1
    played = [line.step for line in t.log if line.player is not None]
    assert sum(s["kind"] == "use" for s in played) == 6 and played[-1]["kind"] == "end_turn"


def test_several_explanations_of_one_table_are_noted_not_warned() -> None:
    # #36 and #68 both give 1 VP for a red Build: the token could come from either.
    feeder = referee(table(gizmos={0: [36, 68]}, rings={0: (1, 0, 0, 0)}, display=[12]))
    feeder.play(build(0, 12, (1, 0, 0, 0)), use(0, 36), frames=6)
    notes = [n for u in feeder.updates for n in u.notes]
    assert any("2 different step sequences explain this table" in n for n in notes)
    assert feeder.tracker.notes and feeder.tracker.warnings == []
    feeder.end_turn()
    assert feeder.tracker.warnings == []


def test_a_turn_ends_when_the_next_player_plays_signalled_or_not() -> None:
    feeder = referee(table())
    feeder.play(pick(0, R), frames=6)
    feeder.play(pick(1, B), frames=6)  # Ben plays, though nobody said Ana's turn was over
    t = feeder.tracker
    assert t.warnings == [] and t.state.current == 1 and t.state.turn == 1
    assert [(line.turn, line.player, line.step["kind"]) for line in t.log if line.player is not None] == [
        (0, 0, "pick"),
        (0, 0, "end_turn"),
        (1, 1, "pick"),
    ]


def test_a_player_out_of_turn_before_the_main_action_is_warned_once_the_next_move_tells() -> None:
    # Three players: with two, Ana's turn passing without a trace (one declined Research) stays
    # likelier than a move out of turn (see test_tracker_camera_only.py).
    feeder = referee(table(players=3))
    feeder.play(pick(1, B), frames=6)  # Ben, before Ana showed a main action: out of turn, or
    assert warnings_of(feeder) == []  # did Ana decline a Research (no trace)? What follows tells:
    feeder.play(pick(0, R), frames=6)  # Ana plays: her turn was not over
    [w] = warnings_of(feeder)
    assert (w.code, w.player, w.turn) == ("NOT_YOUR_TURN", 1, 0)
    assert feeder.tracker.state.current == 0


def test_a_turn_that_left_no_trace_is_inferred_from_who_plays_next() -> None:
    feeder = referee(table(players=3, deck_order={1: [20, 21, 22]}))
    feeder.play(pick(0, R), frames=6)  # Ana
    # Ben researches and declines: nothing changes on the table (the cards go under the deck)
    ben = tables_of(feeder.state, [Step("end_turn", 0), Step("research", 1, level=1)], random.Random(0))[-1]
    while (options := legal_steps(ben))[0].kind != "end_turn":
        ben = apply(ben, next(o for o in options if o.kind in ("skip", "bottom")))
    feeder.show(apply(ben, Step("end_turn", 1)), frames=6)
    feeder.play(pick(2, B), frames=6)  # Cy: Ben's turn is over, though nothing showed it
    feeder.play(pick(0, K), frames=6)  # Ana's next turn
    t = feeder.tracker
    assert t.warnings == [] and t.state.turn == 3 and t.state.current == 0
    ends = [(line.turn, line.player) for line in t.log if line.step["kind"] == "end_turn"]
    assert ends == [(0, 0), (1, 1), (2, 2)]


def test_after_a_rule_break_the_rest_of_the_turn_is_taken_as_seen_and_the_next_turn_refereed() -> None:
    feeder = referee(table())
    feeder.play(pick(0, R), pick(0, B), frames=6)  # a second marble: warned once
    feeder.play(pick(0, K), frames=6)  # and a third: the turn is already broken, no cascade
    feeder.play(pick(1, B), frames=6)  # Ben's legal turn
    feeder.play(pick(0, R), frames=6)  # Ana's next one
    t = feeder.tracker
    assert [(w.code, w.player, w.turn) for w in t.warnings] == [("SECOND_MAIN_ACTION", 0, 0)]
    assert t.state.current == 0 and t.state.turn == 2
    assert t.state.players[0].ring == feeder.state.players[0].ring


def test_end_signal_while_a_zone_is_covered_waits_and_keeps_the_order_of_play() -> None:
    feeder = referee(table())
    feeder.play(pick(0, R), frames=6)
    # A hand over Ana's Archive as the signal comes: she may be filing there, so her turn waits.
    # (A hand over a zone that is not hers does not hold it up: test_tracker_hands.py.)
    feeder.camera.hidden = {"archive0"}
    feeder.show(frames=3)
    update = feeder.end_turn()
    assert update.steps == [] and "waiting for a clear view" in update.notes[0]
    feeder.camera.hidden = set()
    feeder.play(pick(1, B), frames=6)  # Ben's turn: it follows Ana's end, so it is legal
    assert feeder.tracker.warnings == []
    kinds = [(line.player, line.step["kind"]) for line in feeder.tracker.log if line.player is not None]
    assert kinds == [(0, "pick"), (0, "end_turn"), (1, "pick")]


def test_table_caught_before_the_refill_is_accepted_with_the_refill_owed() -> None:
    feeder = referee(table())
    picked, refilled = tables_of(feeder.state, [pick(0, R), Step("dispense", color=K)], random.Random(0))
    feeder.show(picked, frames=6)  # a Row of five: the refill is still to come
    t = feeder.tracker
    assert t.warnings == [] and t.state.chance == (("row",),) and sum(t.state.row) == 5
    feeder.show(refilled, frames=6)
    assert t.warnings == [] and t.state.chance == () and t.state.row == refilled.row
    assert [line.step for line in t.log] == [pick(0, R).to_json(), {"kind": "dispense", "color": "black"}]


def test_research_seen_only_through_the_card_it_files() -> None:
    feeder = referee(table(deck_order={1: [20, 21, 22]}))
    feeder.play(Step("research", 0, level=1), file(0, 21), Step("bottom", 0, card=20), frames=6)
    feeder.end_turn()
    t = feeder.tracker
    assert t.warnings == [] and t.state.players[0].archive == (21,)
    # The two cards put back were never seen: they rejoin the deck's unknown part.
    top = t.state.decks[0][0]
    assert {20, 22} <= set(top[0])


def test_triggered_gizmo_may_wait_while_the_player_thinks() -> None:
    feeder = referee(table(gizmos={0: [36]}, rings={0: (1, 0, 0, 0)}, display=[12]))
    feeder.play(build(0, 12, (1, 0, 0, 0)), frames=6)
    assert feeder.tracker.state.players[0].gizmos == (0, 36, 12) and feeder.tracker.state.triggered == {36}
    feeder.end_turn()  # the VP token was never taken: a choice, not a broken rule
    assert feeder.tracker.warnings == [] and feeder.tracker.state.current == 1


def test_an_overpaid_build_in_the_next_turn_behind_a_hand_is_still_found() -> None:
    # Ana picks; a hand covers the Row while she signals the end of her turn and Ben builds
    # #12 (cost 1 red) paying 2 red.
    from referee.simulation.synthetic import perfect_observation

    feeder = referee(table(rings={1: (3, 0, 0, 0)}, display=[12]))
    feeder.play(pick(0, R), frames=6)
    t = feeder.tracker

    def hand_over_the_row(state: State) -> None:
        for _ in range(8):
            feeder.time += 0.1
            t.observe(dataclasses.replace(perfect_observation(state, feeder.time), energy_row=None))

    hand_over_the_row(feeder.state)
    feeder.end_turn()  # Ana's area is in view: her turn ends at once, the Row covered or not
    [after] = tables_of(feeder.state, [Step("end_turn", 0), build(1, 12, (2, 0, 0, 0))], random.Random(0))[
        -1:
    ]
    hand_over_the_row(after)  # Ben's Build happens under the hand
    assert t.state.current == 1 and not t.warnings  # a rule break waits for a clear view
    feeder.show(after, frames=8)
    feeder.end_turn()  # Ben's turn ends: the overpayment is judged with it
    [w] = warnings_of(feeder)
    assert (w.code, w.player) == ("BAD_PAYMENT", 1)
    assert t.state.players[1].ring == (1, 0, 0, 0) and 12 in t.state.players[1].gizmos
