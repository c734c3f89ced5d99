"""Camera only: which turns ended, read from the table when nobody signals them.

With no end-of-turn signal the table tells: whose areas changed says how many turns may have
ended (:func:`table_turns`), each hypothesis is explained and weighed (:func:`explain_from_table`:
a broken rule against turns that left no trace), and while nothing explains the table the turns
that pass are still counted (:func:`follow_lost`). Where signals do come, :func:`relaxations`
lists the searches to try, strictest first. The tracker keeps the state these read and write;
everything here is a function of what it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from referee.gizmos import State, legal_steps
from referee.tracker.base import TrackerSettings
from referee.tracker.explain import Explanation, Hints, explain
from referee.tracker.reaching import ArmLog
from referee.tracker.view import TableView, seat_matches, view_of

#: Camera only: how many turns that left no trace (a Research declined) a broken rule weighs.
#: In play, about one turn in ten leaves no trace and a rule is broken in a few turns in a
#: hundred: one traceless turn is likelier than a move out of turn, a broken rule likelier than
#: two traceless turns (a second marble, rather than everyone else's turn passing unseen).
VIOLATION_WEIGHT = 1.5

#: The last accepted explanation let turns pass without a trace (legal): the state it started
#: from, the table it explained, its weight (see :func:`weight`) and how many move-log lines
#: stood before it. What is seen next may make a move out of turn there likelier.
QuietMark = tuple[State, TableView, float, int]

#: While nothing explains the table: the last table seen, its last mover, the turns ended since.
LostTurns = tuple[TableView, int, int]


def weight(found: Explanation) -> float:
    """Camera only: how unlikely an explanation is, in turns that left no trace. A move out of turn
    taken as seen weighs as one broken (a player warned for it in the turn is warned no more, but
    another move out of turn is no likelier than the first)."""
    return found.quiet + VIOLATION_WEIGHT * (len(found.violations) + _out_of_turn_taken_as_seen(found))


def _out_of_turn_taken_as_seen(found: Explanation) -> int:
    """How many moves out of turn the explanation takes as seen (rule-breaking steps of a player
    other than the one whose turn it is, with no violation charged)."""
    n = found.state.num_players
    current = (found.state.current - sum(st.kind == "end_turn" for st in found.steps)) % n
    charged = {i for i, _ in found.violations}
    count = 0
    for i, (step, forced) in enumerate(zip(found.steps, found.forced, strict=True)):
        if step.kind == "end_turn":
            current = (current + 1) % n
        elif forced and i not in charged and step.player not in (None, current):
            count += 1
    return count


def turn_over(state: State) -> bool:
    """The current player has taken the main action and nothing legal is left but ending the turn:
    by the rules the turn is over now, signalled or not. The dashboard says so at once; the record
    ends the turn when a signal or the next player's change shows it (camera only, the table
    tells it only then), or at once for the game's last turn."""
    if state.game_over or state.chance or state.pending is not None or not state.main_done:
        return False
    return [step.kind for step in legal_steps(state)] == ["end_turn"]


def settled(found: Explanation, index: int, code: str) -> bool:
    """Whether what the explanation shows after its step ``index`` settles the rule it broke:
    the turn ends, or, for a move out of turn, another player moves after it (the turn was not
    over, or someone else's had begun)."""
    mover = found.steps[index].player
    for step in found.steps[index + 1 :]:
        if step.kind == "end_turn":
            return True
        if code == "NOT_YOUR_TURN" and not step.is_chance and step.player not in (None, mover):
            return True
    return False


