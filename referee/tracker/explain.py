"""Explanation search: which steps turned the last accepted table into the one now seen?

A best-first search over the engine's steps from the accepted state towards a target view,
fewest rule violations first, then by player steps plus the distance still to go. Random
outcomes are not guessed blindly: a card that refilled a Display slot must be a card now seen
that was not seen before; a marble color is tried in the order the dispenser sensor reported
(when it did), then by how many of that color the Row and the rings still need. With
``max_violations=0`` only legal steps are tried; above that, the search may also replay steps
that break a rule (:func:`referee.gizmos.force`), each broken rule costing one, so the
explanation with the fewest violations wins, and none is reported while a legal one is untried.

A table caught half-way through a random refill (a Row of five, an empty Display slot) is a
valid end point: the refill is still owed and the next explanation resolves it.

Research draws are hidden from the camera: the search draws the card that was then filed or
built (if any) plus placeholders, and afterwards folds the returned cards back into the deck's
unknown part, so no guess about unseen cards survives into the accepted state.
"""

from __future__ import annotations

import gc
import heapq
import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from referee.gizmos import IllegalStep, State, Step, default_cards, force, legal_steps
from referee.gizmos.payments import ANY_COLOR, payments
from referee.gizmos.rules import apply
from referee.gizmos.state import Counts
from referee.tracker.view import SEAT_ZONES, TableView, matches, seat_matches, view_of, zones_changed

CARDS = default_cards()
#: How many marbles beyond the cost a rule-breaking explanation lets a Build take.
OVERPAY_SLACK = 2
#: Rule-breaking steps an explanation may take for free in a turn already warned about
#: (``Hints.free_until_end``).
FREE_STEPS = 3
#: Nodes searched beyond the first rule-breaking explanation for a shorter one.
REFINE_NODES = 400
#: Heap pops between two looks at the clock (the time bound is a safety net; reading the
#: thread's CPU clock at every pop cost a tenth of the search).
CLOCK_EVERY = 32


@dataclass(frozen=True, slots=True)
class Hints:
    """What else is known besides the view: end-of-turn signals and the dispenser sensors.

    ``row_colors`` and ``draw_colors`` (sensed, not yet explained) only order the search:
    the camera has the last word on colors it sees. ``returned`` and ``refills`` are
    constraints: the marbles paid and the Row refills before the first end of turn in the
    explanation must add up to them (a sensor's count decides what the camera cannot), and with
    ``strict_draws`` the sensed draw colors are the only ones tried (the tracker sets both only
    when the camera cannot see the ring concerned).
    """

    row_colors: tuple[int, ...] = ()
    draw_colors: tuple[int, ...] = ()
    returned: int | None = None
    refills: int | None = None  # constraint: Row refills before the first end of turn (sensed)
    strict_rows: bool = False  # the sensed Row colors are the ones that rolled in (where sensed)
    strict_draws: bool = False  # the sensed draw colors are the only ones (the ring is out of view)
    end_turns: int = 0  # end-of-turn signals: the explanation ends at least this many turns
    unsignalled_ends: int = 0  # further turns it may end without a signal (inferred from the table)
    # The current player broke a rule earlier in this turn (and was warned): what they do until the
    # turn ends is taken as seen, rule-breaking steps costing no violation (no cascade of warnings).
    # Another player's move out of turn in it is no break of theirs (the tracker leaves this off).
    free_until_end: bool = False
    # The rules each player was warned about in this turn, as (seat, code): a further step of
    # that player breaking only those rules costs no violation until the turn ends (one warning
    # per player, rule and turn; a move out of turn then accepted as the table shows it).
    warned: frozenset[tuple[int, str]] = frozenset()
    # Tables seen (steadily, in full) since the accepted state and not yet accepted: the
    # explanation passes through each in order (what was seen first happened first).
    waypoints: tuple[TableView, ...] = ()
    end_last: bool = False  # the signal came after the table seen: nothing is played after the last end
    checkpoints: tuple[TableView, ...] = ()  # the table seen at each end signal: each end happens there
    # Camera only: the tracker chose how many turns end (``end_turns``, from whose areas changed),
    # so a turn that left no trace (a Research declined) costs nothing here; it is counted
    # (``Explanation.quiet``) and the tracker weighs it against the other hypotheses.
    quiet_turns: bool = False
    # Camera only, with the players' arms seen: among explanations breaking as many rules, a move
    # out of turn is tried before the current player's own rule-breaking step (the search's
    # usual order is the other way round); the arms then weigh the two readings.
    out_of_turn_first: bool = False


