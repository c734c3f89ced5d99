"""The live loop reads the players' arms on the frames its still-frame gate drops (issue 13):
the hand network alone, on every k-th moving or settling frame, hands the tracker the arms a
gesture passes in, while the table is still read from still frames only.

Frames of the recorded game (rendered here, a few dozen) with the committed hand network; the
table's own boxes are left out (the tracker sees an empty table), since only the arms are
looked at.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.app.errors import LiveError
from referee.app.live import Feed, LiveReferee, LocalGame, RunOptions
from referee.app.sources import open_source
from referee.tracker import Tracker
from vision.hands import HandSegmenter
from vision.observe import Observer
from vision.training.recording import (
    RecordingSpec,
    draw_hand,
    film_game,
    play_game,
    render_table_image,
    sensor_noise,
    stage_of,
)

SPEC = RecordingSpec()
SETTLE, BURST = 2, 6


@pytest.fixture(scope="module")
def gesture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[bool]]:
    """The recording's first gesture as image files: still frames of the table before it, the
    frames with the hand, and still frames after; and which frames show the hand."""
    film = film_game(SPEC, play_game(SPEC), stage_of(SPEC).homography)
    first = next(i for i, f in enumerate(film.frames) if f.hand is not None)
    last = next(i for i in range(first, len(film.frames)) if film.frames[i].hand is None)
    folder = tmp_path_factory.mktemp("gesture")
    hands: list[bool] = []
    # the table as before the gesture, then the gesture, then the table after it, still
    picks = [first - 1] * 10 + list(range(first, last)) + [last] * 10
    cache: dict[int, np.ndarray] = {}
    for n, i in enumerate(picks):
        if i not in cache:
            frame = film.frames[i]
            image, _, _ = render_table_image(SPEC, film.tables[frame.table])
            if frame.hand is not None:
                draw_hand(SPEC, image, frame.hand)
            cache[i] = sensor_noise(SPEC, image, i)
        cv2.imwrite(str(folder / f"{n:04d}.png"), cache[i])
        hands.append(film.frames[i].hand is not None)
    return folder, hands


def _run(folder: Path, every: int, tmp_path: Path) -> tuple[Tracker, LiveReferee, list[int]]:
    observer = Observer(seats=(0, 1, 2), color_stage=False, boxes=lambda frame_no: [])
    observer.hands = HandSegmenter()  # the table's boxes none, the arms the committed network's
    observed: list[int] = []
    process = observer.process

    def counted(frame, t=None, frame_no=None, seats=None):  # type: ignore[no-untyped-def]
        sight = process(frame, t, frame_no, seats)
        if sight is not None:
            observed.append(frame_no)
        return sight

    observer.process = counted  # type: ignore[method-assign]
    options = RunOptions(speed=0.0, settle=SETTLE, burst=BURST, arms_every=every)
    runner = LiveReferee(observer, lambda s: Feed(open_source(str(folder))), options)
    game = LocalGame(Tracker.create(tmp_path / "g.sqlite", ["Ana", "Ben", "Cleo"]))
    runner.run(game, Feed(open_source(str(folder))))
    return game.tracker, runner, observed


def test_the_arms_of_the_moving_frames_reach_the_tracker_and_the_table_is_read_still(
    gesture: tuple[Path, list[bool]], tmp_path: Path
) -> None:
    folder, hands = gesture
    tracker, runner, observed = _run(folder, 2, tmp_path)
    # the gate's promise: only still frames (no hand in them or the frame before) are observed
    assert observed and all(not hands[i] and (i == 0 or not hands[i - 1]) for i in observed)
    assert len(observed) == runner.stats.observed <= 2 * BURST
    # every second frame the gate dropped while the table moved or settled was glanced at
    moving = sum(hands)
    assert moving // 2 <= runner.stats.glanced <= (moving + 2 * SETTLE + 2) // 2 + 1
    arms = tracker._arms
    assert arms.reported
    seen = [(f, seat) for f, seat, _ in arms.seen]
    assert len(seen) >= moving // 4, seen  # the hand was seen in most frames looked at
    assert len({seat for _, seat in seen}) == 1  # one arm, one seat
    # the arms came between the table before and the table after: with the last frame observed
    # before the gesture, so they weigh as reaching for what the next stable table shows
    before = sum(i < hands.index(True) for i in observed)
    assert {f for f, _ in seen} == {before}
    # kept in the record: the game resumed weighs the same arms
    assert Tracker.open(tracker.record.path)._arms == arms


def test_without_arms_the_table_is_read_alone(gesture: tuple[Path, list[bool]], tmp_path: Path) -> None:
    folder, _ = gesture
    tracker, runner, _ = _run(folder, 0, tmp_path)
    assert runner.stats.glanced == 0
    assert not tracker._arms.reported


@pytest.mark.parametrize("every", [-1, 1.5, True])
def test_a_bad_arms_every_is_one_clear_line(every: object) -> None:
    with pytest.raises(LiveError) as info:
        RunOptions(arms_every=every)  # type: ignore[arg-type]
    assert str(info.value).startswith("--arms-every: expected 0 (the table alone) or a whole number")
    assert "\n" not in str(info.value)
