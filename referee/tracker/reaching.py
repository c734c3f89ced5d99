"""Camera only: whose arm reached in, as evidence of whose turn it was.

A Research declined leaves the table as it was, so from the table alone a whole round of
declined Research reads like a second marble taken, and "a traceless turn, a move, a traceless
turn" like a move out of turn. The players' arms tell them apart: the observation's
``reaches`` (:class:`referee.observation.ReachSighting`) say which seat's arm reached over the
table and over what. :class:`ArmLog` keeps the seats seen reaching since the last accepted
table, with the kind of place each hand was over (:func:`zone_class`); :func:`reach_cost` weighs
a reading (the players its steps say acted, in order, and where their hands must have gone,
:func:`orders`) against them, in the same unit as the tracker's other weights (a turn that left
no trace weighs 1: one turn in ten): an acting player whose arm was never seen, an arm seen
that no step of the reading explains, or that went elsewhere than the reading says (a Pick
with the arm over a deck).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from referee.gizmos import State, Step
from referee.observation import ReachSighting

#: A sighting below this confidence is not counted.
MIN_CONFIDENCE = 0.5
#: A turn's acting player whose arm was never seen (every gesture of the turn missed: about one
#: in twenty for a single gesture; a Research declined is three or four).
W_MISSED = 1.3
#: An arm seen in one frame that no step of the reading explains (a stray hand, a seat misread:
#: about one turn in twenty) ...
W_STRAY = 1.3
#: ... and for each further frame in a row it stays (someone is acting), up to W_STRAY_MAX.
W_LINGER = 1.0
W_STRAY_MAX = 4.0

#: A pause: frames the accepted table stood still with no arm over it, after the current
#: player's main action, before anyone reached in again. A player goes on with their turn within
#: a moment (the simulated tables of a turn stand 1 to 5 frames), while a turn's last table
#: stands while the next player looks at it (8 frames); the game's last turn is closed after a
#: shorter still (``TrackerSettings.final_wait``), since no one else may move then at all.
PAUSE_FRAMES = 7
#: A reading that has the current player's turn go on past a pause (their hand back on the table
#: after it, with no end of turn between): less likely than a turn that left no trace, more than
#: a broken rule. It tells a marble taken right after one's own turn, before the next player
#: moves (``NOT_YOUR_TURN``), from a second marble in the turn (``SECOND_MAIN_ACTION``): the
#: tables and the arms are the same, only the pause between differs.
W_PAUSE = 1.0

#: Among the arms seen (:meth:`ArmLog.marked`): a pause between two of them, the table standing
#: still with no arm seen for :data:`PAUSE_FRAMES` or more. It ends a run of one player's arm:
#: what that player did before it and after it are two gestures, weighed apart.
PAUSE: tuple[int, str] = (-1, "pause")
#: A pause ends the turn of a player whose arm was seen in at least this many frames before it
#: (since any earlier pause): one frame may be another player's arm with its seat misread.
DONE_FRAMES = 2

#: A reading whose steps change two players' areas in the order a steady view contradicts (one
#: player's area read changed while the other's still read as accepted, and the reading has the
#: other move first): each such pair. A steady read (the same in several frames) is rarely wrong;
#: a player holding a marble a moment before putting it in the ring is the likeliest way.
W_ORDER = 2.0

#: Where a hand is over, by kind (:func:`zone_class`); ``table``: elsewhere or not told, which
#: fits any step.
ZONE_CLASSES = ("deck", "row", "display", "archive", "area", "table")
ANY: frozenset[str] = frozenset(ZONE_CLASSES)
#: A player's area first read (steadily) changed since the last accepted table: the frame, the
#: seat, and the seats whose areas read then, in full, as accepted (their change came later).
Area = tuple[int, int, tuple[int, ...]]
#: An arm seen: its seat and the kind of place its hand was over.
Sighting = tuple[int, str]
#: A player a reading says acted, and the kinds of place their hands went to.
Actor = tuple[int, frozenset[str]]


#: Steps that change their player's area (ring, Archive, gizmos or VP tokens).
AREA_STEPS = frozenset({"pick", "file", "build", "use"})


def zone_class(zone: str) -> str:
    """The kind of place a :data:`referee.observation.REACH_ZONES` zone is: a tier's deck, the
    Energy Row, a Display slot, an Archive, the rest of a seat's area, or elsewhere."""
    if zone.startswith("deck/"):
        return "deck"
    if zone == "energy_row":
        return "row"
    if zone.startswith("display/"):
        return "display"
    if zone.endswith("/archive"):
        return "archive"
    if zone[:1].isdigit():
        return "area"
    return "table"


