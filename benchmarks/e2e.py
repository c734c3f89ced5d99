"""End-to-end figures over the bundled recording (issue 7).

1. **Throughput**: every frame played as fast as possible (what ``demo --headless`` does): the
   still-frame gate on every frame, the detector and identification on settled ones, the
   tracker, the dispenser log through the virtual board and the serial driver. Prints frames
   processed per second.
2. **Delay**: the recording played at its own pace (10 frames/s, as a camera delivers them;
   frames the pipeline is too late for are dropped), the game held by the dashboard's hub. A
   subscriber waits for published snapshots as the dashboard's event stream does. For every
   step the tracker accepted and every warning, the delay runs from the frame where the move
   was complete (the recording's ground truth: the first frame after the hand left, or the
   turn button's press) to the snapshot carrying it reaching the subscriber; an end of turn from
   the snapshot since which the dashboard showed that turn over, where the record then ended it
   there (:func:`shown_over`), and a move shown before its frame as 0 s. Prints the median and
   p99. ``--skip-paced`` prints the referee's own wait (recording time) split by kind of move.
3. **Network source** (``--stream``, issue 17): the delay run with the frames served as an HTTP
   MJPEG stream on 127.0.0.1 at the recording's pace and read by ``run --camera URL``'s source
   (:class:`referee.app.streams.StreamFrames`, newest frame only). Prints the frame age at the
   pipeline (arrival to done) as median and p99, beside the delay. Needs the detector (the
   oracle looks boxes up by frame index, which a stream does not carry); ``--seconds`` cuts it short.
4. **The phone's browser** (``--phone``, issue 17): the delay run with the frames sent as the phone
   page sends them: each JPEG POSTed over HTTPS (the referee's own certificate, verified) to the
   dashboard's ``/api/phone/frame`` by a paired session with its CSRF token, the next once the last
   was answered, at the recording's pace; read by ``run --camera phone``'s source
   (:class:`referee.app.streams.PhoneFrames`). Prints the frame age and the POST round trip.
5. **Where the delay goes** (``--stages``, issue 13): the delay run with each pass timed stage by
   stage (detector, identification, tracker call and its explanation searches, publish) and the
   slowest moves' delay split into those stages (docs/e2e.md).

    .venv/bin/python benchmarks/e2e.py [--model FILE] [--oracle] [--skip-fast] [--skip-paced]
        [--stream | --phone] [--seconds S] [--stages]
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import logging
import math
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Run as a script, this folder comes first on the path, and its serial.py would shadow pyserial.
HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]

from referee.app.demo import DemoResult, recording_feed, recording_pipeline  # noqa: E402
from referee.app.dispenser import DispenserFeed, SimulatedDispenser  # noqa: E402
from referee.app.live import (  # noqa: E402
    ARMS_EVERY,
    Change,
    Feed,
    LiveReferee,
    LocalGame,
    RunOptions,
    RunStats,
    replay_settings,
)
from referee.app.percentiles import p99  # noqa: E402
from referee.tracker import Tracker  # noqa: E402
from vision.training.recording import Recording, ensure_recording  # noqa: E402

SETTLE = RunOptions().settle


def pipeline_for(args: argparse.Namespace, recording: Recording) -> Any:
    return recording_pipeline(recording, Path(args.model) if args.model else None, args.oracle)


def throughput(
    recording: Recording,
    pipeline: Any,
    camera_only: bool = False,
    arms_every: int = ARMS_EVERY,
    settle: int = SETTLE,
    slowest: float = 0.0,
) -> RunStats:
    """Every frame, in order, as fast as possible (deterministic). Also the referee's own wait:
    the recording's time from each move's completion to the frame whose pass accepted it, as if
    the pipeline took no time (the delay's floor on a machine fast enough for every frame; it does
    not move with the load). ``camera_only``: no dispenser board; ``arms_every``: the players'
    arms read on every k-th frame the gate drops (0: the table alone); ``settle``: the gate's
    still frames before it opens; ``slowest``: list that share (%) of the moves, slowest first,
    each with the frames it waited on (:func:`print_slowest`)."""
    changes: list[Change] = []
    observed: list[int] = []  # the frames the pipeline observed (the gate let through)
    process = pipeline.process

    def noting(frame: Any, t: Any = None, frame_no: Any = None, seats: Any = None) -> Any:
        sight = process(frame, t, frame_no, seats)
        if sight is not None and frame_no is not None:
            observed.append(frame_no)
        return sight

    pipeline.process = noting
    runner = LiveReferee(
        pipeline,
        lambda s: recording_feed(recording, runner, True, camera_only),
        RunOptions(speed=0.0, arms_every=arms_every, settle=settle),
        on_change=changes.append,
    )
    game = LocalGame(Tracker.create(":memory:", recording.names, settings=replay_settings()))
    cpu0 = time.process_time()
    stats = runner.run(game, recording_feed(recording, runner, True, camera_only))
    cpu = time.process_time() - cpu0
    problems = check(game, recording)
    print(
        f"throughput{' (camera only)' if camera_only else ''}: {stats.frames} frames in "
        f"{stats.seconds:.1f} s = {stats.fps:.1f} frames/s "
        f"({stats.observed} through the detector, "
        f"{stats.observe_seconds / max(1, stats.observed) * 1000:.0f} ms "
        f"each; {stats.glanced} read for arms alone, one in {arms_every} of the frames the gate dropped, "
        f"{stats.arms_seconds / max(1, stats.glanced) * 1000:.1f} ms each); "
        f"referee {'exact' if not problems else 'DIFFERS: ' + '; '.join(problems)}"
    )
    print(
        f"  CPU time (the process, all threads): {cpu:.0f} s = {cpu / max(1, stats.frames) * 1000:.1f} ms "
        f"per frame; the arms alone {stats.arms_seconds:.1f} s wall"
    )
    right, matched, truth = attribution(game.tracker, recording)
    print(
        f"  turn attribution: {matched} of the recording's {truth} player steps accepted "
        f"({truth - matched} missed), {right} of them on their own turn and player "
        f"({100 * right / max(1, matched):.1f}%)"
    )
    moves, unmatched = matched_moves(changes, recording)
    own = sorted(max(0, change.frame - done) / recording.fps for change, _, done, _ in moves)
    if own:
        print(
            f"the referee's own wait (recording time, move complete -> the frame whose call showed it "
            f"on the dashboard) over {len(own)} steps and warnings ({unmatched} steps not matched): median "
            f"{statistics.median(own):.2f} s, p99 {p99(own):.2f} s, max {own[-1]:.2f} s"
        )
        print_waits(waits(moves, observed, recording), recording.fps)
        sure, _ = matched_moves(changes, recording, provisional=False)
        early = sum(a[0] is not b[0] for a, b in zip(moves, sure, strict=True))
        shown_, dropped = taken_back(changes)
        print(
            f"  shown provisionally before the record accepted them: {early} moves; counted to the "
            f"call that accepted them instead: "
            f"{spread([max(0, c.frame - done) / recording.fps for c, _, done, _ in sure])}\n"
            f"  provisional readings: {shown_} player steps shown, {dropped} of them never accepted "
            f"(taken back)"
        )
        recorded, _ = matched_moves(changes, recording, shown=False)
        ends = [max(0, c.frame - done) / recording.fps for c, what, done, _ in recorded if what == "end_turn"]
        print(f"  ends of turn to the call that recorded them (the move log's line): {spread(ends)}")
        print(
            "  every move so, each end of turn to its move-log line: "
            f"{spread([max(0, c.frame - done) / recording.fps for c, _, done, _ in recorded])}"
        )
        slow = sorted(moves, key=lambda m: m[0].frame - m[2], reverse=True)[:5]
        shown = ", ".join(f"{what} {done}->{c.frame}" for c, what, done, _ in slow)
        print(f"  the slowest (frames complete -> shown): {shown}")
        if slowest:
            print_slowest(waits(moves, observed, recording), recording, slowest, observed)
    return stats


def matched_moves(
    changes: list[Change], recording: Recording, shown: bool = True, provisional: bool = True
) -> tuple[list[tuple[Change, str, int, bool]], int]:
    """Each accepted player step and each warning of a rule broken on purpose, matched in order to
    the recording's script: (the change that brought it to the dashboard, the step's kind or the
    warning's code, the frame where it was complete, whether a warning); and how many accepted
    steps matched nothing. ``shown``: an end of turn is brought by the change since which the
    dashboard showed that turn over (:func:`shown_over`), else by the call that recorded it; and
    (``provisional`` too) a step or warning by the change since which the dashboard showed it
    marked provisional (:func:`shown_before`)."""
    steps, broken = moments(recording)
    cursor = 0
    out: list[tuple[Change, str, int, bool]] = []
    unmatched = 0
    for n, change in enumerate(changes):
        players = 0  # player steps before this one in the change
        for raw in change.steps:
            if raw["kind"] in ("reveal", "dispense"):
                continue
            players += 1
            hit = next(
                (
                    j
                    for j in range(cursor, min(cursor + 8, len(steps)))
                    if steps[j][:2] == (raw["kind"], raw.get("player"))
                ),
                None,
            )
            if hit is None:
                unmatched += 1
                continue
            cursor = hit + 1
            by = change
            if shown and raw["kind"] == "end_turn" and players == 1:
                by = shown_over(changes, n)
            elif shown and provisional:

                def shows_step(p: dict[str, Any], raw: dict[str, Any] = raw) -> bool:
                    return raw in p["steps"]

                by = shown_before(changes, n, shows_step)
            out.append((by, raw["kind"], steps[hit][2], False))
        for w in change.warnings:
            code = w.get("code") or ""
            frame = broken.get((w["turn"], code))
            if frame is not None:
                by = change
                if shown and provisional:
                    turn = w["turn"]

                    def shows_break(p: dict[str, Any], c: str = code, t: Any = turn) -> bool:
                        return p["turn"] == t and any(b["code"] == c for b in p["breaks"])

                    by = shown_before(changes, n, shows_break)
                out.append((by, code, frame, True))
    return out, unmatched


def taken_back(changes: list[Change]) -> tuple[int, int]:
    """How many distinct player steps (by turn) the dashboard showed provisionally, and how many
    of them the record never accepted in that turn (shown, then taken back)."""
    accepted: set[tuple[int, str]] = set()
    turn = 0
    for change in changes:
        for raw in change.steps:
            accepted.add((turn, json.dumps(raw, sort_keys=True)))
            if raw["kind"] == "end_turn":
                turn += 1
    shown: set[tuple[int, str]] = set()
    for change in changes:
        if change.provisional is None:
            continue
        turn = change.provisional["turn"]
        for raw in change.provisional["steps"]:
            if raw["kind"] == "end_turn":
                turn += 1
            elif raw["kind"] not in ("reveal", "dispense"):
                shown.add((turn, json.dumps(raw, sort_keys=True)))
    chance = ("reveal", "dispense")
    accepted = {(turn, raw) for turn, raw in accepted if json.loads(raw)["kind"] not in chance}
    return len(shown), len(shown - accepted)


def shown_before(changes: list[Change], n: int, shows: Callable[[dict[str, Any]], bool]) -> Change:
    """The change from which the dashboard showed, marked provisional, what change ``n`` accepted
    (a step, or a warning): the first of an unbroken run of changes just before ``n`` whose
    provisional reading (:attr:`Change.provisional`) ``shows`` it; change ``n`` itself if the one
    before it did not."""
    first = n
    while first > 0:
        reading = changes[first - 1].provisional
        if reading is None or not shows(reading):
            break
        first -= 1
    return changes[first]


def shown_over(changes: list[Change], n: int) -> Change:
    """The change from which the dashboard showed the turn over whose end change ``n`` recorded
    first among its player steps: the first of the changes just before it that all left the turn
    over (:attr:`Change.turn_over`: nothing legal left but ending it) in that turn, with no player
    step after the first of them (only the table's refills, or warnings). Change ``n`` itself
    where the one before it did not leave the turn over (the end was news, or moved there)."""
    first = n
    while first > 0:
        before = changes[first - 1]
        if not before.turn_over or (first < n and before.turn != changes[first].turn):
            break
        first -= 1
        if any(raw["kind"] not in ("reveal", "dispense") for raw in before.steps):
            break  # the player's step that left nothing but ending the turn
    return changes[first]


def spread(values: list[float]) -> str:
    """``median M s, p99 P s, max X s`` over ``values`` (seconds)."""
    if not values:
        return "none"
    return f"median {statistics.median(values):.2f} s, p99 {p99(values):.2f} s, max {max(values):.2f} s"


#: What a matched move is, for the breakdown: a player's step, an end of turn, or a warning.
KINDS = ("player steps", "ends of turn", "warnings")


@dataclass(frozen=True, slots=True)
class Wait:
    """One matched move's wait in recording frames (``--skip-paced``'s own wait, split): complete
    (the recording's truth) -> the first frame the pipeline observed from then on (the still-frame
    gate: the hand still moving, then its settle) -> the frame whose tracker call accepted it."""

    what: str  # the step's kind or the warning's code
    kind: str  # one of KINDS
    done: int
    seen: int | None  # None: nothing was observed from ``done`` to its acceptance
    accepted: int
    #: A player's step (or a warning): accepted only once its turn was over (the call that accepted
    #: it ended that turn too, or later). An end of turn: accepted in a call with a later player's
    #: step (the end inferred from the next player's change) and not shown before.
    late: bool
    early: bool = False  # an end of turn shown (the turn over) before the call that recorded it


def waits(
    moves: list[tuple[Change, str, int, bool]], observed: list[int], recording: Recording
) -> list[Wait]:
    """Each matched move (:func:`matched_moves`) split at the first frame observed after it was
    complete (``observed``: the frames the pipeline observed, in order)."""
    turn_of = {s["frame"]: s["turn"] for s in recording.steps() if s["frame"] is not None}
    out = []
    for change, what, done, warning in moves:
        at = bisect.bisect_left(observed, done)
        seen = observed[at] if at < len(observed) and observed[at] <= change.frame else None
        if what == "end_turn" and not warning:
            kinds = [s["kind"] for s in change.steps if s["kind"] not in ("reveal", "dispense")]
            after = kinds[kinds.index("end_turn") + 1 :] if "end_turn" in kinds else []
            early = change.turn == turn_of.get(done)  # the call left the turn over, not ended
            kind, late = KINDS[1], not early and any(k != "end_turn" for k in after)
        else:
            kind, late = KINDS[2 if warning else 0], change.turn > turn_of.get(done, change.turn)
            early = False
        out.append(Wait(what, kind, done, seen, change.frame, late, early))
    return out


def print_waits(split: list[Wait], fps: float) -> None:
    """The own wait by kind of move, and each kind split at the first observed frame."""
    for kind in KINDS:
        mine = [w for w in split if w.kind == kind]
        if not mine:
            continue
        gate = [(w.seen - w.done) / fps for w in mine if w.seen is not None]
        track = [(w.accepted - w.seen) / fps for w in mine if w.seen is not None]
        late, early = sum(w.late for w in mine), sum(w.early for w in mine)
        before = sum(w.accepted < w.done for w in mine)
        said = (
            f"{early} shown over before the call that recorded them, {late} inferred from a later "
            f"player's step in its call; {before} shown before the recording's frame (counted 0 s)"
            if kind == KINDS[1]
            else f"{late} accepted only once their turn was over"
        )
        shown = [max(0, w.accepted - w.done) / fps for w in mine]
        print(
            f"  {kind} ({len(mine)}; {said}): {spread(shown)}\n"
            f"    complete -> first observed frame (the still-frame gate): {spread(gate)}\n"
            f"    first observed frame -> accepted (the tracker's wait): {spread(track)}"
        )


def frames_between(wait: Wait, recording: Any, observed: set[int]) -> str:
    """The frames from a move's completion to its acceptance, one character each: ``.`` the table
    in full view, ``h`` a hand over it (the recording's truth); upper case (``O``, ``H``) where the
    pipeline observed the frame (the still-frame gate let it through)."""
    out = []
    for n in range(wait.done, max(wait.done, wait.accepted) + 1):
        c = "h" if recording.hand(n) else "."
        out.append(("O" if c == "." else "H") if n in observed else c)
    return "".join(out)


def print_slowest(split: list[Wait], recording: Any, share: float, observed: list[int] | None = None) -> None:
    """``--slowest``: the slowest ``share`` % of the moves (at least one), each with its wait split
    (the still-frame gate, then the tracker), whether its turn was over when accepted, and the
    frames it waited through (:func:`frames_between`): what the cause was."""
    ranked = sorted(split, key=lambda w: (w.accepted - w.done, w.done), reverse=True)
    n = max(1, math.ceil(share / 100 * len(ranked)))
    seen = set(observed or ())
    fps = recording.fps
    print(f"  the slowest {share:g} % ({n} of {len(ranked)}; frames from complete to shown, O/H observed):")
    for w in ranked[:n]:
        gate = "-" if w.seen is None else f"{(w.seen - w.done) / fps:.1f} s"
        track = "-" if w.seen is None else f"{(w.accepted - w.seen) / fps:.1f} s"
        over = ", its turn over" if w.late else ""
        wait = max(0, w.accepted - w.done) / fps
        print(
            f"    {wait:.1f} s {w.what} ({w.kind}{over}) {w.done}->{w.accepted}: "
            f"gate {gate}, tracker {track}; {frames_between(w, recording, seen)}"
        )


def attribution(tracker: Tracker, recording: Recording) -> tuple[int, int, int]:
    """How the accepted player steps (the move log) compare with the recording's: how many of
    the recording's steps were accepted (the same step, on any turn: counted as multisets),
    how many of them on their own turn (the step names its player); and how many the recording
    has. Ends of turn, reveals and dispenser draws are not counted; the order within a turn
    is not either (a triggered Pick may be logged before or after the Use that allowed it)."""
    skip = ("reveal", "dispense", "end_turn")
    truth = [(s["turn"], json.dumps(s["step"], sort_keys=True)) for s in recording.steps()]
    got = [(line.turn, json.dumps(line.step, sort_keys=True)) for line in tracker.log]
    truth = [t for t in truth if json.loads(t[1])["kind"] not in skip]
    got = [g for g in got if json.loads(g[1])["kind"] not in skip]
    right = sum((Counter(truth) & Counter(got)).values())
    matched = sum((Counter(s for _, s in truth) & Counter(s for _, s in got)).values())
    return right, matched, len(truth)


def check(game: Any, recording: Recording) -> list[str]:
    return DemoResult.of(game, recording, RunStats()).problems


def moments(recording: Recording) -> tuple[list[tuple[str, int | None, int]], dict[tuple[int, str], int]]:
    """The recording's player steps in order as (kind, player, frame complete), and the frame of
    each rule broken on purpose by (turn, code)."""
    steps = [
        (s["step"]["kind"], s["step"].get("player"), s["frame"])
        for s in recording.steps()
        if s["step"]["kind"] not in ("reveal", "dispense") and s["frame"] is not None
    ]
    broken = {(s["turn"], s["codes"][0]): s["frame"] for s in recording.steps() if s["codes"]}
    return steps, broken


END_GRACE_S = 10.0


def stream_feed(recording: Recording, seconds: float | None) -> tuple[Feed, Any]:
    """The recording served as a loopback MJPEG stream at its pace, read by the network source;
    its dispenser log sent up to each frame's time (a live source runs the board in lock-step).
    The stream is closed ``END_GRACE_S`` after the last frame (or ``seconds``) was due."""
    from referee.app.streams import StreamFrames
    from tests.mjpeg_server import MjpegServer
    from vision.frames import read_frame

    paths = [path for _, _, path in recording.frames()]
    server = MjpegServer(lambda n: read_frame(paths[min(n, len(paths) - 1)]), fps=recording.fps)
    source = StreamFrames(server.url)
    board = SimulatedDispenser(recording.events())
    started = time.monotonic()

    def stopper() -> None:
        # The last frame stays on the stream a while (a table after the game is still too): the
        # tracker confirms the final steps from a few more settled passes of the pipeline.
        end = min(len(paths) / recording.fps, seconds or float("inf")) + END_GRACE_S
        while time.monotonic() - started < end:
            time.sleep(0.1)
        source.close()
        server.close()

    threading.Thread(target=stopper, daemon=True).start()
    return Feed(source, DispenserFeed(board.port), board), source


class PhoneClient:
    """What the phone page (web/static/phone.js) does, over HTTPS: pair, then POST JPEG frames one
    at a time with the session cookie and the CSRF token."""

    def __init__(self, host: str, port: int, cafile: Path, pin: str) -> None:
        import http.client
        import json
        import ssl

        context = ssl.create_default_context(cafile=str(cafile))  # the referee's certificate, verified
        self.conn = http.client.HTTPSConnection(host, port, context=context, timeout=10)
        self.origin = f"https://{host}:{port}"
        self.url = f"{self.origin}/api/phone/frame"
        self.round_trips: list[float] = []
        self.cookie = ""
        self.csrf = json.loads(self.request("GET", "/api/session"))["csrf_token"]
        self.request("POST", "/api/phone/pair", json.dumps({"code": pin}).encode(), "application/json")

    def request(self, method: str, path: str, body: bytes | None = None, kind: str = "") -> bytes:
        headers = {"Cookie": self.cookie, "Origin": self.origin}
        if method == "POST":
            headers |= {"X-CSRF-Token": self.csrf, "Content-Type": kind}
        self.conn.request(method, path, body=body, headers=headers)
        resp = self.conn.getresponse()
        data = resp.read()
        cookie = resp.getheader("Set-Cookie")
        if cookie:
            self.cookie = cookie.split(";", 1)[0]
        if resp.status != 200:
            raise RuntimeError(f"{method} {path}: {resp.status} {data[:200]!r}")
        return data


def phone_feed(recording: Recording, seconds: float | None) -> tuple[Feed, Any, PhoneClient]:
    """The recording sent as the phone's browser sends it (see the module docstring), at the
    recording's pace, into the dashboard's phone route; read by the phone source. Stops
    ``END_GRACE_S`` after the last frame (or ``seconds``) was due."""
    from referee.app.streams import PhoneFrames
    from web.app import create_app
    from web.serve import make_dashboard_server
    from web.tls import ensure_certificate, server_context

    paths = [path for _, _, path in recording.frames()]
    folder = Path(tempfile.mkdtemp(prefix="gizmos-bench-phone-"))
    phone = PhoneFrames()
    pin = "2468"
    app = create_app({"ADMIN_PIN": pin, "GAMES_DIR": str(folder / "games"), "PHONE_CAMERA": phone})
    cert = ensure_certificate(folder / "tls", ["127.0.0.1"])
    server = make_dashboard_server("127.0.0.1", 0, app, ssl_context=server_context(cert))
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per frame
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = PhoneClient("127.0.0.1", server.port, cert.cert, pin)
    board = SimulatedDispenser(recording.events())
    started = time.monotonic()
    end = min(len(paths) / recording.fps, seconds or float("inf")) + END_GRACE_S

    def sender() -> None:
        interval = 1 / recording.fps
        while (now := time.monotonic() - started) < end:
            n = min(int(now * recording.fps), len(paths) - 1)
            sent = time.perf_counter()
            client.request("POST", "/api/phone/frame", paths[n].read_bytes(), "image/jpeg")
            client.round_trips.append(time.perf_counter() - sent)
            time.sleep(max(0.0, interval - (time.perf_counter() - sent)))
        phone.close()
        server.shutdown()

    threading.Thread(target=sender, daemon=True).start()
    return Feed(phone, DispenserFeed(board.port), board), phone, client


# ============================================================================ where the delay goes


@dataclass(slots=True)
class Pass:
    """One frame through the pipeline and the tracker (``--stages``), wall-clock seconds."""

    index: int  # the frame's number in the recording
    began: float
    detect: float = 0.0  # calibration, rectification, the detector
    assemble: float = 0.0  # zones and identification
    track: float = 0.0  # tracker.observe (the stabiliser and the explanation search), record write
    publish: float = 0.0  # the hub's snapshot for the pages
    searches: list[Search] = field(default_factory=list)  # the explanation searches of the tracker call
    complete: bool = True  # the stabiliser's view after the call had every zone known (none covered)


@dataclass(slots=True)
class Search:
    """One call of :func:`referee.tracker.explain.explain` inside a tracker call."""

    wall: float
    cpu: float  # this thread's CPU time: the rest of ``wall`` went to other processes
    max_violations: int
    found: str  # the steps found (their kinds, ``!`` marking a broken rule), or "none"


class StageClock:
    """Times each pass of the paced run stage by stage, by wrapping the pipeline, the tracker's
    ``observe``, its explanation searches and the hub's publish (nothing in the referee changes)."""

    def __init__(self, pipeline: Any, game: Any) -> None:
        self.passes: list[Pass] = []
        self.frames: list[int] = []  # every frame the loop took (not dropped), in order
        sight = pipeline.sight  # the pipeline's gate calls it on each settled frame (and the warm-up)
        observe, publish = game.tracker.observe, game._publish

        def timed_sight(frame: Any, t: Any = None, frame_no: Any = None, seats: Any = None) -> Any:
            self.passes.append(Pass(frame_no, time.time()))
            start, seen = time.perf_counter(), None
            try:
                seen = sight(frame, t, frame_no, seats)
                return seen
            finally:  # the assembly's own timing; the rest is calibration, rectification, detector
                took = time.perf_counter() - start
                assemble = seen.timings.get("assemble", 0.0) if seen is not None else 0.0
                self.passes[-1].detect, self.passes[-1].assemble = took - assemble, assemble

        def timed_observe(obs: Any) -> Any:
            t = time.perf_counter()
            try:
                return observe(obs)
            finally:
                self.passes[-1].track = time.perf_counter() - t
                self.passes[-1].complete = game.tracker.stabilizer.recent(0).complete()

        def timed_publish() -> None:
            t = time.perf_counter()
            try:
                publish()
            finally:
                if self.passes:
                    self.passes[-1].publish += time.perf_counter() - t

        from benchmarks.referee import search_callers
        from referee.tracker.explain import explain as search

        def timed_search(*a: Any, **k: Any) -> Any:
            t, c = time.perf_counter(), time.thread_time()
            found = search(*a, **k)
            wall, cpu = time.perf_counter() - t, time.thread_time() - c
            bound = k.get("max_violations", a[3] if len(a) > 3 else 0)
            what = "none"
            if found is not None:
                broken = {i for i, _ in found.violations}
                what = " ".join(st.kind + ("!" if i in broken else "") for i, st in enumerate(found.steps))
            if self.passes:
                self.passes[-1].searches.append(Search(wall, cpu, bound, what or "no step"))
            return found

        for module in search_callers():  # each imports ``explain`` by name: time them all
            module.explain = timed_search
        pipeline.sight = timed_sight
        game.tracker.observe, game._publish = timed_observe, timed_publish

    def breakdown(
        self, done_frame: int, accepted_frame: int, due: Callable[[int], float], arrived: float
    ) -> dict[str, Any]:
        """Split one move's delay: complete -> first pass that saw it (the still-frame gate's settle
        and the pipeline busy with an earlier frame) -> the pass whose tracker call accepted it
        (passes needed for the stabiliser's agreeing frames, or waits for the next motion) -> its
        tracker call and publish -> the subscriber."""
        seen = [p for p in self.passes if done_frame <= p.index <= accepted_frame]
        if not seen:
            return {}
        first, last = seen[0], seen[-1]
        end = last.began + last.detect + last.assemble + last.track + last.publish
        gaps = [b.index - a.index for a, b in itertools.pairwise(seen)]
        return {
            "first_look": first.began - due(done_frame),
            "settle_frames": first.index - done_frame,
            "lag_first": first.began - due(first.index),
            "passes": len(seen),
            "incomplete": sum(not p.complete for p in seen),  # a zone covered: the tracker waits
            "searches_before": sum(len(p.searches) for p in seen[:-1]),
            "max_gap_frames": max(gaps, default=0),
            "to_accepting_pass": last.began - first.began,
            "accepting_pass": end - last.began,
            "track": last.track,
            "searches": len(last.searches),
            "detect+assemble": last.detect + last.assemble,
            "publish": last.publish,
            "to_subscriber": arrived - end,
        }


def delays(
    recording: Recording,
    pipeline: Any,
    speed: float,
    stream: float | bool = False,
    phone: bool = False,
    stages: bool = False,
) -> None:
    """Play at the recording's pace with the dashboard's hub; measure move-complete -> subscriber.
    ``stream`` (True, or a number of seconds): through a loopback MJPEG stream instead of the files."""
    from web.hub import Hub

    hub = Hub(tempfile.mkdtemp(prefix="gizmos-bench-games-"))
    game = hub.create(recording.names, seed=None, deal=False)
    arrivals: dict[int, float] = {}
    finished = threading.Event()

    def subscriber() -> None:  # the dashboard's event stream waits on the hub the same way
        seen = game.snapshot.seq
        while not finished.is_set():
            if game.wait_newer(seen, 0.2):
                seen = game.snapshot.seq
                arrivals[seen] = time.time()

    published: list[tuple[Change, int]] = []

    def on_change(change: Change) -> None:
        published.append((change, game.snapshot.seq))

    thread = threading.Thread(target=subscriber, daemon=True)
    thread.start()
    clock = StageClock(pipeline, game) if stages else None
    runner = LiveReferee(
        pipeline,
        lambda s: recording_feed(recording, runner, False),
        RunOptions(speed=speed),
        on_change=on_change,
    )
    network = client = None
    if stream is not False:
        seconds = None if stream is True else stream
        if phone:
            feed, network, client = phone_feed(recording, seconds)
        else:
            feed, network = stream_feed(recording, seconds)
    else:
        feed = recording_feed(recording, runner, False)
    stats = runner.run(game, feed)
    time.sleep(0.5)
    finished.set()
    thread.join(2)
    fps = recording.fps
    start = stats.started - stats.first_frame_time / speed

    def reached(seq: int) -> float | None:
        later = [t for s, t in arrivals.items() if s >= seq]
        return min(later) if later else None

    step_delays: list[float] = []
    warn_delays: list[float] = []
    # (delay, what, frame complete, frame accepted, arrived)
    moves: list[tuple[float, str, int, int, float]] = []
    arrival = {id(change): reached(seq) for change, seq in published}
    seen = [change for change, _ in published if arrival[id(change)] is not None]
    matched, unmatched = matched_moves(seen, recording)
    for change, what, done, warning in matched:
        arrived = arrival[id(change)]
        assert arrived is not None
        delay = max(0.0, arrived - (start + done / fps / speed))  # shown before it was complete: 0
        (warn_delays if warning else step_delays).append(delay)
        moves.append((delay, what, done, change.frame, arrived))
    every = step_delays + warn_delays
    problems = check(game, recording)
    if network is not None:
        ages = network.age_stats()
        print(
            f"{'phone' if client else 'stream'} {(client or network).url}: "
            f"{network.received} frames received, "
            f"{network.dropped} dropped as stale, {network.reconnects} reconnects; frame age at the pipeline "
            + (f"median {ages[0] * 1000:.0f} ms, p99 {ages[1] * 1000:.0f} ms" if ages else "not measured")
        )
        trips = sorted(client.round_trips if client else [])
        if trips:
            print(
                f"phone POST round trip (HTTPS, decode, hand over): median "
                f"{statistics.median(trips) * 1000:.0f} ms, p99 {p99(trips) * 1000:.0f} ms "
                f"over {len(trips)} frames"
            )
    print(
        f"paced at {speed:g}x ({fps} frames/s): {stats.frames} frames read, {stats.dropped} dropped, "
        f"{stats.observed} through the detector; "
        f"referee {'exact' if not problems else 'DIFFERS: ' + '; '.join(problems)}"
    )
    if not every:
        print("delay: nothing to measure")
        if clock is not None:
            print_stages(clock, moves, lambda n: start + n / fps / speed)
        return
    every.sort()
    print(
        f"delay move complete -> dashboard subscriber over {len(every)} accepted steps and warnings "
        f"({unmatched} steps not matched to the script): median {statistics.median(every):.2f} s, "
        f"p99 {p99(every):.2f} s, max {every[-1]:.2f} s"
    )
    if step_delays:
        print(f"  steps: median {statistics.median(step_delays):.2f} s over {len(step_delays)}")
    kinds = [w.kind for w in waits(matched, [], recording)]  # in the order of ``moves``
    for kind in KINDS:
        mine = [m[0] for m, k in zip(moves, kinds, strict=True) if k == kind]
        print(f"  {kind} ({len(mine)}): {spread(mine)}")
    if warn_delays:
        print(f"  warnings: {', '.join(f'{d:.2f} s' for d in warn_delays)}")
    if clock is not None:
        print_stages(clock, moves, lambda n: start + n / fps / speed)


def print_stages(
    clock: StageClock, moves: list[tuple[float, str, int, int, float]], due: Callable[[int], float]
) -> None:
    """``--stages``: the pipeline's passes stage by stage, and where the slowest moves' delay went."""
    passes = clock.passes

    def dist(values: list[float]) -> str:
        if not values:
            return "-"
        med = statistics.median(values)
        return f"median {med * 1000:.0f} ms, p99 {p99(values) * 1000:.0f} ms, max {max(values) * 1000:.0f} ms"

    print(f"stages over {len(passes)} passes of the pipeline:")
    for name in ("detect", "assemble", "track", "publish"):
        print(f"  {name}: {dist([getattr(p, name) for p in passes])}")
    searches = [(q, p.index) for p in passes for q in p.searches]
    print(
        f"  explanation searches: {len(searches)} ({sum(q.found == 'none' for q, _ in searches)} found "
        f"nothing); wall {dist([q.wall for q, _ in searches])}; CPU {dist([q.cpu for q, _ in searches])}"
    )
    print("  the 8 slowest searches (wall s / CPU s, rule breaks allowed, frame: what they found):")
    for q, index in sorted(searches, key=lambda x: -x[0].wall)[:8]:
        print(f"    {q.wall:.2f} / {q.cpu:.2f}, {q.max_violations}, frame {index}: {q.found}")
    slow = sorted(moves, reverse=True)[: max(5, len(moves) // 20)]
    print(f"the {len(slow)} slowest moves (s; frames at 10/s: settle = frames from complete to first pass):")
    for delay, what, done, accepted, arrived in slow:
        b = clock.breakdown(done, accepted, due, arrived)
        parts = ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in b.items())
        print(f"  {delay:.2f} s {what} (frames {done}->{accepted}): {parts}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", help="detector ONNX file (default models/detector.onnx)")
    p.add_argument("--oracle", action="store_true", help="the recording's true boxes instead of YOLO")
    p.add_argument("--speed", type=float, default=1.0, help="pace of the delay run (default 1: real time)")
    p.add_argument("--skip-fast", action="store_true", help="no throughput run")
    p.add_argument("--skip-paced", action="store_true", help="no delay run")
    p.add_argument("--stream", action="store_true", help="the delay run reads a loopback MJPEG stream")
    p.add_argument(
        "--phone", action="store_true", help="the delay run reads frames POSTed as the phone page does"
    )
    p.add_argument(
        "--seconds", type=float, help="--stream/--phone: stop after this many seconds of the recording"
    )
    p.add_argument(
        "--stages",
        action="store_true",
        help="the delay run: time each stage, and show where the slowest moves' delay went",
    )
    p.add_argument(
        "--camera-only", action="store_true", help="the throughput run without the dispenser board"
    )
    p.add_argument(
        "--arms-every",
        type=int,
        default=ARMS_EVERY,
        metavar="K",
        help=f"the players' arms read on every K-th frame the gate drops (default {ARMS_EVERY}; 0: none)",
    )
    p.add_argument(
        "--settle",
        type=int,
        default=SETTLE,
        help=f"the throughput run: still frames before the gate opens (default {SETTLE})",
    )
    p.add_argument(
        "--slowest",
        type=float,
        default=0.0,
        metavar="PCT",
        help="the throughput run: list the slowest PCT %% of the moves and what they waited on (e.g. 2)",
    )
    args = p.parse_args()
    if not 0 <= args.slowest <= 100:
        p.error("--slowest: expected a share from 0 to 100")
    if args.settle < 1:
        p.error("--settle: expected at least 1")
    if args.arms_every < 0:
        p.error("--arms-every: expected 0 (the table alone) or a whole number of frames")
    if args.stream and args.phone:
        p.error("--stream and --phone: give one")
    if (args.stream or args.phone) and (args.oracle or args.speed != 1.0):
        p.error(
            "--stream/--phone: need the detector (not --oracle) at --speed 1 (a camera runs at its own pace)"
        )
    recording = ensure_recording()
    print(
        f"recording: {len(recording)} frames, "
        f"{len(recording) / recording.fps:.0f} s at {recording.fps} frames/s"
    )
    if not args.skip_fast:
        throughput(
            recording,
            pipeline_for(args, recording),
            args.camera_only,
            args.arms_every,
            args.settle,
            args.slowest,
        )
    if not args.skip_paced:
        stream = (args.seconds or True) if args.stream or args.phone else False
        delays(recording, pipeline_for(args, recording), args.speed, stream, args.phone, args.stages)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
