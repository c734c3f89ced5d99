"""The history of games: the replay, the score-over-time chart, past games and players, exports,
and the evidence crops kept with warnings.

Everything is read from the game records (:mod:`referee.tracker.history` replays them moment by
moment); nothing here changes a game, so these routes need neither the PIN nor the CSRF token.
A record is replayed once and kept until it grows (a live game) or changes on disk.
"""

from __future__ import annotations

import csv
import io
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, render_template

from referee.gizmos import State, Step, default_cards, ranking
from referee.tracker.history import Moment, moments
from referee.tracker.record import EVIDENCE_MOMENTS, Entry, GameRecord, RecordError
from referee.tracker.verdicts import RefereeWarning
from web.errors import ApiError
from web.hub import GAME_ID, RECORD_SUFFIX, Hub
from web.schemas import document
from web.security import csrf_token
from web.view import card_json, table_view

bp = Blueprint("history", __name__)
CARDS = default_cards()
GIZMO_TYPES = ("upgrade", "converter", "file", "pick", "build", "research")


@dataclass(slots=True)
class GameHistory:
    """One recorded game, replayed: its moments, warnings and evidence index."""

    id: str
    names: list[str]
    created: float
    moments: list[Moment]
    warnings: list[RefereeWarning]
    evidence: dict[int, dict[str, Any]]
    ended_by: str | None
    size: int  # record entries replayed (a live game's history is replayed again when it grows)
    scores: list[list[int]] = field(default_factory=list)  # each moment's live scores, by seat

    def __post_init__(self) -> None:
        self.scores = [m.totals() for m in self.moments]  # once: the chart, CSV and JSON read them

    @property
    def real(self) -> list[Moment]:
        """The moments that stand (not undone, corrected or explained again)."""
        return [m for m in self.moments if m.void is None]

    @property
    def final(self) -> State:
        return self.moments[-1].state


def _hub() -> Hub:
    return current_app.extensions["gizmos_hub"]


class Histories:
    """Replayed records, by game id, kept while their record is unchanged (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[object, GameHistory]] = {}

    def get(self, hub: Hub, game_id: str) -> GameHistory:
        """A game's history: through the hub's open game (under its lock) when it is loaded,
        else read-only from its record. 404 for an unknown game, 409 for an unreadable record."""
        path = hub.record_path(game_id)
        loaded = hub.loaded(game_id)
        if loaded is None and not path.is_file():
            raise ApiError(404, f"no game {game_id!r} in {hub.games_dir}")
        try:
            if loaded is not None:
                with loaded.locked() as tracker:
                    key: object = ("live", len(tracker.record))
                    cached = self._cached(game_id, key)
                    if cached is not None:
                        return cached
                    entries = list(tracker.record.entries())
                    evidence = tracker.record.evidence_index()
            else:
                stat = path.stat()
                wal = Path(f"{path}-wal")
                key = ("file", stat.st_size, stat.st_mtime_ns, wal.stat().st_size if wal.exists() else 0)
                cached = self._cached(game_id, key)
                if cached is not None:
                    return cached
                record = GameRecord(path, readonly=True)
                try:
                    entries = list(record.entries())
                    evidence = record.evidence_index()
                finally:
                    record.close()
            made = _history(game_id, entries, evidence)
        except (RecordError, OSError) as exc:
            raise ApiError(409, f"game {game_id!r} cannot be replayed: {exc}") from exc
        with self._lock:
            self._cache[game_id] = (key, made)
        return made

    def _cached(self, game_id: str, key: object) -> GameHistory | None:
        with self._lock:
            hit = self._cache.get(game_id)
        return hit[1] if hit is not None and hit[0] == key else None


def _history(game_id: str, entries: list[Entry], evidence: dict[int, dict[str, Any]]) -> GameHistory:
    ms = moments(entries)
    warnings: dict[int, RefereeWarning] = {}
    ended_by = None
    for e in entries:
        if e.kind == "warning":
            try:
                w = RefereeWarning.from_json(e.payload)
            except (ValueError, TypeError):
                continue
            warnings[w.id] = w
        elif e.kind == "warning_status" and e.payload.get("id") in warnings:
            wid = e.payload["id"]
            warnings[wid] = warnings[wid].with_status(str(e.payload.get("status")), str(e.payload.get("who")))
        elif e.kind == "end":
            ended_by = str(e.payload.get("who", e.who))
    setup = entries[0]
    names = [str(n) for n in setup.payload.get("names", [])]
    return GameHistory(
        game_id, names, setup.time, ms, list(warnings.values()), evidence, ended_by, len(entries)
    )


def histories() -> Histories:
    return current_app.extensions.setdefault("gizmos_histories", Histories())


def history_of(game_id: str) -> GameHistory:
    return histories().get(_hub(), game_id)


# ---------------------------------------------------------------- JSON forms


def moment_json(h: GameHistory, m: Moment) -> dict[str, Any]:
    """One moment, light: what happened, whose turn, the scores (no table)."""
    return {
        "index": m.index,
        "seq": m.seq,
        "time": m.time,
        "kind": m.kind,
        "who": m.who,
        "text": m.text,
        "round": m.state.round,
        "turn": m.state.turn,
        "current": m.state.current,
        "step": m.step,
        "forced": m.forced,
        "void": m.void,
        "warnings": list(m.warnings),
        "scores": h.scores[m.index],
    }


def warning_json(h: GameHistory, w: RefereeWarning) -> dict[str, Any]:
    """A warning with its player's name and its evidence crops (URLs), if the camera kept any."""
    seat = w.player
    ev = h.evidence.get(w.id, {"moments": [], "zones": []})
    return {
        **w.to_json(),
        "name": h.names[seat] if seat is not None and 0 <= seat < len(h.names) else None,
        "evidence": {
            "zones": ev["zones"],
            **{m: evidence_url(h.id, w.id, m) for m in ev["moments"]},
        },
    }


