"""Fitting the marble color stage (:mod:`vision.marbles`) on marbles of rendered tables."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from vision.marbles import DEFAULT_PARAMS, features, fit, marble_patch
from vision.progress import Progress
from vision.training.synth import SIZES, RenderSettings, random_layout, render_table

#: Rendered tables the color model is fitted on: a seed range of their own (see vision.training.dataset).
FIT_SEED_BASE = 3_000_000


def samples(first_seed: int, count: int) -> tuple[np.ndarray, list[str]]:
    """Features and true colors of every visible marble on ``count`` rendered tables (progress shown)."""
    xs, ys = [], []
    prog = Progress("marble colours: tables", count)
    for i in range(count):
        seed = first_seed + i
        scene = render_table(
            random_layout(np.random.default_rng(seed)), seed, RenderSettings(size=SIZES[i % len(SIZES)])
        )
        for o in scene.objects:
            if o.visible and o.color is not None:
                c = ((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2)
                xs.append(features(marble_patch(scene.image, scene.homography, c)))
                ys.append(o.color)
        prog.step()
    return np.array(xs), ys


def fit_from_renders(
    count: int = 300, out: str | Path = DEFAULT_PARAMS, first_seed: int = FIT_SEED_BASE
) -> Path:
    """Render tables, fit the color model and write its parameter file."""
    x, y = samples(first_seed, count)
    p = Path(out)
    doc = fit(x, y).to_json()
    lines = ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in doc.items())
    p.write_text("{\n" + lines + "\n}\n", encoding="utf-8")
    return p
