"""The pages: the table view, the final scoring screen, the setup page, the camera view, and
the card pictures (the same faces the vision pipeline uses, rendered once and cached).

Pages render a skeleton and embed the current snapshot as JSON; ``static/table.js`` draws it
and keeps it live from the event stream, so there is one renderer, not two.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

from flask import Blueprint, Response, abort, current_app, redirect, render_template, request, url_for

from web.hub import Hub
from web.security import csrf_token
from web.view import card_json

bp = Blueprint("pages", __name__)
_faces_lock = threading.Lock()


def _hub() -> Hub:
    return current_app.extensions["gizmos_hub"]


def _page(template: str, **context: Any) -> str:
    return render_template(template, csrf=csrf_token(), **context)


@bp.get("/")
def index() -> Any:
    active = _hub().active
    if active is not None:
        return redirect(url_for("pages.table", game_id=active))
    return redirect(url_for("pages.setup"))


@bp.get("/setup")
def setup() -> str:
    h = _hub()
    camera = h.frame_source.status().to_json() if h.frame_source is not None else None
    return _page(
        "setup.html",
        settings=h.settings.to_json(),
        camera=camera,
        runner=h.runner is not None,
        active=h.active,
        records=h.records(),
    )


def _game_page(template: str, game_id: str) -> str:
    h = _hub()
    game = h.get(game_id)
    return _page(
        template,
        game_id=game_id,
        initial={**game.event_since(None), "live": h.live_status(game_id)},
        cards=[card_json(i) for i in range(112)],
        camera=h.frame_source is not None,
    )


@bp.get("/games/<game_id>")
def table(game_id: str) -> str:
    return _game_page("table.html", game_id)


@bp.get("/games/<game_id>/scores")
def scores(game_id: str) -> str:
    return _game_page("scores.html", game_id)


@bp.get("/camera")
def camera() -> str:
    h = _hub()
    status = h.frame_source.status().to_json() if h.frame_source is not None else None
    return _page("camera.html", camera=status, spread=current_app.config.get("SPREAD_ENROLMENT") is not None)


def _png(key: str, draw: Any, max_age: int = 86400) -> Response:
    """A picture drawn once per ``key``; with ``max_age=0`` browsers ask again each time (a 304
    while its ETag holds), for pictures that can change while the page is open."""
    cache: dict[str, tuple[bytes, str]] = current_app.extensions["gizmos_faces"]
    with _faces_lock:
        if key not in cache:
            import cv2

            ok, buf = cv2.imencode(".png", draw())
            if not ok:
                abort(500)
            data = buf.tobytes()
            for stale in [k for k in cache if k.split("@")[0] == key.split("@")[0]]:
                del cache[stale]  # the picture of an older edition (face12@old when face12@new is asked)
            cache[key] = (data, hashlib.sha256(data).hexdigest()[:16])
    data, etag = cache[key]
    if request.if_none_match.contains(etag):
        return Response(status=304)
    resp = Response(data, mimetype="image/png")
    resp.set_etag(etag)
    resp.headers["Cache-Control"] = f"public, max-age={max_age}" if max_age else "no-cache"
    return resp


def _card_art() -> Any:
    """The ``CARD_ART`` the application layer configured (the dashboard draws no cards itself)."""
    art = current_app.config.get("CARD_ART")
    if art is None:
        abort(404)
    return art


@bp.get("/cards/<int:card_id>.png")
def card_face(card_id: int) -> Response:
    if not 0 <= card_id < 112:
        abort(404)
    art = _card_art()
    enrol = current_app.config.get("ENROL_DIR")
    edition = art.edition(enrol)  # a photo enrolled since: a new picture
    return _png(f"face{card_id}@{edition}", lambda: art.face(card_id, enrol), max_age=0)


@bp.get("/cards/back-<int:level>.png")
def card_back(level: int) -> Response:
    if level not in (1, 2, 3):
        abort(404)
    art = _card_art()
    return _png(f"back{level}", lambda: art.back(level))
