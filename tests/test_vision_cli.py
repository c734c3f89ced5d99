"""The vision CLI: commands work end to end and bad input is one clear line, exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.app.vision_cli import main
from referee.observation import Observation


def test_synth_calibrate_and_observe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["synth", "--out", str(tmp_path), "--count", "1", "--seed", "8300000", "--players", "2"]) == 0
    image = tmp_path / "scene_8300000.jpg"
    assert main(["calibrate", str(image), "--out", str(tmp_path / "cal.png")]) == 0
    assert cv2.imread(str(tmp_path / "cal.png")) is not None
    capsys.readouterr()
    assert main(["observe", str(image), "--players", "2"]) == 0
    obs = Observation.from_json(json.loads(capsys.readouterr().out.strip()))
    assert len(obs.players) == 2 and obs.energy_row is not None


def test_print_markers_and_faces(tmp_path: Path) -> None:
    assert main(["print-markers", "--out", str(tmp_path / "m.png")]) == 0
    assert main(["faces", "--out", str(tmp_path / "faces")]) == 0
    assert len(list((tmp_path / "faces").glob("*.png"))) == 112


def test_bad_input_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["observe", str(tmp_path / "none.jpg")]) == 2
    assert "no such image file" in capsys.readouterr().err
    (tmp_path / "enrol").mkdir()
    cv2.imwrite(str(tmp_path / "enrol" / "ace.png"), np.zeros((10, 10, 3), np.uint8))
    assert main(["enrol-check", str(tmp_path / "enrol")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: enrolment: unknown card id 'ace'") and "Traceback" not in err
    assert main(["observe", str(tmp_path / "none.jpg"), "--model", str(tmp_path / "m.onnx")]) == 2
    assert "m.onnx not found" in capsys.readouterr().err
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.zeros((720, 1280, 3), np.uint8))
    assert main(["calibrate", str(blank)]) == 2
    assert "blank image" in capsys.readouterr().err
    assert main(["train-hands", "--out", str(tmp_path / "run"), "--resume"]) == 2
    assert capsys.readouterr().err.startswith("error: hand training: nothing to resume in")
    assert main(["export-hands", "--weights", str(tmp_path / "w.pt")]) == 2
    assert "hand weights file" in capsys.readouterr().err
    assert main(["train-tokens", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "t")]) == 2
    assert capsys.readouterr().err.startswith("error: token set: no shards in")
    assert main(["train-tokens", "--out", str(tmp_path / "t"), "--resume"]) == 2
    assert capsys.readouterr().err.startswith("error: token training: nothing to resume in")
    assert main(["export-tokens", "--weights", str(tmp_path / "w.pt")]) == 2
    assert "token weights file" in capsys.readouterr().err
    assert main(["dataset-mix", "--out", str(tmp_path / "mix.yaml"), str(tmp_path / "nothing")]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith("nothing has no images/train (render it with `vision dataset`)")
    )


def test_print_markers_says_which_size_and_refuses_a_bad_one(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = str(tmp_path / "m.png")
    assert main(["print-markers", "--out", out, "--camera-height", "180", "--tilt", "15"]) == 0
    assert "print markers of at least" in capsys.readouterr().out
    assert main(["print-markers", "--out", out, "--marker-mm", "5"]) == 2
    assert "--marker-mm 5 is not" in capsys.readouterr().err


def _png_header(width: int, height: int) -> bytes:
    """A PNG that claims to be width x height (its pixels are never reached)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\0" * 64))
        + chunk(b"IEND", b"")
    )


def one_line(err: str, expected: str) -> None:
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and expected in err, err


def test_a_huge_image_is_refused_from_its_header(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    huge = tmp_path / "huge.png"
    huge.write_bytes(_png_header(40000, 40000))
    assert main(["observe", str(huge)]) == 2
    one_line(capsys.readouterr().err, "is 40000x40000, too large")


def test_image_size_reads_png_and_jpeg_headers(tmp_path: Path) -> None:
    from vision.frames import image_size

    img = np.zeros((123, 457, 3), np.uint8)
    for ext in (".png", ".jpg"):
        ok, data = cv2.imencode(ext, img)
        assert ok and image_size(data.tobytes()) == (457, 123)
    assert image_size(b"GIF89a....") is None


@pytest.mark.parametrize(
    "content,expected",
    [
        (bytes(range(256)) * 4, "not a text file"),
        ("format: gizmos-zones\nseats:\n  - seat: 0\n - seat: 1\n", "not valid YAML: "),
    ],
)
def test_a_bad_zones_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | str, expected: str
) -> None:
    zones = tmp_path / "zones.yaml"
    if isinstance(content, bytes):
        zones.write_bytes(content)
    else:
        zones.write_text(content)
    assert main(["observe", str(tmp_path / "none.jpg"), "--zones", str(zones)]) == 2
    one_line(capsys.readouterr().err, expected)


def test_calibrating_on_the_marker_sheet_is_refused_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["print-markers", "--out", "sheet.png"]) == 0
    capsys.readouterr()
    assert main(["calibrate", "sheet.png"]) == 2
    one_line(capsys.readouterr().err, "reprojection error is")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sheet.png"]  # no calibration.png unasked
    assert main(["synth", "--out", "s", "--count", "1", "--seed", "8300000", "--players", "2"]) == 0
    capsys.readouterr()
    assert main(["calibrate", "s/scene_8300000.jpg"]) == 0
    assert "wrote" not in capsys.readouterr().out and not (tmp_path / "calibration.png").exists()


def test_native_decoder_chatter_stays_off_the_terminal(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # libjpeg prints "Premature end of JPEG file" on file descriptor 2 by itself; the user sees
    # only the referee's one line.
    _, data = cv2.imencode(".jpg", np.random.default_rng(0).integers(0, 255, (720, 1280, 3), dtype=np.uint8))
    truncated = tmp_path / "cut.jpg"
    truncated.write_bytes(data.tobytes()[: len(data) // 2])
    from vision.frames import read_frame

    read_frame(truncated)  # decodes what is there (grey below), quietly
    assert "JPEG" not in capfd.readouterr().err


def test_ffmpeg_chatter_stays_off_the_terminal(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    bad = tmp_path / "notes.mp4"
    bad.write_text("not a video" * 100)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCV_", "OPENVINO_"))}
    argv = [
        "run",
        "--camera",
        str(bad),
        "--players",
        "Ana",
        "Ben",
        "--no-serve",
        "--games-dir",
        str(tmp_path),
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "referee.app.cli", *argv],
        cwd=Path(__file__).resolve().parents[1],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "moov atom" not in proc.stderr and "cannot be opened" in proc.stderr


def test_a_model_file_openvino_cannot_read_is_one_line(tmp_path: Path) -> None:
    """OpenVINO's model readers print parse errors on fd 2 and raise a many-line exception:
    the user sees one line naming the file, nothing else."""
    import subprocess
    import sys

    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), np.zeros((72, 128, 3), np.uint8))
    bad = tmp_path / "detector.onnx"
    bad.write_text("garbage\n")
    proc = subprocess.run(
        [sys.executable, "-m", "referee.app.cli", "vision", "observe", str(frame), "--model", str(bad)],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "cannot load model file" in proc.stderr and str(bad) in proc.stderr
    assert "GraphDef" not in proc.stderr and "Exception from" not in proc.stderr
