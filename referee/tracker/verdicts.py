"""Warnings the referee raises: who, which rule (ruling number and code), what, how to fix it."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from referee.gizmos import IllegalStep, State, Step, apply, default_cards, describe, force
from referee.gizmos.cards import COLORS
from referee.gizmos.errors import RULES
from referee.tracker.explain import Explanation, fold_research, visible_cards
from referee.tracker.view import TableView

CARDS = default_cards()

KINDS = ("violation", "uncertain", "info")
STATUSES = ("open", "accepted", "dismissed")

#: Broken rules that finishing the turn cannot mend: warned mid-turn once the view persists.
#: Others (a Build still being paid, a VP token taken before the action that earns it) wait for
#: the end of the turn, and so does a move out of turn: with no signal, the turn before may have
#: left no trace (a Research declined), and only what follows tells.
CERTAIN_MID_TURN = frozenset(
    {
        "RING_FULL",
        "ARCHIVE_FULL",
        "SECOND_MAIN_ACTION",
        "GAME_OVER",
        "ACTION_FORBIDDEN",
        "CARD_NOT_AVAILABLE",
        "GIZMO_ALREADY_USED",
    }
)


@dataclass(frozen=True, slots=True)
class RefereeWarning:
    """One entry of the warning feed.

    ``kind`` is ``violation`` (a rule was certainly broken), ``uncertain`` (what is seen cannot be
    explained, or the camera and the sensors disagree: a person should confirm), or ``info``.
    """

    id: int
    kind: str
    turn: int
    round: int
    player: int | None
    code: str | None
    rulings: tuple[int, ...]
    message: str
    remedy: str
    time: float
    status: str = "open"
    decided_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["rulings"] = list(self.rulings)
        return d

    @classmethod
    def from_json(cls, raw: Any) -> RefereeWarning:
        """Parse the JSON form (from a game record); raises ValueError naming what is wrong."""
        if not isinstance(raw, dict):
            raise ValueError("warning: expected a JSON object")
        names = {f.name for f in fields(cls)}
        missing = sorted(n for n in names - set(raw) if n not in ("status", "decided_by"))
        if missing:
            raise ValueError(f"warning: missing field {missing[0]!r}")
        extra = sorted(set(raw) - names)
        if extra:
            raise ValueError(f"warning: unknown field {extra[0]!r}")
        if raw["kind"] not in KINDS or raw.get("status", "open") not in STATUSES:
            raise ValueError(f"warning: unknown kind {raw['kind']!r} or status {raw.get('status')!r}")
        return cls(**{**raw, "rulings": tuple(raw.get("rulings", ()))})

    def with_status(self, status: str, who: str) -> RefereeWarning:
        if status not in STATUSES:
            raise ValueError(f"warning status: expected one of {STATUSES}, got {status!r}")
        return RefereeWarning(**{**asdict(self), "status": status, "decided_by": who})


def what_happened(step: Step, err: IllegalStep, before: State, name: str) -> str:
    """The step in the past tense (the engine's words, :func:`referee.gizmos.describe`), with
    what the broken rule makes matter."""
    k = step.kind
    code = err.code
    done = describe(step, name, past=True)
    if k == "pick" and code == "SECOND_MAIN_ACTION":
        color = COLORS[step.color or 0]
        return f"{name} took a second marble ({color}) from the Energy Row; only one Pick was available"
    if k == "pick" and code == "RING_FULL":
        return f"{done} into a full ring"
    if k in ("file", "build") and code == "SECOND_MAIN_ACTION":
        built = f"{name} built #{step.card}"  # what it cost does not matter here
        return f"{done if k == 'file' else built} after this turn's main action was already taken"
    if k == "use" and code == "GIZMO_ALREADY_USED":
        return f"{done} a second time this turn"
    return done


def remedy(step: Step, err: IllegalStep, before: State) -> str:
    """What would make it right, in one sentence."""
    code = err.code
    k = step.kind
    seat = step.player if step.player is not None else before.current
    p = before.players[seat]
    if code == "GAME_OVER":
        return "put it back: the game is over and the scores are final"
    if k == "pick":
        if code == "SECOND_MAIN_ACTION":
            return f"put one back (the {COLORS[step.color or 0]} marble) in the Energy Row"
        if code == "NOT_YOUR_TURN":
            return f"put the {COLORS[step.color or 0]} marble back in the Energy Row and wait for your turn"
        if code == "RING_FULL":
            return f"put a marble back: the ring holds at most {p.profile.energy_limit}"
        return f"put the {COLORS[step.color or 0]} marble back in the Energy Row"
    if k == "file":
        return f"put #{step.card} back where it came from"
    if k == "build" and code in ("UNDERPAID", "NOT_AFFORDABLE", "BAD_PAYMENT"):
        card = CARDS[step.card or 0]
        color = "energy of any colours" if card.color == "any" else card.color
        return f"pay #{step.card}'s full cost ({card.cost} {color}, less discounts) or return the card"
    if k == "build" and code == "GIZMO_ALREADY_USED":
        return f"pay #{step.card} without the converter already used this turn, or return the card"
    if k == "build":
        return f"return #{step.card} where it came from and take back the marbles paid"
    if k == "use":
        effect = CARDS[step.gizmo or 0].effect
        if effect.reward == "vp_tokens":
            return f"give back the {effect.count}-point VP token"
        if effect.reward in ("draw_random", "pick_row"):
            return "put the marble(s) taken back"
        return f"undo what #{step.gizmo} gave"
    if k == "end_turn":
        return "take a main action (File, Pick, Build or Research) first"
    return "undo that step"


def describe_violation(step: Step, err: IllegalStep, before: State, name: str) -> tuple[str, str]:
    """The warning's message and remedy, e.g. ("Ana took a second marble (red) from the Energy
    Row; only one Pick was available: you have already taken this turn's main action (ruling 7,
    SECOND_MAIN_ACTION)", "put one back (the red marble) in the Energy Row")."""
    rule = RULES[err.code]
    rulings = ", ".join(str(r) for r in rule.rulings)
    why = re.sub(r"\s*\(ruling[^)]*\)", "", err.message)  # the rulings are named once, at the end
    message = f"{what_happened(step, err, before, name)}: {why} (ruling {rulings}, {err.code})"
    return message, remedy(step, err, before)


