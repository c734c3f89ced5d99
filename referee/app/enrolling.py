"""Enrolling what a person confirmed on the dashboard: an answered question
(``referee/app/questions.py``) or a confirmed spread (``referee/app/spread.py``). Both write the
cards as the camera saw them to the enrolment folder and into the running matcher, and both
show a card's picture; the refusals are :class:`web.live.QuestionRefused` with their status.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from vision.enrol import remember_all
from vision.errors import EnrolmentError
from web.live import QuestionRefused

if TYPE_CHECKING:
    from vision.identify import Identifier


def face_png(face: np.ndarray, what: str) -> bytes:
    """A card as the camera saw it, as PNG; a 500 naming ``what`` when it cannot be encoded."""
    ok, png = cv2.imencode(".png", face)
    if not ok:
        raise QuestionRefused(500, f"{what}: cannot encode the picture")
    return png.tobytes()


def enrol_confirmed(
    enrol_dir: Path | None,
    faces: Mapping[int, np.ndarray],
    identifier: Identifier,
    missing_folder: str,
    failed: str,
) -> dict[int, Path]:
    """Enrol ``faces`` (card id → face) in ``enrol_dir`` all at once
    (:func:`vision.enrol.remember_all`), then into ``identifier``, so they are read from the next
    frame on. Refused with nothing written: no folder (409, ``missing_folder``), or a bad face or
    a full disk (409, ``failed`` and why). Returns each card's file."""
    if enrol_dir is None:
        raise QuestionRefused(409, missing_folder)
    try:
        paths = remember_all(enrol_dir, faces)
    except (EnrolmentError, OSError) as exc:
        raise QuestionRefused(409, f"{failed}: {exc}") from exc
    for card, face in faces.items():
        identifier.enrol(card, face)
    return paths
