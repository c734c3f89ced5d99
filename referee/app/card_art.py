"""The card pictures the dashboard shows: vision's drawn faces (or enrolled photos) and backs.

The dashboard never imports vision; the application layer hands it this object as ``CARD_ART``.
"""

from __future__ import annotations

import hashlib
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

    def edition(self, enrol_dir: str | Path | None) -> str:
        """What the faces now depend on: changes when a photo is enrolled (an answered question,
        a confirmed spread), so the dashboard's cached pictures are drawn again, not kept stale."""
        folder = enrol_dir if enrol_dir is not None else self.enrol_dir
        if folder is None or not Path(folder).is_dir():
            return "drawn"
        from vision.enrol import folder_signature

        return hashlib.sha256(repr(folder_signature(folder)).encode()).hexdigest()[:16]

    def back(self, level: int) -> Any:
        from vision.faces import draw_back

        return draw_back(level)
