"""Interlocks and scoring (rulings 15-21) as pure functions a person can check by hand.

Everything works on a Workbench (the active rows of tiles) so a finished table can be scored
without a game behind it: :func:`interlocks` (which neighbours have Rivets facing, the row wrap
included), :func:`interlocked_sets`, :func:`burn_outs` (the burn-outs, each with its reason),
:func:`bonus` (each Builder type's ability, with its reason) and :func:`score_workbench` (base
scores by row, totals, ranks and shared wins). Squares are written ``row:column`` in reasons.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from referee.contrivance.data import DESTROYED_AT, REPAIRED_AT, E, N, S, W
from referee.contrivance.state import Square, State, Tile, Workbench

#: Each Builder's ability (the seed's Builder Special Abilities, ruling 20): its name, whose
#: burnt-out tiles count ("row": in the Builder's row; "type": of the Builder's type, anywhere),
#: which of them ("interlocked", "alone": in no interlocked set, "zero": of value 0), and how
#: they count ("values": the sum of their values; "twice": 2 per tile).
ABILITIES: dict[str, tuple[str, str, str, str]] = {
    "Engineer": ("Resolve!", "row", "interlocked", "values"),
    "Mechanic": ("Repair!", "row", "alone", "values"),
    "Regulator": ("Reclaim!", "row", "zero", "twice"),
    "Cognicator": ("Resolve!", "type", "interlocked", "values"),
    "Assembler": ("Reinstall!", "type", "alone", "values"),
    "Intendent": ("Repurpose!", "type", "zero", "twice"),
}


def square_text(square: Square) -> str:
    return f"{square[0]}:{square[1]}"


def set_text(squares: Sequence[Square]) -> str:
    return "{" + ", ".join(square_text(s) for s in squares) + "}"


def facing_pairs(rows: int, columns: int = 5) -> list[tuple[Square, int, Square, int]]:
    """Every pair of facing edges on a Workbench of ``rows`` active rows (ruling 15):
    (square, its edge, neighbour, the neighbour's edge). Columns do not wrap; rows do: the last
    row's S edge faces row 1's N edge. With 2 rows both borders join rows 1 and 2."""
    pairs: list[tuple[Square, int, Square, int]] = []
    for r in range(1, rows + 1):
        for c in range(1, columns + 1):
            if c < columns:
                pairs.append(((r, c), E, (r, c + 1), W))
            pairs.append(((r, c), S, (r % rows + 1, c), N))
    return pairs


def interlocks(workbench: Workbench) -> list[tuple[Square, Square]]:
    """The interlocked pairs of tiles, each once, in Workbench order: orthogonal neighbours
    whose facing edges both carry a Rivet (ruling 15)."""
    out: list[tuple[Square, Square]] = []
    for a, edge_a, b, edge_b in facing_pairs(len(workbench), len(workbench[0]) if workbench else 5):
        ta, tb = workbench[a[0] - 1][a[1] - 1], workbench[b[0] - 1][b[1] - 1]
        if ta is None or tb is None or edge_a not in ta.edges or edge_b not in tb.edges:
            continue
        pair = (min(a, b), max(a, b))
        if pair not in out:  # with 2 rows the same two tiles face across both borders
            out.append(pair)
    return sorted(out)


def interlocked_sets(workbench: Workbench) -> list[tuple[Square, ...]]:
    """The interlocked sets (ruling 16): connected groups of two or more interlocked tiles,
    each sorted, in Workbench order."""
    links: dict[Square, set[Square]] = {}
    for a, b in interlocks(workbench):
        links.setdefault(a, set()).add(b)
        links.setdefault(b, set()).add(a)
    seen: set[Square] = set()
    sets: list[tuple[Square, ...]] = []
    for start in sorted(links):
        if start in seen:
            continue
        group, todo = {start}, [start]
        while todo:
            for nxt in links[todo.pop()]:
                if nxt not in group:
                    group.add(nxt)
                    todo.append(nxt)
        seen |= group
        sets.append(tuple(sorted(group)))
    return sets


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the test at the end does to one tile (ruling 18), and why."""

    square: Square
    tile: str
    builder: str
    value: int
    interlocked: bool
    set: tuple[Square, ...]
    burnt: bool
    reason: str

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        out["square"] = list(self.square)
        out["set"] = [list(s) for s in self.set]
        return out


def burn_outs(workbench: Workbench) -> list[Verdict]:
    """Every tile's verdict (ruling 18): a tile in no interlocked set burns out; in each set,
    every tile whose value equals the set's lowest burns out (a set of equal values burns out
    whole); the others survive."""
    of_set: dict[Square, tuple[Square, ...]] = {}
    for group in interlocked_sets(workbench):
        for sq in group:
            of_set[sq] = group
    out: list[Verdict] = []
    for r, row in enumerate(workbench):
        for c, tile in enumerate(row):
            if tile is None:
                continue
            sq = (r + 1, c + 1)
            where = f"row {sq[0]}, column {sq[1]}"
            group = of_set.get(sq, ())
            if not group:
                burnt, reason = True, f"{where}: in no interlocked set (value {tile.value}): burnt out"
            else:
                low = min(_tile(workbench, s).value for s in group)
                burnt = tile.value == low
                if burnt:
                    reason = f"{where}: lowest of the set {set_text(group)} (value {tile.value}): burnt out"
                else:
                    reason = (
                        f"{where}: above the lowest of the set {set_text(group)} "
                        f"(value {tile.value} > {low}): survives"
                    )
            out.append(Verdict(sq, tile.id, tile.builder, tile.value, bool(group), group, burnt, reason))
    return out


def _tile(workbench: Workbench, sq: Square) -> Tile:
    tile = workbench[sq[0] - 1][sq[1] - 1]
    assert tile is not None
    return tile


@dataclass(frozen=True, slots=True)
class Bonus:
    """A Builder's end-of-game bonus (ruling 20): the points and the sentence explaining them."""

    points: int
    qualified: bool
    reason: str


def bonus(builder: str, row: int, verdicts: Sequence[Verdict], damage: int, requirement: int | None) -> Bonus:
    """The bonus of the Builder owning ``row`` (ruling 20). Only a repaired Contrivance (damage
    <= 0) gives bonuses; the Builder qualifies with at least ``requirement`` tiles of their own
    type in their row, burnt out or not."""
    ability, where, which, how = ABILITIES[builder]
    label = f"{builder} ({ability})"
    if damage >= DESTROYED_AT:
        return Bonus(0, False, f"{label}: no bonus, the Contrivance was destroyed (damage {damage})")
    if damage > REPAIRED_AT:
        return Bonus(0, False, f"{label}: no bonus, the Contrivance is not repaired (damage {damage})")
    if requirement is None:
        return Bonus(0, False, f"{label}: no bonus yet, the Contrivance is not revealed")
    own = sum(1 for v in verdicts if v.square[0] == row and v.builder == builder)
    if own < requirement:
        return Bonus(
            0,
            False,
            f"{label}: no bonus, {own} {builder} tile(s) in row {row}; the Contrivance needs {requirement}",
        )
    blown = [
        v
        for v in verdicts
        if v.burnt
        and (v.square[0] == row if where == "row" else v.builder == builder)
        and (
            v.interlocked
            if which == "interlocked"
            else not v.interlocked
            if which == "alone"
            else v.value == 0
        )
    ]
    kind = {"interlocked": "interlocked", "alone": "un-interlocked", "zero": "zero-value"}[which]
    scope = f"in row {row}" if where == "row" else f"of type {builder}"
    if how == "values":
        points = sum(v.value for v in blown)
        terms = " + ".join(f"{square_text(v.square)} ({v.value})" for v in blown) or "none"
    else:
        points = 2 * len(blown)
        terms = f"2 x {len(blown)}" + (
            f" ({', '.join(square_text(v.square) for v in blown)})" if blown else ""
        )
    return Bonus(
        points,
        True,
        f"{label}: {own} {builder} tile(s) in row {row} meet the requirement {requirement}; "
        f"{kind} burnt-out tiles {scope}: {terms} = {points}",
    )


@dataclass(frozen=True, slots=True)
class ScoreLine:
    """One Builder's score as the final-scoring screen shows it (rulings 19-21)."""

    seat: int
    builder: str
    row: int
    base: int
    survivors: tuple[str, ...]  # "2:3 (4)" for each surviving tile in the row
    bonus: int
    bonus_reason: str
    total: int
    rank: int = 0
    won: bool = False

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        out["survivors"] = list(self.survivors)
        return out


@dataclass(frozen=True, slots=True)
class Scoring:
    """The whole scoring of a Workbench: interlocks, sets, each tile's verdict, the ranking."""

    interlocks: tuple[tuple[Square, Square], ...]
    sets: tuple[tuple[Square, ...], ...]
    verdicts: tuple[Verdict, ...]
    lines: tuple[ScoreLine, ...]  # best first
    damage: int
    requirement: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "damage": self.damage,
            "requirement": self.requirement,
            "interlocks": [[list(a), list(b)] for a, b in self.interlocks],
            "sets": [[list(s) for s in group] for group in self.sets],
            "tiles": [v.to_json() for v in self.verdicts],
            "ranking": [line.to_json() for line in self.lines],
        }


