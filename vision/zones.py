"""Table geometry in millimetres and the zones file that maps table regions to game zones.

The table frame is the play area bounded by the four ArUco tiles: x to the right, y towards
seats 0 and 2, origin at the outer corner of marker 0. Each seat's area is described in its own
frame (the player sits at the bottom edge); seats 1 and 3 face the other way (rotation 180).
The zones file is YAML; :func:`default_zones` builds the layout the renderer uses and
``vision/data/zones.yaml`` is that layout written out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from vision.errors import ZonesError

Rect = tuple[float, float, float, float]  # x, y, w, h in mm (table frame)
DEFAULT_ZONES_PATH = Path(__file__).with_name("data") / "zones.yaml"
COLUMN_ORDER: tuple[str, ...] = ("upgrade", "converter", "file", "pick", "build")

# Seat-local layout (mm): the area is SEAT_W × SEAT_H, the player sits at y = SEAT_H.
SEAT_W, SEAT_H = 520.0, 205.0
COLUMN_PITCH = 66.0
STACK_TOP = 4.0
LOCAL_GIZMOS: Rect = (0.0, 0.0, 335.0, SEAT_H)
LOCAL_RING: Rect = (345.0, 4.0, 100.0, 100.0)
LOCAL_VP: Rect = (345.0, 112.0, 100.0, 90.0)
LOCAL_ARCHIVE: Rect = (451.0, 0.0, 69.0, SEAT_H)


@dataclass(frozen=True, slots=True)
class SeatZones:
    """One seat's area: its placement on the table and its zones in table coordinates."""

    seat: int
    origin: tuple[float, float]  # table position of the seat frame's (0, 0) corner
    rotation: int  # 0 or 180
    gizmos: Rect
    ring: Rect
    vp: Rect
    archive: Rect

    def to_table(self, x: float, y: float) -> tuple[float, float]:
        """Seat-local mm to table mm."""
        ox, oy = self.origin
        return (ox + x, oy + y) if self.rotation == 0 else (ox - x, oy - y)

    def to_local(self, x: float, y: float) -> tuple[float, float]:
        """Table mm to seat-local mm."""
        ox, oy = self.origin
        return (x - ox, y - oy) if self.rotation == 0 else (ox - x, oy - y)

    def column(self, name: str) -> Rect:
        """One dashboard column of the gizmos zone in table mm: the pipeline puts a card in the
        column its seat-local x falls in (:data:`COLUMN_PITCH` wide, the last to the zone's edge)."""
        i = COLUMN_ORDER.index(name)
        x0, y0, w, h = LOCAL_GIZMOS
        width = COLUMN_PITCH if i < len(COLUMN_ORDER) - 1 else w - i * COLUMN_PITCH
        return _local_rect(self.origin, self.rotation, (x0 + i * COLUMN_PITCH, y0, width, h))


@dataclass(frozen=True, slots=True)
class Zones:
    """All zones of a table; everything in table millimetres."""

    size: tuple[float, float]  # play area width, height
    marker_mm: float  # side of a marker tile's black square
    marker_tiles: tuple[tuple[int, tuple[float, float]], ...]  # (aruco id, top-left of black square)
    display: tuple[tuple[int, int, Rect], ...]  # (level, slot, rect)
    decks: tuple[tuple[int, Rect], ...]
    energy_row: Rect
    seats: tuple[SeatZones, ...]

    def seat(self, seat: int) -> SeatZones:
        """The zones of one seat."""
        for s in self.seats:
            if s.seat == seat:
                return s
        raise ZonesError(f"zones: no seat {seat}")


def _local_rect(origin: tuple[float, float], rotation: int, r: Rect) -> Rect:
    x, y, w, h = r
    ox, oy = origin
    return (ox + x, oy + y, w, h) if rotation == 0 else (ox - x - w, oy - y - h, w, h)


def seat_zones(seat: int, origin: tuple[float, float], rotation: int) -> SeatZones:
    """A seat's zones from its placement."""
    return SeatZones(
        seat,
        origin,
        rotation,
        *(_local_rect(origin, rotation, r) for r in (LOCAL_GIZMOS, LOCAL_RING, LOCAL_VP, LOCAL_ARCHIVE)),
    )


@cache
def default_zones() -> Zones:
    """The built-in 1180 × 760 mm table for up to four seats."""
    w, h = 1180.0, 760.0
    tile, square = 60.0, 52.0
    inset = (tile - square) / 2
    tiles = (
        (0, (inset, inset)),
        (1, (w - tile + inset, inset)),
        (2, (w - tile + inset, h - tile + inset)),
        (3, (inset, h - tile + inset)),
    )
    display = []
    decks = []
    for row, level in enumerate((3, 2, 1)):
        y = 222.0 + 104.0 * row
        decks.append((level, (300.0, y, 63.0, 88.0)))
        for s in range({1: 4, 2: 3, 3: 2}[level]):
            display.append((level, s, (300.0 + 75.0 * (s + 1), y, 63.0, 88.0)))
    seats = (
        seat_zones(0, (65.0, 552.0), 0),
        seat_zones(1, (w - 65.0, h - 552.0), 180),
        seat_zones(2, (595.0, 552.0), 0),
        seat_zones(3, (w - 595.0, h - 552.0), 180),
    )
    return Zones((w, h), square, tiles, tuple(display), tuple(decks), (720.0, 345.0, 190.0, 50.0), seats)


