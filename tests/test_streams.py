"""Network cameras (issue 17): an HTTP MJPEG stream served on 127.0.0.1 read as a frame source,
newest frame only, a drop and a reconnect, and bad URLs as one line (exit status 2)."""

from __future__ import annotations

import base64
import itertools
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from referee.app.cli import main
from referee.app.errors import LiveError
from referee.app.sources import open_source
from referee.app.streams import StreamFrames, shown_url
from tests.mjpeg_server import MjpegServer, frame_number
from web.live import FrameBuffer


@pytest.fixture
def server() -> Iterator[MjpegServer]:
    s = MjpegServer(fps=30.0)
    yield s
    s.close()


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_numbered_frames_survive_jpeg() -> None:
    import cv2

    from tests.mjpeg_server import numbered_frame

    for n in (0, 1, 15, 16, 255, 1000, 4095):
        _, buf = cv2.imencode(".jpg", numbered_frame(n), [cv2.IMWRITE_JPEG_QUALITY, 90])
        image = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        assert image is not None and frame_number(image) == n


@pytest.mark.parametrize("path", ["/video", "/nolength"])
def test_a_slow_pipeline_gets_the_newest_frame_not_a_queue(server: MjpegServer, path: str) -> None:
    stream = open_source(server.url.replace("/video", path))
    assert isinstance(stream, StreamFrames) and stream.live
    behind = []
    numbers = []
    try:
        for frame, _ in zip(stream.frames(), range(8), strict=False):
            numbers.append(frame_number(frame.image))
            behind.append(server.current() - numbers[-1])
            time.sleep(0.2)  # the pipeline is slower than the stream (30 frames/s)
    finally:
        stream.close()
    # Queued frames would fall further behind each step (6 frames come per step); the newest is
    # at most a few frames old however long the pipeline takes.
    assert max(behind) <= 6, behind  # 0.2 s at 30 frames/s; a queue would be ~40 behind by the end
    assert all(b - a >= 3 for a, b in itertools.pairwise(numbers)), numbers
    assert stream.dropped >= 20
    stats = stream.age_stats()
    assert stats is not None
    median, p99 = stats
    assert 0.19 <= median < 0.5 and p99 < 1.0, stats  # the 0.2 s the pipeline took, plus transport
    assert stream.link_status().startswith("connected, frame age ")


def test_a_dropped_stream_reconnects_and_says_so(server: MjpegServer) -> None:
    stream = StreamFrames(server.url, read_timeout=2.0)
    buffer = FrameBuffer(stream.name)
    buffer.follow_link(stream.link_status)
    got: list[int] = []
    states: list[str] = []

    def pipeline() -> None:
        for frame in stream.frames():
            got.append(frame_number(frame.image))

    reader = threading.Thread(target=pipeline, daemon=True)
    reader.start()
    try:
        wait_until(lambda: len(got) >= 5)
        assert buffer.status().link.startswith("connected")
        server.refuse = True  # the app restarts: the stream drops and new requests fail for a while
        server.cut()
        wait_until(lambda: stream.state == "reconnecting")
        time.sleep(1.0)
        states.append(buffer.status().link)
        before = len(got)
        assert stream.state == "reconnecting" and len(got) == before
        server.refuse = False
        wait_until(lambda: stream.state == "connected")
        wait_until(lambda: len(got) >= before + 5)
        states.append(buffer.status().link)
    finally:
        stream.close()
        reader.join(5)
    assert not reader.is_alive()  # close() ends frames()
    assert stream.reconnects == 1
    assert states[0].startswith("reconnecting: HTTP 503") and "next try in" in states[0], states
    assert states[1].startswith("connected") and states[1].endswith("1 reconnect"), states
    assert got[-1] > got[before - 1] + 20  # the frames after the outage are live ones, not old


def silent_port() -> tuple[socket.socket, int]:
    """A port that takes connections and never answers (a host that hangs)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    return sock, sock.getsockname()[1]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1:CLOSED/video", "cannot read it: Connection refused"),
        ("SERVER/page", "serves text/html, not an MJPEG stream"),
        ("SERVER/missing", "cannot read it: HTTP 404"),
        ("http://127.0.0.1:SILENT/video", "timed out"),
        ("ftp://127.0.0.1/video", "unsupported scheme 'ftp'"),
        ("http:///video", "the URL names no host"),
        ("http://127.0.0.1:99999/video", "not a valid URL"),
    ],
)
def test_bad_urls_are_one_line_and_exit_status_2(
    url: str, message: str, server: MjpegServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    silent, port = silent_port()
    try:
        url = (
            url.replace("SERVER", f"http://127.0.0.1:{server.port}")
            .replace("CLOSED", str(closed_port()))
            .replace("SILENT", str(port))
        )
        started = time.monotonic()
        with pytest.raises(LiveError, match=message):
            StreamFrames(url, open_timeout=0.5)
        assert time.monotonic() - started < 3.0
        argv = ["run", "--camera", url, "--players", "Ana", "Ben", "--no-serve"]
        if "SILENT" in url:
            return  # the CLI's 3 s open timeout is the same path; not waited for twice
        assert main([*argv, "--games-dir", str(tmp_path / "games")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0] and "Traceback" not in err[0], err
    finally:
        silent.close()


def test_a_password_in_the_url_is_sent_as_basic_auth(server: MjpegServer) -> None:
    stream = StreamFrames(server.url.replace("127.0.0.1", "ana:p%40ss@127.0.0.1"))
    stream.close()
    assert stream.name == f"stream {server.url.replace('127.0.0.1', 'ana:***@127.0.0.1')}"
    assert server.last_auth == "Basic " + base64.b64encode(b"ana:p@ss").decode()


def test_passwords_are_not_shown() -> None:
    assert shown_url("rtsp://admin:secret@10.0.0.5:554/live") == "rtsp://admin:***@10.0.0.5:554/live"
    with pytest.raises(LiveError) as caught:
        StreamFrames("ftp://admin:secret@127.0.0.1/x")
    assert "secret" not in str(caught.value)


def test_an_rtsp_stream_that_is_not_there_is_one_line() -> None:
    started = time.monotonic()
    with pytest.raises(LiveError, match="FFmpeg cannot open it"):
        StreamFrames(f"rtsp://127.0.0.1:{closed_port()}/live", open_timeout=1.0)
    assert time.monotonic() - started < 5.0


def test_the_dashboard_shows_the_link(server: MjpegServer, tmp_path: Path) -> None:
    from tests.web_testing import ApiClient, make_app

    stream = StreamFrames(server.url)
    frames = FrameBuffer(stream.name)
    frames.follow_link(stream.link_status)
    try:
        camera = ApiClient(make_app(tmp_path, FRAME_SOURCE=frames)).get("/api/camera").get_json()
    finally:
        stream.close()
    assert camera["source"] == f"stream {server.url}"
    assert camera["link"].startswith("connected")
