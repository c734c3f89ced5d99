"""Enrolment from a spread (issue 14): the user's cards laid out on the calibrated table, one
photo, the suggested ids confirmed or corrected on the dashboard (admin PIN and CSRF token, like
every change) or at the command line; the confirmed cards are enrolled at once and read right
from then on, also by another camera."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.app.questions import CardQuestions
from referee.app.spread import SpreadEnrolment, enrol_spread_command
from referee.app.vision_cli import main
from tests.test_vision_enrol import REAL_LOOKS_LIKE, _table_of_real_cards, real_card
from tests.test_vision_spread import spread_layout
from tests.web_testing import ApiClient, make_app
from vision.faces import FACE_H, FACE_W, drawn_faces
from vision.identify import Identifier
from vision.observe import Assembler
from vision.training.evaluate import content, oracle_detections
from vision.training.synth import RenderedScene, RenderSettings, render_table

#: The spread: the four cards of another printing the drawn faces do not show, and five others.
CARDS = (20, 21, 22, 23, 5, 17, 60, 90, 111)


def _faces() -> tuple[np.ndarray, ...]:
    faces = list(drawn_faces())
    for card in REAL_LOOKS_LIKE:
        faces[card] = real_card(card)
    return tuple(faces)


@pytest.fixture(scope="module")
def spread_png() -> bytes:
    scene = render_table(spread_layout(CARDS), 71, RenderSettings(hand_prob=0.0), faces=_faces())
    ok, png = cv2.imencode(".png", scene.image)
    assert ok
    return png.tobytes()


@pytest.fixture(scope="module")
def table() -> RenderedScene:
    """Another table, another camera: the four cards of the other printing in the Display."""
    layout, faces = _table_of_real_cards()
    return render_table(layout, 62, RenderSettings(hand_prob=0.0), faces=faces)


def _reads_right(table: RenderedScene, identifier: Identifier) -> bool:
    assembler = Assembler(identifier=identifier)
    obs = assembler.assemble(table.image, table.homography, oracle_detections(table), ())
    return content(obs) == content(table.truth)


def _truth(spread: dict) -> dict[int, int]:
    """Each place's true card, by where it lies: the spread's places follow the Display's."""
    from vision.zones import default_zones

    slots = [(r[0] + r[2] / 2, r[1] + r[3] / 2) for _, _, r in default_zones().display]
    out = {}
    for c in spread["cards"]:
        x, y = c["center_mm"]
        k = int(np.argmin([np.hypot(x - sx, y - sy) for sx, sy in slots]))
        out[c["place"]] = CARDS[k]
    return out


