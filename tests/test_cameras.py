"""``gizmos-referee cameras``: local cameras listed with what they deliver, one line when none."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from referee.app.cameras import CameraInfo, list_cameras
from referee.app.cli import main


class FakeCapture:
    """Camera 1 delivers 640 x 480 at 30 frames/s; camera 3 opens but gives no frame; no others."""

    def __init__(self, index: int) -> None:
        self.index = index

    def isOpened(self) -> bool:
        return self.index in (1, 3)

    def set(self, prop: int, value: float) -> bool:
        return True

    def read(self) -> tuple[bool, Any]:
        if self.index == 1:
            return True, np.zeros((480, 640, 3), np.uint8)
        return False, None

    def get(self, prop: int) -> float:
        return 30.0

    def getBackendName(self) -> str:
        return "V4L2"

    def release(self) -> None:
        pass


def test_only_cameras_that_give_a_frame_are_listed() -> None:
    found = list_cameras(capture=FakeCapture)
    assert found == [CameraInfo(1, 640, 480, 30.0, "V4L2")]
    assert found[0].line() == "camera 1: 640 x 480, 30 frames/s (V4L2)"


def test_no_camera_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("referee.app.cameras.list_cameras", lambda: [])
    assert main(["cameras"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("no camera found"), out
