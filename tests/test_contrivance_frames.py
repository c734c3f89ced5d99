"""The seam from the recorded Contrivance game to pixels: a moment is drawn by the Workbench
renderer exactly as the ground truth has it, and a rendered frame is written and read back."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.simulation.workbench import Moment, RecordingSpec, play_recording
from vision.calibrate import Calibrator
from vision.training.contrivance_recording import (
    ROWS,
    SETTINGS,
    FramesError,
    _render_chunk,
    film_camera,
    frame_seed,
    layout_of,
    load_frame,
    render_moment,
)
from vision.training.workbench import HIDDEN_SHARE, render_workbench
from vision.workbench import WORKBENCH


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
    assert scene.truth.damage == (min(10, max(0, m.damage)), 1.0)  # the Damage token, as the track shows it


def test_the_damage_is_under_a_hand_while_a_switch_on_card_is_applied() -> None:
    recording = play_recording(RecordingSpec(seed=19))
    m = next(m for m in recording.timeline if isinstance(m, Moment) and m.damage_covered)
    scene = render_workbench(
        layout_of(m),
        frame_seed(19, m.frame),
        replace(SETTINGS, hand_prob=1.0),
        hand_near=1.0,
        hand_at=WORKBENCH.contrivance,
        camera=film_camera(),
    )
    assert scene.damage_share > HIDDEN_SHARE and scene.truth.damage is None
    assert render_moment(m, 19).shape == scene.image.shape
    assert np.array_equal(render_moment(m, 19), scene.image)  # the film draws the hand there too


def test_a_rendered_frame_is_written_and_read_back(tmp_path: Path) -> None:
    assert _render_chunk((19, [0], str(tmp_path))) == 1
    assert load_frame(tmp_path, 0).shape == (720, 1280, 3)
    with pytest.raises(FramesError, match="missing or unreadable frame"):
        load_frame(tmp_path, 1)


def test_the_reader_reads_the_damage_a_switch_on_card_changes() -> None:
    """Around a Switch On card of the recording, the film's frames without a hand, read back by
    the Workbench reader: the Damage before and after, as the track shows it, at a confidence
    the tracker uses (its `threshold`, 0.6)."""
    from vision.workbench import WorkbenchReader

    recording = play_recording(RecordingSpec(seed=19))
    moments = [m for m in recording.timeline if isinstance(m, Moment)]
    i = next(i for i, m in enumerate(moments) if m.damage_covered)
    before = next(m for m in reversed(moments[:i]) if m.hand is None and not m.damage_covered)
    after = next(m for m in moments[i:] if m.hand is None and not m.damage_covered)
    assert before.damage != after.damage
    reader = WorkbenchReader(rows=ROWS)
    for m in (before, after):
        got = reader.read(render_moment(m, 19), film_camera(), m.time).damage
        assert got is not None and got[0] == min(10, max(0, m.damage)) and got[1] >= 0.6, (m.frame, got)


def test_the_film_has_one_camera() -> None:
    """Every frame of the recording is filmed by the same camera (the calibration settles once)."""
    recording = play_recording(RecordingSpec(seed=19))
    moments = [m for m in recording.timeline if isinstance(m, Moment) and m.hand is None][:2]
    for m in moments:
        image = render_moment(m, 19)
        found = Calibrator().update(image).homography
        h = film_camera()
        corners = np.array([[[425.0, 175.0], [755.0, 571.0]]], np.float32)
        a, b = (cv2.perspectiveTransform(corners, x)[0] for x in (found, h))
        assert np.abs(a - b).max() < 1.5  # pixels: this frame's markers give the film's camera