def test_a_spread_photographed_confirmed_and_enrolled(
    tmp_path: Path, spread_png: bytes, table: RenderedScene
) -> None:
    enrol = tmp_path / "enrol"
    assert not _reads_right(table, Identifier())  # the drawn faces do not show this printing
    app = make_app(tmp_path / "games", SPREAD_ENROLMENT=SpreadEnrolment(enrol))
    api, stranger = ApiClient(app), ApiClient(app)  # the stranger never gave the PIN
    assert api.get("/api/spread").get_json() == {"spread": None, "enrolling": True}
    png = {"data": spread_png, "content_type": "image/png"}
    assert stranger.post("/api/spread", pin=None, **png).status_code == 401  # the admin PIN is needed
    assert api.post("/api/spread", csrf=False, **png).status_code == 403  # and the CSRF token
    wrong = api.post("/api/spread", {"photo": "x"})
    assert wrong.status_code == 415 and "image/jpeg or image/png" in wrong.get_json()["error"]
    garbage = api.post("/api/spread", data=b"not a photo", content_type="image/jpeg")
    assert garbage.status_code == 400 and "not a JPEG or PNG image" in garbage.get_json()["error"]
    _ok, blank = cv2.imencode(".png", np.random.default_rng(0).integers(0, 255, (720, 1280, 3), np.uint8))
    no_markers = api.post("/api/spread", data=blank.tobytes(), content_type="image/png")
    assert no_markers.status_code == 422 and "markers" in no_markers.get_json()["error"]

    resp = api.post("/api/spread", **png)
    assert resp.status_code == 200, resp.get_json()
    spread = resp.get_json()
    assert len(spread["cards"]) == len(CARDS)
    assert api.get("/api/spread").get_json() == {"spread": spread, "enrolling": True}
    truth = _truth(spread)
    suggested = {c["place"]: c["card"] for c in spread["cards"]}
    drawn = [p for p, card in truth.items() if card not in REAL_LOOKS_LIKE]
    assert all(suggested[p] == truth[p] for p in drawn)  # the cards the references know: right
    assert len(set(suggested.values())) == len(suggested)  # no id suggested twice
    face = api.get("/api/spread/0/face.png")
    assert face.status_code == 200 and face.mimetype == "image/png"
    assert cv2.imdecode(np.frombuffer(face.data, np.uint8), cv2.IMREAD_COLOR).shape == (FACE_H, FACE_W, 3)
    assert api.get("/api/spread/99/face.png").status_code == 404

    confirm = "/api/spread/confirm"
    body = {"spread": spread["id"], "cards": [{"place": p, "card": c} for p, c in truth.items()]}
    twice = api.post(
        confirm, {"spread": spread["id"], "cards": [{"place": 0, "card": 5}, {"place": 1, "card": 5}]}
    )
    assert twice.status_code == 400 and "card 5 given twice" in twice.get_json()["error"]
    place_twice = api.post(
        confirm, {"spread": spread["id"], "cards": [{"place": 0, "card": 5}, {"place": 0, "card": 6}]}
    )
    assert place_twice.status_code == 400 and "place 0 given twice" in place_twice.get_json()["error"]
    bad_id = api.post(confirm, {"spread": spread["id"], "cards": [{"place": 0, "card": 112}]})
    assert bad_id.status_code == 400 and "card" in bad_id.get_json()["error"]
    assert api.post(confirm, {**body, "spread": spread["id"] + 1}).status_code == 404
    nowhere = api.post(confirm, {"spread": spread["id"], "cards": [{"place": 42, "card": 5}]})
    assert nowhere.status_code == 404 and "no card at place 42" in nowhere.get_json()["error"]
    assert stranger.post(confirm, body, pin=None).status_code == 401
    assert not enrol.exists()  # nothing was written by a refused confirmation

    done = api.post(confirm, body)  # the user corrected the four the references could not know
    assert done.status_code == 200, done.get_json()
    assert done.get_json() == {"ok": True, "enrolled": {str(c): f"{c}.png" for c in sorted(CARDS)}}
    assert sorted(p.name for p in enrol.iterdir()) == sorted(f"{c}.png" for c in CARDS)
    assert api.get("/api/spread").get_json()["spread"] is None
    assert api.post(confirm, body).status_code == 404  # enrolled already: the spread is closed
    assert _reads_right(table, Identifier(enrol_dir=str(enrol)))  # another camera reads them right


def test_a_spread_needs_a_folder_and_a_server_that_enrols(tmp_path: Path, spread_png: bytes) -> None:
    api = ApiClient(make_app(tmp_path / "games", SPREAD_ENROLMENT=SpreadEnrolment(None)))
    spread = api.post("/api/spread", data=spread_png, content_type="image/png").get_json()
    resp = api.post("/api/spread/confirm", {"spread": spread["id"], "cards": [{"place": 0, "card": 7}]})
    assert resp.status_code == 409 and "--enrol FOLDER" in resp.get_json()["error"]
    assert api.get("/api/spread").get_json()["spread"] == spread  # still open
    bare = ApiClient(make_app(tmp_path / "games2"))
    assert bare.get("/api/spread").get_json() == {"spread": None, "enrolling": False}
    resp = bare.post("/api/spread", data=spread_png, content_type="image/png")
    assert resp.status_code == 404 and "no spread enrolment" in resp.get_json()["error"]


