"""The state: its JSON form (version, schema, exact round trip), impossible tables, observed mode."""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from referee.gizmos import (
    GIZMOS,
    IllegalStep,
    Player,
    State,
    StateError,
    Step,
    apply,
    chance_outcomes,
    check_invariants,
    legal_steps,
    new_game,
    resolve_chance,
    state_from_json,
)
from referee.gizmos.state import state_from_text
from referee.simulation.play import random_game
from tests.tables import table

DOCS = Path(__file__).resolve().parent.parent / "docs"


def sample_states(players: int, seed: int, every: int = 7) -> list[State]:
    """States met in one seeded random game, mid-turn ones (pending choices, triggers) included."""
    seen: list[State] = []
    random_game(GIZMOS, players, seed, lambda before, step, after: seen.append(after))
    return seen[::every] + [seen[-1]]


# ---------------------------------------------------------------- JSON


@pytest.mark.parametrize("players", [2, 3, 4])
def test_round_trip_is_exact(players: int) -> None:
    states = [new_game(players), *sample_states(players, players)]
    assert any(s.pending is not None for s in states) and any(s.triggered for s in states)
    assert any(len(s.decks[0]) > 1 for s in states)  # cards put under a deck by a Research
    for s in states:
        text = s.dumps()
        again = state_from_text(text)
        assert again == s and again.dumps() == text
        assert state_from_json(json.loads(json.dumps(s.to_json(), indent=1))) == s


def test_the_json_carries_format_and_version() -> None:
    raw = new_game(2).to_json()
    assert raw["format"] == "gizmos-state" and raw["version"] == 1
    for key, value, message in (
        ("version", 2, "unsupported version 2"),
        ("version", None, "unsupported version"),
        ("format", "chess", '"format": "gizmos-state"'),
    ):
        bad = {**raw, key: value}
        with pytest.raises(StateError, match=re.escape(message)):
            state_from_json(bad)


def test_every_field_is_documented_in_state_md() -> None:
    doc = (DOCS / "state.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z_]+)`", doc, flags=re.M))
    documented |= {
        k
        for row in re.findall(r"^\| (`[a-z_]+`(?:, `[a-z_]+`)+)", doc, flags=re.M)
        for k in re.findall(r"`([a-z_]+)`", row)
    }
    raw = resolve_chance(new_game(2), random.Random(0)).to_json()
    assert set(raw) <= documented | {"players"}
    assert "players[i]" in doc
    for key in raw["players"][0]:
        assert f"`{key}`" in doc


def _edited(edit: dict[str, Any]) -> dict[str, Any]:
    raw = resolve_chance(new_game(2), random.Random(4)).to_json()
    for path, value in edit.items():
        node = raw
        *parents, last = path.split(".")
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value
    return raw


@pytest.mark.parametrize(
    "edit,message",
    [
        ({"players.0.ring.red": "2"}, "players[0].ring.red"),
        ({"players.0.ring": {"red": 1}}, "players[0].ring"),
        ({"players.1.archive": [200]}, "unknown card 200"),
        ({"players.1.vp_tokens": -1}, "players[1].vp_tokens"),
        ({"players.0.gizmos": [1]}, "card #1 is both"),
        ({"players.0.gizmos": []}, "card(s) [0] are nowhere"),
        ({"dispenser.red": 13}, "red marbles are accounted for, not 13"),
        ({"display.1": [4, 5, 6]}, "display.1: expected 4 slots"),
        ({"display.2.0": 4}, "card #4 is both"),
        ({"decks.1": []}, "are nowhere"),
        ({"current": 2}, "state.current"),
        ({"main_done": 1}, "state.main_done"),
        ({"triggered": [1]}, "not the current player's gizmo"),
        ({"pending": {"kind": "teleport"}}, "state.pending"),
        ({"pending": {"kind": "picks", "count": 3}}, "pending picks count 3"),
        ({"pending": {"kind": "free_build", "level": 2}}, "a free Build of Level 2"),
        ({"chance": [["draw", 2]]}, "there is no seat 2"),
        ({"chance": [["display", 1, 0]]}, "that Display slot already holds"),
        ({"chance": [["research", 1]]}, "no Level 1 Research is drawing cards"),
        ({"chance": [["shuffle"]]}, "not a chance event"),
        ({"players": []}, "2-4 players"),
    ],
)
def test_malformed_or_impossible_states_are_refused(edit: dict[str, Any], message: str) -> None:
    with pytest.raises(StateError, match=re.escape(message)):
        state_from_json(_edited(edit))


def test_not_json_is_a_state_error() -> None:
    with pytest.raises(StateError, match="not valid JSON"):
        state_from_text('{"format": "gizmos-state",')


def test_a_level_one_deck_cannot_hide_removed_cards() -> None:
    raw = _edited({})
    raw["decks"]["1"][0]["count"] -= 1
    raw["box"].append(raw["decks"]["1"][0]["cards"][0])
    raw["decks"]["1"][0]["cards"] = raw["decks"]["1"][0]["cards"][1:]
    with pytest.raises(StateError, match="is in the box"):
        state_from_json(raw)


def test_an_event_that_cannot_happen_is_not_left_waiting() -> None:
    raw = _edited({})
    raw["players"][0]["ring"] = {"red": 2, "blue": 1, "black": 1, "yellow": 1}
    raw["dispenser"] = {c: 13 - raw["row"][c] - raw["players"][0]["ring"][c] for c in raw["row"]}
    raw["chance"] = [["draw", 0]]
    with pytest.raises(StateError, match=re.escape("chance[0] ['draw', 0] cannot happen")):
        state_from_json(raw)


