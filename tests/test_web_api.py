"""The dashboard's JSON API: every route, and every error path (PIN, CSRF, JSON, unknown game)."""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from referee.tracker import Tracker
from referee.tracker.record import RecordWriteError
from tests.web_testing import TEST_PIN, ApiClient, break_a_rule, hub_of, make_app
from web.errors import ApiError
from web.hub import LiveGame, Settings
from web.live import FrameBuffer
from web.schemas import openapi_document
from web.security import PinGuard


@pytest.fixture
def gid(app: Flask) -> str:
    """A new game, made by another browser (so ``api`` holds no admin session)."""
    return ApiClient(app).new_game()


def seq(app: Flask, game_id: str) -> int:
    return hub_of(app).get(game_id).snapshot.seq


def first_legal(api: ApiClient, game_id: str, kind: str) -> dict[str, Any]:
    groups = api.get(f"/api/games/{game_id}/legal-steps").get_json()
    return next(s["step"] for g in groups if g["kind"] == kind for s in g["steps"])


# Every state-changing route with a valid body ({id} is the game).
CHANGES: list[tuple[str, str, Any]] = [
    ("POST", "/api/games", {"names": ["Ana", "Ben"]}),
    ("POST", "/api/games/{id}/steps", {"step": {"kind": "pick", "player": 0, "color": "red"}}),
    ("POST", "/api/games/{id}/warnings/1", {"status": "dismissed"}),
    ("POST", "/api/games/{id}/corrections", {"what": "card_id", "payload": {"old": 12, "new": 13}}),
    ("POST", "/api/games/{id}/undo", None),
    ("POST", "/api/games/{id}/end-of-turn", None),
    ("POST", "/api/games/{id}/turn-ends", {"from_turn": 0, "ends": 1}),
    ("POST", "/api/games/{id}/end", None),
    ("POST", "/api/games/{id}/live", {"action": "start"}),
    ("PUT", "/api/settings", {"serial_port": "/dev/ttyUSB0"}),
]
GAME_CHANGES = [c for c in CHANGES if "{id}" in c[1]]


# ------------------------------------------------------------------ the OpenAPI document


def openapi_path(rule: str) -> str:
    return re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", r"{\1}", rule)


