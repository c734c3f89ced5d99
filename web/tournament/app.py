"""The organiser's page: every table at a glance, the standings, each table's dashboard a click away.

Anyone who can reach the page can read it; changing anything (leaving a game out of the
standings) needs the organiser's PIN, with the same PIN guard, admin sessions and CSRF checks
as a table's dashboard (:mod:`web.security`). The page is one skeleton; ``tournament.js`` draws
the board from ``/api/board`` and keeps it live from ``/api/stream`` (server-sent events that
carry only the tables changed since the version the page last saw).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from typing import Any

from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    jsonify,
    render_template,
    request,
    stream_with_context,
)

from web.app import security_headers
from web.errors import ApiError
from web.errors import register as register_errors
from web.security import PinError, PinGuard, admin_state, check_csrf, csrf_token, require_admin, unlock
from web.tournament.board import Board

bp = Blueprint("tournament", __name__)
#: How long a browser waits before it reconnects a dropped event stream (its own default is ~3 s).
RETRY_MS = 1500


def _board() -> Board:
    return current_app.extensions["tournament_board"]


def _body() -> dict[str, Any]:
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise ApiError(400, "expected a JSON object body")
    return data


@bp.get("/")
def page() -> str:
    return render_template("tournament.html", csrf=csrf_token(), title=current_app.config["TOURNAMENT_TITLE"])


@bp.get("/api/board")
def board() -> Response:
    """Every table and the standings (``?since=VERSION``: only what changed after it)."""
    since = request.args.get("since", "-1")
    try:
        version = int(since)
    except ValueError:
        raise ApiError(400, f"since: expected a board version number, got {since!r}") from None
    return jsonify(_board().snapshot(version))


@bp.get("/api/stream")
def stream() -> Response:
    """Server-sent events: one per change of the board, with the tables that changed.

    The first thing sent is the reconnection delay, at once: until a first chunk, the server
    sends no headers, and the page (which says "live" when its stream opens) said "connecting"
    or "reconnecting" for up to a heartbeat (15 s) on a quiet board. A reconnecting browser's
    ``Last-Event-ID`` wins over the ``?since=`` of its first connection, which it sends again.
    """
    board_ = _board()
    raw = request.headers.get("Last-Event-ID") or request.args.get("since", "-1")
    try:
        since = int(raw)
    except ValueError:
        raise ApiError(400, "since: expected a board version number") from None
    heartbeat = float(current_app.config["SSE_HEARTBEAT_S"])
    limit = float(current_app.config["SSE_MAX_S"])

    def events() -> Iterator[str]:
        nonlocal since
        started = time.monotonic()
        yield f"retry: {RETRY_MS}\n\n"
        while not limit or time.monotonic() - started < limit:
            left = limit - (time.monotonic() - started) if limit else heartbeat
            if board_.wait(since, max(0.01, min(heartbeat, left))):  # SSE_MAX_S ends it on time
                snap = board_.snapshot(since)
                since = snap["version"]
                yield f"id: {since}\ndata: {json.dumps(snap, separators=(',', ':'))}\n\n"
            else:
                yield ": heartbeat\n\n"

    return Response(
        stream_with_context(events()),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


@bp.get("/api/stats")
def stats() -> Response:
    """The hub's counts and its lag from publish to stored (median, p99; the benchmark reads it)."""
    receiver = current_app.extensions.get("tournament_receiver")
    if receiver is None:
        return jsonify({"receiver": None})
    return jsonify(receiver.stats.to_json())


@bp.get("/api/session")
def session_state() -> Response:
    return jsonify({**admin_state(), "csrf": csrf_token()})


@bp.post("/api/session/unlock")
def unlock_session() -> Response:
    return jsonify(unlock(_body().get("pin")))


@bp.post("/api/games/<table>/<game>/excluded")
@require_admin
def set_excluded(table: str, game: str) -> Response:
    """Leave a game out of the standings (a practice game, a replayed table) or put it back."""
    excluded = _body().get("excluded")
    if not isinstance(excluded, bool):
        raise ApiError(400, "excluded: expected true or false")
    if not _board().store.set_excluded(table, game, excluded):
        raise ApiError(404, f"no game {game!r} at table {table!r}")
    _board().refresh_standings()
    return jsonify({"table": table, "game": game, "excluded": excluded})


@bp.get("/api/games")
def games() -> Response:
    """Every game the hub holds, with its last summary and how far its copy is confirmed."""
    return jsonify(_board().store.games())


def create_app(board: Board, config: dict[str, Any] | None = None, receiver: Any = None) -> Flask:
    """The organiser's app over ``board``; ``config`` must hold ``ADMIN_PIN`` (the organiser's)."""
    app = Flask(__name__)
    app.config.update(
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        MAX_CONTENT_LENGTH=1 << 16,
        PIN_ITERATIONS=200_000,
        ADMIN_TTL_S=600.0,
        SSE_HEARTBEAT_S=15.0,
        SSE_MAX_S=0.0,
        TOURNAMENT_TITLE="Tournament",
    )
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.config.update(config or {})
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = secrets.token_bytes(32)
    pin = app.config.pop("ADMIN_PIN", None)
    if pin is None:
        raise PinError("tournament: the organiser's PIN is required (4-64 characters)")
    app.extensions["gizmos_pin"] = PinGuard(
        pin, iterations=int(app.config["PIN_ITERATIONS"]), ttl_s=float(app.config["ADMIN_TTL_S"])
    )
    del pin
    app.extensions["tournament_board"] = board
    app.extensions["tournament_receiver"] = receiver
    register_errors(app)
    app.register_blueprint(bp)
    app.before_request(check_csrf)

    app.after_request(security_headers)
    return app