def score_workbench(
    workbench: Workbench, builders: Sequence[str | None], damage: int, requirement: int | None
) -> Scoring:
    """Score a Workbench whose row *k* + 1 belongs to ``builders[k]`` (ruling 2): each tile
    tested (18), base scores (19), bonuses (20), totals and ranks, equal totals sharing (21)."""
    verdicts = burn_outs(workbench)
    lines: list[ScoreLine] = []
    for seat, builder in enumerate(builders):
        if builder is None:
            continue
        row = seat + 1
        kept = [v for v in verdicts if v.square[0] == row and not v.burnt]
        b = bonus(builder, row, verdicts, damage, requirement)
        base = sum(v.value for v in kept)
        survivors = tuple(f"{square_text(v.square)} ({v.value})" for v in kept)
        lines.append(ScoreLine(seat, builder, row, base, survivors, b.points, b.reason, base + b.points))
    lines.sort(key=lambda line: (-line.total, line.seat))
    ranked = tuple(
        ScoreLine(
            **{
                **{f: getattr(line, f) for f in ScoreLine.__dataclass_fields__},
                "rank": 1 + sum(other.total > line.total for other in lines),
                "won": line.total == lines[0].total,
            }
        )
        for line in lines
    )
    return Scoring(
        interlocks=tuple(interlocks(workbench)),
        sets=tuple(interlocked_sets(workbench)),
        verdicts=tuple(verdicts),
        lines=ranked,
        damage=damage,
        requirement=requirement,
    )