def zones_to_yaml(z: Zones) -> str:
    """The YAML text of a zones description."""
    doc: dict[str, Any] = {
        "format": "gizmos-zones",
        "version": 1,
        "units": "mm",
        "size": list(z.size),
        "marker_mm": z.marker_mm,
        "markers": [{"id": i, "top_left": list(p)} for i, p in z.marker_tiles],
        "display": [{"level": lv, "slot": s, "rect": list(r)} for lv, s, r in z.display],
        "decks": [{"level": lv, "rect": list(r)} for lv, r in z.decks],
        "energy_row": list(z.energy_row),
        "seats": [
            {
                "seat": s.seat,
                "origin": list(s.origin),
                "rotation": s.rotation,
                "gizmos": list(s.gizmos),
                "ring": list(s.ring),
                "vp_tokens": list(s.vp),
                "archive": list(s.archive),
            }
            for s in z.seats
        ],
    }
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=None)


def _rect(raw: Any, where: str) -> Rect:
    if not isinstance(raw, list) or len(raw) != 4 or not all(isinstance(v, int | float) for v in raw):
        raise ZonesError(f"zones file: {where}: expected [x, y, w, h] in mm, got {raw!r}")
    if raw[2] <= 0 or raw[3] <= 0:
        raise ZonesError(f"zones file: {where}: width and height must be positive")
    return (float(raw[0]), float(raw[1]), float(raw[2]), float(raw[3]))


def _pair(raw: Any, where: str) -> tuple[float, float]:
    if not isinstance(raw, list) or len(raw) != 2 or not all(isinstance(v, int | float) for v in raw):
        raise ZonesError(f"zones file: {where}: expected [x, y], got {raw!r}")
    return (float(raw[0]), float(raw[1]))


def yaml_error_line(exc: yaml.YAMLError) -> str:
    """A YAML error in one line ("expected <block end>, but found '-' at line 3, column 1"),
    instead of PyYAML's several-line message with the offending text drawn under it."""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{problem}{where}"


def load_zones(path: str | Path | None = None) -> Zones:
    """Read and validate a zones file; the default is the built-in table."""
    if path is None:
        return default_zones()
    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ZonesError(f"zones file {p}: cannot read it: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ZonesError(f"zones file {p}: not a text file (byte {exc.start} is not UTF-8)") from exc
    except yaml.YAMLError as exc:
        raise ZonesError(f"zones file {p}: not valid YAML: {yaml_error_line(exc)}") from exc
    if not isinstance(doc, dict) or doc.get("format") != "gizmos-zones" or doc.get("version") != 1:
        raise ZonesError(f"zones file {p}: expected format 'gizmos-zones' version 1")
    try:
        seats = []
        for i, s in enumerate(doc["seats"]):
            if s.get("rotation") not in (0, 180):
                raise ZonesError(f"zones file: seats[{i}].rotation: expected 0 or 180")
            seats.append(
                SeatZones(
                    int(s["seat"]),
                    _pair(s["origin"], f"seats[{i}].origin"),
                    s["rotation"],
                    _rect(s["gizmos"], f"seats[{i}].gizmos"),
                    _rect(s["ring"], f"seats[{i}].ring"),
                    _rect(s["vp_tokens"], f"seats[{i}].vp_tokens"),
                    _rect(s["archive"], f"seats[{i}].archive"),
                )
            )
        return Zones(
            size=_pair(doc["size"], "size"),
            marker_mm=float(doc["marker_mm"]),
            marker_tiles=tuple(
                (int(m["id"]), _pair(m["top_left"], f"markers[{k}]")) for k, m in enumerate(doc["markers"])
            ),
            display=tuple(
                (int(d["level"]), int(d["slot"]), _rect(d["rect"], f"display[{k}]"))
                for k, d in enumerate(doc["display"])
            ),
            decks=tuple(
                (int(d["level"]), _rect(d["rect"], f"decks[{k}]")) for k, d in enumerate(doc["decks"])
            ),
            energy_row=_rect(doc["energy_row"], "energy_row"),
            seats=tuple(seats),
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise ZonesError(f"zones file {p}: missing or malformed field: {exc}") from exc


def inside(rect: Rect, x: float, y: float) -> bool:
    """Whether a point lies in a rectangle."""
    return rect[0] <= x <= rect[0] + rect[2] and rect[1] <= y <= rect[1] + rect[3]


def overlaps(a: Rect, b: Rect) -> bool:
    """Whether two rectangles intersect."""
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def hidden_by(rect: Rect, boxes: Iterable[tuple[float, float, float, float]]) -> bool:
    """Whether any of ``boxes`` (x1, y1, x2, y2, mm: hands) overlaps the zone ``rect``."""
    return any(overlaps(rect, (x1, y1, x2 - x1, y2 - y1)) for x1, y1, x2, y2 in boxes)
