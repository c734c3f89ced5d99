"""The JSON API: everything the pages show and do (``/api/openapi.json`` describes it).

Reads answer from the latest published snapshot. Changes need the admin PIN (or an admin
session) and the CSRF token (checked for every state-changing request in ``create_app``), and
are made under the game's lock; the snapshot they publish reaches every open page.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flask import Blueprint, Response, current_app, g, jsonify, request, session, url_for

from referee.events import Correction, EndOfTurn
from referee.gizmos import RULES, IllegalStep, InvalidStep, step_from_json
from referee.tracker import Tracker, TrackerError
from web.errors import ApiError
from web.hub import Hub, LiveGame
from web.openapi import openapi_document
from web.security import PIN_HEADER, PinError, admin_state, csrf_token, guard, require_admin, unlock
from web.view import card_json

bp = Blueprint("api", __name__, url_prefix="/api")
MAX_SEED = 2**63 - 1


def hub() -> Hub:
    return current_app.extensions["gizmos_hub"]


def game(game_id: str) -> LiveGame:
    return hub().get(game_id)


def body(required: bool = True) -> dict[str, Any]:
    """The request's JSON object; 415 if it is not JSON, 400 if it is malformed."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        if required:
            raise ApiError(400, "malformed JSON: the request body is empty (expected a JSON object)")
        return {}
    if request.mimetype != "application/json":
        raise ApiError(415, f"expected Content-Type application/json, got {request.mimetype or 'none'!r}")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"malformed JSON: {exc}") from exc
    except RecursionError as exc:
        raise ApiError(400, "malformed JSON: nested too deeply") from exc
    if not isinstance(data, dict):
        raise ApiError(400, f"malformed JSON: expected an object, got {type(data).__name__}")
    return data


def choice(data: dict[str, Any], key: str, options: tuple[str, ...]) -> str:
    value = data.get(key)
    if value not in options:
        raise ApiError(400, f"{key}: expected one of {list(options)}, got {value!r}")
    return str(value)


def illegal(exc: IllegalStep) -> ApiError:
    """An illegal step as a 409 naming the rule and the ruling(s)."""
    return ApiError(
        409,
        exc.message,
        code=exc.code,
        rulings=list(exc.rule.rulings),
        rule=RULES[exc.code].summary,
        player=exc.player,
    )


def not_over(tracker: Tracker, what: str, over_ok: bool = False) -> None:
    """409 if the game was ended by a person (or is over, unless ``over_ok``)."""
    if tracker.ended_by is not None:
        raise ApiError(409, f"cannot {what}: the game was ended by {tracker.ended_by}")
    if tracker.state.game_over and not over_ok:
        raise ApiError(409, f"cannot {what}: the game is over")


@contextmanager
def changing(game_id: str, what: str, over_ok: bool = False) -> Iterator[tuple[LiveGame, Tracker]]:
    """The game, locked for one change that a finished game refuses (see :func:`not_over`)."""
    g_ = game(game_id)
    with g_.locked() as tracker:
        not_over(tracker, what, over_ok)
        yield g_, tracker


def changed(game: LiveGame, **extra: Any) -> Response:
    """The answer to a change: the snapshot it published (its sequence number) and extras."""
    return jsonify({"ok": True, "seq": game.snapshot.seq, **extra})


# ---------------------------------------------------------------- the document and the session


@bp.get("/openapi.json")
def openapi() -> Response:
    return jsonify(openapi_document())


@bp.get("/session")
def get_session() -> Response:
    return jsonify({"csrf_token": csrf_token(), **admin_state()})


@bp.post("/session/unlock")
def unlock_session() -> Response:
    return jsonify(unlock(body().get("pin")))


@bp.post("/session/lock")
def lock_session() -> Response:
    guard().close_session(session.pop("admin", None))
    return jsonify(admin_state())


# ---------------------------------------------------------------- settings, camera, cards


@bp.get("/settings")
def get_settings() -> Response:
    h = hub()
    return jsonify({**h.settings.to_json(), "live_runner": h.runner is not None, "active": h.active})


