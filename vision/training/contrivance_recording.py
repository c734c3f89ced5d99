"""The recorded Contrivance game on film: every moment of :mod:`referee.simulation.workbench`
drawn by the Workbench renderer (:func:`vision.training.workbench.render_workbench`), so the
demo can referee it from pixels through the Workbench reader.

One camera for the whole game (straight down, the play area centred: :func:`film_camera`), so
the calibration settles once; each frame has its own
seed, so the lighting, the camera's noise and the hand differ from frame to frame as on a real
table. A moment with a Builder's hand over the table is drawn with a hand
(where the renderer aims it, not exactly over the squares worked on). The Damage token is drawn
on the face-down Contrivance tile to the right of the Workbench (the value the track shows,
0-10), and while a Switch On card is applied the Builder's hand reaches over it. The discard
pile is not drawn.

:func:`ensure_frames` renders them on first use (with progress, two processes) into
``data/contrivance-recording/seed-N/`` and reuses them afterwards; the folder's key covers the
recording and the source of the renderer, so a change to either renders again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from referee.observation import MAX_DAMAGE
from referee.simulation.workbench import Moment, Recording, RecordingSpec, play_recording
from vision.errors import VisionError
from vision.paths import LOCATIONS, source_file
from vision.progress import Progress
from vision.training.cachelock import render_lock
from vision.training.synth import RenderSettings
from vision.training.workbench import TileLayout, WorkbenchLayout, render_workbench
from vision.workbench import WORKBENCH
from vision.zones import default_zones

FRAMES_ROOT = LOCATIONS.data / "contrivance-recording"
#: One camera for the whole game: 900 mm above the table, looking straight down.
SETTINGS = RenderSettings(height_mm=(900.0, 900.0), max_tilt_deg=0.0, max_yaw_deg=0.0, hand_prob=0.0)
ROWS = 6  # both mats are on the table (rows beyond the Builders' stay empty)
SOURCES = (
    "vision.training.contrivance_recording",
    "vision.training.workbench",
    "vision.workbench",  # the Workbench's and the Contrivance tile's places
    "vision.training.tiles",
    "vision.training.synth",
    "referee.simulation.workbench",
    "referee.contrivance.rules",
)


class FramesError(VisionError):
    """The recording's frames cannot be rendered or read back (a full disk, a corrupt file)."""


def layout_of(m: Moment) -> WorkbenchLayout:
    """The renderer's layout of a moment's Workbench and Damage (as the track shows it, 0-10)."""
    tiles = tuple(
        ((r + 1, c + 1), TileLayout(t.builder, t.double, t.facing, t.value))
        for r, row in enumerate(m.workbench)
        for c, t in enumerate(row)
        if t is not None
    )
    return WorkbenchLayout(ROWS, tiles, min(MAX_DAMAGE, max(0, m.damage)))


#: The share of the frame the play area fills (as a user frames a camera hung over the table).
FILL = 0.9


def film_camera() -> np.ndarray:
    """The recording's one camera (table mm -> image px): straight down, the play area centred
    and filling FILL of the frame, the same for every frame."""
    tw, th = default_zones().size
    w, h = SETTINGS.size
    k = FILL * min(w / tw, h / th)
    return np.array([[k, 0.0, (w - k * tw) / 2], [0.0, k, (h - k * th) / 2], [0.0, 0.0, 1.0]])


def frame_seed(spec_seed: int, frame: int) -> int:
    return spec_seed * 1_000_003 + frame


def render_moment(m: Moment, spec_seed: int) -> np.ndarray:
    """One moment as the camera's frame (BGR); while the Damage is changed, the hand is over
    the Contrivance tile."""
    settings = replace(SETTINGS, hand_prob=1.0 if m.hand is not None or m.damage_covered else 0.0)
    at = WORKBENCH.contrivance if m.damage_covered else None
    seed = frame_seed(spec_seed, m.frame)
    camera = film_camera()
    return render_workbench(layout_of(m), seed, settings, hand_near=1.0, hand_at=at, camera=camera).image


def frames_key(spec: RecordingSpec) -> str:
    h = hashlib.sha256(json.dumps([spec.seed, spec.players, list(spec.injections), spec.fps]).encode())
    for name in SOURCES:
        h.update(source_file(name).read_bytes())
    return h.hexdigest()[:16]


def frame_path(folder: Path, frame: int) -> Path:
    return folder / f"frame-{frame:05d}.jpg"


def _render_chunk(args: tuple[int, list[int], str]) -> int:
    seed, frames, folder = args
    recording = play_recording(RecordingSpec(seed=seed))
    wanted = set(frames)
    for m in recording.timeline:
        if isinstance(m, Moment) and m.frame in wanted:
            path = frame_path(Path(folder), m.frame)
            ok, data = cv2.imencode(".jpg", render_moment(m, seed), [cv2.IMWRITE_JPEG_QUALITY, 90])
            if not ok:
                raise FramesError(f"frame {m.frame}: JPEG encoding failed")
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(data.tobytes())
            os.replace(tmp, path)
    return len(frames)


def ensure_frames(recording: Recording, root: Path = FRAMES_ROOT, workers: int = 2) -> Path:
    """The folder of the recording's frames, rendered on first use (with progress) and cached."""
    spec = recording.spec
    folder = root / f"seed-{spec.seed}"
    key = frames_key(spec)
    meta = folder / "frames.json"
    count = recording.frames()
    with render_lock(folder):
        return _ensure_frames(recording, folder, key, meta, count, workers)


def _ensure_frames(
    recording: Recording, folder: Path, key: str, meta: Path, count: int, workers: int
) -> Path:
    spec = recording.spec
    try:
        if meta.is_file() and json.loads(meta.read_text()).get("key") == key:
            return folder
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError) as exc:
        raise FramesError(f"{folder}: cannot prepare the frames folder ({exc})") from exc
    print(f"rendering the recorded Contrivance game into {folder} (first run only)", flush=True)
    progress = Progress("rendering", count)
    chunks = [list(range(i, min(i + 40, count))) for i in range(0, count, 40)]
    try:
        if workers > 1:
            with ProcessPoolExecutor(workers) as pool:
                for done in pool.map(_render_chunk, [(spec.seed, c, str(folder)) for c in chunks]):
                    progress.step(done)
        else:
            for c in chunks:
                progress.step(_render_chunk((spec.seed, c, str(folder))))
        meta.write_text(json.dumps({"key": key, "frames": count, "seed": spec.seed}))
    except OSError as exc:
        raise FramesError(f"{folder}: cannot write the frames ({exc})") from exc
    return folder


def load_frame(folder: Path, frame: int) -> np.ndarray:
    image = cv2.imread(str(frame_path(folder, frame)))
    if image is None:
        raise FramesError(
            f"{frame_path(folder, frame)}: missing or unreadable frame (delete {folder} to render again)"
        )
    return image
