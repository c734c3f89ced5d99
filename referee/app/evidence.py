"""Evidence for disputes: for each warning, the camera's view of the zones involved just before
and just after the move, as two small JPEG crops kept in the game record.

The tracker stays pure of images; the live runner, which has the frames, calls
:meth:`EvidenceKeeper.observed` after every tracker call. "Before" is the last frame in which the
camera saw the table exactly as the referee believed it (every zone read, all of it agreeing with
the accepted state): the table at rest before the move. "After" is the frame the warning was
raised on. The zones involved are those whose reading differs between the two views (the Row, a
Display slot, a player's ring, Archive, gizmos or VP tokens); when none differ (a sensor
disagreement) they are the warned player's area and the Row. Both crops cover the same part of
the rectified table, so they compare at a glance.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from referee.observation import Observation
from referee.tracker import RefereeWarning, Tracker
from referee.tracker.record import RecordError
from referee.tracker.view import TableView, matches, view_of_observation
from vision.errors import ZonesError
from vision.geometry import CANON_PX_PER_MM, CANON_SIZE, rectify
from vision.zones import Rect, Zones

MARGIN_MM = 12.0
MAX_SIDE_PX = 320  # a crop's longer side
JPEG_QUALITY = 75


@dataclass(frozen=True, slots=True)
class Seen:
    """One observed frame: the image, its homography (table mm -> image) and what was read."""

    image: np.ndarray
    h: np.ndarray
    view: TableView


def changed_zones(before: TableView, after: TableView) -> list[str]:
    """The zones whose reading differs between two views ("row", "display 2.1", "ring 0", ...)."""
    out = []
    if before.row != after.row:
        out.append("row")
    for slot in sorted(set(before.display) | set(after.display)):
        if before.display.get(slot) != after.display.get(slot):
            out.append(f"display {slot[0]}.{slot[1]}")
    for seat, (b, a) in enumerate(zip(before.seats, after.seats, strict=False)):
        for zone in ("ring", "archive", "gizmos", "vp"):
            if getattr(b, zone) != getattr(a, zone):
                out.append(f"{zone} {seat}")
    return out


def zone_rect(zones: Zones, name: str) -> Rect:
    """A zone's rectangle on the table (mm) by its name in :func:`changed_zones`."""
    kind, _, where = name.partition(" ")
    if kind == "row":
        return zones.energy_row
    if kind == "display":
        level, slot = (int(x) for x in where.split("."))
        return next(r for lvl, s, r in zones.display if (lvl, s) == (level, slot))
    seat = zones.seat(int(where))
    return {"ring": seat.ring, "archive": seat.archive, "gizmos": seat.gizmos, "vp": seat.vp}[kind]


def crop_jpeg(seen: Seen, box: tuple[int, int, int, int]) -> bytes:
    """The rectified table cut to ``box`` (canonical pixels), at most :data:`MAX_SIDE_PX`, as JPEG."""
    x1, y1, x2, y2 = box
    part = rectify(seen.image, seen.h)[y1:y2, x1:x2]
    scale = MAX_SIDE_PX / max(part.shape[:2])
    if scale < 1:
        part = cv2.resize(
            part, (round(part.shape[1] * scale), round(part.shape[0] * scale)), interpolation=cv2.INTER_AREA
        )
    ok, buf = cv2.imencode(".jpg", part, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise ValueError("evidence: OpenCV could not encode the crop as JPEG")
    return buf.tobytes()


class EvidenceKeeper:
    """Remembers the last frame that agreed with the referee and crops it, with the frame a
    warning was raised on, into the record (see the module docstring)."""

    def __init__(self, zones: Zones, players: int) -> None:
        self.zones = zones
        self.players = players
        self.agreed: Seen | None = None  # the last frame showing the table as the referee held it
        self.last: Seen | None = None  # the last frame observed
        self.kept = 0  # crops written
        self.failures: list[str] = []  # crops that could not be written (said once each)

    def observed(
        self,
        tracker: Tracker,
        warned_from: int,
        image: np.ndarray | None = None,
        h: np.ndarray | None = None,
        obs: Observation | None = None,
    ) -> int:
        """After a tracker call (under the game's lock): crop the evidence of every warning from
        index ``warned_from`` of ``tracker.warnings`` on, then remember this frame. ``image`` is
        None for a call without a frame (a dispenser event): the last frame observed stands in."""
        seen = self.last
        if image is not None and h is not None and obs is not None:
            seen = self.last = Seen(image, h, view_of_observation(obs, self.players))
        written = 0
        if seen is not None:
            for warning in tracker.warnings[warned_from:]:
                try:
                    written += self._keep(tracker, warning, seen)
                except (KeyError, StopIteration, ValueError, ZonesError, cv2.error) as exc:
                    # evidence is a help for people, never a reason to stop refereeing
                    self.failures.append(f"warning #{warning.id}: no crops ({exc})")
        if seen is not None and seen.view.complete() and matches(tracker.state, seen.view):
            self.agreed = seen
        return written

    def _keep(self, tracker: Tracker, warning: RefereeWarning, after: Seen) -> int:
        before = self.agreed or after
        names = changed_zones(before.view, after.view)
        if not names:
            seat = warning.player if warning.player is not None else tracker.state.current
            names = [f"{z} {seat}" for z in ("ring", "archive", "gizmos", "vp")] + ["row"]
        box = self._box([zone_rect(self.zones, n) for n in names])
        written = 0
        for moment, seen in (("before", before), ("after", after)):
            try:
                tracker.record.add_evidence(warning.id, moment, crop_jpeg(seen, box), names)
                written += 1
            except (RecordError, ValueError, cv2.error) as exc:
                self.failures.append(f"warning #{warning.id} {moment}: {exc}")
        self.kept += written
        return written

    @staticmethod
    def _box(rects: list[Rect]) -> tuple[int, int, int, int]:
        """The canonical-pixel box around ``rects`` with a margin, inside the table."""
        x1 = min(r[0] for r in rects) - MARGIN_MM
        y1 = min(r[1] for r in rects) - MARGIN_MM
        x2 = max(r[0] + r[2] for r in rects) + MARGIN_MM
        y2 = max(r[1] + r[3] for r in rects) + MARGIN_MM
        cw, ch = CANON_SIZE
        k = CANON_PX_PER_MM
        box = (max(0, int(x1 * k)), max(0, int(y1 * k)), min(cw, int(x2 * k)), min(ch, int(y2 * k)))
        if box[2] - box[0] < 8 or box[3] - box[1] < 8:
            return (0, 0, cw, ch)  # zones off the table: the whole table
        return box
