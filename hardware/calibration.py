"""Color calibration: raw TCS34725 readings -> energy colors, recorded by the user.

Raw counts depend on the sensor, the chute and the room's light, so no fixed thresholds work
everywhere; instead the user drops a few marbles of each color and we keep the centroid of
each color in a normalised chromaticity space (r/(r+g+b), g/(r+g+b)) plus a log-brightness
axis (black and a dim red have similar hue but not similar brightness). A reading is the
nearest color only when it lies within that color's radius and is not nearly as close to
another; anything else is ``"unknown"`` so the referee asks instead of guessing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hardware.protocol import MAX_CHANNEL
from referee.gizmos.cards import COLORS

RGBC = tuple[int, int, int, int]
Feature = tuple[float, float, float]

FORMAT = "gizmos-dispenser-calibration"
VERSION = 1
#: Fewest samples per color that give a usable spread.
MIN_SAMPLES = 2
#: A color's acceptance radius is this many RMS spreads of its samples ...
RADIUS_SPREADS = 4.0
#: ... but never tighter than this (a handful of near-identical samples underestimates noise).
MIN_RADIUS = 0.04
#: A reading nearly as close to a second color (distance ratio above this) is ambiguous.
AMBIGUITY_RATIO = 0.8


class ColorCalibrationError(ValueError):
    """A calibration file or sample set that cannot be used; the message says what and where."""


class CalibrationAborted(Exception):
    """The user quit the walk-through."""


def feature(rgbc: RGBC) -> Feature | None:
    """Chromaticity plus log brightness of a reading; None when it has no light at all."""
    r, g, b, c = rgbc
    total = r + g + b
    if total <= 0:
        return None
    return (r / total, g / total, math.log2(1 + c) / 16)


def _distance(a: Feature, b: Feature) -> float:
    return math.dist(a, b)


@dataclass(frozen=True, slots=True)
class ColorModel:
    """One color's centroid and acceptance radius in feature space."""

    centroid: Feature
    radius: float


@dataclass(frozen=True)
class ColorCalibration:
    """Nearest-centroid classifier with rejection; built from the samples the user recorded."""

    samples: Mapping[str, tuple[RGBC, ...]]
    models: Mapping[str, ColorModel]

    @classmethod
    def from_samples(cls, samples: Mapping[str, Sequence[RGBC]]) -> ColorCalibration:
        """Fit every color in :data:`COLORS`; raises :class:`ColorCalibrationError` naming a bad color."""
        missing = [c for c in COLORS if c not in samples]
        if missing:
            raise ColorCalibrationError(f"calibration: no samples for {', '.join(missing)}")
        extra = [c for c in samples if c not in COLORS]
        if extra:
            raise ColorCalibrationError(f"calibration: unknown colour(s) {', '.join(map(repr, extra))}")
        models = {}
        clean: dict[str, tuple[RGBC, ...]] = {}
        for color in COLORS:
            readings = tuple(_check_reading(r, f"{color}[{i}]") for i, r in enumerate(samples[color]))
            feats = [f for f in map(feature, readings) if f is not None]
            if len(feats) < MIN_SAMPLES:
                raise ColorCalibrationError(
                    f"calibration.{color}: need at least {MIN_SAMPLES} readings with "
                    f"light in them, got {len(feats)}"
                )
            centroid: Feature = (
                sum(f[0] for f in feats) / len(feats),
                sum(f[1] for f in feats) / len(feats),
                sum(f[2] for f in feats) / len(feats),
            )
            spread = math.sqrt(sum(_distance(f, centroid) ** 2 for f in feats) / len(feats))
            models[color] = ColorModel(centroid, max(MIN_RADIUS, RADIUS_SPREADS * spread))
            clean[color] = readings
        return cls(clean, models)

    def classify(self, rgbc: RGBC) -> str:
        """The color of a reading, or ``"unknown"`` when it is far from all or ambiguous."""
        f = feature(rgbc)
        if f is None:
            return "unknown"
        ranked = sorted((_distance(f, m.centroid), color) for color, m in self.models.items())
        (d1, best), (d2, second) = ranked[0], ranked[1]
        if d1 > self.models[best].radius:
            return "unknown"
        if d2 <= self.models[second].radius and d1 > AMBIGUITY_RATIO * d2:
            return "unknown"
        return best

    def warnings(self) -> list[str]:
        """Problems worth telling the user: overlapping colors, samples that would not classify."""
        out = []
        for i, a in enumerate(COLORS):
            for b in COLORS[i + 1 :]:
                ma, mb = self.models[a], self.models[b]
                if _distance(ma.centroid, mb.centroid) < ma.radius + mb.radius:
                    out.append(f"{a} and {b} overlap: readings between them will be 'unknown'")
        for color, readings in self.samples.items():
            wrong = sum(1 for r in readings if self.classify(r) != color)
            if wrong:
                out.append(f"{wrong} of {len(readings)} {color} sample(s) do not classify as {color}")
        return out

    # -- files ---------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The file form: the samples (authoritative) and the fitted models (for people reading it)."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "samples": {c: [list(r) for r in self.samples[c]] for c in COLORS},
            "models": {
                c: {"centroid": [round(x, 6) for x in m.centroid], "radius": round(m.radius, 6)}
                for c, m in self.models.items()
            },
        }

    def save(self, path: Path) -> None:
        """Write the calibration as JSON (atomically, so a crash never leaves half a file)."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def from_json(cls, doc: Any, where: str = "calibration") -> ColorCalibration:
        """Rebuild from :meth:`to_json` output; the models are refitted from the samples."""
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ColorCalibrationError(f"{where}: not a dispenser calibration (expected format {FORMAT!r})")
        if doc.get("version") != VERSION:
            raise ColorCalibrationError(
                f"{where}: version {doc.get('version')!r} is not supported (expected {VERSION})"
            )
        samples = doc.get("samples")
        if not isinstance(samples, dict):
            raise ColorCalibrationError(f"{where}.samples: expected an object of colour -> readings")
        for color, readings in samples.items():
            if not isinstance(readings, list):
                raise ColorCalibrationError(
                    f"{where}.samples.{color}: expected a list of [r, g, b, c] readings"
                )
        try:
            return cls.from_samples(samples)
        except ColorCalibrationError as exc:
            raise ColorCalibrationError(f"{where}: {exc}") from None

    @classmethod
    def load(cls, path: Path) -> ColorCalibration:
        """Read a calibration file; every failure is a :class:`ColorCalibrationError` naming the file."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ColorCalibrationError(f"{path}: cannot read calibration: {exc.strerror}") from None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ColorCalibrationError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
        return cls.from_json(doc, str(path))


