"""The card pictures the dashboard shows: vision's drawn faces (or enrolled photos) and backs.

The dashboard never imports vision; the application layer hands it this object as ``CARD_ART``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from referee.app.settings import Settings


class DrawnCardArt:
    """``face(card_id, enrol_dir)`` and ``back(level)`` as BGR images, drawn by :mod:`vision.faces`.

    ``enrol_dir`` is the dashboard's ``ENROL_DIR``; without one, the enrolled photos of
    ``settings`` (default: the environment's, ``$GIZMOS_ENROL_DIR``) are shown, else the drawn faces.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.enrol_dir = (settings or Settings.from_env()).enrol_dir

    def face(self, card_id: int, enrol_dir: str | Path | None) -> Any:
        from vision.faces import face_set

        return face_set(enrol_dir if enrol_dir is not None else self.enrol_dir)[card_id]

    def back(self, level: int) -> Any:
        from vision.faces import draw_back

        return draw_back(level)
