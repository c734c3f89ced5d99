"""One exception type per kind of failure, and one stable code per rule (as in Gizmos).

:class:`IllegalStep` is what :func:`referee.contrivance.rules.apply` raises when a well-formed
step breaks a rule; its ``code`` is stable and ``rulings`` names the numbered rulings of
CONTRIVANCE_RULINGS.md it enforces. docs/contrivance.md lists every code.
"""

from __future__ import annotations

from referee.errors import EngineError, IllegalStepBase, Rule


class ContrivanceError(EngineError):
    """Base of every error the Contrivance engine raises."""


class InvalidStep(ContrivanceError, ValueError):
    """A malformed step (unknown kind, missing or extra field, a square off the grid, a bad name)."""


class StateError(ContrivanceError, ValueError):
    """A state that is malformed or describes an impossible table."""


#: Every rule code, the ruling(s) it enforces, and what it means.
RULES: dict[str, Rule] = {
    r.code: r
    for r in (
        Rule("GAME_OVER", (17,), "The game has ended; no more steps are taken."),
        Rule("NOT_YOUR_TURN", (10, 11, 12), "Only the Builder whose turn it is may act."),
        Rule("OUT_OF_SEQUENCE", (9, 11, 13), "A random outcome is awaited first, or none is awaited now."),
        Rule(
            "OUT_OF_PHASE", (10, 12), "Tiles are placed in the building phase; Tool cards are used after it."
        ),
        Rule("SWITCH_ON_FIRST", (11, 12), "A Switch On card drawn is played at once, before anything else."),
        Rule("WRONG_SWITCH_ON_VALUE", (6, 11), "The Switch On card played is not the one drawn."),
        Rule("NO_SUCH_SQUARE", (1, 2, 14), "The square is not on an active row of the Workbench."),
        Rule("COLUMN_FIVE_IN_BUILDING", (10,), "Column 5 is not used in the building phase."),
        Rule("SQUARE_TAKEN", (10, 14), "A tile already occupies that square."),
        Rule("SQUARE_EMPTY", (14,), "There is no tile on that square to use the Tool on."),
        Rule("NOT_YOUR_TILE", (10,), "In the building phase a Builder places only their own tiles."),
        Rule("TILE_ALREADY_PLACED", (10,), "That tile is already on the Workbench."),
        Rule("NO_SUCH_CARD", (12, 14), "The card is not in the Builder's hand."),
        Rule("HAND_NOT_FULL", (12,), "A Tool card is played only with 4 cards in hand."),
        Rule("ORIENTATION_CHANGED", (14,), "Move and Swap Component keep each tile's orientation."),
        Rule("NOT_A_TURN", (14,), "Rotate turns the tile by 90, 180 or 270 degrees, not 0."),
        Rule("SAME_SQUARE", (14,), "A swap needs two different tiles."),
        Rule("NOT_IN_DISCARD", (14,), "Redraw a Tool takes a card that is in the discard pile."),
        Rule("NOT_RETRIEVABLE", (14,), "Redraw a Tool never takes a Switch On card."),
        Rule("OWN_HAND", (14,), "Take a Tool takes from another Builder's hand."),
        Rule("NOTHING_TO_TAKE", (14,), "The hand to take from is empty."),
        Rule(
            "IMPOSSIBLE_OUTCOME",
            (2, 5, 6, 7, 9, 13, 14),
            "A random outcome that cannot happen from what remains.",
        ),
    )
}


class IllegalStep(IllegalStepBase, ContrivanceError):
    """A well-formed step that breaks one of :data:`RULES` (see :class:`referee.errors.IllegalStepBase`)."""

    RULES = RULES
