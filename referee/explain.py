"""Explanation search: which steps turned the last accepted table into the one now seen?

A uniform-cost search over the engine's steps from the accepted state towards a target view,
cheapest first by (rule violations, player steps). Random outcomes are not guessed blindly:
a card that refilled a Display slot must be a card now seen that was not seen before; a marble
colour comes from the dispenser sensor when it reported one, else from the colours the Row and
rings make plausible. With ``max_violations=0`` only legal steps are tried; above that, the
search may also replay steps that break a rule (:func:`referee.gizmos.force`), each broken rule
costing one, so the explanation with the fewest violations wins.

Research draws are hidden from the camera: the search draws the card that was then filed or
built (if any) plus placeholders, and afterwards folds the returned cards back into the deck's
unknown part, so no guess about unseen cards survives into the accepted state.
"""

from __future__ import annotations

import heapq
import itertools
import time
from dataclasses import dataclass, field, replace

from referee.gizmos import IllegalStep, State, Step, default_cards, force, legal_steps
from referee.gizmos.payments import payments
from referee.gizmos.rules import apply
from referee.gizmos.state import Counts
from referee.view import TableView, matches

CARDS = default_cards()


@dataclass(frozen=True, slots=True)
class Hints:
    """What the dispenser sensors reported since the accepted state."""

    row_colours: tuple[int, ...] = ()  # colours that rolled into the Energy Row, in order
    draw_colours: tuple[int, ...] = ()  # colours drawn blind, in order
    returned: int | None = None  # marbles returned into the dispenser (None: no sensor)
    end_turns: int = 0  # end-of-turn signals (the explanation must end that many turns)


@dataclass(frozen=True, slots=True)
class Explanation:
    """A sequence of steps from the accepted state to one matching the view."""

    steps: tuple[Step, ...]
    forced: tuple[bool, ...]
    violations: tuple[tuple[int, IllegalStep], ...]  # (index into steps, the rule broken)
    state: State
    alternatives: int  # distinct end states found at the same cost (1: unambiguous)
    nodes: int

    @property
    def legal(self) -> bool:
        return not self.violations


@dataclass(slots=True)
class _Node:
    state: State
    steps: tuple[Step, ...] = ()
    forced: tuple[bool, ...] = ()
    violations: tuple[tuple[int, IllegalStep], ...] = ()
    row_i: int = 0
    draw_i: int = 0
    paid: int = 0
    ends: int = 0
    player_steps: int = 0
    research: tuple[int, tuple[int, ...]] | None = field(default=None)  # (level, returned so far)


@dataclass(frozen=True, slots=True)
class Limits:
    """Search bounds: keep each explanation within the referee's time budget."""

    max_player_steps: int = 14
    max_nodes: int = 4000
    max_seconds: float = 0.25
    max_ends: int = 1
    alternatives_cap: int = 3


def _visible_cards(state: State) -> set[int]:
    seen = {c for row in state.display for c in row if c is not None}
    for p in state.players:
        seen.update(p.archive)
        seen.update(p.gizmos)
    return seen


def _target_cards(view: TableView) -> set[int]:
    seen = {c for c in view.display.values() if c is not None}
    for sv in view.seats:
        if sv.archive is not None:
            seen |= sv.archive
        if sv.gizmos is not None:
            seen |= sv.gizmos
    return seen


