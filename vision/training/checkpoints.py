"""Resumable training: the one way a run's last checkpoint is put back (a session may end mid-run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def restore(path: Path, net: Any, opt: Any, sched: Any) -> dict[str, Any]:
    """Load a run's ``last.pt`` into its network, optimiser and learning-rate schedule; the
    checkpoint's other entries (the epoch, the best figure so far) are the caller's to read."""
    import torch

    ck: dict[str, Any] = torch.load(path, weights_only=False)
    net.load_state_dict(ck["net"])
    opt.load_state_dict(ck["opt"])
    sched.load_state_dict(ck["sched"])
    return ck
