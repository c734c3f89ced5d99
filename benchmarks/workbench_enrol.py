"""Does tile enrolment help? The held-out tile art, photographed and enrolled, then benchmarked.

A table whose tiles the square network does not read is what enrolment is for; the held-out
art (``benchmarks/workbench_heldout.py``) stands for such a table. Its tiles are written as a
user's enrolment folder: each Builder's single tile at every dial value 0-6 and its Double at
6 only (48 photos; the Double's other values are what ``enrol`` must manage without), each a
phone's photo (``benchmarks/heldout.phone_photo``, as the Gizmos deck is enrolled: keystone,
colour cast, a ramp of light, glare, its own blur, size, noise and JPEG, none of them the
benchmark scenes' camera), plus one photo of an empty mat (1000-1400 px wide). ``enrol``
fine-tunes the committed model on scenes drawn with them (``vision.training.workbench.enrol``),
and the conditions of
``benchmarks/workbench.py`` (the same held-out frames) are read by the committed and the
enrolled model; ``own`` shows what enrolling costs the project's own tiles.

    nice -n 10 .venv/bin/python benchmarks/workbench_enrol.py --out runs/enrol-heldout \\
        --frames 40 --conditions art,style,own
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2
import numpy as np

import vision  # noqa: F401  (caps BLAS at one thread)
from benchmarks.heldout import phone_photo
from benchmarks.workbench import condition, run
from benchmarks.workbench_heldout import HeldOutArt
from referee.contrivance.data import BUILDERS, MAX_VALUE
from vision.tile_enrol import MAT_ASPECT
from vision.training.workbench import ENROL_EPOCHS, ENROL_SCENES, ENROL_VAL, enrol
from vision.workbench import WorkbenchReader

#: The photos' random stream (their keystone, light, glare, blur, size, noise and JPEG).
PHOTO_SEED = 31
#: The mat photo's width (px): a phone's photo of a 350 mm mat, about 3-4 px/mm (the tiles'
#: are 3-5 px/mm).
MAT_WIDTH = (1000, 1400)


def write_photos(folder: Path, seed: int = PHOTO_SEED) -> Path:
    """The held-out tiles as a user's enrolment folder of phone photos (``phone_photo``)."""
    folder.mkdir(parents=True, exist_ok=True)
    art, rng = HeldOutArt(), np.random.default_rng(seed)
    keys = [(b, False, v) for b in BUILDERS for v in range(MAX_VALUE + 1)] + [(b, True, 6) for b in BUILDERS]
    for b, double, v in keys:
        photo = phone_photo(art.tile(b, double, v)[..., :3], rng)
        cv2.imwrite(str(folder / f"{b}{'-double' if double else ''}-{v}.jpg"), photo)
    w = 1400  # the mat at 4 px/mm, as the tiles (and phone_photo's keystone) are drawn
    mat = art.mat(rng, w, round(w / MAT_ASPECT), w / 5.3, w * 10 / 350)
    cv2.imwrite(str(folder / "mat.jpg"), phone_photo(mat, rng, MAT_WIDTH))
    return folder


ROWS = (
    ("exact", "Workbenches exactly right"),
    ("squares", "squares right"),
    ("type", "tile type (Builder + Double)"),
    ("builder", "Builder alone"),
    ("facing", "facing"),
    ("value", "dial value"),
    ("empty", "empty squares read empty"),
    ("damage", "Damage value (another network: unchanged by enrolment)"),
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=Path("runs/enrol-heldout"))
    p.add_argument("--scenes", type=int, default=ENROL_SCENES)
    p.add_argument("--val", type=int, default=ENROL_VAL)
    p.add_argument("--epochs", type=int, default=ENROL_EPOCHS)
    p.add_argument("--frames", type=int, default=40)
    p.add_argument("--conditions", default="art,style,own")
    a = p.parse_args(argv)
    names = [n.strip() for n in a.conditions.split(",") if n.strip()]
    for n in names:
        condition(n)
    photos = write_photos(a.out / "photos")
    print(enrol(photos, a.out, a.scenes, a.val, a.epochs), flush=True)
    models = {"committed": WorkbenchReader(), "enrolled": WorkbenchReader(a.out / "workbench.onnx")}
    load = os.getloadavg()[0]
    results = {(n, m): run(n, a.frames, reader, False) for n in names for m, reader in models.items()}
    print("| figure | " + " | ".join(f"{n}: {m}" for n, m in results) + " |")
    print("|---|" + "---|" * len(results))
    for key, label in ROWS:
        cells = []
        for r in results.values():
            if key == "exact":
                cells.append(f"{r['exact']}/{r['frames']}")
                continue
            counted = r[key]
            assert isinstance(counted, tuple)  # every other row is a tally of run(): (right, of)
            ok, n = counted
            cells.append(f"{100 * ok / n:.2f} % ({ok}/{n})" if n else "-")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print(f"\nload average (1 min) {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