def evidence_url(game_id: str, warning_id: int, moment: str) -> str:
    return f"/api/games/{game_id}/warnings/{warning_id}/evidence/{moment}.jpg"


@dataclass(slots=True)
class _AtMoment:
    """What :func:`web.view.table_view` reads, at one moment of a replay (nothing to enter)."""

    state: State
    names: list[str]
    ended_by: str | None
    warnings: list[RefereeWarning]

    def legal_steps(self) -> list[Step]:
        return []


def moment_view(h: GameHistory, m: Moment) -> dict[str, Any]:
    """The table at moment ``m``, drawn as the table page draws it, with the warnings raised so far."""
    raised = {w for x in h.moments[: m.index + 1] for w in x.warnings}
    at = _AtMoment(
        m.state, h.names, h.ended_by if m.kind == "end" else None, [w for w in h.warnings if w.id in raised]
    )
    view = table_view(at)
    view["game_id"] = h.id
    view["evidence"] = {str(k): v for k, v in h.evidence.items() if k in raised}
    return view


def game_summary(h: GameHistory) -> dict[str, Any]:
    """A game's result: players with their final scores and ranks, the winner, whether it ended."""
    final = h.real[-1] if h.real else h.moments[-1]
    state = final.state
    totals = h.scores[final.index]
    lines = ranking(state)
    return {
        "id": h.id,
        "created": h.created,
        "over": state.game_over,
        "round": state.round,
        "players": [
            {
                "seat": line.seat,
                "name": h.names[line.seat],
                "total": totals[line.seat],
                "rank": line.rank,
                "gizmo_types": dict(_types(state, line.seat)),
            }
            for line in lines
        ],
        "winner": h.names[lines[0].seat] if state.game_over else None,
        "warnings": len(h.warnings),
    }


def _types(state: State, seat: int) -> Counter[str]:
    """A player's built gizmos by type (the starting gizmo left out)."""
    return Counter(CARDS[g].type for g in state.players[seat].gizmos if CARDS[g].level > 0)


