"""Cards the referee cannot place, asked on the dashboard; the answer enrols the card (issue 14:
practical enrolment for a real deck).

A card seen whole whose identification is unsure becomes a question
(:attr:`vision.observe.Assembler.last_questions`: the card as the camera saw it and the likeliest
ids). The live loop offers each frame's questions here (:meth:`CardQuestions.offer`); the
dashboard lists them (``GET /api/questions``), shows the card (``GET /api/questions/<id>/face.png``)
and takes the answer with the admin PIN (``POST /api/questions/<id>``): the card as the camera
saw it is written to the enrolment folder (:func:`referee.app.enrolling.enrol_confirmed`, so it is
remembered across games) and becomes that card's reference at once (:meth:`vision.identify.Identifier.enrol`).
One question per place is kept, the newest :data:`MAX_PENDING` in all.

Beside the questions sits the spread enrolment (:attr:`CardQuestions.spread`,
``referee/app/spread.py``): the same enrolment folder, and the identifier the live loop last
asked with, so cards confirmed from a spread during a game are read from the next frame on.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.app.enrolling import enrol_confirmed, face_png
from referee.app.spread import SpreadEnrolment
from vision.faces import N_CARDS
from web.live import QuestionRefused

if TYPE_CHECKING:
    from vision.identify import Identifier
    from vision.observe import Assembler, Question

MAX_PENDING = 12
NO_FOLDER_FOR_ANSWER = (
    "no enrolment folder to remember the answer in: start the referee with --enrol FOLDER "
    "(or set $GIZMOS_ENROL_DIR)"
)


@dataclass(frozen=True, slots=True)
class _Pending:
    id: int
    question: Question
    frame: int | None
    identifier: Identifier  # whose references the answer updates

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "where": self.question.where,
            "suggestions": list(self.question.suggestions),
            "confidence": self.question.confidence,
            "frame": self.frame,
        }


class CardQuestions:
    """The open questions about cards (thread-safe: the live loop offers, the dashboard answers).

    ``enrol_dir`` is the folder answers are enrolled into (the one the pipeline reads, so they
    are remembered next time); without one, an answer is refused with a line saying how to give one.
    """

    def __init__(self, enrol_dir: str | Path | None = None) -> None:
        self.enrol_dir = Path(enrol_dir) if enrol_dir else None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._live: Identifier | None = None  # the live loop's matcher, once it has offered
        #: Enrolment from a spread of cards, into the same folder and the same matcher.
        self.spread = SpreadEnrolment(self.enrol_dir, identifier=lambda: self._live)

    def offer(self, assembler: Assembler, frame: int | None = None) -> None:
        """Take the questions of the frame ``assembler`` has just assembled; a place already asked
        about keeps its question (the picture the user is looking at does not change under them)."""
        with self._lock:
            self._live = assembler.identifier
            asked = {p.question.where for p in self._pending.values()}
            for q in assembler.last_questions:
                if q.where in asked:
                    continue
                n = next(self._ids)
                self._pending[n] = _Pending(n, q, frame, assembler.identifier)
                asked.add(q.where)
            for n in sorted(self._pending)[:-MAX_PENDING]:
                del self._pending[n]

    def pending(self) -> list[dict[str, Any]]:
        """The open questions, oldest first (JSON)."""
        with self._lock:
            return [p.to_json() for _, p in sorted(self._pending.items())]

    def face_png(self, question: int) -> bytes:
        """The card asked about, as the camera saw it (PNG)."""
        return face_png(self._get(question).question.face, f"question {question}")

    def answer(self, question: int, card: int) -> dict[str, Any]:
        """Card ``question`` is card ``card``: enrol it and close the question (JSON)."""
        if not 0 <= card < N_CARDS:
            raise QuestionRefused(400, f"card: expected a card id 0..{N_CARDS - 1}, got {card}")
        if self.enrol_dir is None:  # said before the question is looked up, as it always was
            raise QuestionRefused(409, NO_FOLDER_FOR_ANSWER)
        p = self._get(question)
        path = enrol_confirmed(
            self.enrol_dir,
            {card: p.question.face},
            p.identifier,
            NO_FOLDER_FOR_ANSWER,
            f"question {question}: cannot enrol card {card}",
        )[card]
        with self._lock:
            self._pending.pop(question, None)
            for n in [n for n, q in self._pending.items() if q.question.where == p.question.where]:
                del self._pending[n]
        return {"ok": True, "card": card, "enrolled": path.name}

    def _get(self, question: int) -> _Pending:
        with self._lock:
            p = self._pending.get(question)
        if p is None:
            raise QuestionRefused(404, f"question {question}: no such open question")
        return p