@dataclass(frozen=True, slots=True)
class Explanation:
    """A sequence of steps from the accepted state to one matching the view."""

    steps: tuple[Step, ...]
    forced: tuple[bool, ...]
    violations: tuple[tuple[int, IllegalStep], ...]  # (index into steps, the rule broken)
    state: State
    alternatives: int  # distinct end states found at the same cost (1: unambiguous)
    tables: int  # distinct *visible* tables among them (>1 only when part of the view is unknown)
    nodes: int
    folds: tuple[tuple[int, int, tuple[int, ...]], ...] = ()  # Research cards folded back after step i
    quiet: int = 0  # turns ended that left no trace on the table (a Research declined)

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
    paid: int = 0  # marbles paid before the first end of turn
    refills: int = 0  # Row refills before the first end of turn
    ends: int = 0
    player_steps: int = 0
    research: tuple[int, tuple[int, ...]] | None = field(default=None)  # (level, returned so far)
    order: int = -1  # the last step's canonical-order key (see _use_key)
    free: int = 0  # rule-breaking steps taken for free (see Hints.free_until_end)
    shown: bool = False  # the current turn's main action left a trace on the table
    unseen: int = 0  # turns ended unsignalled that left no trace (a Research declined)
    quiet: int = 0  # turns ended that left no trace, signalled or not (Explanation.quiet)
    passed: int = 0  # waypoints passed (Hints.waypoints)
    folds: tuple[tuple[int, int, tuple[int, ...]], ...] = ()  # (after step i, level, cards folded back)


@dataclass(frozen=True, slots=True)
class Limits:
    """Search bounds: keep each explanation within the referee's time budget."""

    max_player_steps: int = 14
    max_nodes: int = 4000
    max_seconds: float = 0.5  # a safety net: the node bound decides on a machine not overloaded
    alternatives_cap: int = 3
    max_forced_builds: int = 12  # rule-breaking payments tried per card


def visible_cards(state: State) -> set[int]:
    """Cards a camera sees on a table: the Display, every Archive and every built gizmo."""
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


def build_need(state: State, seat: int, card: int) -> int:
    """What ``card`` costs ``seat`` now after discounts (ruling 22), wherever it is built from."""
    p = state.players[seat]
    prof = p.profile
    c = CARDS[card]
    discount = prof.discount_level2 if c.level == 2 else 0
    if card in p.archive:
        discount += prof.discount_archive
    elif state.pending is not None and card in state.pending.hand:
        discount += prof.discount_research
    return max(0, c.cost - discount)


