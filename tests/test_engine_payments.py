"""Payments (rulings 10, 19-22) against a brute-force oracle written from the rulings alone.

The oracle tries every marble vector and every subset of converters and asks, marble by marble,
whether the converters can make it an exact payment. The engine's enumeration must give exactly
the same set, each payment once.
"""

from __future__ import annotations

from itertools import combinations, product

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.gizmos import default_cards
from referee.gizmos.payments import ANY_COLOR, Payment, payments
from referee.gizmos.state import Converter, Counts, profile_of

CARDS = default_cards()
CONVERTER_IDS = [c.id for c in CARDS if c.type == "converter"]


def _single_color_ok(spent: Counts, target: int, need: int, chosen: tuple[Converter, ...]) -> bool:
    doublers = [c for c in chosen if c.double]
    anys = [c for c in chosen if not c.double]
    marbles = [color for color in range(4) for _ in range(spent[color])]
    if any(target not in d.colors for d in doublers):
        return False  # a doubler of another color would be wasted
    if len(marbles) + len(doublers) != need or len(doublers) > len(marbles):
        return False  # each doubler doubles one marble (ruling 21)
    routes: list[list[int]] = []  # per marble: -1 plain, else the index of the converter used
    for color in marbles:
        opts = [-1] if color == target else []
        opts += [
            i for i, a in enumerate(anys) if color != target and (a.source == color or a.source == ANY_COLOR)
        ]
        routes.append(opts)
    for assignment in product(*routes):
        loads = [assignment.count(i) for i in range(len(anys))]
        if all(1 <= load <= a.uses for load, a in zip(loads, anys, strict=True)):
            return True
    return False


def _multicolor_ok(spent: Counts, need: int, chosen: tuple[Converter, ...]) -> bool:
    """Every marble counts once towards the 7; each chosen doubler doubles one marble of each of
    the colors it is used on, that marble being of the color or converted to it by a chosen
    converter of another color (ruling 21). A converter that feeds no doubler is wasted."""
    doublers = [c for c in chosen if c.double]
    anys = [c for c in chosen if not c.double]
    per_doubler = [
        [s for r in range(1, len(d.colors) + 1) for s in combinations(d.colors, r)] for d in doublers
    ]
    for picks in product(*per_doubler):
        doubled = [c for colors in picks for c in colors]
        if sum(spent) + len(doubled) != need:
            continue
        # Per doubled marble: the color it was taken from and the converter used (-1: none).
        routes = [
            [(c, -1)]
            + [(m, i) for i, a in enumerate(anys) for m in range(4) if m != c and a.source in (m, ANY_COLOR)]
            for c in doubled
        ]
        for route in product(*routes):
            taken = [0, 0, 0, 0]
            for m, _ in route:
                taken[m] += 1
            loads = [sum(1 for _, i in route if i == k) for k in range(len(anys))]
            if all(taken[c] <= spent[c] for c in range(4)) and all(
                1 <= load <= a.uses for load, a in zip(loads, anys, strict=True)
            ):
                return True
    return False


def oracle(ring: Counts, target: int, need: int, converters: tuple[Converter, ...]) -> set[Payment]:
    if need <= 0:
        return {((0, 0, 0, 0), ())}
    found: set[Payment] = set()
    for spent in product(*(range(n + 1) for n in ring)):
        if not 1 <= sum(spent) <= need:
            continue
        vec: Counts = (spent[0], spent[1], spent[2], spent[3])
        for r in range(len(converters) + 1):
            for chosen in combinations(converters, r):
                ok = (
                    _multicolor_ok(vec, need, chosen)
                    if target == ANY_COLOR
                    else _single_color_ok(vec, target, need, chosen)
                )
                if ok:
                    found.add((vec, tuple(sorted(c.id for c in chosen))))
    return found


rings = st.tuples(*(st.integers(0, 4) for _ in range(4)))


@settings(max_examples=400, deadline=None)
@given(
    ring=rings,
    target=st.sampled_from([ANY_COLOR, 0, 1, 2, 3]),
    need=st.integers(0, 7),
    ids=st.lists(st.sampled_from(CONVERTER_IDS), max_size=4, unique=True),
)
def test_payments_match_the_oracle(ring: Counts, target: int, need: int, ids: list[int]) -> None:
    converters = profile_of((0, *ids)).converters
    got = payments(ring, target, need, converters)
    assert len(got) == len(set(got)), "a payment is listed twice"
    assert list(got) == sorted(got)
    assert set(got) == oracle(ring, target, need, converters)


def test_the_yellow_red_double_chain_is_found() -> None:
    converters = profile_of((0, 10, 44)).converters  # #10 yellow -> any, #44 doubles red
    assert ((0, 0, 0, 1), (10, 44)) in payments((0, 0, 0, 1), 0, 2, converters)
    assert payments((0, 0, 0, 1), 0, 2, converters) == tuple(sorted(oracle((0, 0, 0, 1), 0, 2, converters)))


def test_many_converters_agree_with_the_oracle() -> None:
    # A loaded Dashboard: two Level I, a Level II, a Level III converter and two doublers.
    converters = profile_of((0, 8, 10, 42, 76, 44, 78)).converters
    for target in (ANY_COLOR, 0, 1, 2, 3):
        for need in (3, 5, 7):
            ring: Counts = (3, 1, 2, 2)
            assert set(payments(ring, target, need, converters)) == oracle(ring, target, need, converters)
