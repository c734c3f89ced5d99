"""Enrolment of photographed cards: checked, and used for rendering and identification alike.

A user's copy is printed differently from the drawn faces. Here the "real" cards are other
cards' drawn faces re-colored (a different printing), photographed for enrolment with a slight
perspective, blur, a color cast and JPEG; the camera then sees the real cards on the table.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.enrol import check, remember
from vision.errors import EnrolmentError
from vision.faces import FACE_H, FACE_W, drawn_faces, face_set
from vision.identify import Identifier
from vision.observe import Assembler
from vision.training.evaluate import content, oracle_detections
from vision.training.synth import RenderSettings, TableLayout, render_table

# The user's real card for each id looks like another level-1 card's drawn face, mirrored and
# re-colored: nothing like the drawn face of its own id.
REAL_LOOKS_LIKE = {20: 33, 21: 9, 22: 27, 23: 13}


def real_card(card: int) -> np.ndarray:
    """The face of the user's copy: a different printing (another layout, other colors)."""
    face = cv2.flip(drawn_faces()[REAL_LOOKS_LIKE[card]], 1)
    hsv = cv2.cvtColor(face, cv2.COLOR_BGR2HSV)
    hsv[..., 0] = (hsv[..., 0].astype(int) + 40) % 180
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)


def photograph(face: np.ndarray, seed: int) -> np.ndarray:
    """A phone photo of a card, cropped to its edges by hand: keystone, blur, color cast, JPEG."""
    rng = np.random.default_rng(seed)
    h, w = 700, 500  # the photo is larger than the face and has its own proportions of pixels
    src = np.float32([[0, 0], [FACE_W, 0], [FACE_W, FACE_H], [0, FACE_H]])
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]]) + rng.uniform(-0.012, 0.012, (4, 2)) * [w, h]
    keystone = cv2.getPerspectiveTransform(src, corners.astype(np.float32))
    img = cv2.warpPerspective(face, keystone, (w, h), borderMode=cv2.BORDER_REPLICATE)
    img = cv2.GaussianBlur(img, (0, 0), 1.5)
    img = np.clip(img * rng.uniform([0.8, 0.95, 1.0], [0.9, 1.05, 1.2]), 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 80])
    assert ok
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for i, card in enumerate(REAL_LOOKS_LIKE):
        assert cv2.imwrite(str(tmp_path / f"{card:03d}.jpg"), photograph(real_card(card), i))
    return tmp_path


def _table_of_real_cards() -> tuple[TableLayout, tuple[np.ndarray, ...]]:
    faces = list(drawn_faces())
    for card in REAL_LOOKS_LIKE:
        faces[card] = real_card(card)
    display = tuple((1, slot, card) for slot, card in enumerate(REAL_LOOKS_LIKE))
    layout = TableLayout(display=display, energy_row=(), players=())
    return layout, tuple(faces)


def test_enrol_check_accepts_photos_of_cards(folder: Path) -> None:
    report = check(folder)
    assert report.enrolled == tuple(REAL_LOOKS_LIKE)
    assert "4 of 112 cards enrolled" in report.summary()


def test_enrolled_photos_identify_the_users_cards(folder: Path) -> None:
    layout, real_faces = _table_of_real_cards()
    for seed, size in ((61, (1280, 720)), (62, (1920, 1080))):
        scene = render_table(layout, seed, RenderSettings(size=size, hand_prob=0), faces=real_faces)
        enrolled = Assembler(identifier=Identifier(enrol_dir=str(folder)))
        obs = enrolled.assemble(scene.image, scene.homography, oracle_detections(scene), ())
        assert content(obs) == content(scene.truth)
        drawn = Assembler(identifier=Identifier())
        unenrolled = drawn.assemble(scene.image, scene.homography, oracle_detections(scene), ())
        assert content(unenrolled) != content(scene.truth)  # the drawn faces do not show the user's copy


def test_enrolled_faces_are_rendered_for_training(folder: Path) -> None:
    layout = TableLayout(display=((1, 0, 20),), energy_row=(), players=())
    drawn = render_table(layout, 5, RenderSettings(hand_prob=0, effects=False))
    assert face_set(folder) is face_set(folder)  # read once while the folder is unchanged
    enrolled = render_table(layout, 5, RenderSettings(hand_prob=0, effects=False), faces=face_set(folder))
    assert not np.array_equal(drawn.image, enrolled.image)
    slot = np.round(enrolled.homography @ [375 + 31.5, 430 + 44, 1]).astype(int)
    x, y = slot[:2] // slot[2]
    crop = enrolled.image[y - 5 : y + 5, x - 5 : x + 5].astype(int)
    assert np.abs(crop - drawn.image[y - 5 : y + 5, x - 5 : x + 5]).mean() > 5  # the card itself changed


@pytest.mark.parametrize(
    ("shape", "message"),
    [((400, 400), r"5\.png is 400x400 \(proportions 1\.00\).*crop the photo"), ((100, 72), "only 72x100 px")],
)
def test_a_photo_that_is_not_a_cropped_card_is_named(
    tmp_path: Path, shape: tuple[int, int], message: str
) -> None:
    cv2.imwrite(str(tmp_path / "5.png"), np.full((*shape, 3), 120, np.uint8))
    with pytest.raises(EnrolmentError, match=message):
        check(tmp_path)


def test_a_card_it_cannot_place_is_asked_about_and_the_answer_remembered(tmp_path: Path) -> None:
    """Ask during play and remember: the unenrolled cards are questions with their picture; the
    answers enrol those pictures, and the next frame (another camera too) is read right."""
    layout, real_faces = _table_of_real_cards()
    scenes = [
        render_table(layout, seed, RenderSettings(size=size, hand_prob=0), faces=real_faces)
        for seed, size in ((61, (1280, 720)), (62, (1920, 1080)))
    ]
    scene = scenes[0]
    assembler = Assembler(identifier=Identifier())
    first = assembler.assemble(scene.image, scene.homography, oracle_detections(scene), ())
    assert content(first) != content(scene.truth)
    asked = {q.where: q for q in assembler.last_questions}
    assert set(asked) == {f"display/1/{slot}" for slot in range(4)}
    for slot, card in enumerate(REAL_LOOKS_LIKE):
        q = asked[f"display/1/{slot}"]
        assert q.face.shape == (FACE_H, FACE_W, 3) and len(q.suggestions) == 3
        assert remember(tmp_path, card, q.face) == tmp_path / f"{card}.png"
        assembler.identifier.enrol(card, q.face)
    for s in scenes:
        obs = assembler.assemble(s.image, s.homography, oracle_detections(s), ())
        assert content(obs) == content(s.truth)
        assert not assembler.last_questions
    # Remembered: the next game's identifier reads the folder.
    again = Assembler(identifier=Identifier(enrol_dir=str(tmp_path)))
    obs = again.assemble(scene.image, scene.homography, oracle_detections(scene), ())
    assert content(obs) == content(scene.truth)


def test_remember_replaces_the_cards_earlier_photo(folder: Path) -> None:
    """An answer replaces the card's earlier photo (7.jpg, 007.png: one card, one file)."""
    face = real_card(20)
    path = remember(folder, 20, face)
    assert path.name == "20.png" and not (folder / "020.jpg").exists()
    assert check(folder).enrolled == tuple(REAL_LOOKS_LIKE)
    assert not list(folder.glob(".*.tmp"))
    with pytest.raises(EnrolmentError, match="unknown card id 112"):
        remember(folder, 112, face)
    with pytest.raises(EnrolmentError, match="8-bit BGR"):
        remember(folder, 20, face[..., 0])
