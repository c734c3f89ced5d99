"""The JSON Schemas of the Gizmos API's bodies and answers (used by ``web/api.py``'s
:func:`web.schemas.document` specs: the validator enforces them, the OpenAPI document shows them)."""

from __future__ import annotations

from typing import Any

from referee.game import get_game
from referee.gizmos import COLORS

MAX_SEED = 2**63 - 1
INT = {"type": "integer"}
STR = {"type": "string"}
BOOL = {"type": "boolean"}
OBJ: dict[str, Any] = {"type": "object"}
STR_LIST = {"type": "array", "items": STR}
MARBLES = {"type": "object", "required": list(COLORS), "properties": {c: INT for c in COLORS}}


def player_names(game: str) -> dict[str, Any]:
    """A new game's player names: as many as the game allows (its ``min_players`` to
    ``max_players``, from the game interface, referee/game.py)."""
    rules = get_game(game)
    return {"type": "array", "items": STR, "minItems": rules.min_players, "maxItems": rules.max_players}


def obj(required: list[str], props: dict[str, Any], closed: bool = False) -> dict[str, Any]:
    """An object schema with these required keys (``closed``: no other key is accepted)."""
    out: dict[str, Any] = {"type": "object", "required": required, "properties": props}
    if closed:
        out["additionalProperties"] = False
    return out


