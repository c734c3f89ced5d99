"""API errors: always JSON ``{"error": "..."}`` with the 4xx status that says what went wrong.

400 malformed JSON or a bad field, 401 admin PIN missing, 403 wrong PIN or a forged request,
404 unknown game, warning or route, 405 wrong method, 409 an illegal step or a conflict with
the game's state, 415 not JSON, 422 a well-formed step or correction the engine refuses to
parse or apply, 429 too many wrong PINs; 503 the game record cannot be written now (disk full,
read-only media: nothing was changed, the same request can be sent again). Pages (not under
``/api``) keep Flask's HTML errors.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from referee.tracker.record import RecordError, RecordWriteError
from web.hub import HubError


class ApiError(Exception):
    """An error answered as JSON; ``extra`` adds fields (e.g. the rule an illegal step broke)."""

    def __init__(
        self, status: int, message: str, headers: dict[str, str] | None = None, **extra: Any
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.extra = extra


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None, **extra: Any
) -> Response:
    resp = jsonify({"error": message, **extra})
    resp.status_code = status
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


def register(app: Flask) -> None:
    """Install the JSON error handlers."""

    @app.errorhandler(ApiError)
    def api_error(exc: ApiError) -> Response:
        return error_response(exc.status, exc.message, exc.headers, **exc.extra)

    @app.errorhandler(HubError)
    def hub_error(exc: HubError) -> Response:
        return error_response(exc.status, exc.message)

    @app.errorhandler(RecordError)
    def record_error(exc: RecordError) -> Response:
        # A write that failed (disk full, read-only media) changed nothing: try again later.
        status = 503 if isinstance(exc, RecordWriteError) else 409
        return error_response(status, str(exc))

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Response | HTTPException:
        if not request.path.startswith("/api/"):
            return exc
        message = {
            404: f"no such API route: {request.method} {request.path} (see /api/openapi.json)",
            405: f"{request.method} is not allowed on {request.path}",
        }.get(exc.code or 500, exc.description or exc.name)
        return error_response(exc.code or 500, message)
