"""Training the VP-token reader (:class:`vision.tokens.TokenReader`): its rendered crops, the
network, training and the ONNX export. Needs torch (``gizmos-referee vision train-tokens``).

Why a network: a printing whose 5 has a rim the table's colour shows a 5 no larger than a
blurred 1 (docs/vision.md, "Fifteenth round"), so size alone swaps the values; the digit and
the rim still tell them apart. The crops come from domain-randomised scenes (random token fills,
rims, digit colours, OpenCV fonts, tables, lamps, cameras: vision/training/randomise.py) and the
project's own; the benchmark's held-out printing (its own lettering, ``benchmarks/heldout.py``)
is in none of them.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np

from vision.errors import ModelFileError
from vision.paths import LOCATIONS
from vision.progress import Progress
from vision.tokens import TOKEN_CROP_PX, token_blob, token_crop
from vision.training.checkpoints import last_checkpoint, train_epochs
from vision.training.evaluate import HELDOUT
from vision.training.synth import RenderedScene, RenderSettings, random_layout, render_table

TRAIN_SEED_BASE = 6_000_000  # token-set seeds: apart from the other sets and the held-out range
VAL_SEED_BASE = 6_500_000
#: Scenes a shard file holds (the set is written shard by shard, so a stopped render resumes).
SHARD = 50
#: The share of scenes in the project's own look (its renderer, tokens and faces).
OWN_SHARE = 0.2
#: Each token is cut this many times, each turned, shifted and scaled afresh (a token lies at
#: any angle; the detector's centre and the calibration are a few mm off).
CUTS = 2
SHIFT_MM = 2.0
SCALE_JITTER = 0.04


# ----------------------------------------------------------------------------------------------- data


@dataclass(frozen=True, slots=True)
class TokenSetSpec:
    """What to render: scenes per split and where the shards go."""

    out: Path
    train: int = 1600
    val: int = 200


def token_scene(seed: int) -> RenderedScene:
    """One scene with many tokens (the supply and every seat), randomised or the project's look."""
    rng = np.random.default_rng([seed, 11])
    layout = random_layout(np.random.default_rng(seed))
    layout = replace(
        layout,
        supply_tokens=int(rng.integers(4, 12)),
        players=tuple(
            replace(p, vp_ones=int(rng.integers(0, 5)), vp_fives=int(rng.integers(0, 4)))
            for p in layout.players
        ),
    )
    settings: RenderSettings = replace(HELDOUT, hand_prob=0.15)
    faces = None
    if rng.random() >= OWN_SHARE:
        from vision.training.randomise import randomised

        settings, faces = randomised(seed, settings)
    size = (1280, 720) if seed % 2 == 0 else (1920, 1080)
    return render_table(layout, seed, replace(settings, size=size), faces=faces)


