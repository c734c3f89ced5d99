"""People have the last word: accepting or dismissing a warning, correcting the state, undoing
the last turn, all recorded with who and when, and malformed requests refused clearly."""

from __future__ import annotations

import dataclasses

import pytest

from referee.events import Correction, EventError
from referee.gizmos import State, StateError, Step, check_invariants
from referee.simulation.synthetic import Feeder
from referee.tracker import Tracker, TrackerError
from referee.tracker.view import adopt_view, view_of
from tests.tables import table
from tests.test_tracker import referee, warnings_of

R, B = 0, 1


def _broken() -> Feeder:
    feeder = referee(table(rings={0: (2, 2, 1, 0)}))
    feeder.play(Step("pick", 0, color=R), frames=8)  # a Pick into a full ring
    assert [w.code for w in warnings_of(feeder)] == ["RING_FULL"]
    return feeder


def test_accept_and_dismiss_a_warning_recorded_with_who() -> None:
    feeder = _broken()
    t = feeder.tracker
    [w] = t.warnings
    decided = t.decide(w.id, "dismissed", "Ana")
    assert (decided.status, decided.decided_by) == ("dismissed", "Ana")
    again = t.decide(w.id, "accepted", "referee Bob")
    assert (again.status, again.decided_by) == ("accepted", "referee Bob")
    entries = [e for e in t.record.entries("warning_status")]
    assert [(e.payload["status"], e.who) for e in entries] == [
        ("dismissed", "Ana"),
        ("accepted", "referee Bob"),
    ]
    assert all(e.time > 0 for e in entries)
    with pytest.raises(TrackerError, match="no warning #99"):
        t.decide(99, "accepted", "Ana")
    with pytest.raises(TrackerError, match="expected 'accepted' or 'dismissed'"):
        t.decide(w.id, "maybe", "Ana")


def test_that_marble_is_blue() -> None:
    # The tracker believes Ana holds a red marble, the camera keeps seeing a blue one there.
    start = table(rings={0: (1, 0, 0, 0)})
    feeder = referee(start)
    t = feeder.tracker
    blue = dataclasses.replace(
        start,
        players=(dataclasses.replace(start.players[0], ring=(0, 1, 0, 0)), *start.players[1:]),
        dispenser=(start.dispenser[0] + 1, start.dispenser[1] - 1, *start.dispenser[2:]),
    )
    feeder.show(blue, frames=8)
    feeder.end_turn()
    assert warnings_of(feeder) == [] and len(warnings_of(feeder, "uncertain")) == 1
    fixed = t.correct(
        Correction(50.0, "Ana", "marble_color", {"zone": "ring", "seat": 0, "from": "red", "to": "blue"})
    )
    assert fixed.players[0].ring == (0, 1, 0, 0) and fixed.dispenser == blue.dispenser
    check_invariants(fixed)
    correction = list(t.record.entries("correction"))[-1]
    assert (correction.who, correction.time, correction.payload["what"]) == ("Ana", 50.0, "marble_color")
    feeder.show(frames=6)
    feeder.end_turn()
    assert len(t.warnings) == 1 and t.state.current == 1


def test_that_card_is_number_30() -> None:
    start = table(display=[12])
    feeder = referee(start)
    t = feeder.tracker
    t.correct(Correction(1.0, "Ben", "card_id", {"old": 12, "new": 30}))
    assert 30 in t.state.display[0] and 12 not in t.state.display[0]
    assert any(12 in cands for cands, _ in t.state.decks[0])
    check_invariants(t.state)


@pytest.mark.parametrize(
    ("what", "payload", "error"),
    [
        (
            "marble_color",
            {"zone": "ring", "seat": 0, "from": "red", "to": "purple"},
            "'from' and 'to' must be colours",
        ),
        (
            "marble_color",
            {"zone": "ring", "seat": 7, "from": "red", "to": "blue"},
            "zone must be 'row', or 'ring'",
        ),
        ("marble_color", {"zone": "row", "from": "yellow", "to": "blue", "seat": None}, None),
        (
            "marble_color",
            {"zone": "ring", "seat": 1, "from": "red", "to": "blue"},
            "there is no red marble there",
        ),
        ("card_id", {"old": 12, "new": 112}, "card ids 0..111"),
        ("card_id", {"old": "12", "new": 30}, "card ids 0..111"),
        ("card_id", {"old": 12, "new": 57}, "correction refused: impossible state"),
        ("state", {"state": {"format": "nonsense"}}, "correction refused"),
    ],
)
def test_malformed_corrections_are_refused_clearly(
    what: str, payload: dict[str, object], error: str | None
) -> None:
    feeder = referee(table(display=[12], rings={0: (1, 0, 0, 0)}))
    t = feeder.tracker
    before = t.state
    if error is None:  # the control: a well-formed correction goes through
        t.correct(Correction(1.0, "Cy", what, payload))
        assert t.state != before
        return
    with pytest.raises(TrackerError, match=error):
        t.correct(Correction(1.0, "Cy", what, payload))
    assert t.state == before and list(t.record.entries("correction")) == []


def test_malformed_correction_requests_name_the_field() -> None:
    with pytest.raises(EventError, match="correction what"):
        Correction(1.0, "Ana", "bogus", {})
    with pytest.raises(EventError, match="correction who"):
        Correction(1.0, "", "card_id", {})
    with pytest.raises(EventError, match="correction payload"):
        Correction(1.0, "Ana", "card_id", [12, 30])  # type: ignore[arg-type]
    with pytest.raises(EventError, match="correction time"):
        Correction.from_json({"who": "Ana", "what": "card_id", "payload": {}})
    with pytest.raises(EventError, match="unknown field 'colour'"):
        Correction.from_json({"time": 1, "who": "Ana", "what": "card_id", "colour": "red"})
    ok = Correction.from_json({"time": 1, "who": "Ana", "what": "card_id", "payload": {"old": 1, "new": 2}})
    assert ok.payload == {"old": 1, "new": 2}


