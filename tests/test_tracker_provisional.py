"""The tracker's provisional reading (issue 13's delay, ``referee.tracker.provisional``): a table
read the same twice that legal play alone explains, and a rule break awaiting the turn's end, are
shown before the record accepts them, marked provisional; they never change what is accepted or
warned, and they go as soon as the record accepts them or the table reads otherwise."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import referee.tracker.tracker as tracker_module
from referee.gizmos import Step
from referee.simulation.synthetic import Feeder, tables_of
from referee.tracker.provisional import AWAITING_VERDICT, BEFORE_A_BREAK, READ_ONCE
from tests.tables import table
from tests.test_tracker import build, pick, referee
from tests.test_tracker_camera_only import seen_arms
from tests.web_testing import ApiClient, hub_of, make_app
from web.api_schemas import VIEW
from web.schemas import validate

R, B = 0, 1


def test_a_table_seen_once_is_shown_provisionally_then_accepted_on_the_third_reading() -> None:
    feeder = referee(table(players=3))
    t = feeder.tracker
    [first] = feeder.play(pick(0, R), frames=1)
    assert t.log == []  # one reading: the record waits for three
    shown = t.provisional
    assert shown is not None and shown.why == READ_ONCE and shown.turn == 0
    assert [st.kind for st in shown.steps][:1] == ["pick"] and shown.breaks == () and shown.warnings == ()
    assert shown.lines[0] == "Ana picks a red marble from the Energy Row"
    assert first.provisional  # news in the call that made it
    [second] = feeder.show(frames=1)
    assert t.log == [] and t.provisional == shown and not second.provisional  # nothing new
    [third] = feeder.show(frames=1)
    assert [line.step["kind"] for line in t.log] == ["pick", "dispense"]
    assert [step.kind for step in third.steps] == [st.kind for st in shown.steps]  # what was shown
    assert t.provisional is None and third.provisional  # accepted: no longer provisional


def test_a_reading_taken_back_was_only_ever_provisional() -> None:
    """A table seen in one frame, then the table as it was (a misreading, or a marble put back at
    once): shown provisionally, then gone; the record never had it."""
    feeder = referee(table(players=3))
    t, before = feeder.tracker, feeder.state
    feeder.play(pick(0, R), frames=1)
    assert t.provisional is not None
    back, *_ = feeder.show(before, frames=3)
    assert back.provisional and t.provisional is None
    assert t.log == [] and t.warnings == [] and t.state == before


def test_only_the_steps_before_a_rule_break_are_shown_and_only_once_read_twice() -> None:
    feeder = referee(table(players=3))
    t = feeder.tracker
    feeder.play(pick(0, R), pick(0, B), frames=1)  # two marbles at once: the second breaks a rule
    assert t.provisional is None  # one reading that only a broken rule explains: nothing
    feeder.show(frames=1)
    shown = t.provisional
    assert shown is not None and shown.why == BEFORE_A_BREAK
    assert shown.lines == ("Ana picks a red marble from the Energy Row",)  # the first Pick alone
    assert shown.breaks == () and shown.warnings == ()  # never a warning from two readings
    assert t.warnings == [] and t.log == []
    feeder.show(frames=6)
    [w] = t.warnings
    assert (w.code, w.player) == ("SECOND_MAIN_ACTION", 0) and t.provisional is None


def test_a_build_seen_underpaid_is_shown_provisionally_until_it_is_paid() -> None:
    """The verdict on an underpaid Build waits for the turn's end (the player may still be
    paying): meanwhile the dashboard shows it, marked provisional; paid in full, it goes, and no
    warning was ever raised."""
    start = table(rings={0: (3, 0, 0, 0)}, display=[52])
    feeder = referee(start)
    t = feeder.tracker
    refill = Step("reveal", card=start.decks[1][0][0][0])
    feeder.play(build(0, 52, (2, 0, 0, 0)), refill, frames=10)
    assert t.warnings == [] and t.log == []
    shown = t.provisional
    assert shown is not None and shown.why == AWAITING_VERDICT
    assert shown.breaks == ((0, "UNDERPAID"),) and [st.kind for st in shown.steps] == ["build", "reveal"]
    assert shown.warnings[0].startswith("Ana built #52")
    [paid] = tables_of(start, [build(0, 52, (3, 0, 0, 0)), refill], random.Random(0))[-1:]
    feeder.show(paid, frames=6)
    assert t.provisional is None and t.warnings == []
    assert [line.step["kind"] for line in t.log] == ["build", "reveal"]


def test_an_underpaid_build_left_so_is_warned_as_before() -> None:
    start = table(rings={0: (3, 0, 0, 0)}, display=[52])
    feeder = referee(start)
    t = feeder.tracker
    refill = Step("reveal", card=start.decks[1][0][0][0])
    feeder.play(build(0, 52, (2, 0, 0, 0)), refill, frames=10)
    assert t.provisional is not None and t.warnings == []
    feeder.end_turn()
    [w] = t.warnings
    assert (w.code, w.player, w.turn) == ("UNDERPAID", 0, 0)
    assert t.provisional is None


def test_the_dashboard_shows_the_provisional_reading_and_drops_it_once_accepted(tmp_path: Path) -> None:
    """The hub's snapshot carries the reading (as the API documents it) from the call that made
    it, and none once the record has accepted it: the page marks it provisional
    (web/static/table.js, ``renderProvisional``)."""
    app = make_app(tmp_path)
    api = ApiClient(app)
    game = hub_of(app).get(api.new_game(["Ana", "Ben", "Cy"]))
    with game.locked() as tracker:
        feeder = Feeder(tracker, state=tracker.state)
        feeder.show(frames=4)
        color = next(c for c, n in enumerate(tracker.state.row) if n)
    seqs = []
    for read in (lambda: feeder.play(pick(0, color), frames=2), lambda: feeder.show(frames=1)):
        with game.locked():  # seen (twice), then the third time
            read()
        view = game.snapshot.view
        validate(VIEW, view, "view")
        seqs.append((game.snapshot.seq, view["provisional"]))
    (first, shown), (second, gone) = seqs
    assert shown is not None and shown["why"] == READ_ONCE and shown["turn"] == 0
    assert shown["lines"][0].startswith("Ana picks a") and shown["steps"][0]["kind"] == "pick"
    assert game.tracker.log[0].step == shown["steps"][0]  # now in the move log, as shown
    assert gone is None and second > first
    page = api.get(f"/games/{game.id}").get_data(as_text=True)
    assert 'id="provisional-panel"' in page and "hidden" in page.split('id="provisional-panel"')[1][:40]


def test_with_the_arms_the_steps_before_a_break_are_those_of_the_tracker_s_own_reading() -> None:
    """Camera only with the arms: Ben's arm seen over the Row (no step of the reading explains
    it, so the arms weigh against it), then Ana's two marbles. The steps before the break are
    shown all the same: the reading they come from is the one the tracker itself gives the table,
    the arms weighed in it; the arms turn down only a legal-only reading they would read
    otherwise."""
    feeder = seen_arms(referee(table(players=3)))
    t = feeder.tracker
    feeder.reach(1, "energy_row")
    feeder.play(pick(0, R), pick(0, B), frames=2)
    shown = t.provisional
    assert shown is not None and shown.why == BEFORE_A_BREAK
    assert shown.lines == ("Ana picks a red marble from the Energy Row",) and shown.warnings == ()
    feeder.show(frames=6)
    [w] = t.warnings
    assert (w.code, w.player) == ("SECOND_MAIN_ACTION", 0) and t.provisional is None


def test_a_reading_that_flickers_between_two_tables_is_searched_once_for_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    feeder = referee(table(players=3))
    before = feeder.state
    searched: list[object] = []
    search = tracker_module.explain_from_table

    def counting(*args: Any, **kwargs: Any) -> Any:
        searched.append(args[1].key())
        return search(*args, **kwargs)

    monkeypatch.setattr(tracker_module, "explain_from_table", counting)
    [red] = tables_of(before, [pick(0, R)], random.Random(0))[-1:]
    [blue] = tables_of(before, [pick(0, B)], random.Random(0))[-1:]
    for state in (red, blue, red, blue, red):  # one frame each: never read three times
        feeder.show(state, frames=1)
    assert feeder.tracker.log == [] and feeder.tracker.provisional is not None
    assert len(searched) == len(set(searched)) == 2
