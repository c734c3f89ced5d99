"""The explanation search pauses Python's cyclic garbage collector while it runs (its passes
found nothing and cost a sixth of the search) and leaves it as it found it afterwards, whatever
the search did; and it refines a rule-breaking explanation however many alternatives tie."""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Iterator

import pytest

import referee.tracker.explain as explain_module
from referee.gizmos import State, Step, apply, force, legal_steps
from referee.tracker.explain import Hints, Limits, explain
from referee.tracker.view import view_of
from tests.tables import table
from tests.test_tracker import B, K, R, Y, pick


@pytest.fixture
def collector() -> Iterator[None]:
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_during_a_search_and_left_as_it_was(
    collector: None, enabled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    (gc.enable if enabled else gc.disable)()
    during: list[bool] = []

    def spy(state: State) -> list[Step]:
        during.append(gc.isenabled())
        return legal_steps(state)

    monkeypatch.setattr(explain_module, "legal_steps", spy)
    start = table()
    found = explain(start, view_of(apply(start, Step("pick", 0, color=0))))
    assert found is not None and found.legal
    assert during and not any(during)
    assert gc.isenabled() is enabled


def test_a_search_that_raises_restores_the_collector(
    collector: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    gc.enable()

    def broken(state: State) -> list[Step]:
        raise RuntimeError("engine failure")

    monkeypatch.setattr(explain_module, "legal_steps", broken)
    start = table()
    with pytest.raises(RuntimeError):
        explain(start, view_of(apply(start, Step("pick", 0, color=0))))
    assert gc.isenabled()


def test_enough_alternatives_do_not_cut_short_the_search_for_a_shorter_rule_break() -> None:
    # Ana takes two marbles, then Ben one; one turn ended. The search may first find her second
    # marble out of turn in Ben's turn (a move out of turn counts two steps), then her own second
    # marble (one step, the same one rule broken), which is the reading to take. Once the first
    # reading had as many end states as the alternatives cap, the search stopped before its
    # refinement found the shorter one (seed 3693: a second marble warned as a move out of turn).
    start = table(players=3)
    after = apply(apply(start, pick(0, R)), Step("dispense", color=Y))
    after = apply(force(after, pick(0, Y))[0], Step("dispense", color=B))
    after = apply(apply(apply(after, Step("end_turn", 0)), pick(1, K)), Step("dispense", color=B))
    seen = dataclasses.replace(view_of(after), turn_player=None)
    hints = Hints(end_turns=1, quiet_turns=True)
    for cap in (1, 3):
        found = explain(start, seen, hints, 3, Limits(max_seconds=float("inf"), alternatives_cap=cap))
        assert found is not None
        assert [(st.kind, st.player) for st in found.steps if not st.is_chance] == [
            ("pick", 0),
            ("pick", 0),
            ("end_turn", 0),
            ("pick", 1),
        ]
        assert [e.code for _, e in found.violations] == ["SECOND_MAIN_ACTION"]
