"""What the dashboard shows before the tracker is sure of it, marked provisional (issue 13's delay).

The tracker accepts a change only once every zone it touches reads the same in three observed
frames, and decides a rule break that finishing the turn could mend (a Build still being paid)
only at the turn's end. Both are right for the record, and both make a player wait: a Build
chained into a triggered Use leaves the table in full view for two or three frames only, and an
underpaid Build waits for the next player's move. So the tracker also keeps its *provisional
reading*, never recorded, shown on the dashboard as such until it is accepted (it then moves to
the move log) or dropped (the table read otherwise):

* the complete table of the last observed frame, not yet read three times, where legal play
  alone explains it as exactly one table, with no rule broken, no turn that left no trace and
  (camera only) the players' arms bearing it out; read the same in two frames and explained only
  with a rule broken, the steps before that break (never the break itself);
* a rule break seen steadily (three readings) whose verdict waits for the end of the turn: its
  steps and the warnings they would give, "the turn may still mend it".

Nothing here changes what is accepted or warned, or when.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from referee.game import Game
from referee.gizmos import IllegalStep, State, Step, apply, force
from referee.tracker.explain import Explanation
from referee.tracker.verdicts import describe_violation

#: Observed frames a table must read the same in before the steps ahead of a rule break in its
#: reading are shown (one for a reading legal play alone explains; the record needs
#: :attr:`TrackerSettings.frames`, three).
PROVISIONAL_FRAMES = 2

#: Why a reading is provisional.
READ_ONCE = "seen, not yet read the three times the record needs"
BEFORE_A_BREAK = "seen twice, before a step that looks like a rule break (not yet judged)"
AWAITING_VERDICT = "a rule break awaiting the end of the turn (the turn may still mend it)"


@dataclass(frozen=True, slots=True)
class Provisional:
    """The tracker's reading of a table it has not accepted yet: its steps (from the accepted
    state, in the game's turn ``turn``), the rules they would break as (step index, code), the
    move-log lines and warnings they would give, and why they are not accepted yet."""

    turn: int
    steps: tuple[Step, ...]
    breaks: tuple[tuple[int, str], ...]
    lines: tuple[str, ...]
    warnings: tuple[str, ...]
    why: str

    def to_json(self, game: Game[State, Step]) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "steps": [game.step_to_json(st) for st in self.steps],
            "breaks": [{"step": i, "code": code} for i, code in self.breaks],
            "lines": list(self.lines),
            "warnings": list(self.warnings),
            "why": self.why,
        }


def provisional(
    game: Game[State, Step], state: State, found: Explanation, names: list[str], why: str
) -> Provisional:
    """The reading ``found`` (from ``state``) as the dashboard would show it once accepted: a
    move-log line per player step, a warning text per broken rule."""
    broken: dict[int, list[IllegalStep]] = {}
    for i, err in found.violations:
        broken.setdefault(i, []).append(err)
    lines: list[str] = []
    warnings: list[str] = []
    now = state
    for i, step in enumerate(found.steps):
        seat = step.player if step.player is not None else now.current
        if not step.is_chance:
            lines.append(game.describe(step, names[seat]))
        for err in broken.get(i, []):
            warnings.append(describe_violation(step, err, now, names[seat])[0])
        if now.game_over:
            break
        now = force(now, step)[0] if found.forced[i] else apply(now, step)
    return Provisional(
        state.turn,
        tuple(found.steps),
        tuple((i, err.code) for i, err in found.violations),
        tuple(lines),
        tuple(warnings),
        why,
    )