def step_classes(step: Step) -> frozenset[str]:
    """Where a player's hand goes for a step (any of): the Row and the ring for a Pick, a deck
    for a Research or a card put back, the card's place and where it goes for a File or Build
    (the dispenser to pay), the gizmo, the VP tokens, the Row or the dispenser for a gizmo used."""
    k = step.kind
    if k == "pick":
        return frozenset({"row", "area"})
    if k in ("research", "bottom"):
        return frozenset({"deck"})
    if k == "file":
        return frozenset({"display", "archive", "area"})
    if k == "build":
        return frozenset({"display", "archive", "area"})
    return frozenset({"area", "row"})  # a gizmo used (its VP token, its pick, its draw)


@dataclass(frozen=True, slots=True)
class ArmLog:
    """The arms seen reaching since the last accepted table: (frame, seat, zone class) in
    order; those the last accepted explanation accounted for (``spent``: a later reading that
    goes back over it weighs them again); and whether the camera reports hands at all
    (``reported``; if it never did, reaches weigh nothing and the tracker reads the table
    alone); the first frame of the last accepted table (``still_from``; ``None``: not known) and
    the frames the table changed since (``changes``): a pause between them, with nothing moving
    and no arm seen, weighs on a reading that has the turn go on (:meth:`paused`); and whether
    the table the last accepted explanation started from had paused so before it
    (``earlier_pause``: a reading that goes back over that explanation weighs it the same); and the
    order in which players' areas were first read changed since the last accepted table
    (``areas``: a reading that changes them in another order weighs :data:`W_ORDER` a pair).
    Immutable: the tracker swaps it, so a failed record write restores it with the rest."""

    reported: bool = False
    seen: tuple[tuple[int, int, str], ...] = ()
    spent: tuple[Sighting, ...] = ()
    still_from: int | None = None
    changes: tuple[int, ...] = ()
    earlier_pause: bool = False
    areas: tuple[Area, ...] = ()

    def add(self, frame: int, reaches: Iterable[ReachSighting] | None) -> ArmLog:
        """The reaches of one observation (``None``: the pipeline does not report hands)."""
        if reaches is None:
            return self
        new = tuple(
            (frame, r.seat, zone_class(r.zone))
            for r in reaches
            if r.seat is not None and r.confidence >= MIN_CONFIDENCE
        )
        if self.reported and not new:
            return self
        return replace(self, reported=True, seen=self.seen + new)

    def sightings(self, frame: int) -> tuple[Sighting, ...]:
        """The arms seen before ``frame``, in order: (seat, zone class)."""
        return tuple((seat, cls) for f, seat, cls in self.seen if f < frame)

    def marked(self, frame: int) -> tuple[Sighting, ...]:
        """The arms seen before ``frame``, in order, with a :data:`PAUSE` wherever the table stood
        still (no arm seen, no change) for :data:`PAUSE_FRAMES` frames or more between two of
        them: a player who reached in, then let the table stand that long, was done."""
        out: list[Sighting] = []
        last: int | None = None
        for f, seat, cls in self.seen:
            if f >= frame:
                break
            if last is not None:
                events = [last, *(c for c in self.changes if last < c < f), f]
                if max(b - a for a, b in pairwise(events)) - 1 >= PAUSE_FRAMES:
                    out.append(PAUSE)
            out.append((seat, cls))
            last = f
        return tuple(out)

    def across_pause(self, seat: int, frame: int) -> bool:
        """Whether ``seat``'s arm was seen (before ``frame``) in :data:`DONE_FRAMES` frames or more
        before a pause and again after it: that player was done at the pause, and reached in again
        after it."""
        seats = [s for s, _ in self.marked(frame)]
        since = 0  # where the stretch before the pause began
        for i, s in enumerate(seats):
            if s != PAUSE[0]:
                continue
            if seats[since:i].count(seat) >= DONE_FRAMES and seat in seats[i + 1 :]:
                return True
            since = i + 1
        return False

    def paused_before_change(self, seat: int, frame: int) -> bool:
        """Whether ``seat``'s arm was seen (before ``frame``) in :data:`DONE_FRAMES` frames or more
        since any pause, and the table then stood still, no arm seen, for :data:`PAUSE_FRAMES`
        before it changed (the change the table now explained shows, by an arm unseen or not
        told): that player was done at the pause, and the change came after it."""
        last = max((f for f, _, _ in self.seen if f < frame), default=None)
        if last is None:
            return False
        change = min([frame, *(c for c in self.changes if c > last)])
        if change - last - 1 < PAUSE_FRAMES:
            return False
        marked = self.marked(frame)
        pauses = [i for i, m in enumerate(marked) if m == PAUSE]
        stretch = marked[pauses[-1] + 1 :] if pauses else marked
        return [s for s, _ in stretch].count(seat) >= DONE_FRAMES

    def _settling(self, frame: int) -> int | None:
        """How many arms were seen before ``frame`` once the table had begun to change since the
        last accepted table (``None``: it was not seen change)."""
        if not self.changes:
            return None
        began = min(self.changes)
        return sum(began <= f < frame for f, _, _ in self.seen)

    def before(self, frame: int) -> tuple[int, ...]:
        """The seats seen reaching before ``frame``, in order."""
        return tuple(seat for f, seat, _ in self.seen if f < frame)

    def since(self, frame: int) -> tuple[int, ...]:
        """The seats seen reaching from ``frame`` on, in order."""
        return tuple(seat for f, seat, _ in self.seen if f >= frame)

    def settles(self, start: State, steps: Sequence[Step], index: int, frame: int) -> bool:
        """Whether the arms seen before ``frame`` show the player whose turn it was act after a
        move out of turn (step ``index`` of a reading from ``start``): then that move is
        certain, wherever the search placed it among the turn's own moves."""
        if not self.reported:
            return False
        current, n = start.current, start.num_players
        for step in steps[:index]:
            if step.kind == "end_turn":
                current = (current + 1) % n
        offender = steps[index].player
        if offender is None or offender == current:
            return False
        seen = self.before(frame)
        return offender in seen and current in seen[seen.index(offender) + 1 :]

    def consume(
        self, frame: int, start: State | None = None, steps: Sequence[Step] = (), steady: int = 1
    ) -> ArmLog:
        """An explanation (``steps`` from ``start``) of the table that stood from ``frame`` on
        was accepted: the arms seen before it are accounted for (kept as ``spent``), except the
        last ones of players it does not involve (:func:`_deferred`); those and the arms seen
        since wait for the next. ``steady``: the frames a zone must read the same to count as
        read (``TrackerSettings.frames``), which dates a refill no steady read saw land."""
        cut = len(self.sightings(frame))
        if start is not None:
            cut -= _deferred(self.sightings(frame), set(actors(start, steps)), self._settling(frame))
        spent = tuple((s, c) for _, s, c in self.seen[:cut])
        # the table stands from its last change: a zone unchanged but read late (a dip, a
        # misread frame) holds up the whole view's first frame, not the table's
        still = max((f for f in self.changes if f <= frame), default=frame)
        if refill_unseen(steps):
            # the Row was refilled with what was taken: it reads as before, and the Row without
            # the marble stood too briefly to read steadily, so the refill landed unseen up to
            # ``steady - 1`` frames after the last change read: the stillness starts from then
            still = min(still + steady - 1, max(still, frame))
        # ... or from the last arm over it, if later (a gizmo used to no visible effect yet): the
        # arms it accounts for are kept without their frames
        still = max([still, *(f + 1 for f, _, _ in self.seen[:cut])])
        changes = tuple(f for f in self.changes if f > frame)
        paused = start is not None and self.paused(frame, start)
        return ArmLog(self.reported, self.seen[cut:], spent, still, changes, paused)  # areas: read anew

    def consume_steps(self, start: State, steps: Sequence[Step]) -> ArmLog:
        """Part of a reading was accepted (the turns before a rule break that awaits its
        verdict): the arms its players account for, first in order (a single stray sighting
        among them too), are spent; the rest wait. An arm accounts for a step only over a place
        its hand goes to (or no place told): the same player's arm over the Row after their
        Research declined is the move out of turn still awaiting its verdict, not that turn's."""
        expected, k, used = _runs(m for _, moves in _turns(start, steps) for m in moves), 0, 0
        seen = [(seat, cls) for _, seat, cls in self.seen]

        def fits(j: int) -> int | None:
            seat, cls = seen[j]
            for at in (k, k + 1):
                if at < len(expected) and seat == expected[at][0] and cls in expected[at][1] | {"table"}:
                    return at
            return None

        while used < len(seen):
            at = fits(used)
            if at is None and used + 1 < len(seen) and fits(used + 1) is not None:
                used += 1  # a stray sighting between the reading's arms
                continue
            if at is None:
                break
            k, used = at, used + 1
        spent = tuple((seat, cls) for _, seat, cls in self.seen[:used])
        # the areas read changing stay: the rest of the reading is still to come
        return ArmLog(self.reported, self.seen[used:], spent, areas=self.areas)

    def again(self) -> ArmLog:
        """The log as a reading from before the last accepted explanation sees it: the arms that
        explanation accounted for come first again (a reading that goes back over it), and the
        pause before it, if there was one, is the pause it sees (:meth:`paused`)."""
        seen = tuple((-1, s, c) for s, c in self.spent) + self.seen
        return ArmLog(self.reported, seen, (), earlier_pause=self.earlier_pause)

    def area_changed(self, frame: int, seat: int, unchanged: Iterable[int]) -> ArmLog:
        """``seat``'s area read steadily changed from ``frame`` on (first time since the last
        accepted table), while the areas of ``unchanged`` still read, in full, as accepted."""
        if any(a[1] == seat for a in self.areas):
            return self
        return replace(self, areas=(*self.areas, (frame, seat, tuple(sorted(unchanged)))))

    def order_breaks(self, start: State, steps: Sequence[Step]) -> int:
        """How many pairs of players' area changes a reading (``steps`` from ``start``) puts in
        the order the steady reads contradict: a player whose area read changed while another's
        still read as accepted, and whose first step changing it comes after that other's in an
        earlier turn, or in the same turn where neither moved out of turn (the search places a
        move out of turn anywhere among the turn's own moves, as :func:`orders` says)."""
        first = _first_area_steps(start, steps)
        breaks = 0
        for _, seat, unchanged in self.areas:
            for other in unchanged:
                if seat not in first or other not in first or first[other][0] > first[seat][0]:
                    continue
                (_, t1, off1), (_, t2, off2) = first[other], first[seat]
                breaks += t1 < t2 or not (off1 or off2)
        return breaks

    def pauses_within(self, start: State, steps: Sequence[Step]) -> int:
        """How many pairs of players' area changes, read with a pause between them (the table
        still, no arm seen, for :data:`PAUSE_FRAMES` frames or more), a reading (``steps`` from
        ``start``) puts in the same turn: the pause ended the turn of the player whose area
        changed first (a turn's last table stands while the next player looks at it), so the
        other's move came in a later turn. Each weighs :data:`W_PAUSE`, as a turn going on past
        the pause after the accepted table does (:meth:`paused`)."""
        first = _first_area_steps(start, steps)
        read = sorted((frame, seat) for frame, seat, _ in self.areas if seat in first)
        count = 0
        for k, (fa, a) in enumerate(read):
            for fb, b in read[k + 1 :]:
                if fa < fb and first[a][1] == first[b][1] and self._still_between(fa, fb):
                    count += 1
        return count

    def _still_between(self, begin: int, end: int) -> bool:
        """Whether the table stood still, with no arm seen, for :data:`PAUSE_FRAMES` frames or
        more somewhere between frames ``begin`` and ``end``."""
        inside = [f for f in self.changes if begin < f < end] + [
            f for f, _, _ in self.seen if begin < f < end
        ]
        events = [begin, *sorted(inside), end]
        return max(b - a for a, b in pairwise(events)) - 1 >= PAUSE_FRAMES

    def moved(self, frame: int) -> ArmLog:
        """The table changed: a zone read steadily with a new value from ``frame`` on."""
        return replace(self, changes=(*self.changes[-15:], frame))

    def paused(self, frame: int, accepted: State) -> bool:
        """Whether the last accepted table (``accepted``) stood still for :data:`PAUSE_FRAMES`
        from its first frame, with no arm seen over it, before anything moved again: an arm
        reaching in, the table changing, or the table now explained beginning (``frame``). Only
        that first stillness is weighed: it comes before every step of a reading. Not known while
        the accepted table still owes a refill: it changed again when that landed, maybe unseen
        under the hand that went on. A log seen from before the last accepted explanation
        (:meth:`again`) sees the pause before that explanation."""
        if not self.reported or accepted.chance:
            return False
        if self.still_from is None:
            return self.earlier_pause
        start = self.still_from
        moved = [f for f in self.changes if f > start] + [f for f, _, _ in self.seen if f >= start]
        return min([frame, *moved]) - start >= PAUSE_FRAMES

    def stood(self, frame: int) -> int:
        """How many frames, up to ``frame``, the last accepted table has stood still since it
        began, with no arm seen and no change (0: not known)."""
        if not self.reported or self.still_from is None:
            return 0
        moved = [self.still_from, *self.changes, *(f + 1 for f, _, _ in self.seen)]
        return max(0, frame - max(moved) + 1)

    def cost(self, start: State, steps: Sequence[Step], frame: int, again: bool = False) -> float:
        """How a reading (``steps`` from ``start``) fits the arms seen before ``frame`` (with
        ``again``: and those the last accepted explanation accounted for, for a reading from
        before it). 0 when the camera does not report hands. Where the table stood as accepted
        until the last pause among the arms ended, the arms before that pause are weighed
        against the reading's steps before its first change of an area (after the current
        player's main action, their busy hands first), those after it against the rest (the
        last of those steps may go on), and a player done at the pause whom the reading has act
        only after it weighs :data:`W_PAUSE` (:meth:`_still_till_pause`, :func:`_done_unexplained`)."""
        if not self.reported:
            return 0.0
        now = self.marked(frame)
        now = now[: len(now) - _deferred(now, set(actors(start, steps)), self._settling(frame))]
        seen = (self.spent if again else ()) + now
        # the current player's arm, seen earlier this turn, stands for a main action no camera
        # saw (a Research declined) when the reading ends the turn without one
        earlier = not again and start.current in (seat for seat, _ in self.spent)
        # after their main action the current player's hands may still be busy (cards put back
        # under a deck after the table showed the Build): their first arms are theirs, unweighed
        lead = start.main_done
        # a pause after the main action: the turn was over, the current player done (for a
        # reading from before the last accepted explanation, the pause before that one)
        paused = self.earlier_pause if again else self.paused(frame, start)
        pause = W_PAUSE if lead and goes_on(steps) and paused else 0.0
        # the areas were read changing against the last accepted table, not the one before it
        misordered = 0.0 if again else W_ORDER * self.order_breaks(start, steps)
        # ... and so were they read with a pause between two players' changes
        across = 0.0 if again else W_PAUSE * self.pauses_within(start, steps)
        cut = None if again else self._still_till_pause(frame)
        if cut is not None and len(now) == len(self.marked(frame)):
            # the table stood as accepted until the last pause ended: every step that changes
            # it came after the pause, and its arm too; the arms before it are the reading's
            # steps before its first such step (a Research declined), or none, after the
            # current player's main action their own busy hands first (as below)
            k = next((i for i, st in enumerate(steps) if st.kind in AREA_STEPS), len(steps))
            moves = [m for _, ms in _turns(start, steps, earlier) for m in ms]
            early = len([m for _, ms in _turns(start, steps[:k], earlier) for m in ms])
            before, after = _runs(moves[:early]), _runs(moves[early:])
            if lead:
                before = _runs([(start.current, ANY), *moves[:early]])
            # the last of those may go on after the pause (a Research's cards put back)
            tail = before[-1:]
            fit = reach_cost(before, now[:cut], free_first=lead)
            fit += reach_cost([*tail, *after], now[cut + 1 :], free_first=bool(tail))
            fit += W_PAUSE * len(_done_unexplained(now[:cut], before, after))
        else:
            fit = min(
                reach_cost([(start.current, ANY), *order] if lead else order, seen, free_first=lead)
                for order in orders(start, steps, earlier)
            )
        return pause + misordered + across + fit

    def _still_till_pause(self, frame: int) -> int | None:
        """Where the last pause among the arms seen before ``frame`` is (its index in
        :meth:`marked`), if the table did not change before that pause ended; else ``None``."""
        marked = self.marked(frame)
        if PAUSE not in marked:
            return None
        cut = len(marked) - 1 - marked[::-1].index(PAUSE)
        arm = cut - marked[:cut].count(PAUSE)  # the first arm after the pause
        seen = [f for f, _, _ in self.seen if f < frame]
        begin, after = seen[arm - 1], seen[arm]
        # the pause ended with the first thing that moved after it: an arm, or a change (a zone
        # read changing under an arm the camera missed); a change then is the pause's end
        events = [begin, *sorted(c for c in self.changes if begin < c < after), after]
        end = max(b for a, b in pairwise(events) if b - a - 1 >= PAUSE_FRAMES)
        if any(c < end for c in self.changes):
            return None
        return cut

    def turns(self, start: State, frame: int, skip_first: bool = False) -> int | None:
        """How many turns the arms seen before ``frame`` say ended, if every arm reached in its
        own turn (the seats in turn order from the current player; ``None``: no arm but the
        current player's was seen). ``skip_first``: the first other player's arm left out (a
        move out of turn before the current player's own)."""
        if not self.reported:
            return None
        n, seat, ends = start.num_players, start.current, 0
        seats = [s for s, cls in self.marked(frame) if 0 <= s < n or (s, cls) == PAUSE]
        if skip_first:
            first = next((i for i, s in enumerate(seats) if s not in (start.current, PAUSE[0])), None)
            if first is None:
                return None
            rest = seats[first:]
            seats = seats[:first] + rest[next((i for i, s in enumerate(rest) if s != rest[0]), len(rest)) :]
        # a pause after the turn's player's arm (seen steadily), and their arm again: their turn
        # was over (a Research declined), and they reached in during the next player's turn
        last: int | None = None
        run, paused = 0, False
        for s in seats:
            if s == PAUSE[0]:
                paused = run >= DONE_FRAMES
                continue
            if s == last and not paused:
                run += 1
                continue
            if s != seat:
                ends += (s - seat) % n
                seat = s
            elif paused and s == last:
                ends += 1
                seat = (s + 1) % n
            last, run, paused = s, 1, False
        return ends or None