@bp.put("/settings")
@require_admin
def put_settings() -> Response:
    data = body()
    unknown = sorted(set(data) - {"camera_source", "serial_port", "new_pin"})
    if unknown:
        raise ApiError(400, f"settings: unknown field(s) {unknown}")
    h = hub()
    if "new_pin" in data:
        if request.headers.get(PIN_HEADER) is None:
            raise ApiError(401, f"changing the PIN needs the current PIN in the {PIN_HEADER} header")
        try:
            guard().change(data["new_pin"])
        except PinError as exc:
            raise ApiError(400, f"new_pin: {exc}") from exc
        unlock(data["new_pin"])
    h.settings.update(data)
    return jsonify({**h.settings.to_json(), "live_runner": h.runner is not None, "active": h.active})


@bp.get("/camera")
def camera() -> Response:
    source = hub().frame_source
    if source is None:
        return jsonify(
            {
                "camera": False,
                "source": None,
                "calibrated": False,
                "detail": "no camera",
                "fps": 0.0,
                "link": "",
            }
        )
    return jsonify({"camera": True, **source.status().to_json()})


@bp.get("/cards")
def cards() -> Response:
    return jsonify([card_json(i) for i in range(112)])


# ---------------------------------------------------------------- games


@bp.get("/games")
def list_games() -> Response:
    return jsonify({"active": hub().active, "games": hub().records()})


@bp.post("/games")
@require_admin
def create_game() -> Response:
    data = body()
    unknown = sorted(set(data) - {"names", "deal", "seed"})
    if unknown:
        raise ApiError(400, f"game: unknown field(s) {unknown}")
    deal = data.get("deal", False)
    if not isinstance(deal, bool):
        raise ApiError(400, "deal: expected true (the referee deals the setup from a seed) or false")
    seed = data.get("seed")
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED
    ):
        raise ApiError(400, f"seed: expected a whole number 0..{MAX_SEED} or null")
    if deal and seed is None:
        seed = secrets.randbelow(2**31)
    if not deal and seed is not None:
        raise ApiError(400, "seed: only a dealt setup (deal: true) uses a seed")
    created = hub().create(data.get("names"), seed, deal)
    resp = jsonify({"id": created.id, "url": url_for("pages.table", game_id=created.id), "seed": seed})
    resp.status_code = 201
    return resp


@bp.get("/games/<game_id>")
def get_game(game_id: str) -> Response:
    g_ = game(game_id)
    return jsonify({**g_.event_since(None), "live": hub().live_status(game_id)})


@bp.get("/games/<game_id>/legal-steps")
def legal(game_id: str) -> Response:
    return jsonify(game(game_id).snapshot.view["legal"])


@bp.get("/games/<game_id>/log")
def log(game_id: str) -> Response:
    return jsonify(game(game_id).snapshot.log)


@bp.get("/games/<game_id>/scores")
def scores(game_id: str) -> Response:
    return jsonify(game(game_id).snapshot.view["scoring"])


@bp.get("/games/<game_id>/warnings")
def warnings(game_id: str) -> Response:
    return jsonify(game(game_id).snapshot.view["warnings"])


@bp.get("/games/<game_id>/export")
def export(game_id: str) -> Response:
    data = game(game_id).export()
    resp = Response(json.dumps(data, indent=1), mimetype="application/json")
    resp.headers["Content-Disposition"] = f'attachment; filename="gizmos-{game_id}.json"'
    return resp


@bp.post("/games/<game_id>/steps")
@require_admin
def play(game_id: str) -> Response:
    g_ = game(game_id)
    data = body()
    if "step" not in data:
        raise ApiError(
            400, 'expected {"step": {...}} with a step such as {"kind": "pick", "player": 0, "color": "red"}'
        )
    try:
        step = step_from_json(data["step"])
    except InvalidStep as exc:
        raise ApiError(422, str(exc)) from exc
    with g_.locked() as tracker:
        try:
            tracker.play(step, who=g.who)
        except IllegalStep as exc:
            raise illegal(exc) from exc
    return changed(g_)