def table_turns(s: State, view: TableView, arms: ArmLog | None = None, frame: int = 0) -> list[int]:
    """Camera only: how many turns may have ended before the table now seen, from whose
    areas changed (a player's ring, Archive, gizmos and VP tokens are theirs; the Display
    and the Row go with the player whose area gains). A change in the area of the player
    ``d`` seats after the current one ends ``d`` turns: the current one, and one per seat in
    between, which left no trace (a Research declined; the search only ends such a turn
    where a Research was possible). A change in the current player's own area is their turn
    going on; after their main action it may also be a whole round later, everyone else
    having left no trace. The end of the game bounds the turns. Where the camera reports the
    players' arms (``arms``, those seen before ``frame``, :mod:`referee.tracker.reaching`): as
    many turns as the arms seen say (each arm in its own turn, in seat order), one fewer (the
    last arm moved out of turn) and as many without the first other arm (it moved out of turn
    before the current player's own move); a whole round more than a mover's distance when other arms were
    seen (a stray sighting among them would make the arms' count a round too many); one fewer
    than a mover's distance when the arm of the player just before the mover was not seen (a
    move out of turn in that player's turn); one, when the current player's own area changed
    after a pause that followed their main action (:meth:`ArmLog.paused`: they moved after
    their turn, before the next player). The hypotheses, likeliest first; the search weighs
    each (:func:`explain_from_table`), the arms seen included."""
    n, c = s.num_players, s.current
    movers = [
        i for i, (p, sv) in enumerate(zip(s.players, view.seats, strict=True)) if not seat_matches(p, sv)
    ]
    out: list[int] = []
    if not movers or c in movers:
        out.append(0)
    # The last mover in seat order ends the most turns; an earlier one may have moved out of
    # turn during a later one's turn (fewer turns ended).
    out += sorted({(m - c) % n for m in movers} - {0}, reverse=True)
    if movers == [c] and s.main_done:
        out.append(n)
    if s.end_triggered:  # play after the game's last turn (GAME_OVER) by anyone
        last = n - c
        if last not in out:
            out.append(last)
    if arms is not None and arms.reported:
        seen = arms.before(frame)
        by_arms = arms.turns(s, frame)
        if by_arms is not None and by_arms not in out and by_arms <= 2 * n:
            out.append(by_arms)
        # ... and one fewer: the last arm moved out of turn, in the turn of the player before it
        if by_arms is not None and 2 <= by_arms <= 2 * n and by_arms - 1 not in out:
            out.append(by_arms - 1)
        # ... and without the first other arm (a move out of turn before the current player's)
        skipped = arms.turns(s, frame, skip_first=True)
        if skipped is not None and skipped not in out and skipped <= 2 * n:
            out.append(skipped)
        # a round more, when arms other than the current player's and the movers' were seen (a
        # stray arm among them makes the count above a round too many)
        if set(seen) - {c, *movers}:
            out += [e for e in sorted({(m - c) % n + n for m in movers}) if e not in out]
        # a move out of turn in the turn of the player just before the last mover, whose arm
        # was not seen (before the current player's main action: in the current turn)
        for m in movers:
            d = (m - c) % n
            if d and (m - 1) % n not in seen and d - 1 not in out and (d > 1 or not s.main_done):
                out.append(d - 1)
        if 0 not in out and not s.main_done and seen and c not in seen:
            out.append(0)
        # a mover whose arm was seen before and after a pause: their turn ended at the pause (a
        # Research declined), and the change came in the next player's turn
        for m in movers:
            d = (m - c) % n
            done = arms.across_pause(m, frame) or arms.paused_before_change(m, frame)
            if done and d + 1 not in out and d + 1 <= 2 * n:
                out.append(d + 1)
        # the current player's own area changed after a pause that followed their main action:
        # their turn was over, and they moved out of turn before the next player moved
        if c in movers and s.main_done and arms.paused(frame, s) and 1 not in out:
            out.append(1)
    return out


@dataclass(frozen=True, slots=True)
class TableReading:
    """What :func:`explain_from_table` chose: the explanation (None: nothing explains the table),
    the hints it was found with, the turns it ends (None: none found, the last reading's stand),
    where a move out of turn before the last explanation reads better, where to go back to
    (the state, the table seen then, the move-log lines before it), and its weight (:func:`weight`
    and the arms seen, :meth:`ArmLog.cost`)."""

    found: Explanation | None
    hints: Hints
    ends: int | None
    rewind_to: tuple[State, TableView, int] | None
    cost: float | None = None


