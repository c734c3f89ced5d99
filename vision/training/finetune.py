"""Adapting the detector to a user's own table, light and camera (``gizmos-referee finetune``).

Two kinds of examples go into a short training run that starts from the committed detector:

* frames the referee accepted during real games (``gizmos-referee run --save-frames DIR``): the
  rectified table with labels the game state vouched for (:class:`referee.app.pipeline.FrameSaver`),
  cut into training tiles the way :mod:`vision.training.dataset` cuts rendered tables;
* rendered tables showing the user's enrolled card faces (``--enrol`` or ``$GIZMOS_ENROL_DIR``,
  see docs/vision.md), so cards never photographed on the table are still learnt.

Everything is resumable: finished tiles and scenes are skipped, and ``--resume`` continues an
interrupted training run. The result is exported next to the run (``OUT/detector.onnx``) for
``gizmos-referee run --model``; the committed model is never overwritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2

from vision.errors import ModelFileError, VisionError
from vision.frames import read_frame
from vision.geometry import CANON_SIZE, CLASSES, yolo_text
from vision.paths import LOCATIONS
from vision.progress import Progress
from vision.training.dataset import DatasetSpec, crop_labels, generate
from vision.training.train import TrainConfig, _train_args, export, set_threads

#: Rendered fine-tuning scenes take their seeds from here (clear of training, validation and the
#: benchmark's held-out range).
FINETUNE_SEED_OFFSET = 3_000_000


class FinetuneError(VisionError):
    """Saved frames or a run folder that cannot be used; the message names the file."""


@dataclass(frozen=True, slots=True)
class FinetuneConfig:
    """What to fine-tune on, and how long."""

    saved: tuple[Path, ...]
    out: Path
    base: Path = LOCATIONS.models / "detector.pt"
    enrol: Path | None = None
    epochs: int = 5
    scenes: int = 60
    imgsz: int = 384
    batch: int = 8
    threads: int = 2
    workers: int = 2
    val_every: int = 5  # every n-th saved frame goes to validation
    lr0: float = 0.0005
    extra: dict[str, Any] = field(default_factory=dict)  # further ultralytics arguments


def saved_frames(folders: Sequence[Path]) -> list[tuple[Path, Path]]:
    """(image, label) pairs written by ``run --save-frames``; a bad folder is a clear error."""
    pairs = []
    for folder in folders:
        images, labels = folder / "images", folder / "labels"
        if not images.is_dir() or not labels.is_dir():
            raise FinetuneError(
                f"finetune: {folder} is not a folder written by 'run --save-frames' (no images/, labels/)"
            )
        for img in sorted(images.glob("*.jpg")):
            label = labels / f"{img.stem}.txt"
            if not label.is_file():
                raise FinetuneError(f"finetune: {img} has no label file {label}")
            pairs.append((img, label))
    if not pairs:
        raise FinetuneError(f"finetune: no saved frames in {', '.join(str(f) for f in folders)}")
    return pairs


def read_labels(path: Path) -> list[tuple[int, float, float, float, float]]:
    """YOLO label lines, checked (class index in range, coordinates in 0..1)."""
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        try:
            c, cx, cy, w, h = int(parts[0]), *(float(v) for v in parts[1:5])
        except (ValueError, IndexError):
            raise FinetuneError(f"finetune: {path}:{n}: expected 'class cx cy w h', got {line!r}") from None
        if len(parts) != 5 or not 0 <= c < len(CLASSES) or not all(0 <= v <= 1 for v in (cx, cy, w, h)):
            raise FinetuneError(f"finetune: {path}:{n}: class or box out of range: {line!r}")
        rows.append((c, cx, cy, w, h))
    return rows


def tile_offsets(tile: int) -> list[tuple[int, int]]:
    """Tile corners covering the whole canonical frame (overlapping where it does not divide)."""
    cw, ch = CANON_SIZE

    def starts(total: int) -> list[int]:
        if tile >= total:
            return [0]
        n = -(-total // tile)
        return [round(i * (total - tile) / (n - 1)) for i in range(n)]

    return [(x, y) for y in starts(ch) for x in starts(cw)]


def write_saved_tiles(
    pairs: list[tuple[Path, Path]], out: Path, tile: int, val_every: int
) -> tuple[int, int]:
    """Cut saved frames into training tiles (skipping tiles already written); returns (train, val) frames."""
    counts = [0, 0]
    progress = Progress("finetune: saved frames", len(pairs))
    for i, (img_path, label_path) in enumerate(pairs):
        split = "val" if val_every and i % val_every == val_every - 1 else "train"
        counts[split == "val"] += 1
        image = None
        labels = read_labels(label_path)
        stem = f"saved_{img_path.parent.parent.name}_{img_path.stem}"
        for k, (x0, y0) in enumerate(tile_offsets(tile)):
            target = out / "images" / split / f"{stem}_{k}.jpg"
            if target.exists():
                continue
            if image is None:
                image = read_frame(img_path)
                if (image.shape[1], image.shape[0]) != CANON_SIZE:
                    raise FinetuneError(f"finetune: {img_path} is not a rectified table image {CANON_SIZE}")
            target.parent.mkdir(parents=True, exist_ok=True)
            (out / "labels" / split).mkdir(parents=True, exist_ok=True)
            crop = image[y0 : y0 + tile, x0 : x0 + tile]
            rows = crop_labels(labels, x0, y0, tile)
            (out / "labels" / split / f"{stem}_{k}.txt").write_text(yolo_text(rows))
            cv2.imwrite(str(target), crop, [cv2.IMWRITE_JPEG_QUALITY, 95])
        progress.step()
    return counts[0], counts[1]


def _check_enrolled(enrol: Path | None) -> None:
    """Say how usable the enrolled photos are; an unusable photo is an EnrolmentError naming it."""
    if enrol is not None:
        from vision.enrol import check

        print(check(enrol).summary(), flush=True)


def build_dataset(cfg: FinetuneConfig) -> Path:
    """Saved tiles plus rendered scenes with the enrolled faces, in one YOLO dataset; its yaml."""
    data = cfg.out / "data"
    pairs = saved_frames(cfg.saved)
    train, val = write_saved_tiles(pairs, data, cfg.imgsz, cfg.val_every)
    print(f"finetune: {len(pairs)} saved frames ({train} for training, {val} for validation)", flush=True)
    _check_enrolled(cfg.enrol)
    spec = DatasetSpec(
        data,
        train_scenes=cfg.scenes,
        val_scenes=max(1, cfg.scenes // 10),
        tile=cfg.imgsz,
        tiles_per_scene=3,
        enrol=cfg.enrol,
    )
    return generate(spec, workers=cfg.workers, seed_offset=FINETUNE_SEED_OFFSET)


def finetune(cfg: FinetuneConfig, resume: bool = False) -> Path:
    """Build the dataset, train from the base weights (or resume), export; returns the ONNX file."""
    run_dir = cfg.out / "runs" / "finetune"
    last = run_dir / "weights" / "last.pt"
    if resume and not last.is_file():
        raise ModelFileError(f"finetune --resume: no interrupted run in {cfg.out} ({last} not found)")
    if resume and _finished(last):
        raise FinetuneError(
            f"finetune --resume: the run in {cfg.out} has finished; its model is {cfg.out / 'detector.onnx'} "
            "(start a new run without --resume, in another --out)"
        )
    if not resume and not cfg.base.is_file():
        raise ModelFileError(
            f"finetune: base weights {cfg.base} not found (the committed detector, or give --base)"
        )
    data = build_dataset(cfg)
    set_threads(cfg.threads)
    from ultralytics import YOLO

    if resume:
        YOLO(str(last)).train(resume=True, workers=0)
    else:
        args = _train_args(
            TrainConfig(
                data=data,
                epochs=cfg.epochs,
                imgsz=cfg.imgsz,
                batch=cfg.batch,
                threads=cfg.threads,
                workers=0,
                name="finetune",
                project=cfg.out / "runs",
                cache=False,
                start=cfg.base,
                lr0=cfg.lr0,
            )
        )
        args.update(cfg.extra)
        YOLO(str(cfg.base)).train(**args)
    best = run_dir / "weights" / "best.pt"
    _, onnx = export(best if best.is_file() else last, cfg.out)
    return onnx


def _finished(checkpoint: Path) -> bool:
    """Whether an ultralytics checkpoint is of a finished run (its optimizer state stripped)."""
    import torch

    try:
        ckpt = torch.load(checkpoint, map_location="cpu", weights_only=False)
    except Exception as exc:  # torch raises several kinds for a damaged file
        raise ModelFileError(f"finetune --resume: cannot read {checkpoint}: {exc}") from exc
    return ckpt.get("epoch", -1) == -1 or ckpt.get("optimizer") is None


def run_finetune(args: Any) -> int:
    """``gizmos-referee finetune``."""
    if args.epochs < 1 or args.scenes < 0 or args.imgsz < 32 or args.batch < 1:
        raise FinetuneError("finetune: --epochs and --batch must be >= 1, --scenes >= 0, --imgsz >= 32")
    enrol = args.enrol  # or $GIZMOS_ENROL_DIR, filled in by the application (referee/app/settings.py)
    cfg = FinetuneConfig(
        saved=tuple(Path(s).expanduser() for s in args.saved),
        out=Path(args.out).expanduser(),
        base=Path(args.base).expanduser() if args.base else LOCATIONS.models / "detector.pt",
        enrol=Path(enrol).expanduser() if enrol else None,
        epochs=args.epochs,
        scenes=args.scenes,
        imgsz=args.imgsz,
        batch=args.batch,
        threads=args.threads,
    )
    onnx = finetune(cfg, resume=args.resume)
    print(f"finetune: the adapted detector is {onnx}; use it with: gizmos-referee run --model {onnx} ...")
    return 0
