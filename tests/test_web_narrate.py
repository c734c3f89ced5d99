"""The move log: one plain sentence per turn, read from the game record."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from referee.gizmos import COLORS, marbles
from referee.tracker.record import GameRecord
from tests.web_testing import ApiClient, hub_of
from web.demo import play_random
from web.hub import Hub
from web.narrate import correction_text, gizmo_name, listing


def play(api: ApiClient, gid: str, step: dict[str, Any]) -> None:
    resp = api.post(f"/api/games/{gid}/steps", {"step": step})
    assert resp.status_code == 200, resp.get_json()


def legal(api: ApiClient, gid: str, kind: str) -> list[dict[str, Any]]:
    groups = api.get(f"/api/games/{gid}/legal-steps").get_json()
    return [s["step"] for g in groups if g["kind"] == kind for s in g["steps"]]


def resolve_chance(api: ApiClient, gid: str) -> None:
    """Enter the first possible outcome of every random event now awaited."""
    while True:
        groups = api.get(f"/api/games/{gid}/legal-steps").get_json()
        if not groups or groups[0]["kind"] not in ("reveal", "dispense"):
            return
        play(api, gid, groups[0]["steps"][0]["step"])


def log(api: ApiClient, gid: str) -> list[dict[str, Any]]:
    return api.get(f"/api/games/{gid}/log").get_json()


def test_helpers() -> None:
    assert marbles((0, 2, 0, 1)) == "2 blue, 1 yellow" and marbles((0, 0, 0, 0)) == "nothing"
    assert listing(["#1"]) == "#1" and listing(["a", "b", "c"]) == "a, b and c"
    assert gizmo_name(33) == "Build gizmo #33" and gizmo_name(2) == "Starting Gizmo #2"


def test_a_build_from_the_archive_and_what_a_gizmo_gave(app: Flask) -> None:
    """The issue's own example: a Build from the Archive, then a Build gizmo's pick from the Row."""
    api = ApiClient(app)
    gid = api.new_game(["Ana", "Ben"], seed=1)
    table = api.get(f"/api/games/{gid}").get_json()
    state = hub_of(app).get(gid).tracker.state.to_json()
    assert all(59 not in row and 33 not in row for row in table["view"]["display"].values())
    assert state["row"]["yellow"] >= 1
    # Ana has #59 (blue, cost 2) in her Archive, Build gizmo #33 ("when you Build a blue gizmo,
    # pick 1 from the Row") built, and 2 blue in her ring.
    for level, card in (("1", 33), ("2", 59)):
        segment = state["decks"][level][0]
        segment["cards"].remove(card)
        segment["count"] -= 1
    state["players"][0].update(archive=[59], gizmos=[0, 33], ring={**state["players"][0]["ring"], "blue": 2})
    state["dispenser"]["blue"] -= 2
    resp = api.post(f"/api/games/{gid}/corrections", {"what": "state", "payload": {"state": state}})
    assert resp.status_code == 200, resp.get_json()
    play(api, gid, {"kind": "build", "player": 0, "card": 59, "pay": {"blue": 2}})
    play(api, gid, {"kind": "use", "player": 0, "gizmo": 33})
    play(api, gid, {"kind": "pick", "player": 0, "color": "yellow"})
    resolve_chance(api, gid)
    play(api, gid, {"kind": "end_turn", "player": 0})
    entries = log(api, gid)
    assert entries[-2]["text"] == "Correction by admin: the whole table was set as entered."
    turn = entries[-1]
    assert turn["kind"] == "turn" and turn["done"] and turn["name"] == "Ana" and turn["round"] == 1
    assert re.fullmatch(
        r"Ana built #59 from their Archive, paying 2 blue; their Build gizmo #33 gave them a yellow "
        r"from the Row \(the Row refilled with (red|blue|black|yellow)\)\.",
        turn["text"],
    ), turn["text"]
    assert [s["kind"] for s in turn["steps"]] == ["build", "use", "pick", "dispense", "end_turn"]


def test_a_research_is_one_clause(app: Flask) -> None:
    api = ApiClient(app)
    gid = api.new_game(["Ana", "Ben"], seed=2)
    play(api, gid, {"kind": "research", "player": 0, "level": 1})
    resolve_chance(api, gid)
    hand = hub_of(app).get(gid).tracker.state.pending.hand
    assert len(hand) == 3
    play(api, gid, {"kind": "file", "player": 0, "card": hand[1]})
    for step in [legal(api, gid, "bottom")[0]]:
        play(api, gid, step)
    resolve_chance(api, gid)
    # Filing triggered the Starting Gizmo: a random draw.
    play(api, gid, {"kind": "use", "player": 0, "gizmo": 0})
    resolve_chance(api, gid)
    play(api, gid, {"kind": "end_turn", "player": 0})
    text = log(api, gid)[-1]["text"]
    a, b, c = hand
    rest = [x for x in hand if x != b]
    assert text.startswith(
        f"Ana researched the Level I deck, drawing #{a}, #{b} and #{c}, and filed #{b}; "
        f"#{rest[0]} and #{rest[1]} went under the deck"
    ) or text.startswith(
        f"Ana researched the Level I deck, drawing #{a}, #{b} and #{c}, and filed #{b}; "
        f"#{rest[1]} and #{rest[0]} went under the deck"
    ), text
    assert re.search(
        r"; their Starting Gizmo #0 gave them an? (red|blue|black|yellow) from the dispenser\.$", text
    )


def test_an_observed_setup_then_a_correction_mid_turn(app: Flask) -> None:
    api = ApiClient(app)
    made = api.post("/api/games", {"names": ["Ana", "Ben"]})
    gid = made.get_json()["id"]
    [setup] = log(api, gid)
    assert setup == {**setup, "kind": "setup", "done": False}
    assert setup["text"] == "Setting up: 15 card(s) and marble(s) still to be entered …"
    resolve_chance(api, gid)
    view = api.get(f"/api/games/{gid}").get_json()["view"]
    pick = legal(api, gid, "pick")[0]
    play(api, gid, pick)
    entries = log(api, gid)
    assert entries[0]["done"] and entries[0]["text"].startswith("Setup: the Display shows Level I #")
    assert (
        f"the Energy Row holds {', '.join(f'{n} {c}' for c, n in view['row'].items() if n)}."
        in entries[0]["text"]
    )
    assert entries[1]["text"].endswith(" …") and not entries[1]["done"]
    # A correction in the middle of the turn freezes the entry; the turn goes on in a new one.
    api.post(f"/api/games/{gid}/corrections", {"what": "card_id", "payload": {"old": 4, "new": 5}})
    resolve_chance(api, gid)
    play(api, gid, {"kind": "end_turn", "player": 0})
    entries = log(api, gid)
    assert [e["kind"] for e in entries] == ["setup", "turn", "correction", "turn"]
    assert entries[1]["done"] and entries[1]["text"] == f"Ana took a {pick['color']} from the Row …"
    assert entries[2]["text"] == "Correction by admin: the card taken for #4 is really #5."
    assert entries[3]["text"].startswith("Ana, continuing, ended the turn (the Row refilled with ")


def test_finished_entries_never_change(app: Flask) -> None:
    api = ApiClient(app)
    gid = api.new_game(["Ana", "Ben", "Chloé"], seed=9)
    game = hub_of(app).get(gid)
    rng = random.Random(9)
    earlier: list[dict[str, Any]] = []
    for _ in range(12):
        play_random(game, rng, 1)
        snap = game.snapshot
        assert snap.log[: len(earlier)] == earlier
        earlier = snap.log[: snap.finished]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_whole_random_games_read_as_one_entry_per_turn(tmp_path: Path, seed: int) -> None:
    hub = Hub(tmp_path)
    players = 2 + seed % 3
    game = hub.create(["Ana", "Ben", "Chloé", "Dev"][:players], seed=seed, deal=True)
    play_random(game, random.Random(seed), 500)
    state = game.tracker.state
    assert state.game_over
    entries = game.snapshot.log
    turns = [e for e in entries if e["kind"] == "turn"]
    assert len(turns) == state.turn and all(e["done"] for e in entries)
    names = game.tracker.names
    assert all(e["text"].startswith(names[e["player"]] + " ") and e["text"].endswith(".") for e in turns)
    # Every recorded step is in exactly one entry, in order.
    recorded = [e.payload["step"] for e in GameRecord(game.path).entries("step")]
    assert [s for e in entries for s in e["steps"]] == recorded
    winner = game.snapshot.view["scoring"]["winner"]
    assert entries[-1] == {
        **entries[-1],
        "kind": "end",
        "text": f"The game is over: {winner['name']} wins with {winner['total']} VP.",
    }
    assert not any(c in e["text"] for e in turns for c in ("None", "P1 ", "P2 ", "#None"))
    assert {c for e in turns for c in COLORS if f" {c}" in e["text"]}


def test_a_turn_explained_again_from_its_start_replaces_its_earlier_steps() -> None:
    """The tracker's ``state`` entry with reason "revise" voids the turn's earlier steps."""
    from referee.gizmos import legal_steps, new_game
    from referee.gizmos import resolve_chance as deal
    from web.narrate import Narrator

    start = deal(new_game(2), random.Random(4))
    narrator = Narrator(["Ana", "Ben"], start)
    picks = [s for s in legal_steps(start) if s.kind == "pick"]
    first, second = picks[0], picks[-1]
    assert first.color != second.color
    narrator.feed("step", {"step": first.to_json()}, "referee")
    assert narrator.entries()[-1]["steps"] == [first.to_json()]
    narrator.feed("state", {"state": start.to_json(), "reason": "revise"}, "referee")
    narrator.feed("step", {"step": second.to_json()}, "referee")
    turns = [e for e in narrator.entries() if e["kind"] == "turn"]
    assert len(turns) == 1 and turns[0]["steps"] == [second.to_json()]
    assert COLORS[second.color or 0] in turns[0]["text"]


def test_a_corrected_ring_is_named_by_its_player() -> None:
    payload = {"what": "marble_color", "payload": {"zone": "ring", "seat": 1, "from": "red", "to": "blue"}}
    assert correction_text(payload, "admin", ["Ana", "Ben"]) == (
        "Correction by admin: a marble in Ben's ring is blue, not red."
    )
    assert "in seat 1's ring" in correction_text(payload, "admin")  # no names: the JSON's seat