def _done_unexplained(early: Sequence[Sighting], before: Sequence[Actor], after: Sequence[Actor]) -> set[int]:
    """The players whose arm was seen in :data:`DONE_FRAMES` frames or more just before a pause
    (``early``: the arms up to it) that a reading has do nothing before the pause (``before``)
    and act after it (``after``): their turn goes on past the pause, which ended it (a Research
    declined, then a marble taken in the next player's turn, read as their own Pick)."""
    stretch = early[len(early) - early[::-1].index(PAUSE) :] if PAUSE in early else early
    done = {seat for seat, _ in stretch if [s for s, _ in stretch].count(seat) >= DONE_FRAMES}
    return (done - {seat for seat, _ in before}) & {seat for seat, _ in after}


def refill_unseen(steps: Sequence[Step]) -> bool:
    """Whether a reading ends with a marble taken from the Energy Row and the refill that put
    back the same colour: the Row then reads as it did before, so no steady read of the table
    dates the refill's landing (it came after the Pick's own change, unseen)."""
    last = max((i for i, st in enumerate(steps) if not st.is_chance), default=None)
    if last is None or last == len(steps) - 1 or steps[last].kind != "pick":
        return False
    return all(st.kind == "dispense" and st.color == steps[last].color for st in steps[last + 1 :])


