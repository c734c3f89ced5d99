"""Domain-randomised training scenes: a smoke test of the generator (no training runs here)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from benchmarks import heldout
from vision.faces import drawn_faces
from vision.training.dataset import DatasetSpec, generate
from vision.training.randomise import _HELD_OUT_TOKENS, random_deck, randomised


def test_randomised_dataset_renders_labelled_tiles_deterministically(tmp_path: Path) -> None:
    spec = DatasetSpec(tmp_path / "a", train_scenes=2, val_scenes=1, tiles_per_scene=1, randomise=True)
    generate(spec, workers=1)
    labels = sorted((tmp_path / "a" / "labels" / "train").glob("*.txt"))
    assert len(labels) == 2 and any(p.read_text().strip() for p in labels)
    again = DatasetSpec(tmp_path / "b", train_scenes=2, val_scenes=1, tiles_per_scene=1, randomise=True)
    generate(again, workers=1)
    for p in labels:
        assert (tmp_path / "b" / "labels" / "train" / p.name).read_text() == p.read_text()


def test_randomised_looks_keep_clear_of_the_held_out_style() -> None:
    assert heldout.STYLE.texture is not None and heldout.STYLE.camera is not None
    decks = set()
    for seed in range(1_000_000, 1_000_040):
        s, faces = randomised(seed)
        assert s.texture is not heldout.STYLE.texture and s.camera is not heldout.STYLE.camera
        assert all(math.dist(c, h) >= 60 for c in s.token_fills for h in _HELD_OUT_TOKENS)
        decks.add(id(faces))
    assert len(decks) > 2  # several decks across scenes, not one
    deck = random_deck(1)
    assert not any(np.array_equal(a, b) for a, b in zip(deck, drawn_faces(), strict=True))
    assert not any(np.array_equal(a, b) for a, b in zip(deck, heldout.other_deck(), strict=True))
