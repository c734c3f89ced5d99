"""History: the replay steps through a recorded game with the engine's states, undone moves are
struck through (void) and never counted, the score chart's data, past games and players, the CSV
and JSON exports, and the evidence crops kept with a warning."""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from flask import Flask

from referee.gizmos import State, apply, default_cards, ranking, state_from_json, step_from_json
from referee.tracker.history import moments
from tests.web_testing import ApiClient, break_a_rule, hub_of
from web.view import table_view

CARDS = default_cards()


def legal(api: ApiClient, gid: str) -> list[dict[str, Any]]:
    groups = api.get(f"/api/games/{gid}/legal-steps").get_json()
    return [s["step"] for g in groups for s in g["steps"]]


def play_with_an_undo(
    api: ApiClient, gid: str, steps: int, undo_at: int, seed: int = 7
) -> tuple[list[State], list[State]]:
    """Random legal steps entered through the API, one turn undone on the way. Returns the
    states the engine itself gives (applying each step that stands to the one before), and
    those of the steps undone."""
    rng = random.Random(seed)
    export = api.get(f"/api/games/{gid}/export").get_json()
    state = state_from_json(export["entries"][0]["payload"]["state"])
    stood: list[State] = [state]
    turn_start = 0  # index in stood where the current turn began
    undone: list[State] = []
    for i in range(steps):
        options = legal(api, gid)
        if not options:
            break
        step = rng.choice(options)
        assert api.post(f"/api/games/{gid}/steps", {"step": step}).status_code == 200
        state = apply(state, step_from_json(step))  # the engine's own state after the step
        stood.append(state)
        if step["kind"] == "end_turn":
            turn_start = len(stood) - 1
        if i == undo_at and len(stood) - 1 > turn_start:
            assert api.post(f"/api/games/{gid}/undo").status_code == 200
            undone += stood[turn_start + 1 :]
            del stood[turn_start + 1 :]
            state = stood[-1]
    return stood, undone


def test_the_replay_shows_the_engines_states_and_strikes_undone_moves(app: Flask, api: ApiClient) -> None:
    gid = api.new_game(["Ana", "Ben"], seed=5)
    stood, undone = play_with_an_undo(api, gid, steps=70, undo_at=33)
    assert undone, "the game should have a turn undone"
    replay = api.get(f"/api/games/{gid}/replay").get_json()
    ms = replay["moments"]
    # the moments that stood are exactly the engine's states, in order
    with hub_of(app).get(gid).locked() as tracker:
        entries = list(tracker.record.entries())
        live = tracker.state
    replayed = moments(entries)
    assert [m.state for m in replayed if m.void is None and m.kind in ("setup", "step")] == stood
    assert replayed[-1].state == live
    # the undone ones are kept, marked, and were the engine's states too
    assert [m.state for m in replayed if m.void == "undone"] == undone
    assert [m["void"] for m in ms] == [m.void for m in replayed]
    assert [m["kind"] for m in ms].count("undo") == 1
    # each moment's table is the table of the engine's state; scores are each seat's live score
    names = ["Ana", "Ben"]
    for m in (ms[0], ms[len(ms) // 2], ms[-1]):
        got = api.get(f"/api/games/{gid}/replay/{m['index']}").get_json()
        state = replayed[m["index"]].state
        want = table_view(_At(state, names))
        for key in ("display", "decks", "row", "dispenser", "players", "round", "current"):
            assert got["view"][key] == want[key], key
        assert m["scores"] == [next(x.total for x in ranking(state) if x.seat == s) for s in (0, 1)]
    # the move log strikes the undone turn through rather than presenting it as played
    log = api.get(f"/api/games/{gid}/log").get_json()
    assert any(e.get("void") == "undone" for e in log)
    assert api.get(f"/api/games/{gid}/replay/{len(ms)}").status_code == 404


class _At:
    """A state to draw with :func:`table_view`, as the engine has it."""

    def __init__(self, state: State, names: list[str]) -> None:
        self.state, self.names, self.ended_by, self.warnings = state, names, None, []

    def legal_steps(self) -> list[Any]:
        return []


def test_the_live_page_is_sent_the_struck_through_turn(app: Flask, api: ApiClient) -> None:
    gid = api.new_game(["Ana", "Ben"], seed=2)
    game = hub_of(app).get(gid)
    before = game.snapshot
    step = next(s for s in legal(api, gid) if s["kind"] == "pick")
    api.post(f"/api/games/{gid}/steps", {"step": step})
    seen = game.snapshot.seq
    assert api.post(f"/api/games/{gid}/undo").status_code == 200
    event = game.event_since(seen)  # a page that had the turn as played gets it again, struck
    assert event["log_from"] <= len(before.log)
    assert any(e.get("void") == "undone" for e in event["log"])


def test_exports_csv_and_readable_json(api: ApiClient) -> None:
    gid = api.new_game(["Ana", "Ben"], seed=5)
    play_with_an_undo(api, gid, steps=40, undo_at=20)
    ms = api.get(f"/api/games/{gid}/replay").get_json()["moments"]
    resp = api.get(f"/api/games/{gid}/export.csv")
    assert resp.status_code == 200 and resp.mimetype == "text/csv"
    assert f"gizmos-{gid}.csv" in resp.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(resp.get_data(as_text=True))))
    assert len(rows) == len(ms)
    assert [r["void"] for r in rows] == [m["void"] or "" for m in ms]
    assert [int(r["score Ana"]) for r in rows] == [m["scores"][0] for m in ms]
    assert rows[1]["what"] == ms[1]["text"] and rows[0]["kind"] == "setup"
    record = api.get(f"/api/games/{gid}/game-record.json").get_json()
    assert record["format"] == "gizmos-game" and record["players"][1] == {"seat": 1, "name": "Ben"}
    assert len(record["moves"]) == len(ms) - 1
    assert sum(1 for m in record["moves"] if m.get("void") == "undone") == sum(1 for m in ms if m["void"])
    assert record["moves"][-1]["scores"] == dict(zip(["Ana", "Ben"], ms[-1]["scores"], strict=True))


