"""The hook a live camera pipeline plugs into: a frame source and a live runner.

The dashboard never reads a camera itself. Whoever runs the pipeline (camera or recording ->
detector -> observations -> tracker) hands the app two objects through ``create_app``:

- a :class:`FrameSource`: the latest annotated camera image as JPEG (detections and zones
  drawn on it) and the camera/calibration status. :class:`FrameBuffer` is a ready-made,
  thread-safe one: the pipeline calls ``publish_image(bgr)`` per processed frame.
- a :class:`LiveRunner`: ``start(game, settings)``, ``pause()``, ``stop()`` and ``status()``,
  called from the setup page. The runner referees ``game`` from its own thread; every tracker
  call goes through ``with game.locked() as tracker: tracker.observe(obs)`` so the page (other
  threads) never sees the tracker half-way through a change, and every change is pushed to the
  open pages when the ``with`` block ends.

A third, optional hook, :class:`CardQuestions` (``CARD_QUESTIONS``), lists the cards the
pipeline could not place and takes the players' answers; a fourth, :class:`SpreadEnrolment`
(``SPREAD_ENROLMENT``), finds a spread of cards in a photo of the table and enrols the ids the
user confirms.

Without them the camera view says "no camera" and manual mode works fully.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from web.hub import LiveGame, Settings


@dataclass(frozen=True, slots=True)
class CameraStatus:
    """What the setup page shows about the camera: where frames come from and the calibration."""

    source: str  # e.g. "camera 0", "recording table.mp4"
    calibrated: bool
    detail: str = ""  # e.g. "markers [0, 1, 2, 3], error 0.8 px" or why calibration failed
    fps: float = 0.0
    link: str = ""  # a network camera's link: "connected, frame age 80 ms (p99 120 ms)", "reconnecting: ..."
    framing: dict[str, Any] | None = None  # the framing assistant's verdict (vision.framing.Framing.to_json)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class FrameSource(Protocol):
    """The latest annotated camera image."""

    def wait_frame(self, after: int, timeout: float) -> tuple[int, bytes] | None:
        """The newest ``(sequence number, JPEG bytes)`` newer than ``after``; waits up to
        ``timeout`` seconds for one, then returns None."""
        ...

    def status(self) -> CameraStatus:
        """The camera and calibration status."""
        ...


@runtime_checkable
class LiveRunner(Protocol):
    """Referees a game from the camera pipeline in a thread of its own."""

    def start(self, game: LiveGame, settings: Settings) -> None:
        """Start (or resume) refereeing ``game``; raise RuntimeError with a plain message if the
        camera or the serial port cannot be opened."""
        ...

    def pause(self) -> None:
        """Stop feeding the tracker but keep the camera open (players sort something out)."""
        ...

    def stop(self) -> None:
        """Stop and release the camera and the serial port."""
        ...

    def status(self) -> str:
        """``"running"``, ``"paused"`` or ``"stopped"``."""
        ...


class QuestionRefused(Exception):
    """An answer to a card question (or a spread's photo or confirmation) that cannot be taken;
    ``status`` is the HTTP status to answer (400 not a card id or not an image, 404 no such open
    question or spread, 409 nowhere to remember it, 422 no markers or no card in the photo)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@runtime_checkable
class CardQuestions(Protocol):
    """The cards the live pipeline could not place, asked on the dashboard (issue 14): the answer
    enrols the card as the camera saw it. Methods raise :class:`QuestionRefused`."""

    def pending(self) -> list[dict[str, Any]]:
        """The open questions: ``id``, ``where``, ``suggestions``, ``confidence``, ``frame``."""
        ...

    def face_png(self, question: int) -> bytes:
        """The card asked about, as the camera saw it (PNG)."""
        ...

    def answer(self, question: int, card: int) -> dict[str, Any]:
        """The card is ``card``: remember it; ``{"ok": true, "card": ..., "enrolled": file name}``."""
        ...


@runtime_checkable
class SpreadEnrolment(Protocol):
    """A spread of the user's cards on the calibrated table, photographed, its suggested ids
    confirmed on the dashboard and enrolled (issue 14). Methods raise :class:`QuestionRefused`."""

    def take_photo(self, data: bytes) -> dict[str, Any]:
        """Find the spread in a JPEG or PNG photo of the table and open it: ``id``, ``cards``."""
        ...

    def take_camera(self, source: str) -> dict[str, Any]:
        """Find the spread in what the camera shows now (the running referee's latest still
        frame, else a frame read from ``source``) and open it."""
        ...

    def current(self) -> dict[str, Any] | None:
        """The open spread, or None."""
        ...

    def face_png(self, place: int) -> bytes:
        """The card at ``place`` of the open spread, as the camera saw it (PNG)."""
        ...

    def confirm(self, spread: int, cards: dict[int, int]) -> dict[str, Any]:
        """Enrol these places' cards at once: ``{"ok": true, "enrolled": {card: file name}}``."""
        ...


class FrameBuffer:
    """A thread-safe :class:`FrameSource`: the pipeline publishes, MJPEG streams wait for frames."""

    def __init__(self, source: str = "camera", quality: int = 80) -> None:
        self._cond = threading.Condition()
        self._seq = 0
        self._jpeg: bytes | None = None
        self._times: list[float] = []
        self._status = CameraStatus(source=source, calibrated=False, detail="no frame yet")
        self.quality = quality
        self._link: Callable[[], str] | None = None
        self._framing: dict[str, Any] | None = None

    def set_framing(self, framing: dict[str, Any] | None) -> None:
        """The framing assistant's latest verdict (markers, px/mm, tilt, light, the advice)."""
        with self._cond:
            self._framing = framing

    def follow_link(self, link: Callable[[], str] | None) -> None:
        """Show a network camera's link state (``StreamFrames.link_status``) in the status; None: none."""
        with self._cond:
            self._link = link

    def publish(self, jpeg: bytes) -> int:
        """Make ``jpeg`` the latest frame; returns its sequence number."""
        if not jpeg.startswith(b"\xff\xd8"):
            raise ValueError("FrameBuffer.publish: expected JPEG bytes (they start with FF D8)")
        with self._cond:
            self._seq += 1
            self._jpeg = jpeg
            now = time.monotonic()
            self._times = [t for t in self._times if now - t < 5.0] + [now]
            self._cond.notify_all()
            return self._seq

    def publish_image(self, image: np.ndarray) -> int:
        """Encode a BGR image (e.g. ``vision.calibrate.annotate(frame, cal)``) and publish it."""
        import cv2

        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, self.quality])
        if not ok:
            raise ValueError("FrameBuffer.publish_image: OpenCV could not encode the image as JPEG")
        return self.publish(buf.tobytes())

    def set_status(self, calibrated: bool, detail: str = "", source: str | None = None) -> None:
        """Report the calibration (the pipeline calls this when it changes)."""
        with self._cond:
            self._status = CameraStatus(
                source=source if source is not None else self._status.source,
                calibrated=calibrated,
                detail=detail,
                fps=self._status.fps,
            )

    def wait_frame(self, after: int, timeout: float) -> tuple[int, bytes] | None:
        with self._cond:
            self._cond.wait_for(lambda: self._seq > after and self._jpeg is not None, timeout)
            if self._seq > after and self._jpeg is not None:
                return self._seq, self._jpeg
            return None

    def status(self) -> CameraStatus:
        with self._cond:
            span = self._times[-1] - self._times[0] if len(self._times) > 1 else 0.0
            fps = (len(self._times) - 1) / span if span > 0 else 0.0
            link, framing = self._link, self._framing
        return CameraStatus(
            self._status.source,
            self._status.calibrated,
            self._status.detail,
            round(fps, 1),
            link() if link is not None else "",
            framing,
        )
