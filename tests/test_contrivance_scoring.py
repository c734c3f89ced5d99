"""Hand-worked scoring examples (rulings 15-21): every number below was worked out on paper from
the layout drawn in its comment, then checked against the engine."""

from __future__ import annotations

import pytest

from referee.contrivance import BUILDERS, interlocked_sets, interlocks, score_workbench
from referee.contrivance.scoring import Scoring
from tests.contrivance_tables import Spec, bench

REPAIRED, DESTROYED = 0, 10


def reasons(scoring: Scoring) -> dict[str, str]:
    return {f"{v.square[0]}:{v.square[1]}": v.reason for v in scoring.verdicts}


def test_a_two_tile_set_keeps_its_higher_tile() -> None:
    # row 1:  [E-1 3 →][← E-2 1]  ·  ·     row 2: empty
    wb = bench(2, {(1, 1): ("Engineer-1", "E", 3), (1, 2): ("Engineer-2", "W", 1)})
    s = score_workbench(wb, ("Engineer", "Mechanic"), damage=3, requirement=None)
    assert s.interlocks == (((1, 1), (1, 2)),) and s.sets == (((1, 1), (1, 2)),)
    assert reasons(s) == {
        "1:1": "row 1, column 1: above the lowest of the set {1:1, 1:2} (value 3 > 1): survives",
        "1:2": "row 1, column 2: lowest of the set {1:1, 1:2} (value 1): burnt out",
    }
    assert [(x.builder, x.base, x.total) for x in s.lines] == [("Engineer", 3, 3), ("Mechanic", 0, 0)]


def test_a_chain_through_a_double_tile_loses_only_its_lowest() -> None:
    # row 2:  [M-1 2 →][← M-4 5 →][← M-2 4]     column 4: M-3 6 ↓ over E-4 1 ↕ over R-1 3 ↑ (3 rows)
    wb = bench(
        3,
        {
            (2, 1): ("Mechanic-1", "E", 2),
            (2, 2): ("Mechanic-4", "E", 5),  # the Double: Rivets E and W
            (2, 3): ("Mechanic-2", "W", 4),
            (1, 4): ("Mechanic-3", "S", 6),
            (2, 4): ("Engineer-4", "N", 1),  # the Double: Rivets N and S
            (3, 4): ("Regulator-1", "N", 3),
        },
    )
    assert interlocked_sets(wb) == [((1, 4), (2, 4), (3, 4)), ((2, 1), (2, 2), (2, 3))]
    s = score_workbench(wb, ("Engineer", "Mechanic", "Regulator"), damage=5, requirement=None)
    burnt = {v.square for v in s.verdicts if v.burnt}
    assert burnt == {(2, 1), (2, 4)}
    assert reasons(s)["2:4"] == "row 2, column 4: lowest of the set {1:4, 2:4, 3:4} (value 1): burnt out"
    base = {x.builder: x.base for x in s.lines}
    assert base == {"Engineer": 6, "Mechanic": 5 + 4, "Regulator": 3}


def test_equal_values_burn_the_whole_set_and_ties_at_the_bottom_burn_together() -> None:
    # row 1:  [E-1 4 →][← E-4 4 →][← E-2 4]      row 2:  [M-1 2 →][← M-4 2 →][← M-2 5]
    layout: dict[tuple[int, int], Spec] = {
        (1, 1): ("Engineer-1", "E", 4),
        (1, 2): ("Engineer-4", "E", 4),
        (1, 3): ("Engineer-2", "W", 4),
        (2, 1): ("Mechanic-1", "E", 2),
        (2, 2): ("Mechanic-4", "E", 2),
        (2, 3): ("Mechanic-2", "W", 5),
    }
    s = score_workbench(bench(2, layout), ("Engineer", "Mechanic"), damage=4, requirement=None)
    assert {v.square for v in s.verdicts if not v.burnt} == {(2, 3)}
    assert {x.builder: x.base for x in s.lines} == {"Engineer": 0, "Mechanic": 5}


def test_the_last_row_wraps_to_the_first() -> None:
    # 4 Builders, both mats: row 4's S Rivet faces row 1's N Rivet in column 3.
    wb = bench(4, {(1, 3): ("Engineer-2", "N", 2), (4, 3): ("Assembler-3", "S", 5)})
    assert interlocks(wb) == [((1, 3), (4, 3))]
    s = score_workbench(wb, ("Engineer", "Mechanic", "Regulator", "Assembler"), damage=2, requirement=None)
    assert (
        reasons(s)["4:3"] == "row 4, column 3: above the lowest of the set {1:3, 4:3} (value 5 > 2): survives"
    )
    assert {x.builder: x.base for x in s.lines}["Assembler"] == 5
    shifted = bench(4, {(2, 3): ("Engineer-2", "N", 2), (4, 3): ("Assembler-3", "S", 5)})
    assert interlocks(shifted) == []  # only the last and first rows wrap


