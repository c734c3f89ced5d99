"""A card's outline and a spread of cards on the table (issue 14, item 2): enrolment photos are
rectified along the card's own edges, and a spread is found, cut out and given suggested ids.

Spreads are composed here from the renderer's own functions (a Display of cards, nothing else
on the table), never by changing the renderer."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.enrol import load_face, remember_all
from vision.errors import EnrolmentError
from vision.faces import CARD_MM, FACE_H, FACE_PX_PER_MM, FACE_W, drawn_faces
from vision.identify import Identifier
from vision.outline import card_boxes, card_quad, photo_outline, rectify, white_patch
from vision.spread import find_spread
from vision.training.synth import RenderedScene, RenderSettings, TableLayout, render_table
from vision.zones import default_zones

SPREAD = (5, 17, 40, 41, 60, 77, 90, 100, 111)


def spread_layout(cards: tuple[int, ...] = SPREAD) -> TableLayout:
    """The cards laid in the Display's nine places, nothing else on the table (no decks)."""
    slots = [(lv, sl) for lv, sl, _ in default_zones().display]
    return TableLayout(
        display=tuple((lv, sl, c) for (lv, sl), c in zip(slots, cards, strict=False)),
        energy_row=(),
        players=(),
        decks=(),
    )


def render_spread(
    seed: int, cards: tuple[int, ...] = SPREAD, faces: tuple[np.ndarray, ...] | None = None
) -> RenderedScene:
    return render_table(spread_layout(cards), seed, RenderSettings(hand_prob=0.0), faces=faces)


