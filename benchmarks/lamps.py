"""Marble color and card identification per lamp, with and without white balance (issue 14, item 5).

Tables of the held-out style (``benchmarks/heldout.py``) are rendered under one lamp color
temperature at a time (2700 K to 6500 K; the webcam's own white balance corrects 40-80 % of the
tint, as in the held-out style). Through the true camera and the true boxes (so only color is
measured) it counts marbles whose color the color stage reads right, and cards identified
right among the table's candidates, on the frame as the camera gives it and on the frame
white-balanced on the markers' paper (``vision.whitebalance``).

    .venv/bin/python benchmarks/lamps.py [--frames 16]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

import vision  # noqa: F401  (caps BLAS at one thread)
from benchmarks import heldout
from benchmarks.identify_methods import candidates
from vision.identify import Identifier
from vision.marbles import MarbleColors
from vision.observe import rotation_at
from vision.training.evaluate import Tally, heldout_scenes
from vision.whitebalance import balance, paper_color
from vision.zones import default_zones

LAMPS = (2700, 3500, 4500, 5500, 6500)


def main(argv: list[str] | None = None) -> int:
    """Print marble color and identification per lamp, raw frame and white-balanced."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=16, help="frames per lamp")
    args = ap.parse_args(argv)
    zones = default_zones()
    colors = MarbleColors()
    ident = Identifier()
    print(f"{args.frames} held-out-style frames per lamp (seeds from {heldout.STYLE_SEED_BASE + 50_000})")
    print("lamp     marble colour: raw / balanced     cards: raw / balanced     paper B:G:R raw")
    for k, kelvin in enumerate(LAMPS):
        settings = replace(heldout.STYLE, camera=partial(heldout.webcam, kelvin=kelvin))
        marbles = {False: Tally(), True: Tally()}
        cards = {False: Tally(), True: Tally()}
        casts = []
        first = heldout.STYLE_SEED_BASE + 50_000 + 1000 * k
        for _seed, scene in heldout_scenes(first, args.frames, settings):
            h = scene.homography
            paper = paper_color(scene.image, h, zones)
            if paper is not None:
                casts.append(paper / paper.mean())
            for balanced in (False, True):
                img = balance(scene.image, h, zones) if balanced else scene.image
                for o in scene.objects:
                    if not o.visible:
                        continue
                    c = ((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2)
                    if o.color is not None:
                        marbles[balanced].add(colors.classify(img, h, c)[0] == o.color)
                    elif o.card is not None:
                        among = candidates(scene.layout, o.card)
                        score = ident.band_scores if o.cls == "card_band" else ident.card_scores
                        sc = score(img, h, c, rotation_at(zones, *c), among)
                        cards[balanced].add(int(np.argmax(np.where(among, sc, -np.inf))) == o.card)
        cast = np.mean(casts, axis=0) if casts else np.ones(3)
        print(
            f"{kelvin} K   {marbles[False]} / {marbles[True]}   {cards[False]} / {cards[True]}   "
            f"{cast[0]:.2f}:{cast[1]:.2f}:{cast[2]:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
