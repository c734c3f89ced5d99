"""Resumable training: the one way a run's last checkpoint is kept and put back (a session may
end mid-run, so a run resumes from its last whole epoch)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np


def keep(path: Path, net: Any, opt: Any, sched: Any, **extra: Any) -> None:
    """Write a run's ``last.pt``: the network, optimiser and learning-rate schedule, and
    ``extra`` (the epoch, the best figure so far). Written beside and then moved into place, so
    a run stopped mid-write keeps its previous checkpoint whole."""
    import torch

    part = path.with_name(path.name + ".part")
    torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(), **extra}, part)
    os.replace(part, path)


def restore(path: Path, net: Any, opt: Any, sched: Any) -> dict[str, Any]:
    """Load a run's ``last.pt`` into its network, optimiser and learning-rate schedule; the
    checkpoint's other entries (the epoch, the best figure so far) are the caller's to read."""
    import torch

    ck: dict[str, Any] = torch.load(path, weights_only=False)
    net.load_state_dict(ck["net"])
    opt.load_state_dict(ck["opt"])
    sched.load_state_dict(ck["sched"])
    return ck


def log_epoch(path: Path, line: dict[str, Any]) -> None:
    """Append one epoch's figures to the run's ``log.jsonl``."""
    with path.open("a") as f:
        f.write(json.dumps(line) + "\n")


def last_checkpoint(out: Path, what: str, resume: bool) -> Path:
    """A run's ``last.pt`` in ``out``; resuming a run that has none is a
    :class:`~vision.errors.ModelFileError` naming ``what`` ("hand training")."""
    from vision.errors import ModelFileError

    last = out / "last.pt"
    if resume and not last.is_file():
        raise ModelFileError(f"{what}: nothing to resume in {out}")
    return last


class Recipe(Protocol):
    """What :func:`train_epochs` reads of a network's training configuration."""

    @property
    def out(self) -> Path: ...
    @property
    def epochs(self) -> int: ...
    @property
    def batch(self) -> int: ...
    @property
    def lr(self) -> float: ...
    @property
    def seed(self) -> int: ...


def train_epochs(
    net: Any,
    cfg: Recipe,
    samples: int,
    loss: Callable[[np.ndarray, int], Any],
    validate: Callable[[], float],
    *,
    label: str,
    figure: str,
    resume: bool,
) -> Path:
    """The one epoch loop of the project's small networks: AdamW (weight decay 1e-4) with a
    one-cycle learning rate peaking at ``cfg.lr``; each epoch the ``samples`` in an order seeded
    by ``cfg.seed``, in batches of ``cfg.batch``, ``loss(indices, epoch)`` (a torch scalar)
    minimised; then ``validate()`` (higher is better): the best epoch is kept as ``best.pt`` in
    ``cfg.out`` (its figure as ``val``), every epoch's state as ``last.pt`` (``resume``
    continues from it), a line appended to ``log.jsonl`` and one progress line printed
    (``label``: "hands"; ``figure``: "val IoU"). Returns the path of ``best.pt``."""
    import torch

    out, epochs, batch, lr, seed = cfg.out, cfg.epochs, cfg.batch, cfg.lr, cfg.seed

    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    steps = epochs * ((samples + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=steps)
    out.mkdir(parents=True, exist_ok=True)
    last, best_path, log_path = out / "last.pt", out / "best.pt", out / "log.jsonl"
    start, best = 0, -1.0
    if resume:
        ck = restore(last, net, opt, sched)
        # a hand run checkpointed before the loop was shared named its figure best_iou
        start, best = ck["epoch"] + 1, ck.get("best", ck.get("best_iou", -1.0))
    for epoch in range(start, epochs):
        t0 = time.monotonic()
        net.train()
        order = np.random.default_rng([seed, epoch]).permutation(samples)
        total = 0.0
        for i in range(0, samples, batch):
            idx = order[i : i + batch]
            value = loss(idx, epoch)
            opt.zero_grad()
            value.backward()
            opt.step()
            sched.step()
            total += value.item() * len(idx)
        score = validate()
        if score > best:
            best = score
            torch.save({"net": net.state_dict(), "epoch": epoch, "val": score}, best_path)
        keep(last, net, opt, sched, epoch=epoch, best=best)
        line = {"epoch": epoch + 1, "loss": total / samples, "val": score, "s": time.monotonic() - t0}
        log_epoch(log_path, line)
        print(
            f"{label}: epoch {epoch + 1}/{epochs} loss {line['loss']:.4f} {figure} {score:.4f} "
            f"(best {best:.4f}) {line['s']:.0f}s",
            flush=True,
        )
    return best_path
