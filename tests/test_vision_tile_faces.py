"""Tiles compared with their faces (issue 19): the committed own faces are the drawing, a soft
crop of a tile matches its own Builder's face and a drawing no face shows matches none, the
reader weighs a Builder (and an unsure dial) by the faces only where a set of faces matches,
and a table's enrolled photos are faces too (a "tile" like none of them is read empty)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from benchmarks.workbench_heldout import HeldOutArt
from referee.contrivance.data import BUILDERS
from vision.errors import EnrolmentError, ModelFileError
from vision.paths import LOCATIONS
from vision.tile_faces import (
    CROP_PX,
    DRAWING_TEMPERATURE,
    PHOTO_TEMPERATURE,
    TILE_IN_CROP_PX,
    enrolled_faces,
    load_faces,
)
from vision.training.evaluate import HELDOUT
from vision.training.tiles import OWN_DAMAGE, own_art
from vision.training.workbench import own_faces, random_workbench, render_workbench
from vision.workbench import FACE_MATCH, FACE_NONE, SquareReading, WorkbenchReader


@pytest.fixture(scope="module")
def reader() -> WorkbenchReader:
    return WorkbenchReader(rows=6)


def _crop(tile: np.ndarray, shift: tuple[int, int] = (2, -3), soft: float = 1.3) -> np.ndarray:
    """A tile as a square's upright crop sees it: small, off centre, soft, under another light."""
    crop = np.full((CROP_PX, CROP_PX, 3), (90, 100, 110), np.uint8)
    small = cv2.resize(tile[..., :3], (TILE_IN_CROP_PX, TILE_IN_CROP_PX), interpolation=cv2.INTER_AREA)
    o = (CROP_PX - TILE_IN_CROP_PX) // 2
    crop[o + shift[1] : o + shift[1] + TILE_IN_CROP_PX, o + shift[0] : o + shift[0] + TILE_IN_CROP_PX] = small
    lit = cv2.GaussianBlur(crop.astype(np.float32), (0, 0), soft) * 0.85 + 20
    return np.clip(lit, 0, 255).astype(np.uint8)


def test_the_committed_own_faces_are_the_drawing(tmp_path: Path) -> None:
    with np.load(LOCATIONS.workbench_tiles) as committed, np.load(own_faces(tmp_path / "faces.npz")) as fresh:
        assert set(committed.files) == {"builder", "double", "value", "face"}
        for name in committed.files:
            assert np.array_equal(committed[name], fresh[name]), name
    faces = load_faces(LOCATIONS.workbench_tiles)
    assert len(faces) == len(BUILDERS) * 2 * 7 and faces.temperature == DRAWING_TEMPERATURE


def test_a_soft_crop_matches_its_builders_face_and_an_unseen_drawing_none() -> None:
    faces = load_faces(LOCATIONS.workbench_tiles)
    own, other = own_art(), HeldOutArt()
    for b in BUILDERS:
        match, logits = faces.builder_scores(_crop(own.tile(b, False, 3)), False, 3)
        assert BUILDERS[int(match.argmax())] == b and match.max() >= FACE_MATCH
        assert logits[BUILDERS.index(b)] == 0 and np.sort(logits)[-2] < -2  # the next 7 times less
        match, _ = faces.builder_scores(_crop(other.tile(b, False, 3)), False, 3)
        assert match.max() < FACE_MATCH  # a drawing no face shows: left to the network


def _reading(content: list[float]) -> SquareReading:
    value = np.eye(7)[3]
    return SquareReading(np.array(content), 0.0, np.eye(4)[0], value)


def test_the_reader_weighs_builders_by_the_faces_only_where_they_match(reader: WorkbenchReader) -> None:
    """An own Engineer the network reads as a Regulator is read as an Engineer, the Builders'
    share of the content kept; the held-out drawing's tile, and a square read empty, are left
    as they were; without faces nothing changes."""
    # hand, empty, Engineer, Mechanic, Regulator, Cognicator, Assembler, Intendent
    unsure = [0.02, 0.08, 0.25, 0.05, 0.45, 0.05, 0.05, 0.05]
    empty = [0.0, 0.9, 0.02, 0.02, 0.02, 0.02, 0.01, 0.01]
    crops = np.stack(
        [_crop(own_art().tile("Engineer", False, 3)), _crop(HeldOutArt().tile("Engineer", False, 3))] * 2
    )
    readings = [_reading(unsure), _reading(unsure), _reading(empty), _reading(empty)]
    got = reader.faced_readings(crops, readings)
    assert BUILDERS[int(got[0].content[2:].argmax())] == "Engineer" and got[0].content[2] > 0.9 * 0.9
    assert np.isclose(got[0].content[2:].sum(), sum(unsure[2:])) and np.allclose(
        got[0].content[:2], unsure[:2]
    )
    assert got[0].value is readings[0].value and got[0].facing is readings[0].facing
    assert got[1:] == readings[1:]
    kept = reader.faces
    reader.faces = []
    try:
        assert reader.faced_readings(crops, readings) is readings
    finally:
        reader.faces = kept


def test_the_reader_reads_with_the_faces_a_builder_the_network_misreads(reader: WorkbenchReader) -> None:
    """A development frame (seed 8,950,046: far camera, 0.6-0.7 px/mm) whose Engineer at row 1
    column 1 the network alone read as a Regulator (2026-11-24): with the faces every square
    is read right, that Engineer surely."""
    seed = 8_950_046
    layout = random_workbench(np.random.default_rng(seed))
    scene = render_workbench(
        layout, seed, replace(HELDOUT, size=(1280, 720)), own_art(), damage_style=OWN_DAMAGE
    )
    reader.rows = layout.rows
    obs = reader.read(scene.image, scene.homography, 0.0)
    truth = {(s.row, s.column): s for s in scene.truth.squares}
    for s in obs.squares:
        t = truth[(s.row, s.column)].tile
        want = None if t is None else (t.builder, t.double, t.facing, t.value)
        assert (
            None if s.tile is None else (s.tile.builder, s.tile.double, s.tile.facing, s.tile.value)
        ) == want
    engineer = obs.square(1, 1)
    assert engineer is not None and engineer.tile is not None and engineer.tile.builder == "Engineer"
    assert engineer.confidence >= 0.85


