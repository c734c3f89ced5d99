"""A tiny HTTP MJPEG server on 127.0.0.1 (a phone camera app's stand-in), for tests and benchmarks.

Frames come from a callable ``frame(n) -> BGR image`` at ``fps``; frame ``n`` is the one due at
``n / fps`` seconds after start, so a reader that falls behind skips frames as it would live.
``cut()`` closes every open stream; ``refuse`` makes new requests fail with 503 (the app restarting).
Paths: ``/video`` (parts with Content-Length), ``/nolength`` (parts without), ``/page`` (HTML),
anything else 404.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import cv2
import numpy as np

BOUNDARY = "gizmosframe"


def numbered_frame(n: int, size: tuple[int, int] = (320, 240)) -> np.ndarray:
    """A grey frame whose top-left three 16 px blocks spell ``n`` in base 16 (survives JPEG)."""
    image = np.full((size[1], size[0], 3), 90, np.uint8)
    for i in range(3):
        image[0:16, 16 * i : 16 * i + 16] = ((n >> (4 * i)) & 15) * 16 + 8
    return image


def frame_number(image: np.ndarray) -> int:
    """The number :func:`numbered_frame` drew."""
    digits = (round((float(image[4:12, 16 * i + 4 : 16 * i + 12].mean()) - 8) / 16) for i in range(3))
    return sum(d << (4 * i) for i, d in enumerate(digits))


class MjpegServer:
    """Serves frames as ``multipart/x-mixed-replace`` on a free loopback port (``url``)."""

    def __init__(self, frame: Callable[[int], np.ndarray] = numbered_frame, fps: float = 30.0) -> None:
        self.frame, self.fps = frame, fps
        self.refuse = False
        self.generation = 0  # bumped by cut(): streams of an older generation end
        self.start = time.monotonic()
        self.sent = 0
        self.last_auth: str | None = None  # the Authorization header of the last request
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                server.last_auth = self.headers.get("Authorization")
                if server.refuse:
                    self.send_error(503, "restarting")
                    return
                if self.path == "/page":
                    body = b"<html><body>camera app</body></html>"
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if self.path not in ("/video", "/nolength"):
                    self.send_error(404, "no such page")
                    return
                self.send_response(200)
                self.send_header("Content-Type", f"multipart/x-mixed-replace; boundary={BOUNDARY}")
                self.end_headers()
                generation, last = server.generation, -1
                try:
                    while generation == server.generation:
                        n = server.current()
                        if n == last:
                            time.sleep(0.002)
                            continue
                        last = n
                        ok, buf = cv2.imencode(".jpg", server.frame(n), [cv2.IMWRITE_JPEG_QUALITY, 90])
                        assert ok
                        head = f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\n"
                        if self.path == "/video":
                            head += f"Content-Length: {len(buf)}\r\n"
                        self.wfile.write(head.encode() + b"\r\n" + buf.tobytes() + b"\r\n")
                        self.wfile.flush()
                        server.sent += 1
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/video"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def current(self) -> int:
        """The number of the frame due now."""
        return int((time.monotonic() - self.start) * self.fps)

    def cut(self) -> None:
        """Drop every open stream (the phone's Wi-Fi went away)."""
        self.generation += 1

    def close(self) -> None:
        self.cut()
        self.httpd.shutdown()
        self.httpd.server_close()
