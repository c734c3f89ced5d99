"""Training the card embedding (:mod:`vision.embedding`) across many random decks (issue 14, item 2).

Each step draws one random deck of the training side (:func:`vision.training.randomise.random_deck`,
seeds from :data:`TRAIN_DECK_BASE`; a share of steps the project's drawn faces) and makes, for
every card, two views: the *enrolment* view (:func:`enrolment_face`: a phone-like photo of the
card, as :func:`vision.enrol.load_face` leaves it: keystone, a loose or tight crop's leftover,
colour cast, glare, blur, low resolution, JPEG) and the *camera* view (:func:`camera_patch`:
the card placed by hand on a table, seen at 0.55-1.45 px/mm with a colour cast, gamma, glare,
blur, sharpening, noise and JPEG, the next card of a column covering the band's lower
millimetres, and rectified as the pipeline cuts a patch). The loss is InfoNCE both ways with
the deck's other cards as negatives: identification is always among one deck's cards.

Nothing here sees the benchmark's held-out deck or style (``benchmarks/heldout.py``, which no
training code imports): the degradations are this module's own, drawn from wider ranges.
Training is resumable (a checkpoint each epoch), deterministic per seed, prints its progress,
and never runs in CI (the smoke test trains a few steps).

    .venv/bin/python -m vision.training.embedding train --kind band --out runs/embedding-band
    .venv/bin/python -m vision.training.embedding export runs/embedding-band/best.pt \
        models/card_embedding_band.onnx
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.embedding import KINDS, PATCH_PPM, REGION_MM, input_size, model_path, patch_input, reference_input
from vision.errors import ModelFileError
from vision.faces import BAND_MM, CARD_MM, FACE_H, FACE_PX_PER_MM, FACE_W, N_CARDS, drawn_faces
from vision.identify import EMBEDDING_REFERENCE_BLUR_MM, LEVELS
from vision.training.checkpoints import keep, log_epoch, restore
from vision.training.randomise import lookalike_random_deck, random_deck, varied_random_deck

#: ``random_deck`` seeds of training (one deck per step) and of validation: apart from the
#: decks the benchmarks and development studies use (5,150,000; 5,170,001-4).
TRAIN_DECK_BASE = 6_000_000
VAL_DECK_BASE = 6_900_000
VAL_DECKS = 3
#: Share of training steps on the project's drawn faces instead of a random deck.
OWN_FACES_SHARE = 0.1


@dataclass(frozen=True, slots=True)
class Views:
    """How far the two views are degraded (a recipe's ``views``; :data:`VIEWS`). A setting of
    0 draws nothing from the random source, so ``v1`` makes exactly the first recipe's views."""

    camera_ppm: tuple[float, float] = (0.55, 1.45)
    camera_blur_mm: tuple[float, float] = (0.25, 0.9)
    camera_cast: float = 0.15
    camera_noise: tuple[float, float] = (1.0, 6.0)
    #: Each corner of the cut patch up to this far off (a calibration's error, a lens).
    camera_keystone_mm: float = 0.0
    #: Chance that the card (and the card on its band) casts a thickness shadow on what is below.
    shadow: float = 0.0
    enrol_keystone_mm: float = 1.5
    enrol_blur_px: tuple[float, float] = (0.5, 2.0)
    enrol_cast: float = 0.10
    #: Each enrolment view blurred by this much more (mm, one sigma), as the identifier blurs a
    #: reference face before the embedding reads it (``vision.identify.EMBEDDING_REFERENCE_BLUR_MM``).
    reference_blur_mm: float = 0.0


#: ``v1``: the tenth round's views. ``wide``: farther cameras and softer lenses, stronger casts
#: and noise, a patch cut slightly askew, card thickness shadows, rougher enrolment photos (the
#: held-out style's webcam lay beyond ``v1``'s range: validation saturated, the benchmark not).
VIEWS = {
    "v1": Views(),
    "wide": Views(
        camera_ppm=(0.45, 1.6),
        camera_blur_mm=(0.25, 1.2),
        camera_cast=0.22,
        camera_noise=(1.0, 9.0),
        camera_keystone_mm=1.0,
        shadow=0.6,
        enrol_keystone_mm=2.5,
        enrol_blur_px=(0.5, 2.5),
        enrol_cast=0.15,
    ),
}
#: ``soft``: ``wide`` with every enrolment view blurred as the identifier blurs a reference face
#: (issue 14, twenty-fifth round), so the network learns the references it is given. One network
#: trained on it read fewer development tables than the committed ensemble, and added to it no
#: more (docs/vision.md, "Twenty-fifth round"): measured, not shipped.
VIEWS["soft"] = replace(VIEWS["wide"], reference_blur_mm=EMBEDDING_REFERENCE_BLUR_MM)
#: ``fine``: ``wide`` with nearer cameras too (to 2.4 px/mm), for a network at scale 2 (2 px/mm),
#: which reads what a 1080p camera gives beyond 1 px/mm.
VIEWS["fine"] = replace(VIEWS["wide"], camera_ppm=(0.45, 2.4))


# ----------------------------------------------------------------------------------------------- data


def _mm_to_px(ppm: float) -> np.ndarray:
    return np.diag([ppm, ppm, 1.0])


def _rot(deg: float, tx: float = 0.0, ty: float = 0.0) -> np.ndarray:
    t = math.radians(deg)
    return np.array([[math.cos(t), -math.sin(t), tx], [math.sin(t), math.cos(t), ty], [0, 0, 1]])


def _light(img: np.ndarray, rng: np.random.Generator, cast: float, glare: float) -> np.ndarray:
    """Per-channel gains within ±``cast``, a brightness and gamma, and (with chance ``glare``) a
    bright spot."""
    f = img.astype(np.float32)
    h, w = f.shape[:2]
    f *= rng.uniform(1 - cast, 1 + cast, 3).astype(np.float32)[None, None, :] * rng.uniform(0.75, 1.2)
    if rng.random() < glare:
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        gx, gy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.1, 0.35) * max(w, h)
        f += (rng.uniform(25, 90) * np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * r * r)))[..., None]
    f = 255.0 * (np.clip(f, 0, 255) / 255.0) ** rng.uniform(0.8, 1.25)
    return f.astype(np.uint8)