class _Search:
    def __init__(
        self, start: State, view: TableView, hints: Hints, max_violations: int, limits: Limits
    ) -> None:
        # With part of the table out of view, a cheapest explanation is not enough: look on at
        # any length for another that leaves a different table (then the view cannot decide).
        self.wide = not view.complete()
        self.start = start
        self.view = view
        self.hints = hints
        self.max_violations = max_violations
        self.limits = limits
        self.max_ends = hints.end_turns + hints.unsignalled_ends
        self.new_cards = _target_cards(view) - visible_cards(start)
        self.nodes = 0
        self.deadline = time.thread_time() + limits.max_seconds
        self.counter = itertools.count()
        # Every card any known zone holds (a rule-breaking step may move a card between seats).
        self.all_held: frozenset[int] | None = None
        if all(sv.archive is not None and sv.gizmos is not None for sv in view.seats):
            held: set[int] = set()
            for sv in view.seats:
                held |= sv.archive or frozenset()
                held |= sv.gizmos or frozenset()
            self.all_held = frozenset(held)
        # The view's known zones, flattened once: the distance and the estimate are computed
        # for every node generated.
        seats = tuple(enumerate(view.seats))
        self._slots = tuple((lvl - 1, slot, card) for (lvl, slot), card in view.display.items())
        self._rings = tuple((seat, sv.ring) for seat, sv in seats if sv.ring is not None)
        self._vps = tuple((seat, sv.vp) for seat, sv in seats if sv.vp is not None)
        self._built = tuple((seat, len(sv.gizmos)) for seat, sv in seats if sv.gizmos is not None)
        self._filed = tuple(
            (seat, sv.archive) for seat, sv in seats if sv.archive is not None and sv.gizmos is not None
        )

    # ---- pruning and goal

    def possible(self, s: State, ends: int) -> bool:
        """Cheap necessary conditions (each one sound, or a legal turn could be missed)."""
        lenient = self.max_violations > 0
        more_ends = ends < self.max_ends
        for seat, sv in enumerate(self.view.seats):
            p = s.players[seat]
            # Built gizmos never leave; VP tokens never go down.
            if sv.gizmos is not None and not sv.gizmos.issuperset(p.gizmos):
                return False
            if sv.vp is not None and p.vp_tokens > sv.vp:
                return False
            # A card leaves an Archive only by being built (by its owner, unless rules break).
            if p.archive:
                if not lenient:
                    seen = sv.archive is not None and sv.gizmos is not None
                    if seen and not (sv.archive | sv.gizmos).issuperset(p.archive):  # type: ignore[operator]
                        return False
                elif self.all_held is not None and not self.all_held.issuperset(p.archive):
                    return False
            if sv.ring is not None and sv.gizmos is not None and len(sv.gizmos) > len(p.gizmos):
                # The Builds still to come take at most their printed costs from the ring (an
                # exact payment never takes more marbles than the cost; nor does an underpaid
                # one); breaking rules, a Build may also be overpaid by a marble or two.
                spend = sum(CARDS[c].cost for c in sv.gizmos - set(p.gizmos))
                if lenient:
                    spend += OVERPAY_SLACK
                if sum(p.ring) - spend > sum(sv.ring):
                    return False
            elif sv.ring is not None and sv.gizmos is not None:
                # No Build is left to spend marbles, so the ring can only grow from here...
                r = p.ring
                if r[0] > sv.ring[0] or r[1] > sv.ring[1] or r[2] > sv.ring[2] or r[3] > sv.ring[3]:
                    return False
                # ...and (legal play, no turn left to end) a Row color above what is seen can
                # only leave the Row into this ring.
                row = self.view.row
                if row is not None and seat == s.current and not lenient and not more_ends:
                    for c in range(4):
                        if s.row[c] - row[c] > sv.ring[c] - r[c]:
                            return False
        return True

    def distance(self, s: State) -> int:
        """How far a state is from the view (ties in cost go to the nearest state first)."""
        display = s.display
        d = 0
        for lvl, slot, card in self._slots:
            if display[lvl][slot] != card:
                d += 1
        row = self.view.row
        if row is not None:
            r = s.row
            d += abs(r[0] - row[0]) + abs(r[1] - row[1]) + abs(r[2] - row[2]) + abs(r[3] - row[3])
        players = s.players
        for seat, ring in self._rings:
            r = players[seat].ring
            d += abs(r[0] - ring[0]) + abs(r[1] - ring[1]) + abs(r[2] - ring[2]) + abs(r[3] - ring[3])
        for seat, vp in self._vps:
            d += abs(vp - players[seat].vp_tokens)
        return d

    def estimate(self, s: State, ends: int) -> int:
        """A lower bound on the player steps still needed (keeps the search goal-directed): the
        ends of turn still owed, the gizmos still to build, the cards still to file."""
        need = max(0, self.hints.end_turns - ends)
        players = s.players
        for seat, built in self._built:
            need += built - len(players[seat].gizmos)
        for seat, archive in self._filed:
            p = players[seat]
            need += sum(1 for c in archive if c not in p.archive and c not in p.gizmos)
        return need

    def goal(self, node: _Node) -> bool:
        s = node.state
        # A refill may still be owed (the table is caught before it); a granted choice may be
        # owed (the player is thinking); a Research hand may not: its cards are placeholders.
        if s.pending is not None and s.pending.kind == "research":
            return False
        if node.ends < self.hints.end_turns:
            return False
        if self.hints.returned is not None and node.paid != self.hints.returned:
            return False
        if self.hints.refills is not None and node.refills != self.hints.refills:
            return False
        if self.hints.strict_draws and node.draw_i < len(self.hints.draw_colors):
            return False  # every draw the sensor reported happened
        if node.passed < len(self.hints.waypoints):
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
        hinted = self.hints.row_colors if kind == "row" else self.hints.draw_colors
        idx = node.row_i if kind == "row" else node.draw_i
        first = hinted[idx] if idx < len(hinted) else -1
        strict = self.hints.strict_draws if kind == "draw" else self.hints.strict_rows
        if strict and first >= 0:
            return [Step("dispense", color=first)] if s.dispenser[first] else []
        colors = [c for c in range(4) if s.dispenser[c] > 0]
        colors.sort(key=lambda c: (c != first, -self._color_need(s, c, kind)))
        return [Step("dispense", color=c) for c in colors]

    def _color_need(self, s: State, color: int, kind: str) -> int:
        if kind == "row" and self.view.row is not None:
            return self.view.row[color] - s.row[color]
        sv = self.view.seats[s.current] if s.current < len(self.view.seats) else None
        if sv is not None and sv.ring is not None:
            return sv.ring[color] - s.players[s.current].ring[color]
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
            if seat != s.current and seat_matches(p, sv):
                continue
            # A marble came into the ring if a color grew (the total may still shrink: a Build
            # paid later); with a Build still to come, any color may have come and gone.
            building = sv.gizmos is not None and len(sv.gizmos) > len(p.gizmos)
            came = [c for c in range(4) if sv.ring is None or building or sv.ring[c] > p.ring[c]]
            out += [Step("pick", seat, color=c) for c in came if s.row[c]]
            if sv.archive is not None:
                out += [Step("file", seat, card=c) for c in sorted(sv.archive - set(p.archive))]
            if sv.gizmos is not None:
                for c in sorted(sv.gizmos - set(p.gizmos)):
                    out += self._forced_builds(s, seat, c, sv.ring)
            if (sv.vp is not None and sv.vp > p.vp_tokens) or came:
                for g in p.gizmos:
                    if CARDS[g].effect.reward in ("vp_tokens", "draw_random", "pick_row"):
                        out.append(Step("use", seat, gizmo=g))
            if seat == s.current and s.pending is None:
                out.append(Step("end_turn", seat))
        return [st for st in out if st not in legal]

    def _forced_builds(self, s: State, seat: int, card: int, ring_seen: Counts | None) -> list[Step]:
        """Payments worth replaying for a Build that no legal payment explains: what the ring
        shows was spent, exact payments that reuse a converter already used this turn, and
        single-color payments that fall short."""
        p = s.players[seat]
        c = CARDS[card]
        need = build_need(s, seat, card)
        reuse: list[tuple[Counts, tuple[int, ...]]] = []  # a converter used twice is tried first
        pays: set[tuple[Counts, tuple[int, ...]]] = set()
        target = c.color_index if c.color_index >= 0 else ANY_COLOR
        used = [cv for cv in p.profile.converters if cv.id in s.used]
        if used:
            for spent, conv in payments(p.ring, target, need, p.profile.converters):
                if any(cv.id in conv for cv in used):
                    reuse.append((spent, conv))
        if ring_seen is not None:
            drop = tuple(max(0, p.ring[i] - ring_seen[i]) for i in range(4))
            pays.add((drop, ()))  # type: ignore[arg-type]
        if target >= 0:
            for n in range(1, min(need, p.ring[target]) + 1):
                pays.add((tuple(n if i == target else 0 for i in range(4)), ()))  # type: ignore[arg-type]
        chosen = (reuse + sorted(pays - set(reuse)))[: self.limits.max_forced_builds]
        return [Step("build", seat, card=card, pay=pay, converters=conv) for pay, conv in chosen]

    # ---- the search

    def run(self) -> Explanation | None:
        """Fewest violations first; within that, best-first by player steps + a lower bound of
        the steps still needed + the distance to the view (the distance makes the search go
        straight for the view instead of trying every order of a chain reaction). Rule-breaking
        successors of a node are generated lazily, when every node with fewer violations has
        been tried, so a search with ``max_violations > 0`` costs nothing extra when a legal
        explanation exists, and never reports a broken rule while a legal explanation within the
        bounds is untried."""
        start = _Node(self.start, shown=self.start.main_done)
        heap: list[tuple[int, int, int, int, int, bool, _Node]] = [
            (0, 0, 0, 0, next(self.counter), False, start)
        ]
        seen: set[tuple[object, ...]] = set()
        found: list[_Node] = []
        best_cost: tuple[int, int] | None = None
        refine = 0  # nodes left to look for a shorter rule-breaking explanation
        pops = 0
        while heap:
            v, n, ends, steps, _, lazy, node = heapq.heappop(heap)
            if best_cost is not None and (v, n) > best_cost and not (self.wide and v == best_cost[0]):
                # The distance to the view is no lower bound: a rule-breaking explanation found
                # first may not be the shortest (a Build paid 3 and a second Pick, where a Build
                # paid 2 explains it). Look a little further among as many broken rules.
                if v != best_cost[0] or refine <= 0:
                    break
                refine -= 1
                if steps >= found[0].player_steps:
                    continue
            pops += 1
            if self.nodes >= self.limits.max_nodes or (
                pops % CLOCK_EVERY == 0 and time.thread_time() > self.deadline
            ):
                break
            if lazy:
                children = self.expand_forced(node)
            else:
                key = (
                    node.state,
                    node.row_i,
                    node.draw_i,
                    node.paid,
                    node.refills,
                    node.ends,
                    node.order,
                    node.passed,
                )
                known = len(seen)
                seen.add(key)  # hashed once (a state's hash walks its decks)
                if len(seen) == known:
                    continue
                self.nodes += 1
                if self.goal(node):
                    if best_cost is None:
                        best_cost = (v, n)
                        refine = REFINE_NODES if v else 0
                    elif found and node.player_steps < found[0].player_steps:
                        found.clear()  # a shorter explanation breaking as many rules
                    cap = self.limits.alternatives_cap
                    if len(found) < cap and all(f.state != node.state for f in found):
                        found.append(node)
                    if len(found) >= cap and refine <= 0:
                        # enough alternatives; but a rule-breaking one found first still gets its
                        # refinement (a shorter one may follow), however many tie with it
                        break
                    if self.wide and len({view_of(f.state).key() for f in found}) > 1:
                        break  # part of the table is out of view, and it matters
                    continue
                children = self.expand(node)
                free = self._free(node)
                if (
                    (free or len(node.violations) + node.unseen < self.max_violations)
                    and not node.state.chance
                    and node.player_steps < self.limits.max_player_steps
                ):
                    # Free rule-breaking steps come just after the legal ones of the same cost.
                    entry = (v + (not free), n + free, ends, steps, next(self.counter), True, node)
                    heapq.heappush(heap, entry)
            for child in children:
                steps = child.player_steps
                cost = steps + self.estimate(child.state, child.ends) + self.distance(child.state)
                # Ties go to the node that ended more turns: a change seen after an end-of-turn
                # signal most likely happened after it.
                level = len(child.violations) + child.unseen
                entry = (level, cost, -child.ends, steps, next(self.counter), False, child)
                heapq.heappush(heap, entry)
        if not found:
            return None
        best = found[0]
        tables = {view_of(f.state).key() for f in found}
        return Explanation(
            steps=best.steps,
            forced=best.forced,
            violations=best.violations,
            state=best.state,
            alternatives=len(found),
            tables=len(tables),
            nodes=self.nodes,
            folds=best.folds,
            quiet=best.quiet,
        )

    def _ends_ok(self, node: _Node, step: Step) -> bool:
        """An end of turn fits: one is still allowed, and the table is the one seen when its
        signal came (so what happened after a signal is never put before it)."""
        if step.kind != "end_turn":
            return True
        if node.ends >= self.max_ends:
            return False
        marks = self.hints.checkpoints
        return node.ends >= len(marks) or matches(node.state, marks[node.ends])

    def _passes(self, node: _Node, after: State) -> bool:
        """Whether ``after`` is the next waypoint's table."""
        marks = self.hints.waypoints
        return node.passed < len(marks) and matches(after, marks[node.passed])

    def _unseen_end(self, node: _Node, step: Step) -> bool:
        """An unsignalled end of a turn whose main action left no trace on the table (a
        Research declined). Legal, but it weighs like a broken rule: a move before any visible
        main action is likelier out of turn, unless what follows says otherwise."""
        if self.hints.quiet_turns:
            return False
        return step.kind == "end_turn" and node.ends >= self.hints.end_turns and not node.shown

    def _in_order(self, node: _Node, step: Step) -> bool:
        """Uses that commute (VP tokens, blind draws) are tried in one canonical order when they
        come one after the other: by gizmo id. (Any other step in between resets the order.)"""
        key = _use_key(step)
        return key < 0 or key > node.order

    def expand(self, node: _Node) -> list[_Node]:
        s = node.state
        out: list[_Node] = []
        if s.chance:
            kind = s.chance[0][0]
            for step in self.chance_successors(node):
                child = self._child(node, step, apply(s, step), False, ())
                if kind == "row":
                    child.row_i += 1
                    child.refills += node.ends == 0
                if kind == "draw":
                    child.draw_i += 1
                out.append(child)
            return out
        if node.player_steps >= self.limits.max_player_steps:
            return out
        if self.hints.end_last and self.hints.end_turns and node.ends >= self.hints.end_turns:
            return out
        for step in legal_steps(s) if not s.game_over else []:
            unseen = self._unseen_end(node, step)
            if (
                not self._ends_ok(node, step)
                or (unseen and len(node.violations) + node.unseen >= self.max_violations)
                or not self._in_order(node, step)
                or not self.wanted_step(s, step)
            ):
                continue
            after = apply(s, step)
            if self.possible(after, node.ends + (step.kind == "end_turn")):
                out.append(self._child(node, step, after, False, ()))
        return out

    def _free(self, node: _Node) -> bool:
        """Whether some rule-breaking steps may cost nothing here: the current player's in a
        turn whose rule break was already warned about, and a player's breaking only rules they
        were already warned about in this turn (:attr:`Hints.warned`), until the turn ends."""
        if node.free >= FREE_STEPS or node.ends:
            return False
        return self.hints.free_until_end or bool(self.hints.warned)

    def _gratis(self, node: _Node, step: Step, current: int, broken: list[IllegalStep]) -> bool:
        """Whether a rule-breaking step costs nothing (see :meth:`_free`). Only rules already
        warned about: breaks within one explanation each count (each is one more unlikely event)."""
        if not self._free(node):
            return False
        seat = current if step.player is None else step.player
        if self.hints.free_until_end and seat == current:
            return True
        return all((seat, e.code) in self.hints.warned for e in broken)

    def expand_forced(self, node: _Node) -> list[_Node]:
        """The rule-breaking successors of a node (see :meth:`forced_candidates`)."""
        s = node.state
        out: list[_Node] = []
        if self.hints.end_last and self.hints.end_turns and node.ends >= self.hints.end_turns:
            return out
        legal = set(legal_steps(s)) if not s.game_over else set()
        for step in self.forced_candidates(s, legal):
            if not self._ends_ok(node, step):
                continue
            try:
                after, broken = force(s, step)
            except IllegalStep:
                continue
            gratis = self._gratis(node, step, s.current, broken)
            if (
                broken
                and (gratis or len(node.violations) + node.unseen + len(broken) <= self.max_violations)
                and self.possible(after, node.ends + (step.kind == "end_turn"))
            ):
                out.append(self._child(node, step, after, True, () if gratis else tuple(broken), gratis))
        return out

    def _child(
        self,
        node: _Node,
        step: Step,
        after: State,
        forced: bool,
        broken: tuple[IllegalStep, ...],
        free: bool = False,
    ) -> _Node:
        index = len(node.steps)
        research = node.research
        before = node.state
        pend = before.pending
        if pend is not None and pend.kind == "research" and not pend.chosen and not step.is_chance:
            kept = step.card if step.kind in ("file", "build") else None
            research = (pend.level, tuple(c for c in pend.hand if c != kept))
        folds = node.folds
        if research is not None and after.pending is None:  # the Research finished: fold back
            after = fold_research(after, research[0], research[1])
            folds = (*folds, (index, research[0], research[1]))
            research = None
        paid = node.paid
        if step.kind == "build" and step.pay and node.ends == 0:
            paid += sum(step.pay)
        order = node.order if step.is_chance else _use_key(step)  # chance steps keep it
        return _Node(
            state=after,
            steps=(*node.steps, step),
            forced=(*node.forced, forced),
            violations=(*node.violations, *((index, b) for b in broken)),
            row_i=node.row_i,
            draw_i=node.draw_i,
            paid=paid,
            refills=node.refills,
            ends=node.ends + (step.kind == "end_turn"),
            player_steps=node.player_steps
            + _cost(step, forced, step.player not in (None, before.current), self.hints.out_of_turn_first),
            research=research,
            order=order,
            folds=folds,
            free=node.free + free,
            unseen=node.unseen + self._unseen_end(node, step),
            quiet=node.quiet + (step.kind == "end_turn" and not node.shown),
            passed=node.passed + self._passes(node, after),
            shown=False if step.kind == "end_turn" else node.shown or _own_trace(step, before.current),
        )