def _check_reading(value: Any, where: str) -> RGBC:
    ok = (
        isinstance(value, list | tuple)
        and len(value) == 4
        and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_CHANNEL for v in value)
    )
    if not ok:
        raise ColorCalibrationError(
            f"{where}: expected [r, g, b, c] integers 0..{MAX_CHANNEL}, got {value!r}"
        )
    return (value[0], value[1], value[2], value[3])


def walk_through(
    read: Callable[[float], RGBC | None],
    ask: Callable[[str], str],
    say: Callable[[str], None],
    *,
    per_color: int = 5,
    wait: float = 30.0,
) -> ColorCalibration:
    """Guide the user through dropping ``per_color`` marbles of each color; returns the fit.

    ``read(timeout)`` returns the next raw reading from the chute sensor or None after
    ``timeout`` seconds; ``ask`` and ``say`` talk to the user (``input`` and ``print`` in the
    CLI, scripted in tests). Answering ``q`` to any question raises :class:`CalibrationAborted`.
    """
    if per_color < MIN_SAMPLES:
        raise ColorCalibrationError(
            f"per_color: need at least {MIN_SAMPLES} marbles per colour, got {per_color}"
        )

    def confirm(question: str) -> None:
        if ask(question).strip().lower() == "q":
            raise CalibrationAborted("calibration cancelled")

    samples: dict[str, list[RGBC]] = {}
    for color in COLORS:
        confirm(
            f"Drop {per_color} {color} marbles through the Energy Row chute, one at a time. "
            f"Press Enter to start (q to quit)."
        )
        got: list[RGBC] = samples.setdefault(color, [])
        while len(got) < per_color:
            reading = read(wait)
            if reading is None:
                confirm(f"No marble seen for {wait:.0f} s. Press Enter to keep waiting (q to quit).")
            elif feature(reading) is None:
                say("  ignored a reading with no light in it (is the sensor's LED on?)")
            else:
                got.append(reading)
                say(f"  {color} {len(got)}/{per_color}: rgbc={reading}")
    calibration = ColorCalibration.from_samples(samples)
    for warning in calibration.warnings():
        say(f"warning: {warning}")
    return calibration