def _jpeg(img: np.ndarray, rng: np.random.Generator, lo: int, hi: int) -> np.ndarray:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(lo, hi + 1))])
    out = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
    return img if out is None else np.asarray(out)


def enrolment_face(face: np.ndarray, rng: np.random.Generator, views: Views = VIEWS["v1"]) -> np.ndarray:
    """A card as enrolment from a phone photo leaves it (``FACE_W × FACE_H``): the photo's
    keystone left after rectifying along the outline (each corner up to 1.5 mm off, the crop up to
    1 mm inside or 2 mm outside the edge), a colour cast of ±10 %, glare, blur, 130-320 px across,
    noise and JPEG; then resized back to the face size as :func:`vision.enrol.load_face` does
    (the ranges are ``views``'s)."""
    ppm = FACE_PX_PER_MM
    src = np.array([[0, 0], [FACE_W, 0], [FACE_W, FACE_H], [0, FACE_H]], np.float32)
    grow = rng.uniform(-1.0, 2.0) * ppm
    out = src + np.array([[-grow, -grow], [grow, -grow], [grow, grow], [-grow, grow]], np.float32)
    k = views.enrol_keystone_mm
    corner = rng.uniform(-k, k, (4, 2)).astype(np.float32) * ppm
    table = tuple(int(v) for v in rng.uniform(30, 220, 3))
    # The crop (``out`` + keystone) mapped onto the output: the card inside, table round it.
    m = cv2.getPerspectiveTransform(out + corner, src)
    img = cv2.warpPerspective(face, m, (FACE_W, FACE_H), borderMode=cv2.BORDER_CONSTANT, borderValue=table)
    img = _light(img, rng, views.enrol_cast, 0.5)
    img = cv2.GaussianBlur(img, (0, 0), rng.uniform(*views.enrol_blur_px))
    w = int(rng.integers(130, 321))
    img = cv2.resize(img, (w, round(w * FACE_H / FACE_W)), interpolation=cv2.INTER_AREA)
    img = np.clip(img + rng.normal(0, 2.5, img.shape), 0, 255).astype(np.uint8)
    img = _jpeg(img, rng, 70, 95)
    img = cv2.resize(img, (FACE_W, FACE_H), interpolation=cv2.INTER_LINEAR)
    if views.reference_blur_mm > 0:
        img = cv2.GaussianBlur(img, (0, 0), views.reference_blur_mm * ppm)
    return img