def explain_from_table(
    state: State,
    view: TableView,
    hints_for: Callable[..., Hints],
    loose: bool,
    mark: QuietMark | None,
    settings: TrackerSettings,
    arms: ArmLog | None = None,
    frame: int = 0,
    rest: int | None = None,
) -> TableReading:
    """Camera only: explain the view under each hypothesis of :func:`table_turns` and take
    the likeliest: a broken rule weighs ``VIOLATION_WEIGHT`` turns that left no trace
    (one such turn is likelier than a move out of turn, a rule broken likelier than a whole
    round of them). Each search is bounded on its own, so the cost is predictable: at most
    one search per hypothesis. ``hints_for(**kw)`` makes the tracker's hints for the view;
    ``loose``: some table seen on the way does not bind; ``mark``: the last explanation let turns
    pass without a trace; ``arms``: the players' arms seen reaching in, those before ``frame``
    weighed with each reading (:meth:`ArmLog.cost`: a player acting unseen, an arm no step
    explains); ``rest``: the turns the rest of a reading ends, where only the turns before its
    rule break were accepted (asked for too: the arms that told them are spent)."""
    s = settings
    arms = arms or ArmLog()
    best: tuple[float, int] | None = None
    found: Explanation | None = None
    chosen = hints_for(table_ends=0)
    table_ends: int | None = None
    hypotheses = table_turns(state, view, arms, frame)
    if rest is not None and rest not in hypotheses:  # the rest of a reading accepted in part
        hypotheses.append(rest)
    least = min(hypotheses, default=0)
    for rank, ends in enumerate(hypotheses):
        if best is not None and best[0] == 0:
            break  # legal, no traceless turn: nothing later can weigh less
        for waypoints in (True, False) if loose else (True,):
            # A table seen on the way that does not bind (a Build seen underpaid) is set
            # aside if play explains the new table better without it (then paid in full).
            hints = hints_for(table_ends=ends, waypoints=waypoints)
            tried = explain(state, view, hints, s.max_violations, s.limits)
            if tried is None:
                continue
            cost = (weight(tried) + arms.cost(state, tried.steps, frame), rank)
            if arms.reported and (tried.violations or cost[0] > 0):
                for other in _other_orders(state, view, ends, least, hints, tried, cost[0] > 0, s):
                    its = (weight(other) + arms.cost(state, other.steps, frame), rank)
                    if its < cost:
                        tried, cost = other, its
            if best is None or cost < best:
                best, found, chosen = cost, tried, hints
                table_ends = ends
            if tried.legal:
                break
    if mark is None:
        return TableReading(found, chosen, table_ends, None, best[0] if best is not None else None)
    # The last explanation let turns pass without a trace: with what is seen now, a move out
    # of turn there may be likelier (a player's Pick before the current player's action).
    rewind_to: tuple[State, TableView, int] | None = None
    start, seen, paid, lines = mark
    own = best[0] if best is not None else float("inf")
    for ends in table_turns(start, view, arms.again(), frame):
        hints = replace(hints_for(fresh=True, table_ends=ends), waypoints=(seen,))
        tried = explain(start, view, hints, s.max_violations, s.limits)
        if tried is None:
            continue
        total = weight(tried) + arms.cost(start, tried.steps, frame, again=True)
        if total < paid + own:
            own, paid, found, chosen = total, 0.0, tried, hints
            table_ends = ends
            rewind_to = (start, seen, lines)
    return TableReading(found, chosen, table_ends, rewind_to, own if found is not None else None)


def chain(first: Explanation, then: Explanation) -> Explanation:
    """One explanation of ``first``'s steps followed by ``then``'s (from ``first.state``)."""
    k = len(first.steps)
    return Explanation(
        steps=first.steps + then.steps,
        forced=first.forced + then.forced,
        violations=first.violations + tuple((i + k, e) for i, e in then.violations),
        state=then.state,
        alternatives=then.alternatives,
        tables=then.tables,
        nodes=first.nodes + then.nodes,
        folds=first.folds + tuple((i + k, level, cards) for i, level, cards in then.folds),
        quiet=first.quiet + then.quiet,
    )


