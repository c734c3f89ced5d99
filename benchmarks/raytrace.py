"""The benchmark's ray-traced conditions: the held-out style's tables traced in 3-D (held out).

The ray tracer itself is :mod:`vision.training.raytrace` (a renderer of another kind, which
training may use with the randomiser's settings). What is held out of all training lives
here, in ``benchmarks/`` (``tests/test_vision_heldout.py``): the held-out style's table
materials, cards placed by hand, VP-token printing and webcam (``heldout.STYLE``), the other
deck's art, and these seeds.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from benchmarks import heldout
from vision.training.raytrace import render_raytraced

#: Seeds of the ray-traced frames (inside the held-out range the dataset code refuses; the other
#: conditions' start at 9,000,000-9,300,000).
RAYTRACE_SEED_BASE = 9_400_000
RAYTRACE_DECK_SEED_BASE = 9_500_000


def traced_webcam(rng: np.random.Generator, img: np.ndarray) -> np.ndarray:
    """The held-out webcam on a traced frame, whose lamp colour the ray tracer has already cast
    (and the camera's white balance partly undone): its processing without a second cast."""
    return heldout.webcam(rng, img, kelvin=6500.0)


#: The traced conditions' settings: the held-out style's cameras, placements, table materials,
#: token printing and webcam, traced instead of drawn; no hands (not traced yet).
STYLE_TRACED = replace(
    heldout.STYLE, hand_prob=0.0, empty_table=False, camera=traced_webcam, renderer=render_raytraced
)
