"""Resumable training: the one way a run's last checkpoint is kept and put back (a session may
end mid-run, so a run resumes from its last whole epoch)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


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