def camera_patch(
    face: np.ndarray,
    cover: np.ndarray | None,
    rng: np.random.Generator,
    kind: str,
    views: Views = VIEWS["v1"],
    scale: int = 1,
) -> np.ndarray:
    """The camera's patch of one card as the pipeline cuts it (:data:`vision.embedding.REGION_MM`
    round the box centre at :data:`vision.embedding.PATCH_PPM` × ``scale``), before
    :func:`patch_input`.

    The card lies on a random table, 0-3 mm off the box centre and up to 6° turned; for a band,
    ``cover`` (another card of the deck; ``None``: none) lies on it as the next card of a column,
    its top edge 5 mm above to 2 mm below the band's lower edge, a few mm and degrees off. The
    camera sees 0.55-1.45 px/mm, a colour cast of ±15 %, a brightness and gamma, glare, blur of
    0.25-0.9 mm, sometimes a webcam's sharpening, noise and JPEG 35-95 (``v1``'s ranges;
    ``views`` may widen them, cast thickness shadows and cut the patch askew)."""
    ppm = float(rng.uniform(*views.camera_ppm))
    margin = 6.0
    rw, rh = REGION_MM[kind]
    region = (rw + 2 * margin, rh + 2 * margin)
    size = (round(region[0] * ppm), round(region[1] * ppm))
    bg = np.empty((size[1], size[0], 3), np.float32)
    bg[:] = rng.uniform(20, 230, 3)
    bg += rng.normal(0, rng.uniform(2, 15), (size[1], size[0], 1))
    canvas = np.clip(bg, 0, 255).astype(np.uint8)
    small_size = (round(CARD_MM[0] * ppm), round(CARD_MM[1] * ppm))
    small = cv2.resize(face, small_size, interpolation=cv2.INTER_AREA)
    # Card mm -> region mm: the region's centre is the box centre (the band's, or the card's).
    anchor = (CARD_MM[0] / 2, BAND_MM / 2 if kind == "band" else CARD_MM[1] / 2)
    off = np.clip(rng.normal(0, 1.2, 2), -3, 3)
    angle = float(rng.uniform(-6, 6))
    card = _rot(angle, region[0] / 2 + off[0], region[1] / 2 + off[1]) @ _rot(0, -anchor[0], -anchor[1])
    to_px = _mm_to_px(ppm)
    inv = np.linalg.inv(_mm_to_px(ppm))

    shade, fall, dark = False, np.zeros(2), 0.0
    if views.shadow > 0:  # a lamp's direction (mm the shadow falls) and darkness, for the patch
        shade = bool(rng.random() < views.shadow)
        fall, dark = rng.uniform(-1.5, 1.5, 2), float(rng.uniform(0.25, 0.6))

    def paste(img: np.ndarray, mm: np.ndarray) -> None:
        if shade:
            m = (to_px @ _rot(0, fall[0], fall[1]) @ mm @ inv)[:2]
            mask = cv2.warpAffine(np.ones(img.shape[:2], np.float32), m, size, flags=cv2.INTER_LINEAR)
            mask = cv2.GaussianBlur(mask, (0, 0), max(0.5, 0.8 * ppm))
            canvas[:] = (canvas * (1 - dark * mask[..., None])).astype(np.uint8)
        m = (to_px @ mm @ inv)[:2]
        cv2.warpAffine(img, m, size, dst=canvas, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT)

    paste(small, card)
    if kind == "band" and cover is not None:
        dx, dy = rng.uniform(-4, 4), BAND_MM + rng.uniform(-5, 2)
        below = card @ _rot(float(rng.uniform(-4, 4)), dx, dy)
        paste(cv2.resize(cover, small_size, interpolation=cv2.INTER_AREA), below)
    img = _light(canvas, rng, views.camera_cast, 0.3)
    img = cv2.GaussianBlur(img, (0, 0), max(0.3, rng.uniform(*views.camera_blur_mm) * ppm))
    if rng.random() < 0.4:
        soft = cv2.GaussianBlur(img, (0, 0), 1.2)
        img = cv2.addWeighted(img, 1.5, soft, -0.5, 0)
    img = np.clip(img + rng.normal(0, rng.uniform(*views.camera_noise), img.shape), 0, 255).astype(np.uint8)
    img = _jpeg(img, rng, 35, 95)
    # Rectified at the patch's resolution as the pipeline cuts it, centred on the box.
    pp = PATCH_PPM[kind] * scale
    full = cv2.resize(img, (round(region[0] * pp), round(region[1] * pp)), interpolation=cv2.INTER_LINEAR)
    if views.camera_keystone_mm > 0:
        h, w = full.shape[:2]
        src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        k = views.camera_keystone_mm * pp
        m = cv2.getPerspectiveTransform(src, src + rng.uniform(-k, k, (4, 2)).astype(np.float32))
        full = cv2.warpPerspective(full, m, (w, h), borderMode=cv2.BORDER_REPLICATE)
    x0, y0 = round(margin * pp), round(margin * pp)
    return full[y0 : y0 + round(rh * pp), x0 : x0 + round(rw * pp)]


