"""The dashboard: the game at a glance, live warnings, manual mode and final scoring (Flask).

>>> from web import create_app
>>> app = create_app({"GAMES_DIR": "games", "ADMIN_PIN": "2468"})   # doctest: +SKIP
>>> app.run("127.0.0.1", 8000)                                       # doctest: +SKIP

``create_app`` takes the table's admin PIN (kept only as a salted hash) and, optionally, the
live pipeline's hook objects (``FRAME_SOURCE``, ``LIVE_RUNNER``: see :mod:`web.live`).
docs/dashboard.md describes the pages, the API, the security model and the hook.

Names are imported on first use, so ``gizmos-referee`` builds its ``serve`` options without
loading Flask for every other command.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from web.app import create_app
    from web.hub import Hub, LiveGame, Settings
    from web.live import CameraStatus, FrameBuffer, FrameSource, LiveRunner

_WHERE = {
    "create_app": "web.app",
    "Hub": "web.hub",
    "LiveGame": "web.hub",
    "Settings": "web.hub",
    "CameraStatus": "web.live",
    "FrameBuffer": "web.live",
    "FrameSource": "web.live",
    "LiveRunner": "web.live",
}
__all__ = [
    "CameraStatus",
    "FrameBuffer",
    "FrameSource",
    "Hub",
    "LiveGame",
    "LiveRunner",
    "Settings",
    "create_app",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'web' has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