ADMIN_STATE = obj(
    ["admin", "admin_until"],
    {
        "admin": BOOL,
        "admin_until": {"type": ["number", "null"], "description": "when the admin session ends"},
    },
)
SESSION = obj(["csrf_token", "admin", "admin_until"], {"csrf_token": STR, **ADMIN_STATE["properties"]})
UNLOCK = obj(
    [], {"pin": {"type": "string", "description": "the table's admin PIN (missing: 401)"}}, closed=True
)
SETTING = {"type": "string", "maxLength": 200}
SETTINGS_BODY = obj(
    [],
    {
        "camera_source": {**SETTING, "description": "0 (the first camera), a video file, a stream URL"},
        "serial_port": {**SETTING, "description": "the dispenser board's port; empty: no sensors"},
        "new_pin": {"type": "string", "minLength": 4, "maxLength": 64, "description": "needs X-Admin-PIN"},
    },
    closed=True,
)
SETTINGS = obj(
    ["camera_source", "serial_port", "live_runner", "active", "saved_in", "camera_hint"],
    {
        "camera_source": STR,
        "serial_port": STR,
        "live_runner": {"type": "boolean", "description": "a camera pipeline is attached"},
        "active": {"type": ["string", "null"]},
        "saved_in": {"type": "string", "description": "the settings file they persist in"},
        "camera_hint": {"type": "string", "description": "what to run to referee from the camera"},
    },
)
CAMERA = obj(
    ["camera", "source", "calibrated", "detail", "fps", "link"],
    {
        "camera": BOOL,
        "source": {"type": ["string", "null"]},
        "calibrated": BOOL,
        "detail": STR,
        "fps": {"type": "number"},
        "link": STR,
    },
)
CARD = obj(
    ["id", "level", "type", "color", "cost", "vp", "text", "end_of_game"],
    {
        "id": INT,
        "level": INT,
        "type": STR,
        "color": STR,
        "cost": INT,
        "vp": INT,
        "text": STR,
        "end_of_game": BOOL,
    },
)
RECORD_ITEM = obj(
    ["id", "active"],
    {
        "id": STR,
        "active": BOOL,
        "names": {"type": ["array", "null"], "items": STR},
        "created": {"type": ["number", "null"]},
        "round": {"type": ["integer", "null"]},
        "over": BOOL,
        "error": STR,
    },
)
GAMES = obj(
    ["active", "games"],
    {"active": {"type": ["string", "null"]}, "games": {"type": "array", "items": RECORD_ITEM}},
)
NEW_GAME = obj(
    ["names"],
    {
        "names": player_names("gizmos"),
        "deal": {"type": "boolean", "description": "the referee deals the setup from a seed"},
        "seed": {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_SEED},
    },
    closed=True,
)
CREATED = obj(["id", "url", "seed"], {"id": STR, "url": STR, "seed": {"type": ["integer", "null"]}})
STEP = obj(
    ["kind"],
    {"kind": STR},
)
STEP["description"] = 'a step as in docs/steps.md, e.g. {"kind": "pick", "player": 0, "color": "red"}'
LEGAL = {
    "type": "array",
    "items": obj(
        ["kind", "title", "steps"],
        {
            "kind": STR,
            "title": STR,
            "steps": {
                "type": "array",
                "items": obj(["step", "label", "text"], {"step": OBJ, "label": STR, "text": STR}),
            },
        },
    ),
}
LOG_ENTRY = obj(
    ["kind", "text", "done"],
    {
        "kind": {"enum": ["setup", "turn", "correction", "end"]},
        "text": STR,
        "turn": {"type": ["integer", "null"]},
        "round": {"type": ["integer", "null"]},
        "player": {"type": ["integer", "null"]},
        "name": {"type": ["string", "null"]},
        "done": BOOL,
        "forced": BOOL,
        "steps": {"type": "array", "items": OBJ},
        "ended": {"type": ["string", "null"]},
        "void": {"type": ["string", "null"], "description": "undone or corrected: shown struck through"},
    },
)
LOG = {"type": "array", "items": LOG_ENTRY}
SCORE_LINE = obj(
    ["seat", "name", "rank", "total", "printed_vp", "token_points", "end_cards", "tie_break"],
    {
        "seat": INT,
        "name": STR,
        "rank": INT,
        "total": INT,
        "printed_vp": INT,
        "token_points": INT,
        "end_cards": INT,
        "end_card_ids": {"type": "array", "items": INT},
        "gizmos": INT,
        "energy": INT,
        "decided_by": STR,
        "tie_break": STR,
    },
)
SCORING = obj(
    ["final", "winner", "lines"],
    {
        "final": BOOL,
        "winner": obj(["seat", "name", "total"], {"seat": INT, "name": STR, "total": INT}),
        "lines": {"type": "array", "items": SCORE_LINE},
    },
)
WARNING = obj(
    ["id", "kind", "turn", "round", "player", "code", "rulings", "message", "remedy", "time", "status"],
    {
        "id": INT,
        "kind": {"enum": ["violation", "uncertain", "info"]},
        "turn": INT,
        "round": INT,
        "player": {"type": ["integer", "null"]},
        "code": {"type": ["string", "null"]},
        "rulings": {"type": "array", "items": INT},
        "message": STR,
        "remedy": STR,
        "time": {"type": "number"},
        "status": {"enum": ["open", "accepted", "dismissed"]},
        "decided_by": {"type": ["string", "null"]},
        "name": {"type": ["string", "null"]},
        "rule": {"type": ["string", "null"]},
    },
)
WARNINGS = {"type": "array", "items": WARNING}
PLAYER = obj(
    ["seat", "name", "current", "ring", "energy_limit", "archive", "columns", "score"],
    {
        "seat": INT,
        "name": STR,
        "current": BOOL,
        "ring": MARBLES,
        "ring_total": INT,
        "energy_limit": INT,
        "archive": {"type": "array", "items": INT},
        "file_limit": INT,
        "columns": {"type": "object", "additionalProperties": {"type": "array", "items": INT}},
        "gizmos": INT,
        "vp_tokens": INT,
        "score": obj(["total"], {"printed_vp": INT, "token_points": INT, "end_cards": INT, "total": INT}),
    },
)
VIEW = obj(
    [
        "names",
        "turn",
        "round",
        "current",
        "game_over",
        "awaiting",
        "display",
        "decks",
        "row",
        "players",
        "scoring",
        "warnings",
        "legal",
    ],
    {
        "names": STR_LIST,
        "turn": INT,
        "round": INT,
        "current": INT,
        "current_name": STR,
        "end_triggered": BOOL,
        "game_over": BOOL,
        "ended_by": {"type": ["string", "null"]},
        "awaiting": STR,
        "turn_over": BOOL,
        "display": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": ["integer", "null"]}},
        },
        "decks": {"type": "object", "additionalProperties": INT},
        "row": MARBLES,
        "dispenser": MARBLES,
        "players": {"type": "array", "items": PLAYER},
        "scoring": SCORING,
        "warnings": WARNINGS,
        "legal": LEGAL,
        "game_id": STR,
        "provisional": {
            "type": ["object", "null"],
            "description": "the tracker's reading not yet accepted, shown marked provisional "
            "(read in two frames so far, or a rule break awaiting the turn's end); null: none",
            "required": ["turn", "steps", "breaks", "lines", "warnings", "why"],
            "properties": {
                "turn": INT,
                "steps": {"type": "array", "items": OBJ},
                "breaks": {"type": "array", "items": obj(["step", "code"], {"step": INT, "code": STR})},
                "lines": STR_LIST,
                "warnings": STR_LIST,
                "why": STR,
            },
        },
        "evidence": {
            "type": "object",
            "description": "per warning id: the camera crops kept (moments) and the zones they show",
            "additionalProperties": obj(["moments", "zones"], {"moments": STR_LIST, "zones": STR_LIST}),
        },
    },
)
SNAPSHOT = obj(
    ["id", "seq", "view", "log_from", "log", "live"],
    {
        "id": {"type": "string", "description": "the event id <epoch>.<seq>"},
        "seq": INT,
        "view": VIEW,
        "log_from": INT,
        "log": LOG,
        "live": {"enum": ["none", "running", "paused", "stopped"]},
    },
)
EXPORT = obj(
    ["format", "version", "entries"],
    {
        "format": {"const": "gizmos-record"},
        "version": INT,
        "entries": {
            "type": "array",
            "items": obj(
                ["seq", "time", "kind", "who", "payload"],
                {"seq": INT, "time": {"type": "number"}, "kind": STR, "who": STR, "payload": OBJ},
            ),
        },
        "evidence": {
            "type": "array",
            "items": obj(
                ["warning", "moment", "time", "zones", "jpeg_base64"],
                {
                    "warning": INT,
                    "moment": {"enum": ["before", "after"]},
                    "time": {"type": "number"},
                    "zones": STR_LIST,
                    "jpeg_base64": STR,
                },
            ),
        },
    },
)
CHANGED = obj(
    ["ok", "seq"],
    {"ok": {"const": True}, "seq": {"type": "integer", "description": "the snapshot it published"}},
)
PLAY = obj(["step"], {"step": STEP}, closed=True)
DECIDE = obj(["status"], {"status": {"enum": ["accepted", "dismissed"]}}, closed=True)
CORRECTION = obj(
    ["what"],
    {
        "what": {"enum": ["marble_color", "card_id", "state"]},
        "payload": {
            "type": "object",
            "description": (
                'marble_color {zone: "row"|"ring", seat?, from, to}; card_id {old, new}; state {state}'
            ),
        },
    },
    closed=True,
)
END_OF_TURN = obj(
    ["ok", "seq", "steps", "notes"],
    {**CHANGED["properties"], "steps": {"type": "array", "items": OBJ}, "notes": STR_LIST},
)
TURN_ENDS = obj(
    ["from_turn", "ends"],
    {
        "from_turn": {
            "type": "integer",
            "minimum": 0,
            "description": "the kept turn to read the table again from",
        },
        "ends": {"type": "integer", "minimum": 0, "description": "how many turns ended since"},
    },
    closed=True,
)
LIVE = obj(["action"], {"action": {"enum": ["start", "pause", "stop"]}}, closed=True)
LIVE_DONE = obj(
    ["ok", "live"], {"ok": {"const": True}, "live": {"enum": ["none", "running", "paused", "stopped"]}}
)
CARD_ID = {"type": "integer", "minimum": 0, "maximum": 111}
QUESTION = obj(
    ["id", "where", "suggestions", "confidence", "frame"],
    {
        "id": INT,
        "where": {
            "type": "string",
            "description": "display/<level>/<slot>, <seat>/gizmos/<column> or <seat>/archive",
        },
        "suggestions": {"type": "array", "items": CARD_ID, "description": "likeliest cards, best first"},
        "confidence": {"type": "number"},
        "frame": {"type": ["integer", "null"]},
    },
)
QUESTIONS = obj(
    ["questions", "asking"],
    {
        "questions": {"type": "array", "items": QUESTION},
        "asking": {"type": "boolean", "description": "a camera pipeline that asks is attached"},
    },
)
ANSWER = obj(["card"], {"card": {**CARD_ID, "description": "the card it is"}}, closed=True)
ANSWERED = obj(
    ["ok", "card", "enrolled"],
    {"ok": {"const": True}, "card": CARD_ID, "enrolled": {"type": "string", "description": "file written"}},
)
SPREAD_CARD = obj(
    ["place", "center_mm", "card", "suggestions", "score"],
    {
        "place": {**INT, "description": "the card's number in the spread, in reading order"},
        "center_mm": {"type": "array", "items": {"type": "number"}, "description": "where it lies (x, y)"},
        "card": {**CARD_ID, "description": "the suggested id (no id suggested twice)"},
        "suggestions": {"type": "array", "items": CARD_ID, "description": "likeliest cards, best first"},
        "score": {"type": "number", "description": "correlation of the suggested card, -1..1"},
    },
)
SPREAD = obj(["id", "cards"], {"id": INT, "cards": {"type": "array", "items": SPREAD_CARD}})
SPREAD_STATE = obj(
    ["spread", "enrolling"],
    {
        "spread": {"oneOf": [SPREAD, {"type": "null"}]},
        "enrolling": {"type": "boolean", "description": "a spread enrolment is attached"},
    },
)
SPREAD_CONFIRM = obj(
    ["spread", "cards"],
    {
        "spread": {**INT, "description": "the open spread's id"},
        "cards": {
            "type": "array",
            "minItems": 1,
            "items": obj(["place", "card"], {"place": INT, "card": CARD_ID}, closed=True),
            "description": "the places to enrol and their ids (places left out are not enrolled)",
        },
    },
    closed=True,
)
SPREAD_ENROLLED = obj(
    ["ok", "enrolled"],
    {
        "ok": {"const": True},
        "enrolled": {"type": "object", "description": "card id -> file written", "additionalProperties": STR},
    },
)
OPENAPI = obj(
    ["openapi", "info", "paths", "components"], {"openapi": STR, "info": OBJ, "paths": OBJ, "components": OBJ}
)