def _own_trace(step: Step, current: int) -> bool:
    """Whether a step leaves its turn's trace on the table: a File, Pick or Build by the
    player whose turn it is (a move out of turn in a turn is no trace of it)."""
    return step.kind in ("file", "pick", "build") and step.player in (None, current)


def _use_key(step: Step) -> int:
    """The canonical-order key of a step: the gizmo id of a use that commutes with its
    neighbours (a VP token, a blind draw), -1 for any other step."""
    if step.kind != "use" or step.gizmo is None:
        return -1
    return step.gizmo if CARDS[step.gizmo].effect.reward in ("vp_tokens", "draw_random") else -1


def _cost(step: Step, forced: bool, out_of_turn: bool = False, out_of_turn_first: bool = False) -> int:
    """Player steps that count towards an explanation's length. The forced order of the cards
    going under a deck (one canonical order is tried) is free. A gizmo used against the rules
    counts double: among explanations breaking as many rules, a plain action taken wrongly (a
    second marble from the Row) is likelier than an effect claimed without its trigger. So does
    a move out of turn: a player's own area changing is likelier their own turn going on (a
    second marble) than a move after their turn ended; with ``out_of_turn_first``
    (:attr:`Hints.out_of_turn_first`) the other way round."""
    if step.is_chance or step.kind == "bottom":
        return 0
    if not forced:
        return 1
    return 2 if step.kind == "use" or out_of_turn != out_of_turn_first else 1


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


