"""USB webcams: ``gizmos-referee cameras`` lists them with what they deliver and support (one line
when none); ``run --camera N`` sets the resolution and frame rate and locks exposure, white balance
and focus, reporting what the driver accepted. No USB camera is at hand: the control logic is
tested against :class:`FakeDriver`, a capture object that behaves as UVC drivers under V4L2 do
(values clamped to a range, ``set`` answering True for what it ignores, -1 for what it lacks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from referee.app.cameras import CameraFrames, CameraInfo, CameraSettings, list_cameras, settings_from
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
        return 30.0 if prop == cv2.CAP_PROP_FPS else -1.0

    def getBackendName(self) -> str:
        return "V4L2"

    def release(self) -> None:
        pass


def test_only_cameras_that_give_a_frame_are_listed() -> None:
    found = list_cameras(capture=FakeCapture)
    assert found == [CameraInfo(1, 640, 480, 30.0, "V4L2")]
    assert found[0].line() == "camera 1: 640 x 480, 30 frames/s (V4L2); controls none reported"


def test_no_camera_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("referee.app.cameras.list_cameras", lambda: [])
    assert main(["cameras"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("no camera found"), out


class FakeDriver:
    """A UVC webcam under V4L2, as OpenCV sees it. Exposure (3-2047, auto: the V4L2 menu value 3,
    manual 1) drifts while automatic until it settles at 156 after 10 frames; white balance
    (2800-6500 K) reads 4600 while automatic; focus only if ``focus``; ``stubborn`` ignores
    every manual setting while answering True. Sizes: the nearest of 640x480, 1280x720, 1920x1080."""

    SIZES = ((640, 480), (1280, 720), (1920, 1080))

    def __init__(
        self, index: int = 0, focus: bool = True, stubborn: bool = False, backend: str = "V4L2"
    ) -> None:
        self.focus, self.stubborn, self.backend = focus, stubborn, backend
        manual, auto = (1.0, 3.0) if backend == "V4L2" else (0.25, 0.75)
        self.manual_exposure, self.auto_exposure = manual, auto
        self.props: dict[int, float] = {
            cv2.CAP_PROP_FRAME_WIDTH: 640,
            cv2.CAP_PROP_FRAME_HEIGHT: 480,
            cv2.CAP_PROP_FPS: 30.0,
            cv2.CAP_PROP_AUTO_EXPOSURE: auto,
            cv2.CAP_PROP_EXPOSURE: 500.0,
            cv2.CAP_PROP_AUTO_WB: 1.0,
            cv2.CAP_PROP_WB_TEMPERATURE: 4000.0,
        }
        if focus:
            self.props |= {cv2.CAP_PROP_AUTOFOCUS: 1.0, cv2.CAP_PROP_FOCUS: 30.0}
        self.frames_read = 0
        self.log: list[tuple[int, float]] = []

    def isOpened(self) -> bool:
        return True

    def getBackendName(self) -> str:
        return self.backend

    def read(self) -> tuple[bool, Any]:
        self.frames_read += 1
        if self.props[cv2.CAP_PROP_AUTO_EXPOSURE] == self.auto_exposure:  # the automatic at work
            self.props[cv2.CAP_PROP_EXPOSURE] = (
                156.0 if self.frames_read >= 10 else 500.0 - 30 * self.frames_read
            )
        if self.props[cv2.CAP_PROP_AUTO_WB] == 1.0:
            self.props[cv2.CAP_PROP_WB_TEMPERATURE] = 4600.0
        w, h = int(self.props[cv2.CAP_PROP_FRAME_WIDTH]), int(self.props[cv2.CAP_PROP_FRAME_HEIGHT])
        return True, np.zeros((h, w, 3), np.uint8)

    def set(self, prop: int, value: float) -> bool:
        self.log.append((prop, value))
        if prop in (cv2.CAP_PROP_FRAME_WIDTH, cv2.CAP_PROP_FRAME_HEIGHT):
            want = dict(self.props)
            want[prop] = value
            w, h = min(self.SIZES, key=lambda s: abs(s[0] - want[3]) + abs(s[1] - want[4]))
            self.props[cv2.CAP_PROP_FRAME_WIDTH], self.props[cv2.CAP_PROP_FRAME_HEIGHT] = w, h
            return True
        if prop == cv2.CAP_PROP_FPS:
            self.props[prop] = 30.0 if value > 15 else 15.0
            return True
        if prop not in self.props or prop == cv2.CAP_PROP_BUFFERSIZE:
            return False
        if self.stubborn and prop != cv2.CAP_PROP_AUTO_EXPOSURE and prop != cv2.CAP_PROP_AUTO_WB:
            return True  # answers yes, changes nothing
        if self.stubborn:
            return True
        ranges = {
            cv2.CAP_PROP_EXPOSURE: (3, 2047),
            cv2.CAP_PROP_WB_TEMPERATURE: (2800, 6500),
            cv2.CAP_PROP_FOCUS: (0, 250),
        }
        lo, hi = ranges.get(prop, (-1e9, 1e9))
        self.props[prop] = float(min(max(value, lo), hi))
        return True

    def get(self, prop: int) -> float:
        return self.props.get(prop, -1.0)

    def release(self) -> None:
        pass


def open_fake(settings: CameraSettings | None = None, **kw: Any) -> tuple[CameraFrames, FakeDriver]:
    driver = FakeDriver(**kw)
    return CameraFrames(0, settings, capture=lambda i: driver, settle_s=0.05), driver


def test_by_default_the_automatics_are_locked_where_they_settled() -> None:
    camera, driver = open_fake()
    assert driver.frames_read >= 10  # the automatics ran before the lock read them
    assert camera.report == [
        "resolution 1280 x 720",
        "30 frames/s",
        "exposure: locked at 156",
        "white balance: locked at 4600 K",
        "focus: locked at 30",
    ]
    assert driver.props[cv2.CAP_PROP_AUTO_EXPOSURE] == 1.0 and driver.props[cv2.CAP_PROP_AUTO_WB] == 0.0
    assert driver.props[cv2.CAP_PROP_AUTOFOCUS] == 0.0
    frame = next(camera.frames())
    assert frame.image.shape == (720, 1280, 3)
    assert driver.props[cv2.CAP_PROP_EXPOSURE] == 156.0  # reading on no longer moves it


def test_numbers_auto_and_what_the_driver_made_of_them() -> None:
    settings = CameraSettings(
        (1920, 1000), 24.0, {"exposure": 5000.0, "white balance": 3200.0, "focus": "auto"}
    )
    camera, driver = open_fake(settings)
    assert camera.report == [
        "resolution 1920 x 1080 (asked 1920 x 1000: the camera's nearest)",
        "30 frames/s (asked 24)",
        "exposure: manual at 2047 (asked 5000: the camera's nearest)",
        "white balance: set to 3200 K",
        "focus: automatic",
    ]
    assert driver.props[cv2.CAP_PROP_AUTOFOCUS] == 1.0


def test_a_driver_that_ignores_manual_values_or_lacks_a_control_is_reported_not_refused() -> None:
    camera, _ = open_fake(stubborn=True, focus=False)
    assert camera.report[2:] == [
        "exposure: the camera keeps it automatic (it does not take a manual value)",
        "white balance: the camera keeps it automatic (it does not take a manual value)",
        "focus: not reported by this camera (left as it is)",
    ]


def test_windows_backends_take_their_own_auto_exposure_values() -> None:
    camera, driver = open_fake(CameraSettings(controls={"exposure": 200.0}), backend="DSHOW")
    assert "exposure: set to 200" in camera.report
    assert (cv2.CAP_PROP_AUTO_EXPOSURE, 0.25) in driver.log


def test_cameras_lists_what_each_supports(capsys: pytest.CaptureFixture[str]) -> None:
    found = list_cameras(count=1, capture=lambda i: FakeDriver(i, focus=False))
    assert found[0].line() == (
        "camera 0: 1280 x 720, 30 frames/s (V4L2); resolutions 640x480, 1280x720, 1920x1080; "
        "controls exposure, white balance"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--exposure", "bright"], "--exposure: expected auto, lock or a number, got 'bright'"),
        (["--focus", "-3"], "--focus: expected auto, lock or a number >= 0, got '-3'"),
        (["--resolution", "1280"], "--resolution: expected WIDTHxHEIGHT such as 1920x1080, got '1280'"),
        (["--camera-fps", "0"], "--camera-fps: expected a frame rate of 1-240, got '0'"),
        (
            ["--camera-config", "{missing}"],
            "--camera-config: cannot read {missing}: No such file or directory",
        ),
        (
            ["--camera-config", "{unknown}"],
            "--camera-config: {unknown}: unknown key 'gain' (known: resolution, fps, exposure, "
            "white_balance, focus)",
        ),
        (
            ["--camera-config", "{bad}"],
            "--camera-config: {bad}: white_balance: expected auto, lock or a number, got 'warm'",
        ),
    ],
)
def test_bad_camera_settings_are_one_line_and_exit_2(
    options: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {
        "missing": tmp_path / "none.yaml",
        "unknown": tmp_path / "unknown.yaml",
        "bad": tmp_path / "bad.yaml",
    }
    files["unknown"].write_text("exposure: lock\ngain: 3\n")
    files["bad"].write_text("white_balance: warm\n")
    options = [o.format(**files) for o in options]
    status = main(
        ["run", "--camera", "0", *options, "--players", "Ana", "Ben", "--games-dir", str(tmp_path / "g")]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1, err
    assert err[0] == "gizmos-referee run: error: " + message.format(**files)


def test_camera_controls_on_another_source_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "run",
            "--camera",
            "http://127.0.0.1:9/video",
            "--exposure",
            "lock",
            "--players",
            "Ana",
            "Ben",
            "--games-dir",
            str(tmp_path / "g"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and err == [
        "gizmos-referee run: error: --exposure: camera controls apply to a USB camera (--camera 0, 1, ...); "
        "a phone or IP camera sets its own"
    ]


def test_a_camera_config_file_is_read_and_options_override_it(tmp_path: Path) -> None:
    import argparse

    config = tmp_path / "camera.yaml"
    config.write_text("resolution: 1920x1080\nfps: 30\nexposure: 120\nwhite_balance: auto\n")
    args = argparse.Namespace(
        camera_config=str(config),
        exposure="lock",
        resolution=None,
        camera_fps=None,
        white_balance=None,
        focus=None,
    )
    settings = settings_from(args)
    assert settings == CameraSettings(
        (1920, 1080), 30.0, {"exposure": "lock", "white balance": "auto", "focus": "lock"}
    )
