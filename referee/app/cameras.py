"""USB webcams: open one under control (``run --camera N``) and list them (``gizmos-referee cameras``).

A webcam's automatic exposure, white balance and focus keep adjusting while hands move over the
table; each adjustment changes every pixel a little, which the still-frame gate reads as motion
and the color of the marbles drifts. So ``run --camera N`` *locks* them by default: it lets the
automatics settle for a second, reads the values they chose, turns them off and sets those values
(``lock``). Each can instead be left automatic (``auto``) or set to a number (exposure in the
driver's units, white balance in kelvin, focus in the driver's units). The resolution and the
frame rate are asked for too (default 1280 × 720, the camera's own rate).

Drivers differ in what they take, and ``set`` often says yes while changing nothing, so every
control is read back and reported as the driver left it: ``exposure: locked at 156``,
``white balance: the camera keeps it automatic (it does not take a manual value)``. Nothing is
refused by the referee for a control the camera lacks: the run goes on and the report says so.

OpenCV's properties are backend-specific: under V4L2 (Linux) ``CAP_PROP_AUTO_EXPOSURE`` takes the
V4L2 menu values (1 manual, 3 automatic); under DirectShow and Media Foundation (Windows) 0.25
and 0.75. Tested against a fake capture object only: no USB camera was at hand (docs/cameras.md).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import cv2

from referee.app.errors import LiveError
from referee.app.sources import Frame

MAX_INDEX = 10  # indexes 0..9: more than a game table has
DEFAULT_SIZE = (1280, 720)
SETTLE_S = 1.0  # how long the automatics run before a lock reads what they chose
RESOLUTIONS = ((640, 480), (1280, 720), (1920, 1080), (3840, 2160))  # what `cameras` tries
MODES = ("auto", "lock")


@dataclass(frozen=True, slots=True)
class Control:
    """One automatic of a webcam: the property that switches it and the one that holds its value."""

    name: str  # as the options say it: "exposure", "white balance", "focus"
    option: str  # the command-line option
    auto_prop: int
    value_prop: int
    unit: str = ""

    def auto_values(self, backend: str) -> tuple[float, float]:
        """The (manual, automatic) values of ``auto_prop`` under ``backend``."""
        if self.auto_prop == cv2.CAP_PROP_AUTO_EXPOSURE:
            return (1.0, 3.0) if backend.upper() == "V4L2" else (0.25, 0.75)
        return 0.0, 1.0


CONTROLS = (
    Control("exposure", "--exposure", cv2.CAP_PROP_AUTO_EXPOSURE, cv2.CAP_PROP_EXPOSURE),
    Control("white balance", "--white-balance", cv2.CAP_PROP_AUTO_WB, cv2.CAP_PROP_WB_TEMPERATURE, " K"),
    Control("focus", "--focus", cv2.CAP_PROP_AUTOFOCUS, cv2.CAP_PROP_FOCUS),
)


@dataclass(frozen=True, slots=True)
class CameraSettings:
    """What ``run --camera N`` asks of a webcam; each control is "auto", "lock" or a number."""

    size: tuple[int, int] = DEFAULT_SIZE
    fps: float | None = None  # None: the camera's own rate
    controls: dict[str, str | float] = field(default_factory=lambda: {c.name: "lock" for c in CONTROLS})


def parse_size(text: str, option: str = "--resolution") -> tuple[int, int]:
    """``1920x1080`` -> (1920, 1080)."""
    width, sep, height = text.strip().lower().partition("x")
    if (
        not sep
        or not width.isdigit()
        or not height.isdigit()
        or not (160 <= int(width) <= 8192 and 120 <= int(height) <= 8192)
    ):
        raise LiveError(f"{option}: expected WIDTHxHEIGHT such as 1920x1080, got {text!r}")
    return int(width), int(height)


def parse_control(text: Any, option: str) -> str | float:
    """``auto``, ``lock`` or a number (a control's value)."""
    if isinstance(text, bool):
        raise LiveError(f"{option}: expected auto, lock or a number, got {text!r}")
    if isinstance(text, int | float):
        value = float(text)
    else:
        word = str(text).strip().lower()
        if word in MODES:
            return word
        try:
            value = float(word)
        except ValueError:
            raise LiveError(f"{option}: expected auto, lock or a number, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise LiveError(f"{option}: expected auto, lock or a number >= 0, got {text!r}")
    return value


def parse_fps(text: Any, option: str = "--camera-fps") -> float:
    try:
        fps = float(text)
    except (TypeError, ValueError):
        fps = math.nan
    if isinstance(text, bool) or not (math.isfinite(fps) and 1 <= fps <= 240):
        raise LiveError(f"{option}: expected a frame rate of 1-240, got {text!r}")
    return fps


CONFIG_KEYS = {"resolution": "--resolution", "fps": "--camera-fps"} | {
    c.name.replace(" ", "_"): c.option for c in CONTROLS
}


def settings_from(args: Any) -> CameraSettings:
    """The webcam settings from ``--camera-config FILE`` (YAML: resolution, fps, exposure,
    white_balance, focus), overridden by the options given on the command line."""
    values: dict[str, Any] = {}
    where: dict[str, str] = {}  # what a bad value is reported as: the option, or the file and key
    config = getattr(args, "camera_config", None)
    if config:
        path = Path(config).expanduser()
        values.update(_read_config(path))
        where.update({key: f"--camera-config: {path}: {key}" for key in values})
    for key, option in CONFIG_KEYS.items():
        given = getattr(args, option.lstrip("-").replace("-", "_"), None)
        if given is not None:
            values[key], where[key] = given, option
    controls: dict[str, str | float] = {c.name: "lock" for c in CONTROLS}
    for c in CONTROLS:
        key = c.name.replace(" ", "_")
        if key in values:
            controls[c.name] = parse_control(values[key], where[key])
    size = (
        parse_size(str(values["resolution"]), where["resolution"]) if "resolution" in values else DEFAULT_SIZE
    )
    fps = parse_fps(values["fps"], where["fps"]) if values.get("fps") is not None else None
    return CameraSettings(size, fps, controls)


def _read_config(path: Path) -> dict[str, Any]:
    import yaml

    from vision.zones import yaml_error_line

    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LiveError(f"--camera-config: cannot read {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise LiveError(f"--camera-config: {path}: {yaml_error_line(exc)}") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise LiveError(f"--camera-config: {path}: expected a mapping of {', '.join(CONFIG_KEYS)}")
    unknown = sorted(str(k) for k in raw if k not in CONFIG_KEYS)
    if unknown:
        raise LiveError(
            f"--camera-config: {path}: unknown key {unknown[0]!r} (known: {', '.join(CONFIG_KEYS)})"
        )
    return dict(raw)


def given_controls(args: Any) -> list[str]:
    """The webcam options given on the command line (they apply to a camera index only)."""
    names = ["camera_config", *(o.lstrip("-").replace("-", "_") for o in CONFIG_KEYS.values())]
    return ["--" + n.replace("_", "-") for n in names if getattr(args, n, None) is not None]


# ============================================================================ applying them


def _close(a: float, b: float) -> bool:
    """A value read back is the one set (drivers round to their step: 1 unit or 2 %)."""
    return abs(a - b) <= max(1.0, 0.02 * abs(b))


def _same_mode(a: float, b: float) -> bool:
    """An automatic's switch reads back as set (0/1, 1/3 or 0.25/0.75: exact)."""
    return abs(a - b) < 0.01


def _fmt(value: float) -> str:
    return f"{value:g}"


def apply_size(cap: Any, settings: CameraSettings) -> list[str]:
    """Ask for the resolution and frame rate; what the camera gives, read back."""
    cap.set(cv2.CAP_PROP_FRAME_WIDTH, settings.size[0])
    cap.set(cv2.CAP_PROP_FRAME_HEIGHT, settings.size[1])
    if settings.fps is not None:
        cap.set(cv2.CAP_PROP_FPS, settings.fps)
    width, height = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
    fps = float(cap.get(cv2.CAP_PROP_FPS))
    line = f"resolution {width} x {height}"
    if (width, height) != settings.size:
        line += f" (asked {settings.size[0]} x {settings.size[1]}: the camera's nearest)"
    rate = f"{_fmt(fps)} frames/s" if fps > 0 else "frame rate not reported"
    if settings.fps is not None and not (fps > 0 and abs(fps - settings.fps) < 0.5):
        rate += f" (asked {_fmt(settings.fps)})"
    return [line, rate]


def apply_control(cap: Any, control: Control, want: str | float, backend: str) -> str:
    """Set one control as asked and say what the driver accepted (read back)."""
    manual, auto = control.auto_values(backend)
    name = control.name
    if want == "auto":
        cap.set(control.auto_prop, auto)
        if _same_mode(cap.get(control.auto_prop), auto):
            return f"{name}: automatic"
        return f"{name}: the camera did not take automatic (it reports {_fmt(cap.get(control.auto_prop))})"
    value = float(cap.get(control.value_prop)) if want == "lock" else float(want)
    if want == "lock" and value < 0:
        return f"{name}: not reported by this camera (left as it is)"
    cap.set(control.auto_prop, manual)
    if not _same_mode(cap.get(control.auto_prop), manual):
        return f"{name}: the camera keeps it automatic (it does not take a manual value)"
    cap.set(control.value_prop, value)
    got = float(cap.get(control.value_prop))
    how = "locked at" if want == "lock" else "set to"
    if _close(got, value):
        return f"{name}: {how} {_fmt(got)}{control.unit}"
    asked = f"{_fmt(value)}{control.unit}"
    return f"{name}: manual at {_fmt(got)}{control.unit} (asked {asked}: the camera's nearest)"


def apply_settings(
    cap: Any, settings: CameraSettings, backend: str, settle: Callable[[], None] | None = None
) -> list[str]:
    """Resolution, frame rate and each control; the report, one line each. ``settle`` runs the
    camera for a moment before a lock reads what its automatics chose."""
    report = apply_size(cap, settings)
    wants = [(c, settings.controls.get(c.name, "lock")) for c in CONTROLS]
    if settle is not None and any(w == "lock" for _, w in wants):
        for c, w in wants:  # the automatics on, so a lock takes what they settle on
            if w == "lock":
                cap.set(c.auto_prop, c.auto_values(backend)[1])
        settle()
    report += [apply_control(cap, c, w, backend) for c, w in wants]
    return report


class CameraFrames:
    """A webcam by index (OpenCV), under the settings asked for (see the module docstring)."""

    live = True

    def __init__(
        self,
        index: int,
        settings: CameraSettings | None = None,
        capture: Callable[[int], Any] = cv2.VideoCapture,
        settle_s: float = SETTLE_S,
    ) -> None:
        self.name = f"camera {index}"
        self.settings = settings or CameraSettings()
        level = cv2.utils.logging.getLogLevel()
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)  # our error says it in one line
        try:
            self.cap = capture(index)
        finally:
            cv2.utils.logging.setLogLevel(level)
        if not self.cap.isOpened():
            raise LiveError(f"camera {index}: cannot open it (is a camera connected? try another index)")
        self.cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)

        def settle() -> None:
            end = time.monotonic() + settle_s
            while time.monotonic() < end:
                if not self.cap.read()[0]:
                    break

        self.report = apply_settings(self.cap, self.settings, self.cap.getBackendName(), settle)

    def frames(self) -> Iterator[Frame]:
        start = time.monotonic()
        index = 0
        while True:
            ok, image = self.cap.read()
            if not ok or image is None:
                raise LiveError(f"{self.name}: stopped delivering frames (unplugged?)")
            yield Frame(index, time.monotonic() - start, image)
            index += 1

    def close(self) -> None:
        self.cap.release()


# ============================================================================ listing


@dataclass(frozen=True, slots=True)
class CameraInfo:
    """One camera that opened: its index, what it delivers, and what it supports."""

    index: int
    width: int
    height: int
    fps: float
    backend: str
    resolutions: tuple[tuple[int, int], ...] = ()  # of RESOLUTIONS, those it delivers exactly
    controls: tuple[str, ...] = ()  # the controls it reports a value for

    def line(self) -> str:
        rate = f"{self.fps:g} frames/s" if self.fps > 0 else "frame rate not reported"
        text = f"camera {self.index}: {self.width} x {self.height}, {rate} ({self.backend})"
        if self.resolutions:
            text += "; resolutions " + ", ".join(f"{w}x{h}" for w, h in self.resolutions)
        text += "; controls " + (", ".join(self.controls) if self.controls else "none reported")
        return text


def supported_controls(cap: Any) -> tuple[str, ...]:
    """The controls whose value the driver reports (V4L2 answers -1 for one it lacks)."""
    return tuple(c.name for c in CONTROLS if cap.get(c.value_prop) >= 0 and cap.get(c.auto_prop) >= 0)


def probe(index: int, capture: Callable[[int], Any] = cv2.VideoCapture) -> CameraInfo | None:
    """The camera at ``index`` if it opens and gives a frame, else None."""
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    try:
        cap = capture(index)
        try:
            if not cap.isOpened():
                return None
            controls = supported_controls(cap)
            resolutions = []
            for size in RESOLUTIONS:
                cap.set(cv2.CAP_PROP_FRAME_WIDTH, size[0])
                cap.set(cv2.CAP_PROP_FRAME_HEIGHT, size[1])
                if (int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))) == size:
                    resolutions.append(size)
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, DEFAULT_SIZE[0])
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, DEFAULT_SIZE[1])
            ok, image = cap.read()
            if not ok or image is None:
                return None
            height, width = image.shape[:2]
            return CameraInfo(
                index,
                width,
                height,
                float(cap.get(cv2.CAP_PROP_FPS)),
                cap.getBackendName(),
                tuple(resolutions),
                controls,
            )
        finally:
            cap.release()
    finally:
        cv2.utils.logging.setLogLevel(level)


def list_cameras(
    count: int = MAX_INDEX, capture: Callable[[int], Any] = cv2.VideoCapture
) -> list[CameraInfo]:
    """Every camera among indexes ``0..count-1`` that opens and gives a frame."""
    return [info for i in range(count) if (info := probe(i, capture)) is not None]


def run_cameras(args: Any, out: TextIO | None = None) -> int:
    """Print one line per camera found (on ``out``, default stdout), or one line saying none was."""
    out = out or sys.stdout
    found = list_cameras()
    if not found:
        out.write(
            f"no camera found (indexes 0-{MAX_INDEX - 1} tried); a phone or IP camera is given "
            "to run --camera as its stream URL, a phone's browser as --camera phone\n"
        )
    for info in found:
        out.write(info.line() + "\n")
    return 0
