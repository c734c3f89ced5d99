"""Steps: the JSON form round-trips, and a malformed step is refused, never read with defaults."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from referee.gizmos import (
    GIZMOS,
    IllegalStep,
    InvalidStep,
    Step,
    apply,
    force,
    legal_steps,
    new_game,
    resolve_chance,
    step_from_json,
)
from referee.simulation.play import random_game
from tests.tables import table


def test_every_step_met_in_play_round_trips_through_json() -> None:
    kinds: set[str] = set()

    def check(before: object, step: Step, after: object) -> None:
        kinds.add(step.kind)
        assert step_from_json(step.to_json()) == step

    for seed in range(6):
        random_game(GIZMOS, 2 + seed % 3, seed, check)
    s = table(deck_order={1: [20, 21, 22]})
    for step in legal_steps(s) + legal_steps(apply(s, Step("research", 0, level=1))):
        assert step_from_json(step.to_json()) == step
    assert kinds >= {"file", "pick", "build", "research", "use", "skip", "bottom", "end_turn"}


@pytest.mark.parametrize(
    "step,field",
    [
        (Step("pick", None, color=0), "step.player"),  # no seat: never "the current player"
        (Step("pick", 2, color=0), "step.player"),  # no seat 3 in a 2-player game
        (Step("pick", True, color=0), "step.player"),  # type: ignore[arg-type]
        (Step("pick", 0), "step.color"),  # no color: never "red"
        (Step("pick", 0, color=4), "step.color"),
        (Step("pick", 0, color=0, card=4), "step.card"),  # a field of another kind
        (Step("file", 0), "step.card"),
        (Step("file", 0, card=112), "step.card"),
        (Step("research", 0, level=0), "step.level"),
        (Step("use", 0), "step.gizmo"),
        (Step("build", 0, card=4), "step.pay"),
        (Step("build", 0, card=4, pay=(1, 0, 0)), "step.pay"),  # type: ignore[arg-type]
        (Step("build", 0, card=4, pay=(-1, 0, 0, 0)), "step.pay"),
        (Step("build", 0, card=4, pay=(1, 0, 0, 0), converters=(44, 10)), "step.converters"),
        (Step("build", 0, card=4, pay=(1, 0, 0, 0), converters=(10, 10)), "step.converters"),
        (Step("end_turn", 0, pay=(0, 0, 0, 0)), "step.pay"),
        (Step("reveal", 0, card=4), "step.player"),  # a random outcome has no player
        (Step("shuffle", 0), "step.kind"),
    ],
)
def test_apply_and_force_refuse_a_malformed_step(step: Step, field: str) -> None:
    s = table(rings={0: (1, 0, 0, 0)}, display=[4])
    for play in (lambda: apply(s, step), lambda: force(s, step)):
        with pytest.raises(InvalidStep, match=field.replace(".", r"\.")):
            play()


def test_well_formed_steps_pass_the_shape_check() -> None:
    s = table(rings={0: (1, 0, 0, 0)}, display=[4])
    after = apply(s, Step("build", 0, card=4, pay=(1, 0, 0, 0), converters=()), random.Random(0))
    assert 4 in after.players[0].gizmos


def test_messages_name_seats_as_the_json_does() -> None:
    # Issue 15 (9): a person reads "seat N" with N the step's "player" (from 0), never a
    # 1-based "player N+1" beside a 0-based JSON.
    state = resolve_chance(new_game(3), random.Random(1))
    step = step_from_json({"kind": "pick", "player": 2, "color": "red"})
    with pytest.raises(IllegalStep) as info:
        apply(state, step)
    assert info.value.message == "it is seat 0's turn, not seat 2's" and info.value.player == 2
    assert str(Step("end_turn", 1)) == "seat 1 ends the turn"
    engine = Path(__file__).resolve().parents[1] / "referee" / "gizmos"
    for path in engine.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"[Pp]layer \{[^}]*\}|\bP\{", text), f"{path.name} counts players in a message"
