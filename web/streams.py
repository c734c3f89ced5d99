"""Long-lived responses: the game's server-sent events and the camera's MJPEG stream.

Events: each is a whole snapshot of the table (``event: snapshot``) with the id
``<epoch>.<seq>``; a page that reconnects sends the last id it saw (``Last-Event-ID``, or
``?since=`` on the first connection) and gets the current snapshot with only the log entries
it lacks. Nothing is sent while nothing changes except a comment every ``SSE_HEARTBEAT_S``
seconds, which also notices a closed connection. ``SSE_MAX_S`` (0: never) ends a stream after
that long; the browser reconnects by itself and catches up.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Iterator

import cv2
import numpy as np
from flask import Blueprint, Response, current_app, request

from web.errors import ApiError
from web.hub import Hub, LiveGame
from web.live import FrameSource
from web.schemas import document

bp = Blueprint("streams", __name__, url_prefix="/api")
BOUNDARY = "gizmosframe"


def _hub() -> Hub:
    return current_app.extensions["gizmos_hub"]


def sse(event: dict[str, object]) -> str:
    """One server-sent event (the JSON has no raw newlines, so one ``data:`` line)."""
    data = json.dumps(event, separators=(",", ":"))
    return f"id: {event['id']}\nevent: snapshot\ndata: {data}\n\n"


def event_stream(game: LiveGame, seen: int | None, heartbeat: float, max_s: float) -> Iterator[str]:
    """Snapshots newer than ``seen`` as they are published (see the module docstring)."""
    yield "retry: 1500\n\n"
    started = time.monotonic()
    if seen is None or game.snapshot.seq > seen:
        event = game.event_since(seen)
        seen = int(event["seq"])
        yield sse(event)
    while not max_s or time.monotonic() - started < max_s:
        wait = heartbeat if not max_s else min(heartbeat, max(0.01, max_s - (time.monotonic() - started)))
        if game.wait_newer(seen, wait):
            event = game.event_since(seen)
            seen = int(event["seq"])
            yield sse(event)
        else:
            yield ": keepalive\n\n"


@bp.get("/games/<game_id>/events")
@document(
    "server-sent events: a snapshot on every change; reconnect with Last-Event-ID",
    media="text/event-stream",
    errors=(404, 409),
    query={"since": {"type": "string", "description": "the last event id seen"}},
    headers={"Last-Event-ID": {"type": "string"}},
)
def events(game_id: str) -> Response:
    game = _hub().get(game_id)
    raw = request.headers.get("Last-Event-ID") or request.args.get("since")
    seen = game.parse_event_id(raw)
    cfg = current_app.config
    stream = event_stream(game, seen, float(cfg["SSE_HEARTBEAT_S"]), float(cfg["SSE_MAX_S"]))
    resp = Response(stream, mimetype="text/event-stream")
    resp.headers["Cache-Control"] = "no-cache"
    resp.headers["X-Accel-Buffering"] = "no"
    return resp


def mjpeg_stream(source: FrameSource, heartbeat: float) -> Iterator[bytes]:
    """Each new annotated frame as one part of a multipart/x-mixed-replace response.

    With no new frame within ``heartbeat`` seconds the last one is sent again, or, before the
    first, a grey "waiting for the camera" image: the viewer sees why the picture is empty, and
    a write to a closed connection ends this generator (and its server thread), which waiting
    silently never would.
    """
    seen = 0
    last: bytes | None = None
    while True:
        got = source.wait_frame(seen, heartbeat)
        if got is not None:
            seen, last = got
        part = last if last is not None else waiting_image()
        yield (
            f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(part)}\r\n\r\n".encode()
            + part
            + b"\r\n"
        )


@functools.cache
def waiting_image() -> bytes:
    """The JPEG sent while no camera image has come yet (drawn once, OpenCV's built-in font)."""
    img = np.full((360, 640, 3), 60, np.uint8)
    cv2.putText(img, "waiting for the camera", (120, 190), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (220, 220, 220), 2)
    ok, buf = cv2.imencode(".jpg", img)
    assert ok
    return buf.tobytes()


@bp.get("/camera.mjpg")
@document(
    "the live camera image with detections and zones drawn (MJPEG)",
    ok={"type": "string", "format": "binary"},
    media="multipart/x-mixed-replace",
    errors=(404,),
)
def camera_stream() -> Response:
    source = _hub().frame_source
    if source is None:
        raise ApiError(404, "no camera: this server has no frame source attached (manual mode)")
    resp = Response(
        mjpeg_stream(source, float(current_app.config["SSE_HEARTBEAT_S"])),
        mimetype=f"multipart/x-mixed-replace; boundary={BOUNDARY}",
    )
    resp.headers["Cache-Control"] = "no-cache"
    return resp
