"""The seam from the recorded Contrivance game to pixels: a moment is drawn by the Workbench
renderer exactly as the ground truth has it, and a rendered frame is written and read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.simulation.workbench import Moment, RecordingSpec, play_recording
from vision.training.contrivance_recording import (
    ROWS,
    SETTINGS,
    FramesError,
    _render_chunk,
    frame_seed,
    layout_of,
    load_frame,
)
from vision.training.workbench import render_workbench


def test_a_moment_is_rendered_as_the_ground_truth_has_it() -> None:
    recording = play_recording(RecordingSpec(seed=19))
    moments = [m for m in recording.timeline if isinstance(m, Moment)]
    m = next(m for m in reversed(moments) if m.hand is None)  # the final table, no hand
    scene = render_workbench(layout_of(m), frame_seed(19, m.frame), SETTINGS)
    assert scene.image.shape == (720, 1280, 3)
    seen = {(s.row, s.column): s.tile for s in scene.truth.squares}
    assert len(seen) == ROWS * 5  # no hand: every square in view
    for r, row in enumerate(m.workbench):
        for c, tile in enumerate(row):
            t = seen[(r + 1, c + 1)]
            if tile is None:
                assert t is None
            else:
                assert t is not None and (t.builder, t.double, t.facing, t.value) == (
                    tile.builder,
                    tile.double,
                    tile.facing,
                    tile.value,
                )
    assert all(seen[(r, c)] is None for r in range(len(m.workbench) + 1, ROWS + 1) for c in range(1, 6))


def test_a_rendered_frame_is_written_and_read_back(tmp_path: Path) -> None:
    assert _render_chunk((19, [0], str(tmp_path))) == 1
    assert load_frame(tmp_path, 0).shape == (720, 1280, 3)
    with pytest.raises(FramesError, match="missing or unreadable frame"):
        load_frame(tmp_path, 1)
