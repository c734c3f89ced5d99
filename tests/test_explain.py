"""The explanation search pauses Python's cyclic garbage collector while it runs (its passes
found nothing and cost a sixth of the search) and leaves it as it found it afterwards, whatever
the search did."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

import referee.tracker.explain as explain_module
from referee.gizmos import State, Step, apply, legal_steps
from referee.tracker.explain import explain
from referee.tracker.view import view_of
from tests.tables import table


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