def test_limits_are_checked_only_for_legal_play() -> None:
    # A table replayed with broken rules may hold a ring over its limit: loadable, not legal.
    s = table()
    over = replace(
        s,
        players=(Player(ring=(2, 2, 1, 1), archive=(), gizmos=(0,)), s.players[1]),
        dispenser=(11, 11, 12, 12),
        row=(0, 0, 0, 0),
    )
    check_invariants(over, limits=False)
    assert state_from_json(over.to_json()) == over
    with pytest.raises(StateError, match="ring holds 6"):
        check_invariants(over)


def test_sixteen_level_three_cards_in_play() -> None:
    s = resolve_chance(new_game(3), random.Random(2))
    check_invariants(s)
    (cands, n), *_ = s.decks[2]
    seventeen = replace(s, decks=(s.decks[0], s.decks[1], ((cands, n + 1),)))
    with pytest.raises(StateError, match="17 Level III cards are in play"):
        check_invariants(seventeen)


# ---------------------------------------------------------------- observed mode


def test_observed_setup_knows_only_what_remains() -> None:
    s = new_game(3)
    assert s.chance[0] == ("display", 1, 0) and len(s.chance) == 9 + 6
    outcomes = chance_outcomes(s)
    assert sorted(step.card for step, _ in outcomes) == list(range(4, 40))
    assert sum(p for _, p in outcomes) == pytest.approx(1.0)
    assert legal_steps(s) == [step for step, _ in outcomes]
    deck = s.to_json()["decks"]["3"]
    assert deck == [{"cards": list(range(76, 112)), "count": 16}]  # candidates and a count, no order


def test_the_camera_supplies_every_outcome() -> None:
    s = new_game(2)
    seen = [20, 4, 31, 9, 57, 40, 71, 100, 80]  # what the camera read off the Display, slot by slot
    for card in seen:
        s = apply(s, Step("reveal", card=card))
    assert s.display == ((20, 4, 31, 9), (57, 40, 71), (100, 80))
    assert s.chance == (("row",),) * 6
    with pytest.raises(IllegalStep) as info:
        apply(s, Step("pick", 0, color=0))  # the Row is not filled yet
    assert info.value.code == "OUT_OF_SEQUENCE"
    for color in (0, 0, 1, 2, 3, 3):
        s = apply(s, Step("dispense", color=color))
    assert s.row == (2, 1, 1, 2) and not s.chance and s.dispenser == (11, 12, 12, 11)
    check_invariants(s)
    assert s.deck_size(3) == 14 and s.to_json()["decks"]["3"][0]["count"] == 14


@pytest.mark.parametrize(
    "step,code",
    [
        (Step("reveal", card=20), "IMPOSSIBLE_OUTCOME"),  # already face up in the Display
        (Step("reveal", card=50), "IMPOSSIBLE_OUTCOME"),  # a Level II card for a Level I slot
        (Step("dispense", color=0), "OUT_OF_SEQUENCE"),  # a marble when a card is awaited
    ],
)
def test_impossible_outcomes_are_refused(step: Step, code: str) -> None:
    s = apply(new_game(2), Step("reveal", card=20))
    with pytest.raises(IllegalStep) as info:
        apply(s, step)
    assert info.value.code == code


def test_a_color_the_dispenser_no_longer_holds() -> None:
    s = table(gizmos={0: [80], 1: [81]}, rings={0: (5, 0, 0, 0), 1: (6, 0, 0, 0)}, display=[20])
    assert s.dispenser[0] == 0
    s = apply(s, Step("file", 0, card=20), random.Random(0))
    s = apply(s, Step("use", 0, gizmo=0))
    assert s.chance == (("draw", 0),)
    assert {x.color for x, _ in chance_outcomes(s)} == {1, 2, 3}
    with pytest.raises(IllegalStep) as info:
        apply(s, Step("dispense", color=0))
    assert info.value.code == "IMPOSSIBLE_OUTCOME"


def test_observed_research_then_the_order_under_the_deck_is_known() -> None:
    s = table(rings={0: (0, 0, 0, 0)})
    s = apply(s, Step("research", 0, level=2))
    assert s.chance == (("research", 2),) * 3
    for card in (60, 61, 62):  # the camera sees the three cards drawn
        s = apply(s, Step("reveal", card=card))
    assert s.pending is not None and s.pending.hand == (60, 61, 62)
    s = apply(s, Step("skip", 0))
    s = apply(s, Step("bottom", 0, card=62))
    s = apply(s, Step("bottom", 0, card=60))
    assert s.decks[1][-3:] == (((62,), 1), ((60,), 1), ((61,), 1))
    check_invariants(s)


def test_seeded_randomness_is_reproducible_and_pluggable() -> None:
    a = random_game(GIZMOS, 3, 11)
    b = random_game(GIZMOS, 3, 11)
    assert a.final == b.final and a.steps == b.steps
    s0 = new_game(2)
    assert resolve_chance(s0, random.Random(1)) == resolve_chance(s0, random.Random(1))
    assert resolve_chance(s0, random.Random(1)) != resolve_chance(s0, random.Random(2))
    assert s0 == new_game(2)  # nothing was mutated


def test_chance_probabilities_follow_the_dispenser() -> None:
    s = table(rings={0: (1, 0, 0, 0)}, display=[20], row=(2, 2, 1, 1))
    s = apply(s, Step("file", 0, card=20), random.Random(0))
    s = apply(s, Step("use", 0, gizmo=0))
    probs = {step.color: p for step, p in chance_outcomes(s)}
    total = sum(s.dispenser)
    assert probs == {c: s.dispenser[c] / total for c in range(4)}
