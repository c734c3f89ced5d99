"""The JSON API: everything the pages show and do (``/api/openapi.json`` describes it).

Reads answer from the latest published snapshot. Changes need the admin PIN (or an admin
session) and the CSRF token (checked for every state-changing request in ``create_app``), and
are made under the game's lock; the snapshot they publish reaches every open page.
"""

from __future__ import annotations

import dataclasses
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
from web import api_schemas as S
from web.errors import ApiError
from web.hub import Hub, LiveGame
from web.live import CardQuestions, QuestionRefused, SpreadEnrolment
from web.schemas import document, openapi_document, valid_body
from web.security import PIN_HEADER, PinError, admin_state, csrf_token, guard, require_admin, unlock
from web.settings_file import save_settings, settings_path
from web.view import card_json

bp = Blueprint("api", __name__, url_prefix="/api")
MAX_SEED = S.MAX_SEED


def hub() -> Hub:
    return current_app.extensions["gizmos_hub"]


def game(game_id: str) -> LiveGame:
    return hub().get(game_id)


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
@document("this document, generated from the schemas the server validates with", ok=S.OPENAPI)
def openapi() -> Response:
    return jsonify(openapi_document(current_app))


@bp.get("/session")
@document("this browser's CSRF token and whether it holds an admin session", ok=S.SESSION)
def get_session() -> Response:
    return jsonify({"csrf_token": csrf_token(), **admin_state()})


@bp.post("/session/unlock")
@document("open an admin session with the PIN", ok=S.ADMIN_STATE, body=S.UNLOCK, errors=(401, 403, 429))
def unlock_session() -> Response:
    return jsonify(unlock(valid_body().get("pin")))


@bp.post("/session/lock")
@document("end this browser's admin session", ok=S.ADMIN_STATE)
def lock_session() -> Response:
    guard().close_session(session.pop("admin", None))
    return jsonify(admin_state())


# ---------------------------------------------------------------- settings, camera, cards


def settings_json() -> dict[str, Any]:
    """The settings as the setup page shows them: where they are kept, and whether a camera
    pipeline is attached (if not, what to run instead)."""
    h = hub()
    source = h.settings.camera_source or "0"
    hint = (
        "Start live refereeing on the setup page once a game is created."
        if h.runner is not None
        else "No camera pipeline is attached to this server: start it with `gizmos-referee serve` "
        f"(which attaches one), or referee from the camera with `gizmos-referee run --camera {source} "
        "--players NAME NAME`; manual mode works without one."
    )
    return {
        **h.settings.to_json(),
        "live_runner": h.runner is not None,
        "active": h.active,
        "saved_in": str(settings_path(h.games_dir)),
        "camera_hint": hint,
    }


@bp.get("/settings")
@document(
    "camera source, serial port, whether a live runner is attached, the active game, the settings file",
    ok=S.SETTINGS,
)
def get_settings() -> Response:
    return jsonify(settings_json())


@bp.put("/settings")
@document(
    "change settings (kept in the settings file beside the game records); new_pin needs the current "
    "PIN in X-Admin-PIN",
    ok=S.SETTINGS,
    body=S.SETTINGS_BODY,
    errors=(503,),
)
@require_admin
def put_settings() -> Response:
    data = valid_body("settings")
    h = hub()
    changed = {k: v for k, v in data.items() if k != "new_pin"}
    if changed:  # kept beside the game records first: a failed save changes nothing
        new = dataclasses.replace(h.settings)
        new.update(changed)
        save_settings(settings_path(h.games_dir), new)
    if "new_pin" in data:
        if request.headers.get(PIN_HEADER) is None:
            raise ApiError(401, f"changing the PIN needs the current PIN in the {PIN_HEADER} header")
        try:
            guard().change(data["new_pin"])
        except PinError as exc:
            raise ApiError(400, f"new_pin: {exc}") from exc
        unlock(data["new_pin"])
    h.settings.update(changed)
    return jsonify(settings_json())


