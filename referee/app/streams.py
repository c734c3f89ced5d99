"""Network cameras: ``run --camera URL`` reads a phone camera app's or an IP camera's stream.

HTTP(S) MJPEG (``multipart/x-mixed-replace``, what most phone camera apps serve) is read here,
part by part, with socket timeouts we control; RTSP (and any other URL) goes through OpenCV's
FFmpeg backend with open and read timeouts. Either way a reader thread of its own keeps only the
newest frame: a frame the pipeline did not take before the next one came is dropped, never queued,
so the referee never runs further behind live than one frame plus its own processing time.

The stream is checked when it is opened (one decodable frame within ``open_timeout`` seconds), so a
bad URL or an unreachable host is one :class:`~referee.app.errors.LiveError` line at start. Later
drops are retried with back-off (0.5 s doubling to 5 s) and never end the run; the link's state
(``connected`` / ``reconnecting``) and the frame age are in :meth:`StreamFrames.link_status`, which
the dashboard's camera status shows (``/api/camera``'s ``link``).

Frame age is measured at the pipeline: from the moment a frame's last byte reached the referee to
the moment the pipeline was done with it (asked for the next one). The phone's own encoding and
Wi-Fi delay come before that and cannot be measured without a shared clock.
"""

from __future__ import annotations

import base64
import os
import statistics
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Callable, Iterator
from http.client import HTTPException, HTTPResponse
from typing import Protocol

import cv2
import numpy as np

from referee.app.errors import LiveError
from referee.app.percentiles import p99
from referee.app.sources import Frame

#: URL schemes a network camera may use; http(s) is read as MJPEG here, the rest by FFmpeg.
SCHEMES = ("http", "https", "rtsp", "rtsps", "rtmp")
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 5.0
AGES_KEPT = 300  # the frame ages the median and p99 are taken over (the last ~10-30 s)


def is_stream_url(text: str) -> bool:
    """Whether a ``--camera`` value is a network stream (it names a scheme) rather than a path."""
    return "://" in text.strip()


def shown_url(url: str) -> str:
    """The URL without its password (apps often put ``user:password@`` in it)."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


class StreamGone(Exception):
    """The stream ended or stalled; the reader thread reconnects."""


class Connection(Protocol):
    """One open connection to a stream: ``read()`` is its next decoded frame."""

    def read(self) -> np.ndarray: ...

    def close(self) -> None: ...


class MjpegConnection:
    """An HTTP(S) ``multipart/x-mixed-replace`` stream of JPEG parts (phone camera apps, IP cameras)."""

    def __init__(self, url: str, timeout: float) -> None:
        headers = {"User-Agent": "gizmos-referee"}
        parts = urllib.parse.urlsplit(url)
        if parts.username is not None:  # http://user:password@phone:8080/video: HTTP basic auth
            token = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
            headers["Authorization"] = "Basic " + base64.b64encode(token.encode()).decode()
            netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
            url = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
        request = urllib.request.Request(url, headers=headers)
        try:
            self.resp: HTTPResponse = urllib.request.urlopen(request, timeout=timeout)
        except urllib.error.HTTPError as exc:
            raise StreamGone(f"HTTP {exc.code} {exc.reason}") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            raise StreamGone(getattr(reason, "strerror", None) or str(reason)) from None
        except (OSError, HTTPException, ValueError) as exc:
            raise StreamGone(str(exc) or type(exc).__name__) from None
        kind = self.resp.headers.get_content_type()
        if kind != "multipart/x-mixed-replace":
            self.resp.close()
            raise StreamGone(
                f"serves {kind}, not an MJPEG stream (the app's video URL is often /video or /mjpeg)"
            )
        boundary = self.resp.headers.get_param("boundary")
        self.boundary = (boundary if isinstance(boundary, str) else "").strip('"').encode()
        self.pending: bytes | None = None  # a boundary line read while looking for a part's end

    def _is_boundary(self, line: bytes) -> bool:
        line = line.strip()
        if self.boundary:
            return line in (b"--" + self.boundary, b"--" + self.boundary + b"--", self.boundary)
        return line.startswith(b"--")

    def _line(self) -> bytes:
        if self.pending is not None:
            line, self.pending = self.pending, None
            return line
        line = self.resp.readline(65536)
        if not line:
            raise StreamGone("the stream ended")
        return line

    def read(self) -> np.ndarray:
        try:
            return self._read()
        except (OSError, HTTPException, ValueError) as exc:  # a timeout is an OSError
            raise StreamGone(str(exc) or type(exc).__name__) from None

    def _read(self) -> np.ndarray:
        line = self._line()
        while not self._is_boundary(line):  # the preamble, or the CRLF after the last part
            line = self._line()
        headers: dict[bytes, bytes] = {}
        while (line := self._line().strip()) != b"":
            key, _, value = line.partition(b":")
            headers[key.strip().lower()] = value.strip()
        length = headers.get(b"content-length", b"")
        if length.isdigit():
            data = self.resp.read(int(length))
            if len(data) < int(length):
                raise StreamGone("the stream ended within a frame")
        else:  # no length: the part runs to the next boundary line (put back for the next read)
            chunks = []
            while not self._is_boundary(line := self._line()):
                chunks.append(line)
            data = b"".join(chunks).rstrip(b"\r\n")
            self.pending = line
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        if image is None:
            raise StreamGone("a part of the stream is not a JPEG image")
        return image

    def close(self) -> None:
        self.resp.close()


class CaptureConnection:
    """Any other stream (RTSP, RTMP, HTTP video) through OpenCV's FFmpeg backend."""

    def __init__(self, url: str, timeout: float) -> None:
        if url.lower().startswith("rtsp"):
            # TCP survives Wi-Fi loss far better than RTP over UDP; the user's own setting wins.
            os.environ.setdefault("OPENCV_FFMPEG_CAPTURE_OPTIONS", "rtsp_transport;tcp")
        ms = int(timeout * 1000)
        params = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, ms, cv2.CAP_PROP_READ_TIMEOUT_MSEC, ms]
        self.cap = cv2.VideoCapture(url, cv2.CAP_FFMPEG, params)
        if not self.cap.isOpened():
            self.cap.release()
            raise StreamGone("FFmpeg cannot open it (wrong address or path, or the camera is off)")

    def read(self) -> np.ndarray:
        ok, image = self.cap.read()
        if not ok or image is None:
            raise StreamGone("no frame within the read timeout")
        return image

    def close(self) -> None:
        self.cap.release()