def players_summary(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per player (by name, any case) across games: played, finished, wins, average final score
    (finished games only), favourite gizmo types (the most built, across every game)."""
    by: dict[str, dict[str, Any]] = {}
    for g in games:
        for p in g["players"]:
            key = p["name"].casefold()
            s = by.setdefault(
                key, {"name": p["name"], "games": 0, "finished": 0, "wins": 0, "total": 0, "types": Counter()}
            )
            s["games"] += 1
            s["types"].update(p["gizmo_types"])
            if g["over"]:
                s["finished"] += 1
                s["total"] += p["total"]
                s["wins"] += int(p["rank"] == 1)
    out = []
    for s in by.values():
        types: Counter[str] = s.pop("types")
        total = s.pop("total")
        top = types.most_common()
        best = top[0][1] if top else 0
        out.append(
            {
                **s,
                "average": round(total / s["finished"], 1) if s["finished"] else None,
                "favourite_types": [t for t, n in top if n == best and n > 0],
                "gizmo_types": dict(top),
            }
        )
    out.sort(key=lambda p: (-p["wins"], -(p["average"] or 0), p["name"].casefold()))
    return out


# ---------------------------------------------------------------- exports


def utc(stamp: float) -> str:
    """Seconds since the epoch as an ISO 8601 UTC time, e.g. ``2026-11-23T21:05:40Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


CSV_COLUMNS = ("moment", "time", "round", "turn", "to_play", "kind", "who", "what", "step", "forced", "void")


def game_csv(h: GameHistory) -> str:
    """One row per moment (void ones too, marked), with every player's score after it."""
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow([*CSV_COLUMNS, *(f"score {n}" for n in h.names)])
    for m in h.moments:
        out.writerow(
            [
                m.index,
                utc(m.time),
                m.state.round,
                m.state.turn,
                h.names[m.state.current],
                m.kind,
                m.who,
                m.text,
                json.dumps(m.step, separators=(",", ":")) if m.step else "",
                "yes" if m.forced else "",
                m.void or "",
                *h.scores[m.index],
            ]
        )
    return buf.getvalue()


def game_record(h: GameHistory) -> dict[str, Any]:
    """The readable JSON game record (docs/history.md): who played, the result, each turn in
    words with its steps, the warnings and the corrections; undone moves are marked ``void``."""
    summary = game_summary(h)
    turns = []
    for m in h.moments:
        if m.kind == "setup":
            continue
        turns.append(
            {
                "moment": m.index,
                "time": utc(m.time),
                "round": m.state.round,
                "turn": m.state.turn,
                "kind": m.kind,
                "text": m.text,
                **({"step": m.step} if m.step else {}),
                **({"forced": True} if m.forced else {}),
                **({"void": m.void} if m.void else {}),
                **({"warnings": list(m.warnings)} if m.warnings else {}),
                "scores": dict(zip(h.names, h.scores[m.index], strict=True)),
            }
        )
    return {
        "format": "gizmos-game",
        "version": 1,
        "game": h.id,
        "started": utc(h.created),
        "players": [{"seat": s, "name": n} for s, n in enumerate(h.names)],
        "finished": summary["over"],
        "ended_by": h.ended_by,
        "winner": summary["winner"],
        "result": summary["players"],
        "moves": turns,
        "warnings": [{**warning_json(h, w), "time": utc(w.time)} for w in h.warnings],
    }


# ---------------------------------------------------------------- pages


@bp.get("/history")
def history_page() -> str:
    return render_template("history.html", csrf=csrf_token(), summary=all_history())


@bp.get("/games/<game_id>/replay")
def replay_page(game_id: str) -> str:
    h = history_of(game_id)
    return render_template(
        "replay.html",
        csrf=csrf_token(),
        game_id=game_id,
        replay=replay_json(h),
        cards=[card_json(i) for i in range(112)],
    )


# ---------------------------------------------------------------- API


def all_history() -> dict[str, Any]:
    hub = _hub()
    games = []
    skipped = []
    paths = sorted(hub.games_dir.glob(f"*{RECORD_SUFFIX}")) if hub.games_dir.is_dir() else []
    for path in paths:
        game_id = path.name[: -len(RECORD_SUFFIX)]
        if not GAME_ID.match(game_id):
            continue
        try:
            games.append(game_summary(histories().get(hub, game_id)))
        except ApiError as exc:
            skipped.append({"id": game_id, "error": exc.message})
    games.sort(key=lambda g: g["created"], reverse=True)
    return {"games": games, "players": players_summary(games), "unreadable": skipped}


def replay_json(h: GameHistory) -> dict[str, Any]:
    return {
        "id": h.id,
        "names": h.names,
        "moments": [moment_json(h, m) for m in h.moments],
        "warnings": [warning_json(h, w) for w in h.warnings],
    }


MOMENT = {
    "type": "object",
    "required": ["index", "kind", "text", "round", "turn", "current", "void", "warnings", "scores"],
    "properties": {
        "index": {"type": "integer"},
        "seq": {"type": "integer"},
        "time": {"type": "number"},
        "kind": {"enum": ["setup", "step", "undo", "correction", "revise", "end", "state"]},
        "who": {"type": "string"},
        "text": {"type": "string"},
        "round": {"type": "integer"},
        "turn": {"type": "integer"},
        "current": {"type": "integer"},
        "step": {"type": ["object", "null"]},
        "forced": {"type": "boolean"},
        "void": {
            "type": ["string", "null"],
            "description": "undone, corrected or re-explained: it did not stand",
        },
        "warnings": {"type": "array", "items": {"type": "integer"}},
        "scores": {"type": "array", "items": {"type": "integer"}, "description": "each seat's live score"},
    },
}
EVIDENCE = {
    "type": "object",
    "required": ["zones"],
    "properties": {
        "zones": {"type": "array", "items": {"type": "string"}},
        "before": {"type": "string", "description": "URL of the JPEG crop just before the move"},
        "after": {"type": "string", "description": "URL of the JPEG crop just after the move"},
    },
}
HISTORY_WARNING = {
    "type": "object",
    "required": ["id", "kind", "turn", "message", "status", "evidence"],
    "properties": {
        "id": {"type": "integer"},
        "kind": {"type": "string"},
        "turn": {"type": "integer"},
        "round": {"type": "integer"},
        "player": {"type": ["integer", "null"]},
        "name": {"type": ["string", "null"]},
        "code": {"type": ["string", "null"]},
        "message": {"type": "string"},
        "remedy": {"type": "string"},
        "status": {"enum": ["open", "accepted", "dismissed"]},
        "evidence": EVIDENCE,
    },
}
REPLAY = {
    "type": "object",
    "required": ["id", "names", "moments", "warnings"],
    "properties": {
        "id": {"type": "string"},
        "names": {"type": "array", "items": {"type": "string"}},
        "moments": {"type": "array", "items": MOMENT},
        "warnings": {"type": "array", "items": HISTORY_WARNING},
    },
}
RESULTS: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["seat", "name", "total", "rank"],
        "properties": {
            "seat": {"type": "integer"},
            "name": {"type": "string"},
            "total": {"type": "integer"},
            "rank": {"type": "integer"},
            "gizmo_types": {"type": "object"},
        },
    },
}
GAME_SUMMARY = {
    "type": "object",
    "required": ["id", "over", "players", "winner"],
    "properties": {
        "id": {"type": "string"},
        "created": {"type": "number"},
        "over": {"type": "boolean"},
        "round": {"type": "integer"},
        "winner": {"type": ["string", "null"]},
        "warnings": {"type": "integer"},
        "players": RESULTS,
    },
}
HISTORY = {
    "type": "object",
    "required": ["games", "players", "unreadable"],
    "properties": {
        "games": {"type": "array", "items": GAME_SUMMARY},
        "players": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "games", "finished", "wins", "average", "favourite_types"],
                "properties": {
                    "name": {"type": "string"},
                    "games": {"type": "integer"},
                    "finished": {"type": "integer"},
                    "wins": {"type": "integer"},
                    "average": {
                        "type": ["number", "null"],
                        "description": "mean final score, finished games",
                    },
                    "favourite_types": {"type": "array", "items": {"enum": list(GIZMO_TYPES)}},
                    "gizmo_types": {"type": "object"},
                },
            },
        },
        "unreadable": {"type": "array", "items": {"type": "object"}},
    },
}
GAME_RECORD = {
    "type": "object",
    "required": ["format", "version", "game", "players", "finished", "result", "moves", "warnings"],
    "properties": {
        "format": {"const": "gizmos-game"},
        "version": {"const": 1},
        "game": {"type": "string"},
        "started": {"type": "string"},
        "players": {"type": "array", "items": {"type": "object"}},
        "finished": {"type": "boolean"},
        "ended_by": {"type": ["string", "null"]},
        "winner": {"type": ["string", "null"]},
        "result": RESULTS,
        "moves": {
            "type": "array",
            "items": {"type": "object", "required": ["moment", "kind", "text", "scores"]},
        },
        "warnings": {"type": "array", "items": {"type": "object"}},
    },
}
GAME_PATH = {"game_id": {"type": "string"}}