@bp.get("/camera")
@document("camera and calibration status", ok=S.CAMERA)
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


# ---------------------------------------------------------------- cards the camera cannot place


def card_questions() -> CardQuestions:
    questions = current_app.config.get("CARD_QUESTIONS")
    if questions is None:
        raise ApiError(404, "no camera pipeline that asks about cards is attached to this server")
    return questions


@contextmanager
def refused() -> Iterator[None]:
    """A card question's or a spread's refusal as the JSON error it names."""
    try:
        yield
    except QuestionRefused as exc:
        raise ApiError(exc.status, str(exc)) from exc


@bp.get("/questions")
@document("the cards the camera saw whole but cannot place, with the likeliest ids", ok=S.QUESTIONS)
def questions() -> Response:
    asking = current_app.config.get("CARD_QUESTIONS")
    return jsonify({"questions": asking.pending() if asking else [], "asking": asking is not None})


@bp.get("/questions/<int:question>/face.png")
@document(
    "the card a question is about, as the camera saw it",
    ok={"type": "string", "format": "binary"},
    media="image/png",
    errors=(404,),
)
def question_face(question: int) -> Response:
    with refused():
        png = card_questions().face_png(question)
    return Response(png, mimetype="image/png", headers={"Cache-Control": "no-store"})


@bp.post("/questions/<int:question>")
@document(
    "answer a question: the card is this one (it is enrolled as the camera saw it, and remembered)",
    ok=S.ANSWERED,
    body=S.ANSWER,
    errors=(404, 409),
)
@require_admin
def answer_question(question: int) -> Response:
    card = valid_body()["card"]
    with refused():
        return jsonify(card_questions().answer(question, card))


# ---------------------------------------------------------------- enrolment from a spread of cards

MAX_SPREAD_PHOTO = 32 << 20  # a phone's full-size photo of the table


def spread_enrolment() -> SpreadEnrolment:
    spread = current_app.config.get("SPREAD_ENROLMENT")
    if spread is None:
        raise ApiError(404, "no spread enrolment is attached to this server")
    return spread


@bp.get("/spread")
@document("the open spread of cards to enrol: each card's suggested id and likeliest ids", ok=S.SPREAD_STATE)
def spread() -> Response:
    enrolling = current_app.config.get("SPREAD_ENROLMENT")
    return jsonify({"spread": enrolling.current() if enrolling else None, "enrolling": enrolling is not None})


@bp.post("/spread")
@document(
    "a photo of the table with a spread of cards (Content-Type image/jpeg or image/png): finds "
    "the cards and suggests their ids (replaces the open spread)",
    ok=S.SPREAD,
    errors=(404, 422),
    body_required=False,
)
@require_admin
def take_spread() -> Response:
    enrolling = spread_enrolment()
    if request.mimetype not in ("image/jpeg", "image/png"):
        raise ApiError(
            415, f"a spread's photo is sent as image/jpeg or image/png, not {request.mimetype or 'nothing'}"
        )
    request.max_content_length = MAX_SPREAD_PHOTO
    with refused():
        return jsonify(enrolling.take_photo(request.get_data(cache=False)))


@bp.post("/spread/camera")
@document(
    "take the spread from the referee's camera: the running game's latest still frame, else a "
    "frame read from the setup page's camera source; finds the cards and suggests their ids "
    "(replaces the open spread)",
    ok=S.SPREAD,
    errors=(404, 409, 422),
    body_required=False,
)
@require_admin
def take_spread_from_camera() -> Response:
    enrolling = spread_enrolment()
    with refused():
        return jsonify(enrolling.take_camera(hub().settings.camera_source))


@bp.get("/spread/<int:place>/face.png")
@document(
    "a card of the open spread, as the camera saw it",
    ok={"type": "string", "format": "binary"},
    media="image/png",
    errors=(404,),
)
def spread_face(place: int) -> Response:
    with refused():
        png = spread_enrolment().face_png(place)
    return Response(png, mimetype="image/png", headers={"Cache-Control": "no-store"})


