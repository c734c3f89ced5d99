"""Ask during play and remember (issue 14): a card the camera sees whole but cannot place becomes
a question on the dashboard; the answer (admin PIN and CSRF token, like every change) enrols the
card as the camera saw it, and the referee reads it right from then on."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.app.questions import MAX_PENDING, CardQuestions
from tests.test_vision_enrol import REAL_LOOKS_LIKE, _table_of_real_cards
from tests.web_testing import ApiClient, make_app
from vision.faces import FACE_H, FACE_W
from vision.identify import Identifier
from vision.observe import Assembler
from vision.training.evaluate import content, oracle_detections
from vision.training.synth import RenderedScene, RenderSettings, render_table


@pytest.fixture(scope="module")
def scene() -> RenderedScene:
    layout, real_faces = _table_of_real_cards()
    return render_table(layout, 61, RenderSettings(hand_prob=0), faces=real_faces)


def _asking(scene: RenderedScene, questions: CardQuestions) -> Assembler:
    assembler = Assembler(identifier=Identifier())
    assembler.assemble(scene.image, scene.homography, oracle_detections(scene), ())
    questions.offer(assembler, frame=7)
    return assembler


def test_the_dashboard_asks_and_the_answer_is_remembered(tmp_path: Path, scene: RenderedScene) -> None:
    enrol = tmp_path / "enrol"
    questions = CardQuestions(enrol)
    assembler = _asking(scene, questions)
    questions.offer(assembler, frame=8)  # the same places again: no second question for them
    api = ApiClient(make_app(tmp_path / "games", CARD_QUESTIONS=questions))
    listed = api.get("/api/questions").get_json()
    assert listed["asking"] is True
    asked = {q["where"]: q for q in listed["questions"]}
    assert set(asked) == {f"display/1/{slot}" for slot in range(4)}
    assert all(q["frame"] == 7 and len(q["suggestions"]) == 3 for q in asked.values())
    first = asked["display/1/0"]["id"]
    resp = api.get(f"/api/questions/{first}/face.png")
    assert resp.status_code == 200 and resp.mimetype == "image/png"
    face = cv2.imdecode(np.frombuffer(resp.data, np.uint8), cv2.IMREAD_COLOR)
    assert face.shape == (FACE_H, FACE_W, 3)

    url = f"/api/questions/{first}"
    assert api.post(url, {"card": 20}, pin=None).status_code == 401  # the admin PIN is needed
    assert api.post(url, {"card": 20}, csrf=False).status_code == 403  # and the CSRF token
    bad = api.post(url, {"card": 112})
    assert bad.status_code == 400 and "card" in bad.get_json()["error"]
    missing = api.post("/api/questions/999", {"card": 20})
    assert missing.status_code == 404 and "no such open question" in missing.get_json()["error"]
    assert not enrol.exists()  # nothing was written by a refused answer

    for slot, card in enumerate(REAL_LOOKS_LIKE):
        resp = api.post(f"/api/questions/{asked[f'display/1/{slot}']['id']}", {"card": card})
        assert resp.status_code == 200, resp.get_json()
        assert resp.get_json() == {"ok": True, "card": card, "enrolled": f"{card}.png"}
        assert (enrol / f"{card}.png").is_file()
    assert api.get("/api/questions").get_json()["questions"] == []
    assert api.post(url, {"card": 20}).status_code == 404  # answered already
    obs = assembler.assemble(scene.image, scene.homography, oracle_detections(scene), ())
    assert content(obs) == content(scene.truth)  # read right from the next frame on
    assert not assembler.last_questions


def test_an_answer_needs_a_folder_to_remember_it_in(tmp_path: Path, scene: RenderedScene) -> None:
    questions = CardQuestions(None)
    _asking(scene, questions)
    api = ApiClient(make_app(tmp_path / "games", CARD_QUESTIONS=questions))
    first = api.get("/api/questions").get_json()["questions"][0]["id"]
    resp = api.post(f"/api/questions/{first}", {"card": 20})
    assert resp.status_code == 409 and "--enrol FOLDER" in resp.get_json()["error"]
    assert len(api.get("/api/questions").get_json()["questions"]) == 4  # still open


def test_without_a_camera_pipeline_nothing_is_asked(tmp_path: Path) -> None:
    api = ApiClient(make_app(tmp_path / "games"))
    assert api.get("/api/questions").get_json() == {"questions": [], "asking": False}
    assert api.get("/api/questions/1/face.png").status_code == 404
    resp = api.post("/api/questions/1", {"card": 20})
    assert resp.status_code == 404 and "no camera pipeline" in resp.get_json()["error"]


def test_only_the_newest_questions_are_kept(scene: RenderedScene) -> None:
    questions = CardQuestions(None)
    assembler = _asking(scene, CardQuestions(None))
    seen = assembler.last_questions
    for frame in range(MAX_PENDING):  # four new places a frame
        assembler.last_questions = [replace(q, where=f"{q.where}/{frame}") for q in seen]
        questions.offer(assembler, frame)
    pending = questions.pending()
    assert len(pending) == MAX_PENDING and pending[-1]["frame"] == MAX_PENDING - 1
    assert pending[0]["frame"] == MAX_PENDING - MAX_PENDING // len(seen)