def loose_photo(face: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A phone photo with 2-5 mm of table round the card and each corner up to 1.5 mm off; the
    photo and the card's true corners in it."""
    ppm = FACE_PX_PER_MM
    m = rng.uniform(2, 5, 4) * ppm
    src = np.float32([[0, 0], [FACE_W, 0], [FACE_W, FACE_H], [0, FACE_H]])
    dst = (src + np.float32([m[0], m[1]]) + rng.uniform(-1.5, 1.5, (4, 2)) * ppm).astype(np.float32)
    size = (round(FACE_W + m[0] + m[2]), round(FACE_H + m[1] + m[3]))
    photo = cv2.warpPerspective(
        face,
        cv2.getPerspectiveTransform(src, dst),
        size,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(70, 90, 60),
    )
    return photo, dst


def test_a_loose_crop_is_rectified_along_the_cards_outline() -> None:
    rng = np.random.default_rng(3)
    for card in (5, 40, 90):
        face = drawn_faces()[card]
        photo, corners = loose_photo(face, rng)
        quad = card_quad(photo)
        assert quad is not None
        assert np.abs(quad - corners).max() < 1.5 * FACE_PX_PER_MM  # within 1.5 mm at every corner
        flat = rectify(photo)
        assert flat.shape == face.shape
        plain = cv2.resize(photo, (FACE_W, FACE_H))
        err = np.abs(flat.astype(int) - face).mean()
        assert err < np.abs(plain.astype(int) - face).mean() / 2, card  # far closer than resized whole


def test_a_photo_cropped_to_the_card_is_taken_whole() -> None:
    face = drawn_faces()[5]  # its frame line is a card-shaped outline inside the card
    assert card_quad(face) is not None
    assert photo_outline(face) is None
    assert np.array_equal(rectify(face), face)


def test_white_patch_removes_a_colour_cast() -> None:
    face = drawn_faces()[17]
    cast = cv2.transform(face, np.diag([0.9, 0.97, 0.94]).astype(np.float32))  # (no channel clipped)
    top = np.percentile(white_patch(cast).reshape(-1, 3).astype(float), 97, axis=0)
    assert top.max() - top.min() <= 2  # the card's brightest colours are grey again
    ratio = white_patch(cast).reshape(-1, 3).astype(float).mean(axis=0) / face.reshape(-1, 3).mean(axis=0)
    assert ratio.max() - ratio.min() < 0.01  # what is left of the cast is one brightness for all channels


def test_enrolment_reads_a_loose_crop_and_still_names_a_bad_one(tmp_path: Path) -> None:
    face = drawn_faces()[60]
    photo, _ = loose_photo(face, np.random.default_rng(5))
    cv2.imwrite(str(tmp_path / "60.png"), photo)
    loaded = load_face(tmp_path / "60.png")
    assert np.abs(loaded.astype(int) - face).mean() < 12
    cv2.imwrite(str(tmp_path / "61.png"), np.full((400, 400, 3), 120, np.uint8))
    with pytest.raises(EnrolmentError, match=r"61\.png is 400x400 .*no card's outline"):
        load_face(tmp_path / "61.png")


def test_cards_are_found_at_any_turn() -> None:
    ppm, face = 2.0, drawn_faces()[17]
    for turn in (0.0, 25.0, -40.0, 90.0, 180.0):
        img = np.full((500, 500, 3), (60, 110, 60), np.uint8)
        m = cv2.getRotationMatrix2D((FACE_W / 2, FACE_H / 2), -turn, ppm / FACE_PX_PER_MM)
        m[:, 2] += (250 - FACE_W / 2, 250 - FACE_H / 2)
        img = cv2.warpAffine(face, m, (500, 500), dst=img, borderMode=cv2.BORDER_TRANSPARENT)
        boxes = card_boxes(img, ppm)
        assert len(boxes) == 1, turn
        (x, y), found, (long_, short) = boxes[0]
        assert abs(x - 125) < 1.5 and abs(y - 125) < 1.5
        assert abs((found - turn + 90) % 180 - 90) < 1.5, (turn, found)
        assert abs(long_ - CARD_MM[1]) < 3 and abs(short - CARD_MM[0]) < 3
        # the whole chain: identified in whichever reading direction it lies
        spread = find_spread(img, np.diag([ppm, ppm, 1.0]), Identifier())
        assert [c.card for c in spread] == [17], turn
        cut, up, down = (
            cv2.cvtColor(f, cv2.COLOR_BGR2GRAY).astype(np.float32).ravel()
            for f in (spread[0].face, face, cv2.rotate(face, cv2.ROTATE_180))
        )
        assert np.corrcoef(cut, up)[0, 1] > np.corrcoef(cut, down)[0, 1] + 0.3, turn  # cut out upright


@pytest.fixture(scope="module")
def scene() -> RenderedScene:
    return render_spread(31)


def test_a_rendered_spread_is_found_and_every_id_suggested(scene: RenderedScene) -> None:
    spread = find_spread(scene.image, scene.homography, Identifier())
    truth = {o.card: o.box_mm for o in scene.objects if o.card is not None}
    assert sorted(c.card for c in spread) == sorted(SPREAD)
    for c in spread:
        x0, y0, x1, y1 = truth[c.card]
        assert abs(c.center[0] - (x0 + x1) / 2) < 3 and abs(c.center[1] - (y0 + y1) / 2) < 3
        assert c.face.shape == (FACE_H, FACE_W, 3) and c.suggestions[0] == c.card
        assert len(set(c.suggestions)) == 3
    rows = [round(c.center[1] / CARD_MM[1]) for c in spread]
    assert rows == sorted(rows)  # in reading order: by rows, then left to right


def test_enrolled_ids_are_not_suggested_again(scene: RenderedScene) -> None:
    spread = find_spread(scene.image, scene.homography, Identifier(), enrolled={5, 17})
    suggested = {c.card for c in spread}
    assert not suggested & {5, 17}
    assert suggested >= set(SPREAD) - {5, 17}
    assert len(suggested) == len(spread)  # no id suggested twice


def test_several_cards_are_enrolled_at_once_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faces = drawn_faces()
    (tmp_path / "007.jpg").write_bytes(b"old photo of card 7")
    paths = remember_all(tmp_path, {7: faces[7], 8: faces[8]})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["7.png", "8.png"]  # 007.jpg replaced
    assert paths == {7: tmp_path / "7.png", 8: tmp_path / "8.png"}
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(EnrolmentError, match="card 9: expected an 8-bit BGR image"):
        remember_all(tmp_path, {7: faces[9], 9: np.zeros((4, 4), np.uint8)})
    real_fsync = os.fsync
    calls = iter(range(100))

    def disk_full(fd: int) -> None:
        if next(calls) == 1:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left"):
        remember_all(tmp_path, {7: faces[9], 8: faces[10]})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing changed, no leftovers