def scene_crops(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The token crops of one scene (N, px, px, 3 uint8) and their values (N, 1 or 5)."""
    scene = token_scene(seed)
    rng = np.random.default_rng([seed, 12])
    crops, values = [], []
    for o in scene.objects:
        if o.cls not in ("vp1", "vp5") or not o.visible:
            continue
        x1, y1, x2, y2 = o.box_mm
        for _ in range(CUTS):
            centre = (
                (x1 + x2) / 2 + rng.uniform(-SHIFT_MM, SHIFT_MM),
                (y1 + y2) / 2 + rng.uniform(-SHIFT_MM, SHIFT_MM),
            )
            crops.append(
                token_crop(
                    scene.image,
                    scene.homography,
                    centre,
                    angle=float(rng.uniform(0, 2 * math.pi)),
                    scale=float(rng.uniform(1 - SCALE_JITTER, 1 + SCALE_JITTER)),
                )
            )
            values.append(5 if o.cls == "vp5" else 1)
    empty = np.zeros((0, TOKEN_CROP_PX, TOKEN_CROP_PX, 3), np.uint8)
    return (np.stack(crops) if crops else empty), np.array(values, np.int8)


def _render_shard(job: tuple[Path, int, int]) -> None:
    path, first, n = job
    if path.exists():  # resumable: a shard is written whole or not at all
        return
    parts = [scene_crops(s) for s in range(first, first + n)]
    part = path.with_name(path.name + ".part.npz")
    np.savez_compressed(
        part, crops=np.concatenate([p[0] for p in parts]), values=np.concatenate([p[1] for p in parts])
    )
    part.replace(path)


def render_token_set(spec: TokenSetSpec, workers: int = 2) -> Path:
    """Render the token set in shards of :data:`SHARD` scenes; resumable, with progress."""
    jobs = []
    for split, base, n in (("train", TRAIN_SEED_BASE, spec.train), ("val", VAL_SEED_BASE, spec.val)):
        (spec.out / split).mkdir(parents=True, exist_ok=True)
        jobs += [
            (spec.out / split / f"s{base + i}.npz", base + i, min(SHARD, n - i)) for i in range(0, n, SHARD)
        ]
    prog = Progress("token set: shards", len(jobs))
    with Pool(max(1, workers)) as pool:
        for _ in pool.imap_unordered(_render_shard, jobs):
            prog.step()
    return spec.out


def load_split(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """A rendered split: crops (N, px, px, 3 uint8) and labels (N, 1 for a 5, else 0)."""
    crops, labels = [], []
    for p in sorted(folder.glob("s*.npz")):
        try:
            with np.load(p) as z:
                crops.append(z["crops"])
                labels.append((z["values"] == 5).astype(np.int64))
        except (OSError, ValueError, KeyError) as exc:
            raise ModelFileError(f"token set: unreadable shard {p}: {exc}") from None
    if not crops:
        raise ModelFileError(f"token set: no shards in {folder} (run `gizmos-referee vision token-set`)")
    return np.concatenate(crops), np.concatenate(labels)


# ----------------------------------------------------------------------------------------------- network


def build_net(width: int = 16) -> Any:
    """A small classifier (about 60k weights): four 3x3 stages, three of them stride 2, global
    average pooling (a token's digit and rim may lie anywhere in the crop) and two logits."""
    from torch import nn

    def conv(i: int, o: int, stride: int = 1) -> nn.Sequential:
        return nn.Sequential(
            nn.Conv2d(i, o, 3, stride, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)
        )

    w = width
    return nn.Sequential(
        conv(3, w),
        conv(w, w, 2),
        conv(w, 2 * w),
        conv(2 * w, 2 * w, 2),
        conv(2 * w, 3 * w),
        conv(3 * w, 3 * w, 2),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(3 * w, 2),
    )


@dataclass(frozen=True, slots=True)
class TokenTrainConfig:
    """The token reader's training recipe."""

    data: Path = Path("data/tokens")
    out: Path = Path("runs/tokens")
    epochs: int = 12
    batch: int = 64
    lr: float = 0.004
    threads: int = 2
    seed: int = 0


def _augment(crops: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """The network's blobs of a batch, each with its colour channels shuffled and scaled and a
    random gamma, or mirrored (a printing's colours are any; a digit's handedness is not what
    tells a 1 from a 5 at this size)."""
    out = []
    for c in crops:
        c = c[..., gen.permutation(3)].astype(np.float32) * gen.uniform(0.7, 1.3, 3)
        c = 255 * (np.clip(c, 0, 255) / 255) ** gen.uniform(0.7, 1.4)
        if gen.random() < 0.5:
            c = c[:, ::-1]
        out.append(token_blob(c)[0])
    return np.stack(out)


def train_tokens(cfg: TokenTrainConfig, resume: bool = False) -> Path:
    """Train the token reader (progress each epoch; ``resume`` continues from the last epoch);
    the epoch with the best validation accuracy is kept as ``best.pt``."""
    import torch
    import torch.nn.functional as F

    last_checkpoint(cfg.out, "token training", resume)
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    xs, ys = load_split(cfg.data / "train")
    vx, vy = load_split(cfg.data / "val")
    vblob = torch.from_numpy(np.concatenate([token_blob(c) for c in vx]))
    net = build_net()

    gens: dict[int, np.random.Generator] = {}  # one augmentation stream per epoch

    def loss(idx: np.ndarray, epoch: int) -> Any:
        if epoch not in gens:
            gens[epoch] = np.random.default_rng([cfg.seed, epoch, 1])
        gen = gens[epoch]
        x = torch.from_numpy(_augment(xs[idx], gen))
        return F.cross_entropy(net(x), torch.from_numpy(ys[idx]))

    validate = lambda: evaluate_net(net, vblob, vy)  # noqa: E731
    return train_epochs(
        net, cfg, len(xs), loss, validate, label="tokens", figure="val accuracy", resume=resume
    )


def evaluate_net(net: Any, blobs: Any, labels: np.ndarray, batch: int = 256) -> float:
    """The share of crops whose value the network reads right (5 where its P(5) > 0.5)."""
    import torch

    net.eval()
    right = 0
    with torch.no_grad():
        for i in range(0, len(blobs), batch):
            pred = net(blobs[i : i + batch]).argmax(1).numpy()
            right += int((pred == labels[i : i + batch]).sum())
    return right / max(len(labels), 1)


def smoke_tokens(folder: Path, threads: int = 2) -> Path:
    """One epoch on a handful of rendered scenes, then the export (the check that training runs)."""
    render_token_set(TokenSetSpec(folder / "data", train=4, val=2), workers=1)
    best = train_tokens(
        TokenTrainConfig(folder / "data", folder / "run", epochs=1, batch=16, threads=threads)
    )
    return export_tokens(best, folder / "tokens.onnx")


def export_tokens(weights: Path, out: Path = LOCATIONS.tokens) -> Path:
    """Export trained token-reader weights to ONNX (input 1 x 3 x px x px; output: the
    probabilities of a 1 and of a 5)."""
    import torch

    if not weights.is_file():
        raise ModelFileError(f"token weights file {weights} not found")
    net = build_net()
    net.load_state_dict(torch.load(weights, weights_only=False)["net"])
    net.eval()
    out.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, 3, TOKEN_CROP_PX, TOKEN_CROP_PX)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        torch.onnx.export(
            torch.nn.Sequential(net, torch.nn.Softmax(1)),
            (dummy,),
            str(out),
            input_names=["token"],
            output_names=["values"],
            dynamo=False,
        )
    return out