def view_pairs(
    deck: tuple[np.ndarray, ...],
    cards: np.ndarray,
    rng: np.random.Generator,
    kind: str,
    views: Views = VIEWS["v1"],
    scale: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """Camera inputs (anchors) and enrolment inputs (positives) of ``cards`` of one deck, as
    uint8 arrays n × h × w × 3. A band's cover is another card of the deck (70 % of bands)."""
    anchors, positives = [], []
    for c in cards:
        cover = deck[int(rng.integers(0, len(deck)))] if rng.random() < 0.7 else None
        anchors.append(patch_input(camera_patch(deck[c], cover, rng, kind, views, scale), kind, scale))
        positives.append(reference_input(enrolment_face(deck[c], rng, views), kind, scale))
    return np.stack(anchors), np.stack(positives)


def to_tensor_array(images: np.ndarray) -> np.ndarray:
    """uint8 BGR n × h × w × 3 -> float32 RGB n × 3 × h × w in 0..1 (as ``cv2.dnn.blobFromImages``
    with ``swapRB`` and 1/255 gives the exported network)."""
    return np.ascontiguousarray(images[..., ::-1].transpose(0, 3, 1, 2), dtype=np.float32) / 255.0


# ----------------------------------------------------------------------------------------------- network


def build_net(kind: str, width: int = 16, dim: int = 64, scale: int = 1) -> Any:
    """A small CNN (about 60k weights): the image standardised as a whole (brightness and
    contrast gone, colour ratios kept), three stages of two 3×3 convolutions (two halvings), an
    average over a coarse grid that keeps the layout (a band's seal left, its title right), a
    linear map to ``dim`` and a unit-length output. ``scale`` multiplies the input's size (the
    grid is the same)."""
    import torch
    from torch import nn

    w, h = input_size(kind, scale)
    grid = (1, 4) if kind == "band" else (3, 2)
    pool = (h // 4 // grid[0], w // 4 // grid[1])

    def conv(i: int, o: int) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(i, o, 3, 1, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

    c1, c2, c3 = width, 2 * width, 4 * width

    class EmbedNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Sequential(
                conv(3, c1),
                conv(c1, c1),
                nn.MaxPool2d(2),
                conv(c1, c2),
                conv(c2, c2),
                nn.MaxPool2d(2),
                conv(c2, c3),
                conv(c3, c3),
                nn.AvgPool2d(pool),
            )
            self.head = nn.Linear(c3 * grid[0] * grid[1], dim)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            mean = x.mean(dim=(1, 2, 3), keepdim=True)
            std = ((x - mean) ** 2).mean(dim=(1, 2, 3), keepdim=True).sqrt()
            z = self.body((x - mean) / (std + 0.02))
            v = self.head(z.flatten(1))
            return v / (v.norm(dim=1, keepdim=True) + 1e-6)

    return EmbedNet()


# ----------------------------------------------------------------------------------------------- training


@dataclass(frozen=True, slots=True)
class EmbedTrainConfig:
    """The embedding's training recipe: ``epochs`` of ``steps`` steps, each step one fresh deck
    (all its 112 cards, both views, degraded as :data:`VIEWS` ``[views]``), InfoNCE at
    ``temperature``; ``lookalike`` of the steps draw a look-alike deck, ``varied`` a deck of a
    random design; ``width`` the network's first stage; ``scale`` its input's resolution (a
    multiple of :data:`vision.embedding.INPUT_SIZE`)."""

    out: Path = Path("runs/embedding-band")
    kind: str = "band"
    epochs: int = 30
    steps: int = 40
    lr: float = 0.003
    temperature: float = 0.1
    threads: int = 2
    seed: int = 0
    cards: int = N_CARDS  # cards of the deck per step
    views: str = "v1"
    lookalike: float = 0.0
    varied: float = 0.0
    width: int = 16
    scale: int = 1


def _deck_for_step(
    step: int, seed: int, lookalike: float = 0.0, varied: float = 0.0
) -> tuple[np.ndarray, ...]:
    draw = np.random.default_rng([seed, step, 1]).random()
    if draw < OWN_FACES_SHARE:
        return drawn_faces()
    if draw < OWN_FACES_SHARE + lookalike:
        return lookalike_random_deck(TRAIN_DECK_BASE + step)
    if draw < OWN_FACES_SHARE + lookalike + varied:
        return varied_random_deck(TRAIN_DECK_BASE + step)
    return random_deck(TRAIN_DECK_BASE + step)


def validation_set(
    kind: str,
    decks: int = VAL_DECKS,
    views: str = "v1",
    lookalike: bool = False,
    varied: bool = False,
    scale: int = 1,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Fixed views of the validation decks (random decks of their own seeds), per deck; with
    ``lookalike`` one more, a look-alike deck of the validation seeds, with ``varied`` one of a
    random design."""
    seeds = [(VAL_DECK_BASE + k, random_deck) for k in range(decks)]
    if lookalike:
        seeds.append((VAL_DECK_BASE + decks, lookalike_random_deck))
    if varied:
        seeds.append((VAL_DECK_BASE + decks + 1, varied_random_deck))
    return [
        view_pairs(make(seed), np.arange(N_CARDS), np.random.default_rng(seed), kind, VIEWS[views], scale)
        for seed, make in seeds
    ]


def top1_among_level(anchors: np.ndarray, refs: np.ndarray) -> float:
    """Share of anchors (unit vectors by card id) whose nearest reference among their level's
    cards is their own card (the Display row's candidates, as the benchmark asks)."""
    sims = anchors @ refs.T
    right = 0
    for c in range(len(anchors)):
        among = LEVELS[c] == LEVELS
        right += int(np.flatnonzero(among)[int(np.argmax(sims[c, among]))] == c)
    return right / len(anchors)


def _embed(net: Any, images: np.ndarray) -> np.ndarray:
    import torch

    net.eval()
    with torch.no_grad():
        return np.asarray(net(torch.from_numpy(to_tensor_array(images))).numpy())


def train_embedding(cfg: EmbedTrainConfig, resume: bool = False) -> Path:
    """Train the embedding (progress each epoch; ``resume`` continues after the last finished
    epoch); the epoch with the best validation top-1 is kept as ``best.pt``."""
    import torch
    import torch.nn.functional as F

    if cfg.kind not in KINDS:
        raise ValueError(f"embedding training: kind must be one of {KINDS}, not {cfg.kind!r}")
    if cfg.views not in VIEWS:
        raise ValueError(f"embedding training: views must be one of {sorted(VIEWS)}, not {cfg.views!r}")
    if min(cfg.lookalike, cfg.varied) < 0 or cfg.lookalike + cfg.varied > 1 - OWN_FACES_SHARE:
        raise ValueError(
            f"embedding training: the look-alike and varied shares must be >= 0 and together at most "
            f"{1 - OWN_FACES_SHARE:g}, not {cfg.lookalike:g} and {cfg.varied:g}"
        )
    if cfg.scale < 1:
        raise ValueError(f"embedding training: scale must be 1 or more, not {cfg.scale}")
    last = cfg.out / "last.pt"
    if resume and not last.is_file():
        raise ModelFileError(f"embedding training: nothing to resume in {cfg.out}")
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    net = build_net(cfg.kind, cfg.width, scale=cfg.scale)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg.lr, total_steps=cfg.epochs * cfg.steps)
    cfg.out.mkdir(parents=True, exist_ok=True)
    best_path, log_path = cfg.out / "best.pt", cfg.out / "log.jsonl"
    start, best = 0, -1.0
    if resume:
        ck = restore(last, net, opt, sched)
        start, best = ck["epoch"] + 1, ck["best"]
    val = validation_set(
        cfg.kind, views=cfg.views, lookalike=cfg.lookalike > 0, varied=cfg.varied > 0, scale=cfg.scale
    )
    for epoch in range(start, cfg.epochs):
        t0 = time.monotonic()
        total = 0.0
        for s in range(cfg.steps):
            step = epoch * cfg.steps + s
            rng = np.random.default_rng([cfg.seed, step])
            deck = _deck_for_step(step, cfg.seed, cfg.lookalike, cfg.varied)
            cards = np.sort(rng.choice(N_CARDS, min(cfg.cards, N_CARDS), replace=False))
            a, p = view_pairs(deck, cards, rng, cfg.kind, VIEWS[cfg.views], cfg.scale)
            net.train()
            za = net(torch.from_numpy(to_tensor_array(a)))
            zp = net(torch.from_numpy(to_tensor_array(p)))
            logits = za @ zp.T / cfg.temperature
            target = torch.arange(len(cards))
            loss = 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.item())
        score = float(np.mean([top1_among_level(_embed(net, a), _embed(net, p)) for a, p in val]))
        if score > best:
            best = score
            torch.save(
                {
                    "net": net.state_dict(),
                    "epoch": epoch,
                    "val_top1": score,
                    "kind": cfg.kind,
                    "width": cfg.width,
                    "scale": cfg.scale,
                },
                best_path,
            )
        keep(last, net, opt, sched, epoch=epoch, best=best)
        line = {"epoch": epoch + 1, "loss": total / cfg.steps, "val_top1": score, "s": time.monotonic() - t0}
        log_epoch(log_path, line)
        print(
            f"embedding ({cfg.kind}): epoch {epoch + 1}/{cfg.epochs} loss {line['loss']:.3f} "
            f"validation top-1 {score:.3f} (best {best:.3f}) {line['s']:.0f}s",
            flush=True,
        )
    return best_path


def export_embedding(weights: Path, out: Path) -> Path:
    """Export trained weights to ONNX (batch of any size, the kind's fixed input) for OpenCV's DNN."""
    import torch

    if not weights.is_file():
        raise ModelFileError(f"embedding weights file {weights} not found")
    ck = torch.load(weights, weights_only=False)
    kind = ck["kind"]
    scale = int(ck.get("scale", 1))
    net = build_net(kind, int(ck.get("width", 16)), scale=scale)
    net.load_state_dict(ck["net"])
    net.eval()
    out.parent.mkdir(parents=True, exist_ok=True)
    w, h = input_size(kind, scale)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        torch.onnx.export(
            net,
            (torch.zeros(1, 3, h, w),),
            str(out),
            input_names=["image"],
            output_names=["embedding"],
            dynamic_axes={"image": {0: "n"}, "embedding": {0: "n"}},
            dynamo=False,
        )
    return out


def combine_embeddings(members: Sequence[Path], out: Path) -> Path:
    """One ONNX network of several exported embeddings (an ensemble): each member runs on the same
    input and their unit vectors are concatenated, so the cosine of two outputs (normalised
    again, as :class:`vision.embedding.CardEmbedder` does) is the mean of the members' cosines.
    The input is the finest member's; a member at a whole fraction of its resolution sees it
    averaged down (a scale-1 band network in an ensemble with a scale-2 one). One file is one
    artefact: the runtime needs no idea of an ensemble."""
    import onnx
    from onnx import compose, helper

    if len(members) < 2:
        raise ValueError("embedding combine: give at least two networks")
    models = []
    for k, path in enumerate(members):
        if not path.is_file():
            raise ModelFileError(f"embedding network {path} not found")
        try:
            model = onnx.load(str(path))
        except Exception as exc:  # onnx raises protobuf's DecodeError and others
            raise ModelFileError(f"embedding network {path} is not an ONNX file ({exc})") from None
        names = ([v.name for v in model.graph.input], [v.name for v in model.graph.output])
        if names != (["image"], ["embedding"]):
            raise ModelFileError(f"embedding network {path} is not an exported embedding (image, embedding)")
        models.append(compose.add_prefix(model, f"m{k}_"))

    def dims(value: Any) -> list[int]:
        return [d.dim_value for d in value.type.tensor_type.shape.dim]

    inputs = [dims(m.graph.input[0])[1:] for m in models]  # channels, h, w
    channels, h, w = max(inputs, key=lambda d: d[1])
    nodes = []
    for k, (c, hk, wk) in enumerate(inputs):
        # A coarser member sees the finest input averaged down (as an area resize would cut it).
        f = h // hk
        if c != channels or hk * f != h or wk * f != w:
            raise ValueError(
                f"embedding combine: {members[k]} takes {wk}x{hk}, not a whole fraction of {w}x{h}"
            )
        pool = {"kernel_shape": [f, f], "strides": [f, f]}
        nodes.append(
            helper.make_node("AveragePool", ["image"], [f"m{k}_image"], **pool)
            if f > 1
            else helper.make_node("Identity", ["image"], [f"m{k}_image"])
        )
    n = len(models)
    nodes += [node for m in models for node in m.graph.node]
    # Each member's output unit length (the exported ones are already; any other is made so).
    nodes += [
        helper.make_node("LpNormalization", [f"m{k}_embedding"], [f"m{k}_unit"], axis=1, p=2)
        for k in range(n)
    ]
    nodes.append(helper.make_node("Concat", [f"m{k}_unit" for k in range(n)], ["embedding"], axis=1))
    width = sum(dims(m.graph.output[0])[1] for m in models)
    graph = helper.make_graph(
        nodes,
        "embedding_ensemble",
        [helper.make_tensor_value_info("image", onnx.TensorProto.FLOAT, ["n", channels, h, w])],
        [helper.make_tensor_value_info("embedding", onnx.TensorProto.FLOAT, ["n", width])],
        initializer=[t for m in models for t in m.graph.initializer],
    )
    model = helper.make_model(graph, opset_imports=models[0].opset_import)
    model.ir_version = models[0].ir_version
    onnx.checker.check_model(model)
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(out))
    return out


def smoke_embedding(folder: Path, kind: str = "band", threads: int = 2) -> Path:
    """Two epochs of two steps on 16 cards, then the export (the check that training runs)."""
    cfg = EmbedTrainConfig(folder / "run", kind=kind, epochs=2, steps=2, cards=16, threads=threads)
    best = train_embedding(cfg)
    return export_embedding(best, folder / model_path(kind).name)


def main(argv: list[str] | None = None) -> int:
    """``train`` (resumable), ``export`` or ``combine`` the card embedding."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="train (resumes a run found in --out)")
    t.add_argument("--kind", choices=KINDS, default="band")
    t.add_argument("--out", type=Path)
    t.add_argument("--epochs", type=int, default=30)
    t.add_argument("--steps", type=int, default=40)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--threads", type=int, default=2)
    t.add_argument("--views", choices=sorted(VIEWS), default="v1")
    t.add_argument("--lookalike", type=float, default=0.0, help="share of steps on a look-alike deck")
    t.add_argument("--varied", type=float, default=0.0, help="share of steps on a deck of a random design")
    t.add_argument("--width", type=int, default=16)
    t.add_argument("--scale", type=int, default=1, help="the input's resolution: 2 reads a band at 2 px/mm")
    e = sub.add_parser("export", help="export best.pt to ONNX")
    e.add_argument("weights", type=Path)
    e.add_argument("onnx", type=Path)
    c = sub.add_parser("combine", help="one ONNX network of several (an ensemble: the mean of their cosines)")
    c.add_argument("members", type=Path, nargs="+")
    c.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    try:
        if args.cmd == "export":
            print(export_embedding(args.weights, args.onnx))
            return 0
        if args.cmd == "combine":
            print(combine_embeddings(args.members, args.out))
            return 0
        out = args.out or Path(f"runs/embedding-{args.kind}")
        cfg = EmbedTrainConfig(
            out,
            kind=args.kind,
            epochs=args.epochs,
            steps=args.steps,
            seed=args.seed,
            threads=args.threads,
            views=args.views,
            lookalike=args.lookalike,
            varied=args.varied,
            width=args.width,
            scale=args.scale,
        )
        print(train_embedding(cfg, resume=(out / "last.pt").is_file()))
    except (ModelFileError, ValueError) as exc:
        print(exc)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