def connect(url: str, timeout: float) -> Connection:
    """An open connection to ``url`` (raises :class:`StreamGone` saying why not)."""
    if urllib.parse.urlsplit(url).scheme.lower() in ("http", "https"):
        return MjpegConnection(url, timeout)
    return CaptureConnection(url, timeout)


def check_url(url: str) -> None:
    """A URL a stream can be read from: a known scheme and a host (raises LiveError otherwise)."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 (a bad port raises ValueError here)
    except ValueError as exc:
        raise LiveError(f"camera source {shown_url(url)!r}: not a valid URL ({exc})") from None
    if parts.scheme.lower() not in SCHEMES:
        raise LiveError(
            f"camera source {shown_url(url)!r}: unsupported scheme {parts.scheme!r} "
            "(use http:// for an MJPEG stream or rtsp://)"
        )
    if not parts.hostname:
        raise LiveError(f"camera source {shown_url(url)!r}: the URL names no host")


class NewestFrames:
    """Frames pushed by another thread, the newest only: what a network camera and the phone's
    browser have in common. A frame the pipeline did not take before the next came is dropped and
    counted; the frame age at the pipeline and the link's state are kept for the dashboard."""

    live = True
    name = "network camera"

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._latest: tuple[int, float, np.ndarray] | None = None  # (sequence, arrival, image)
        self._closed = False
        self.state = "connecting"
        self.detail = ""
        self.received = 0  # frames that came
        self.dropped = 0  # frames replaced by a newer one before the pipeline took them
        self.reconnects = 0
        self.ages: deque[float] = deque(maxlen=AGES_KEPT)
        self._taken = 0  # the sequence number of the last frame the pipeline took
        self.start = time.monotonic()

    def _put(self, image: np.ndarray) -> None:
        with self._cond:
            if self._latest is not None and self._latest[0] > self._taken:
                self.dropped += 1
            self.received += 1
            self._latest = (self.received, time.monotonic(), image)
            self._cond.notify_all()

    def _set_state(self, state: str, detail: str) -> None:
        with self._cond:
            self.state, self.detail = state, detail
            self._cond.notify_all()

    def frames(self) -> Iterator[Frame]:
        """The newest frame each time the pipeline asks; waits while the link is down (a camera
        never ends), ends when :meth:`close` is called."""
        taken_at: float | None = None
        while True:
            with self._cond:
                if taken_at is not None:
                    self.ages.append(time.monotonic() - taken_at)
                self._cond.wait_for(
                    lambda: self._closed or (self._latest is not None and self._latest[0] > self._taken)
                )
                if self._closed or self._latest is None:
                    return
                seq, arrival, image = self._latest
                self._taken = seq
            taken_at = arrival
            yield Frame(seq - 1, arrival - self.start, image)

    def age_stats(self) -> tuple[float, float] | None:
        """The median and 99th percentile frame age (s) at the pipeline, None before two frames."""
        with self._cond:
            ages = sorted(self.ages)
        if len(ages) < 2:
            return None
        return statistics.median(ages), p99(ages)

    def link_status(self) -> str:
        """One line for the dashboard: the link's state and how far behind live the frames are."""
        with self._cond:
            state, detail, reconnects = self.state, self.detail, self.reconnects
        text = state + (f": {detail}" if detail else "")
        ages = self.age_stats()
        if state == "connected" and ages is not None:
            text += f", frame age {ages[0] * 1000:.0f} ms (p99 {ages[1] * 1000:.0f} ms)"
        if reconnects:
            text += f", {reconnects} reconnect{'s' if reconnects > 1 else ''}"
        return text

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def interrupt(self) -> None:
        """End :meth:`frames` from another thread (the runner's stop)."""
        self.close()


