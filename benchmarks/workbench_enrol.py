"""Does tile enrolment help? The held-out tile art, "photographed" and enrolled, then benchmarked.

A table whose tiles the square network does not read is what enrolment is for; the held-out
art (``benchmarks/workbench_heldout.py``) stands for such a table. Its tiles are written as a
user's enrolment folder (each Builder's single tile at every dial value 0-6 and its Double at
6: 48 photos, softened and with a little noise, plus one empty mat), ``enrol`` fine-tunes the
committed model on scenes drawn with them (``vision.training.workbench.enrol``), and the
``art`` condition of ``benchmarks/workbench.py`` (the same held-out frames) is read by the
committed and the enrolled model.

    nice -n 19 .venv/bin/python benchmarks/workbench_enrol.py --out runs/enrol-heldout --frames 40
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2
import numpy as np

import vision  # noqa: F401  (caps BLAS at one thread)
from benchmarks.workbench import run
from benchmarks.workbench_heldout import HeldOutArt
from referee.contrivance.data import BUILDERS, MAX_VALUE
from vision.tile_enrol import MAT_ASPECT
from vision.training.workbench import enrol
from vision.workbench import WorkbenchReader


def write_photos(folder: Path, seed: int = 0) -> Path:
    """The held-out tiles as a user's enrolment folder (softened, with sensor noise)."""
    folder.mkdir(parents=True, exist_ok=True)
    art, rng = HeldOutArt(seed), np.random.default_rng(seed)
    keys = [(b, False, v) for b in BUILDERS for v in range(MAX_VALUE + 1)] + [(b, True, 6) for b in BUILDERS]
    for b, double, v in keys:
        img = cv2.GaussianBlur(art.tile(b, double, v)[..., :3], (0, 0), 0.8).astype(np.float32)
        img = np.clip(img + rng.normal(0, 3, img.shape), 0, 255).astype(np.uint8)
        cv2.imwrite(str(folder / f"{b}{'-double' if double else ''}-{v}.png"), img)
    w = 700
    cv2.imwrite(str(folder / "mat.png"), art.mat(rng, w, round(w / MAT_ASPECT), w / 5.3, w * 10 / 350))
    return folder


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=Path("runs/enrol-heldout"))
    p.add_argument("--scenes", type=int, default=200)
    p.add_argument("--val", type=int, default=20)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--frames", type=int, default=40)
    a = p.parse_args(argv)
    photos = write_photos(a.out / "photos")
    print(enrol(photos, a.out, a.scenes, a.val, a.epochs), flush=True)
    models = {"committed": WorkbenchReader(), "enrolled": WorkbenchReader(a.out / "workbench.onnx")}
    results = {name: run("art", a.frames, reader, False) for name, reader in models.items()}
    print("| art condition (held-out tile art) | " + " | ".join(results) + " |")
    print("|---|" + "---|" * len(results))
    for key, label in (
        ("squares", "squares right"),
        ("type", "tile type"),
        ("facing", "facing"),
        ("value", "dial value"),
        ("empty", "empty squares read empty"),
    ):
        cells = []
        for r in results.values():
            ok, n = r[key]  # type: ignore[misc]
            cells.append(f"{100 * ok / n:.2f} % ({ok}/{n})" if n else "-")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print(
        "| Workbenches exactly right | "
        + " | ".join(f"{r['exact']}/{r['frames']}" for r in results.values())
        + " |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