def report(scoring: Scoring) -> str:
    """The whole scoring as plain text: the end, the interlocked sets, every tile's verdict with
    its reason, then the ranking with each bonus explained (the CLI's ``score``)."""
    d = scoring.damage
    end = (
        f"repaired (damage {d})"
        if d <= REPAIRED_AT
        else f"destroyed (damage {d})"
        if d >= DESTROYED_AT
        else f"not switched on yet (damage {d})"
    )
    need = "not revealed" if scoring.requirement is None else f"requires {scoring.requirement}"
    out = [f"Contrivance: {end}; {need}"]
    out.append("interlocked sets: " + ("; ".join(set_text(s) for s in scoring.sets) or "none"))
    out += [f"  {v.reason}" for v in scoring.verdicts]
    out.append(f"{'rank':<5}{'seat':<6}{'builder':<12}{'row':>4}{'base':>6}{'bonus':>7}{'total':>7}")
    for line in scoring.lines:
        won = "  wins" + (" (shared)" if sum(x.won for x in scoring.lines) > 1 else "") if line.won else ""
        out.append(
            f"{line.rank:<5}{line.seat:<6}{line.builder:<12}{line.row:>4}{line.base:>6}"
            f"{line.bonus:>7}{line.total:>7}{won}"
        )
        kept = " + ".join(line.survivors) or "no surviving tile"
        out.append(f"     base: {kept} = {line.base}")
        out.append(f"     bonus: {line.bonus_reason}")
    return "\n".join(out) + "\n"


def score(state: State) -> Scoring:
    """The scoring of a table as it stands (final once the game is over)."""
    return score_workbench(state.workbench, state.builders, state.damage, state.requirement)


def returns(state: State) -> list[float]:
    """OpenSpiel-style returns: 1 for every winner (equal totals share the win, ruling 21), 0 for
    the others; all 0 until the game is over."""
    if not state.game_over:
        return [0.0] * state.num_players
    won = {line.seat for line in score(state).lines if line.won}
    return [1.0 if seat in won else 0.0 for seat in range(state.num_players)]
