"""The OpenAPI document is generated from the schemas the server validates with: every route is
in it, and every route, called as documented, answers with the status and the body it documents.

(Every other dashboard test also runs with ``VALIDATE_RESPONSES``: any JSON answer that drifts
from its documented schema, an error included, is a 500 there.)
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from flask import Flask

from referee.app.streams import PhoneFrames
from tests.web_testing import ApiClient, break_a_rule, hub_of, make_app
from web.live import FrameBuffer
from web.schemas import SchemaError, check_schema, document, openapi_document, validate


@pytest.fixture
def world(tmp_path: Path) -> tuple[Flask, ApiClient, dict[str, str]]:
    """A server with a camera, a Gizmos game with a warning and its evidence, a Contrivance game."""
    frames = FrameBuffer("camera 0")
    frames.publish_image(np.full((48, 64, 3), 90, np.uint8))
    app = make_app(tmp_path / "games", FRAME_SOURCE=frames, SSE_MAX_S=0.3, PHONE_CAMERA=PhoneFrames())
    api = ApiClient(app)
    gid = api.new_game(["Ana", "Ben"], seed=3)
    game = hub_of(app).get(gid)
    break_a_rule(game)
    ok, buf = cv2.imencode(".jpg", np.full((20, 20, 3), 50, np.uint8))
    assert ok
    with game.locked() as tracker:
        tracker.record.add_evidence(1, "before", buf.tobytes(), ["row"])
    made = api.post("/api/contrivance/games", {"names": ["Ana", "Ben"], "deal": True, "seed": 2})
    assert made.status_code == 201
    return app, api, {"game_id": gid, "cid": made.get_json()["id"]}


def calls(ids: dict[str, str], api: ApiClient) -> dict[tuple[str, str], tuple[str, Any]]:
    """One valid request per documented operation: (path, method) -> (url, body)."""
    g, c = ids["game_id"], ids["cid"]
    cview = api.get(f"/api/contrivance/games/{c}").get_json()["view"]
    step = api.get(f"/api/games/{g}/legal-steps").get_json()[0]["steps"][0]["step"]
    a, b = api.get(f"/api/games/{g}").get_json()["view"]["display"]["1"][:2]  # two cards to swap
    return {
        ("/api/openapi.json", "get"): ("/api/openapi.json", None),
        ("/api/session", "get"): ("/api/session", None),
        ("/api/session/unlock", "post"): ("/api/session/unlock", {"pin": "2468"}),
        ("/api/session/lock", "post"): ("/api/session/lock", None),
        ("/api/settings", "get"): ("/api/settings", None),
        ("/api/settings", "put"): ("/api/settings", {"serial_port": ""}),
        ("/api/camera", "get"): ("/api/camera", None),
        ("/api/camera.mjpg", "get"): ("/api/camera.mjpg", None),
        ("/api/cards", "get"): ("/api/cards", None),
        ("/api/history", "get"): ("/api/history", None),
        ("/api/games", "get"): ("/api/games", None),
        ("/api/games", "post"): ("/api/games", {"names": ["Cy", "Di"], "deal": True, "seed": 5}),
        ("/api/games/{game_id}", "get"): (f"/api/games/{g}", None),
        ("/api/games/{game_id}/events", "get"): (f"/api/games/{g}/events", None),
        ("/api/games/{game_id}/legal-steps", "get"): (f"/api/games/{g}/legal-steps", None),
        ("/api/games/{game_id}/log", "get"): (f"/api/games/{g}/log", None),
        ("/api/games/{game_id}/scores", "get"): (f"/api/games/{g}/scores", None),
        ("/api/games/{game_id}/warnings", "get"): (f"/api/games/{g}/warnings", None),
        ("/api/games/{game_id}/export", "get"): (f"/api/games/{g}/export", None),
        ("/api/games/{game_id}/export.csv", "get"): (f"/api/games/{g}/export.csv", None),
        ("/api/games/{game_id}/game-record.json", "get"): (f"/api/games/{g}/game-record.json", None),
        ("/api/games/{game_id}/replay", "get"): (f"/api/games/{g}/replay", None),
        ("/api/games/{game_id}/replay/{index}", "get"): (f"/api/games/{g}/replay/1", None),
        ("/api/games/{game_id}/warnings/{warning_id}/evidence/{moment}.jpg", "get"): (
            f"/api/games/{g}/warnings/1/evidence/before.jpg",
            None,
        ),
        ("/api/games/{game_id}/warnings/{warning_id}", "post"): (
            f"/api/games/{g}/warnings/1",
            {"status": "accepted"},
        ),
        ("/api/games/{game_id}/steps", "post"): (f"/api/games/{g}/steps", {"step": step}),
        ("/api/games/{game_id}/corrections", "post"): (
            f"/api/games/{g}/corrections",
            {"what": "card_id", "payload": {"old": a, "new": b}},
        ),
        ("/api/games/{game_id}/end-of-turn", "post"): (f"/api/games/{g}/end-of-turn", None),
        ("/api/games/{game_id}/turn-ends", "post"): (
            f"/api/games/{g}/turn-ends",
            {"from_turn": 0, "ends": 1},
        ),
        ("/api/games/{game_id}/undo", "post"): (f"/api/games/{g}/undo", None),
        ("/api/games/{game_id}/live", "post"): (f"/api/games/{g}/live", {"action": "start"}),
        ("/api/games/{game_id}/end", "post"): (f"/api/games/{g}/end", None),
        ("/api/contrivance/games", "get"): ("/api/contrivance/games", None),
        ("/api/contrivance/games", "post"): ("/api/contrivance/games", {"names": ["Cy", "Di"]}),
        ("/api/contrivance/games/{game_id}", "get"): (f"/api/contrivance/games/{c}", None),
        ("/api/contrivance/games/{game_id}/events", "get"): (f"/api/contrivance/games/{c}/events", None),
        ("/api/contrivance/games/{game_id}/export", "get"): (f"/api/contrivance/games/{c}/export", None),
        ("/api/contrivance/games/{game_id}/steps", "post"): (
            f"/api/contrivance/games/{c}/steps",
            {"step": cview["legal"][0]["step"]},
        ),
        ("/api/contrivance/games/{game_id}/undo", "post"): (f"/api/contrivance/games/{c}/undo", None),
        ("/api/contrivance/score", "post"): ("/api/contrivance/score", SCORE_TABLE),
        ("/api/questions", "get"): ("/api/questions", None),
        ("/api/questions/{question}/face.png", "get"): ("/api/questions/1/face.png", None),
        ("/api/questions/{question}", "post"): ("/api/questions/1", {"card": 20}),
        ("/api/spread", "get"): ("/api/spread", None),
        ("/api/spread", "post"): ("/api/spread", None),
        ("/api/spread/camera", "post"): ("/api/spread/camera", None),
        ("/api/spread/{place}/face.png", "get"): ("/api/spread/0/face.png", None),
        ("/api/spread/confirm", "post"): (
            "/api/spread/confirm",
            {"spread": 1, "cards": [{"place": 0, "card": 5}]},
        ),
        ("/api/phone", "get"): ("/api/phone", None),
        ("/api/phone/code", "post"): ("/api/phone/code", None),
        ("/api/phone/pair", "post"): ("/api/phone/pair", {"code": "2468"}),
        ("/api/phone/frame", "post"): ("/api/phone/frame", None),
        ("/api/phone/unpair", "post"): ("/api/phone/unpair", None),
    }


SCORE_TABLE = {
    "builders": ["Engineer", "Mechanic"],
    "workbench": [[{"builder": "Engineer", "value": 2, "facing": "E"}] + [None] * 4, [None] * 5],
    "damage": 0,
}
# Documented answers other than success for the generic call: no camera pipeline or spread
# enrolment attached (test_spread_enrolment.py attaches one);
# JSON sent where a JPEG goes (test_phone.py sends one).
NO_RUNNER = {
    ("/api/games/{game_id}/live", "post"): 409,
    ("/api/questions/{question}/face.png", "get"): 404,
    ("/api/questions/{question}", "post"): 404,
    ("/api/spread", "post"): 404,
    ("/api/spread/camera", "post"): 404,
    ("/api/spread/{place}/face.png", "get"): 404,
    ("/api/spread/confirm", "post"): 404,
    ("/api/phone/frame", "post"): 415,
}


def test_every_route_answers_as_its_openapi_entry_says(
    world: tuple[Flask, ApiClient, dict[str, str]],
) -> None:
    _app, api, ids = world
    doc = api.get("/api/openapi.json").get_json()
    table = calls(ids, api)
    documented = [
        (p, m) for p, item in doc["paths"].items() for m in item if m in ("get", "post", "put", "delete")
    ]
    assert sorted(documented) == sorted(table), "every documented route has a call here, and no other"
    # changes last, in the order listed (the game ends last)
    for path, method in sorted(table, key=lambda k: (k[1] != "get", list(table).index(k))):
        url, body = table[(path, method)]
        op = doc["paths"][path][method]
        (status, answer), *_ = ((s, r) for s, r in op["responses"].items() if s.startswith("2"))
        media, spec = next(iter(answer["content"].items()))
        resp = api.send(method.upper(), url, body, buffered=False)
        try:
            want = NO_RUNNER.get((path, method), int(status))
            assert resp.status_code == want, (
                path,
                method,
                resp.status_code,
                resp.get_data(as_text=True)[:300],
            )
            assert str(want) in op["responses"], (path, method)
            if want != int(status):
                continue
            assert resp.mimetype == media.split(";")[0], (path, method, resp.mimetype)
            if media == "application/json":
                validate(spec, resp.get_json(), "response")  # the documented schema, as served
                assert spec != {"type": "object"}, f"{path} {method}: a bare object says nothing"
        finally:
            resp.close()


def test_the_document_needs_a_spec_for_every_route(tmp_path: Path) -> None:
    app = make_app(tmp_path)

    @app.get("/api/undocumented")
    def undocumented() -> str:
        return "{}"

    with pytest.raises(ValueError, match="has no API spec"):
        openapi_document(app)


def test_schemas_promise_only_what_the_validator_checks() -> None:
    with pytest.raises(ValueError, match="pattern"):
        check_schema({"type": "string", "pattern": "^a"})
    with pytest.raises(ValueError, match="needs its schema"):
        document("a JSON answer with no schema")


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        ({"type": "object", "required": ["names"]}, {}, "names: required"),
        ({"type": "array", "minItems": 2, "maxItems": 4}, [1], "expected a list of 2 to 4 items, got 1"),
        ({"type": ["integer", "null"], "minimum": 0}, -1, "expected at least 0"),
        ({"type": "integer"}, True, "expected a whole number, got true"),
        ({"enum": ["a", "b"]}, "c", "expected one of ['a', 'b']"),
        (
            {"type": "object", "properties": {"a": {}}, "additionalProperties": False},
            {"b": 1},
            "unknown field(s) ['b']",
        ),
        ({"oneOf": [{"type": "null"}, {"type": "object", "required": ["x"]}]}, {}, "x: required"),
    ],
)
def test_the_validator_names_what_is_wrong(schema: dict[str, Any], value: Any, message: str) -> None:
    with pytest.raises(SchemaError, match=re.escape(message)):
        validate(schema, value)


def test_an_answer_that_drifts_from_its_document_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(tmp_path)
    view = app.view_functions["api.get_session"]  # the blueprint's function: restored after the test
    drifted = dataclasses.replace(view.api_spec, ok={"type": "array"})  # type: ignore[attr-defined]
    monkeypatch.setattr(view, "api_spec", drifted)
    resp = app.test_client().get("/api/session")
    assert resp.status_code == 500 and "does not match the OpenAPI document" in resp.get_json()["error"]