def test_past_games_and_players(app: Flask, api: ApiClient) -> None:
    finals = []
    for seed, names in ((1, ["Ana", "Ben"]), (2, ["ben", "Cy"]), (3, ["Ana", "Cy"])):
        gid = api.new_game(names, seed=seed)
        rng = random.Random(seed)
        for _ in range(60):
            api.post(f"/api/games/{gid}/steps", {"step": rng.choice(legal(api, gid))})
        if seed != 3:
            assert api.post(f"/api/games/{gid}/end").status_code == 200
        with hub_of(app).get(gid).locked() as tracker:
            finals.append((names, tracker.state, seed != 3))
    got = api.get("/api/history").get_json()
    assert len(got["games"]) == 3 and got["unreadable"] == []
    players = {p["name"].casefold(): p for p in got["players"]}
    for key in ("ana", "ben", "cy"):
        played = [(n, s, over) for n, s, over in finals if key in [x.casefold() for x in n]]
        seat_of = [[x.casefold() for x in n].index(key) for n, _, _ in played]
        done = [(s, seat) for (n, s, over), seat in zip(played, seat_of, strict=True) if over]
        wins = sum(1 for s, seat in done if ranking(s)[0].seat == seat)
        totals = [next(x.total for x in ranking(s) if x.seat == seat) for s, seat in done]
        types: dict[str, int] = {}
        for (_, s, _), seat in zip(played, seat_of, strict=True):
            for g in s.players[seat].gizmos:
                if CARDS[g].level > 0:
                    types[CARDS[g].type] = types.get(CARDS[g].type, 0) + 1
        p = players[key]
        assert (p["games"], p["finished"], p["wins"]) == (len(played), len(done), wins), key
        assert p["average"] == (round(sum(totals) / len(totals), 1) if totals else None), key
        best = max(types.values(), default=0)
        assert sorted(p["favourite_types"]) == sorted(t for t, n in types.items() if n == best and n), key
    page = api.get("/history")
    assert page.status_code == 200 and b"Average score" in page.data and b"Favourite gizmo types" in page.data