@bp.get("/api/history")
@document(
    "past games with their results, and players with wins, average score and favourite gizmo types",
    ok=HISTORY,
)
def api_history() -> Response:
    return jsonify(all_history())


@bp.get("/api/games/<game_id>/replay")
@document(
    "every moment of a recorded game (undone ones marked void) with the scores after it",
    ok=REPLAY,
    errors=(404, 409),
)
def api_replay(game_id: str) -> Response:
    return jsonify(replay_json(history_of(game_id)))


@bp.get("/api/games/<game_id>/replay/<int:index>")
@document(
    "the table at one moment of the replay, as the table page draws it",
    ok={
        "type": "object",
        "required": ["moment", "view"],
        "properties": {
            "moment": MOMENT,
            "view": {"type": "object", "required": ["players", "display", "row"]},
        },
    },
    errors=(404, 409),
)
def api_moment(game_id: str, index: int) -> Response:
    h = history_of(game_id)
    if not 0 <= index < len(h.moments):
        raise ApiError(404, f"game {game_id!r} has moments 0..{len(h.moments) - 1}, not {index}")
    m = h.moments[index]
    return jsonify({"moment": moment_json(h, m), "view": moment_view(h, m)})


@bp.get("/api/games/<game_id>/export.csv")
@document(
    "the game as CSV: one row per moment (void ones marked), with every player's score",
    ok={"type": "string"},
    media="text/csv",
    errors=(404, 409),
)
def api_csv(game_id: str) -> Response:
    resp = Response(game_csv(history_of(game_id)), mimetype="text/csv")
    resp.headers["Content-Disposition"] = f'attachment; filename="gizmos-{game_id}.csv"'
    return resp