def test_the_command_line_suggests_and_enrols_what_is_confirmed(
    tmp_path: Path, spread_png: bytes, table: RenderedScene, capsys: pytest.CaptureFixture[str]
) -> None:
    photo, enrol, sugg = tmp_path / "spread.png", tmp_path / "enrol", tmp_path / "ids.json"
    photo.write_bytes(spread_png)
    assert main(["enrol-spread", str(photo), "--enrol", str(enrol), "--suggestions", str(sugg)]) == 0
    out = capsys.readouterr().out
    assert f"{len(CARDS)} cards found" in out and "nothing enrolled" in out and not enrol.exists()
    ids = {int(k): v for k, v in json.loads(sugg.read_text()).items()}
    assert len(ids) == len(CARDS)
    # the user corrects the file (here: with the true card at each place)
    spread = SpreadEnrolment(None).take(cv2.imdecode(np.frombuffer(spread_png, np.uint8), cv2.IMREAD_COLOR))
    truth = _truth(spread)
    assert set(truth) == set(ids)
    sugg.write_text(json.dumps({str(p): c for p, c in truth.items()}))
    assert main(["enrol-spread", str(photo), "--enrol", str(enrol), "--confirm", str(sugg)]) == 0
    assert f"enrolled {len(CARDS)} cards" in capsys.readouterr().out
    assert _reads_right(table, Identifier(enrol_dir=str(enrol)))


