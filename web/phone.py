"""The phone's browser as the table's camera (issue 17): its page, pairing, and the frames it sends.

A phone on a stand opens ``https://<referee>:<port>/phone``, pairs with the table's admin PIN or
a pairing code (six digits, made by an admin on the dashboard's ``/phone/pair`` page, valid
``CODE_TTL_S`` seconds, good once, void after ``CODE_TRIES`` wrong tries), and streams its rear
camera: the page draws a frame of ``getUserMedia``'s video on a canvas, encodes it as JPEG and
POSTs it to ``/api/phone/frame``, the next one once the last was answered (a slow link sends
fewer frames, it never queues them). Browsers give the camera only to secure pages, so the
referee serves the dashboard over HTTPS with a certificate of its own when the phone is the
camera (:mod:`web.tls`).

Only the paired phone may send frames: pairing puts a random token in that browser's session
(signed cookie, ``SameSite=Strict``), and a new pairing replaces it, so a phone paired before is
refused. Every POST also carries the session's CSRF token, like every other change.

The dashboard decodes the frames and hands them to the ``PHONE_CAMERA`` object the application
layer configured (:class:`PhoneSink`); it never runs the pipeline itself.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from typing import Any, Protocol

import cv2
import numpy as np
from flask import Blueprint, Flask, Response, current_app, jsonify, render_template, request, session, url_for

from web.errors import ApiError
from web.schemas import document, valid_body
from web.security import client_id, csrf_token, guard, require_admin

bp = Blueprint("phone", __name__)
CODE_TTL_S = 600.0
CODE_TRIES = 5
CODE_DIGITS = 6


class PhoneSink(Protocol):
    """Where the paired phone's frames go (``referee.app.streams.PhoneFrames``)."""

    def offer(self, image: np.ndarray) -> None:
        """Take a decoded frame (BGR)."""
        ...

    def link_status(self) -> str:
        """One line on the link: waiting, connected with the frame age, or quiet."""
        ...


class Pairing:
    """The pairing code and the one paired phone (thread-safe)."""

    def __init__(self, ttl_s: float = CODE_TTL_S, tries: int = CODE_TRIES) -> None:
        self.ttl_s, self.tries = ttl_s, tries
        self._lock = threading.Lock()
        self._code: str | None = None
        self._code_until = 0.0
        self._tries_left = 0
        self._token: str | None = None

    def new_code(self) -> tuple[str, float]:
        """A fresh code (the last one stops working) and the seconds it is valid."""
        code = f"{secrets.randbelow(10**CODE_DIGITS):0{CODE_DIGITS}d}"
        with self._lock:
            self._code, self._code_until, self._tries_left = code, time.monotonic() + self.ttl_s, self.tries
        return code, self.ttl_s

    def use_code(self, code: str) -> bool:
        """Whether ``code`` is the current code; a right one is used up, wrong ones count."""
        with self._lock:
            if self._code is None or time.monotonic() > self._code_until:
                self._code = None
                return False
            if hmac.compare_digest(code.encode(), self._code.encode()):
                self._code = None
                return True
            self._tries_left -= 1
            if self._tries_left <= 0:
                self._code = None
            return False

    def pair(self) -> str:
        """Pair a new phone (the one paired before is refused from now on); its token."""
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._token = token
        return token

    def unpair(self) -> None:
        with self._lock:
            self._token = None

    def paired(self) -> bool:
        with self._lock:
            return self._token is not None

    def is_phone(self, token: Any) -> bool:
        """Whether ``token`` (from a browser's session) is the paired phone's."""
        with self._lock:
            current = self._token
        return isinstance(token, str) and current is not None and hmac.compare_digest(token, current)


def pairing_of(app: Flask) -> Pairing:
    """The app's pairing state (made on first use)."""
    pairing: Pairing = app.extensions.setdefault("gizmos_phone", Pairing())
    return pairing


def _pairing() -> Pairing:
    return pairing_of(current_app)


def _sink() -> PhoneSink | None:
    return current_app.config.get("PHONE_CAMERA")


def _need_sink() -> PhoneSink:
    sink = _sink()
    if sink is None:
        raise ApiError(404, "no phone camera: start the referee with run --camera phone")
    return sink


def _framing() -> dict[str, Any] | None:
    """The framing assistant's verdict, as the camera status has it (the pipeline sets it)."""
    source = current_app.extensions["gizmos_hub"].frame_source
    return source.status().framing if source is not None else None


def _state() -> dict[str, Any]:
    sink = _sink()
    return {
        "available": sink is not None,
        "paired": _pairing().paired(),
        "this_phone": _pairing().is_phone(session.get("phone")),
        "link": sink.link_status() if sink is not None else "",
        "framing": _framing(),
    }