def _other_orders(
    state: State,
    view: TableView,
    ends: int,
    least: int,
    hints: Hints,
    found: Explanation,
    weighed: bool,
    settings: TrackerSettings,
) -> Iterator[Explanation]:
    """Camera only, with the players' arms seen: the search returns one explanation per
    hypothesis, the first it finds, and the arms only weigh what comes back. So where the arms
    could tell, other orders of the same table are asked for too: a rule break read as a move out
    of turn instead of the player's own (or the other way round), and (``weighed``: the
    explanation found does not fit the arms and turns perfectly) the turns that left no trace
    first (:func:`quiet_first`), with either reading of a rule break, and the last of them after
    what the table shows, a move out of turn before it (:func:`quiet_last`)."""
    s = settings
    flipped = replace(hints, out_of_turn_first=True)
    if found.violations:
        other = explain(state, view, flipped, s.max_violations, s.limits)
        if other is not None:
            yield other
    if weighed:
        for h in (hints, flipped) if found.violations else (hints,):
            late = quiet_first(state, view, ends, least, h, s)
            if late is not None:
                yield late
        early = quiet_last(state, view, ends, flipped, s)
        if early is not None:
            yield early
        if least > 0:  # every turn ended before what the table shows (a move after a pause)
            after = quiet_first(state, view, ends, 0, flipped, s)
            if after is not None:
                yield after


def quiet_first(
    state: State, view: TableView, ends: int, least: int, hints: Hints, settings: TrackerSettings
) -> Explanation | None:
    """Camera only, with the players' arms seen: ``ends`` turns ended, of which the turns beyond
    the ``least`` the table needs left no trace *before* what it shows (the search alone puts
    what the table shows first, so the arms seen would not fit): those turns first (nothing
    visible changes), then the rest."""
    if ends <= least:
        return None
    quiet = Hints(end_turns=ends - least, quiet_turns=True, end_last=True)
    # the table as it stands, whoever's turn it is after them (not a round: another's)
    first = explain(state, replace(view_of(state), turn_player=None), quiet, 0, settings.limits)
    if first is None:
        return None
    rest = explain(
        first.state, view, replace(hints, end_turns=least), settings.max_violations, settings.limits
    )
    return None if rest is None else chain(first, rest)


def quiet_last(
    state: State, view: TableView, ends: int, hints: Hints, settings: TrackerSettings
) -> Explanation | None:
    """Camera only, with the players' arms seen: ``ends`` turns ended, the last of which left no
    trace *after* what the table shows (a move out of turn, then the turn's player declining a
    Research): the search alone ends the traceless turn first where legal play allows it (that
    turn's player first, then the other's move in their own turn), so the arms seen the other way
    round would not fit. What the table shows with one turn fewer ended, then that turn."""
    if ends < 1:
        return None
    first = explain(state, view, replace(hints, end_turns=ends - 1), settings.max_violations, settings.limits)
    if first is None:
        return None
    quiet = Hints(end_turns=1, quiet_turns=True, end_last=True)
    rest = explain(first.state, replace(view_of(first.state), turn_player=None), quiet, 0, settings.limits)
    return None if rest is None else chain(first, rest)


def relaxations(hints: Hints, recalled: bool, loose: bool, signalled: bool) -> list[dict[str, bool]]:
    """The searches to try, strictest first, while nothing legal is found: the sensors'
    counts may disagree with the camera (its reading stands where it sees; the disagreement
    is reported when the turn is accepted), and a zone recalled at an end signal (``recalled``:
    some was) may have changed under the hand that covered it. ``loose``: some table seen on the
    way does not bind; ``signalled``: turns are signalled in this game."""
    out: list[dict[str, bool]] = [{}]
    sensed = hints.returned is not None or hints.refills is not None
    if sensed:
        out.append({"sensed": False})
    if recalled:
        out.append({"recalled": False})
    if sensed and recalled:
        out.append({"sensed": False, "recalled": False})
    if loose:
        out += [{**relax, "waypoints": False} for relax in out]
    if signalled:  # only if nothing else explains the table (see Tracker._explain)
        out.append({"inferred": True, "waypoints": False})
    return out


def follow_lost(lost: LostTurns | None, view: TableView, n: int) -> LostTurns | None:
    """Camera only, while nothing explains the table: count the turns that pass by whose area
    changes from one steady table to the next (the seat distance of the last mover), so that
    taking the table as seen later keeps the turn count. ``n``: the number of players."""
    if lost is None:
        return None
    prev, seat, ends = lost
    movers = [i for i in range(n) if prev.seats[i] != view.seats[i]]
    if movers:
        last = max(movers, key=lambda m: (m - seat) % n)
        ends, seat = ends + (last - seat) % n, last
    return (view, seat, ends)