def test_the_command_line_asks_at_a_terminal(tmp_path: Path, spread_png: bytes) -> None:
    photo = tmp_path / "spread.png"
    photo.write_bytes(spread_png)
    answers = iter(["", "-", "x", "33"] + [""] * 20)  # yes, skip, a typo (asked again), a correction
    said: list[str] = []
    assert enrol_spread_command(photo, tmp_path / "enrol", ask=lambda _q: next(answers), say=said.append) == 0
    assert any("'x' is not a card id" in s for s in said)
    enrolled = sorted(int(p.stem) for p in (tmp_path / "enrol").iterdir())
    assert len(enrolled) == len(CARDS) - 1 and 33 in enrolled


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.png"], "cannot read"),
        (["spread.png", "--confirm", "bad.json"], "is not JSON"),
        (["spread.png", "--confirm", "ids.json"], "expected a place number and a card id"),
        (["spread.png", "--confirm", "far.json"], "expected a card id 0..111, got 500"),
        (["blank.png", "--yes"], "markers"),
        (["text.png", "--yes"], "not a JPEG or PNG image"),
    ],
)
def test_bad_input_is_one_clear_line(
    tmp_path: Path, spread_png: bytes, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    (tmp_path / "spread.png").write_bytes(spread_png)
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "ids.json").write_text(json.dumps({"first": 5}))
    (tmp_path / "far.json").write_text(json.dumps({"0": 500}))
    cv2.imwrite(
        str(tmp_path / "blank.png"), np.random.default_rng(0).integers(0, 255, (720, 1280, 3), np.uint8)
    )
    (tmp_path / "text.png").write_text("hello")
    argv = ["enrol-spread", *(str(tmp_path / a) if a.endswith((".png", ".json")) else a for a in args)]
    assert main([*argv, "--enrol", str(tmp_path / "enrol")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err, err
    assert not (tmp_path / "enrol").exists()


def test_a_spread_confirmed_during_play_updates_the_live_matcher(
    tmp_path: Path, spread_png: bytes, table: RenderedScene
) -> None:
    questions = CardQuestions(tmp_path / "enrol")  # the spread sits beside the questions
    assembler = Assembler(identifier=Identifier())
    assembler.assemble(table.image, table.homography, oracle_detections(table), ())
    questions.offer(assembler, frame=1)  # the live loop's matcher is now known
    spread = questions.spread.take(cv2.imdecode(np.frombuffer(spread_png, np.uint8), cv2.IMREAD_COLOR))
    questions.spread.confirm(spread["id"], _truth(spread))
    obs = assembler.assemble(table.image, table.homography, oracle_detections(table), ())
    assert content(obs) == content(table.truth)  # the running game reads them from the next frame


def test_the_camera_page_offers_a_spread_when_one_is_attached(tmp_path: Path) -> None:
    with_spread = ApiClient(make_app(tmp_path / "a", SPREAD_ENROLMENT=SpreadEnrolment(None)))
    page = with_spread.get("/camera").get_data(as_text=True)
    assert 'src="/static/spread.js"' in page and 'id="spread-photo"' in page and 'id="spread-camera"' in page
    page = ApiClient(make_app(tmp_path / "b")).get("/camera").get_data(as_text=True)
    assert "spread.js" not in page and "spread-photo" not in page


def test_a_spread_is_taken_from_the_camera(tmp_path: Path, spread_png: bytes) -> None:
    """The referee's own camera takes the spread: the setup page's camera source (here a folder
    of images, as a camera's frames) when no game runs, else the running loop's latest still frame."""
    camera = tmp_path / "camera"
    camera.mkdir()
    _ok, blank = cv2.imencode(".png", np.full((720, 1280, 3), 90, np.uint8))
    (camera / "000.png").write_bytes(blank.tobytes())  # the camera settling: the last frame counts
    (camera / "001.png").write_bytes(spread_png)
    enrolment = SpreadEnrolment(None)
    api = ApiClient(make_app(tmp_path / "a", SPREAD_ENROLMENT=enrolment, CAMERA_SOURCE=str(camera)))
    stranger = ApiClient(make_app(tmp_path / "a2", SPREAD_ENROLMENT=enrolment, CAMERA_SOURCE=str(camera)))
    assert stranger.post("/api/spread/camera", pin=None).status_code == 401
    resp = api.post("/api/spread/camera")
    assert resp.status_code == 200, resp.get_json()
    assert len(resp.get_json()["cards"]) == len(CARDS)

    nothing = ApiClient(make_app(tmp_path / "b", SPREAD_ENROLMENT=SpreadEnrolment(None)))
    resp = nothing.post("/api/spread/camera")
    assert resp.status_code == 409 and "no camera source" in resp.get_json()["error"]
    gone = ApiClient(
        make_app(tmp_path / "c", SPREAD_ENROLMENT=SpreadEnrolment(None), CAMERA_SOURCE=str(tmp_path / "nope"))
    )
    resp = gone.post("/api/spread/camera")
    assert resp.status_code == 422 and "nope" in resp.get_json()["error"]

    live = SpreadEnrolment(None)  # a game is refereed: the loop holds the camera
    live.live_still = lambda: cv2.imdecode(np.frombuffer(spread_png, np.uint8), cv2.IMREAD_COLOR)
    resp = ApiClient(make_app(tmp_path / "d", SPREAD_ENROLMENT=live)).post("/api/spread/camera")
    assert resp.status_code == 200 and len(resp.get_json()["cards"]) == len(CARDS)


def test_the_command_line_takes_the_spread_from_a_camera(
    tmp_path: Path, spread_png: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    camera, enrol = tmp_path / "camera", tmp_path / "enrol"
    camera.mkdir()
    (camera / "000.png").write_bytes(spread_png)
    assert main(["enrol-spread", "--camera", str(camera), "--enrol", str(enrol), "--yes"]) == 0
    out = capsys.readouterr().out
    assert f"{len(CARDS)} cards found in camera {camera}" in out
    assert len(list(enrol.iterdir())) == len(CARDS)
    for argv in (["enrol-spread"], ["enrol-spread", str(tmp_path / "x.png"), "--camera", str(camera)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "either IMAGE or --camera SOURCE" in err


def test_the_live_loop_lends_its_still_frames_to_the_spread_only_while_it_runs(tmp_path: Path) -> None:
    from referee.app.live import LiveReferee

    runner = LiveReferee(pipeline=None, opener=lambda _s: None)  # type: ignore[arg-type]
    questions = CardQuestions(None)
    runner.ask(questions)
    assert runner.questions is questions and questions.spread.live_still() is None  # stopped
    still = np.zeros((4, 4, 3), np.uint8)
    runner._still = still
    assert questions.spread.live_still() is None  # a stopped loop's last frame is not the table now
    running = threading.Event()
    runner._thread = threading.Thread(target=running.wait, daemon=True)
    runner._thread.start()
    try:
        assert questions.spread.live_still() is still  # a running loop's is
    finally:
        running.set()
        runner._thread.join()
