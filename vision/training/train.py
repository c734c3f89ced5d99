"""Detector training, resuming, CI smoke training and export (ultralytics, CPU, offline).

The model is built from ``yolo11n.yaml`` with our class count (never a downloaded ``.pt``) and
trained from scratch on the synthetic tiles of :mod:`vision.training.dataset`. ultralytics limits CPU
training to ``cpu_count - 1`` threads (one thread on a 2-core machine); :func:`set_threads`
overrides that deliberately. AMP is off (CPU, and its check would download weights) and plots
are off (they would download a font).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vision.errors import ModelFileError
from vision.paths import LOCATIONS
from vision.training import offline

ARCH = "yolo11n.yaml"


@dataclass(frozen=True, slots=True)
class TrainConfig:
    """The training recipe (recorded in the model card)."""

    data: Path
    epochs: int = 25
    imgsz: int = 384
    batch: int = 16
    threads: int = 2
    workers: int = 1
    seed: int = 0
    name: str = "detector"
    project: Path = LOCATIONS.runs
    cache: bool | str = "ram"
    #: Start from these weights (a second stage) instead of from scratch: then no warm-up and
    #: no mosaic (whole frames are what the stage is for), and the learning rate ``lr0``.
    start: Path | None = None
    lr0: float = 0.002
    #: Freeze the first this many layers (10: YOLOv8's backbone) so that a fine-tune from
    #: ``start`` learns in the neck and head alone; None trains every layer.
    freeze: int | None = None


def set_threads(threads: int) -> None:
    """Use ``threads`` torch threads for CPU training, overriding ultralytics' default of cpu_count - 1."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    # Idle OpenMP threads sleep instead of spinning: on a shared 2-core machine a spinning
    # thread starves its sibling and a batch can take ten times longer.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    offline.configure()
    import torch
    import ultralytics.utils.torch_utils as tu

    tu.NUM_THREADS = threads
    torch.set_num_threads(threads)


def _train_args(cfg: TrainConfig) -> dict[str, Any]:
    return {
        "data": str(cfg.data),
        "epochs": cfg.epochs,
        "imgsz": cfg.imgsz,
        "batch": cfg.batch,
        "workers": cfg.workers,
        "device": "cpu",
        "seed": cfg.seed,
        "deterministic": True,
        "project": str(cfg.project),
        "name": cfg.name,
        "exist_ok": True,
        "cache": cfg.cache,
        "amp": False,
        "plots": False,
        # From scratch, or from ``start``: with False ultralytics discards the weights it is given.
        "pretrained": str(cfg.start) if cfg.start is not None else False,
        "freeze": cfg.freeze,
        "optimizer": "AdamW",
        "lr0": cfg.lr0,
        "cos_lr": False,
        "warmup_epochs": 1,
        "close_mosaic": 5,
        "mosaic": 0.5,
        "mixup": 0.0,
        "scale": 0.15,
        "translate": 0.05,
        "degrees": 0.0,
        "fliplr": 0.5,
        "flipud": 0.5,
        "hsv_h": 0.005,
        "hsv_s": 0.3,
        "hsv_v": 0.3,
        "patience": 100,
        "val": True,
        "verbose": True,
        # A later stage starts trained: no warm-up, and whole images as they are (no mosaic).
        **({"warmup_epochs": 0, "close_mosaic": 0, "mosaic": 0.0} if cfg.start is not None else {}),
    }


def train(cfg: TrainConfig, resume: bool = False) -> Path:
    """Train, or resume the run ``cfg.name``; returns the best weights. Progress goes to the terminal."""
    set_threads(cfg.threads)
    from ultralytics import YOLO

    last = cfg.project / cfg.name / "weights" / "last.pt"
    if resume:
        if not last.is_file():
            raise ModelFileError(f"train --resume: no checkpoint at {last}; start without --resume")
        model = YOLO(str(last))
        model.train(resume=True, workers=cfg.workers)
    elif cfg.start is not None:
        if not Path(cfg.start).is_file():
            raise ModelFileError(f"train --from: weights file {cfg.start} not found")
        YOLO(str(cfg.start)).train(**_train_args(cfg))
    else:
        model = YOLO(ARCH)
        model.train(**_train_args(cfg))
    best = cfg.project / cfg.name / "weights" / "best.pt"
    return best if best.is_file() else last


def smoke(out_dir: Path | None = None, threads: int = 2) -> Path:
    """CI smoke run: six tiny rendered tiles, one epoch at 256 px. Returns the weights written."""
    from vision.training.dataset import DatasetSpec, generate

    root = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="gizmos-smoke-"))
    data = generate(
        DatasetSpec(root / "data", train_scenes=3, val_scenes=1, tile=256, tiles_per_scene=2),
        workers=1,
        seed_offset=6_000_000,
    )
    cfg = TrainConfig(
        data=data,
        epochs=1,
        imgsz=256,
        batch=4,
        threads=threads,
        workers=0,
        name="smoke",
        project=root / "runs",
        cache=False,
    )
    return train(cfg)


def export(
    weights: Path, out_dir: Path = LOCATIONS.models, canon_hw: tuple[int, int] = (608, 960)
) -> tuple[Path, Path]:
    """Copy the weights and export ONNX for torch-free inference: one file that takes any input
    size (``dynamic``), traced at the canonical frame's; the pipeline runs it on the whole frame
    and on the heap stage's ring crops (vision/heaps.py). At a fixed size it gives the same
    outputs as a fixed-size export (OpenVINO compiles it at that size: vision/detect.py)."""
    if not Path(weights).is_file():
        raise ModelFileError(f"export: weights file {weights} not found")
    set_threads(2)
    from ultralytics import YOLO

    out_dir.mkdir(parents=True, exist_ok=True)
    pt = out_dir / "detector.pt"
    if Path(weights).resolve() != pt.resolve():
        shutil.copyfile(weights, pt)
    # A checkpoint taken mid-training carries the optimiser state and the training copy of the
    # weights (~26 MB); the committed artefact keeps only the EMA weights in fp16 (~5 MB).
    from ultralytics.utils.torch_utils import strip_optimizer

    strip_optimizer(str(pt))
    onnx_path = Path(
        YOLO(str(pt)).export(
            format="onnx", imgsz=canon_hw, simplify=False, dynamic=True, opset=17, device="cpu"
        )
    )
    final = out_dir / "detector.onnx"
    if onnx_path.resolve() != final.resolve():
        shutil.move(str(onnx_path), final)
    return pt, final
