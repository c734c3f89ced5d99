"""Every distinct way to pay for a Build (rulings 10, 19-22).

A payment is ``(spent, converters)``: the marbles taken from the ring by color, and the
converter gizmos used (which become used for the turn). Two ways that spend the same marbles
with the same converters lead to the same table, so they are one payment. A payment covers the
cost exactly: no marble and no converter is wasted.

Model: each spent marble is either of the card's color, or converted to it by a
``convert_to_any`` gizmo (Level I: one marble of its color; Level II: one or two; Level III:
one marble of any color); then a doubler for that color may make it count twice (ruling 21:
yellow->red then double red pays 2 red; one doubler doubles one marble). A multicolor card
(cost 7) takes any mix, so a converter counts there only by feeding a doubler (yellow->red,
then double red, pays 2 of the 7), while doublers double one marble of each of their colors.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations, product

from referee.gizmos.state import Converter, Counts

Payment = tuple[Counts, tuple[int, ...]]
ANY_COLOR = -1
FREE: Payment = ((0, 0, 0, 0), ())


def _add(a: Counts, color: int, n: int = 1) -> Counts:
    lst = list(a)
    lst[color] += n
    return (lst[0], lst[1], lst[2], lst[3])


def _within(spent: Counts, ring: Counts) -> bool:
    return spent[0] <= ring[0] and spent[1] <= ring[1] and spent[2] <= ring[2] and spent[3] <= ring[3]


def _conversion_options(conv: Converter, target: int, ring: Counts) -> list[Counts]:
    """The marble vectors one convert_to_any gizmo can turn into the target color."""
    if conv.source == ANY_COLOR:
        return [_add((0, 0, 0, 0), m) for m in range(4) if m != target and ring[m] > 0]
    if conv.source == target or ring[conv.source] == 0:
        return []
    return [_add((0, 0, 0, 0), conv.source, k) for k in range(1, min(conv.uses, ring[conv.source]) + 1)]


def _single_color(ring: Counts, target: int, need: int, converters: tuple[Converter, ...]) -> set[Payment]:
    doublers = [c.id for c in converters if c.double and target in c.colors]
    options = [
        (c.id, opts) for c in converters if not c.double and (opts := _conversion_options(c, target, ring))
    ]
    out: set[Payment] = set()
    for r in range(len(options) + 1):
        for chosen in combinations(options, r):
            ids = tuple(cid for cid, _ in chosen)
            for vectors in product(*(opts for _, opts in chosen)):
                conv = [0, 0, 0, 0]
                for v in vectors:
                    for i in range(4):
                        conv[i] += v[i]
                converted = sum(conv)
                for j in range(len(doublers) + 1):
                    plain = need - converted - j
                    if plain < 0 or plain > ring[target] or j > plain + converted:
                        continue
                    spent = _add((conv[0], conv[1], conv[2], conv[3]), target, plain)
                    if not _within(spent, ring):
                        continue
                    for dbl in combinations(doublers, j):
                        out.add((spent, tuple(sorted(ids + dbl))))
    return out


def _vectors(total: int, ring: Counts, floor: Counts) -> list[Counts]:
    """All marble vectors with the given total, between ``floor`` and ``ring`` per color."""
    out: list[Counts] = []
    for a in range(floor[0], min(ring[0], total) + 1):
        for b in range(floor[1], min(ring[1], total - a) + 1):
            for c in range(floor[2], min(ring[2], total - a - b) + 1):
                d = total - a - b - c
                if floor[3] <= d <= ring[3]:
                    out.append((a, b, c, d))
    return out


def _multicolor(ring: Counts, need: int, converters: tuple[Converter, ...]) -> set[Payment]:
    """Payments for a multicolor card (cost 7 in any mix): every marble counts once, a doubler
    adds one for one marble of each color it doubles, and a converter counts only by turning a
    marble into a color a doubler then doubles (ruling 21: yellow->red, then double red)."""
    doublers = [c for c in converters if c.double]
    anys = [c for c in converters if not c.double]
    # Each doubler: unused, or used on a non-empty subset of its colors (one marble per color).
    choices: list[list[tuple[int, ...]]] = []
    for d in doublers:
        subsets = [s for r in range(1, len(d.colors) + 1) for s in combinations(d.colors, r)]
        choices.append([(), *subsets])
    out: set[Payment] = set()
    for picks in product(*choices) if choices else [()]:
        ids = [d.id for d, colors in zip(doublers, picks, strict=True) if colors]
        slots = [c for colors in picks for c in colors]  # one doubled marble per entry
        if need - len(slots) < 0:
            continue
        # Each doubled marble is of its color, or converted to it by a converter of another color.
        routes = [
            [(-1, c)]
            + [
                (i, m)
                for i, a in enumerate(anys)
                for m in range(4)
                if m != c and ring[m] and a.source in (m, ANY_COLOR)
            ]
            for c in slots
        ]
        for route in product(*routes):
            loads = [0] * len(anys)
            floor = [0, 0, 0, 0]
            for i, m in route:
                floor[m] += 1
                if i >= 0:
                    loads[i] += 1
            if any(n > a.uses for n, a in zip(loads, anys, strict=True)):
                continue
            used = tuple(sorted(ids + [a.id for n, a in zip(loads, anys, strict=True) if n]))
            for spent in _vectors(need - len(slots), ring, (floor[0], floor[1], floor[2], floor[3])):
                out.add((spent, used))
    return out


@lru_cache(maxsize=65536)
def payments(ring: Counts, target: int, need: int, converters: tuple[Converter, ...]) -> tuple[Payment, ...]:
    """Every distinct exact payment of ``need`` energy of color ``target`` (-1: multicolor).

    ``converters`` are the player's converter gizmos not yet used this turn. Pure and cached:
    the same ring, cost and converters always give the same, sorted answer.
    """
    if need <= 0:
        return (FREE,)
    if not converters:
        if target == ANY_COLOR:
            return tuple(sorted((v, ()) for v in _vectors(need, ring, (0, 0, 0, 0))))
        return (((_add((0, 0, 0, 0), target, need)), ()),) if ring[target] >= need else ()
    found = (
        _multicolor(ring, need, converters)
        if target == ANY_COLOR
        else _single_color(ring, target, need, converters)
    )
    return tuple(sorted(found))


def most_energy(spent: Counts, target: int, converters: tuple[Converter, ...]) -> int:
    """The most energy these marbles could count as, whatever their colors: each marble counts
    once and each doubler adds one (ruling 21). Below the cost, the Build is underpaid."""
    marbles = sum(spent)
    doubles = sum(
        len(c.colors) if target == ANY_COLOR else int(target in c.colors) for c in converters if c.double
    )
    return marbles + min(doubles, marbles)