def turns_before_break(state: State, found: Explanation) -> Explanation | None:
    """The part of a rule-breaking explanation from ``state`` up to its last end of turn before
    the first broken rule, or None when no turn ends before it (the verdict waits for the end of
    the turn; the turns before the break are over and can be accepted now)."""
    first = min(i for i, _ in found.violations)
    ends = [i for i, step in enumerate(found.steps[:first]) if step.kind == "end_turn"]
    if not ends:
        return None
    k = ends[-1] + 1
    folds = {i: (level, cards) for i, level, cards in found.folds if i < k}
    for i, step in enumerate(found.steps[:k]):
        state = force(state, step)[0] if found.forced[i] else apply(state, step)
        if i in folds:
            state = fold_research(state, *folds[i])
    return replace(
        found,
        steps=found.steps[:k],
        forced=found.forced[:k],
        violations=(),
        state=state,
        alternatives=1,
        folds=tuple(f for f in found.folds if f[0] < k),
    )


def cards_from_nowhere(state: State, view: TableView) -> str:
    """Cards seen in a player's area that no camera saw anywhere before ``state``, as text."""
    visible = visible_cards(state)
    held: set[int] = set()
    for sv in view.seats:
        held |= (sv.archive or frozenset()) | (sv.gizmos or frozenset())
    return ", ".join(f"#{c}" for c in sorted(held - visible))


def misread_cards(state: State, found: Explanation) -> list[int]:
    """Cards a rule-breaking step from ``state`` took from where no camera could have seen them."""
    out = []
    visible = visible_cards(state)
    for index, err in found.violations:
        step = found.steps[index]
        if err.code == "CARD_NOT_AVAILABLE" and step.card is not None and step.card not in visible:
            pend = state.pending
            if pend is None or step.card not in pend.hand:
                out.append(step.card)
    return out
