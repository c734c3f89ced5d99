"""Property tests over random legal play (hypothesis drives every choice, chance included).

The games are played in observed mode: chance outcomes are chosen from ``legal_steps`` like any
other step, so the same checks cover what the referee does with camera input. At every state:
52 marbles and 112 cards accounted for, limits kept, the JSON form round-trips exactly, the
legal steps are distinct and lead to distinct tables, ``apply`` accepts each of them and rejects
every plausible step that is not among them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.gizmos import (
    GizmosError,
    State,
    Step,
    apply,
    check_invariants,
    default_cards,
    legal_steps,
    new_game,
    state_from_json,
)
from referee.gizmos.state import MARBLES_PER_COLOR, Counts, card_locations, profile_of
from referee.simulation.play import MAX_STEPS
from tests.tables import table

CARDS = default_cards()
PLAY = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_table(players: int, rnd: random.Random) -> State:
    """A consistent mid-game table: each seat already owns random gizmos (Level III ones with
    granted actions and converters included, which random play from the start rarely builds),
    with marbles and filed cards within its limits."""
    pool = list(range(4, 112))
    rnd.shuffle(pool)
    row: Counts = (2, 2, 1, 1)
    left = [MARBLES_PER_COLOR - n for n in row]
    gizmos: dict[int, list[int]] = {}
    archives: dict[int, list[int]] = {}
    rings: dict[int, Counts] = {}
    level3 = 0
    for seat in range(players):
        owned = []
        for _ in range(rnd.randint(0, 9)):
            card = pool.pop()
            if CARDS[card].level == 3 and (level3 >= 12 or sum(CARDS[c].level == 3 for c in owned) >= 3):
                pool.insert(0, card)
                continue
            level3 += CARDS[card].level == 3
            owned.append(card)
        gizmos[seat] = owned
        prof = profile_of((seat, *owned))
        archives[seat] = [pool.pop() for _ in range(rnd.randint(0, prof.file_limit))]
        level3 += sum(CARDS[c].level == 3 for c in archives[seat])
        ring = [0, 0, 0, 0]
        for _ in range(rnd.randint(0, prof.energy_limit)):
            c = rnd.randrange(4)
            if left[c]:
                ring[c] += 1
                left[c] -= 1
        rings[seat] = (ring[0], ring[1], ring[2], ring[3])
    return table(players=players, gizmos=gizmos, archives=archives, rings=rings, row=row)


def random_play(
    players: int, rnd: random.Random, start: State | None = None
) -> Iterator[tuple[State, list[Step]]]:
    """Yield every state of one game (with its legal steps) until the game ends."""
    state = new_game(players) if start is None else start
    for _ in range(MAX_STEPS):
        steps = legal_steps(state)
        yield state, steps
        if state.game_over:
            return
        state = apply(state, rnd.choice(steps))
    raise AssertionError(f"no end after {MAX_STEPS} steps")


def _accounted(state: State) -> None:
    for c in range(4):
        total = state.dispenser[c] + state.row[c] + sum(p.ring[c] for p in state.players)
        assert total == MARBLES_PER_COLOR
    assert sum(state.dispenser) + sum(state.row) + sum(sum(p.ring) for p in state.players) == 52
    assert sorted(card_locations(state)) == list(range(112))  # raises if a card is in two places


def _within_limits(state: State) -> None:
    for p in state.players:
        prof = p.profile
        assert sum(p.ring) <= prof.energy_limit
        assert len(p.archive) <= prof.file_limit
    assert sum(state.row) <= 6
    assert [len(r) for r in state.display] == [4, 3, 2]


def _round_trip(state: State) -> None:
    text = state.dumps()
    again = state_from_json(json.loads(text))
    assert again == state
    assert again.dumps() == text


def _mutations(state: State, legal: list[Step]) -> set[Step]:
    """Plausible steps: every kind for every seat on the cards in sight, and legal builds with
    one marble more or less of a color, or one converter more or less."""
    n = state.num_players
    pend = state.pending
    cards = {c for row in state.display for c in row if c is not None}
    for p in state.players:
        cards |= set(p.archive) | set(p.gizmos[-2:])
    if pend is not None:
        cards |= set(pend.hand)
    cards |= {4, 40, 76, 111}
    out: set[Step] = set()
    for seat in {state.current, (state.current + 1) % n}:
        out |= {Step("pick", seat, color=c) for c in range(4)}
        out |= {Step("research", seat, level=lvl) for lvl in (1, 2, 3)}
        out |= {Step("use", seat, gizmo=g) for g in state.players[seat].gizmos}
        out |= {Step("skip", seat), Step("end_turn", seat)}
        for c in cards:
            out |= {Step("file", seat, card=c), Step("bottom", seat, card=c)}
            card = CARDS[c]
            pay = [0, 0, 0, 0]
            if card.color_index >= 0:
                pay[card.color_index] = card.cost
            out.add(Step("build", seat, card=c, pay=(pay[0], pay[1], pay[2], pay[3]), converters=()))
            out.add(Step("build", seat, card=c, pay=(0, 0, 0, 0), converters=()))
    out |= {Step("reveal", card=c) for c in cards}
    out |= {Step("dispense", color=c) for c in range(4)}
    if state.chance and state.chance[0][0] in ("display", "research"):
        cands = state.decks[state.chance[0][1] - 1][0][0]
        out |= {Step("reveal", card=c) for c in cands[:3]}
    for s in legal:
        if s.kind != "build" or s.pay is None or s.player is None:
            continue
        own = [c.id for c in state.players[s.player].profile.converters]
        for i in range(4):
            for d in (-1, 1):
                pay = list(s.pay)
                pay[i] += d
                if pay[i] >= 0:
                    out.add(Step("build", s.player, card=s.card, pay=tuple(pay), converters=s.converters))  # type: ignore[arg-type]
        for g in own:
            conv = tuple(sorted(set(s.converters) ^ {g}))
            out.add(Step("build", s.player, card=s.card, pay=s.pay, converters=conv))
    return out


def _apply_accepts_exactly_legal(state: State, legal: list[Step]) -> None:
    offered = set(legal)
    assert len(offered) == len(legal), "a step is listed twice"
    results = [apply(state, s) for s in legal]  # every offered step is accepted
    assert len(set(results)) == len(results), "two legal steps lead to the same table"
    for s in _mutations(state, legal) - offered:
        try:
            apply(state, s)
        except GizmosError:
            continue
        raise AssertionError(f"apply accepted {s.to_json()}, which legal_steps does not offer")


@PLAY
@given(players=st.sampled_from([2, 3, 4]), mid_game=st.booleans(), rnd=st.randoms(use_true_random=False))
def test_random_play_keeps_every_invariant(players: int, mid_game: bool, rnd: random.Random) -> None:
    start = random_table(players, rnd) if mid_game else None
    states = 0
    for state, _ in random_play(players, rnd, start):
        check_invariants(state)  # strict: limits and the 16 Level III cards too
        _accounted(state)
        _within_limits(state)
        _round_trip(state)
        states += 1
    assert state.game_over and states > 1


@PLAY
@given(players=st.sampled_from([2, 3, 4]), mid_game=st.booleans(), rnd=st.randoms(use_true_random=False))
def test_apply_accepts_exactly_what_legal_steps_offers(
    players: int, mid_game: bool, rnd: random.Random
) -> None:
    start = random_table(players, rnd) if mid_game else None
    for i, (state, legal) in enumerate(random_play(players, rnd, start)):
        if state.game_over:
            assert legal == []
        elif i % 3 == 0 or state.pending is not None or state.chance:
            _apply_accepts_exactly_legal(state, legal)


@PLAY
@given(players=st.sampled_from([2, 3, 4]), rnd=st.randoms(use_true_random=False))
def test_games_terminate_and_end_after_the_round(players: int, rnd: random.Random) -> None:
    *_, (final, _) = random_play(players, rnd)
    assert final.game_over and final.end_triggered
    assert final.turn % players == 0 and final.current == players - 1  # everyone had as many turns
    assert any(p.profile.count >= 16 or p.profile.level3 >= 4 for p in final.players)


def test_mid_game_tables_reach_every_granted_action() -> None:
    """The mid-game tables make random play use every reward (chain reactions included), so the
    properties above are checked where granted File, Research and free Builds are pending."""
    rewards: set[str] = set()
    pending: set[str] = set()
    rnd = random.Random(5)
    for game in range(60):
        players = 2 + game % 3
        for state, legal in random_play(players, rnd, random_table(players, rnd)):
            if state.pending is not None:
                pending.add(state.pending.kind)
            rewards |= {
                CARDS[s.gizmo].effect.reward for s in legal if s.kind == "use" and s.gizmo is not None
            }
    assert rewards == {"draw_random", "pick_row", "vp_tokens", "file_action", "research_action", "build_free"}
    assert pending == {"picks", "file", "research_offer", "free_build", "research"}
