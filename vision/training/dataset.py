"""YOLO training data: rendered tables, rectified to the canonical frame and cut into tiles.

The detector runs on the rectified table (0.8 px/mm, 960 × 608), where a marble is ~13 px
whatever the camera height; training tiles are crops of that frame at the same scale, so a
small ``imgsz`` trains fast without shrinking marbles. Generation is deterministic per seed,
resumable (finished scenes are skipped) and prints progress.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from vision.errors import DatasetError
from vision.faces import face_set
from vision.geometry import CANON_PX_PER_MM, CANON_SIZE, CLASSES, rectify, yolo_text
from vision.progress import Progress
from vision.training.synth import (
    SIZES,
    RenderSettings,
    TableLayout,
    random_layout,
    random_marbles,
    render_table,
)
from vision.zones import Zones, default_zones

TRAIN_SEED_BASE = 1_000_000  # training scenes use seeds from here on
VAL_SEED_BASE = 2_000_000
#: The benchmark's held-out seeds start here; dataset generation refuses to touch this range.
HELDOUT_SEED_BASE = 9_000_000


@dataclass(frozen=True, slots=True)
class DatasetSpec:
    """What to generate."""

    out: Path
    train_scenes: int = 2000
    val_scenes: int = 100
    tile: int = 384
    tiles_per_scene: int = 3
    hand_prob: float = 0.3
    #: Whole canonical frames instead of tiles: the only way the detector sees a hand whole
    #: (a hand and forearm span more than a tile); the second training stage uses them.
    whole: bool = False
    #: Enrolled card photos the tables show instead of the drawn faces (fine-tuning on your cards).
    enrol: Path | None = None
    #: Domain-randomised scenes (vision/training/randomise.py): random decks, tables, token
    #: printings, touching marbles, lamps and cameras; 0 off, else the randomiser's look (1, 2).
    randomise: int = 0
    #: Ray-traced scenes (vision/training/raytrace.py, POV-Ray): card stock, stacked cards, tall
    #: decks, sphere marbles seen where the camera sees them, soft shadows; no hands.
    raytrace: bool = False
    #: Heap-heavy scenes (:data:`HEAP_MARBLES`): every ring a touching heap of 4-8 marbles and
    #: the first tile of each scene centred on a ring; what the detector misses most on tables it
    #: never saw is the middle marble of a big heap (docs/vision.md, "Nineteenth round").
    heaps: bool = False


#: The ring marbles of a heap-heavy scene (:attr:`DatasetSpec.heaps`): at least, at most.
HEAP_MARBLES = (4, 8)
#: A heap-heavy scene's ring tile is centred on the ring to within this (canonical px, 50 mm).
HEAP_TILE_JITTER = 40


def heap_layout(layout: TableLayout, seed: int) -> TableLayout:
    """``layout`` with every ring a heap of :data:`HEAP_MARBLES` marbles of random colours (its own
    random source, so the rest of the layout is the seed's as before)."""
    rng = np.random.default_rng([seed, 11])
    lo, hi = HEAP_MARBLES
    players = tuple(
        replace(p, ring=random_marbles(rng, int(rng.integers(lo, hi + 1)))) for p in layout.players
    )
    return replace(layout, players=players)


def ring_tile(zones: Zones, layout: TableLayout, tile: int, rng: np.random.Generator) -> tuple[int, int]:
    """The corner (canonical px) of a tile centred on a random seat's ring, to within
    :data:`HEAP_TILE_JITTER`, inside the frame."""
    seat = layout.players[int(rng.integers(0, len(layout.players)))].seat
    x, y, w, h = zones.seat(seat).ring
    cw, ch = CANON_SIZE
    cx = (x + w / 2) * CANON_PX_PER_MM + rng.integers(-HEAP_TILE_JITTER, HEAP_TILE_JITTER + 1)
    cy = (y + h / 2) * CANON_PX_PER_MM + rng.integers(-HEAP_TILE_JITTER, HEAP_TILE_JITTER + 1)
    return (
        int(min(max(0, cx - tile // 2), cw - tile)),
        int(min(max(0, cy - tile // 2), max(0, ch - tile))),
    )


def crop_labels(
    labels: list[tuple[int, float, float, float, float]],
    x0: int,
    y0: int,
    tile: int,
    min_visible: float = 0.45,
) -> list[tuple[int, float, float, float, float]]:
    """Labels of a canonical image restricted to a tile (boxes clipped, mostly-cut ones dropped)."""
    cw, ch = CANON_SIZE
    out = []
    for c, cx, cy, w, h in labels:
        x1, y1, x2, y2 = (cx - w / 2) * cw, (cy - h / 2) * ch, (cx + w / 2) * cw, (cy + h / 2) * ch
        a1, b1, a2, b2 = max(x1, x0), max(y1, y0), min(x2, x0 + tile), min(y2, y0 + tile)
        if a2 <= a1 or b2 <= b1 or (a2 - a1) * (b2 - b1) < min_visible * (x2 - x1) * (y2 - y1):
            continue
        out.append(
            (c, ((a1 + a2) / 2 - x0) / tile, ((b1 + b2) / 2 - y0) / tile, (a2 - a1) / tile, (b2 - b1) / tile)
        )
    return out


def _write_scene(job: tuple[Path, str, int, int, int, float, Path | None, int, bool, bool]) -> int:
    out, split, seed, tile, per_scene, hand_prob, enrol, randomise, traced, heaps = job
    marker = out / "labels" / split / f"s{seed}_{max(per_scene, 1) - 1}.txt"
    if marker.exists():
        return 0
    rng = np.random.default_rng(seed)
    size = SIZES[seed % len(SIZES)]
    settings = RenderSettings(size=size, hand_prob=hand_prob)
    faces = face_set(enrol) if enrol is not None else None
    if randomise:  # random decks (the enrolled or drawn faces in a share of scenes), tables, lamps
        from vision.training.randomise import randomised

        settings, random_faces = randomised(seed, settings, faces, look=randomise)
        faces = random_faces
    if traced:
        from vision.training.raytrace import render_raytraced

        settings = replace(settings, renderer=render_raytraced)
    layout = random_layout(rng)
    if heaps:
        layout = heap_layout(layout, seed)
        settings = replace(settings, touching_marbles=True)
    scene = render_table(layout, seed, settings, faces=faces)
    canon = rectify(scene.image, scene.homography)
    labels = scene.yolo_labels()
    if per_scene == 0:  # the whole canonical frame
        cv2.imwrite(str(out / "images" / split / f"s{seed}_0.jpg"), canon, [cv2.IMWRITE_JPEG_QUALITY, 95])
        marker.write_text(yolo_text(labels))
        return 1
    cw, ch = CANON_SIZE
    for k in range(per_scene):
        if heaps and k == 0:
            x0, y0 = ring_tile(default_zones(), layout, tile, np.random.default_rng([seed, 12]))
        else:
            x0 = int(rng.integers(0, cw - tile + 1))
            y0 = int(rng.integers(0, max(1, ch - tile + 1)))
        crop = canon[y0 : y0 + tile, x0 : x0 + tile]
        cv2.imwrite(str(out / "images" / split / f"s{seed}_{k}.jpg"), crop, [cv2.IMWRITE_JPEG_QUALITY, 95])
        rows = crop_labels(labels, x0, y0, tile)
        (out / "labels" / split / f"s{seed}_{k}.txt").write_text(yolo_text(rows))
    return 1


def write_data_yaml(out: Path) -> Path:
    """The ultralytics dataset file."""
    p = out / "gizmos.yaml"
    names = "\n".join(f"  {i}: {n}" for i, n in enumerate(CLASSES))
    p.write_text(f"path: {out.resolve()}\ntrain: images/train\nval: images/val\nnames:\n{names}\n")
    return p


def write_mix_yaml(out: Path, folders: list[Path]) -> Path:
    """One ultralytics dataset file that trains and validates on several rendered sets together.

    Why: a fine-tune on randomised scenes alone forgets the project's own look (issue 14); the
    mix keeps a share of own-style scenes in every epoch without copying any tile.
    """
    if not folders:
        raise DatasetError("dataset mix: name at least one dataset folder")
    for f in folders:
        for split in ("train", "val"):
            if not (f / "images" / split).is_dir():
                raise DatasetError(
                    f"dataset mix: {f} has no images/{split} (render it with `vision dataset`)"
                )
    names = "\n".join(f"  {i}: {n}" for i, n in enumerate(CLASSES))

    def listed(split: str) -> str:
        return "\n".join(f"  - {(f / 'images' / split).resolve()}" for f in folders)

    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"train:\n{listed('train')}\nval:\n{listed('val')}\nnames:\n{names}\n")
    return out


def generate(spec: DatasetSpec, workers: int = 2, seed_offset: int = 0) -> Path:
    """Render the dataset (skipping finished scenes) and return the dataset yaml."""
    jobs = []
    for split, base, n in (
        ("train", TRAIN_SEED_BASE, spec.train_scenes),
        ("val", VAL_SEED_BASE, spec.val_scenes),
    ):
        if base + seed_offset + n > HELDOUT_SEED_BASE:
            raise ValueError("dataset: seeds would run into the benchmark's held-out range")
        (spec.out / "images" / split).mkdir(parents=True, exist_ok=True)
        (spec.out / "labels" / split).mkdir(parents=True, exist_ok=True)
        per_scene = 0 if spec.whole else spec.tiles_per_scene
        jobs += [
            (
                spec.out,
                split,
                base + seed_offset + i,
                spec.tile,
                per_scene,
                spec.hand_prob,
                spec.enrol,
                spec.randomise,
                spec.raytrace,
                spec.heaps,
            )
            for i in range(n)
        ]
    prog = Progress("dataset: scenes", len(jobs))
    if workers <= 1:
        for j in jobs:
            _write_scene(j)
            prog.step()
    else:
        with ProcessPoolExecutor(workers) as pool:
            for _ in pool.map(_write_scene, jobs, chunksize=4):
                prog.step()
    return write_data_yaml(spec.out)
