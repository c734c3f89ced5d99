"""Contrivance in the dashboard through Flask's test client: creating a game (PIN + CSRF),
entering steps through the Scorekeeper's record (resume, undo, export), 4xx JSON errors, the
final scoring against the engine's, and scoring a finished table entered once."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from referee.contrivance import CONTRIVANCE, Tile, score, score_workbench
from referee.tracker.scorekeeper import Scorekeeper
from tests.web_testing import ApiClient, make_app

SEED = 113  # a 2-player game that random play finishes in 25 steps


@pytest.fixture
def app(tmp_path: Path) -> Flask:
    return make_app(tmp_path / "games")


@pytest.fixture
def api(app: Flask) -> ApiClient:
    return ApiClient(app)


def new_game(api: ApiClient, **body: Any) -> str:
    resp = api.post("/api/contrivance/games", {"names": ["Ana", "Ben"], "deal": True, "seed": SEED, **body})
    assert resp.status_code == 201, resp.get_json()
    return str(resp.get_json()["id"])


def view(api: ApiClient, gid: str) -> dict[str, Any]:
    resp = api.get(f"/api/contrivance/games/{gid}")
    assert resp.status_code == 200
    return dict(resp.get_json()["view"])


def short_game() -> list[dict[str, Any]]:
    """The steps of a whole game from the seeded setup, chosen by random legal play."""
    rng = random.Random(SEED)
    state = CONTRIVANCE.new_game(2, random.Random(SEED))
    steps = []
    while not state.game_over:
        step = rng.choice(CONTRIVANCE.legal_steps(state))
        steps.append(step.to_json())
        state = CONTRIVANCE.apply(state, step)
    return steps


def test_creating_a_game_needs_the_pin_and_the_csrf_token(app: Flask, api: ApiClient) -> None:
    body = {"names": ["Ana", "Ben"], "deal": True, "seed": 1}
    assert api.post("/api/contrivance/games", body, pin=None).status_code == 401
    assert api.post("/api/contrivance/games", body, pin="9999").status_code == 403
    forged = api.post("/api/contrivance/games", body, csrf=False)
    assert forged.status_code == 403 and "CSRF" in forged.get_json()["error"]
    assert api.get("/api/contrivance/games").get_json()["games"] == []
    gid = new_game(api)
    assert [g["id"] for g in api.get("/api/contrivance/games").get_json()["games"]] == [gid]
    assert (Path(app.config["GAMES_DIR"]) / "contrivance" / f"{gid}.sqlite").is_file()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"names": ["Ana"]}, "names: expected a list of 2 to 6"),
        ({"names": ["Ana", "ana"]}, "same name"),
        ({"names": ["Ana", ""]}, "names[1]"),
        ({"names": ["Ana", "Ben"], "seed": 3}, "only a dealt setup"),
        ({"names": ["Ana", "Ben"], "deal": "yes"}, "deal:"),
        ({"names": ["Ana", "Ben"], "deal": True, "seed": -1}, "seed:"),
        ({"names": ["Ana", "Ben"], "colour": 1}, "unknown field"),
    ],
)
def test_a_bad_new_game_is_400_json(api: ApiClient, body: dict[str, Any], message: str) -> None:
    resp = api.post("/api/contrivance/games", body)
    assert resp.status_code == 400 and message in resp.get_json()["error"]


def test_bad_steps_are_4xx_json_and_record_nothing(api: ApiClient) -> None:
    gid = new_game(api)
    url = f"/api/contrivance/games/{gid}/steps"
    assert api.post(url, {"nope": 1}).status_code == 400
    assert api.post(url, data="{", headers={"Content-Type": "application/json"}).status_code == 400
    assert api.post(url, data="x", headers={"Content-Type": "text/plain"}).status_code == 415
    malformed = api.post(url, {"step": {"kind": "fly"}})
    assert malformed.status_code == 422 and "error" in malformed.get_json()
    wrong_seat = api.post(
        url, {"step": {"kind": "place", "player": 1, "tile": "Cognicator-1", "to": [2, 1], "facing": "N"}}
    )
    assert wrong_seat.status_code == 409 and wrong_seat.get_json()["code"] == "NOT_YOUR_TURN"
    col5 = api.post(
        url, {"step": {"kind": "place", "player": 0, "tile": "Engineer-1", "to": [1, 5], "facing": "N"}}
    )
    assert col5.status_code == 409 and col5.get_json()["code"] == "COLUMN_FIVE_IN_BUILDING"
    assert col5.get_json()["rulings"] == [10]
    assert view(api, gid)["steps_kept"] == 0
    assert api.post(f"/api/contrivance/games/{gid}/undo").status_code == 409
    assert api.get("/api/contrivance/games/nope").status_code == 404
    assert api.post("/api/contrivance/games/nope/steps", {"step": {"kind": "pass"}}).status_code == 404


def test_a_whole_game_entered_is_recorded_and_scored_as_the_engine_scores_it(
    app: Flask, api: ApiClient
) -> None:
    gid = new_game(api)
    steps = short_game()
    url = f"/api/contrivance/games/{gid}/steps"
    for step in steps:
        offered = [s["step"] for s in view(api, gid)["legal"]]
        assert step in offered
        assert api.post(url, {"step": step}).status_code == 200
    v = view(api, gid)
    assert v["game_over"] and v["legal"] == [] and v["steps_kept"] == len(steps)
    state = CONTRIVANCE.new_game(2, random.Random(SEED))
    for step in steps:
        state = CONTRIVANCE.apply(state, CONTRIVANCE.step_from_json(step))
    assert v["scoring"] == score(state).to_json()
    assert api.post(url, {"step": {"kind": "pass", "player": 0}}).get_json()["code"] == "GAME_OVER"
    # The record resumes in a fresh server and exports to the same game.
    export = api.get(f"/api/contrivance/games/{gid}/export")
    assert export.status_code == 200 and "attachment" in export.headers["Content-Disposition"]
    assert Scorekeeper.from_export(json.loads(export.data)).state == state
    again = ApiClient(make_app(app.config["GAMES_DIR"]))
    assert view(again, gid)["scoring"] == v["scoring"]
    # Undo takes the last step back, in the record too.
    assert api.post(f"/api/contrivance/games/{gid}/undo").status_code == 200
    assert view(api, gid)["steps_kept"] == len(steps) - 1 and not view(api, gid)["game_over"]
    assert Scorekeeper.open(Path(app.config["GAMES_DIR"]) / "contrivance" / f"{gid}.sqlite").steps[-1] == (
        CONTRIVANCE.step_from_json(steps[-2])
    )


def test_an_observed_setup_waits_for_the_builders_drawn(api: ApiClient) -> None:
    resp = api.post("/api/contrivance/games", {"names": ["Ana", "Ben", "Cy"]})
    gid = resp.get_json()["id"]
    v = view(api, gid)
    assert v["awaiting"] == "enter the Builder seat 0 drew" and v["current"] is None
    assert {s["step"]["kind"] for s in v["legal"]} == {"builder"}


def test_the_pages_render(api: ApiClient) -> None:
    gid = new_game(api)
    page = api.get(f"/contrivance/games/{gid}").get_data(as_text=True)
    assert 'id="ct-bench"' in page and 'name="csrf-token"' in page and "contrivance.js" in page
    assert "Create game" in api.get("/contrivance").get_data(as_text=True)
    assert "Score a finished table" in api.get("/contrivance/score").get_data(as_text=True)
    assert api.get("/contrivance/games/nope").status_code == 404


def tile(builder: str, value: int, facing: str, double: bool = False) -> dict[str, Any]:
    return {"builder": builder, "double": double, "value": value, "facing": facing}


def test_scoring_a_finished_table_matches_the_engine(api: ApiClient) -> None:
    table = {
        "builders": ["Engineer", "Mechanic"],
        "workbench": [
            [tile("Engineer", 2, "E"), tile("Engineer", 5, "W"), None, tile("Mechanic", 4, "N", True), None],
            [tile("Mechanic", 3, "N"), None, None, tile("Engineer", 1, "S"), tile("Mechanic", 0, "E")],
        ],
        "damage": -1,
        "requirement": 1,
    }
    resp = api.post("/api/contrivance/score", table, pin=None)
    assert resp.status_code == 200
    out = resp.get_json()

    def t(b: str, v: int, f: int, rivets: tuple[int, ...] = (0,)) -> Tile:
        return Tile(f"{b}-{4 if len(rivets) > 1 else 1}", b, rivets, v, f)

    bench = (
        (t("Engineer", 2, 1), t("Engineer", 5, 3), None, t("Mechanic", 4, 0, (0, 2)), None),
        (t("Mechanic", 3, 0), None, None, t("Engineer", 1, 2), t("Mechanic", 0, 1)),
    )
    expected = score_workbench(bench, ["Engineer", "Mechanic"], -1, 1)
    assert out["scoring"] == expected.to_json()
    # The set {1:1, 1:2} burns its lowest; the Double on 1:4 (N, S) meets 2:4 (S) across the wrap.
    assert out["scoring"]["sets"] == [[[1, 1], [1, 2]], [[1, 4], [2, 4]]]
    burnt = {tuple(v["square"]) for v in out["scoring"]["tiles"] if v["burnt"]}
    assert (1, 1) in burnt and (1, 2) not in burnt
    assert all(line["bonus_reason"] for line in out["scoring"]["ranking"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"builders": ["Engineer"]}, "builders: expected"),
        ({"builders": ["Engineer", "Engineer"]}, "appears twice"),
        ({"builders": ["Engineer", "Wizard"]}, "builders[1]"),
        ({"workbench": [[None] * 5]}, "workbench: expected 2 rows"),
        ({"workbench": [[None] * 4, [None] * 5]}, "workbench[0]: expected 5"),
        ({"workbench": [[tile("Engineer", 7, "N")] + [None] * 4, [None] * 5]}, "workbench[0][0].value"),
        ({"workbench": [[tile("Engineer", 1, "X")] + [None] * 4, [None] * 5]}, "workbench[0][0].facing"),
        (
            {
                "workbench": [
                    [{"builder": "Engineer", "value": 1, "facing": "N", "x": 1}] + [None] * 4,
                    [None] * 5,
                ]
            },
            "[0][0]",
        ),
        ({"damage": "low"}, "damage:"),
        ({"damage": 31}, "damage:"),
        ({"damage": True}, "damage:"),
        ({"requirement": 9}, "requirement:"),
        ({"extra": 1}, "unknown field"),
    ],
)
def test_a_bad_finished_table_is_400_json(api: ApiClient, change: dict[str, Any], message: str) -> None:
    table = {
        "builders": ["Engineer", "Mechanic"],
        "workbench": [[None] * 5, [None] * 5],
        "damage": 0,
        **change,
    }
    resp = api.post("/api/contrivance/score", table, pin=None)
    assert resp.status_code == 400 and message in resp.get_json()["error"], resp.get_json()
    assert api.post("/api/contrivance/score", table, pin=None, csrf=False).status_code == 403


def test_the_openapi_document_describes_the_contrivance_routes(api: ApiClient) -> None:
    paths = api.get("/api/openapi.json").get_json()["paths"]
    assert "adminPin" in json.dumps(paths["/api/contrivance/games/{game_id}/steps"]["post"]["security"])
    assert "422" in paths["/api/contrivance/games/{game_id}/steps"]["post"]["responses"]
    assert "post" in paths["/api/contrivance/score"]
