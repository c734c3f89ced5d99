"""What the page shows, as JSON: the table, the players, the scores, the warnings, the steps.

Everything is derived from the tracker's state when a change is published (under the game's
lock), so the page, the API and the event stream all show the same moment of the game.
"""

from __future__ import annotations

from typing import Any, Protocol

from referee.gizmos import (
    COLORS,
    RULES,
    State,
    Step,
    apply,
    chance_outcomes,
    default_cards,
    describe,
    legal_steps,
    marbles,
)
from referee.gizmos.cards import COLUMNS, ENERGY_NAMES
from referee.gizmos.rules import event_text as chance_text  # the engine's words for a random event
from referee.gizmos.scoring import ScoreLine, ranking
from referee.tracker.turns import turn_over
from referee.tracker.verdicts import RefereeWarning
from web.cardtext import card_gist, card_name, card_title

CARDS = default_cards()
ROMAN = {1: "I", 2: "II", 3: "III"}
STEP_GROUPS = {
    "file": "File",
    "pick": "Pick",
    "build": "Build",
    "research": "Research",
    "use": "Use a triggered gizmo",
    "skip": "Decline",
    "bottom": "Put a card under the deck",
    "end_turn": "End the turn",
    "reveal": "Which card came up?",
    "dispense": "Which marble came out?",
}


def counts(c: tuple[int, ...]) -> dict[str, int]:
    """Marbles by color name."""
    return {COLORS[i]: n for i, n in enumerate(c)}


def card_json(card_id: int) -> dict[str, Any]:
    """One card's printed facts and its effect in words (the enlarged card shows them)."""
    c = CARDS[card_id]
    return {
        "id": c.id,
        "name": card_name(c),
        "gist": card_gist(c),
        "level": c.level,
        "type": c.type,
        "color": c.color,
        "cost": c.cost,
        "vp": c.vp,
        "text": c.text,
        "end_of_game": c.effect.kind == "end_vp",
    }


def awaiting(state: State, names: list[str], ended_by: str | None, over: bool) -> str:
    """One line: what happens next (``over``: :func:`referee.tracker.turns.turn_over` of ``state``)."""
    if state.game_over:
        return f"The game was ended by {ended_by}." if ended_by else "The game is over."
    if state.chance:
        return "Waiting for " + chance_text(state.chance[0]) + "."
    name = names[state.current]
    p = state.pending
    if p is not None:
        owed = {
            "picks": f"pick up to {p.count} marble(s) from the Row, or decline",
            "file": "File a card (granted by a gizmo), or decline",
            "research_offer": "Research (granted by a gizmo), or decline",
            "free_build": f"build a Level {ROMAN.get(p.level, p.level)} gizmo for free, or decline",
            "research": "put the other Research cards under the deck"
            if p.chosen
            else "File or Build one of the Research cards, or keep none",
        }
        return f"{name} must {owed[p.kind]}."
    if over:  # shown at once, before anyone signals it or the next player moves
        last = state.end_triggered and state.current == state.num_players - 1
        then = "the game ends with it" if last else f"{names[(state.current + 1) % len(names)]} plays next"
        return f"{name} has nothing left to do: the turn is over, {then}."
    if state.main_done:
        return f"{name} may use triggered gizmos, then end the turn."
    return f"{name}'s turn: File, Pick, Build or Research."


def step_label(step: Step) -> str:
    """A button's few words, naming the card and what it does; the group's title says what
    kind of step it is."""
    k = step.kind
    if k in ("pick", "dispense"):
        return COLORS[step.color or 0]
    if k in ("file", "reveal", "bottom"):
        return card_title(CARDS[step.card or 0])
    if k == "build":
        pay = step.pay or (0, 0, 0, 0)
        paid = marbles(pay, empty="free")
        label = f"{card_title(CARDS[step.card or 0])}: pay {paid}"
        if step.converters:
            label += " with " + ", ".join(card_title(CARDS[c]) for c in step.converters)
        return label
    if k == "research":
        return f"Level {ROMAN[step.level or 1]}"
    if k == "use":
        return card_title(CARDS[step.gizmo or 0])
    return STEP_GROUPS[k]


def then_drawn(state: State, step: Step) -> list[dict[str, Any]] | None:
    """For a step whose very next event is a random marble drawn from the dispenser (using a
    "File: draw 1" gizmo, say): the colors it can be, so the page can take the step and the
    marble's color in one tap. None for any other step."""
    if step.kind != "use":
        return None
    after = apply(state, step)
    if not after.chance or after.chance[0][0] != "draw":
        return None
    return [s.to_json() for s, _ in chance_outcomes(after)]


def then_use(state: State, step: Step) -> dict[str, Any] | None:
    """For a File out of a Research hand that triggers a File gizmo drawing a marble: the steps
    that follow when the player goes on at once (the other cards under the deck in the order
    drawn, as the page does by itself, then that gizmo used) and the draw's outcomes, so the
    page can File, use the gizmo and say the color drawn in one tap. None otherwise (no such
    gizmo, or more than one to choose between)."""
    pending = state.pending
    if step.kind != "file" or pending is None or pending.kind != "research" or pending.chosen:
        return None
    after = apply(state, step)
    chain: list[Step] = []
    while after.pending is not None and after.pending.kind == "research" and after.pending.chosen:
        bottoms = {s.card: s for s in legal_steps(after) if s.kind == "bottom"}
        first = next((bottoms[c] for c in after.pending.hand if c in bottoms), None)
        if first is None:
            return None
        chain.append(first)
        after = apply(after, first)
    if after.chance:
        return None
    uses = [(s, then) for s in legal_steps(after) if s.kind == "use" and (then := then_drawn(after, s))]
    if len(uses) != 1:
        return None
    use, then = uses[0]
    return {"steps": [s.to_json() for s in (*chain, use)], "then": then}