def _first_area_steps(start: State, steps: Sequence[Step]) -> dict[int, tuple[int, int, bool]]:
    """Per player, a reading's first step changing their area: its index, the turn it falls in
    (0: the current one) and whether it is out of turn."""
    first: dict[int, tuple[int, int, bool]] = {}
    turn, current = 0, start.current
    for i, step in enumerate(steps):
        if step.kind == "end_turn":
            turn, current = turn + 1, (current + 1) % start.num_players
        elif step.kind in AREA_STEPS and step.player is not None:
            first.setdefault(step.player, (i, turn, step.player != current))
    return first


def goes_on(steps: Sequence[Step]) -> bool:
    """Whether a reading has the current turn go on: a player acts before any end of turn."""
    for step in steps:
        if step.kind == "end_turn":
            return False
        if not step.is_chance:
            return True
    return False


def _deferred(seen: Sequence[Sighting], involved: set[int], settling: int | None = None) -> int:
    """How many of the last arms seen belong to players a reading does not involve: the next
    player reaching in while the table the reading explains was still settling (a hand over a
    deck hides nothing). They are left for the next reading rather than weighed as strays.
    ``settling``: how many arms were seen once the table had begun to change (``None``: not
    known); an arm before that came before what the reading explains, and is weighed with it."""
    k = arms = 0
    while k < len(seen) and seen[len(seen) - 1 - k][0] not in involved:
        arms += seen[len(seen) - 1 - k] != PAUSE
        if settling is not None and arms > settling:
            break
        k += 1
    return k