def test_a_warning_carries_its_evidence_crops(app: Flask, api: ApiClient, tmp_path: Path) -> None:
    gid = api.new_game(["Ana", "Ben"], seed=4)
    game = hub_of(app).get(gid)
    break_a_rule(game)
    warning = game.snapshot.view["warnings"][0]
    url = f"/api/games/{gid}/warnings/{warning['id']}/evidence/before.jpg"
    assert api.get(url).status_code == 404  # no camera: no crop, and the answer says so
    crops = {}
    for moment, shade in (("before", 30), ("after", 200)):
        ok, buf = cv2.imencode(".jpg", np.full((40, 60, 3), shade, np.uint8))
        assert ok
        crops[moment] = buf.tobytes()
        with game.locked() as tracker:
            tracker.record.add_evidence(warning["id"], moment, crops[moment], ["row"])
            tracker._emit("warning", {})  # publish, as the live runner's change does
    view = api.get(f"/api/games/{gid}").get_json()["view"]
    assert view["evidence"][str(warning["id"])] == {"moments": ["before", "after"], "zones": ["row"]}
    for moment in ("before", "after"):
        got = api.get(f"/api/games/{gid}/warnings/{warning['id']}/evidence/{moment}.jpg")
        assert got.status_code == 200 and got.mimetype == "image/jpeg" and got.data == crops[moment]
    replay = api.get(f"/api/games/{gid}/replay").get_json()
    w = next(x for x in replay["warnings"] if x["id"] == warning["id"])
    assert w["evidence"]["before"].endswith("/before.jpg") and w["evidence"]["zones"] == ["row"]
    assert any(warning["id"] in m["warnings"] for m in replay["moments"])
    bad = api.get(f"/api/games/{gid}/warnings/{warning['id']}/evidence/during.jpg")
    assert bad.status_code == 404 and "before.jpg or after.jpg" in bad.get_json()["error"]


def test_history_routes_answer_unknown_games_with_404(api: ApiClient) -> None:
    for url in (
        "/api/games/nope/replay",
        "/api/games/nope/replay/0",
        "/api/games/nope/export.csv",
        "/api/games/nope/game-record.json",
        "/api/games/nope/warnings/1/evidence/before.jpg",
    ):
        resp = api.get(url)
        assert resp.status_code == 404 and "no game 'nope'" in resp.get_json()["error"], url
    assert api.get("/games/nope/replay").status_code == 404


def test_the_replay_page_embeds_the_moments(api: ApiClient) -> None:
    gid = api.new_game(["Ana", "Ben"], seed=5)
    page = api.get(f"/games/{gid}/replay")
    assert page.status_code == 200 and b'id="replay-data"' in page.data and b"replay.js" in page.data


def test_a_move_with_a_misread_card_is_struck_through_once_corrected(api: ApiClient) -> None:
    gid = api.new_game(["Ana", "Ben"], seed=5)
    filed = next(s for s in legal(api, gid) if s["kind"] == "file")
    assert api.post(f"/api/games/{gid}/steps", {"step": filed}).status_code == 200
    display = api.get(f"/api/games/{gid}").get_json()["view"]["display"]
    other = next(c for lvl in ("1", "2", "3") for c in display[lvl] if c is not None and c != filed["card"])
    fix = {"what": "card_id", "payload": {"old": filed["card"], "new": other}}
    assert api.post(f"/api/games/{gid}/corrections", fix).status_code == 200
    ms = api.get(f"/api/games/{gid}/replay").get_json()["moments"]
    assert [m["void"] for m in ms if m["step"] == filed] == ["corrected"]
    assert ms[-1]["kind"] == "correction" and ms[-1]["void"] is None
    log = api.get(f"/api/games/{gid}/log").get_json()
    turn = next(e for e in log if e["kind"] == "turn" and filed in e["steps"])
    assert turn["void"] == "corrected"
    assert log[-1]["kind"] == "correction" and f"#{filed['card']} is really #{other}" in log[-1]["text"]


def test_a_live_games_replay_follows_it(api: ApiClient) -> None:
    gid = api.new_game(["Ana", "Ben"], seed=8)
    first = api.get(f"/api/games/{gid}/replay").get_json()["moments"]
    step = legal(api, gid)[0]
    assert api.post(f"/api/games/{gid}/steps", {"step": step}).status_code == 200
    again = api.get(f"/api/games/{gid}/replay").get_json()["moments"]
    assert len(again) == len(first) + 1 and again[-1]["step"] == step