def step_groups(state: State, steps: list[Step], names: list[str]) -> list[dict[str, Any]]:
    """The legal steps by kind, each with a short label and its full sentence, in the engine's
    order; a step followed at once by a marble drawn also lists the draw's outcomes (``then``),
    and a File out of a Research hand the steps to its File gizmo's draw (``then_use``)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for s in steps:
        name = names[s.player] if s.player is not None else None
        item: dict[str, Any] = {"step": s.to_json(), "label": step_label(s), "text": describe(s, name)}
        then = then_drawn(state, s)
        if then:
            item["then"] = then
        chain = then_use(state, s)
        if chain:
            item["then_use"] = chain
        groups.setdefault(s.kind, []).append(item)
    out = []
    for kind, items in groups.items():
        title = STEP_GROUPS[kind]
        if kind in ("reveal", "dispense") and state.chance:
            title += " (" + chance_text(state.chance[0]) + ")"
        out.append({"kind": kind, "title": title, "steps": items})
    return out


def player_json(state: State, seat: int, name: str, line: ScoreLine) -> dict[str, Any]:
    p = state.players[seat]
    prof = p.profile
    cols = p.columns()
    return {
        "seat": seat,
        "name": name,
        "current": seat == state.current and not state.game_over,
        "ring": counts(p.ring),
        "ring_total": sum(p.ring),
        "energy_limit": prof.energy_limit,
        "archive": list(p.archive),
        "file_limit": prof.file_limit,
        "research": prof.research,
        "forbid_file": prof.forbid_file,
        "forbid_research": prof.forbid_research,
        "columns": {c: cols.get(c, []) for c in COLUMNS if c != "research" or cols.get(c)},
        "gizmos": len(p.gizmos),
        "vp_tokens": p.vp_tokens,
        "score": {
            "printed_vp": line.printed_vp,
            "token_points": line.token_points,
            "end_cards": line.end_cards,
            "total": line.total,
        },
    }


def tie_break(line: ScoreLine, below: ScoreLine | None, names: list[str]) -> str:
    """Why ``line`` ranks above the next player down, in words (ruling 26)."""
    if below is None:
        return ""
    other = names[below.seat]
    if line.decided_by == "total":
        return f"{line.total - below.total} VP ahead of {other}"
    if line.decided_by == "gizmos":
        return f"tied with {other} on {line.total} VP; more gizmos ({line.gizmos} vs {below.gizmos})"
    if line.decided_by == "energy":
        return (
            f"tied with {other} on {line.total} VP and {line.gizmos} gizmos; "
            f"more energy left ({line.energy} vs {below.energy})"
        )
    return f"tied with {other} on VP, gizmos and energy; later in turn order (ruling 26)"


def scoring(state: State, names: list[str]) -> dict[str, Any]:
    """The scoring table: printed VP, VP tokens, end-of-game cards, total, tie-breaks, winner."""
    lines = ranking(state)
    rows = []
    for i, line in enumerate(lines):
        below = lines[i + 1] if i + 1 < len(lines) else None
        end_ids = [g for g in state.players[line.seat].gizmos if CARDS[g].effect.kind == "end_vp"]
        rows.append(
            {
                **line.to_json(),
                "name": names[line.seat],
                "end_card_ids": end_ids,
                "tie_break": tie_break(line, below, names),
            }
        )
    best = lines[0]
    return {
        "final": state.game_over,
        "winner": {"seat": best.seat, "name": names[best.seat], "total": best.total},
        "lines": rows,
    }


def warning_json(w: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """A warning with the player's name and the rule in a plain sentence."""
    code = w.get("code")
    rule = RULES.get(code) if code else None
    seat = w.get("player")
    return {
        **w,
        "name": names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else None,
        "rule": rule.summary if rule is not None else None,
    }


class TableSource(Protocol):
    """What :func:`table_view` reads: a live :class:`referee.tracker.Tracker`, or a moment of a
    replay (:mod:`web.history`)."""

    state: State
    names: list[str]
    ended_by: str | None
    warnings: list[RefereeWarning]

    def legal_steps(self) -> list[Step]: ...


def table_view(tracker: TableSource) -> dict[str, Any]:
    """Everything the table page shows except the move log (see :mod:`web.narrate`)."""
    state, names = tracker.state, tracker.names
    by_seat = {line.seat: line for line in ranking(state)}
    over = turn_over(state)  # the awaiting line and the flag: the legal steps listed once
    return {
        "names": names,
        "turn": state.turn,
        "round": state.round,
        "current": state.current,
        "current_name": names[state.current],
        "end_triggered": state.end_triggered,
        "game_over": state.game_over,
        "ended_by": tracker.ended_by,
        "awaiting": awaiting(state, names, tracker.ended_by, over),
        "turn_over": over,
        "display": {str(lvl + 1): list(slots) for lvl, slots in enumerate(state.display)},
        "decks": {str(lvl + 1): sum(n for _, n in segs) for lvl, segs in enumerate(state.decks)},
        "row": counts(state.row),
        "dispenser": counts(state.dispenser),
        "energy_names": ENERGY_NAMES,
        "pending": None
        if state.pending is None
        else {"kind": state.pending.kind, "hand": list(state.pending.hand)},
        "players": [player_json(state, s, names[s], by_seat[s]) for s in range(state.num_players)],
        "scoring": scoring(state, names),
        "warnings": [warning_json(w.to_json(), names) for w in tracker.warnings],
        "legal": step_groups(state, tracker.legal_steps(), names),
    }