@bp.post("/spread/confirm")
@document(
    "enrol the confirmed (or corrected) cards of the open spread, all at once",
    ok=S.SPREAD_ENROLLED,
    body=S.SPREAD_CONFIRM,
    errors=(404, 409),
)
@require_admin
def confirm_spread() -> Response:
    body = valid_body()
    cards: dict[int, int] = {}
    for item in body["cards"]:
        if item["place"] in cards:
            raise ApiError(400, f"cards: place {item['place']} given twice")
        cards[item["place"]] = item["card"]
    with refused():
        return jsonify(spread_enrolment().confirm(body["spread"], cards))


@bp.get("/cards")
@document("the 112 cards' printed facts", ok={"type": "array", "items": S.CARD})
def cards() -> Response:
    return jsonify([card_json(i) for i in range(112)])


# ---------------------------------------------------------------- games


@bp.get("/games")
@document("every game record in the games folder, and the active game", ok=S.GAMES)
def list_games() -> Response:
    return jsonify({"active": hub().active, "games": hub().records()})


@bp.post("/games")
@document(
    "start a new game (it becomes the active one)",
    ok=S.CREATED,
    body=S.NEW_GAME,
    ok_status=201,
    errors=(503,),
)
@require_admin
def create_game() -> Response:
    data = valid_body("game")
    deal = data.get("deal", False)
    seed = data.get("seed")
    if deal and seed is None:
        seed = secrets.randbelow(2**31)
    if not deal and seed is not None:
        raise ApiError(400, "seed: only a dealt setup (deal: true) uses a seed")
    created = hub().create(data.get("names"), seed, deal)
    resp = jsonify({"id": created.id, "url": url_for("pages.table", game_id=created.id), "seed": seed})
    resp.status_code = 201
    return resp


@bp.get("/games/<game_id>")
@document(
    "the game: a snapshot of the table, the warnings, the log, the scores", ok=S.SNAPSHOT, errors=(404, 409)
)
def get_game(game_id: str) -> Response:
    g_ = game(game_id)
    return jsonify({**g_.event_since(None), "live": hub().live_status(game_id)})


@bp.get("/games/<game_id>/legal-steps")
@document("the legal steps, grouped", ok=S.LEGAL, errors=(404, 409))
def legal(game_id: str) -> Response:
    return jsonify(game(game_id).snapshot.view["legal"])


@bp.get("/games/<game_id>/log")
@document("the move log in plain language (undone turns marked void)", ok=S.LOG, errors=(404, 409))
def log(game_id: str) -> Response:
    return jsonify(game(game_id).snapshot.log)


@bp.get("/games/<game_id>/scores")
@document("the scoring table with tie-breaks", ok=S.SCORING, errors=(404, 409))
def scores(game_id: str) -> Response:
    return jsonify(game(game_id).snapshot.view["scoring"])


@bp.get("/games/<game_id>/warnings")
@document("the warning feed", ok=S.WARNINGS, errors=(404, 409))
def warnings(game_id: str) -> Response:
    return jsonify(game(game_id).snapshot.view["warnings"])


@bp.get("/games/<game_id>/export")
@document("the whole game record as JSON, evidence crops included (download)", ok=S.EXPORT, errors=(404, 409))
def export(game_id: str) -> Response:
    data = game(game_id).export()
    resp = Response(json.dumps(data, indent=1), mimetype="application/json")
    resp.headers["Content-Disposition"] = f'attachment; filename="gizmos-{game_id}.json"'
    return resp


