"""The hub's store, board, standings and organiser page, without a broker (Flask test client)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from referee.app.broadcast import BroadcastError, BrokerConfig, check_table_id
from referee.app.cli import main as cli_main
from web.tournament.app import create_app
from web.tournament.board import Board, standings
from web.tournament.store import EntryMessage, SqliteStore

PIN = "2468"


def summary(table: str, game: str, finished: bool, scores: dict[str, int], kind: str = "gizmos") -> dict:
    ranked = sorted(scores, key=lambda n: -scores[n])
    return {
        "table": table,
        "game": game,
        "kind": kind,
        "round": 3,
        "finished": finished,
        "players": [{"name": n, "score": scores[n], "rank": ranked.index(n) + 1} for n in scores],
        "warnings_open": 1,
        "health": {"camera": "ok", "sensors": "none"},
        "dashboard": "javascript:alert(1)",
    }


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(tmp_path / "hub.sqlite")
    yield s
    s.close()


@pytest.fixture
def board(store: SqliteStore) -> Board:
    b = Board(store)
    store.put_summaries(
        [
            ("t1", "g1", summary("t1", "g1", True, {"Ann": 30, "Bo": 20, "Cy": 10})),
            ("t2", "g2", summary("t2", "g2", False, {"Di": 5, "Ed": 7}, kind="contrivance")),
        ],
        1.0,
    )
    b.update("t1", summary("t1", "g1", True, {"Ann": 30, "Bo": 20, "Cy": 10}), online=True)
    b.update("t2", summary("t2", "g2", False, {"Di": 5, "Ed": 7}, kind="contrivance"), online=False)
    return b


@pytest.fixture
def client(board: Board) -> FlaskClient:
    app = create_app(
        board, {"ADMIN_PIN": PIN, "PIN_ITERATIONS": 1000, "SSE_MAX_S": 0.5, "SSE_HEARTBEAT_S": 0.1}
    )
    return app.test_client()


def test_entry_messages_are_checked() -> None:
    good = {
        "table": "t1", "game": "g", "seq": 2, "prev": 1, "time": 1.0, "kind": "step",
        "who": "referee", "sent": 1.0, "payload": {},
    }  # fmt: skip
    assert EntryMessage.parse("t1", json.dumps(good).encode()).seq == 2
    for bad, why in (
        (b"{", "not JSON"),
        (json.dumps({**good, "table": "t2"}).encode(), "published on table 't1'"),
        (json.dumps({**good, "seq": "2"}).encode(), "seq: missing"),
        (json.dumps({**good, "prev": 2}).encode(), "must follow prev"),
        (json.dumps({**good, "payload": []}).encode(), "payload"),
    ):
        with pytest.raises(ValueError, match=why):
            EntryMessage.parse("t1", bad)


def test_standings_count_finished_games_by_players_beaten() -> None:
    games = [
        {"summary": summary("t1", "a", True, {"Ann": 30, "Bo": 20, "Cy": 10}), "excluded": False},
        {"summary": summary("t2", "b", True, {"Bo": 9, "Ann": 3}), "excluded": False},
        {"summary": summary("t3", "c", False, {"Cy": 99, "Ann": 0}), "excluded": False},  # not over
        {"summary": summary("t4", "d", True, {"Cy": 99, "Ann": 0}), "excluded": True},  # left out
    ]
    rows = {r["name"]: r for r in standings(games)}
    assert rows["Ann"] == {"name": "Ann", "games": 2, "wins": 1, "points": 2, "score": 33, "place": 1}
    assert (
        rows["Bo"]["points"] == 2 and rows["Bo"]["place"] == 2
    )  # same points, fewer... same wins, less score
    assert rows["Cy"]["games"] == 1 and rows["Cy"]["points"] == 0


def test_page_and_board_are_readable_without_the_pin(client: FlaskClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and b"Organiser PIN" in page.data
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    snap = client.get("/api/board").get_json()
    kinds = {row["table"]: row["summary"]["kind"] for row in snap["tables"]}
    assert kinds == {"t1": "gizmos", "t2": "contrivance"}  # side by side, as their summaries say
    assert [r["name"] for r in snap["standings"]] == ["Ann", "Bo", "Cy"]
    assert client.get("/api/board?since=zzz").status_code == 400
    later = client.get(f"/api/board?since={snap['version']}").get_json()
    assert later["tables"] == [] and "standings" not in later


def test_changing_the_standings_needs_the_pin_and_the_csrf_token(client: FlaskClient, board: Board) -> None:
    url = "/api/games/t1/g1/excluded"
    assert client.post(url, json={"excluded": True}).status_code == 403  # no CSRF token
    token = client.get("/api/session").get_json()["csrf"]
    headers = {"X-CSRF-Token": token}
    denied = client.post(url, json={"excluded": True}, headers=headers)
    assert denied.status_code == 401 and "PIN" in denied.get_json()["error"]
    assert client.post("/api/session/unlock", json={"pin": "0000"}, headers=headers).status_code == 403
    assert client.post("/api/session/unlock", json={"pin": PIN}, headers=headers).get_json()["admin"]
    assert client.post(url, json={"excluded": "yes"}, headers=headers).status_code == 400
    assert (
        client.post("/api/games/t9/g9/excluded", json={"excluded": True}, headers=headers).status_code == 404
    )
    assert client.post(url, json={"excluded": True}, headers=headers).status_code == 200
    assert board.snapshot()["standings"] == []


def test_stream_sends_changed_tables(client: FlaskClient, board: Board) -> None:
    version = board.snapshot()["version"]
    board.update("t2", online=True)
    body = client.get(f"/api/stream?since={version}").get_data(as_text=True)
    events = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]
    assert events and [row["table"] for row in events[0]["tables"]] == ["t2"]
    assert events[0]["tables"][0]["online"] is True


def test_board_survives_a_hub_restart(store: SqliteStore, board: Board) -> None:
    again = Board(store)
    snap = again.snapshot()
    assert {row["table"] for row in snap["tables"]} == {"t1", "t2"}
    assert all(row["online"] is False for row in snap["tables"])  # until the tables say otherwise


def test_broker_urls_and_ids_are_checked(tmp_path: Path) -> None:
    c = BrokerConfig.from_url("mqtt://t1:p%40ss@127.0.0.1:1884")
    assert (c.username, c.password, c.port, c.tls) == ("t1", "p@ss", 1884, False)
    assert BrokerConfig.from_url("mqtts://broker.lan").port == 8883
    for url, why in (
        ("http://127.0.0.1", "expected mqtt://"),
        ("mqtt://", "no host"),
        ("mqtt://127.0.0.1:99999", "bad port"),
        ("mqtt://broker.lan", "use TLS"),
    ):
        with pytest.raises(BroadcastError, match=why):
            BrokerConfig.from_url(url)
    assert BrokerConfig.from_url("mqtt://broker.lan", insecure_ok=True).host == "broker.lan"
    with pytest.raises(BroadcastError, match="no such file"):
        BrokerConfig.from_url("mqtts://broker.lan", ca_file=str(tmp_path / "missing.pem"))
    for bad in ("", "a/b", "+", "#", "x" * 65, "-lead"):
        with pytest.raises(BroadcastError):
            check_table_id(bad)


def test_hub_command_bad_input_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, why in (
        (["hub"], "--broker is required"),
        (["hub", "--broker", "mqtt://hub:x@10.1.2.3"], "use TLS"),
        (["hub", "--demo", "0"], "--demo: expected 1 to 100"),
        (
            ["hub", "--broker", "mqtt://hub:x@127.0.0.1", "--store", "postgresql://x:pw@/y?host=/nowhere"],
            "postgresql://x@/nowhere/y: connection",
        ),
    ):
        assert cli_main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and why in err and err.startswith("gizmos-referee hub: error:")
        assert ":pw@" not in err  # a store's password is never printed


def test_summary_lag_fields_round_trip(board: Board) -> None:
    sent = time.time()
    board.update("t3", {"table": "t3", "game": "g3", "sent": sent, "players": []}, online=True)
    assert board.snapshot()["tables"][-1]["summary"]["sent"] == sent


def test_stream_opens_at_once_on_a_quiet_board(board: Board) -> None:
    """The first chunk (the reconnection delay) comes at once, not at the first change or
    heartbeat: until then the browser has no headers and the page said "reconnecting…"."""
    app = create_app(board, {"ADMIN_PIN": PIN, "PIN_ITERATIONS": 1000, "SSE_HEARTBEAT_S": 5.0})
    version = board.snapshot()["version"]
    started = time.monotonic()
    resp = app.test_client().get(f"/api/stream?since={version}", buffered=False)
    first = next(iter(resp.response))
    assert time.monotonic() - started < 3.0
    assert first == b"retry: 1500\n\n"
    resp.close()


def test_a_reconnecting_stream_resumes_from_last_event_id(client: FlaskClient, board: Board) -> None:
    version = board.snapshot()["version"]
    board.update("t1", online=False)
    # The page's URL still says since=-1 (its first connection); the browser's header says more.
    body = client.get("/api/stream?since=-1", headers={"Last-Event-ID": str(version)}).get_data(as_text=True)
    events = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]
    assert [row["table"] for row in events[0]["tables"]] == ["t1"]
    assert client.get("/api/stream", headers={"Last-Event-ID": "x"}).status_code == 400
