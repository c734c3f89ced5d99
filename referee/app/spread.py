"""Enrolment from a spread of cards on the calibrated table, confirmed on the dashboard or the
command line (issue 14: practical enrolment for a real deck).

The user lays out their cards face up in the play area, a frame is taken (a photo of the table
uploaded to the dashboard, ``POST /api/spread``; the referee's own camera, ``POST
/api/spread/camera``; or ``gizmos-referee vision enrol-spread IMAGE`` / ``--camera SOURCE``),
and :func:`vision.spread.find_spread` finds the cards, cuts each out upright and suggests an id
(the best joint match against the references, among the ids not yet enrolled).
The dashboard shows each card with its suggestions (``GET /api/spread``,
``GET /api/spread/<n>/face.png``); the user confirms or corrects them and sends the ids
(``POST /api/spread/confirm``, admin PIN and CSRF token like every change, as the answers to
:mod:`referee.app.questions`). The confirmed cards are enrolled in one step
(:func:`vision.enrol.remember_all`: all of them or, on a bad id or a full disk, none) and become
their references at once in the identifier the spread was matched with. One spread is open at
a time; a new photo replaces it.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.app.enrolling import enrol_confirmed, face_png
from referee.app.errors import LiveError
from referee.app.sources import open_source
from vision.calibrate import Calibrator
from vision.errors import CalibrationError, EnrolmentError, FrameError, VisionError
from vision.faces import N_CARDS
from vision.identify import Identifier
from vision.spread import SpreadCard, find_spread
from vision.zones import Zones, default_zones
from web.live import QuestionRefused

#: Frames read from a camera before one is taken: its exposure, white balance and focus settle
#: over the first second or so after it is opened.
SETTLE_FRAMES = 15


def camera_still(source: str, frames: int = SETTLE_FRAMES) -> np.ndarray:
    """The table as the camera ``source`` (what a user types: ``0``, a stream URL, a video or a
    folder of images) shows it now: the last of its first ``frames`` frames. A source that cannot
    be opened or gives no frame is refused (422) naming it."""
    try:
        feed = open_source(source)
    except (LiveError, VisionError) as exc:  # the message names the source already
        raise QuestionRefused(422, f"spread: {exc}") from exc
    last: np.ndarray | None = None
    try:
        for n, frame in enumerate(feed.frames(), start=1):
            last = frame.image
            if n >= frames:
                break
    except (LiveError, VisionError) as exc:
        raise QuestionRefused(422, f"spread: camera {source!r}: {exc}") from exc
    finally:
        feed.close()
    if last is None:
        raise QuestionRefused(422, f"spread: camera {source!r} gave no frame")
    return last


def decode_image(data: bytes) -> np.ndarray:
    """A JPEG or PNG photo as a BGR frame; anything else is refused (400) naming what it got."""
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR) if data else None
    if image is None:
        raise QuestionRefused(400, f"spread: the photo is not a JPEG or PNG image ({len(data)} bytes)")
    return image


@dataclass(frozen=True, slots=True)
class Spread:
    """An open spread: its number, the cards found (in reading order) and the identifier that
    suggested their ids (the one the confirmed cards are enrolled into)."""

    id: int
    cards: tuple[SpreadCard, ...]
    identifier: Identifier

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "cards": [
                {
                    "place": n,
                    "center_mm": [round(c.center[0], 1), round(c.center[1], 1)],
                    "card": c.card,
                    "suggestions": list(c.suggestions),
                    "score": round(c.score, 3),
                }
                for n, c in enumerate(self.cards)
            ],
        }


class SpreadEnrolment:
    """The open spread (thread-safe: a photo and a confirmation may come from two pages).

    ``enrol_dir``: where confirmed cards are written (the folder the pipeline reads; without one
    a confirmation is refused with a line saying how to give one); ``identifier``: the matcher
    to suggest with and to update (the live pipeline's, when one runs); when it gives None, or
    without one: a matcher built on what ``enrol_dir`` holds (the drawn faces for the rest).
    """

    def __init__(
        self,
        enrol_dir: str | Path | None = None,
        identifier: Callable[[], Identifier | None] | None = None,
        zones: Zones | None = None,
    ) -> None:
        self.enrol_dir = Path(enrol_dir) if enrol_dir else None
        self.zones = zones or default_zones()
        self._identifier = identifier or (lambda: None)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._open: Spread | None = None
        #: The running referee's latest still frame (``LiveReferee.still_frame``): while a game is
        #: refereed the camera is the loop's, so a spread is taken from what it last saw.
        self.live_still: Callable[[], np.ndarray | None] = lambda: None

    def _own_identifier(self) -> Identifier:
        folder = self.enrol_dir
        return Identifier(enrol_dir=str(folder) if folder is not None and folder.is_dir() else None)

    def enrolled(self) -> list[int]:
        """The ids the enrolment folder holds already."""
        if self.enrol_dir is None or not self.enrol_dir.is_dir():
            return []
        return sorted(
            int(p.stem) for p in self.enrol_dir.iterdir() if p.stem.isdigit() and int(p.stem) < N_CARDS
        )

    def take(self, frame: np.ndarray) -> dict[str, Any]:
        """Find the spread in a frame of the calibrated table (calibrated from its own markers),
        open it (replacing an open one) and return it as JSON; a frame without the markers or
        without a card is refused (422) saying so."""
        try:
            cal = Calibrator(self.zones, settle=1).update(frame)
        except CalibrationError as exc:
            raise QuestionRefused(422, f"spread: {exc} (the photo must show the whole play area)") from exc
        except FrameError as exc:
            raise QuestionRefused(400, f"spread: {exc}") from exc
        try:
            identifier = self._identifier() or self._own_identifier()
        except EnrolmentError as exc:
            raise QuestionRefused(409, f"spread: {exc}") from exc
        cards = find_spread(frame, cal.homography, identifier, self.enrolled(), self.zones)
        if not cards:
            raise QuestionRefused(
                422,
                "spread: no card found in the play area (lay the cards face up, apart from each other)",
            )
        with self._lock:
            self._open = Spread(next(self._ids), tuple(cards), identifier)
            return self._open.to_json()

    def take_photo(self, data: bytes) -> dict[str, Any]:
        """:meth:`take` on a JPEG or PNG photo of the table (the dashboard's upload)."""
        return self.take(decode_image(data))

    def take_camera(self, source: str) -> dict[str, Any]:
        """:meth:`take` on what the camera shows now: the running referee's latest still frame,
        else a frame read from ``source`` (the setup page's camera source); with neither, refused
        (409) saying how to give one."""
        frame = self.live_still()
        if frame is None:
            if not source.strip():
                raise QuestionRefused(
                    409,
                    "spread: no camera source: set one on the setup page (0 for the first camera, "
                    "a stream URL), or send a photo",
                )
            frame = camera_still(source.strip())
        return self.take(frame)

    def current(self) -> dict[str, Any] | None:
        """The open spread (JSON), or None."""
        with self._lock:
            return self._open.to_json() if self._open is not None else None

    def face_png(self, place: int) -> bytes:
        """The card at ``place`` of the open spread, as the camera saw it (PNG)."""
        return face_png(self._card(place).face, f"spread: card {place}")

    def confirm(self, spread: int, cards: Mapping[int, int]) -> dict[str, Any]:
        """The cards at these places of spread ``spread`` are these ids: enrol them all at once
        and close the spread. Places left out are not enrolled. Refused (nothing written): an id
        out of range or given twice (400), an unknown spread or place (404), no folder (409)."""
        for place, card in cards.items():
            if not 0 <= card < N_CARDS:
                raise QuestionRefused(
                    400, f"spread: place {place}: expected a card id 0..{N_CARDS - 1}, got {card}"
                )
        seen: dict[int, int] = {}
        for place, card in cards.items():
            if card in seen:
                raise QuestionRefused(
                    400, f"spread: card {card} given twice (places {seen[card]} and {place})"
                )
            seen[card] = place
        if not cards:
            raise QuestionRefused(400, "spread: no card to enrol (give at least one place and its id)")
        with self._lock:
            open_ = self._open
        if open_ is None or open_.id != spread:
            raise QuestionRefused(404, f"spread {spread}: no such open spread (take a new photo)")
        faces = {card: self._card(place, open_).face for place, card in cards.items()}
        paths = enrol_confirmed(
            self.enrol_dir,
            faces,
            open_.identifier,
            "no enrolment folder to enrol the spread in: start with --enrol FOLDER "
            "(or set $GIZMOS_ENROL_DIR)",
            f"spread {spread}: nothing enrolled",
        )
        with self._lock:
            if self._open is open_:
                self._open = None
        return {"ok": True, "enrolled": {str(c): p.name for c, p in sorted(paths.items())}}

    def _card(self, place: int, spread: Spread | None = None) -> SpreadCard:
        with self._lock:
            s = spread or self._open
        if s is None:
            raise QuestionRefused(404, "spread: no open spread (take a photo first)")
        if not 0 <= place < len(s.cards):
            raise QuestionRefused(404, f"spread {s.id}: no card at place {place} (0..{len(s.cards) - 1})")
        return s.cards[place]


# ---------------------------------------------------------------- the command line


def read_confirmation(path: Path) -> dict[int, int]:
    """A confirmation file: JSON ``{"<place>": <card id>, ...}`` (what ``--suggestions`` writes,
    edited); anything else is refused naming the file and what was wrong."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise QuestionRefused(400, f"enrol-spread: cannot read {path}: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise QuestionRefused(400, f"enrol-spread: {path} is not JSON: {exc}") from exc
    if not isinstance(doc, dict) or not doc:
        raise QuestionRefused(400, f'enrol-spread: {path}: expected an object {{"<place>": <card id>, ...}}')
    out: dict[int, int] = {}
    for place, card in doc.items():
        if not str(place).isdigit() or isinstance(card, bool) or not isinstance(card, int):
            raise QuestionRefused(
                400, f"enrol-spread: {path}: {place!r}: {card!r}: expected a place number and a card id"
            )
        out[int(place)] = card
    return out


def _ask(spread: dict[str, Any], ask: Callable[[str], str], say: Callable[[str], None]) -> dict[int, int]:
    """Each card's id asked at the terminal: Enter takes the suggestion, a number corrects it,
    ``-`` leaves the card out."""
    out: dict[int, int] = {}
    for c in spread["cards"]:
        while True:
            got = ask(
                f"place {c['place']}: card {c['card']}? [Enter: yes, an id: that card, -: skip] "
            ).strip()
            if not got:
                out[c["place"]] = c["card"]
            elif got == "-":
                pass
            elif got.isdigit() and 0 <= int(got) < N_CARDS:
                out[c["place"]] = int(got)
            else:
                say(f"  {got!r} is not a card id 0..{N_CARDS - 1}, Enter or -")
                continue
            break
    return out


def enrol_spread_command(
    image: Path | None,
    enrol_dir: Path | None,
    confirm: Path | None = None,
    suggestions: Path | None = None,
    yes: bool = False,
    ask: Callable[[str], str] | None = None,
    say: Callable[[str], None] = print,
    camera: str | None = None,
) -> int:
    """``gizmos-referee vision enrol-spread IMAGE`` (or ``--camera SOURCE``: a frame taken from
    that camera after it settles, :func:`camera_still`): find the spread, print the suggestions, and
    enrol what is confirmed: by ``confirm`` (a file), ``yes`` (every suggestion), or ``ask``
    (at the terminal); with none of them, only the suggestions (written to ``suggestions`` as a
    confirmation file to edit). Raises :class:`QuestionRefused` on bad input."""
    from referee.gizmos.cards import default_cards
    from vision.faces import short_text

    if enrol_dir is None and (confirm or yes or ask):
        raise QuestionRefused(
            409, "enrol-spread: no enrolment folder: give --enrol FOLDER (or set $GIZMOS_ENROL_DIR)"
        )
    cards = read_confirmation(confirm) if confirm is not None else None
    if (image is None) == (camera is None):
        raise QuestionRefused(400, "enrol-spread: give either IMAGE or --camera SOURCE (one of them)")
    if image is not None:
        try:
            frame = decode_image(image.read_bytes())
        except OSError as exc:
            raise QuestionRefused(400, f"enrol-spread: cannot read {image}: {exc.strerror or exc}") from exc
        where = str(image)
    else:
        assert camera is not None
        frame = camera_still(camera)
        where = f"camera {camera}"
    enrolment = SpreadEnrolment(enrol_dir)
    spread = enrolment.take(frame)
    names = default_cards()
    say(f"enrol-spread: {len(spread['cards'])} cards found in {where}")
    for c in spread["cards"]:
        x, y = c["center_mm"]
        others = ", ".join(str(s) for s in c["suggestions"][1:])
        what = short_text(names[c["card"]])
        say(f"  place {c['place']:2d} at ({x:.0f}, {y:.0f}) mm: card {c['card']:3d} {what} (else {others})")
    if suggestions is not None:
        suggestions.write_text(
            json.dumps({str(c["place"]): c["card"] for c in spread["cards"]}, indent=1) + "\n"
        )
        say(f"enrol-spread: suggestions written to {suggestions} (edit, then --confirm {suggestions})")
    if cards is None and yes:
        cards = {c["place"]: c["card"] for c in spread["cards"]}
    elif cards is None and ask is not None:
        cards = _ask(spread, ask, say)
    if cards is None:
        say("enrol-spread: nothing enrolled (confirm with --confirm FILE, --yes or at a terminal)")
        return 0
    if not cards:
        say("enrol-spread: nothing enrolled (every card skipped)")
        return 0
    done = enrolment.confirm(spread["id"], cards)
    say(f"enrol-spread: enrolled {len(done['enrolled'])} cards in {enrol_dir}: {', '.join(done['enrolled'])}")
    return 0