def _turns(start: State, steps: Sequence[Step], seen: bool = False) -> list[tuple[int, list[Actor]]]:
    """Per turn of a reading: the player whose turn it is, and the players of its steps in
    order with where their hands went (that player's own, or another's out of turn), the player
    of a turn that left no trace acting once (a Research declined: the arm reaches to a deck).
    ``seen``: the current player's arm was already seen this turn (accounted for by the last
    accepted reading)."""
    out: list[tuple[int, list[Actor]]] = [(start.current, [])]
    acted = start.main_done or seen  # the current turn's main action came before the reading
    for step in steps:
        if step.is_chance or step.kind == "skip":
            continue
        seat, moves = out[-1]
        if step.kind == "end_turn":
            if not acted:
                moves.append((seat, frozenset({"deck"})))
            out.append(((seat + 1) % start.num_players, []))
            acted = False
            continue
        moves.append((step.player if step.player is not None else seat, step_classes(step)))
        acted = True
    return out


def _runs(moves: Iterable[Actor]) -> list[Actor]:
    """One entry per run of the same player, with every place their hands went in it."""
    out: list[Actor] = []
    for seat, classes in moves:
        if out and out[-1][0] == seat:
            out[-1] = (seat, out[-1][1] | classes)
        else:
            out.append((seat, classes))
    return out


