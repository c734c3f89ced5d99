"""Warnings the referee raises: who, which rule (ruling number and code), what, how to fix it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from referee.gizmos import IllegalStep, State, Step, default_cards
from referee.gizmos.cards import COLORS
from referee.gizmos.errors import RULES

CARDS = default_cards()

KINDS = ("violation", "uncertain", "info")
STATUSES = ("open", "accepted", "dismissed")


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
    def from_json(cls, raw: dict[str, Any]) -> RefereeWarning:
        return cls(**{**raw, "rulings": tuple(raw.get("rulings", ()))})

    def with_status(self, status: str, who: str) -> RefereeWarning:
        if status not in STATUSES:
            raise ValueError(f"warning status: expected one of {STATUSES}, got {status!r}")
        return RefereeWarning(**{**asdict(self), "status": status, "decided_by": who})


def _marbles(pay: tuple[int, ...]) -> str:
    parts = [f"{n} {COLORS[i]}" for i, n in enumerate(pay) if n]
    return ", ".join(parts) if parts else "nothing"


def what_happened(step: Step, name: str) -> str:
    """The step in the past tense, for a warning."""
    k = step.kind
    if k == "pick":
        return f"{name} took a {COLORS[step.color or 0]} marble from the Energy Row"
    if k == "file":
        return f"{name} filed #{step.card}"
    if k == "build":
        return f"{name} built #{step.card} paying {_marbles(step.pay or (0, 0, 0, 0))}"
    if k == "research":
        return f"{name} researched the Level {step.level} deck"
    if k == "use":
        return f"{name} used #{step.gizmo}"
    if k == "end_turn":
        return f"{name} ended the turn"
    return f"{name} played '{k}'"


def remedy(step: Step, err: IllegalStep, before: State) -> str:
    """What would make it right, in one sentence."""
    code = err.code
    k = step.kind
    seat = step.player if step.player is not None else before.current
    p = before.players[seat]
    if k == "pick":
        return f"put the {COLORS[step.color or 0]} marble back in the Energy Row"
    if k == "file":
        return f"put #{step.card} back where it came from"
    if k == "build" and code in ("UNDERPAID", "NOT_AFFORDABLE", "BAD_PAYMENT"):
        card = CARDS[step.card or 0]
        colour = "any colours" if card.color == "any" else card.color
        return f"pay #{step.card}'s cost ({card.cost} {colour}, less discounts) or return the card"
    if k == "build":
        return f"return #{step.card} and take back the marbles paid"
    if k == "use" and code in ("GIZMO_ALREADY_USED", "NOT_TRIGGERED"):
        effect = CARDS[step.gizmo or 0].effect
        if effect.reward == "vp_tokens":
            return f"give back the {effect.count}-point VP token"
        return f"undo what #{step.gizmo} gave"
    if k == "end_turn":
        return "take a main action (File, Pick, Build or Research) first"
    if code == "RING_FULL":
        return f"put marbles back until the ring holds {p.profile.energy_limit}"
    return "undo that step"


def describe_violation(step: Step, err: IllegalStep, before: State, name: str) -> tuple[str, str]:
    """The warning's message and remedy, e.g. "Ana took a second marble...: put one back"."""
    rule = RULES[err.code]
    rulings = ", ".join(str(r) for r in rule.rulings)
    message = f"{what_happened(step, name)}: {err.message} (ruling {rulings}, {err.code})"
    return message, remedy(step, err, before)
