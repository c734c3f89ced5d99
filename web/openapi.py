"""The OpenAPI 3.1 document of the JSON API, served at ``/api/openapi.json``.

Written by hand next to the routes; ``tests/test_web_api.py`` checks that every ``/api`` route
the app registers is described here (and that nothing described is missing from the app).
"""

from __future__ import annotations

from functools import cache
from typing import Any

JSON = "application/json"
ERROR = {"$ref": "#/components/schemas/Error"}
OBJ: dict[str, Any] = {"type": "object"}


def _err(*codes: int) -> dict[str, Any]:
    text = {
        400: "malformed JSON or a bad field",
        401: "admin PIN required",
        403: "wrong PIN, or a forged request (CSRF token or origin)",
        404: "unknown game, warning or route",
        409: "illegal step, or a conflict with the game's state",
        415: "the body is not application/json",
        422: "a step or correction the engine refuses",
        429: "too many wrong PINs: wait (Retry-After)",
    }
    return {str(c): {"description": text[c], "content": {JSON: {"schema": ERROR}}} for c in codes}


def _op(
    summary: str,
    ok: dict[str, Any] | None = None,
    body: dict[str, Any] | None = None,
    errors: tuple[int, ...] = (),
    admin: bool = False,
    ok_status: str = "200",
    media: str = JSON,
) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": summary,
        "responses": {
            ok_status: {"description": "OK", "content": {media: {"schema": ok or OBJ}}},
            **_err(*errors),
        },
    }
    if body is not None:
        op["requestBody"] = {"required": True, "content": {JSON: {"schema": body}}}
    if admin:
        op["security"] = [{"adminPin": [], "csrf": []}, {"adminSession": [], "csrf": []}]
        op["responses"].update(_err(401, 403, 429))
    elif body is not None or ok_status == "201":
        op["security"] = [{"csrf": []}]
    return op


GAME_ID = {"name": "game_id", "in": "path", "required": True, "schema": {"type": "string"}}
WARNING_ID = {"name": "warning_id", "in": "path", "required": True, "schema": {"type": "integer"}}
CHANGE_ERRORS = (400, 404, 409, 415)
CHANGED = {
    "type": "object",
    "properties": {
        "ok": {"const": True},
        "seq": {"type": "integer", "description": "the snapshot it published"},
    },
}


def _game(ops: dict[str, Any]) -> dict[str, Any]:
    return {"parameters": [GAME_ID], **ops}


