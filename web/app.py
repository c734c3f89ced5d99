"""The app factory: configuration, the admin PIN guard, the hub of games, blueprints, headers."""

from __future__ import annotations

import secrets
from typing import Any

from flask import Flask, Response

from web.hub import Hub, Settings
from web.security import PinError, PinGuard, check_csrf
from web.settings_file import load_settings, save_settings, settings_path

DEFAULTS: dict[str, Any] = {
    "GAMES_DIR": "games",  # one SQLite record per game
    "ENROL_DIR": None,  # enrolled card photos (else $GIZMOS_ENROL_DIR, else drawn faces)
    "CAMERA_SOURCE": "",
    "SERIAL_PORT": "",
    "CARD_ART": None,  # face(card_id, enrol_dir), edition(enrol_dir), back(level) (referee.app.card_art)
    "FRAME_SOURCE": None,  # web.live.FrameSource
    "PHONE_CAMERA": None,  # web.phone.PhoneSink: the phone's browser as the camera
    "LIVE_RUNNER": None,  # web.live.LiveRunner
    "CARD_QUESTIONS": None,  # web.live.CardQuestions: cards the camera cannot place, asked here
    "SPREAD_ENROLMENT": None,  # web.live.SpreadEnrolment: a spread of cards photographed, confirmed here
    "PIN_ITERATIONS": 200_000,
    "PIN_MAX_FAILURES": 5,
    "PIN_LOCKOUT_S": 30.0,  # per client, doubling with each further lockout
    "PIN_MAX_LOCKOUT_S": 3600.0,
    "ADMIN_TTL_S": 600.0,  # an unlocked browser stays unlocked this long (0: ask every time)
    "SSE_HEARTBEAT_S": 15.0,
    "SSE_MAX_S": 0.0,
    "VALIDATE_RESPONSES": False,  # check every JSON answer against the OpenAPI document (tests)
}

CSP = (
    "default-src 'self'; img-src 'self' data:; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """The dashboard app. ``config`` must hold ``ADMIN_PIN`` (4-64 characters)."""
    app = Flask(__name__)
    app.config.update(DEFAULTS)
    app.config.update(
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        MAX_CONTENT_LENGTH=1 << 20,
    )
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.jinja_env.policies["json.dumps_kwargs"] = {}  # keep key order in embedded snapshots
    app.config.update(config or {})
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = secrets.token_bytes(32)
    pin = app.config.pop("ADMIN_PIN", None)
    if pin is None:
        raise PinError("create_app: ADMIN_PIN is required (the table's admin PIN, 4-64 characters)")
    app.extensions["gizmos_pin"] = PinGuard(
        pin,
        iterations=int(app.config["PIN_ITERATIONS"]),
        max_failures=int(app.config["PIN_MAX_FAILURES"]),
        lockout_s=float(app.config["PIN_LOCKOUT_S"]),
        max_lockout_s=float(app.config["PIN_MAX_LOCKOUT_S"]),
        ttl_s=float(app.config["ADMIN_TTL_S"]),
    )
    del pin
    app.extensions["gizmos_hub"] = Hub(
        app.config["GAMES_DIR"],
        frame_source=app.config["FRAME_SOURCE"],
        runner=app.config["LIVE_RUNNER"],
        settings=startup_settings(app),
    )
    app.extensions["gizmos_faces"] = {}

    from web import api, contrivance, errors, history, pages, phone, streams
    from web.schemas import check_response

    errors.register(app)
    app.register_blueprint(pages.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(streams.bp)
    app.register_blueprint(contrivance.bp)
    app.register_blueprint(phone.bp)
    app.register_blueprint(history.bp)
    app.before_request(check_csrf)

    app.after_request(check_response)
    app.after_request(security_headers)
    return app


def startup_settings(app: Flask) -> Settings:
    """The settings saved beside the game records, with those given to the server (``serve
    --camera-source``, ``--serial-port``) taking their place and saved for the next start."""
    path = settings_path(app.config["GAMES_DIR"])
    settings = load_settings(path)
    given = {
        key: str(app.config[name])
        for key, name in (("camera_source", "CAMERA_SOURCE"), ("serial_port", "SERIAL_PORT"))
        if str(app.config[name] or "").strip()
    }
    if given:
        settings.update(given)
        save_settings(path, settings)
    return settings


def security_headers(resp: Response) -> Response:
    """Every answer: this content policy, no sniffing, no framing, no caching of pages or data."""
    resp.headers.setdefault("Content-Security-Policy", CSP)
    resp.headers.setdefault("X-Content-Type-Options", "nosniff")
    resp.headers.setdefault("Referrer-Policy", "same-origin")
    resp.headers.setdefault("X-Frame-Options", "DENY")
    if resp.mimetype in ("text/html", "application/json"):
        resp.headers.setdefault("Cache-Control", "no-store")
    return resp