class StreamFrames(NewestFrames):
    """A network camera as a live :class:`~referee.app.sources.FrameFeed`: the newest frame only,
    reconnects with back-off, the link state and the frame age for the dashboard."""

    def __init__(
        self,
        url: str,
        open_timeout: float = 3.0,
        read_timeout: float = 5.0,
        opener: Callable[[str, float], Connection] = connect,
    ) -> None:
        check_url(url)
        super().__init__()
        self.url = url
        self.name = f"stream {shown_url(url)}"
        self.read_timeout = read_timeout
        self.opener = opener
        try:
            conn = opener(url, open_timeout)
        except StreamGone as exc:
            raise LiveError(f"camera source {shown_url(url)!r}: cannot read it: {exc}") from None
        try:
            first = conn.read()
        except StreamGone as exc:
            conn.close()
            raise LiveError(f"camera source {shown_url(url)!r}: no frame came: {exc}") from None
        self._put(first)
        self._set_state("connected", "")
        self._thread = threading.Thread(target=self._reader, args=(conn,), name="stream-reader", daemon=True)
        self._thread.start()

    # ---------------------------------------------------------------- the reader thread

    def _reader(self, conn: Connection | None) -> None:
        delay = BACKOFF_FIRST_S
        while not self._closed:
            if conn is None:
                try:
                    conn = self.opener(self.url, self.read_timeout)
                    self._put(conn.read())
                except StreamGone as exc:
                    if conn is not None:
                        conn.close()
                        conn = None
                    self._set_state("reconnecting", f"{exc}; next try in {delay:g} s")
                    with self._cond:
                        self._cond.wait_for(lambda: self._closed, delay)
                    delay = min(BACKOFF_MAX_S, delay * 2)
                    continue
                self.reconnects += 1
                self._set_state("connected", "")
                delay = BACKOFF_FIRST_S
            try:
                self._put(conn.read())
            except StreamGone as exc:
                conn.close()
                conn = None
                if not self._closed:
                    self._set_state("reconnecting", str(exc))
        if conn is not None:
            conn.close()


PHONE_SOURCE = "phone"  # ``run --camera phone``: the phone's browser is the camera (web/phone.py)
PHONE_QUIET_S = 3.0  # no frame from the phone for this long: the dashboard says so


class PhoneFrames(NewestFrames):
    """The phone's browser as the camera: the paired phone's page posts JPEG frames to the
    dashboard (:mod:`web.phone`), which hands each decoded image to :meth:`offer`; the pipeline
    reads the newest. The link outlives a run: :meth:`close` ends one run's frames, and the next
    :meth:`frames` (the setup page's Start) reads on."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "phone camera (browser)"
        self.state = "waiting for the phone (open /phone on it and pair)"
        self._last = 0.0

    def offer(self, image: np.ndarray) -> None:
        """A frame the paired phone sent (called from the dashboard's request thread)."""
        if image.ndim != 3 or image.shape[2] != 3:
            raise ValueError("a phone frame must be a colour image")
        self._last = time.monotonic()
        self._put(image)
        if self.state != "connected":
            self._set_state("connected", "")

    def frames(self) -> Iterator[Frame]:
        with self._cond:
            self._closed = False
        yield from super().frames()

    def link_status(self) -> str:
        if self.state == "connected" and time.monotonic() - self._last > PHONE_QUIET_S:
            quiet = time.monotonic() - self._last
            return f"no frame from the phone for {quiet:.0f} s (its screen locked, or the page closed?)"
        return super().link_status()
