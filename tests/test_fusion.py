"""Sensor fusion (issue 5, item 6): the dispenser's events confirm what the camera saw, catch
what it could not see, and a disagreement is *uncertain* for a person, never a broken rule."""

from __future__ import annotations

import random

from hardware.driver import DispenserDriver
from hardware.fusion import pump
from hardware.protocol import Button, Return, Row
from hardware.simulator import VirtualBoard, sample_rgbc
from referee.gizmos import State, Step
from referee.simulation.synthetic import Feeder
from tests.tables import table
from tests.test_tracker import referee, warnings_of

B = 1
# Ana builds #40 (Level II, 2 blue) paying a single blue marble: one marble too few.
START = {"rings": {0: (0, 2, 0, 0)}, "display": [40]}


def _underpay(feeder: Feeder, start: State) -> None:
    refill = Step("reveal", card=start.decks[1][0][0][0])
    feeder.play(Step("build", 0, card=40, pay=(0, 1, 0, 0), converters=()), refill, frames=6)


def _through_the_turn_with_the_ring_covered(feeder: Feeder, sensed_return: int | None) -> None:
    start = feeder.state
    feeder.camera.hidden = {"ring0"}  # a hand over Ana's ring all turn
    _underpay(feeder, start)
    if sensed_return is not None:
        feeder.sense("return", count=sensed_return)
    feeder.end_turn()
    feeder.show(frames=feeder.tracker.settings.eot_wait + 2)  # still covered: explain what is seen


def test_sensor_catches_an_underpaid_build_the_camera_missed() -> None:
    camera_only = referee(table(**START))  # type: ignore[arg-type]
    _through_the_turn_with_the_ring_covered(camera_only, None)
    assert camera_only.tracker.warnings == []  # the camera alone takes it for a full payment
    assert camera_only.tracker.log[0].step["pay"] == {"blue": 2}

    fused = referee(table(**START))  # type: ignore[arg-type]
    fused.sense("return", count=0)  # the board is connected (it reports from the start)
    _through_the_turn_with_the_ring_covered(fused, 1)
    [w] = warnings_of(fused)
    assert (w.code, w.player, w.turn) == ("UNDERPAID", 0, 0)
    assert "paying 1 blue" in w.message and not warnings_of(fused, "uncertain")


def test_camera_and_sensor_disagreeing_is_uncertain_never_a_violation() -> None:
    feeder = referee(table(**START))  # type: ignore[arg-type]
    start = feeder.state
    refill = Step("reveal", card=start.decks[1][0][0][0])
    feeder.play(Step("build", 0, card=40, pay=(0, 2, 0, 0), converters=()), refill, frames=6)
    feeder.sense("return", count=1)  # the camera saw two marbles go, the board counted one
    feeder.end_turn()
    assert warnings_of(feeder) == []
    [w] = warnings_of(feeder, "uncertain")
    assert "the dispenser counted 1 marble(s) returned" in w.message and "pay 2" in w.message
    assert w.player == 0 and w.turn == 0
    assert feeder.tracker.log[0].step["pay"] == {"blue": 2}  # the camera's reading stands


def test_row_color_disagreement_is_uncertain() -> None:
    feeder = referee(table())
    feeder.play(Step("pick", 0, color=0), Step("dispense", color=3), frames=6)  # a yellow rolls in
    feeder.sense("row_refill", color="blue")  # ... the color sensor says blue
    feeder.end_turn()
    assert warnings_of(feeder) == []
    [w] = warnings_of(feeder, "uncertain")
    assert "dispenser sensed blue, the camera saw yellow" in w.message


def test_agreeing_sensors_raise_nothing_and_the_button_ends_the_turn() -> None:
    feeder = referee(table(**START))  # type: ignore[arg-type]
    start = feeder.state
    refill = Step("reveal", card=start.decks[1][0][0][0])
    feeder.play(Step("build", 0, card=40, pay=(0, 2, 0, 0), converters=()), refill, frames=6)
    feeder.sense("return", count=2)
    update = feeder.sense("button")
    assert [s.kind for s in update.steps] == ["end_turn"]
    assert feeder.tracker.warnings == [] and feeder.tracker.state.current == 1


def _file_and_draw_unseen(feeder: Feeder, sensed: str | None) -> None:
    # Ana files #12; her Starting Gizmo draws a random marble (yellow) into her covered ring.
    feeder.camera.hidden = {"ring0"}
    refill = Step("reveal", card=feeder.state.decks[0][0][0][0])
    feeder.play(
        Step("file", 0, card=12), refill, Step("use", 0, gizmo=0), Step("dispense", color=3), frames=6
    )
    if sensed is not None:
        feeder.sense("draw", color=sensed)
    feeder.end_turn()
    feeder.show(frames=feeder.tracker.settings.eot_wait + 2)


def test_sensor_confirms_the_color_of_a_draw_the_camera_cannot_see() -> None:
    blind = referee(table(display=[12]))
    _file_and_draw_unseen(blind, None)
    [w] = warnings_of(blind, "uncertain")  # four colors fit: a person must say
    assert "out of view" in w.message and blind.tracker.state.turn == 0

    fused = referee(table(display=[12]))
    _file_and_draw_unseen(fused, "yellow")
    assert fused.tracker.warnings == []
    assert fused.tracker.state.players[0].ring == (0, 0, 0, 1) and fused.tracker.state.turn == 1


def test_events_through_the_real_protocol_reach_the_tracker() -> None:
    """Board bytes -> driver (parser, sequence numbers) -> pump -> tracker."""
    feeder = referee(table(**START))  # type: ignore[arg-type]
    driver = DispenserDriver("unused://", clock=lambda: feeder.time)
    board = VirtualBoard(seed=3)
    driver.feed(board.hello())
    feeder.camera.hidden = {"ring0"}
    _underpay(feeder, feeder.state)
    driver.feed(board.frame(Return(1))[1])
    assert [u.warnings for u in pump(driver, feeder.tracker)] == [[]]
    driver.feed(board.frame(Button())[1])
    pump(driver, feeder.tracker)
    feeder.show(frames=feeder.tracker.settings.eot_wait + 2)
    [w] = warnings_of(feeder)
    assert w.code == "UNDERPAID"
    # A pump that takes the tracker through a lock, as the dashboard holds it.
    driver.feed(board.frame(Row("red", sample_rgbc("red", random.Random(0))))[1])
    from contextlib import contextmanager

    taken: list[str] = []

    @contextmanager
    def locked():  # type: ignore[no-untyped-def]
        taken.append("lock")
        yield feeder.tracker

    assert len(pump(driver, locked)) == 1 and taken == ["lock"]
    assert driver.get(timeout=0) is None