# ---------------------------------------------------------------- pages


@bp.get("/phone")
def phone_page() -> str:
    """The page the phone opens: pair, then stream the rear camera."""
    return render_template("phone.html", csrf=csrf_token(), available=_sink() is not None)


@bp.get("/phone/pair")
def pair_page() -> str:
    """The dashboard's side: make a pairing code (admin), see the link."""
    return render_template(
        "phone_pair.html",
        csrf=csrf_token(),
        available=_sink() is not None,
        phone_url=url_for("phone.phone_page", _external=True),
    )


# ---------------------------------------------------------------- API

_FRAMING: dict[str, Any] = {"type": ["object", "null"], "description": "the framing assistant's verdict"}
STATE: dict[str, Any] = {
    "type": "object",
    "required": ["available", "paired", "this_phone", "link", "framing"],
    "properties": {
        "available": {"type": "boolean", "description": "the run takes a phone camera (run --camera phone)"},
        "paired": {"type": "boolean", "description": "a phone is paired"},
        "this_phone": {"type": "boolean", "description": "this browser is the paired phone"},
        "link": {"type": "string"},
        "framing": _FRAMING,
    },
}


@bp.get("/api/phone")
@document("the phone camera: configured, paired, the link and the framing", ok=STATE)
def status() -> Response:
    """Whether a phone camera is configured, paired, this browser is it; the link and framing."""
    return jsonify(_state())


@bp.post("/api/phone/code")
@document(
    f"a new pairing code ({CODE_DIGITS} digits, good once for {CODE_TTL_S / 60:g} minutes)",
    ok={
        "type": "object",
        "required": ["code", "expires_in", "url"],
        "properties": {
            "code": {"type": "string"},
            "expires_in": {"type": "number"},
            "url": {"type": "string"},
        },
    },
    errors=(404,),
)
@require_admin
def new_code() -> Response:
    """A new pairing code for the phone (admin); the last one stops working."""
    _need_sink()
    code, ttl = _pairing().new_code()
    return jsonify({"code": code, "expires_in": ttl, "url": url_for("phone.phone_page", _external=True)})


@bp.post("/api/phone/pair")
@document(
    "pair this browser as the table's camera with the pairing code or the admin PIN",
    ok=STATE,
    body={
        "type": "object",
        "required": ["code"],
        "properties": {
            "code": {
                "type": "string",
                "minLength": 1,
                "description": "the pairing code from the dashboard or the admin PIN",
            }
        },
        "additionalProperties": False,
    },
    errors=(404, 429),
)
def pair() -> Response:
    """Pair this browser as the table's camera with ``{"code": ...}``: the pairing code from the
    dashboard, or the admin PIN (one field, so a six-digit PIN works too). A wrong one counts
    against the PIN's per-client throttle, and against the code's tries."""
    _need_sink()
    code: str = valid_body("pairing")["code"]
    if not _pairing().use_code(code) and not guard().check(code, client_id()):
        raise ApiError(
            403,
            f"wrong pairing code or PIN (a code is good once, for {CODE_TTL_S / 60:g} minutes: "
            "make a new one at /phone/pair)",
        )
    session["phone"] = _pairing().pair()
    return jsonify(_state())


@bp.post("/api/phone/unpair")
@document("forget the paired phone", ok=STATE)
@require_admin
def unpair() -> Response:
    """Forget the paired phone (admin): its frames are refused until a phone pairs again."""
    _pairing().unpair()
    return jsonify(_state())


@bp.post("/api/phone/frame")
@document(
    "one JPEG frame (Content-Type: image/jpeg) from the paired phone's camera",
    ok={
        "type": "object",
        "required": ["link", "framing"],
        "properties": {"link": {"type": "string"}, "framing": _FRAMING},
    },
    errors=(404,),
    body_required=False,
)
def frame() -> Response:
    """One JPEG frame from the paired phone (``Content-Type: image/jpeg``)."""
    sink = _need_sink()
    if not _pairing().is_phone(session.get("phone")):
        raise ApiError(403, "this browser is not the paired phone: pair it first (POST /api/phone/pair)")
    if request.mimetype != "image/jpeg":
        raise ApiError(415, f"a frame is sent as image/jpeg, not {request.mimetype or 'nothing'}")
    data = request.get_data(cache=False)
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR) if data[:2] == b"\xff\xd8" else None
    if image is None:
        raise ApiError(400, f"the frame is not a JPEG image ({len(data)} bytes that do not decode)")
    sink.offer(image)
    return jsonify({"link": sink.link_status(), "framing": _framing()})
