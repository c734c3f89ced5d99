"""Frame sources from files: a video, a folder of images, a rendered recording; and
:func:`open_source`, which turns what a user types into a source (a camera index opens a USB
camera, :mod:`referee.app.cameras`; a URL a network stream, :mod:`referee.app.streams`).

Every source is a :class:`FrameFeed` of frames (:class:`Frame`), read by the run loop
(:mod:`referee.app.live`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import cv2
import numpy as np

from referee.app.errors import LiveError
from vision.errors import FrameError, VisionError
from vision.frames import IMAGE_SUFFIXES, read_frame

if TYPE_CHECKING:
    from referee.app.cameras import CameraSettings


@dataclass(frozen=True, slots=True)
class Frame:
    """One camera frame: its index in the source, its capture time (s from the start), the image."""

    index: int
    time: float
    image: np.ndarray


class FrameFeed(Protocol):
    """Where frames come from; ``frames()`` ends when the source does (a camera never does)."""

    name: str
    live: bool  # a camera: frames come at their own pace and are never paced or dropped here

    def frames(self) -> Iterator[Frame]: ...

    def close(self) -> None: ...


class VideoFrames:
    """A video file, frame by frame, timed by its frame rate."""

    live = False

    def __init__(self, path: Path) -> None:
        self.name = f"video {path.name}"
        self.cap = cv2.VideoCapture(str(path))
        if not self.cap.isOpened():
            raise LiveError(f"video file {path}: cannot be opened (not a video, or an unsupported codec)")
        fps = self.cap.get(cv2.CAP_PROP_FPS)
        self.fps = fps if fps and fps > 0 else 10.0

    def frames(self) -> Iterator[Frame]:
        index = 0
        while True:
            ok, image = self.cap.read()
            if not ok or image is None:
                return
            yield Frame(index, index / self.fps, image)
            index += 1

    def close(self) -> None:
        self.cap.release()


class FolderFrames:
    """A folder of still images, in name order, at ``fps`` frames per second."""

    live = False

    def __init__(self, folder: Path, fps: float = 10.0) -> None:
        self.name = f"images {folder}"
        self.paths = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self.paths:
            raise LiveError(f"image folder {folder}: holds no images ({', '.join(IMAGE_SUFFIXES)})")
        if fps <= 0:
            raise LiveError(f"--fps: expected a positive frame rate, got {fps}")
        self.fps = fps

    def frames(self) -> Iterator[Frame]:
        for index, path in enumerate(self.paths):
            try:
                image = read_frame(path)
            except FrameError as exc:
                raise LiveError(str(exc)) from exc
            yield Frame(index, index / self.fps, image)

    def close(self) -> None:
        pass


class RecordingFrames:
    """A rendered recording's frames (:class:`vision.training.recording.Recording`), at their own times."""

    live = False

    def __init__(self, recording: Any) -> None:
        self.recording = recording
        self.name = f"recording {recording.path.name}"

    def frames(self) -> Iterator[Frame]:
        for index, t, path in self.recording.frames():
            try:
                image = read_frame(path)
            except FrameError as exc:
                raise LiveError(
                    f"recording {self.recording.path}: {exc} (delete the folder to render it again)"
                ) from exc
            yield Frame(index, t, image)

    def close(self) -> None:
        pass


def open_source(text: str, fps: float = 10.0, camera: CameraSettings | None = None) -> FrameFeed:
    """A frame source from what a user types: a camera index (opened under ``camera``'s settings,
    :mod:`referee.app.cameras`), a stream URL (http:// MJPEG, rtsp://), a video file, or a folder
    of images (a folder holding ``recording.json`` is a rendered recording)."""
    text = text.strip()
    if not text:
        raise LiveError(
            "camera source: none given (a camera index such as 0, a stream URL, a video file "
            "or an image folder)"
        )
    from referee.app.streams import (  # streams imports this module (Frame)
        PHONE_SOURCE,
        StreamFrames,
        is_stream_url,
    )

    if text.lower() == PHONE_SOURCE:
        raise LiveError(
            "camera source 'phone': the phone's browser sends its frames to the dashboard's HTTPS "
            "page, which only run --camera phone serves (restart the run with it)"
        )
    if is_stream_url(text):
        return StreamFrames(text)
    if text.isdigit():
        from referee.app.cameras import CameraFrames  # cameras imports this module (Frame)

        return CameraFrames(int(text), camera)
    path = Path(text).expanduser()
    if path.is_dir():
        if (path / "recording.json").is_file():
            from vision.training.recording import Recording

            try:
                return RecordingFrames(Recording.open(path))
            except VisionError as exc:
                raise LiveError(str(exc)) from exc
        return FolderFrames(path, fps)
    if path.is_file():
        if path.suffix.lower() in IMAGE_SUFFIXES:
            raise LiveError(
                f"camera source {text!r}: a single image is not a video (put frames in a folder, "
                "or give a video file or a camera index)"
            )
        return VideoFrames(path)
    raise LiveError(f"camera source {text!r}: no such camera index, video file or image folder")
