"""Referee benchmark: how well the tracker turns camera frames into legal steps and warnings.

Builds a corpus of seeded games (the rules engine plays them with simple players, three
tastes round the table), turns each into the observation sequence a camera would report
(``referee.simulation.synthetic``: the set-up table, then every table held for a few frames, tables caught
half-way through a refill, an end-of-turn signal per turn) and injects one rule break into
about 10% of the turns: a class the table allows at that moment, kept only if no legal play
from the start of the turn explains the table it makes (an exhaustive legal search decides),
the player stopping there. After about half of the games a player takes a marble anyway.
The same corpus is fed to fresh trackers (each with a real SQLite record): noise-free, and with
the default camera noise (missing zones, confidence dips, a hand covering a zone for a few
frames, single-frame misreads); ``--sensors`` adds a run with the dispenser's events.

Prints, per run: recall and precision per violation class (a warning is right when its code,
player and turn match the injection), the false-warning rate on legal turns (violations and
"uncertain" readings counted apart), how many turns were explained by the time their end
signal was handled, whether each game ended on the true table, and times: the explanation
searches per turn, all tracker calls per turn (every frame, searches, durable record writes),
and per call; medians, p99 and max.

    .venv/bin/python benchmarks/referee.py [--games 20] [--players 3] [--seed 0] [--rate 0.1] [--sensors]
        [--runs camera-only] [--node-bound] [--only-game K] [--verbose] [--trace]

``--node-bound`` bounds every search by its node count alone (no time bound), so the verdicts
do not depend on the machine's load (only the times do); ``--only-game K`` feeds game K alone.
``--trace`` prints, frame by frame, what each game showed (the true turn, its steps and rule
break, each table and each arm reaching in, seen or missed) next to what the tracker accepted,
warned and noted at that frame: the way to find why a turn was misread.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.app.percentiles import p99
from referee.gizmos import State
from referee.simulation.breaks import VIOLATIONS
from referee.simulation.synthetic import Camera, Feeder, Noise, ReachNoise, TurnScript, simulated_game
from referee.tracker import Tracker
from referee.tracker.base import TrackerSettings
from referee.tracker.explain import Hints, Limits, explain
from referee.tracker.view import view_of

#: Bounds of the exhaustive check that an injected table has no legal explanation.
PROOF = Limits(max_player_steps=14, max_nodes=200_000, max_seconds=30.0)


def no_legal_play(before: State, after: State, ends: int) -> bool:
    """True when a legal sequence explains ``after`` from ``before`` (the injection is dropped)."""
    return explain(before, view_of(after), Hints(end_turns=ends), 0, PROOF) is not None


@dataclass
class Result:
    """What one corpus run measured."""

    turns: int = 0
    injected: Counter[str] = field(default_factory=Counter)
    hits: Counter[str] = field(default_factory=Counter)
    raised: Counter[str] = field(default_factory=Counter)  # violation warnings by code
    right: Counter[str] = field(default_factory=Counter)  # ... that matched an injection
    legal_turns: int = 0
    legal_violation_turns: int = 0
    legal_uncertain_turns: int = 0
    signalled: int = 0  # turns ended by a signal
    caught_up: int = 0  # ... explained by the time their end signal was handled
    games: int = 0
    games_in_sync: int = 0  # games whose final table the tracker holds exactly
    sensor_uncertain: int = 0  # camera/sensor disagreements reported (sensor runs only)
    steps_true: int = 0  # player steps played (end of turn included)
    unaligned: Counter[str] = field(default_factory=Counter)  # played steps not aligned, by kind
    steps_matched: int = 0  # ... accepted as the same step (player, kind, card, color, gizmo)
    steps_right_turn: int = 0  # ... with the same turn number
    slips: int = 0  # places where the tracker's turn count departs from the true one (or returns)
    round_slips: int = 0  # ... by whole rounds (a round of turns that left no trace, or not)
    turn_seconds: list[float] = field(default_factory=list)  # all tracker calls of a turn
    search_seconds: list[float] = field(default_factory=list)  # the explanation searches of a turn
    search_cpu: list[float] = field(default_factory=list)  # ... in the thread's CPU time
    call_seconds: list[float] = field(default_factory=list)


def corpus(games: int, players: int, seed: int, rate: float) -> list[list[TurnScript]]:
    """The seeded games, each a list of turn scripts (the setup first)."""
    out = []
    for g in range(games):
        started = time.perf_counter()
        scripts = list(
            simulated_game(players, seed + g, violation_rate=rate, legal=no_legal_play, game_over_rate=0.5)
        )
        out.append(scripts)
        injected = sum(s.injected is not None for s in scripts)
        print(
            f"  corpus game {g + 1}/{games}: {len(scripts) - 1} turns, {injected} injected "
            f"({time.perf_counter() - started:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
    return out


def search_callers() -> tuple[Any, ...]:
    """The tracker's modules that call the explanation search: each imports ``explain`` by name,
    so a timer must wrap it in each. Found, not listed, so that the next split cannot leave a
    caller untimed (the tracker's split of 2026-11-24 did, twice)."""
    import referee.tracker

    found = []
    for info in pkgutil.iter_modules(referee.tracker.__path__, "referee.tracker."):
        module = importlib.import_module(info.name)
        if info.name != "referee.tracker.explain" and getattr(module, "explain", None) is explain:
            found.append(module)
    return tuple(found)


class SearchClock:
    """Times every explanation search the tracker runs, in wall-clock and in the thread's CPU
    time (the machine is shared: CPU time moves less with the load). Wraps ``explain`` in every
    tracker module that calls it (each imports it by name)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.cpu = 0.0
        self._explain = explain
        self._modules = search_callers()

    def __enter__(self) -> SearchClock:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                return self._explain(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t0
                self.cpu += time.thread_time() - c0

        for module in self._modules:
            module.explain = timed
        return self

    def __exit__(self, *exc: object) -> None:
        for module in self._modules:
            module.explain = self._explain


def run(
    games: list[list[TurnScript]],
    noise: Noise,
    seed: int,
    label: str,
    verbose: bool = False,
    sensors: bool = False,
    camera_only: bool = False,
    reaches: ReachNoise | None = None,
    settings: TrackerSettings | None = None,
    trace: bool = False,
) -> Result:
    """Feed every game to a fresh tracker (a real SQLite record) and score its warnings.
    ``camera_only``: no end-of-turn signals (and no sensor events): turns are inferred.
    ``reaches``: the camera reports the players' arms reaching in, with this noise."""
    res = Result()
    with SearchClock() as clock, tempfile.TemporaryDirectory() as tmp:
        for g, scripts in enumerate(games):
            names = [f"P{i + 1}" for i in range(scripts[0].final.num_players)]
            tracker = Tracker.create(Path(tmp) / f"game{g}.db", names, settings=settings)
            calls: list[float] = []
            feeder = Feeder(
                tracker,
                Camera(noise, seed + g, reaches),
                sensors=sensors,
                on_call=calls.append,
                signals=not camera_only,
            )
            by_turn: dict[int, TurnScript] = {}
            tracer = Tracer(feeder) if trace else None
            for script in scripts:
                calls.clear()
                clock.seconds = clock.cpu = 0.0
                if tracer is not None:
                    tracer.turn(script)
                feeder.turn(script)
                res.call_seconds += calls
                if script.turn < 0:
                    continue
                by_turn[script.turn] = script
                res.turn_seconds.append(sum(calls))
                res.search_seconds.append(clock.seconds)
                res.search_cpu.append(clock.cpu)
                if feeder.signals:
                    res.signalled += script.end_signal
                    res.caught_up += script.end_signal and tracker.state.turn > script.turn
            feeder.show(scripts[-1].final, 10)  # the table after the end, for the last verdicts
            truth = next(s.final for s in reversed(scripts) if s.end_signal)
            res.games += 1
            res.games_in_sync += view_of(tracker.state).key()[:3] == view_of(truth).key()[:3]
            if verbose:
                print(f"  game {g + 1} (seed {seed + g}):", file=sys.stderr)
            _score(res, tracker, by_turn, verbose)
            _attribution(res, tracker, scripts, verbose)
            res.sensor_uncertain += sum("dispenser" in w.message for w in tracker.warnings)
            tracker.record.close()
            print(
                f"  {label}: game {g + 1}/{len(games)} fed ({len(by_turn)} turns, "
                f"{sum(w.kind == 'violation' for w in tracker.warnings)} violation warnings)",
                file=sys.stderr,
                flush=True,
            )
    return res


class Tracer:
    """Prints a game frame by frame as it is fed (``--trace``): the truth (each turn's player,
    steps and rule break; each table and arm reaching in, seen or missed) and, at the frame it
    happened, what the tracker accepted (its move-log lines, with the turn each is put in),
    took back, warned and noted."""

    def __init__(self, feeder: Feeder) -> None:
        self.feeder = feeder
        self.tracker = feeder.tracker
        self.lines = 0
        self.warnings = 0
        self.notes = 0
        show = feeder.show

        def traced(
            state: State | None = None, frames: int = 6, gesture: Any = None, seen: bool = True
        ) -> list[Any]:
            what = "table"
            if gesture is not None:
                what = f"arm of P{gesture[0] + 1} over {gesture[1]}{'' if seen else ' (missed)'}"
            out = []
            for k in range(frames):  # one frame at a time: the same frames, each followed by its verdicts
                first = feeder.camera.frame + 1
                out += show(state if k == 0 else None, 1, gesture, seen)
                if k == 0:
                    print(f"      f{first}: {what} ({frames} frames)", file=sys.stderr)
                self.after(feeder.camera.frame)
            return out

        feeder.show = traced  # type: ignore[method-assign]  # the method wrapped for this run only

    def turn(self, script: TurnScript) -> None:
        if script.turn < 0:
            print("  setup", file=sys.stderr)
            return
        steps = ", ".join(
            f"{st.kind}{'' if st.player in (None, script.player) else f'@{st.player}'}"
            + "".join(f" {k}={v}" for k, v in st.to_json().items() if k in ("card", "color", "gizmo"))
            for st in script.steps
        )
        inj = f"  ** {script.injected.code} by P{script.injected.player + 1}" if script.injected else ""
        print(f"  TRUE turn {script.turn} P{script.player + 1}: {steps}{inj}", file=sys.stderr)

    def after(self, frame: int) -> None:
        """What the tracker did at ``frame``: lines accepted or taken back, warnings, notes."""
        t = self.tracker
        if len(t.log) < self.lines:
            print(f"        f{frame}: took back to line {len(t.log)}", file=sys.stderr)
            self.lines = len(t.log)
        for line in t.log[self.lines :]:
            who = "  " if line.player is None else f"P{line.player + 1}"
            print(
                f"        f{frame}: accepted turn {line.turn} {who}: {line.text}"
                f"{' [forced]' if line.forced else ''}",
                file=sys.stderr,
            )
        self.lines = len(t.log)
        for w in t.warnings[self.warnings :]:
            print(
                f"        f{frame}: WARNING {w.kind} {w.code} turn {w.turn} P{(w.player or 0) + 1}",
                file=sys.stderr,
            )
        self.warnings = len(t.warnings)
        for note in t.notes[self.notes :]:
            print(f"        f{frame}: note: {note}", file=sys.stderr)
        self.notes = len(t.notes)


def _score(res: Result, tracker: Tracker, by_turn: dict[int, TurnScript], verbose: bool) -> None:
    warned: dict[int, list[tuple[str, str | None, int | None]]] = defaultdict(list)
    for w in tracker.warnings:
        warned[w.turn].append((w.kind, w.code, w.player))
        script = by_turn.get(w.turn)
        inj = script.injected if script is not None else None
        ok = inj is not None and inj.code == w.code and inj.player == w.player
        if w.kind == "violation" and w.code is not None:
            res.raised[w.code] += 1
            res.right[w.code] += ok
        if verbose and not ok:
            print(f"    unexpected warning (injected: {inj}): {w.to_json()}", file=sys.stderr)
    for turn, script in by_turn.items():
        res.turns += 1
        inj = script.injected
        if inj is None:
            res.legal_turns += 1
            kinds = {k for k, _, _ in warned.get(turn, [])}
            res.legal_violation_turns += "violation" in kinds
            res.legal_uncertain_turns += "uncertain" in kinds
            continue
        res.injected[inj.code] += 1
        if any(k == "violation" and c == inj.code and p == inj.player for k, c, p in warned.get(turn, [])):
            res.hits[inj.code] += 1
        elif verbose:
            print(f"    missed {inj}; warned that turn: {warned.get(turn, [])}", file=sys.stderr)


def _step_key(step: dict[str, Any]) -> tuple[object, ...]:
    return tuple(step.get(k) for k in ("kind", "player", "card", "color", "gizmo", "level"))


def _align(a: list[tuple[object, ...]], b: list[tuple[object, ...]]) -> list[tuple[int, int]]:
    """The pairs (i, j) of a longest common subsequence of ``a`` and ``b``, each pair taken as
    early as the longest allows. Not :mod:`difflib`: its matcher takes the longest run of equal
    items first, and a run that recurs later in the game (a player's declined Research, whose
    cards the camera never sees, then the same next steps) could pair steps turns apart and leave
    the true pairs unmatched (seed 4043: four steps of turns 70-71 paired with turns 67-68)."""
    n, m = len(a), len(b)
    longest = [[0] * (m + 1) for _ in range(n + 1)]  # of a[i:] and b[j:]
    for i in range(n - 1, -1, -1):
        row, below = longest[i], longest[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], row[j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j] and longest[i][j] == longest[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif longest[i + 1][j] >= longest[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _attribution(res: Result, tracker: Tracker, scripts: list[TurnScript], verbose: bool) -> None:
    """Whether each step played was accepted on its turn: the accepted player steps are aligned
    with the played ones (same player, kind, card, color, gizmo; a longest common subsequence,
    :func:`_align`), and each aligned pair is compared by turn number. A step explained otherwise
    (a marble drawn read as picked) is not aligned, and counted apart."""
    truth = [(s.turn, st.to_json()) for s in scripts for st in s.steps]
    got = [(line.turn, line.step) for line in tracker.log if line.player is not None]
    a, b = [_step_key(st) for _, st in truth], [_step_key(st) for _, st in got]
    res.steps_true += len(truth)
    offset = 0  # the tracker's turn count minus the true one, at the last aligned step
    pairs = _align(a, b)
    aligned = {i for i, _ in pairs}
    res.unaligned.update(str(st.get("kind")) for i, (_, st) in enumerate(truth) if i not in aligned)
    for i, j in pairs:
        res.steps_matched += 1
        want, have = truth[i][0], got[j][0]
        res.steps_right_turn += want == have
        if have - want != offset:
            res.slips += 1
            res.round_slips += (have - want - offset) % scripts[0].final.num_players == 0
            if verbose:
                print(
                    f"    the turn count slips by {have - want - offset}: step "
                    f"{truth[i][1]} of turn {want} accepted on turn {have}",
                    file=sys.stderr,
                )
            offset = have - want


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:6.1f}%" if b else "     - "


def report(res: Result, label: str) -> None:
    print(f"\n== {label}: {res.turns} turns, {sum(res.injected.values())} with an injected violation")
    print(f"{'class':<20}{'injected':>9}{'recall':>9}{'warned':>8}{'precision':>11}")
    for code in VIOLATIONS:
        if res.injected[code] or res.raised[code]:
            print(
                f"{code:<20}{res.injected[code]:>9}{_pct(res.hits[code], res.injected[code]):>9}"
                f"{res.raised[code]:>8}{_pct(res.right[code], res.raised[code]):>11}"
            )
    for code in sorted(set(res.raised) - set(VIOLATIONS)):
        print(f"{code:<20}{0:>9}{'':>9}{res.raised[code]:>8}{_pct(0, res.raised[code]):>11}")
    total_inj, total_hit = sum(res.injected.values()), sum(res.hits.values())
    total_raised, total_right = sum(res.raised.values()), sum(res.right.values())
    print(
        f"{'all':<20}{total_inj:>9}{_pct(total_hit, total_inj):>9}{total_raised:>8}"
        f"{_pct(total_right, total_raised):>11}"
    )
    print(
        f"legal turns: {res.legal_turns}; with a false violation warning: {res.legal_violation_turns} "
        f"({_pct(res.legal_violation_turns, res.legal_turns).strip()}); with an 'uncertain' reading: "
        f"{res.legal_uncertain_turns} ({_pct(res.legal_uncertain_turns, res.legal_turns).strip()})"
    )
    if res.signalled:
        print(
            f"turns explained by the time their end signal was handled: {res.caught_up} of {res.signalled} "
            "(the rest waited for a clear view)"
        )
    print(f"games ending with the tracker on the true table: {res.games_in_sync} of {res.games}")
    print(
        f"steps attributed to the right turn: {res.steps_right_turn} of {res.steps_matched} "
        "accepted as played "
        f"({_pct(res.steps_right_turn, res.steps_matched).strip()}); {res.steps_true - res.steps_matched} of "
        f"{res.steps_true} played steps were explained otherwise or not at all"
    )
    if res.unaligned:
        kinds = ", ".join(f"{kind} {n}" for kind, n in res.unaligned.most_common())
        print(f"  played steps explained otherwise or not at all, by kind: {kinds}")
    print(
        f"turn count slips (the tracker's count departs from the true one): {res.slips}, "
        f"{res.round_slips} of them by whole rounds"
    )
    if res.sensor_uncertain:
        print(f"camera/sensor disagreements reported: {res.sensor_uncertain}")
    print(f"time to explain a turn (searches): {_spread(res.search_seconds)}")
    print(f"  the same in CPU time: {_spread(res.search_cpu)}")
    print(
        f"tracker time per turn (every frame, searches, durable record writes): {_spread(res.turn_seconds)}"
    )
    print(f"per tracker call: {_spread(res.call_seconds, 2)} over {len(res.call_seconds)} calls")


def _spread(seconds: list[float], digits: int = 1) -> str:
    ms = sorted(1000 * s for s in seconds)
    return (
        f"median {statistics.median(ms):.{digits}f} ms, p99 {p99(ms):.{digits}f} ms, "
        f"max {ms[-1]:.{digits}f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--players", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rate", type=float, default=0.1, help="share of turns with an injected violation")
    p.add_argument("--max-turns", type=int, default=400)
    p.add_argument("--verbose", action="store_true", help="print every warning that matched no injection")
    p.add_argument("--sensors", action="store_true", help="a run with the dispenser's sensor events too")
    p.add_argument(
        "--runs",
        default="all",
        help="comma-separated runs: noise-free, noise, sensors, camera-only, camera-only-nohands "
        "(default all but camera-only-nohands; sensors only with --sensors)",
    )
    p.add_argument(
        "--node-bound",
        action="store_true",
        help="searches bounded by nodes alone (no time bound): the same figures whatever the machine's load",
    )
    p.add_argument("--only-game", type=int, default=None, help="feed only this game (1-based)")
    p.add_argument(
        "--trace",
        action="store_true",
        help="print each game frame by frame: the truth and the tracker's verdicts",
    )
    args = p.parse_args(argv)
    seed, count = args.seed, args.games
    if args.only_game is not None:  # game k of the corpus is the one seeded seed + k - 1
        seed, count = args.seed + args.only_game - 1, 1
    print(f"building the corpus: {count} games, {args.players} players, seed {seed}", file=sys.stderr)
    games = corpus(count, args.players, seed, args.rate)
    settings = TrackerSettings(limits=Limits(max_seconds=float("inf"))) if args.node_bound else None
    runs = [
        ("noise-free", "noise-free", Noise(), False, False, None),
        ("noise", "default noise", Noise.default(), False, False, None),
        ("sensors", "default noise + dispenser sensors", Noise.default(), True, False, None),
        (
            "camera-only",
            "camera only: default noise, reaching arms seen (default reach noise), no sensors, "
            "no end-of-turn signals",
            Noise.default(),
            False,
            True,
            ReachNoise.default(),
        ),
        (
            "camera-only-nohands",
            "camera only, hands not reported: default noise, no sensors, no end-of-turn signals",
            Noise.default(),
            False,
            True,
            None,
        ),
    ]
    wanted = {"noise-free", "noise", "camera-only", *(["sensors"] if args.sensors else [])}
    if args.runs != "all":
        wanted = set(args.runs.split(","))
    for name, label, noise, sensors, camera_only, reaches in runs:
        if name not in wanted:
            continue
        started = time.perf_counter()
        res = run(
            games, noise, seed, label, args.verbose, sensors, camera_only, reaches, settings, args.trace
        )
        report(res, f"{label} ({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
