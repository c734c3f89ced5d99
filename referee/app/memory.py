"""What the referee knows about the cards, handed to vision (issue 14: identification that
survives a phone photo).

The tracker's accepted state says where every card is; vision must not import the tracker, so
the application turns the state into plain data (:class:`vision.identify.CardMemory`): each
seat's cards, the Display's, and the cards still unseen (the decks and a Research hand). The
live loop hands it to the pipeline before each observation (``LiveReferee._observe``).
"""

from __future__ import annotations

from referee.gizmos import State
from vision.identify import CardMemory


def card_memory(state: State) -> CardMemory:
    """The referee's memory of the cards in ``state``, as vision's identification takes it."""
    unseen = {c for segments in state.decks for candidates, _ in segments for c in candidates}
    if state.pending is not None:
        unseen |= set(state.pending.hand)
    return CardMemory(
        gizmos={seat: frozenset(p.gizmos) for seat, p in enumerate(state.players)},
        archive={seat: frozenset(p.archive) for seat, p in enumerate(state.players)},
        display={
            (level + 1, slot): card
            for level, row in enumerate(state.display)
            for slot, card in enumerate(row)
            if card is not None
        },
        unseen=frozenset(unseen),
    )