def actors(start: State, steps: Sequence[Step], seen: bool = False) -> list[int]:
    """The players a reading says acted, in order, one entry per run: the player of each of its
    steps, and the player of each turn it ends that left no trace (a Research declined: the
    player's arm reached to a deck). Ending a turn and random outcomes are no gesture."""
    return [seat for seat, _ in _runs(m for _, moves in _turns(start, steps, seen) for m in moves)]


#: Readings whose moves out of turn could be ordered in more ways than this are weighed in their
#: own order only.
MAX_ORDERS = 16


def orders(start: State, steps: Sequence[Step], seen: bool = False) -> list[list[Actor]]:
    """The orders in which a reading's players may have acted (:func:`actors`, with where their
    hands went): a move out of turn is placed by the search among the turn's own moves wherever
    the table allows, and the table rarely tells (a marble taken before or after the current
    player's Build), so within a turn the player's own moves may come before, between or after
    the others' moves out of turn (those keep their order)."""
    options: list[list[Actor]] = [[]]
    for seat, moves in _turns(start, steps, seen):
        others = [m for m in moves if m[0] != seat]
        if not others or len(others) == len(moves):
            options = [o + moves for o in options]
            continue
        own = [m for m in moves if m[0] == seat]
        turn = [others[:k] + own + others[k:] for k in range(len(others) + 1)]
        if len(options) * len(turn) > MAX_ORDERS:
            options = [o + moves for o in options]
            continue
        options = [o + t for o in options for t in turn]
    return [_runs(o) for o in options]