@bp.post("/games/<game_id>/warnings/<int:warning_id>")
@require_admin
def decide(game_id: str, warning_id: int) -> Response:
    g_ = game(game_id)
    status = choice(body(), "status", ("accepted", "dismissed"))
    with g_.locked() as tracker:
        found = next((w for w in tracker.warnings if w.id == warning_id), None)
        if found is None:
            raise ApiError(404, f"no warning #{warning_id} in game {game_id!r}")
        if found.status != "open":
            raise ApiError(409, f"warning #{warning_id} was already {found.status} by {found.decided_by}")
        tracker.decide(warning_id, status, g.who)
    return changed(g_)


@bp.post("/games/<game_id>/corrections")
@require_admin
def correct(game_id: str) -> Response:
    game(game_id)
    data = body()
    what = choice(data, "what", ("marble_color", "card_id", "state"))
    payload = data.get("payload", {})
    if not isinstance(payload, dict):
        raise ApiError(400, "payload: expected a JSON object")
    with changing(game_id, "correct", over_ok=True) as (g_, tracker):
        try:
            tracker.correct(Correction(time.time(), g.who, what, payload))
        except TrackerError as exc:
            raise ApiError(422, str(exc)) from exc
    return changed(g_)


@bp.post("/games/<game_id>/undo")
@require_admin
def undo(game_id: str) -> Response:
    body(required=False)
    with changing(game_id, "undo", over_ok=True) as (g_, tracker):
        tracker.undo_turn(g.who)
    return changed(g_)


@bp.post("/games/<game_id>/end-of-turn")
@require_admin
def end_of_turn(game_id: str) -> Response:
    body(required=False)
    with changing(game_id, "signal the end of a turn") as (g_, tracker):
        update = tracker.end_of_turn(EndOfTurn(time.time(), "dashboard"), who=g.who)
    return changed(g_, steps=[s.to_json() for s in update.steps], notes=update.notes)


@bp.post("/games/<game_id>/turn-ends")
@require_admin
def turn_ends(game_id: str) -> Response:
    """Move inferred turn boundaries (camera only): explain the table now seen again from the start
    of turn ``from_turn`` with exactly ``ends`` turns ended since."""
    game(game_id)
    data = body()
    numbers = {}
    for key in ("from_turn", "ends"):
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ApiError(400, f"{key}: expected a whole number, got {value!r}")
        numbers[key] = value
    with changing(game_id, "move a turn boundary") as (g_, tracker):
        try:
            update = tracker.reread_turns(numbers["from_turn"], numbers["ends"], g.who)
        except TrackerError as exc:
            raise ApiError(422, str(exc)) from exc
    return changed(g_, steps=[s.to_json() for s in update.steps], notes=update.notes)


@bp.post("/games/<game_id>/end")
@require_admin
def end_game(game_id: str) -> Response:
    body(required=False)
    with changing(game_id, "end the game") as (g_, tracker):
        tracker.end_game(g.who)
    h = hub()
    if h.runner is not None and h.active == game_id:
        h.runner.stop()
    return changed(g_)


@bp.post("/games/<game_id>/live")
@require_admin
def live(game_id: str) -> Response:
    g_ = game(game_id)
    action = choice(body(), "action", ("start", "pause", "stop"))
    h = hub()
    if h.runner is None:
        raise ApiError(409, "no camera pipeline is attached to this server: use manual mode")
    if action == "start":
        with g_.locked() as tracker:
            not_over(tracker, "start live refereeing")
        if h.active not in (None, game_id) and h.runner.status() != "stopped":
            h.runner.stop()
        try:
            h.runner.start(g_, h.settings)
        except RuntimeError as exc:
            raise ApiError(409, f"cannot start live refereeing: {exc}") from exc
        h.active = game_id
    else:
        if h.active != game_id:
            raise ApiError(409, f"game {game_id!r} is not the one being refereed live")
        (h.runner.pause if action == "pause" else h.runner.stop)()
    return jsonify({"ok": True, "live": h.live_status(game_id)})
