"""Card faces and enrolment: every card has a distinct face; enrolled photos replace drawn ones."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.enrol import check, load_enrolled
from vision.errors import EnrolmentError
from vision.faces import BAND_PX, FACE_H, FACE_W, drawn_faces, face_set


def test_every_card_has_a_distinct_face_and_top_band() -> None:
    faces = drawn_faces()
    assert len(faces) == 112
    assert all(f.shape == (FACE_H, FACE_W, 3) for f in faces)
    assert abs(FACE_W / FACE_H - 63 / 88) < 0.01
    bands = {f[:BAND_PX].tobytes() for f in faces}
    assert len(bands) == 112  # even the four identical Starting Gizmos differ by their collector code


def _write(folder: Path, name: str, img: np.ndarray) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(folder / name), img)


def test_enrolled_face_replaces_the_drawn_one(tmp_path: Path) -> None:
    photo = np.full((600, 430, 3), (10, 200, 30), np.uint8)
    cv2.circle(photo, (215, 300), 120, (255, 255, 255), -1)
    _write(tmp_path, "007.jpg", photo)
    faces = face_set(tmp_path)
    assert faces[7].shape == (FACE_H, FACE_W, 3)
    assert abs(int(faces[7][5, 5, 1]) - 200) < 10  # the photo, resized
    assert faces[8] is drawn_faces()[8]
    report = check(tmp_path)
    assert report.enrolled == (7,) and len(report.missing) == 111
    assert "1 of 112" in report.summary()


def test_landscape_photo_is_turned_upright(tmp_path: Path) -> None:
    _write(tmp_path, "3.png", np.full((300, 420, 3), 90, np.uint8))
    assert load_enrolled(tmp_path)[3].shape == (FACE_H, FACE_W, 3)


@pytest.mark.parametrize("name", ["112.png", "card5.png", "-1.png"])
def test_unknown_card_id_in_file_name_is_named(tmp_path: Path, name: str) -> None:
    _write(tmp_path, name, np.zeros((50, 40, 3), np.uint8))
    with pytest.raises(EnrolmentError, match="unknown card id") as err:
        load_enrolled(tmp_path)
    assert name in str(err.value)


def test_unreadable_enrolled_image_is_named(tmp_path: Path) -> None:
    (tmp_path / "12.jpg").write_bytes(b"not an image")
    with pytest.raises(EnrolmentError, match=r"cannot read image .*12\.jpg"):
        check(tmp_path)


def test_missing_enrolment_folder(tmp_path: Path) -> None:
    with pytest.raises(EnrolmentError, match="does not exist"):
        check(tmp_path / "nope")
