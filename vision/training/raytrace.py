"""A renderer of another kind: tables ray-traced in 3-D by POV-Ray.

The project's own renderer (:mod:`vision.training.synth`) pastes flat pictures onto a flat table
and projects it. This one builds the same tables (the same layouts, placements and cameras from
the same seeds, :class:`~vision.training.synth.Placed`) as a 3-D scene and has POV-Ray trace it:
cards are boxes of card stock 0.35 mm thick stacked on each other, decks 6-7.5 mm tall, marbles
real spheres 16 mm across (glossy, glass or swirled, touching in heaps), VP tokens 2 mm discs,
under a lamp of 2700-6500 K with an area light's soft shadows and a weak fill; then the
settings' camera processing. Things above the table are seen where a camera sees them: a
marble's top is 16 mm up, so under a tilted camera it lies several millimetres off its
footprint, which no flat renderer shows; marble and token boxes are labelled where they are seen.

It plugs in as ``RenderSettings.renderer``: the benchmark's held-out ``traced`` conditions
(``benchmarks/raytrace.py``: the held-out style, webcam and decks) and, with the randomiser's
settings, training scenes (``vision dataset --raytrace``).

Rendering costs seconds a frame, so finished frames are kept in a cache folder keyed by the
scene file's and its pictures' hash (``$GIZMOS_RAYTRACE_CACHE``, default ``data/raytrace-cache``).
The cache is also what makes a traced frame the same frame twice: the jittered area light traces
a scene a little differently each time, so two checkouts compared on traced frames share one.
POV-Ray is a Debian package (``povray``); ``scripts/setup.sh --dev`` installs it, and
:func:`povray` says clearly when it is missing.
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from vision.calibrate import ARUCO_DICT
from vision.errors import DatasetError
from vision.faces import CARD_MM, draw_back, face_set
from vision.geometry import MARBLE_MM
from vision.training.synth import (
    CANVAS_MARGIN_MM,
    CANVAS_PX_PER_MM,
    VP_MM,
    Placed,
    RenderedScene,
    RenderSettings,
    SceneObject,
    TableLayout,
    _Canvas,
    _draw_table,
    _effects,
    ground_truth,
    marble_bgr,
    plane_homography,
    random_camera,
)
from vision.whitebalance import kelvin_gains
from vision.zones import Zones, default_zones

CARD_THICK_MM = 0.35
DECK_MM = (6.0, 7.5)  # a deck's height: about 20 cards
TOKEN_THICK_MM = 2.0
MARKER_BORDER_MM = 9.0  # the marker tile's white quiet zone (as the flat renderer's)
#: POV-Ray's quality: adaptive anti-aliasing (threshold, depth); enough for the markers' edges.
ANTIALIAS = ("+A0.2", "+R2")
LAMP_K = (2700.0, 6500.0)  # the lamp's colour temperature
#: Bumped when the scene description changes in a way the hash would not see (none so far).
SCENE_VERSION = 1


class RaytraceError(DatasetError):
    """POV-Ray is missing or failed on a scene (the CLI prints it as one line)."""


def povray() -> str:
    """The POV-Ray program, or a clear error naming the package to install."""
    exe = shutil.which("povray")
    if exe is None:
        raise RaytraceError(
            "raytrace: POV-Ray is not installed (Debian package 'povray'; scripts/setup.sh --dev installs it)"
        )
    return exe


def _linear(bgr: tuple[float, float, float] | np.ndarray) -> tuple[float, float, float]:
    """An sRGB BGR colour (0-255) as POV-Ray's linear rgb (POV-Ray works at gamma 1)."""
    b, g, r = (float(v) / 255 for v in bgr)
    return tuple(  # type: ignore[return-value]
        round(((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92, 5) for c in (r, g, b)
    )


def _vec(v: np.ndarray | tuple[float, ...]) -> str:
    return "<" + ", ".join(f"{float(x):.6f}" for x in v) + ">"


def _rgb(c: tuple[float, float, float]) -> str:
    return f"rgb <{c[0]:.5f}, {c[1]:.5f}, {c[2]:.5f}>"


def _picture(name: str, w_mm: float, h_mm: float) -> str:
    """A picture file laid on the x-y plane, its top row at y = -h/2 (the table's y runs down),
    centred on the origin."""
    return (
        f'pigment {{ image_map {{ png "{name}" once interpolate 2 }} '
        f"scale <{w_mm:.4f}, {-h_mm:.4f}, 1> translate <{-w_mm / 2:.4f}, {h_mm / 2:.4f}, 0> }}"
    )


def _placement(angle_deg: float, x: float, y: float, z: float) -> str:
    """Turned by ``angle_deg`` as the flat renderer turns a card (clockwise on the image), then moved."""
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    return f"matrix <{c:.6f}, {s:.6f}, 0, {-s:.6f}, {c:.6f}, 0, 0, 0, 1, {x:.4f}, {y:.4f}, {z:.4f}>"


def _footprint(p: Placed) -> np.ndarray:
    w, h = CARD_MM
    a = math.radians(p.angle_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    return (local @ rot.T + np.array(p.center)).astype(np.float32)


def _marble(rng: np.random.Generator, p: Placed) -> str:
    """A marble of one of three materials: glossy, glass (refracting) or swirled."""
    base = np.array(marble_bgr(p.color or "red"), np.float64)
    base = np.clip(base * rng.uniform(0.85, 1.15, 3), 0, 255)
    col = _linear(base)
    kind = rng.choice(["glossy", "glass", "swirl"], p=[0.45, 0.3, 0.25])
    x, y = p.center
    r = MARBLE_MM / 2
    finish = (
        f"finish {{ ambient 0.06 diffuse 0.75 phong {rng.uniform(0.6, 1.0):.2f} "
        f"phong_size {rng.uniform(60, 200):.0f} reflection {{ {rng.uniform(0.03, 0.12):.3f} }} }}"
    )
    if kind == "glass":
        pigment = f"pigment {{ {_rgb(col)} filter {0.35 if p.color == 'black' else 0.7} }}"
        interior = "interior { ior 1.5 }"
    elif kind == "swirl":
        light = tuple(min(1.0, 0.4 + 0.6 * c) for c in col)
        pigment = (
            f"pigment {{ marble turbulence {rng.uniform(0.6, 1.2):.2f} color_map {{ "
            f"[0 {_rgb(col)}] [0.75 {_rgb(col)}] [1 {_rgb(light)}] }} "  # type: ignore[arg-type]
            f"scale {rng.uniform(3, 6):.2f} "
            f"rotate <{rng.uniform(0, 360):.0f}, {rng.uniform(0, 360):.0f}, 0> }}"
        )
        interior = ""
    else:
        pigment = f"pigment {{ {_rgb(col)} }}"
        interior = ""
    return f"sphere {{ <{x:.4f}, {y:.4f}, {-r:.4f}>, {r:.4f} texture {{ {pigment} {finish} }} {interior} }}"


def _token_picture(settings: RenderSettings, points: int) -> np.ndarray:
    """A VP token's printed face (its printing from ``settings``), square, at the flat renderer's scale."""
    r = VP_MM[points] / 2
    side = math.ceil(2 * r * CANVAS_PX_PER_MM) + 2
    img = np.zeros((side, side, 3), np.uint8)
    cv = _Canvas(img, np.array([0.0, 0.0, 1.0], np.float32), settings.token_fills, settings.token_print)
    centre = side / 2 / CANVAS_PX_PER_MM - CANVAS_MARGIN_MM
    cv.token(points, (centre, centre))
    return img


def _marker_tile(marker_id: int) -> np.ndarray:
    """A marker on its white paper tile, 4 px/mm."""
    d = cv2.aruco.getPredefinedDictionary(ARUCO_DICT)
    px = 6 * 40
    mark = cv2.cvtColor(cv2.aruco.generateImageMarker(d, marker_id, px), cv2.COLOR_GRAY2BGR)
    b = round(px * MARKER_BORDER_MM / 52.0)
    return cv2.copyMakeBorder(mark, b, b, b, b, cv2.BORDER_CONSTANT, value=(238, 238, 238))


def scene_file(
    placed: list[Placed],
    zones: Zones,
    k: np.ndarray,
    rot: np.ndarray,
    t: np.ndarray,
    size: tuple[int, int],
    rng: np.random.Generator,
) -> tuple[str, float]:
    """The POV-Ray scene of a table (pictures named ``table.png``, ``face{id}.png``,
    ``back{level}.png``, ``vp{points}.png``, ``marker{id}.png``); returns it and the lamp's
    colour temperature (K)."""
    w, h = size
    f = float(k[0, 0])
    cx, cy = float(k[0, 2]), float(k[1, 2])
    pos = -rot.T @ t
    xc, yc, zc = rot[0], rot[1], rot[2]
    # The image's ray through pixel (u, v) is xc (u - cx) / f + yc (v - cy) / f + zc (any scale):
    # POV-Ray's is direction + (u / w - 1/2) right + (1/2 - v / h) up.
    direction = zc * f + xc * (w / 2 - cx) + yc * (h / 2 - cy)
    lines = [
        "#version 3.7;",
        "global_settings { assumed_gamma 1.0 max_trace_level 8 ambient_light rgb 1 }",
        f"camera {{ perspective location {_vec(pos)} direction {_vec(direction)} "
        f"right {_vec(xc * w)} up {_vec(-yc * h)} }}",
    ]
    kelvin = float(rng.uniform(*LAMP_K))
    lamp_bgr = kelvin_gains(kelvin)  # relative gains, mean 1
    lamp = tuple(float(v) for v in lamp_bgr[::-1])
    tw, th = zones.size
    az = rng.uniform(0, 2 * math.pi)
    lamp_h = rng.uniform(900, 1800)
    off = rng.uniform(0, 700)
    lamp_pos = (tw / 2 + off * math.cos(az), th / 2 + off * math.sin(az), -lamp_h)
    power = rng.uniform(1.0, 1.3)
    size_mm = rng.uniform(80, 250)  # the lamp's shade: soft shadows
    lines.append(
        f"light_source {{ {_vec(lamp_pos)} color rgb <{lamp[0] * power:.4f}, {lamp[1] * power:.4f}, "
        f"{lamp[2] * power:.4f}> area_light <{size_mm:.1f}, 0, 0>, <0, {size_mm:.1f}, 0>, 4, 4 "
        "adaptive 1 jitter circular orient "
        f"fade_distance {lamp_h:.0f} fade_power 2 }}"
    )
    fill = rng.uniform(0.12, 0.25)  # the room: a weak shadowless light from elsewhere
    lines.append(
        f"light_source {{ <{tw / 2 - off * math.cos(az):.1f}, {th / 2 - off * math.sin(az):.1f}, -2500> "
        f"color rgb <{fill:.3f}, {fill:.3f}, {fill:.3f}> shadowless }}"
    )
    # The table: the flat renderer's empty table (surface, mats, dispenser tray) as its top.
    m = CANVAS_MARGIN_MM
    tw_px, th_px = tw + 2 * m, th + 2 * m
    lines.append(
        "plane { -z, 0 texture { "
        f'pigment {{ image_map {{ png "table.png" once interpolate 2 }} '
        f"scale <{tw_px:.3f}, {-th_px:.3f}, 1> translate <{-m:.3f}, {th_px - m:.3f}, 0> }} "
        f"finish {{ ambient 0.05 diffuse 0.85 specular {rng.uniform(0.0, 0.15):.3f} roughness 0.05 }} }} }}"
    )
    tile = zones.marker_mm + 2 * MARKER_BORDER_MM
    for mid, (mx, my) in zones.marker_tiles:
        cxm, cym = mx + zones.marker_mm / 2, my + zones.marker_mm / 2
        lines.append(
            f"box {{ <{-tile / 2:.3f}, {-tile / 2:.3f}, -0.1>, <{tile / 2:.3f}, {tile / 2:.3f}, 0> "
            f"texture {{ {_picture(f'marker{mid}.png', tile, tile)} finish {{ ambient 0.05 diffuse 0.8 }} }} "
            f"translate <{cxm:.4f}, {cym:.4f}, 0> }}"
        )
    card_finish = (
        f"finish {{ ambient 0.05 diffuse 0.8 specular {rng.uniform(0.05, 0.3):.3f} roughness 0.02 }}"
    )
    # Each card lies on the highest card put down before it that it overlaps (the flat renderer
    # paints in the order cards are put down, so a later card is always the higher one): a count
    # of the cards under it would leave a column's fifth and sixth card level, and a card overlapping
    # a neighbouring column's edge above the card laid on it (docs/vision.md, "Seventeenth round").
    cards_below: list[tuple[np.ndarray, float]] = []  # footprint, height of its top
    decks: dict[int | None, float] = {}  # a deck's height, one per level
    for p in placed:
        if p.kind in ("card", "back"):
            foot = _footprint(p)
            under = max(
                (t for q, t in cards_below if cv2.intersectConvexConvex(q, foot)[0] > 20.0), default=0.0
            )
            if p.kind == "back":
                top = max(decks.setdefault(p.level, float(rng.uniform(*DECK_MM))), under + CARD_THICK_MM)
                pic = f"back{p.level}.png"
            else:
                top = under + CARD_THICK_MM
                pic = f"face{p.card}.png"
            cards_below.append((foot, top))
            cw, ch = CARD_MM
            lines.append(
                f"box {{ <{-cw / 2:.3f}, {-ch / 2:.3f}, {-top:.3f}>, <{cw / 2:.3f}, {ch / 2:.3f}, 0> "
                f"texture {{ {_picture(pic, cw, ch)} {card_finish} }} "
                f"{_placement(p.angle_deg, p.center[0], p.center[1], 0.0)} }}"
            )
        elif p.kind == "marble":
            lines.append(_marble(rng, p))
        elif p.kind == "token":
            r = VP_MM[p.points or 1] / 2
            side = (math.ceil(2 * r * CANVAS_PX_PER_MM) + 2) / CANVAS_PX_PER_MM
            lines.append(
                f"cylinder {{ <0, 0, 0>, <0, 0, {-TOKEN_THICK_MM}>, {r:.3f} "
                f"texture {{ {_picture(f'vp{p.points}.png', side, side)} "
                "finish { ambient 0.05 diffuse 0.8 specular 0.1 } } "
                f"translate <{p.center[0]:.4f}, {p.center[1]:.4f}, 0> }}"
            )
    return "\n".join(lines) + "\n", kelvin


def _trace(folder: Path, size: tuple[int, int], cache: Path) -> np.ndarray:
    """Trace ``folder/scene.pov`` (or read the frame back from the cache); BGR image."""
    digest = hashlib.sha256(f"v{SCENE_VERSION} {size} {ANTIALIAS}".encode())
    for f in sorted(folder.iterdir()):
        digest.update(f.name.encode())
        digest.update(f.read_bytes())
    key = cache / f"{digest.hexdigest()[:32]}.png"
    if key.exists():
        img = cv2.imread(str(key), cv2.IMREAD_COLOR)
        if img is not None and img.shape[:2] == (size[1], size[0]):
            return img
    exe = povray()
    out = folder / "frame.png"
    cmd = [
        exe,
        f"+I{folder / 'scene.pov'}",
        f"+O{out}",
        f"+W{size[0]}",
        f"+H{size[1]}",
        *ANTIALIAS,
        "+Q9",
        "-D",
        "-V",
        "-P",
        f"+WT{os.cpu_count() or 1}",
        f"+L{folder}",
    ]
    run = subprocess.run(cmd, capture_output=True, text=True, check=False)
    img = cv2.imread(str(out), cv2.IMREAD_COLOR) if out.exists() else None
    if run.returncode != 0 or img is None:
        tail = (run.stderr or run.stdout).strip().splitlines()[-3:]
        raise RaytraceError(f"raytrace: POV-Ray failed on {folder / 'scene.pov'}: {' / '.join(tail)}")
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f".{key.name}.{os.getpid()}.png"
    cv2.imwrite(str(tmp), img)
    os.replace(tmp, key)  # a cached frame is whole or absent
    return img


def _seen_box(
    o: SceneObject, k: np.ndarray, rot: np.ndarray, t: np.ndarray, image_to_table: np.ndarray
) -> tuple[float, float, float, float]:
    """A marble's or token's box where the camera sees it on the table (mm): the bounding box of
    its solid's image mapped back to the table plane. A marble's top stands 16 mm up, so under a
    tilted camera this box lies several millimetres off the footprint and is longer across it;
    the detector is scored against, and the oracle given, what the camera shows
    (``image_to_table``: the inverse of the camera's plane homography)."""
    x1, y1, x2, y2 = o.box_mm
    cx, cy, r = (x1 + x2) / 2, (y1 + y2) / 2, (x2 - x1) / 2
    a = np.linspace(0, 2 * math.pi, 48, endpoint=False)
    if o.cls.startswith("marble"):
        u, v = np.meshgrid(a, np.linspace(-math.pi / 2, math.pi / 2, 25))
        ring_r = r * np.cos(v)
        pts = np.stack([cx + ring_r * np.cos(u), cy + ring_r * np.sin(u), -r - r * np.sin(v)], -1)
    else:
        ring = np.stack([cx + r * np.cos(a), cy + r * np.sin(a)], -1)
        pts = np.concatenate([np.c_[ring, np.zeros(len(a))], np.c_[ring, np.full(len(a), -TOKEN_THICK_MM)]])
    pts = pts.reshape(-1, 3)
    img = (k @ (rot @ pts.T + t[:, None])).T
    table = np.c_[img[:, :2] / img[:, 2:], np.ones(len(img))] @ image_to_table.T
    table = table[:, :2] / table[:, 2:]
    (bx1, by1), (bx2, by2) = table.min(0), table.max(0)
    return float(bx1), float(by1), float(bx2), float(by2)


def cache_dir() -> Path:
    """Where traced frames are kept (``$GIZMOS_RAYTRACE_CACHE``, default ``data/raytrace-cache``)."""
    env = os.environ.get("GIZMOS_RAYTRACE_CACHE")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "data" / "raytrace-cache"


def render_raytraced(
    layout: TableLayout,
    seed: int,
    settings: RenderSettings | None = None,
    zones: Zones | None = None,
    faces: tuple[np.ndarray, ...] | None = None,
) -> RenderedScene:
    """``layout`` ray-traced: the flat renderer's placements and camera for ``seed``, in 3-D.

    No hands (a hand's truth needs its shadow and silhouette traced too; not built yet). With
    ``settings.empty_table`` the bare table is traced too (the occlusion stage's background).
    """
    s = settings or RenderSettings()
    z = zones or default_zones()
    faces = faces if faces is not None else face_set()
    rng = np.random.default_rng(seed)
    empty: list[np.ndarray] = []
    placed: list[Placed] = []
    _, objects, by_zone = _draw_table(layout, z, rng, s, faces, empty, placed)
    k, rot, t = random_camera(rng, z, s)
    look = np.random.default_rng([seed, 4242])  # the ray tracer's own choices: lamp, materials
    lamp = np.random.default_rng([seed, 4242])  # the same lamp for the empty table
    raw, kelvin = _traced(placed, empty[0], faces, z, k, rot, t, s, look)
    camera = np.random.default_rng([seed, 4243])
    empty_image = None
    if s.empty_table:  # the table before anything was put on it: the same lamp and camera
        bare, _ = _traced([], empty[0], faces, z, k, rot, t, s, lamp)
        twin = np.random.default_rng([seed, 4243])
        empty_image = _camera(twin, bare, kelvin, s)
        noise = np.random.default_rng([seed, 98]).normal(0, 3.0, empty_image.shape)  # its own sensor noise
        empty_image = np.clip(empty_image + noise, 0, 255).astype(np.uint8)
    img = _camera(camera, raw, kelvin, s)
    truth = ground_truth(layout, by_zone, set(), z)
    h_img = plane_homography(k, rot, t)
    back = np.linalg.inv(h_img)
    objects = [
        replace(o, box_mm=_seen_box(o, k, rot, t, back)) if o.cls.startswith(("marble", "vp")) else o
        for o in objects
    ]
    return RenderedScene(img, truth, objects, h_img, layout, [], truth, frozenset(), None, empty_image)


def _camera(rng: np.random.Generator, img: np.ndarray, kelvin: float, s: RenderSettings) -> np.ndarray:
    """The camera on a traced frame: its white balance corrects the lamp by 40-80 %, then the
    settings' processing (``RenderSettings.camera``, default the flat renderer's effects)."""
    wb = rng.uniform(0.4, 0.8)
    f = np.clip(img.astype(np.float32) / kelvin_gains(kelvin)[None, None, :] ** wb, 0, 255)
    return (s.camera or _effects)(rng, f.astype(np.uint8))


def _traced(
    placed: list[Placed],
    table: np.ndarray,
    faces: tuple[np.ndarray, ...],
    z: Zones,
    k: np.ndarray,
    rot: np.ndarray,
    t: np.ndarray,
    s: RenderSettings,
    look: np.random.Generator,
) -> tuple[np.ndarray, float]:
    """The scene written with its pictures into a folder of its own and traced; (image, lamp K)."""
    with tempfile.TemporaryDirectory(prefix="gizmos-raytrace-") as tmp:
        folder = Path(tmp)
        text, kelvin = scene_file(placed, z, k, rot, t, s.size, look)
        (folder / "scene.pov").write_text(text, encoding="utf-8")
        cv2.imwrite(str(folder / "table.png"), table)
        for mid, _ in z.marker_tiles:
            cv2.imwrite(str(folder / f"marker{mid}.png"), _marker_tile(mid))
        for p in placed:
            if p.kind == "card" and p.card is not None and not (folder / f"face{p.card}.png").exists():
                cv2.imwrite(str(folder / f"face{p.card}.png"), faces[p.card])
            elif p.kind == "back" and not (folder / f"back{p.level}.png").exists():
                cv2.imwrite(str(folder / f"back{p.level}.png"), draw_back(p.level or 1))
            elif p.kind == "token" and not (folder / f"vp{p.points}.png").exists():
                cv2.imwrite(str(folder / f"vp{p.points}.png"), _token_picture(s, p.points or 1))
        return _trace(folder, s.size, cache_dir()), kelvin
