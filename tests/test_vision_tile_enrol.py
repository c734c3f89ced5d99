"""Enrolment of a table's own Contrivance tiles (issue 19): the photo folder, the scenes drawn
with the photos, the CLI, and a fine-tune smoke run whose model the reader loads."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.errors import EnrolmentError
from vision.tile_enrol import MAT_ASPECT, load_tiles, tile_key
from vision.training.synth import RenderSettings
from vision.training.tiles import PhotoArt, own_art, random_art
from vision.training.workbench import (
    TileLayout,
    WorkbenchLayout,
    enrol,
    enrolled_scene,
    main,
    render_workbench,
)
from vision.workbench import WORKBENCH, WorkbenchReader, square_crops

#: A look no other test draws stands for the table's own tiles ("photos" of them).
LOOK = random_art(5_000_123)


def _photos(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, key in (
        ("Engineer-3.png", ("Engineer", False, 3)),
        ("mechanic-double-6.jpg", ("Mechanic", True, 6)),
        ("Intendent-0.png", ("Intendent", False, 0)),
    ):
        tile = LOOK.tile(*key)[..., :3]
        cv2.imwrite(str(folder / name), cv2.resize(tile, (300, 296)))  # a loose crop, another size
    cv2.imwrite(
        str(folder / "mat.jpg"), LOOK.mat(np.random.default_rng(1), 560, round(560 / MAT_ASPECT), 105.6, 16)
    )
    (folder / "notes.txt").write_text("not an image: ignored")
    return folder


def test_file_names_say_what_the_photo_shows(tmp_path: Path) -> None:
    assert tile_key(Path("Engineer-3.jpg")) == ("Engineer", False, 3)
    assert tile_key(Path("regulator-double-6.png")) == ("Regulator", True, 6)
    for bad in ("Engineer.jpg", "Engineer-7.jpg", "Tinker-3.jpg", "Engineer-single-3.jpg", "Engineer-x.jpg"):
        with pytest.raises(EnrolmentError, match=f"cannot read file name {bad}"):
            tile_key(Path(bad))
    got = load_tiles(_photos(tmp_path / "mine"))
    assert set(got.tiles) == {("Engineer", False, 3), ("Mechanic", True, 6), ("Intendent", False, 0)}
    assert got.mat is not None and all(p.shape == (240, 240, 3) for p in got.tiles.values())
    line = got.summary()
    assert "3 tile photos (1 Double)" in line and "mat photo: yes" in line
    assert "no photo of Regulator, Cognicator, Assembler" in line and "no dial showing 1, 2, 4, 5" in line


def test_bad_folders_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EnrolmentError, match="does not exist"):
        load_tiles(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(EnrolmentError, match="no tile photos"):
        load_tiles(tmp_path / "empty")
    cases = {
        "wide": ("Engineer-1.png", np.full((200, 320, 3), 128, np.uint8), "crop the photo to the tile"),
        "small": ("Engineer-1.png", np.full((90, 90, 3), 128, np.uint8), "at least 120 px"),
        "mat": ("mat.png", np.full((300, 300, 3), 128, np.uint8), "crop the photo to the mat"),
    }
    for name, (file, img, msg) in cases.items():
        (tmp_path / name).mkdir()
        cv2.imwrite(str(tmp_path / name / file), img)
        with pytest.raises(EnrolmentError, match=msg):
            load_tiles(tmp_path / name)
    twice = _photos(tmp_path / "twice")
    cv2.imwrite(str(twice / "engineer-3.jpg"), np.full((200, 200, 3), 90, np.uint8))
    with pytest.raises(EnrolmentError, match="Engineer 3 enrolled twice"):
        load_tiles(twice)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "Engineer-2.png").write_bytes(b"not a png")
    with pytest.raises(EnrolmentError, match="cannot read image"):
        load_tiles(tmp_path / "junk")


def _ncc(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(np.float32).ravel(), b.astype(np.float32).ravel()
    a, b = a - a.mean(), b - b.mean()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-9))


def test_scenes_show_the_enrolled_photos(tmp_path: Path) -> None:
    got = load_tiles(_photos(tmp_path / "mine"))
    art = PhotoArt(got.tiles, got.mat, own_art())
    layout = WorkbenchLayout(
        3, (((1, 1), TileLayout("Engineer", False, 0, 3)), ((1, 2), TileLayout("Engineer", False, 0, 4)))
    )
    scene = render_workbench(
        layout, 8_700_200, RenderSettings(hand_prob=0.0, effects=False, jitter_mm=0.0, jitter_deg=0.0), art
    )
    crops = square_crops(scene.image, scene.homography, [(1, 1), (1, 2)], WORKBENCH)
    photo = cv2.resize(got.tiles[("Engineer", False, 3)], (58, 58), interpolation=cv2.INTER_AREA)
    enrolled_sq, drawn_sq = (_ncc(c[3:61, 3:61], photo) for c in crops)
    assert enrolled_sq > 0.8 > drawn_sq  # Engineer 3 is the photo; Engineer 4, not enrolled, is drawn
    scene = enrolled_scene(5_500_001, RenderSettings(hand_prob=0.0), got)
    keys = {(t.builder, t.double, t.value) for _, t in scene.layout.tiles}
    assert keys & set(got.tiles)  # most tiles of an enrolled scene are the photos


def test_dial_values_not_photographed_are_composed_from_the_photographed_dial(tmp_path: Path) -> None:
    """Engineer photographed at every value and its Double at 6 only: the Double at 0-5 is
    composed (its photo with the dial of the Engineer photo showing that value), and each
    composed tile looks most like the drawn Double at its own value; three photos of three
    tiles show no dial, so nothing is composed from them. (The own look: one print per tile,
    only its dial changes, as on a real table.)"""
    folder = tmp_path / "dials"
    folder.mkdir()
    rng, own = np.random.default_rng(3), own_art()
    keys = [("Engineer", False, v) for v in range(7)] + [("Engineer", True, 6)]
    for b, d, v in keys:  # each photo cropped a little otherwise, under its own light
        photo = np.clip(PhotoArt.retake(own.tile(b, d, v)[..., :3].astype(np.float32), rng), 0, 255)
        cv2.imwrite(str(folder / f"{b}{'-double' if d else ''}-{v}.png"), photo.astype(np.uint8))
    got = load_tiles(folder)
    assert set(got.composed) == {("Engineer", True, v) for v in range(6)}
    assert "6 more composed" in got.summary()
    assert set(got.shown()) == set(got.tiles) | set(got.composed)
    truth = {v: own.tile("Engineer", True, v)[..., :3] for v in range(7)}
    for v in range(6):
        like = {u: _ncc(got.composed[("Engineer", True, v)], truth[u]) for u in range(7)}
        assert max(like, key=like.__getitem__) == v, (v, like)
    assert load_tiles(_photos(tmp_path / "few")).composed == {}


def test_a_photo_is_laid_each_time_as_another_photo_of_the_tile() -> None:
    """PhotoArt with a random stream lays the photo (and the mat photo) a little otherwise each
    time (crop, light, softness), still the same tile; without one, the photo as it is."""
    photo = LOOK.tile("Mechanic", False, 2)[..., :3]
    plain = PhotoArt({("Mechanic", False, 2): photo}, None, own_art())
    assert np.array_equal(plain.tile("Mechanic", False, 2), plain.tile("Mechanic", False, 2))
    art = PhotoArt({("Mechanic", False, 2): photo}, None, own_art(), rng=np.random.default_rng(0))
    a, b = art.tile("Mechanic", False, 2), art.tile("Mechanic", False, 2)
    assert a.shape == photo.shape and not np.array_equal(a, b)
    assert _ncc(a, photo) > 0.85 and _ncc(b, photo) > 0.85
    mat = LOOK.mat(np.random.default_rng(1), 560, round(560 / MAT_ASPECT), 105.6, 16)
    art = PhotoArt({}, mat, own_art(), rng=np.random.default_rng(0))
    m1, m2 = (art.mat(np.random.default_rng(2), 560, 349, 105.6, 16) for _ in range(2))
    assert m1.shape == (349, 560, 3) and not np.array_equal(m1, m2) and _ncc(m1, m2) > 0.85


def test_cli_checks_a_folder_and_answers_help(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["enrol-check", str(_photos(tmp_path / "mine"))]) == 0
    assert "3 tile photos" in capsys.readouterr().out
    assert main(["enrol-check", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: tile enrolment: folder") and "\n" not in err
    assert main(["enrol", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")]) == 2
    for cmd in ("enrol", "enrol-check"):
        with pytest.raises(SystemExit) as exc:
            main([cmd, "--help"])
        assert exc.value.code == 0
        assert "usage" in capsys.readouterr().out


@pytest.mark.slow
def test_enrol_fine_tunes_a_model_the_reader_loads(tmp_path: Path) -> None:
    line = enrol(_photos(tmp_path / "mine"), tmp_path / "run", scenes=2, val=1, epochs=1)
    model = tmp_path / "run" / "workbench.onnx"
    assert model.is_file() and str(model) in line
    scene = enrolled_scene(5_500_003, RenderSettings(hand_prob=0.0), load_tiles(tmp_path / "mine"))
    obs = WorkbenchReader(model, rows=scene.layout.rows).read(scene.image, scene.homography, 0.0)
    assert len(obs.squares) == 5 * scene.layout.rows
