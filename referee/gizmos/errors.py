"""One exception type per kind of failure, and one stable code per rule.

:class:`IllegalStep` is what :func:`referee.gizmos.rules.apply` raises when a well-formed step
breaks a rule; its ``code`` is stable (the referee, the dashboard and the docs key on it) and
``ruling`` names the numbered ruling in RULINGS.md that the rule comes from.
"""

from __future__ import annotations

from referee.errors import EngineError, IllegalStepBase, Rule


class GizmosError(EngineError):
    """Base of every error the Gizmos engine raises."""


class InvalidStep(GizmosError, ValueError):
    """A step that is malformed (unknown kind, missing field, unknown card id, bad color)."""


class StateError(GizmosError, ValueError):
    """A state file that is malformed or describes an impossible table."""


#: Every rule code, the ruling(s) it enforces, and what it means. docs/rules.md lists these.
RULES: dict[str, Rule] = {
    r.code: r
    for r in (
        Rule("GAME_OVER", (24,), "The game has ended; no more steps are taken."),
        Rule("NOT_YOUR_TURN", (7,), "Only the player whose turn it is may act."),
        Rule("SECOND_MAIN_ACTION", (7,), "One main action per turn: File, Pick, Build or Research."),
        Rule("NO_MAIN_ACTION", (7,), "A turn needs its main action before gizmos are used or it ends."),
        Rule("CHOICE_PENDING", (11, 16), "A choice is still owed (Research hand, picks, a granted action)."),
        Rule("OUT_OF_SEQUENCE", (7, 11), "This kind of step does not fit the current moment of the turn."),
        Rule("CARD_NOT_AVAILABLE", (8, 10, 11), "The card is not where this step takes it from."),
        Rule("ARCHIVE_FULL", (8, 11, 12), "The Archive is at its File limit."),
        Rule("RING_FULL", (9, 12), "The ring is at its Energy storage limit; extras are lost."),
        Rule("COLOR_NOT_IN_ROW", (9,), "There is no marble of that colour in the Energy Row."),
        Rule("NOTHING_TO_TAKE", (9, 12, 17), "The Row, dispenser, Display or deck has nothing to take."),
        Rule("DECK_EMPTY", (11,), "Research needs a level deck with cards in it."),
        Rule("NOT_AFFORDABLE", (10,), "The ring does not hold the energy this Build needs."),
        Rule("UNDERPAID", (10, 21, 22), "The marbles paid fall short of the cost."),
        Rule(
            "BAD_PAYMENT", (10, 19, 20, 21, 22), "The payment does not match the cost, colour or converters."
        ),
        Rule("GIZMO_ALREADY_USED", (14, 19), "Each gizmo is used at most once per turn."),
        Rule("NOT_TRIGGERED", (13, 15, 18), "The gizmo was not triggered by an action this turn."),
        Rule("ACTION_FORBIDDEN", (23,), "An upgrade forbids this action for the rest of the game."),
        Rule("NOT_LEVEL_ONE", (17,), "A free Build takes a Level I gizmo only."),
        Rule("IMPOSSIBLE_OUTCOME", (3, 4, 11, 12), "A random outcome that cannot happen from what remains."),
    )
}


class IllegalStep(IllegalStepBase, GizmosError):
    """A well-formed step that breaks one of :data:`RULES` (see :class:`referee.errors.IllegalStepBase`)."""

    RULES = RULES