class _Search:
    def __init__(
        self, start: State, view: TableView, hints: Hints, max_violations: int, limits: Limits
    ) -> None:
        self.start = start
        self.view = view
        self.hints = hints
        self.max_violations = max_violations
        self.limits = limits
        self.new_cards = _target_cards(view) - _visible_cards(start)
        self.nodes = 0
        self.deadline = time.perf_counter() + limits.max_seconds
        self.counter = itertools.count()

    # ---- pruning and goal

    def possible(self, s: State) -> bool:
        """Cheap necessary conditions: built cards never leave, tokens never go down."""
        for seat, sv in enumerate(self.view.seats):
            p = s.players[seat]
            if sv.gizmos is not None and not sv.gizmos.issuperset(p.gizmos):
                return False
            if sv.vp is not None and p.vp_tokens > sv.vp:
                return False
            if (
                sv.archive is not None
                and sv.gizmos is not None
                and not (sv.archive | sv.gizmos).issuperset(p.archive)
            ):
                return False
            if sv.ring is not None and sv.gizmos is not None and len(sv.gizmos) == len(p.gizmos):
                # No Build is left to spend marbles, so the ring can only grow from here...
                r = p.ring
                if r[0] > sv.ring[0] or r[1] > sv.ring[1] or r[2] > sv.ring[2] or r[3] > sv.ring[3]:
                    return False
                # ...and a Row colour above what is seen must still fit into that ring.
                row = self.view.row
                if row is not None and seat == s.current and not self.max_violations:
                    for c in range(4):
                        if s.row[c] - row[c] > sv.ring[c] - r[c]:
                            return False
        return True

    def distance(self, s: State) -> int:
        """How far a state is from the view (ties in cost go to the nearest state first)."""
        view = self.view
        d = sum(1 for (lvl, slot), card in view.display.items() if s.display[lvl - 1][slot] != card)
        if view.row is not None:
            d += sum(abs(s.row[c] - view.row[c]) for c in range(4))
        for seat, sv in enumerate(view.seats):
            p = s.players[seat]
            if sv.ring is not None:
                d += sum(abs(p.ring[c] - sv.ring[c]) for c in range(4))
            if sv.vp is not None:
                d += abs(sv.vp - p.vp_tokens)
        return d

    def estimate(self, s: State, ends: int) -> int:
        """A lower bound on the player steps still needed (keeps the search goal-directed)."""
        need = max(0, self.hints.end_turns - ends)
        for seat, sv in enumerate(self.view.seats):
            p = s.players[seat]
            if sv.gizmos is not None:
                need += len(sv.gizmos) - len(p.gizmos)
            if sv.archive is not None and sv.gizmos is not None:
                need += len(sv.archive - set(p.archive) - set(p.gizmos))
        return need

    def goal(self, node: _Node) -> bool:
        s = node.state
        # A granted choice may still be owed (the player is thinking); a Research hand may not:
        # its cards are unseen placeholders until the Research is over.
        if s.chance or (s.pending is not None and s.pending.kind == "research"):
            return False
        if node.ends < self.hints.end_turns:
            return False
        if self.hints.returned is not None and node.paid != self.hints.returned:
            return False
        return matches(s, self.view, turn=True)

    # ---- successors

    def chance_successors(self, node: _Node) -> list[Step]:
        s = node.state
        event = s.chance[0]
        kind = event[0]
        if kind in ("display", "research"):
            level = event[1]
            cands = s.decks[level - 1][0][0]
            wanted = [c for c in cands if c in self.new_cards]
            if kind == "display":
                seen = self.view.display.get((level, event[2]))
                wanted.sort(key=lambda c: c != seen)  # the card now seen in that slot first
                return [Step("reveal", card=c) for c in wanted]
            hand = s.pending.hand if s.pending is not None else ()
            pick = [c for c in wanted if c not in hand][:1]
            if not pick:
                pick = [c for c in cands if c not in self.new_cards and c not in hand][:1] or list(cands[:1])
            return [Step("reveal", card=c) for c in pick]
        hinted = self.hints.row_colours if kind == "row" else self.hints.draw_colours
        idx = node.row_i if kind == "row" else node.draw_i
        if idx < len(hinted) and s.dispenser[hinted[idx]] > 0:
            return [Step("dispense", color=hinted[idx])]
        colours = [c for c in range(4) if s.dispenser[c] > 0]
        return sorted(
            (Step("dispense", color=c) for c in colours),
            key=lambda st: -self._colour_need(s, st.color or 0, kind),
        )

    def _colour_need(self, s: State, colour: int, kind: str) -> int:
        if kind == "row" and self.view.row is not None:
            return self.view.row[colour] - s.row[colour]
        sv = self.view.seats[s.current] if s.current < len(self.view.seats) else None
        if sv is not None and sv.ring is not None:
            return sv.ring[colour] - s.players[s.current].ring[colour]
        return 0

    def wanted_step(self, s: State, step: Step) -> bool:
        """Steps that cannot lead to the view are not explored."""
        seat = step.player if step.player is not None else s.current
        sv = self.view.seats[seat]
        k = step.kind
        if k == "build":
            return sv.gizmos is None or step.card in sv.gizmos
        if k == "file":
            return (sv.archive is None or step.card in sv.archive) or (
                sv.gizmos is not None and step.card in sv.gizmos
            )
        if k == "research":
            if s.pending is not None:  # a granted Research
                return True
            levels = {CARDS[c].level for c in self.new_cards if self._seat_takes(seat, c)}
            if levels:
                return step.level in levels
            return step.level == min(lvl for lvl in (1, 2, 3) if s.decks[lvl - 1])
        if k == "bottom":
            assert s.pending is not None
            return step.card == min(s.pending.hand)
        return True

    def _seat_takes(self, seat: int, card: int) -> bool:
        sv = self.view.seats[seat]
        return bool((sv.archive and card in sv.archive) or (sv.gizmos and card in sv.gizmos))

    def forced_candidates(self, s: State, legal: set[Step]) -> list[Step]:
        """Rule-breaking steps worth trying: they move the table towards what is seen."""
        out: list[Step] = []
        for seat, sv in enumerate(self.view.seats):
            p = s.players[seat]
            changed = (
                (sv.ring is not None and sv.ring != p.ring)
                or (sv.archive is not None and sv.archive != frozenset(p.archive))
                or (sv.gizmos is not None and sv.gizmos != frozenset(p.gizmos))
                or (sv.vp is not None and sv.vp != p.vp_tokens)
            )
            if seat != s.current and not changed:
                continue
            if sv.ring is None or sum(sv.ring) > sum(p.ring):
                out += [Step("pick", seat, color=c) for c in range(4) if s.row[c]]
            if sv.archive is not None:
                out += [Step("file", seat, card=c) for c in sorted(sv.archive - set(p.archive))]
            if sv.gizmos is not None:
                for c in sorted(sv.gizmos - set(p.gizmos)):
                    out += self._forced_builds(s, seat, c, sv.ring)
            if (sv.vp is not None and sv.vp > p.vp_tokens) or sv.ring is None or sum(sv.ring) > sum(p.ring):
                for g in p.gizmos:
                    if CARDS[g].effect.reward in ("vp_tokens", "draw_random", "pick_row"):
                        out.append(Step("use", seat, gizmo=g))
            if seat == s.current:
                out.append(Step("end_turn", seat))
        return [st for st in out if st not in legal]

    def _forced_builds(self, s: State, seat: int, card: int, ring_seen: Counts | None) -> list[Step]:
        p = s.players[seat]
        c = CARDS[card]
        pays: set[Counts] = set()
        if ring_seen is not None:
            drop = tuple(max(0, p.ring[i] - ring_seen[i]) for i in range(4))
            pays.add(drop)  # type: ignore[arg-type]
        target = c.color_index
        for spent, conv in payments(p.ring, target, c.cost, ()):
            if not conv:
                pays.add(spent)
        if target >= 0:
            for n in range(1, min(c.cost, p.ring[target]) + 1):
                pays.add(tuple(n if i == target else 0 for i in range(4)))  # type: ignore[arg-type]
        return [Step("build", seat, card=card, pay=pay, converters=()) for pay in sorted(pays)]

    # ---- the search

    def run(self) -> Explanation | None:
        start = _Node(self.start)
        heap: list[tuple[int, int, int, int, _Node]] = [(0, 0, 0, next(self.counter), start)]
        seen: set[tuple[object, ...]] = set()
        found: list[_Node] = []
        best_cost: tuple[int, int] | None = None
        while heap:
            v, n, _, _, node = heapq.heappop(heap)
            if best_cost is not None and (v, n) > best_cost:
                break
            key = (node.state, node.row_i, node.draw_i, node.paid, node.ends)
            if key in seen:
                continue
            seen.add(key)
            self.nodes += 1
            if self.goal(node):
                if best_cost is None:
                    best_cost = (v, n)
                if all(f.state != node.state for f in found):
                    found.append(node)
                if len(found) >= self.limits.alternatives_cap:
                    break
                continue
            if self.nodes >= self.limits.max_nodes or time.perf_counter() > self.deadline:
                break
            for child in self.expand(node):
                cost = child.player_steps + self.estimate(child.state, child.ends)
                near = self.distance(child.state)
                heapq.heappush(heap, (len(child.violations), cost, near, next(self.counter), child))
        if not found:
            return None
        best = found[0]
        return Explanation(
            steps=best.steps,
            forced=best.forced,
            violations=best.violations,
            state=best.state,
            alternatives=len(found),
            nodes=self.nodes,
        )

    def expand(self, node: _Node) -> list[_Node]:
        s = node.state
        out: list[_Node] = []
        if s.chance:
            kind = s.chance[0][0]
            for step in self.chance_successors(node):
                child = self._child(node, step, apply(s, step), False, ())
                if kind == "row" and node.row_i < len(self.hints.row_colours):
                    child.row_i += 1
                if kind == "draw" and node.draw_i < len(self.hints.draw_colours):
                    child.draw_i += 1
                out.append(child)
            return out
        if node.player_steps >= self.limits.max_player_steps or s.game_over:
            return out
        legal = legal_steps(s)
        legal_set = set(legal)
        for step in legal:
            if step.kind == "end_turn" and node.ends >= max(self.limits.max_ends, self.hints.end_turns):
                continue
            if not self.wanted_step(s, step):
                continue
            after = apply(s, step)
            if self.possible(after):
                out.append(self._child(node, step, after, False, ()))
        if len(node.violations) < self.max_violations:
            for step in self.forced_candidates(s, legal_set):
                if step.kind == "end_turn" and node.ends >= max(self.limits.max_ends, self.hints.end_turns):
                    continue
                try:
                    after, broken = force(s, step)
                except IllegalStep:
                    continue
                if (
                    broken
                    and len(node.violations) + len(broken) <= self.max_violations
                    and self.possible(after)
                ):
                    out.append(self._child(node, step, after, True, tuple(broken)))
        return out

    def _child(
        self, node: _Node, step: Step, after: State, forced: bool, broken: tuple[IllegalStep, ...]
    ) -> _Node:
        index = len(node.steps)
        research = node.research
        before = node.state
        pend = before.pending
        if pend is not None and pend.kind == "research" and not pend.chosen and not step.is_chance:
            kept = step.card if step.kind in ("file", "build") else None
            research = (pend.level, tuple(c for c in pend.hand if c != kept))
        if research is not None and after.pending is None:  # the Research finished: fold back
            after = fold_research(after, research[0], research[1])
            research = None
        return _Node(
            state=after,
            steps=(*node.steps, step),
            forced=(*node.forced, forced),
            violations=(*node.violations, *((index, b) for b in broken)),
            row_i=node.row_i,
            draw_i=node.draw_i,
            paid=node.paid + (sum(step.pay) if step.kind == "build" and step.pay else 0),
            ends=node.ends + (step.kind == "end_turn"),
            player_steps=node.player_steps + _cost(step, before),
            research=research,
        )


