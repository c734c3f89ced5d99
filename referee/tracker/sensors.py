"""Sensor reconciliation: what the dispenser board reported in a turn against what the camera's
accepted steps moved through the dispenser.

The board's counts corroborate the camera, never warn alone: they order and bound the search
(:meth:`Sensors.hints`) and, when a turn ends, any disagreement with the accepted steps becomes an
uncertain warning (:meth:`Sensors.disagreements`). The board's button is an end-of-turn signal;
the tracker handles that part (it also comes from the dashboard and the keyboard).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from referee.events import DispenserEvent
from referee.gizmos import State, Step
from referee.gizmos.cards import COLOR_INDEX, COLORS
from referee.tracker.explain import Hints


@dataclass(slots=True)
class Tally:
    """What the dispenser sensors reported during one turn."""

    returned: int = 0
    row: list[str] = field(default_factory=list)
    draws: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Done:
    """What the accepted steps of the current turn moved through the dispenser."""

    paid: int = 0
    builds: list[tuple[int, int]] = field(default_factory=list)  # (card, marbles paid)
    row: list[int] = field(default_factory=list)
    draws: list[int] = field(default_factory=list)


@dataclass(slots=True)
class Sensors:
    """The dispenser's side of the current turn and of the turns signalled over but not yet
    explained, and the camera's side (``done``) of the current turn. Changed in place; the
    tracker copies it deeply to put it back after a failed record write."""

    reported: bool = False  # a dispenser board has reported something
    draws_sensed: bool = False  # ... including blind draws (the reference build has no sensor)
    sensed: Tally = field(default_factory=Tally)  # the current turn, since the last end signal
    closed: list[Tally] = field(default_factory=list)  # turns signalled over, not yet explained
    done: Done = field(default_factory=Done)

    def on_dispenser(self, event: DispenserEvent) -> None:
        """Count one sensor event (the button's end of turn is the tracker's to handle)."""
        self.reported = True
        if event.kind == "row_refill":
            self.sensed.row.append(event.color or "unknown")
        elif event.kind == "draw":
            self.draws_sensed = True
            self.sensed.draws.append(event.color or "unknown")
        elif event.kind == "return":
            self.sensed.returned += event.count

    def close_turn(self) -> None:
        """An end-of-turn signal: what was sensed since belongs to the next turn."""
        self.closed.append(self.sensed)
        self.sensed = Tally()

    def on_step(self, before: State, step: Step, setup: bool) -> None:
        """An accepted step: count what it moved through the dispenser. ``setup``: a chance step
        of the game's set-up, not part of the first turn (a sensed refill is used up)."""
        done = self.done
        if setup:
            if before.chance and before.chance[0][0] == "row" and self.sensed.row:
                self.sensed.row.pop(0)
        elif step.kind == "build":
            paid = sum(step.pay or ())
            done.paid += paid
            done.builds.append((step.card or 0, paid))
        elif step.kind == "dispense" and before.chance:
            (done.row if before.chance[0][0] == "row" else done.draws).append(step.color or 0)

    def end_turn(self) -> tuple[Tally, Done]:
        """A turn ended: its sensed tally (the oldest signalled one) and its accepted steps' counts."""
        tally = self.closed.pop(0) if self.closed else self.sensed
        if tally is self.sensed:
            self.sensed = Tally()
        done, self.done = self.done, Done()
        return tally, done

    def restart_turn(self) -> None:
        """The turn is explained again from its start: nothing of it is accepted yet."""
        self.done = Done()

    def reset(self) -> None:
        """A person changed what the referee believes: the turns' counts start afresh."""
        self.closed.clear()
        self.sensed = Tally()
        self.done = Done()

    def hints(self, urgent: bool, fresh: bool, sensed: bool, ring_seen: bool) -> Hints:
        """The sensors' part of the search's hints. ``fresh``: for an explanation from the start
        of the turn (nothing of the turn accepted yet); ``sensed``: the turn's counts (marbles
        returned, Row refills) must be met (the count of returns always, while the paying ring is
        out of view, ``ring_seen`` false)."""
        done = Done() if fresh else self.done
        tallies = [*self.closed, self.sensed]
        rows = [COLOR_INDEX.get(c, -1) for t in tallies for c in t.row][len(done.row) :]
        draws = [COLOR_INDEX.get(c, -1) for t in tallies for c in t.draws][len(done.draws) :]
        returned = refills = None
        if urgent and self.reported and self.closed and (sensed or not ring_seen):
            # What is left to explain of the turn's counts (below zero when the turn's accepted
            # steps already exceed them: only explaining the turn again can meet them).
            returned = self.closed[0].returned - done.paid
            if sensed:
                refills = len(self.closed[0].row) - len(done.row)
        return Hints(
            row_colors=tuple(rows),
            draw_colors=tuple(draws),
            returned=returned,
            refills=refills,
            strict_rows=refills is not None,
            strict_draws=self.draws_sensed and not ring_seen,
        )

    def disagreements(self, tally: Tally, done: Done, name: str) -> list[str]:
        """Where the dispenser sensors and the accepted steps of ``name``'s turn disagree (fusion)."""
        out = []
        if tally.returned != done.paid:
            built = ", ".join(f"#{c} ({n})" for c, n in done.builds) or "nothing"
            out.append(
                f"the dispenser counted {tally.returned} marble(s) returned this turn, but the camera saw "
                f"{name} pay {done.paid} (built {built}): please confirm the payment"
            )
        for kind, sensed, seen, on in (
            ("rolled into the Energy Row", tally.row, done.row, True),
            ("drawn from the dispenser", tally.draws, done.draws, self.draws_sensed),
        ):
            if not on:
                continue
            known = Counter(c for c in sensed if c in COLOR_INDEX)
            camera = Counter(COLORS[c] for c in seen)
            if len(sensed) != len(seen) or known - camera:
                out.append(
                    f"marbles {kind}: the dispenser sensed {_color_list(sensed)}, the camera saw "
                    f"{_color_list([COLORS[c] for c in seen])}: please confirm"
                )
        return out


def _color_list(colors: list[str]) -> str:
    if not colors:
        return "none"
    return ", ".join(colors)
