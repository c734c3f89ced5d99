"""The Contrivance Workbench observation: its JSON form round-trips, and every malformed field is
refused with one line naming it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from referee.observation import ObservationError, SquareSighting, TileSighting, WorkbenchObservation

SEEN = WorkbenchObservation(
    time=12.4,
    squares=(
        SquareSighting(1, 2, TileSighting("Regulator", False, 1, 3, 0.95, 0.9, 0.93), 0.97),
        SquareSighting(1, 5, None, 0.99),
        SquareSighting(2, 1, TileSighting("unknown", True, None, None, 0.7, 0.2, 0.1), 0.8),
    ),
    damage=(6, 0.98),
    discard_top=("switch_on-2", 0.9),
    frame=310,
)


def test_the_json_form_round_trips() -> None:
    raw = SEEN.to_json()
    assert raw["squares"][0]["tile"]["facing"] == "E"  # facings are written as in the engine's steps
    assert raw["squares"][1]["tile"] is None  # seen empty
    assert WorkbenchObservation.from_json(raw) == SEEN
    assert WorkbenchObservation.loads(SEEN.dumps()) == SEEN
    assert SEEN.square(1, 5) is not None and SEEN.square(3, 3) is None  # absent: not seen


def _with(path: list[Any], value: Any) -> dict[str, Any]:
    raw: dict[str, Any] = json.loads(SEEN.dumps())
    node: Any = raw
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return raw


@pytest.mark.parametrize(
    ("path", "value", "named"),
    [
        (["format"], "gizmos-observation", "format"),
        (["time"], "soon", "observation.time"),
        (["squares", 0, "row"], 7, "squares[0].row"),
        (["squares", 0, "column"], 0, "squares[0].column"),
        (["squares", 1, "row"], 1, None),  # placeholder replaced below
        (["squares", 0, "tile", "builder"], "Wizard", "squares[0].tile.builder"),
        (["squares", 0, "tile", "double"], "no", "squares[0].tile.double"),
        (["squares", 0, "tile", "facing"], "X", "squares[0].tile.facing"),
        (["squares", 0, "tile", "value"], 7, "squares[0].tile.value"),
        (["squares", 0, "tile", "value_confidence"], 1.5, "squares[0].tile.value_confidence"),
        (["squares", 0, "tile", "rivets"], 2, "squares[0].tile: unknown field 'rivets'"),
        (["squares", 0, "confidence"], None, "squares[0].confidence"),
        (["damage", "value"], 11, "damage.value"),
        (["discard_top", "card"], "hammer", "discard_top.card"),
        (["squarez"], [], "observation: unknown field 'squarez'"),
    ],
)
def test_a_bad_field_is_named(path: list[Any], value: Any, named: str | None) -> None:
    raw = _with(path, value)
    if named is None:  # the same square twice
        raw["squares"][1]["column"] = 2
        named = "squares[1]: square row 1, column 2 reported twice"
    with pytest.raises(ObservationError, match=named.replace("[", r"\[").replace("]", r"\]")):
        WorkbenchObservation.from_json(raw)


def test_text_that_is_not_json_is_one_error() -> None:
    with pytest.raises(ObservationError, match="not valid JSON"):
        WorkbenchObservation.loads("{squares")
