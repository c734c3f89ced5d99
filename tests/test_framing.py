"""The framing assistant (issue 17 item 4): what it says about a frame of the bundled recording
(good) and of that frame made dark, washed out, blurred, shifted out of the picture, far away or
seen at a slant; ``vision calibrate --live`` until the framing is good; the dashboard's status."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.app.cli import main
from vision.frames import read_frame
from vision.framing import NEEDED_PX_PER_MM, assess
from vision.training.recording import ensure_recording


@pytest.fixture(scope="module")
def table() -> np.ndarray:
    _, _, path = next(ensure_recording().frames())
    return read_frame(path)


def shifted(image: np.ndarray, dx: int, dy: int) -> np.ndarray:
    h, w = image.shape[:2]
    return cv2.warpAffine(image, np.float32([[1, 0, dx], [0, 1, dy]]), (w, h), borderValue=(90, 90, 90))


def far(image: np.ndarray) -> np.ndarray:
    h, w = image.shape[:2]
    canvas = np.full_like(image, 90)
    canvas[200 : 200 + h // 3, 400 : 400 + w // 3] = cv2.resize(image, (w // 3, h // 3))
    return canvas


def slanted(image: np.ndarray) -> np.ndarray:
    h, w = image.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = np.float32([[250, 0], [w - 250, 0], [w, h], [0, h]])
    return cv2.warpPerspective(image, cv2.getPerspectiveTransform(src, dst), (w, h))


def test_the_recordings_camera_is_framed_well(table: np.ndarray) -> None:
    framing = assess(table)
    assert framing.good and framing.advice == ()
    assert [m.id for m in framing.markers] == [0, 1, 2, 3] and framing.missing == ()
    assert all(30 <= m.side_px <= 45 for m in framing.markers)
    assert framing.px_per_mm is not None and NEEDED_PX_PER_MM <= framing.px_per_mm < 0.8
    assert framing.tilt_deg is not None and framing.tilt_deg < 15
    assert framing.line().endswith(": good")
    data = framing.to_json()
    assert data["good"] is True and data["needed_px_per_mm"] == NEEDED_PX_PER_MM and data["summary"]


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda im: (im * 0.2).astype(np.uint8), "too dark"),
        (lambda im: cv2.convertScaleAbs(im, alpha=2.2, beta=40), "too bright"),
        (lambda im: cv2.GaussianBlur(im, (0, 0), 4), "blurred"),
        (lambda im: shifted(im, 300, 0), "markers [1, 2] are out of the picture: move the camera right"),
        (lambda im: shifted(im, -500, 0), "markers [0, 3] are out of the picture: move the camera left"),
        (lambda im: shifted(im, 0, -250), "markers [0, 1] are out of the picture: move the camera up"),
        (lambda im: shifted(im, 0, 250), "markers [2, 3] are out of the picture: move the camera down"),
        (far, "the table fills only 6% of the picture: bring the camera closer"),
        (far, "are too small"),
        (slanted, "the camera looks at the table at a slant"),
        (lambda im: np.full_like(im, 128), "no marker found"),
    ],
)
def test_a_badly_framed_table_gets_advice(table: np.ndarray, change, says: str) -> None:  # type: ignore[no-untyped-def]
    framing = assess(change(table))
    assert not framing.good
    assert any(says in line for line in framing.advice), framing.advice


def test_calibrate_live_waits_for_good_framing_then_saves(
    table: np.ndarray, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "setup"
    folder.mkdir()
    frames = [(table * 0.2).astype(np.uint8)] * 2 + [shifted(table, 300, 0)] * 2 + [table] * 4
    for i, image in enumerate(frames):
        cv2.imwrite(str(folder / f"{i:02d}.png"), image)
    save = tmp_path / "calibration.json"
    status = main(
        ["vision", "calibrate", "--live", str(folder), "--save", str(save), "--out", str(tmp_path / "c.png")]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    lines = out.splitlines()
    assert "too dark" in lines[1] and "move the camera right" in lines[2] and lines[3].endswith(": good")
    assert lines[-1].startswith("calibrate: the framing is good; markers [0, 1, 2, 3]")
    import json

    saved = json.loads(save.read_text())
    assert np.array(saved["homography_table_mm_to_image"]).shape == (3, 3)
    assert saved["framing"]["good"] is True and (tmp_path / "c.png").is_file()
    assert lines[-1].endswith(f"(start the game from it: run --calibration {save})")
    from vision.calibrate import load_calibration
    from vision.zones import default_zones

    back = load_calibration(save, default_zones())  # what run --calibration reads
    assert back.frame_size == (table.shape[1], table.shape[0])
    assert np.allclose(back.calibration.homography, saved["homography_table_mm_to_image"])


def test_calibrate_live_that_never_gets_good_framing_says_why(
    table: np.ndarray, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "dark"
    folder.mkdir()
    for i in range(3):
        cv2.imwrite(str(folder / f"{i}.png"), (table * 0.2).astype(np.uint8))
    save = tmp_path / "calibration.json"
    assert main(["vision", "calibrate", "--live", str(folder), "--save", str(save)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "error: calibrate --live: the framing never became good (too dark"
    )
    assert not save.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["calibrate"],
            "error: calibrate: give one frame (an image file) or --live SOURCE, not both or neither",
        ),
        (["calibrate", "x.png", "--live", "0"], "error: calibrate: give one frame"),
        (["calibrate", "--live", "57"], "error: calibrate --live: camera 57: cannot open it"),
        (["calibrate", "--live", "phone"], "error: calibrate --live: camera source 'phone':"),
        (
            ["calibrate", "--live", "0", "--timeout", "-1"],
            "error: calibrate: --timeout: expected seconds >= 0",
        ),
    ],
)
def test_calibrate_bad_input_is_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["vision", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(message), err


def test_the_live_referee_puts_the_framing_in_the_camera_status(table: np.ndarray, tmp_path: Path) -> None:
    from referee.app.live import Feed, LiveReferee, LocalGame, RunOptions
    from referee.app.sources import open_source
    from referee.tracker import Tracker
    from web.live import FrameBuffer

    folder = tmp_path / "frames"
    folder.mkdir()
    for i in range(3):
        cv2.imwrite(str(folder / f"{i}.png"), table)

    class NoPipeline:  # the framing is judged on every source, before any detection
        gate = None
        zones = None

        def sight(self, *args):  # type: ignore[no-untyped-def]
            from vision.errors import CalibrationError

            raise CalibrationError("not needed here")

        process = sight

        def know(self, memory):  # type: ignore[no-untyped-def]
            pass

    frames = FrameBuffer("images")
    runner = LiveReferee(NoPipeline(), lambda s: Feed(open_source(str(folder))), RunOptions(speed=0), frames)  # type: ignore[arg-type]
    game = LocalGame(Tracker.create(tmp_path / "g.sqlite", ["Ana", "Ben"]))
    runner.run(game, Feed(open_source(str(folder))))
    framing = frames.status().framing
    assert framing is not None and framing["good"] is True and framing["summary"].endswith(": good")
