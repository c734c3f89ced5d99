"""Enrolment of the user's own card faces: a folder of photos or scans named by card id.

File names are the card id, optionally zero-padded, with any image extension (``7.jpg``,
``042.png``). Each image shows one card face, cropped to its edges or loosely with table round
it: a loose crop is rectified along the card's own outline (``vision/outline.py``; measured in
``benchmarks/identify_methods.py --phone``); landscape images are turned upright. Enrolled
faces replace the drawn ones in rendering, training and identification.

``gizmos-referee vision enrol-check FOLDER`` validates a folder: an unknown id, an unreadable
image, an image that is not a card cropped to its edges (wrong proportions) or too small to
identify from is an error naming the file.

During play the referee can ask about a card it cannot place (``referee/app/questions.py``): the
answer enrols the card as the camera saw it (:func:`remember`), rectified through the calibration
and white-balanced on the markers like every frame, so it needs no normalising of its own.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.errors import EnrolmentError
from vision.faces import FACE_H, FACE_W, N_CARDS
from vision.frames import IMAGE_SUFFIXES
from vision.outline import photo_outline, warp_card

ASPECT = FACE_W / FACE_H  # 63 : 88
ASPECT_TOLERANCE = 0.12  # a loose crop is fine; a square or a whole photo is not
MIN_WIDTH_PX = 126  # 2 px/mm: below that the top band's small print is gone


@dataclass(frozen=True, slots=True)
class EnrolReport:
    """What an enrolment folder holds."""

    folder: Path
    enrolled: tuple[int, ...]
    missing: tuple[int, ...]

    def summary(self) -> str:
        """One line for the terminal."""
        return f"enrol-check: {self.folder}: {len(self.enrolled)} of {N_CARDS} cards enrolled" + (
            f"; drawn faces used for {len(self.missing)} others" if self.missing else ""
        )


def card_id_from_name(path: Path) -> int:
    """The card id a file name stands for, or an error naming the file."""
    stem = path.stem
    if not stem.isdigit() or not 0 <= int(stem) < N_CARDS:
        raise EnrolmentError(
            f"enrolment: unknown card id {stem!r} in file name {path.name} (ids are 0..{N_CARDS - 1})"
        )
    return int(stem)


def _images(folder: Path) -> list[Path]:
    if not folder.is_dir():
        raise EnrolmentError(f"enrolment: folder {folder} does not exist")
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)


def folder_signature(folder: str | Path) -> tuple[tuple[str, int, int], ...]:
    """Name, size and modification time of every image in the folder: changes when the folder does."""
    return tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in _images(Path(folder)))


def load_face(path: Path) -> np.ndarray:
    """Read one enrolled face, upright, rectified along the card's outline when the photo shows
    table round the card (:func:`vision.outline.photo_outline`: a loose crop, a phone a few
    degrees off square), and resized to the face size; a bad image is an error naming it."""
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None or img.size == 0:
        raise EnrolmentError(f"enrolment: cannot read image {path}")
    if img.shape[1] > img.shape[0]:
        img = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
    h, w = img.shape[:2]
    quad = photo_outline(img)
    if quad is not None:
        w = round(float(np.linalg.norm(quad[1] - quad[0])))  # the card's own width in the photo
    elif abs(w / h - ASPECT) > ASPECT_TOLERANCE * ASPECT:
        raise EnrolmentError(
            f"enrolment: {path.name} is {w}x{h} (proportions {w / h:.2f}) and no card's outline was "
            f"found in it; a card cropped to its edges is 63x88 mm ({ASPECT:.2f}): crop the photo to the card"
        )
    if w < MIN_WIDTH_PX:
        size = f"{w}x{h} px" if quad is None else f"{w} px across the card"
        raise EnrolmentError(
            f"enrolment: {path.name} is only {size}; at least {MIN_WIDTH_PX} px across the card is needed"
        )
    if quad is not None:
        return warp_card(img, quad)
    return cv2.resize(img, (FACE_W, FACE_H), interpolation=cv2.INTER_AREA)


def load_enrolled(folder: str | Path) -> dict[int, np.ndarray]:
    """All enrolled faces by card id; any bad file is an error (never silently skipped)."""
    out: dict[int, np.ndarray] = {}
    for p in _images(Path(folder)):
        cid = card_id_from_name(p)
        if cid in out:
            raise EnrolmentError(f"enrolment: card {cid} enrolled twice (file {p.name})")
        out[cid] = load_face(p)
    return out


def check(folder: str | Path) -> EnrolReport:
    """Validate an enrolment folder (the ``enrol-check`` command)."""
    got = load_enrolled(folder)
    return EnrolReport(Path(folder), tuple(sorted(got)), tuple(i for i in range(N_CARDS) if i not in got))


def remember(folder: str | Path, card: int, face: np.ndarray) -> Path:
    """Enrol ``face`` (a card face, upright, cropped to its edges) as card ``card`` in ``folder``:
    written as ``<card>.png`` in one step (a crash leaves the old file or the new one, never half
    of one), replacing any earlier photo of that card. Returns the file's path."""
    return remember_all(folder, {card: face})[card]


def remember_all(folder: str | Path, faces: Mapping[int, np.ndarray]) -> dict[int, Path]:
    """Enrol several cards at once (a confirmed spread): every face is checked and written to a
    temporary file first, so a bad face or a full disk enrols none of them; then each becomes
    ``<card>.png`` by an atomic rename (a crash leaves each card's old file or its new one, never
    half of one), replacing any earlier photo of that card. Returns each card's path."""
    for card, face in faces.items():
        if not 0 <= card < N_CARDS:
            raise EnrolmentError(f"enrolment: unknown card id {card} (ids are 0..{N_CARDS - 1})")
        if face.ndim != 3 or face.shape[2] != 3 or face.dtype != np.uint8:
            raise EnrolmentError(
                f"enrolment: card {card}: expected an 8-bit BGR image, got {face.dtype} {face.shape}"
            )
    encoded = {}
    for card, face in faces.items():
        ok, png = cv2.imencode(".png", face)
        if not ok:
            raise EnrolmentError(f"enrolment: card {card}: cannot encode the image")
        encoded[card] = png.tobytes()
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    staged: dict[int, str] = {}
    try:
        for card, data in encoded.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{card}-", suffix=".tmp", dir=out)
            staged[card] = tmp
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        targets = {}
        for card, tmp in list(staged.items()):
            targets[card] = out / f"{card}.png"
            os.replace(tmp, targets[card])
            del staged[card]
    finally:
        for tmp in staged.values():
            Path(tmp).unlink(missing_ok=True)
    for p in _images(out):  # a card's earlier photo under another name (7.jpg, 007.png)
        if p.stem.isdigit() and int(p.stem) in targets and p != targets[int(p.stem)]:
            p.unlink()
    return targets
