"""Scoring and ranking (rulings 25-26)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from referee.gizmos.cards import default_cards
from referee.gizmos.state import State

TIE_BREAKS = ("total", "gizmos", "energy", "seat")


@dataclass(frozen=True, slots=True)
class ScoreLine:
    """One player's score, broken down as the scoring screen shows it."""

    seat: int
    printed_vp: int
    token_points: int
    end_cards: int
    total: int
    gizmos: int
    energy: int
    rank: int = 0
    decided_by: str = ""  # which comparison separated this player from the next one down

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def score_player(state: State, seat: int) -> ScoreLine:
    """Printed VP + VP-token points + end-of-game cards (1 VP per energy, or VP = token points)."""
    cards = default_cards()
    p = state.players[seat]
    printed = sum(cards[g].vp for g in p.gizmos)
    energy = sum(p.ring)
    end_cards = 0
    for g in p.gizmos:
        e = cards[g].effect
        if e.kind == "end_vp":
            end_cards += energy if e.per == "energy_in_ring" else p.vp_tokens
    return ScoreLine(
        seat=seat,
        printed_vp=printed,
        token_points=p.vp_tokens,
        end_cards=end_cards,
        total=printed + p.vp_tokens + end_cards,
        gizmos=len(p.gizmos),
        energy=energy,
    )


def _key(line: ScoreLine) -> tuple[int, int, int, int]:
    # Ties: most gizmos, then most energy left, then latest in turn order (ruling 26).
    return (line.total, line.gizmos, line.energy, line.seat)


def ranking(state: State) -> list[ScoreLine]:
    """Players best first, each with its rank and the tie-break that placed it above the next."""
    lines = sorted((score_player(state, s) for s in range(state.num_players)), key=_key, reverse=True)
    out: list[ScoreLine] = []
    for i, line in enumerate(lines):
        decided = ""
        if i + 1 < len(lines):
            a, b = _key(line), _key(lines[i + 1])
            decided = next(name for name, x, y in zip(TIE_BREAKS, a, b, strict=True) if x != y)
        out.append(ScoreLine(**{**asdict(line), "rank": i + 1, "decided_by": decided}))
    return out


def returns(state: State) -> list[float]:
    """OpenSpiel-style returns: 1 for the winner, 0 for the others (only meaningful when over)."""
    if not state.game_over:
        return [0.0] * state.num_players
    winner = ranking(state)[0].seat
    return [1.0 if s == winner else 0.0 for s in range(state.num_players)]


def report(state: State) -> str:
    """The ranking as a plain-text table, one line per player (the CLI's ``score``)."""
    lines = [
        f"{'rank':<5}{'seat':<6}{'printed':>8}{'tokens':>8}{'end':>5}{'total':>7}{'gizmos':>8}{'energy':>8}"
        "  tie-break"
    ]
    for r in ranking(state):
        lines.append(
            f"{r.rank:<5}{r.seat:<6}{r.printed_vp:>8}{r.token_points:>8}{r.end_cards:>5}"
            f"{r.total:>7}{r.gizmos:>8}{r.energy:>8}  {r.decided_by or '-'}"
        )
    return "\n".join(lines) + "\n"