def test_undo_the_last_turn_recorded_and_replayed(tmp_path: object) -> None:
    path = f"{tmp_path}/game.db"
    start = table(display=[12])
    tracker = Tracker.create(path, ["Ana", "Ben"], state=start)
    feeder = Feeder(tracker, state=start)
    feeder.show(frames=4)
    feeder.play(Step("pick", 0, color=R), frames=6)
    feeder.end_turn()
    after_turn = tracker.state
    feeder.play(Step("file", 1, card=12), frames=6)
    assert tracker.state.players[1].archive == (12,)
    back = tracker.undo_turn("Ben")  # Ben's File is taken back: the start of his turn
    assert back == after_turn and tracker.state == after_turn
    assert all(line.turn < after_turn.turn for line in tracker.log)
    back2 = tracker.undo_turn("Ana")  # nothing happened since: back to the start of Ana's turn
    assert back2.turn == 0 and back2.players == start.players
    undo = [e for e in tracker.record.entries("correction") if e.payload["what"] == "undo_turn"]
    assert [e.who for e in undo] == ["Ben", "Ana"] and all(e.time > 0 for e in undo)
    tracker.record.close()
    reopened = Tracker.open(path)
    assert reopened.state == back2 and reopened.log == tracker.log


def _blue_where_red_was(start: State) -> State:
    """Ana's red marble is really blue (the dispenser keeps the colors adding up to 13)."""
    return dataclasses.replace(
        start,
        players=(dataclasses.replace(start.players[0], ring=(0, 1, 0, 0)), *start.players[1:]),
        dispenser=(start.dispenser[0] + 1, start.dispenser[1] - 1, *start.dispenser[2:]),
    )


def test_confirming_a_table_nothing_explains_adopts_it_and_refereeing_goes_on() -> None:
    start = table(rings={0: (1, 0, 0, 0)})
    feeder = referee(start)
    t = feeder.tracker
    blue = _blue_where_red_was(start)
    feeder.show(blue, frames=8)
    feeder.end_turn()
    [w] = warnings_of(feeder, "uncertain")
    assert "cannot be explained" in w.message and t.state.players[0].ring == (1, 0, 0, 0)
    t.decide(w.id, "accepted", "Cleo")
    assert t.state.players[0].ring == (0, 1, 0, 0) and t.state.dispenser == blue.dispenser
    check_invariants(t.state)
    assert any("Cleo confirmed" in n and "taken as seen" in n for n in t.notes)
    feeder.play(Step("pick", 0, color=B), frames=6)  # the game is refereed again from there
    feeder.end_turn()
    assert t.state.current == 1 and t.state.players[0].ring == (0, 2, 0, 0)
    assert [x.kind for x in t.warnings] == ["uncertain"], [x.message for x in t.warnings]
    again = Tracker.from_export(t.record.export())  # recorded like a correction: it replays
    assert again.state == t.state


def test_adopting_a_table_moves_cards_between_the_decks_and_the_table() -> None:
    start = table(display=[12])
    from_deck = start.decks[0][0][0][0]  # the top Level I card, never seen
    seen = view_of(start)
    display = dict(seen.display)
    slot = next(k for k, c in display.items() if c == 12)
    display[slot] = from_deck  # #12 is gone from view; a deck card lies in its slot
    adopted = adopt_view(start, dataclasses.replace(seen, display=display))
    check_invariants(adopted)
    in_deck = {c for cards, _ in adopted.decks[0] for c in cards}
    assert from_deck not in in_deck and 12 in in_deck
    assert adopted.display[slot[0] - 1][slot[1]] == from_deck
    assert adopted.deck_size(1) == start.deck_size(1)  # one card out, one card back


def test_a_table_that_cannot_be_real_is_not_adopted() -> None:
    start = table()
    seen = view_of(start)
    with pytest.raises(StateError, match="row not seen"):
        adopt_view(start, dataclasses.replace(seen, row=None))
    fourteen = dataclasses.replace(seen, row=(14, 0, 0, 0))
    with pytest.raises(StateError, match="more than 13 marbles"):
        adopt_view(start, fourteen)
    twice = dataclasses.replace(
        seen, seats=(dataclasses.replace(seen.seats[0], archive=frozenset({1})), *seen.seats[1:])
    )
    with pytest.raises(StateError, match="#1 seen in two places"):
        adopt_view(start, twice)


def test_adopting_a_table_keeps_what_was_used_this_turn() -> None:
    # Ana has used #40 and triggered #41 this turn; the table is then adopted as seen, with #41
    # no longer in view (a muddle at the table). #40 stays used; #41, gone, is forgotten.
    start = table(gizmos={0: [40, 41]}, main_done=True, used=[40], triggered=[41])
    seen = view_of(start)
    mine = seen.seats[0]
    assert mine.gizmos is not None and 41 in mine.gizmos
    seats = (dataclasses.replace(mine, gizmos=mine.gizmos - {41}), *seen.seats[1:])
    adopted = adopt_view(start, dataclasses.replace(seen, seats=seats))
    check_invariants(adopted)
    assert adopted.used == frozenset({40}) and adopted.triggered == frozenset()
    assert adopted.main_done and adopted.current == 0
