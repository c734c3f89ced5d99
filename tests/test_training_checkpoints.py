"""vision.training.checkpoints: a run's last checkpoint is kept whole and put back as it was."""

from __future__ import annotations

from pathlib import Path

import torch

from vision.training.checkpoints import keep, log_epoch, restore


def _run() -> tuple[torch.nn.Linear, torch.optim.AdamW, torch.optim.lr_scheduler.OneCycleLR]:
    net = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(net.parameters(), lr=0.01)
    return net, opt, torch.optim.lr_scheduler.OneCycleLR(opt, 0.01, total_steps=10)


def test_a_kept_checkpoint_is_restored_with_its_epoch_and_best(tmp_path: Path) -> None:
    net, opt, sched = _run()
    net(torch.ones(1, 3)).sum().backward()
    opt.step()
    sched.step()
    last = tmp_path / "last.pt"
    keep(last, net, opt, sched, epoch=4, best=0.75)
    assert [p.name for p in tmp_path.iterdir()] == ["last.pt"]  # nothing half-written left beside it

    again, opt2, sched2 = _run()
    ck = restore(last, again, opt2, sched2)
    assert (ck["epoch"], ck["best"]) == (4, 0.75)
    pairs = zip(net.state_dict().values(), again.state_dict().values(), strict=True)
    assert all(torch.equal(a, b) for a, b in pairs)
    assert sched2.state_dict()["last_epoch"] == sched.state_dict()["last_epoch"] == 1


def test_epochs_are_appended_to_the_log(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log_epoch(log, {"epoch": 1, "loss": 0.5})
    log_epoch(log, {"epoch": 2, "loss": 0.25})
    assert log.read_text().splitlines() == ['{"epoch": 1, "loss": 0.5}', '{"epoch": 2, "loss": 0.25}']
