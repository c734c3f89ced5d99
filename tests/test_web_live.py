"""Live updates: server-sent events with ids and catch-up, a live runner refereeing from its own
thread while pages read and write, and the camera's MJPEG stream."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from flask import Flask
from werkzeug.test import TestResponse

from referee.tracker import Tracker
from tests.web_testing import ApiClient, break_a_rule, hub_of, make_app
from web.demo import play_random
from web.hub import LiveGame, Settings
from web.live import FrameBuffer, FrameSource, LiveRunner


def snapshots(resp: TestResponse, want: int, limit_s: float = 20.0) -> Iterator[dict[str, Any]]:
    """Read server-sent events from a streaming response until ``want`` snapshots came."""
    got = 0
    deadline = time.monotonic() + limit_s
    for chunk in resp.response:
        text = chunk.decode() if isinstance(chunk, bytes) else chunk
        if text.startswith("id: "):
            lines = dict(line.split(": ", 1) for line in text.strip().split("\n"))
            assert lines["event"] == "snapshot"
            event = json.loads(lines["data"])
            assert event["id"] == lines["id"]
            yield event
            got += 1
        if got >= want or time.monotonic() > deadline:
            break


def stream(api: ApiClient, gid: str, **headers: str) -> TestResponse:
    resp = api.get(f"/api/games/{gid}/events", headers=headers, buffered=False)
    assert resp.status_code == 200 and resp.mimetype == "text/event-stream"
    assert resp.headers["Cache-Control"] == "no-cache"
    return resp


def play_turns(game: LiveGame, turns: int, seed: int = 1) -> None:
    play_random(game, random.Random(seed), turns)


def test_the_first_event_is_the_whole_snapshot(app: Flask) -> None:
    api = ApiClient(app)
    gid = api.new_game()
    resp = stream(api, gid)
    [event] = list(snapshots(resp, 1))
    resp.close()
    game = hub_of(app).get(gid)
    assert event["id"] == f"{game.epoch}.{game.snapshot.seq}" and event["log_from"] == 0
    assert event["view"]["names"] == ["Ana", "Ben"] and event["log"][0]["kind"] == "setup"


def test_a_change_arrives_on_the_open_stream(app: Flask) -> None:
    api = ApiClient(app)
    gid = api.new_game()
    game = hub_of(app).get(gid)
    resp = stream(api, gid)
    events = snapshots(resp, 2)
    first = next(events)
    timer = threading.Timer(0.3, play_turns, (game, 1))  # another thread, as a live runner would
    timer.start()
    second = next(events)
    timer.join()
    resp.close()
    assert second["seq"] > first["seq"] and second["view"]["turn"] >= 1
    assert second["log_from"] == 1  # the setup entry was final; the rest is sent
    assert second["log"][0]["kind"] == "turn" and second["log"][0]["name"] == "Ana"


def test_a_reconnecting_page_catches_up_with_last_event_id(app: Flask) -> None:
    api = ApiClient(app)
    gid = api.new_game()
    game = hub_of(app).get(gid)
    play_turns(game, 2)
    old = game.event_since(None)
    page_log = list(old["log"])
    play_turns(game, 3, seed=2)
    for header in ({"Last-Event-ID": old["id"]}, {}):
        url_since = {} if header else {"query_string": {"since": old["id"]}}
        resp = api.get(f"/api/games/{gid}/events", headers=header, buffered=False, **url_since)
        [caught] = list(snapshots(resp, 1))
        resp.close()
        assert caught["seq"] == game.snapshot.seq > old["seq"]
        assert 0 < caught["log_from"] <= len(page_log)  # only what the page lacks is sent
        assert page_log[: caught["log_from"]] + caught["log"] == game.snapshot.log


@pytest.mark.parametrize("stale", ["deadbeef.2", "garbage", "", "1.2.3"])
def test_an_unknown_event_id_gets_the_whole_log(app: Flask, stale: str) -> None:
    api = ApiClient(app)
    gid = api.new_game()
    play_turns(hub_of(app).get(gid), 2)
    resp = stream(api, gid, **({"Last-Event-ID": stale} if stale else {}))
    [event] = list(snapshots(resp, 1))
    resp.close()
    assert event["log_from"] == 0 and event["log"] == hub_of(app).get(gid).snapshot.log


def test_quiet_streams_send_heartbeats_and_can_be_time_limited(tmp_path: Path) -> None:
    app = make_app(tmp_path, SSE_HEARTBEAT_S=0.05, SSE_MAX_S=0.6)
    api = ApiClient(app)
    gid = api.new_game()
    started = time.monotonic()
    chunks = [c.decode() for c in stream(api, gid).response]  # ends by itself
    assert time.monotonic() - started < 5
    assert chunks[0] == "retry: 1500\n\n" and chunks[1].startswith("id: ")
    assert chunks.count(": keepalive\n\n") >= 3


def test_unknown_game_stream_is_404(app: Flask) -> None:
    resp = ApiClient(app).get("/api/games/nope/events")
    assert resp.status_code == 404 and "no game" in resp.get_json()["error"]


# ------------------------------------------------------------------ threads


def test_a_runner_thread_and_the_api_share_a_game_safely(app: Flask) -> None:
    """A live runner plays from its thread while the API reads and plays: nothing interleaves
    inside a change, every published snapshot is newer than the last, and the record replays to
    exactly the table the tracker holds."""
    api = ApiClient(app)
    gid = api.new_game(["Ana", "Ben", "Chloé"], seed=11)
    game = hub_of(app).get(gid)
    errors: list[BaseException] = []

    def runner() -> None:
        try:
            rng = random.Random(5)
            for _ in range(20):
                play_random(game, rng, 1)
                time.sleep(0.01)  # let the API threads in between turns too
        except BaseException as exc:  # reported below
            errors.append(exc)

    seen: list[int] = []
    done = threading.Event()
    resp = stream(api, gid)

    def reader() -> None:  # a page: reads every event until told to stop (heartbeats wake it)
        for chunk in resp.response:
            if chunk.startswith(b"id: "):
                seen.append(json.loads(chunk.split(b"data: ", 1)[1])["seq"])
            if done.is_set():
                break

    reading = threading.Thread(target=reader)
    reading.start()
    thread = threading.Thread(target=runner)
    thread.start()
    statuses: list[int] = []
    while thread.is_alive() or statuses.count(200) < 5:
        view = api.get(f"/api/games/{gid}").get_json()["view"]
        step = view["legal"][0]["steps"][0]["step"] if view["legal"] else None
        if step is not None:
            statuses.append(api.post(f"/api/games/{gid}/steps", {"step": step}).status_code)
    thread.join()
    deadline = time.monotonic() + 10
    while (not seen or seen[-1] < game.snapshot.seq) and time.monotonic() < deadline:
        time.sleep(0.05)
    done.set()
    reading.join()
    resp.close()
    assert not errors, errors
    assert set(statuses) <= {200, 409} and 200 in statuses
    assert seen == sorted(seen) and len(set(seen)) == len(seen) and len(seen) > 5
    assert seen[-1] == game.snapshot.seq
    assert Tracker.open(game.path).state == game.tracker.state
    assert game.snapshot.view["turn"] == game.tracker.state.turn


class ThreadRunner:
    """A LiveRunner whose thread does what a camera pipeline does: changes through locked()."""

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.state = "stopped"

    def start(self, game: LiveGame, settings: Settings) -> None:
        self.thread = threading.Thread(target=break_a_rule, args=(game,))
        self.thread.start()
        self.state = "running"

    def pause(self) -> None:
        self.state = "paused"

    def stop(self) -> None:
        if self.thread is not None:
            self.thread.join()
        self.state = "stopped"

    def status(self) -> str:
        return self.state


def test_warnings_from_a_live_runner_reach_the_page(tmp_path: Path) -> None:
    runner = ThreadRunner()
    assert isinstance(runner, LiveRunner)
    app = make_app(tmp_path, LIVE_RUNNER=runner)
    api = ApiClient(app)
    gid = api.new_game()
    resp = stream(api, gid)
    events = snapshots(resp, 10)
    assert next(events)["view"]["warnings"] == []
    assert api.post(f"/api/games/{gid}/live", {"action": "start"}).status_code == 200
    for event in events:
        if event["view"]["warnings"]:
            break
    resp.close()
    api.post(f"/api/games/{gid}/live", {"action": "stop"})
    [w] = event["view"]["warnings"]
    assert w["code"] == "SECOND_MAIN_ACTION" and w["name"] == "Ana" and w["status"] == "open"


# ------------------------------------------------------------------ the camera


def jpeg_frame(shade: int) -> np.ndarray:
    img = np.full((72, 128, 3), shade, np.uint8)
    cv2.rectangle(img, (10, 10), (60, 40), (0, 255, 0), 2)  # a "zone"
    return img


def test_frame_buffer() -> None:
    frames = FrameBuffer("recording table.mp4")
    assert isinstance(frames, FrameSource)
    assert frames.wait_frame(0, 0.05) is None
    with pytest.raises(ValueError, match="JPEG"):
        frames.publish(b"\x89PNG....")
    for i in range(5):
        n = frames.publish_image(jpeg_frame(40 * i))
        time.sleep(0.01)
    got = frames.wait_frame(0, 0.05)
    assert got is not None and got[0] == n == 5 and got[1].startswith(b"\xff\xd8")
    assert frames.wait_frame(5, 0.05) is None
    status = frames.status()
    assert status.source == "recording table.mp4" and status.fps > 0 and status.calibrated is False


def test_the_camera_stream_is_mjpeg(tmp_path: Path) -> None:
    frames = FrameBuffer()
    api = ApiClient(make_app(tmp_path, FRAME_SOURCE=frames))
    publisher = threading.Timer(0.2, frames.publish_image, (jpeg_frame(90),))
    publisher.start()
    resp = api.get("/api/camera.mjpg", buffered=False)
    assert resp.status_code == 200
    assert resp.mimetype == "multipart/x-mixed-replace"
    # A heartbeat may come first on a loaded machine (the waiting image, tested below): the
    # published frame is the first other part, within a few heartbeats.
    from web.streams import waiting_image

    parts = iter(resp.response)
    part = next(p for _, p in zip(range(50), parts, strict=False) if waiting_image() not in p)
    resp.close()
    publisher.join()
    head, _, body = part.partition(b"\r\n\r\n")
    assert head.startswith(b"--gizmosframe\r\nContent-Type: image/jpeg")
    assert int(head.split(b"Content-Length: ")[1]) == len(body) - 2
    decoded = cv2.imdecode(np.frombuffer(body[:-2], np.uint8), cv2.IMREAD_COLOR)
    assert decoded is not None and decoded.shape == (72, 128, 3)


def test_the_camera_stream_sends_a_waiting_image_until_the_first_frame() -> None:
    # Without any frame the stream still writes every heartbeat: a viewer sees why the picture
    # is empty, and a closed connection is noticed (before, the generator waited silently).
    from web.streams import mjpeg_stream, waiting_image

    frames = FrameBuffer()
    stream = mjpeg_stream(frames, heartbeat=0.05)
    t0 = time.monotonic()
    first = next(stream)
    assert time.monotonic() - t0 < 5
    assert first.endswith(waiting_image() + b"\r\n")
    shown = cv2.imdecode(np.frombuffer(waiting_image(), np.uint8), cv2.IMREAD_COLOR)
    assert shown is not None and shown.shape == (360, 640, 3)
    frames.publish_image(jpeg_frame(90))
    later = next(stream)
    assert waiting_image() not in later and later.startswith(b"--gizmosframe\r\n")
    stream.close()


def test_no_camera_is_a_clear_404(app: Flask) -> None:
    resp = ApiClient(app).get("/api/camera.mjpg")
    assert resp.status_code == 404 and resp.get_json()["error"].startswith("no camera")