def stray(frames: int) -> float:
    """The weight of an arm no step of a reading explains, seen in ``frames`` frames in a row:
    a stray hand or a misread seat is a frame or two, an arm that stays longer is someone acting."""
    return min(W_STRAY + W_LINGER * (frames - 1), W_STRAY_MAX)


def _off(where: Counter[str], places: frozenset[str]) -> float:
    """The weight of the frames of one run of an arm over places no step of the reading sends
    its hand to (``places``), when they outnumber the frames over those places: a stray run
    (:func:`stray`) if none was over them, and so if most were not (one frame over the Row in a
    run of eight over a deck is a misread zone, not a Pick's gesture: before, any one frame
    over a right place excused the rest). A hand over no place the camera can tell
    (``table``) says nothing either way."""
    right = sum(count for cls, count in where.items() if cls in places)
    wrong = sum(where.values()) - right - where["table"]
    return stray(wrong) if wrong > right else 0.0


def reach_cost(
    expected: Sequence[int | Actor], seen: Sequence[int | Sighting], free_first: bool = False
) -> float:
    """The weight of the arms ``seen`` (a seat, or a seat and where its hand was, per sighting,
    in order) against the players ``expected`` to act (in order, one per run; a seat, or a seat
    and where their hands go): each expected player whose arm was not seen in its place costs
    W_MISSED, each run of sightings of one arm that no expected player accounts for
    :func:`stray`, and so does a run of the right player's arm none of whose sightings was
    over a place the reading sends their hands to (a Pick seen only over a deck); an expected
    player accounts for any number of runs of their own arm (one gesture seen in several
    frames, or several gestures), even with a stray arm between them. The cheapest alignment."""
    want = [(e, ANY) if isinstance(e, int) else e for e in expected]
    runs: list[tuple[int, int, Counter[str]]] = []  # (seat, frames, frames over each place)
    split = True
    for s in seen:
        seat, cls = (s, "table") if isinstance(s, int) else s
        if (seat, cls) == PAUSE:
            split = True
            continue
        if runs and runs[-1][0] == seat and not split:
            runs[-1][2][cls] += 1
            runs[-1] = (seat, runs[-1][1] + 1, runs[-1][2])
        else:
            runs.append((seat, 1, Counter({cls: 1})))
        split = False
    n = len(want)
    # state: (how many expected players were reached, whether the last of them was seen) -> cost
    best: dict[tuple[int, bool], float] = {(0, False): 0.0}
    for seat, frames, where in runs:
        nxt: dict[tuple[int, bool], float] = {}
        for (i, hit), cost in best.items():
            options = [((i, hit), cost + stray(frames))]
            if i and want[i - 1][0] == seat:  # the same player's arm again
                options.append(((i, True), cost + _off(where, want[i - 1][1])))
            missed = W_MISSED * (i > 0 and not hit and not (free_first and i == 1))
            for k in range(i, n):  # the next players, those skipped missed
                if want[k][0] == seat:
                    fit = _off(where, want[k][1])
                    skipped = k - i - (free_first and i == 0 and k > 0)
                    options.append(((k + 1, True), cost + missed + W_MISSED * skipped + fit))
            for key, c in options:
                if c < nxt.get(key, float("inf")):
                    nxt[key] = c
        best = nxt
    return min(
        cost
        + W_MISSED * ((i > 0 and not hit and not (free_first and i == 1)) + n - i - (free_first and i == 0))
        for (i, hit), cost in best.items()
    )