@bp.post("/games/<game_id>/steps")
@document("manual mode: play one legal step", ok=S.CHANGED, body=S.PLAY, errors=(404, 409, 422, 503))
@require_admin
def play(game_id: str) -> Response:
    g_ = game(game_id)
    data = valid_body()
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
@document("accept or dismiss a warning", ok=S.CHANGED, body=S.DECIDE, errors=(404, 409, 503))
@require_admin
def decide(game_id: str, warning_id: int) -> Response:
    g_ = game(game_id)
    status = valid_body()["status"]
    with g_.locked() as tracker:
        found = next((w for w in tracker.warnings if w.id == warning_id), None)
        if found is None:
            raise ApiError(404, f"no warning #{warning_id} in game {game_id!r}")
        if found.status != "open":
            raise ApiError(409, f"warning #{warning_id} was already {found.status} by {found.decided_by}")
        tracker.decide(warning_id, status, g.who)
    return changed(g_)


@bp.post("/games/<game_id>/corrections")
@document(
    "correct what the referee believes (a marble's colour, a card's id, the whole state)",
    ok=S.CHANGED,
    body=S.CORRECTION,
    errors=(404, 409, 422, 503),
)
@require_admin
def correct(game_id: str) -> Response:
    game(game_id)
    data = valid_body()
    what = data["what"]
    payload = data.get("payload", {})
    with changing(game_id, "correct", over_ok=True) as (g_, tracker):
        try:
            tracker.correct(Correction(time.time(), g.who, what, payload))
        except TrackerError as exc:
            raise ApiError(422, str(exc)) from exc
    return changed(g_)


@bp.post("/games/<game_id>/undo")
@document("go back to the start of the turn", ok=S.CHANGED, errors=(404, 409, 503))
@require_admin
def undo(game_id: str) -> Response:
    valid_body()
    with changing(game_id, "undo", over_ok=True) as (g_, tracker):
        tracker.undo_turn(g.who)
    return changed(g_)


@bp.post("/games/<game_id>/end-of-turn")
@document("signal the end of the turn (camera mode)", ok=S.END_OF_TURN, errors=(404, 409, 503))
@require_admin
def end_of_turn(game_id: str) -> Response:
    valid_body()
    with changing(game_id, "signal the end of a turn") as (g_, tracker):
        update = tracker.end_of_turn(EndOfTurn(time.time(), "dashboard"), who=g.who)
    return changed(g_, steps=[s.to_json() for s in update.steps], notes=update.notes)


@bp.post("/games/<game_id>/turn-ends")
@document(
    "move inferred turn boundaries (camera only): explain the table seen again from the start of a "
    "turn with the number of turn ends given",
    ok=S.END_OF_TURN,
    body=S.TURN_ENDS,
    errors=(404, 409, 422, 503),
)
@require_admin
def turn_ends(game_id: str) -> Response:
    """Move inferred turn boundaries (camera only): explain the table now seen again from the start
    of turn ``from_turn`` with exactly ``ends`` turns ended since."""
    game(game_id)
    data = valid_body("turn-ends")
    with changing(game_id, "move a turn boundary") as (g_, tracker):
        try:
            update = tracker.reread_turns(data["from_turn"], data["ends"], g.who)
        except TrackerError as exc:
            raise ApiError(422, str(exc)) from exc
    return changed(g_, steps=[s.to_json() for s in update.steps], notes=update.notes)


@bp.post("/games/<game_id>/end")
@document("end the game now; scoring is final", ok=S.CHANGED, errors=(404, 409, 503))
@require_admin
def end_game(game_id: str) -> Response:
    valid_body()
    with changing(game_id, "end the game") as (g_, tracker):
        tracker.end_game(g.who)
    h = hub()
    if h.runner is not None and h.active == game_id:
        h.runner.stop()
    return changed(g_)


@bp.post("/games/<game_id>/live")
@document(
    "start, pause or stop live refereeing from the camera", ok=S.LIVE_DONE, body=S.LIVE, errors=(404, 409)
)
@require_admin
def live(game_id: str) -> Response:
    g_ = game(game_id)
    action = valid_body()["action"]
    h = hub()
    if h.runner is None:
        raise ApiError(
            409,
            "no camera pipeline is attached to this server: use manual mode, or start the "
            "dashboard with `gizmos-referee serve` (which attaches one) or `gizmos-referee run "
            "--camera SOURCE --players NAME NAME`",
        )
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