def test_every_api_route_is_in_the_openapi_document(app: Flask, api: ApiClient) -> None:
    doc = api.get("/api/openapi.json").get_json()
    assert doc == openapi_document(app) and doc["openapi"].startswith("3.")
    registered: set[tuple[str, str]] = set()
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/"):
            continue
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            registered.add((openapi_path(rule.rule), method.lower()))
    documented = {
        (path, method)
        for path, item in doc["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    }
    assert registered - documented == set(), "API routes missing from /api/openapi.json"
    assert documented - registered == set(), "/api/openapi.json describes routes the app lacks"
    assert len(registered) >= 25


def test_change_routes_are_documented_as_needing_the_pin(app: Flask) -> None:
    doc = openapi_document(app)
    for method, path, _ in CHANGES:
        op = doc["paths"][path.replace("{id}", "{game_id}").replace("/1", "/{warning_id}")][method.lower()]
        assert {"401", "403", "429"} <= set(op["responses"]), path
        assert any("adminPin" in s for s in op["security"]), path


# ------------------------------------------------------------------ PIN and CSRF on every change


@pytest.mark.parametrize(("method", "path", "body"), CHANGES)
def test_a_change_without_the_pin_is_401_and_changes_nothing(
    app: Flask, api: ApiClient, gid: str, method: str, path: str, body: Any
) -> None:
    before = seq(app, gid)
    resp = api.send(method, path.format(id=gid), body, pin=None)
    assert resp.status_code == 401
    assert "admin PIN required" in resp.get_json()["error"]
    assert resp.headers["WWW-Authenticate"] == "X-Admin-PIN"
    assert seq(app, gid) == before
    assert len(hub_of(app).records()) == 1


@pytest.mark.parametrize(("method", "path", "body"), CHANGES)
def test_a_change_with_a_wrong_pin_is_403(
    app: Flask, api: ApiClient, gid: str, method: str, path: str, body: Any
) -> None:
    before = seq(app, gid)
    resp = api.send(method, path.format(id=gid), body, pin="9999")
    assert resp.status_code == 403
    assert resp.get_json() == {"error": "wrong admin PIN"}
    assert seq(app, gid) == before


@pytest.mark.parametrize(("method", "path", "body"), CHANGES)
def test_a_forged_change_is_403(
    app: Flask, api: ApiClient, gid: str, method: str, path: str, body: Any
) -> None:
    url = path.format(id=gid)
    before = seq(app, gid)
    no_token = api.send(method, url, body, csrf=False)
    assert no_token.status_code == 403 and "missing CSRF token" in no_token.get_json()["error"]
    wrong_token = api.send(method, url, body, csrf=False, headers={"X-CSRF-Token": "x" * 43})
    assert wrong_token.status_code == 403 and "does not match" in wrong_token.get_json()["error"]
    other_site = api.send(method, url, body, headers={"Origin": "http://evil.example"})
    assert other_site.status_code == 403 and "Origin" in other_site.get_json()["error"]
    other_page = api.send(method, url, body, headers={"Referer": "http://evil.example/page"})
    assert other_page.status_code == 403 and "another site" in other_page.get_json()["error"]
    # A token from another browser session is not this session's token.
    stranger = ApiClient(app)
    stolen = api.send(method, url, body, csrf=False, headers={"X-CSRF-Token": stranger.csrf})
    assert stolen.status_code == 403
    assert seq(app, gid) == before


@pytest.mark.parametrize(("method", "path", "body"), CHANGES)
def test_malformed_json_is_400_and_other_media_415(
    api: ApiClient, gid: str, method: str, path: str, body: Any
) -> None:
    url = path.format(id=gid)
    bad = api.send(method, url, data='{"names": [', content_type="application/json")
    assert bad.status_code == 400 and bad.get_json()["error"].startswith("malformed JSON")
    listed = api.send(method, url, data="[1, 2]", content_type="application/json")
    assert listed.status_code == 400 and "expected an object" in listed.get_json()["error"]
    form = api.send(method, url, data="names=Ana", content_type="application/x-www-form-urlencoded")
    assert form.status_code == 415


NESTED = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("method", "path"), [(m, p) for m, p, _ in CHANGES] + [("POST", "/api/session/unlock")]
)
def test_deeply_nested_json_is_400_not_500(api: ApiClient, gid: str, method: str, path: str) -> None:
    resp = api.send(method, path.format(id=gid), data=NESTED, content_type="application/json")
    assert resp.status_code == 400, resp.data[:200]
    assert resp.get_json()["error"] == "malformed JSON: nested too deeply"


@pytest.mark.parametrize("pin", ['"\\ud800"', '"12\\udfff34"', '"' + "9" * 100 + '"'])
def test_a_pin_that_cannot_be_a_pin_is_wrong_not_500(api: ApiClient, pin: str) -> None:
    # A lone surrogate cannot be UTF-8 encoded for hashing: it is a wrong PIN like any other.
    resp = api.send(
        "POST", "/api/session/unlock", data='{"pin": ' + pin + "}", content_type="application/json", pin=None
    )
    assert resp.status_code == 403 and resp.get_json()["error"] == "wrong admin PIN"


@pytest.mark.parametrize(("method", "path", "body"), GAME_CHANGES)
def test_a_change_to_an_unknown_game_is_404(api: ApiClient, method: str, path: str, body: Any) -> None:
    resp = api.send(method, path.format(id="no-such-game"), body)
    assert resp.status_code == 404
    assert "no game 'no-such-game'" in resp.get_json()["error"]


def test_same_origin_requests_pass_the_origin_check(api: ApiClient, gid: str) -> None:
    step = first_legal(api, gid, "pick")
    ok = api.post(f"/api/games/{gid}/steps", {"step": step}, headers={"Origin": "http://localhost"})
    assert ok.status_code == 200, ok.get_json()


def test_the_pin_is_throttled_after_repeated_failures(tmp_path: Path) -> None:
    app = make_app(tmp_path, PIN_MAX_FAILURES=3, PIN_LOCKOUT_S=60)
    api = ApiClient(app)
    for _ in range(3):
        assert api.post("/api/session/unlock", {"pin": "0000"}, pin=None).status_code == 403
    locked = api.post("/api/session/unlock", {"pin": TEST_PIN}, pin=None)
    assert locked.status_code == 429 and 50 <= int(locked.headers["Retry-After"]) <= 61
    assert "too many wrong PINs" in locked.get_json()["error"]
    assert api.post("/api/games", {"names": ["A", "B"]}).status_code == 429  # the header PIN too


def test_a_locked_out_client_does_not_lock_out_the_admin(tmp_path: Path) -> None:
    # The lockout is per client: another address (the table's own admin) still unlocks.
    app = make_app(tmp_path, PIN_MAX_FAILURES=3, PIN_LOCKOUT_S=60)
    attacker, admin = ApiClient(app), ApiClient(app)
    attacker.client.environ_base["REMOTE_ADDR"] = "192.168.1.66"
    admin.client.environ_base["REMOTE_ADDR"] = "192.168.1.10"
    for _ in range(3):
        assert attacker.post("/api/session/unlock", {"pin": "0000"}, pin=None).status_code == 403
    assert attacker.post("/api/session/unlock", {"pin": TEST_PIN}, pin=None).status_code == 429
    opened = admin.post("/api/session/unlock", {"pin": TEST_PIN}, pin=None)
    assert opened.status_code == 200 and opened.get_json()["admin"] is True
    assert admin.post("/api/games", {"names": ["A", "B"]}).status_code == 201
    # A spoofed X-Forwarded-For does not give the attacker a fresh allowance.
    spoofed = attacker.post(
        "/api/session/unlock", {"pin": "0000"}, pin=None, headers={"X-Forwarded-For": "10.9.9.9"}
    )
    assert spoofed.status_code == 429


def test_each_further_lockout_doubles(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr("web.security.time.monotonic", lambda: clock[0])
    pg = PinGuard(TEST_PIN, iterations=1000, max_failures=2, lockout_s=30, max_lockout_s=100)
    holds = []
    for _ in range(4):
        assert not pg.check("0000", "a") and not pg.check("1111", "a")
        holds.append(pg.retry_after("a"))
        with pytest.raises(ApiError) as info:
            pg.check(TEST_PIN, "a")
        assert info.value.status == 429
        clock[0] += holds[-1]
    assert holds == [30, 60, 100, 100]  # doubling, capped
    assert pg.check(TEST_PIN, "a") and pg.retry_after("a") == 0
    assert not pg.check("0000", "a") and pg.retry_after("a") == 0  # the right PIN forgave it all


def test_concurrent_wrong_pins_are_checked_at_most_max_failures_times() -> None:
    # A burst of simultaneous wrong PINs from one client: each check reserves its place before
    # the slow hash, so no more than max_failures are ever compared before the lockout.
    pg = PinGuard(TEST_PIN, iterations=50_000, max_failures=5, lockout_s=30)
    start = threading.Barrier(40)
    outcomes: list[str] = []

    def guess(i: int) -> None:
        start.wait()
        try:
            outcomes.append("right" if pg.check(f"{i:04d}", "10.0.0.7") else "wrong")
        except ApiError as exc:
            outcomes.append(str(exc.status))

    threads = [threading.Thread(target=guess, args=(1000 + i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("wrong") == 5 and outcomes.count("429") == 35, outcomes


# ------------------------------------------------------------------ session and settings


def test_admin_session_unlock_and_lock(api: ApiClient, gid: str) -> None:
    state = api.get("/api/session").get_json()
    assert state["admin"] is False and state["csrf_token"] == api.csrf
    assert api.post("/api/session/unlock", {}, pin=None).status_code == 401
    assert api.post("/api/session/unlock", {"pin": "1111"}, pin=None).status_code == 403
    opened = api.post("/api/session/unlock", {"pin": TEST_PIN}, pin=None).get_json()
    assert opened["admin"] is True and opened["admin_until"] > time.time() + 500
    step = first_legal(api, gid, "pick")
    assert api.post(f"/api/games/{gid}/steps", {"step": step}, pin=None).status_code == 200
    assert api.post("/api/session/lock", pin=None).get_json()["admin"] is False
    assert api.post(f"/api/games/{gid}/end", pin=None).status_code == 401


def test_a_locked_session_cookie_cannot_be_replayed(app: Flask, api: ApiClient) -> None:
    api.post("/api/session/unlock", {"pin": TEST_PIN}, pin=None)
    cookie = api.client.get_cookie("session")
    assert cookie is not None
    api.post("/api/session/lock", pin=None)
    api.client.set_cookie("session", cookie.value)  # the cookie as it was while unlocked
    assert api.get("/api/session").get_json()["admin"] is False


def test_admin_sessions_can_be_turned_off(tmp_path: Path) -> None:
    api = ApiClient(make_app(tmp_path, ADMIN_TTL_S=0))
    assert api.post("/api/session/unlock", {"pin": TEST_PIN}, pin=None).get_json()["admin"] is False
    assert api.post("/api/games", {"names": ["A", "B"]}, pin=None).status_code == 401


def test_settings(api: ApiClient) -> None:
    got = api.get("/api/settings").get_json()
    assert {k: got[k] for k in ("camera_source", "serial_port", "live_runner", "active")} == {
        "camera_source": "",
        "serial_port": "",
        "live_runner": False,
        "active": None,
    }
    assert got["saved_in"].endswith("settings.json") and "gizmos-referee run --camera 0" in got["camera_hint"]
    put = api.send("PUT", "/api/settings", {"camera_source": " 0 ", "serial_port": "/dev/ttyACM0"})
    assert put.status_code == 200 and put.get_json()["camera_source"] == "0"
    assert api.get("/api/settings").get_json()["serial_port"] == "/dev/ttyACM0"
    assert api.send("PUT", "/api/settings", {"colour": "red"}).status_code == 400
    bad = api.send("PUT", "/api/settings", {"serial_port": 5})
    assert bad.status_code == 400 and "settings.serial_port" in bad.get_json()["error"]


def test_changing_the_pin_needs_the_current_pin_itself(api: ApiClient) -> None:
    api.post("/api/session/unlock", {"pin": TEST_PIN}, pin=None)
    assert api.send("PUT", "/api/settings", {"new_pin": "13579"}, pin=None).status_code == 401
    short = api.send("PUT", "/api/settings", {"new_pin": "12"})
    assert short.status_code == 400 and "new_pin" in short.get_json()["error"]
    assert api.send("PUT", "/api/settings", {"new_pin": "13579"}).status_code == 200
    assert api.post("/api/games", {"names": ["A", "B"]}, pin=TEST_PIN).status_code == 403
    assert api.post("/api/games", {"names": ["A", "B"]}, pin="13579").status_code == 201


def test_camera_status_and_cards(tmp_path: Path) -> None:
    api = ApiClient(make_app(tmp_path))
    assert api.get("/api/camera").get_json()["camera"] is False
    frames = FrameBuffer("camera 0")
    frames.set_status(True, "markers [0, 1, 2, 3], error 0.8 px")
    with_camera = ApiClient(make_app(tmp_path, FRAME_SOURCE=frames)).get("/api/camera").get_json()
    assert with_camera["camera"] is True and with_camera["calibrated"] is True
    assert with_camera["source"] == "camera 0" and "error 0.8 px" in with_camera["detail"]
    cards = api.get("/api/cards").get_json()
    assert len(cards) == 112 and cards[57]["id"] == 57 and cards[57]["level"] == 2


# ------------------------------------------------------------------ games


def test_create_list_and_read_a_game(app: Flask, api: ApiClient) -> None:
    made = api.post("/api/games", {"names": ["Ana", "Ben", "Chloé"], "deal": True, "seed": 4})
    assert made.status_code == 201
    body = made.get_json()
    assert body["url"] == f"/games/{body['id']}" and body["seed"] == 4
    listed = api.get("/api/games").get_json()
    assert listed["active"] == body["id"]
    assert [g["names"] for g in listed["games"]] == [["Ana", "Ben", "Chloé"]]
    game = api.get(f"/api/games/{body['id']}").get_json()
    view = game["view"]
    assert view["names"] == ["Ana", "Ben", "Chloé"] and view["round"] == 1 and view["current_name"] == "Ana"
    assert sum(view["row"].values()) == 6 and len(view["display"]["1"]) == 4
    assert [p["name"] for p in view["players"]] == ["Ana", "Ben", "Chloé"]
    assert view["players"][0]["columns"]["file"] == [0]  # the Starting Gizmo
    assert game["log"][0]["kind"] == "setup" and game["log_from"] == 0 and game["live"] == "none"
    unseeded = api.post("/api/games", {"names": ["Ana", "Ben"], "deal": True}).get_json()
    assert isinstance(unseeded["seed"], int)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"names": ["Ana"]}, "2 to 4"),
        ({"names": ["A", "B", "C", "D", "E"]}, "2 to 4"),
        ({"names": "Ana, Ben"}, "2 to 4"),
        ({"names": ["Ana", " "]}, "names[1]"),
        ({"names": ["Ana", "ana"]}, "same name"),
        ({"names": ["Ana", "B" * 25]}, "at most 24"),
        ({"names": ["Ana", "Ben\x07"]}, "printable"),
        ({"names": ["Ana", 7]}, "names[1]"),
        ({"names": ["Ana", "Ben"], "deal": "yes"}, "deal"),
        ({"names": ["Ana", "Ben"], "deal": True, "seed": -1}, "seed"),
        ({"names": ["Ana", "Ben"], "deal": True, "seed": 1.5}, "seed"),
        ({"names": ["Ana", "Ben"], "seed": 3}, "dealt setup"),
        ({"names": ["Ana", "Ben"], "colour": "red"}, "unknown field"),
        ({}, "names"),
    ],
)
def test_bad_new_games_are_400(api: ApiClient, body: dict[str, Any], message: str) -> None:
    resp = api.post("/api/games", body)
    assert resp.status_code == 400 and message in resp.get_json()["error"]


@pytest.mark.parametrize("bad_id", ["no-such-game", "..", "a b", "x" * 65])
def test_reading_an_unknown_game_is_404(api: ApiClient, bad_id: str) -> None:
    for suffix in ("", "/legal-steps", "/log", "/scores", "/warnings", "/export", "/events"):
        resp = api.get(f"/api/games/{bad_id}{suffix}")
        assert resp.status_code == 404 and "error" in resp.get_json(), (bad_id, suffix)


def test_unknown_routes_and_methods_are_json(api: ApiClient, gid: str) -> None:
    missing = api.get("/api/nothing-here")
    assert missing.status_code == 404 and "openapi.json" in missing.get_json()["error"]
    wrong = api.get(f"/api/games/{gid}/steps")
    assert wrong.status_code == 405 and "GET is not allowed" in wrong.get_json()["error"]


def test_a_game_is_reopened_from_its_record(tmp_path: Path) -> None:
    games = tmp_path / "games"
    api = ApiClient(make_app(games))
    gid = api.new_game(["Ana", "Ben"], seed=5)
    for _ in range(3):
        step = first_legal(api, gid, "pick")
        assert api.post(f"/api/games/{gid}/steps", {"step": step}).status_code == 200
        groups = api.get(f"/api/games/{gid}/legal-steps").get_json()
        while groups[0]["kind"] == "dispense":
            api.post(f"/api/games/{gid}/steps", {"step": groups[0]["steps"][0]["step"]})
            groups = api.get(f"/api/games/{gid}/legal-steps").get_json()
        api.post(f"/api/games/{gid}/steps", {"step": first_legal(api, gid, "end_turn")})
    before = api.get(f"/api/games/{gid}").get_json()
    # A new server on the same folder: the record is replayed to the same table and log.
    again = ApiClient(make_app(games))
    listed = again.get("/api/games").get_json()["games"]
    assert [g["id"] for g in listed] == [gid] and listed[0]["names"] == ["Ana", "Ben"]
    after = again.get(f"/api/games/{gid}").get_json()
    assert after["view"]["players"] == before["view"]["players"]
    assert after["view"]["row"] == before["view"]["row"] and after["view"]["turn"] == 3
    assert [e["text"] for e in after["log"]] == [e["text"] for e in before["log"]]


def test_a_corrupt_record_is_409_not_a_traceback(tmp_path: Path) -> None:
    games = tmp_path / "games"
    games.mkdir()
    (games / "broken.sqlite").write_bytes(b"this is not a database" * 100)
    db = sqlite3.connect(games / "empty.sqlite")
    db.execute("CREATE TABLE x (y)")
    db.close()
    api = ApiClient(make_app(games))
    broken = api.get("/api/games/broken")
    assert broken.status_code == 409 and "cannot be opened" in broken.get_json()["error"]
    empty = api.get("/api/games/empty")
    assert empty.status_code == 409 and "another application" in empty.get_json()["error"]
    listed = {g["id"]: g for g in api.get("/api/games").get_json()["games"]}
    assert "error" in listed["broken"] and "error" in listed["empty"]


def test_a_full_disk_is_a_503_and_play_carries_on_once_writes_succeed(
    app: Flask, api: ApiClient, gid: str
) -> None:
    from tests.test_record import FullDisk

    game = hub_of(app).get(gid)
    disk = FullDisk(game.tracker.record._db)
    game.tracker.record._db = disk  # type: ignore[assignment]
    step = first_legal(api, gid, "pick")
    before = len(game.tracker.record), game.tracker.state
    disk.full = True
    full = api.post(f"/api/games/{gid}/steps", {"step": step})
    assert full.status_code == 503 and "database or disk is full" in full.get_json()["error"]
    assert (len(game.tracker.record), game.tracker.state) == before  # nothing changed anywhere
    disk.full = False
    again = api.post(f"/api/games/{gid}/steps", {"step": step})  # the same step: not a 409
    assert again.status_code == 200, again.get_json()
    assert len(game.tracker.record) > before[0]


def test_a_game_that_cannot_be_created_is_a_json_503(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    api = ApiClient(make_app(blocker / "games"))  # the games folder cannot be made
    resp = api.post("/api/games", {"names": ["Ana", "Ben"]})
    assert resp.status_code == 503 and "cannot create the games folder" in resp.get_json()["error"]

    def full(*args: object, **kwargs: object) -> int:
        raise RecordWriteError("cannot write the game record: database or disk is full")

    monkeypatch.setattr("referee.tracker.record.GameRecord.append", full)
    api = ApiClient(make_app(tmp_path / "games"))
    resp = api.post("/api/games", {"names": ["Ana", "Ben"]})
    assert resp.status_code == 503 and "disk is full" in resp.get_json()["error"]
    assert list((tmp_path / "games").iterdir()) == []  # no half-made record left behind


def test_export_is_the_whole_record(api: ApiClient, gid: str) -> None:
    resp = api.get(f"/api/games/{gid}/export")
    assert resp.status_code == 200 and "attachment" in resp.headers["Content-Disposition"]
    data = resp.get_json()
    assert data["format"] == "gizmos-record" and data["entries"][0]["kind"] == "setup"
    assert data["entries"][0]["payload"]["names"] == ["Ana", "Ben"]


# ------------------------------------------------------------------ manual mode


def test_manual_steps_legal_illegal_and_invalid(app: Flask, api: ApiClient, gid: str) -> None:
    groups = api.get(f"/api/games/{gid}/legal-steps").get_json()
    assert {g["kind"] for g in groups} == {"file", "pick", "research"}
    pick = next(g for g in groups if g["kind"] == "pick")["steps"][0]
    assert pick["label"] in ("red", "blue", "black", "yellow") and pick["text"].startswith("Ana picks a")
    played = api.post(f"/api/games/{gid}/steps", {"step": pick["step"]})
    assert played.status_code == 200 and played.get_json()["seq"] == seq(app, gid)
    game = api.get(f"/api/games/{gid}").get_json()
    assert game["view"]["awaiting"] == "Waiting for the marble refilling the Energy Row."
    assert game["log"][-1]["text"].startswith(f"Ana took a {pick['step']['color']} from the Row")
    assert game["log"][-1]["done"] is False
    # Not a random outcome now? The engine says which rule: 409 with the rule and the ruling.
    wrong = api.post(f"/api/games/{gid}/steps", {"step": {"kind": "end_turn", "player": 0}})
    assert wrong.status_code == 409
    assert wrong.get_json()["code"] == "OUT_OF_SEQUENCE" and wrong.get_json()["rulings"] == [7, 11]
    api.post(f"/api/games/{gid}/steps", {"step": first_legal(api, gid, "dispense")})
    not_yours = api.post(f"/api/games/{gid}/steps", {"step": {"kind": "pick", "player": 1, "color": "red"}})
    assert not_yours.status_code == 409
    err = not_yours.get_json()
    assert err["code"] == "NOT_YOUR_TURN" and err["rulings"] == [7] and "Only the player" in err["rule"]
    invalid = api.post(f"/api/games/{gid}/steps", {"step": {"kind": "teleport", "player": 0}})
    assert invalid.status_code == 422 and "step.kind" in invalid.get_json()["error"]
    bad_card = api.post(f"/api/games/{gid}/steps", {"step": {"kind": "file", "player": 0, "card": 500}})
    assert bad_card.status_code == 422 and "unknown card 500" in bad_card.get_json()["error"]
    assert api.post(f"/api/games/{gid}/steps", {"move": "pick"}).status_code == 400


# ------------------------------------------------------------------ warnings and corrections


def test_warnings_are_decided_once_with_the_pin(app: Flask, api: ApiClient, gid: str) -> None:
    break_a_rule(hub_of(app).get(gid))
    warnings = api.get(f"/api/games/{gid}/warnings").get_json()
    assert len(warnings) == 1
    w = warnings[0]
    assert w["code"] == "SECOND_MAIN_ACTION" and w["rulings"] == [7] and w["name"] == "Ana"
    assert w["rule"] == "One main action per turn: File, Pick, Build or Research." and w["status"] == "open"
    raised = hub_of(app).get(gid).tracker.warnings[0]
    assert (w["message"], w["remedy"]) == (raised.message, raised.remedy) and w["message"].startswith("Ana ")
    log = api.get(f"/api/games/{gid}/log").get_json()
    assert log[-1]["forced"] is True and "against the rules" in log[-1]["text"]
    assert api.post(f"/api/games/{gid}/warnings/1", {"status": "maybe"}).status_code == 400
    assert api.post(f"/api/games/{gid}/warnings/7", {"status": "dismissed"}).status_code == 404
    assert api.post(f"/api/games/{gid}/warnings/1", {"status": "dismissed"}).status_code == 200
    decided = api.get(f"/api/games/{gid}/warnings").get_json()[0]
    assert decided["status"] == "dismissed" and decided["decided_by"] == "admin"
    again = api.post(f"/api/games/{gid}/warnings/1", {"status": "accepted"})
    assert again.status_code == 409 and "already dismissed" in again.get_json()["error"]


def test_corrections_and_undo(app: Flask, api: ApiClient, gid: str) -> None:
    row = api.get(f"/api/games/{gid}").get_json()["view"]["row"]
    have = next(c for c, n in row.items() if n)
    other = next(c for c in row if c != have)
    ok = api.post(
        f"/api/games/{gid}/corrections",
        {"what": "marble_color", "payload": {"zone": "row", "from": have, "to": other}},
    )
    assert ok.status_code == 200
    game = api.get(f"/api/games/{gid}").get_json()
    assert game["view"]["row"][other] == row[other] + 1
    assert game["log"][-1]["kind"] == "correction" and f"is {other}, not {have}" in game["log"][-1]["text"]
    empty = next((c for c, n in game["view"]["row"].items() if n == 0), None)
    if empty is not None:
        refused = api.post(
            f"/api/games/{gid}/corrections",
            {"what": "marble_color", "payload": {"zone": "row", "from": empty, "to": have}},
        )
        assert refused.status_code == 422 and "no " in refused.get_json()["error"]
    bad_zone = api.post(
        f"/api/games/{gid}/corrections",
        {"what": "marble_color", "payload": {"zone": "table", "from": "red", "to": "blue"}},
    )
    assert bad_zone.status_code == 422 and "zone" in bad_zone.get_json()["error"]
    assert api.post(f"/api/games/{gid}/corrections", {"what": "weather"}).status_code == 400
    assert api.post(f"/api/games/{gid}/corrections", {"what": "card_id", "payload": [1]}).status_code == 400
    swapped = api.post(
        f"/api/games/{gid}/corrections", {"what": "card_id", "payload": {"old": 12, "new": 13}}
    )
    assert swapped.status_code == 200
    step = first_legal(api, gid, "pick")
    api.post(f"/api/games/{gid}/steps", {"step": step})
    assert api.post(f"/api/games/{gid}/undo").status_code == 200
    view = api.get(f"/api/games/{gid}").get_json()["view"]
    assert (
        view["turn"] == 0
        and view["players"][0]["ring_total"] == 0
        and view["awaiting"].startswith("Ana's turn")
    )


def test_moving_a_turn_boundary_needs_a_clear_table_and_whole_numbers(api: ApiClient, gid: str) -> None:
    url = f"/api/games/{gid}/turn-ends"
    for bad, words in (
        ({"ends": 1}, "turn-ends.from_turn: required"),
        ({"from_turn": 0, "ends": "2"}, "turn-ends.ends: expected a whole number"),
        ({"from_turn": -1, "ends": 1}, "turn-ends.from_turn: expected at least 0"),
    ):
        resp = api.post(url, bad)
        assert resp.status_code == 400 and words in resp.get_json()["error"], resp.get_json()
    far = api.post(url, {"from_turn": 5, "ends": 1})
    assert far.status_code == 422 and "from_turn: expected one of the turns" in far.get_json()["error"]
    unseen = api.post(url, {"from_turn": 0, "ends": 1})  # no camera has seen this table
    assert unseen.status_code == 422 and "not fully in view" in unseen.get_json()["error"]


def test_end_of_turn_signal_and_ending_the_game(app: Flask, api: ApiClient, gid: str) -> None:
    signalled = api.post(f"/api/games/{gid}/end-of-turn")
    assert signalled.status_code == 200 and isinstance(signalled.get_json()["steps"], list)
    ended = api.post(f"/api/games/{gid}/end")
    assert ended.status_code == 200
    game = api.get(f"/api/games/{gid}").get_json()
    assert game["view"]["game_over"] is True and game["view"]["ended_by"] == "admin"
    assert game["log"][-1] == {**game["log"][-1], "kind": "end", "text": "The game was ended by admin."}
    scores = api.get(f"/api/games/{gid}/scores").get_json()
    assert scores["final"] is True and len(scores["lines"]) == 2
    assert scores["winner"]["name"] in ("Ana", "Ben")
    assert {"printed_vp", "token_points", "end_cards", "end_card_ids", "total", "tie_break"} <= set(
        scores["lines"][0]
    )
    for path, body in (("end", None), ("end-of-turn", None), ("undo", None)):
        assert api.post(f"/api/games/{gid}/{path}", body).status_code == 409, path
    late = api.post(f"/api/games/{gid}/steps", {"step": {"kind": "pick", "player": 0, "color": "red"}})
    assert late.status_code == 409 and late.get_json()["code"] == "GAME_OVER"
    correction = api.post(
        f"/api/games/{gid}/corrections", {"what": "card_id", "payload": {"old": 12, "new": 13}}
    )
    assert correction.status_code == 409


# ------------------------------------------------------------------ the live runner hook


class FakeRunner:
    """A LiveRunner that records what it was told (a real one referees from a thread)."""

    def __init__(self, fail: str | None = None) -> None:
        self.state = "stopped"
        self.fail = fail
        self.calls: list[tuple[str, str | None]] = []

    def start(self, game: LiveGame, settings: Settings) -> None:
        if self.fail:
            raise RuntimeError(self.fail)
        self.calls.append(("start", game.id))
        self.state = "running"

    def pause(self) -> None:
        self.calls.append(("pause", None))
        self.state = "paused"

    def stop(self) -> None:
        self.calls.append(("stop", None))
        self.state = "stopped"

    def status(self) -> str:
        return self.state


def test_live_needs_a_runner(api: ApiClient, gid: str) -> None:
    resp = api.post(f"/api/games/{gid}/live", {"action": "start"})
    assert resp.status_code == 409 and "manual mode" in resp.get_json()["error"]


def test_live_start_pause_stop(tmp_path: Path) -> None:
    runner = FakeRunner()
    app = make_app(tmp_path, LIVE_RUNNER=runner)
    api = ApiClient(app)
    first, second = api.new_game(), api.new_game(["Cy", "Di"])
    assert api.post(f"/api/games/{first}/live", {"action": "go"}).status_code == 400
    started = api.post(f"/api/games/{first}/live", {"action": "start"})
    assert started.get_json() == {"ok": True, "live": "running"}
    assert api.get(f"/api/games/{first}").get_json()["live"] == "running"
    assert api.get(f"/api/games/{second}").get_json()["live"] == "stopped"
    assert api.post(f"/api/games/{second}/live", {"action": "pause"}).status_code == 409
    assert api.post(f"/api/games/{first}/live", {"action": "pause"}).get_json()["live"] == "paused"
    assert api.post(f"/api/games/{first}/live", {"action": "stop"}).get_json()["live"] == "stopped"
    assert runner.calls == [("start", first), ("pause", None), ("stop", None)]
    api.post(f"/api/games/{first}/live", {"action": "start"})
    api.post(f"/api/games/{first}/end")
    assert runner.state == "stopped"  # ending the game stops the camera referee
    assert api.post(f"/api/games/{first}/live", {"action": "start"}).status_code == 409


def test_live_start_failure_is_a_clear_409(tmp_path: Path) -> None:
    api = ApiClient(make_app(tmp_path, LIVE_RUNNER=FakeRunner(fail="camera 0 cannot be opened")))
    gid = api.new_game()
    resp = api.post(f"/api/games/{gid}/live", {"action": "start"})
    assert resp.status_code == 409 and resp.get_json()["error"].endswith("camera 0 cannot be opened")


def test_the_tracker_record_matches_what_the_api_did(app: Flask, api: ApiClient, gid: str) -> None:
    api.post(f"/api/games/{gid}/steps", {"step": first_legal(api, gid, "research")})
    game = hub_of(app).get(gid)
    replayed = Tracker.open(game.path)
    assert replayed.state == game.tracker.state