def _enrolled(tmp_path: Path, art: HeldOutArt) -> Path:
    """A table's enrolment folder: each Builder's single tile of ``art`` at 3, photographed."""
    folder = tmp_path / "mine"
    folder.mkdir()
    for b in BUILDERS:
        cv2.imwrite(str(folder / f"{b}-3.png"), cv2.resize(art.tile(b, False, 3)[..., :3], (200, 200)))
    return folder


def test_a_tables_enrolled_photos_are_faces_too(tmp_path: Path) -> None:
    art = HeldOutArt()
    folder = _enrolled(tmp_path, art)
    photos = enrolled_faces(folder)
    assert photos.temperature == PHOTO_TEMPERATURE and len(photos) >= len(BUILDERS)
    for b in BUILDERS:
        match, _ = photos.builder_scores(_crop(art.tile(b, False, 3)), False, 3)
        assert BUILDERS[int(match.argmax())] == b and match.max() >= FACE_MATCH
    r = WorkbenchReader(rows=3, tiles=folder)
    assert [f.temperature for f in r.faces] == [DRAWING_TEMPERATURE, PHOTO_TEMPERATURE]
    unsure = [0.02, 0.08, 0.25, 0.05, 0.45, 0.05, 0.05, 0.05]
    got = r.faced_readings(np.stack([_crop(art.tile("Engineer", False, 3))]), [_reading(unsure)])
    assert BUILDERS[int(got[0].content[2:].argmax())] == "Engineer"
    # a bare square of grain the network takes for a tile: like none of this table's tiles
    grain = cv2.GaussianBlur(np.random.default_rng(3).normal(120, 25, (CROP_PX, CROP_PX, 3)), (0, 0), 2.0)
    bare = np.stack([np.clip(grain, 0, 255).astype(np.uint8)])
    got = r.faced_readings(bare, [_reading(unsure)])
    assert int(got[0].content[1:].argmax()) == 0 and np.isclose(got[0].content.sum(), sum(unsure))
    own_only = WorkbenchReader(rows=3)  # no table's photos: the network's reading stands
    assert own_only.faced_readings(bare, [_reading(unsure)])[0].content.tolist() == unsure


def test_a_tile_read_turned_wrong_is_turned_not_emptied(tmp_path: Path) -> None:
    """On a table whose photos are enrolled, a tile whose facing the network misread matches no
    face as read; turned a quarter it matches its own, so it stays a tile and its facing is
    mended (the rule "like no face: the mat's grain" once emptied two Doubles so)."""
    art = HeldOutArt()
    folder = _enrolled(tmp_path, art)
    r = WorkbenchReader(rows=3, tiles=folder)
    upright = _crop(art.tile("Engineer", False, 3))
    turned = np.ascontiguousarray(np.rot90(upright, 3, axes=(0, 1)))  # read as facing north: wrong
    match, _ = r.faces[1].builder_scores(turned, False, 3)
    assert match.max() < FACE_NONE  # as read, like no face of the table
    unsure = [0.02, 0.08, 0.25, 0.05, 0.45, 0.05, 0.05, 0.05]
    got = r.faced_readings(np.stack([turned]), [_reading(unsure)])[0]
    assert int(got.content[1:].argmax()) != 0  # still a tile
    assert BUILDERS[int(got.content[2:].argmax())] == "Engineer"
    assert got.facing.tolist() == np.eye(4)[1].tolist()  # turned a quarter back: upright


def test_bad_faces_are_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ModelFileError, match=r"tile faces file .*none\.npz not found"):
        WorkbenchReader(own_faces=tmp_path / "none.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not faces")
    with pytest.raises(ModelFileError, match=r"tile faces file .*junk\.npz cannot be read"):
        WorkbenchReader(own_faces=junk)
    with pytest.raises(EnrolmentError, match="does not exist"):
        WorkbenchReader(tiles=tmp_path / "nowhere")
    from benchmarks.workbench import main

    assert main(["--frames", "1", "--conditions", "own", "--tiles", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "nowhere" in err[0]


def test_an_unsure_dial_is_weighed_by_the_faces_at_each_value(reader: WorkbenchReader) -> None:
    """A matched tile's dial read under FACE_DIAL_UNSURE is weighed by its Builder's faces at
    each value (the own Engineer at 3, read 5 rather than 3); a sure dial is left as read."""
    crop = np.stack([_crop(own_art().tile("Engineer", False, 3))])
    content = np.array([0.0, 0.05, 0.8, 0.03, 0.03, 0.03, 0.03, 0.03])
    unsure = np.array([0.02, 0.02, 0.03, 0.4, 0.03, 0.45, 0.05])
    got = reader.faced_readings(crop, [SquareReading(content, 0.0, np.eye(4)[0], unsure)])[0]
    assert int(got.value.argmax()) == 3 and np.isclose(got.value.sum(), 1)
    sure = np.array([0.0, 0.0, 0.0, 0.05, 0.0, 0.95, 0.0])
    got = reader.faced_readings(crop, [SquareReading(content, 0.0, np.eye(4)[0], sure)])[0]
    assert got.value is sure
