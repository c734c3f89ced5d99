"""Helpers for testing the dashboard (and for trying it): a test app, an API client that
carries the CSRF token and the PIN, and a rule broken at the table the way a camera sees it.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from referee.app.card_art import DrawnCardArt
from referee.events import EndOfTurn
from referee.gizmos import COLORS, apply, force, resolve_chance, step_from_json
from referee.simulation.synthetic import perfect_observation
from web.app import create_app
from web.hub import Hub, LiveGame

TEST_PIN = "2468"


def make_app(games_dir: str | Path, **config: Any) -> Flask:
    """An app for tests: the test PIN, cheap PIN hashing (the real cost is for real PINs)."""
    return create_app(
        {
            "TESTING": True,
            "GAMES_DIR": str(games_dir),
            "ADMIN_PIN": TEST_PIN,
            "PIN_ITERATIONS": 1000,
            "SSE_HEARTBEAT_S": 0.2,
            "CARD_ART": DrawnCardArt(),
            "VALIDATE_RESPONSES": True,  # every JSON answer must match the OpenAPI document
            **config,
        }
    )


def hub_of(app: Flask) -> Hub:
    return app.extensions["gizmos_hub"]


class ApiClient:
    """A test client that sends the session's CSRF token on changes, and the PIN when asked."""

    def __init__(self, app: Flask) -> None:
        self.client: FlaskClient = app.test_client()
        self.csrf: str = self.client.get("/api/session").get_json()["csrf_token"]

    def get(self, url: str, **kw: Any) -> TestResponse:
        return self.client.get(url, **kw)

    def send(
        self,
        method: str,
        url: str,
        json: Any = None,
        pin: str | None = TEST_PIN,
        csrf: bool = True,
        headers: dict[str, str] | None = None,
        **kw: Any,
    ) -> TestResponse:
        h = dict(headers or {})
        if csrf:
            h["X-CSRF-Token"] = self.csrf
        if pin is not None:
            h["X-Admin-PIN"] = pin
        if json is not None:
            kw["json"] = json
        return self.client.open(url, method=method, headers=h, **kw)

    def post(self, url: str, json: Any = None, **kw: Any) -> TestResponse:
        return self.send("POST", url, json, **kw)

    def new_game(self, names: list[str] | None = None, seed: int = 1) -> str:
        resp = self.post("/api/games", {"names": names or ["Ana", "Ben"], "deal": True, "seed": seed})
        assert resp.status_code == 201, resp.get_json()
        return str(resp.get_json()["id"])


def break_a_rule(game: LiveGame, seed: int = 3) -> None:
    """The current player takes two marbles from the Row, as the camera would see it, then the
    turn is signalled over: the tracker accepts what happened and warns (SECOND_MAIN_ACTION).

    Goes through ``game.locked()`` exactly as a live runner does."""
    rng = random.Random(seed)
    with game.locked() as tracker:
        state = tracker.state
        seat = state.current
        colors = [c for c, n in zip(COLORS, state.row, strict=True) if n]
        first = apply(state, step_from_json({"kind": "pick", "player": seat, "color": colors[0]}), rng)
        second_color = next(c for c, n in zip(COLORS, first.row, strict=True) if n)
        table, _ = force(first, step_from_json({"kind": "pick", "player": seat, "color": second_color}))
        table = resolve_chance(table, rng)
        for frame in range(tracker.settings.frames):
            tracker.observe(perfect_observation(table, time.time(), frame))
        tracker.end_of_turn(EndOfTurn(time.time(), "test"))
