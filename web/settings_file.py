"""The table's settings kept across restarts: a small JSON file beside the game records.

``<games dir>/settings.json`` holds the camera source and the dispenser's serial port as last
saved from the setup page (or given to ``serve``). It is written atomically (a temporary file,
flushed to disk, renamed over the old one), so a crash or a full disk leaves the previous
settings, never half a file. The admin PIN is not kept here: it comes from the environment or
the terminal each time the server starts.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from web.hub import HubError, Settings

FILE_NAME = "settings.json"
FORMAT = "gizmos-settings"
VERSION = 1


class SettingsFileError(HubError):
    """The settings file cannot be read or written; the message names it and says what to do."""


def settings_path(games_dir: str | Path) -> Path:
    return Path(games_dir) / FILE_NAME


def load_settings(path: Path) -> Settings:
    """The settings saved at ``path`` (the defaults when there is no file yet)."""
    settings = Settings()
    if not path.exists():
        return settings
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SettingsFileError(503, f"settings file {path}: cannot read it ({exc.strerror or exc})") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise SettingsFileError(
            409, f"settings file {path}: not valid JSON ({exc}); fix it or delete it to start afresh"
        ) from exc
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or raw.get("version") != VERSION:
        raise SettingsFileError(
            409,
            f'settings file {path}: expected {{"format": "{FORMAT}", "version": {VERSION}, ...}}; '
            "fix it or delete it to start afresh",
        )
    try:
        settings.update({k: v for k, v in raw.items() if k in ("camera_source", "serial_port")})
    except HubError as exc:
        raise SettingsFileError(409, f"settings file {path}: {exc.message}") from exc
    return settings


def save_settings(path: Path, settings: Settings) -> None:
    """Write ``settings`` to ``path`` atomically; a failure leaves the old file as it was."""
    data = {"format": FORMAT, "version": VERSION, **settings.to_json()}
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".json", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
        with contextlib.suppress(OSError):  # the rename itself survives a power cut
            dirfd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dirfd)
            finally:
                os.close(dirfd)
    except OSError as exc:
        raise SettingsFileError(
            503, f"cannot save the settings in {path}: {exc.strerror or exc}; nothing was changed"
        ) from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