@bp.get("/api/games/<game_id>/game-record.json")
@document("the readable JSON game record (docs/history.md)", ok=GAME_RECORD, errors=(404, 409))
def api_game_record(game_id: str) -> Response:
    resp = jsonify(game_record(history_of(game_id)))
    resp.headers["Content-Disposition"] = f'attachment; filename="gizmos-{game_id}-game.json"'
    return resp


@bp.get("/api/games/<game_id>/warnings/<int:warning_id>/evidence/<moment>.jpg")
@document(
    "the camera's crop of the zones a warning is about, just before or just after the move",
    ok={"type": "string", "format": "binary"},
    media="image/jpeg",
    errors=(404,),
)
def api_evidence(game_id: str, warning_id: int, moment: str) -> Response:
    if moment not in EVIDENCE_MOMENTS:
        raise ApiError(404, f"evidence: expected before.jpg or after.jpg, got {moment}.jpg")
    hub = _hub()
    loaded = hub.loaded(game_id)
    try:
        if loaded is not None:
            with loaded.locked() as tracker:
                jpeg = tracker.record.evidence(warning_id, moment)
        else:
            path = hub.record_path(game_id)
            if not path.is_file():
                raise ApiError(404, f"no game {game_id!r} in {hub.games_dir}")
            record = GameRecord(path, readonly=True)
            try:
                jpeg = record.evidence(warning_id, moment)
            finally:
                record.close()
    except RecordError as exc:
        raise ApiError(409, f"game {game_id!r}: {exc}") from exc
    if jpeg is None:
        raise ApiError(404, f"game {game_id!r} keeps no {moment} crop for warning #{warning_id}")
    resp = Response(jpeg, mimetype="image/jpeg")
    resp.headers["Cache-Control"] = "private, max-age=3600"
    return resp