def zones_moved(state: State, found: Explanation) -> set[str]:
    """The zones an explanation from ``state`` acts on: every zone that reads differently after
    one of its steps than before it (a marble picked and spent again in the same explanation
    counts), the ring of each Build (even one that pays nothing), and the whole area of each
    player whose turn it ends (every action but a declined Research shows there, so a turn
    ends only with nothing of it out of view)."""
    out: set[str] = set()
    folds = {i: (level, cards) for i, level, cards in found.folds}
    before = view_of(state)
    for i, step in enumerate(found.steps):
        state = force(state, step)[0] if found.forced[i] else apply(state, step)
        if i in folds:
            state = fold_research(state, *folds[i])
        after = view_of(state)
        out |= zones_changed(before, after)
        if step.kind == "build" and step.player is not None:
            out.add(f"ring{step.player}")
        if step.kind == "end_turn" and step.player is not None:
            out |= {f"{zone}{step.player}" for zone in SEAT_ZONES}
        before = after
    return out


def explain(
    state: State,
    view: TableView,
    hints: Hints | None = None,
    max_violations: int = 0,
    limits: Limits | None = None,
) -> Explanation | None:
    """The cheapest explanation of ``view`` from ``state``, or ``None`` within the bounds."""
    search = _Search(state, view, hints or Hints(), max_violations, limits or Limits())
    with _collector_paused():
        return search.run()


class _CollectorPause:
    """Pauses Python's cyclic garbage collector while any search runs (in any thread).

    A search allocates hundreds of thousands of small objects and frees them all by reference
    counting (they form no cycles), so the collector's passes during it find nothing, yet they
    cost a sixth of the search. Reference counting frees memory as before; the collector
    resumes when the last search ends.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._was_enabled = False

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._running == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1
                if self._running == 0 and self._was_enabled:
                    gc.enable()


_collector_paused = _CollectorPause()
