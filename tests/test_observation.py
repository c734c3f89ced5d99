"""The table observation format and the event formats: round trips, and bad input refused
with an error that names the field."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from referee.events import Correction, DispenserEvent, EndOfTurn, EventError
from referee.observation import Observation, ObservationError
from referee.simulation.synthetic import perfect_observation
from tests.tables import table

DOC_EXAMPLE = {
    "format": "gizmos-observation",
    "version": 1,
    "time": 12.4,
    "source": "camera",
    "frame": 310,
    "turn_player": 1,
    "display": [
        {"level": 1, "slot": 0, "card": 12, "confidence": 0.97},
        {"level": 1, "slot": 1, "card": None, "confidence": 0.9},
    ],
    "energy_row": [{"color": "red", "confidence": 0.99}, {"color": "unknown", "confidence": 0.4}],
    "players": [
        {
            "seat": 0,
            "ring": [{"color": "blue", "confidence": 0.98}],
            "archive": [{"card": 20, "confidence": 0.95}],
            "gizmos": [{"card": 0, "confidence": 0.99}, {"card": 57, "confidence": 0.91}],
            "vp_tokens": {"points": 3, "confidence": 0.8},
        },
        {"seat": 1, "ring": None, "archive": [], "gizmos": None, "vp_tokens": None},
    ],
}


def test_documented_example_parses_and_round_trips() -> None:
    obs = Observation.from_json(DOC_EXAMPLE)
    assert obs.turn_player == 1 and obs.player(1) is not None and obs.player(1).ring is None  # type: ignore[union-attr]
    assert obs.player(1).archive == ()  # type: ignore[union-attr]
    assert Observation.from_json(obs.to_json()) == obs
    assert Observation.loads(obs.dumps()) == obs


def test_observation_of_a_whole_table_round_trips() -> None:
    obs = perfect_observation(table(rings={0: (1, 2, 0, 0)}, archives={1: [20]}), time=3.0, frame=7)
    assert Observation.loads(json.dumps(obs.to_json())) == obs


REACHES = [
    {"seat": 2, "zone": "deck/3", "confidence": 0.9},
    {"seat": None, "zone": "energy_row", "confidence": 0.55},
]


def test_reaching_hands_round_trip_and_old_observations_have_none() -> None:
    obs = Observation.from_json({**DOC_EXAMPLE, "reaches": REACHES})
    assert obs.reaches is not None and [(r.seat, r.zone) for r in obs.reaches] == [
        (2, "deck/3"),
        (None, "energy_row"),
    ]
    assert Observation.loads(obs.dumps()) == obs
    old = Observation.from_json(DOC_EXAMPLE)  # written before reaches existed: hands not reported
    assert old.reaches is None and "reaches" not in old.to_json()
    none_seen = Observation.from_json({**DOC_EXAMPLE, "reaches": []})
    assert none_seen.reaches == () and Observation.loads(none_seen.dumps()).reaches == ()


def _bad(path: list[Any], value: Any) -> dict[str, Any]:
    raw = copy.deepcopy({**DOC_EXAMPLE, "reaches": REACHES})
    node: Any = raw
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return raw


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (_bad(["format"], "gizmos-state"), "expected format 'gizmos-observation' version 1"),
        (_bad(["time"], "noon"), r"observation.time: expected seconds"),
        (_bad(["time"], float("nan")), r"observation.time"),
        (_bad(["display", 0, "card"], 112), r"display\[0\].card: unknown card 112 \(ids are 0..111\)"),
        (_bad(["display", 0, "slot"], 4), r"display\[0\]: no Display slot level=1 slot=4"),
        (_bad(["display", 1, "slot"], 0), r"display\[1\]: Display slot 1/0 reported twice"),
        (_bad(["display", 0, "confidence"], 1.5), r"display\[0\].confidence: expected a number in 0..1"),
        (_bad(["display"], {"1": []}), r"display: expected a list"),
        (_bad(["energy_row", 0, "color"], "green"), r"energy_row\[0\].color"),
        (_bad(["players", 0, "gizmos", 1, "card"], -3), r"players\[0\].gizmos\[1\].card: unknown card -3"),
        (_bad(["players", 0, "ring"], "blue"), r"players\[0\].ring: expected a list of marbles or null"),
        (
            _bad(["players", 0, "vp_tokens"], {"points": -1, "confidence": 1}),
            r"players\[0\].vp_tokens.points",
        ),
        (_bad(["players", 1, "seat"], 0), r"players\[1\].seat: seat 0 reported twice"),
        (_bad(["players", 1, "seat"], True), r"players\[1\].seat: expected a seat 0..3"),
        (_bad(["players", 0, "rings"], []), r"players\[0\]: unknown field 'rings'"),
        (_bad(["energyrow"], []), r"observation: unknown field 'energyrow'"),
        (_bad(["turn_player"], 5), r"observation.turn_player: expected a seat 0..3 or null"),
        (_bad(["frame"], 1.5), r"observation.frame: expected an integer or null"),
        (_bad(["source"], 3), r"observation.source: expected a string"),
        (_bad(["reaches"], {"seat": 1}), r"reaches: expected a list of reaching hands or null"),
        (_bad(["reaches", 0, "seat"], 4), r"reaches\[0\].seat: expected a seat 0..3 or null"),
        (_bad(["reaches", 0, "zone"], "deck/4"), r"reaches\[0\].zone: expected a zone such as"),
        (_bad(["reaches", 1, "confidence"], None), r"reaches\[1\].confidence: expected a number"),
        (_bad(["reaches", 0, "hand"], "left"), r"reaches\[0\]: unknown field 'hand'"),
        (["not", "an", "object"], r"observation: expected a JSON object"),
    ],
)
def test_malformed_observations_name_the_field(raw: Any, error: str) -> None:
    with pytest.raises(ObservationError, match=error):
        Observation.from_json(raw)


def test_malformed_json_text_is_an_observation_error() -> None:
    with pytest.raises(ObservationError, match="not valid JSON"):
        Observation.loads('{"format": "gizmos-observation", "version": 1,')
    with pytest.raises(ObservationError, match="not valid JSON"):
        Observation.loads(b"\xff\xfe")


def test_events_round_trip_and_refuse_bad_fields() -> None:
    ev = DispenserEvent("return", 5.0, count=2, colors=("red",), seq=4)
    assert DispenserEvent.from_json(json.loads(json.dumps(ev.to_json()))) == ev
    row = DispenserEvent("row_refill", 6.0, "blue", seq=5, rgbc=(1, 2, 3, 4))
    assert DispenserEvent.from_json(json.loads(json.dumps(row.to_json()))) == row
    end = EndOfTurn(7.0, "button", player=1)
    assert EndOfTurn.from_json(end.to_json()) == end
    fix = Correction(8.0, "Ana", "card_id", {"old": 1, "new": 2})
    assert Correction.from_json(fix.to_json()) == fix
    with pytest.raises(EventError, match="dispenser event kind"):
        DispenserEvent.from_json({"kind": "sneeze", "time": 1.0})
    with pytest.raises(EventError, match="dispenser event color"):
        DispenserEvent.from_json({"kind": "row_refill", "time": 1.0, "color": "green"})
    with pytest.raises(EventError, match="dispenser event count"):
        DispenserEvent.from_json({"kind": "return", "time": 1.0, "count": "two"})
    with pytest.raises(EventError, match="dispenser event rgbc"):
        DispenserEvent.from_json({"kind": "row_refill", "time": 1.0, "color": "red", "rgbc": [1, 2]})
    with pytest.raises(EventError, match="end of turn player"):
        EndOfTurn.from_json({"time": 1.0, "player": 9})
    with pytest.raises(EventError, match="end of turn time"):
        EndOfTurn.from_json({"source": "button"})