def _cost(step: Step, before: State) -> int:
    """Player steps that count towards an explanation's length: the forced order of the cards
    going under a deck (one canonical order is tried) is free."""
    if step.is_chance or step.kind == "bottom":
        return 0
    return 1


def fold_research(state: State, level: int, returned: tuple[int, ...]) -> State:
    """Fold cards a Research put under a deck back into the deck's unknown part.

    The camera never sees which cards a Research drew, so the cards the search drew as
    placeholders must not be remembered as lying at the bottom: they rejoin the first segment,
    whose candidates and count grow accordingly. Every card stays in exactly one place.
    """
    if not returned:
        return state
    ret = set(returned)
    segs = [seg for seg in state.decks[level - 1] if not (len(seg[0]) == 1 and seg[0][0] in ret)]
    if segs:
        cands, n = segs[0]
        segs[0] = (tuple(sorted((*cands, *returned))), n + len(returned))
    else:
        segs = [(tuple(sorted(returned)), len(returned))]
    decks = list(state.decks)
    decks[level - 1] = tuple(segs)
    return replace(state, decks=tuple(decks))  # type: ignore[arg-type]


def explain(
    state: State,
    view: TableView,
    hints: Hints | None = None,
    max_violations: int = 0,
    limits: Limits | None = None,
) -> Explanation | None:
    """The cheapest explanation of ``view`` from ``state``, or ``None`` within the bounds."""
    return _Search(state, view, hints or Hints(), max_violations, limits or Limits()).run()