def bonus_table(builder: str) -> dict[tuple[int, int], Spec]:
    """The Builder under test (type T) owns row 1; the other Builder (type O) owns row 2.

    row 1:  [T-1 2 →][← O-1 5]  [T-2 0 ↑]  [O-2 4 ↑]   ·
    row 2:  [T-3 3 →][← O-3 3]  [T-4 4 ↔]   ·         [O-4 6 ↕]

    Verdicts: 1:1 lowest of its pair (burnt, interlocked); 1:2 survives; 1:3, 1:4 alone (burnt);
    2:1 and 2:2 an equal pair (both burnt, interlocked); 2:3 and 2:5 alone (burnt).
    """
    other = next(b for b in BUILDERS if b != builder)
    return {
        (1, 1): (f"{builder}-1", "E", 2),
        (1, 2): (f"{other}-1", "W", 5),
        (1, 3): (f"{builder}-2", "N", 0),
        (1, 4): (f"{other}-2", "N", 4),
        (2, 1): (f"{builder}-3", "E", 3),
        (2, 2): (f"{other}-3", "W", 3),
        (2, 3): (f"{builder}-4", "E", 4),
        (2, 5): (f"{other}-4", "N", 6),
    }


#: Each Builder's bonus on :func:`bonus_table`, worked by hand, with the reason's last words.
BONUSES = {
    "Engineer": (2, "interlocked burnt-out tiles in row 1: 1:1 (2) = 2"),
    "Mechanic": (4, "un-interlocked burnt-out tiles in row 1: 1:3 (0) + 1:4 (4) = 4"),
    "Regulator": (2, "zero-value burnt-out tiles in row 1: 2 x 1 (1:3) = 2"),
    "Cognicator": (5, "interlocked burnt-out tiles of type Cognicator: 1:1 (2) + 2:1 (3) = 5"),
    "Assembler": (4, "un-interlocked burnt-out tiles of type Assembler: 1:3 (0) + 2:3 (4) = 4"),
    "Intendent": (2, "zero-value burnt-out tiles of type Intendent: 2 x 1 (1:3) = 2"),
}


@pytest.mark.parametrize("builder", BUILDERS)
def test_each_builders_bonus(builder: str) -> None:
    other = next(b for b in BUILDERS if b != builder)
    wb = bench(2, bonus_table(builder))
    points, tail = BONUSES[builder]
    s = score_workbench(wb, (builder, other), damage=REPAIRED, requirement=2)
    line = next(x for x in s.lines if x.builder == builder)
    assert (line.base, line.bonus, line.total) == (5, points, 5 + points)
    assert line.bonus_reason.startswith(f"{builder} (") and line.bonus_reason.endswith(tail)
    assert f"2 {builder} tile(s) in row 1 meet the requirement 2" in line.bonus_reason
    short = score_workbench(wb, (builder, other), damage=REPAIRED, requirement=3)
    line = next(x for x in short.lines if x.builder == builder)
    assert line.bonus == 0 and "needs 3" in line.bonus_reason


@pytest.mark.parametrize("builder", BUILDERS)
def test_a_destroyed_contrivance_gives_no_bonus(builder: str) -> None:
    other = next(b for b in BUILDERS if b != builder)
    s = score_workbench(bench(2, bonus_table(builder)), (builder, other), damage=DESTROYED, requirement=1)
    line = next(x for x in s.lines if x.builder == builder)
    assert (line.base, line.bonus, line.total) == (5, 0, 5)
    assert (
        line.bonus_reason
        == f"{line.bonus_reason.split(':')[0]}: no bonus, the Contrivance was destroyed (damage 10)"
    )


def test_no_bonus_while_the_contrivance_is_neither_repaired_nor_revealed() -> None:
    wb = bench(2, bonus_table("Engineer"))
    playing = score_workbench(wb, ("Engineer", "Mechanic"), damage=3, requirement=None)
    assert all(x.bonus == 0 and "not repaired" in x.bonus_reason for x in playing.lines)
    unrevealed = score_workbench(wb, ("Engineer", "Mechanic"), damage=0, requirement=None)
    assert all("not revealed" in x.bonus_reason for x in unrevealed.lines)


def test_the_scoring_json_names_every_tile_set_and_line() -> None:
    s = score_workbench(bench(2, bonus_table("Mechanic")), ("Mechanic", "Engineer"), 0, 2)
    raw = s.to_json()
    assert raw["sets"] == [[[1, 1], [1, 2]], [[2, 1], [2, 2]]]
    assert len(raw["tiles"]) == 8 and all("reason" in t for t in raw["tiles"])
    assert [(r["builder"], r["total"], r["rank"], r["won"]) for r in raw["ranking"]] == [
        ("Mechanic", 9, 1, True),
        ("Engineer", 6, 2, False),  # row 2: base 0; 2 Engineer tiles qualify; 2:1 (3) + 2:2 (3)
    ]