@cache
def openapi_document() -> dict[str, Any]:
    step = {
        "type": "object",
        "description": 'a step as in docs/steps.md, e.g. {"kind": "pick", "player": 0, "color": "red"}',
        "required": ["kind"],
    }
    paths: dict[str, Any] = {
        "/api/openapi.json": {"get": _op("this document")},
        "/api/session": {"get": _op("this browser's CSRF token and whether it holds an admin session")},
        "/api/session/unlock": {
            "post": _op(
                "open an admin session with the PIN",
                body={"type": "object", "properties": {"pin": {"type": "string"}}, "required": ["pin"]},
                errors=(400, 401, 403, 415, 429),
            )
        },
        "/api/session/lock": {"post": _op("end this browser's admin session", errors=(403,))},
        "/api/settings": {
            "get": _op("camera source, serial port, whether a live runner is attached, the active game"),
            "put": _op(
                "change settings; new_pin needs the current PIN in X-Admin-PIN",
                body={
                    "type": "object",
                    "properties": {
                        "camera_source": {"type": "string"},
                        "serial_port": {"type": "string"},
                        "new_pin": {"type": "string", "minLength": 4, "maxLength": 64},
                    },
                },
                errors=(400, 415),
                admin=True,
            ),
        },
        "/api/camera": {"get": _op("camera and calibration status")},
        "/api/camera.mjpg": {
            "get": _op(
                "the live camera image with detections and zones drawn (MJPEG)",
                ok={"type": "string", "format": "binary"},
                errors=(404,),
                media="multipart/x-mixed-replace",
            )
        },
        "/api/cards": {"get": _op("the 112 cards' printed facts", ok={"type": "array", "items": OBJ})},
        "/api/games": {
            "get": _op("every game record in the games folder, and the active game"),
            "post": _op(
                "start a new game (it becomes the active one)",
                body={
                    "type": "object",
                    "required": ["names"],
                    "properties": {
                        "names": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 4},
                        "deal": {"type": "boolean", "description": "the referee deals the setup from a seed"},
                        "seed": {"type": ["integer", "null"]},
                    },
                },
                errors=(400, 415),
                admin=True,
                ok_status="201",
            ),
        },
        "/api/games/{game_id}": _game(
            {
                "get": _op(
                    "the game: a snapshot of the table, the warnings, the log, the scores", errors=(404, 409)
                )
            }
        ),
        "/api/games/{game_id}/events": _game(
            {
                "get": {
                    **_op(
                        "server-sent events: a snapshot on every change; reconnect with Last-Event-ID",
                        ok={"type": "string"},
                        errors=(404,),
                        media="text/event-stream",
                    ),
                    "parameters": [
                        {"name": "since", "in": "query", "required": False, "schema": {"type": "string"}},
                        {
                            "name": "Last-Event-ID",
                            "in": "header",
                            "required": False,
                            "schema": {"type": "string"},
                        },
                    ],
                }
            }
        ),
        "/api/games/{game_id}/legal-steps": _game({"get": _op("the legal steps, grouped", errors=(404,))}),
        "/api/games/{game_id}/log": _game({"get": _op("the move log in plain language", errors=(404,))}),
        "/api/games/{game_id}/scores": _game(
            {"get": _op("the scoring table with tie-breaks", errors=(404,))}
        ),
        "/api/games/{game_id}/warnings": _game({"get": _op("the warning feed", errors=(404,))}),
        "/api/games/{game_id}/export": _game(
            {"get": _op("the whole game record as JSON (download)", errors=(404,))}
        ),
        "/api/games/{game_id}/steps": _game(
            {
                "post": _op(
                    "manual mode: play one legal step",
                    ok=CHANGED,
                    body={"type": "object", "required": ["step"], "properties": {"step": step}},
                    errors=(*CHANGE_ERRORS, 422),
                    admin=True,
                )
            }
        ),
        "/api/games/{game_id}/warnings/{warning_id}": {
            "parameters": [GAME_ID, WARNING_ID],
            "post": _op(
                "accept or dismiss a warning",
                ok=CHANGED,
                body={
                    "type": "object",
                    "required": ["status"],
                    "properties": {"status": {"enum": ["accepted", "dismissed"]}},
                },
                errors=CHANGE_ERRORS,
                admin=True,
            ),
        },
        "/api/games/{game_id}/corrections": _game(
            {
                "post": _op(
                    "correct what the referee believes (a marble's colour, a card's id, the whole state)",
                    ok=CHANGED,
                    body={
                        "type": "object",
                        "required": ["what"],
                        "properties": {
                            "what": {"enum": ["marble_color", "card_id", "state"]},
                            "payload": OBJ,
                        },
                    },
                    errors=(*CHANGE_ERRORS, 422),
                    admin=True,
                )
            }
        ),
        "/api/games/{game_id}/undo": _game(
            {"post": _op("go back to the start of the turn", ok=CHANGED, errors=CHANGE_ERRORS, admin=True)}
        ),
        "/api/games/{game_id}/end-of-turn": _game(
            {
                "post": _op(
                    "signal the end of the turn (camera mode)", ok=CHANGED, errors=CHANGE_ERRORS, admin=True
                )
            }
        ),
        "/api/games/{game_id}/turn-ends": _game(
            {
                "post": _op(
                    "move inferred turn boundaries: explain the table seen again from the start of a "
                    "turn with the number of turn ends given",
                    ok=CHANGED,
                    body={
                        "type": "object",
                        "required": ["from_turn", "ends"],
                        "properties": {"from_turn": {"type": "integer"}, "ends": {"type": "integer"}},
                    },
                    errors=(*CHANGE_ERRORS, 422),
                    admin=True,
                )
            }
        ),
        "/api/games/{game_id}/end": _game(
            {"post": _op("end the game now; scoring is final", ok=CHANGED, errors=CHANGE_ERRORS, admin=True)}
        ),
        "/api/games/{game_id}/live": _game(
            {
                "post": _op(
                    "start, pause or stop live refereeing from the camera",
                    body={
                        "type": "object",
                        "required": ["action"],
                        "properties": {"action": {"enum": ["start", "pause", "stop"]}},
                    },
                    errors=CHANGE_ERRORS,
                    admin=True,
                )
            }
        ),
    }
    from web.contrivance import openapi_paths

    paths.update(openapi_paths())
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Gizmos Referee dashboard API",
            "version": "1",
            "description": "Everything the dashboard shows and does. Changes need the admin PIN "
            "(X-Admin-PIN) or an admin session, and the session's CSRF token (X-CSRF-Token). "
            "See docs/dashboard.md.",
        },
        "paths": paths,
        "components": {
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {"type": "string"},
                        "code": {"type": "string", "description": "the rule broken (409 on a step)"},
                        "rulings": {"type": "array", "items": {"type": "integer"}},
                        "rule": {"type": "string"},
                    },
                }
            },
            "securitySchemes": {
                "adminPin": {"type": "apiKey", "in": "header", "name": "X-Admin-PIN"},
                "adminSession": {"type": "apiKey", "in": "cookie", "name": "session"},
                "csrf": {"type": "apiKey", "in": "header", "name": "X-CSRF-Token"},
            },
        },
    }
