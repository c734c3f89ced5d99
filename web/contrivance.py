"""Table-side scorekeeping of Contrivance (seed 004) in the dashboard: pages and JSON API.

A Contrivance game has no camera to explain: a person enters each step in manual mode and the
engine checks it. Steps go through :class:`~referee.tracker.scorekeeper.Scorekeeper`, so each
is in the same crash-proof SQLite record as a refereed Gizmos game (resume, undo, export,
replay) before the page sees it. Records live in ``GAMES_DIR/contrivance/``. The security is
the dashboard's (:mod:`web.security`: admin PIN or admin session for every change, CSRF token
on every POST), the body parsing the API's (:func:`web.api.body`) and the live updates the
Gizmos table's (snapshots published under a lock, served by :func:`web.streams.event_stream`).

``POST /api/contrivance/score`` scores a finished Workbench entered once, for tables that
played without the referee; it changes nothing, so it needs the CSRF token but not the PIN.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, g, jsonify, render_template, request, url_for

from referee.contrivance import (
    BUILDERS,
    CONTRIVANCE,
    DEFAULT_EDITION,
    RULES,
    IllegalStep,
    InvalidStep,
    State,
    Tile,
    report,
    score,
    score_workbench,
)
from referee.contrivance.data import COLUMNS, EDGES, MAX_PLAYERS, MAX_VALUE, MIN_PLAYERS, MIN_VALUE
from referee.tracker.record import RecordError
from referee.tracker.scorekeeper import Scorekeeper, ScorekeeperError
from web import api_schemas as S
from web.api import MAX_SEED
from web.errors import ApiError
from web.hub import GAME_ID, RECORD_SUFFIX, HubError, Snapshot
from web.hub import check_names as hub_check_names
from web.schemas import document, valid_body
from web.security import csrf_token, require_admin
from web.streams import event_stream

bp = Blueprint("contrivance", __name__)
SUBDIR = "contrivance"


# ---------------------------------------------------------------------------- games kept by hand


class KeptGame:
    """One Contrivance game: its scorekeeper behind a lock, and the snapshots its pages receive.

    Has the members :func:`web.streams.event_stream` reads (``snapshot``, ``event_since``,
    ``wait_newer``, ``parse_event_id``), so the Gizmos table's event stream serves it unchanged.
    """

    def __init__(self, game_id: str, keeper: Scorekeeper) -> None:
        self.id = game_id
        self.keeper = keeper
        self.epoch = secrets.token_hex(4)
        self._lock = threading.RLock()
        self._cond = threading.Condition()
        self._snapshot = Snapshot(0, {}, [], 0)
        self._publish()

    @contextmanager
    def locked(self) -> Iterator[Scorekeeper]:
        """Hold the game for one change; a snapshot is published when the block ends."""
        with self._lock:
            try:
                yield self.keeper
            finally:
                self._publish()

    def _publish(self) -> None:
        view = game_view(self.id, self.keeper)
        with self._cond:
            seq = self._snapshot.seq + 1
            self._snapshot = Snapshot(seq, view, [], 0)
            self._cond.notify_all()

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def export(self) -> dict[str, Any]:
        with self._lock:
            return self.keeper.export()

    def parse_event_id(self, raw: str | None) -> int | None:
        epoch, _, seq = (raw or "").strip().partition(".")
        return int(seq) if epoch == self.epoch and seq.isdigit() else None

    def event_since(self, seen: int | None) -> dict[str, Any]:
        return self._snapshot.event(self.epoch, 0)

    def wait_newer(self, seen: int, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._snapshot.seq > seen, timeout)


def game_view(game_id: str, keeper: Scorekeeper) -> dict[str, Any]:
    """Everything the game page draws: the table, the legal steps (each with its sentence),
    the move log and the scoring as it stands (final once the game is over)."""
    state: State = keeper.state
    over = state.game_over or keeper.ended_by is not None
    legal = [] if over else CONTRIVANCE.legal_steps(state)
    scoring = score(state)
    return {
        "game_id": game_id,
        "names": keeper.names,
        "state": state.to_json(),
        "round": state.round,
        "deck_size": state.deck_size(),
        "current": CONTRIVANCE.current_player(state),
        "awaiting": _awaiting(state),
        "game_over": state.game_over,
        "ended_by": keeper.ended_by,
        "steps_kept": len(keeper.steps),
        "legal": [{"step": s.to_json(), "text": CONTRIVANCE.describe(s)} for s in legal],
        "log": keeper.log(),
        "scoring": scoring.to_json(),
        "report": report(scoring),
    }


def _awaiting(state: State) -> str | None:
    """What the table is waiting for when a random outcome comes next, in words."""
    if not state.chance:
        return None
    event = state.chance[0]
    what = {
        "builder": "the Builder seat {1} drew",
        "deal": "a card dealt to seat {1}",
        "draw": "the card seat {1} drew",
        "redraw": "the card seat {1}'s Redraw brought",
        "take": "the card seat {1} took blind from seat {2}",
        "reveal": "the Contrivance's requirement, revealed",
    }[event[0]]
    return "enter " + what.format(*event)


class Games:
    """The Contrivance games of one server, opened from their records on first use."""

    def __init__(self, games_dir: str | Path) -> None:
        self.dir = Path(games_dir) / SUBDIR
        self._games: dict[str, KeptGame] = {}
        self._lock = threading.Lock()

    def path(self, game_id: str) -> Path:
        if not GAME_ID.match(game_id):
            raise ApiError(404, f"no Contrivance game {game_id!r} (ids are letters, digits, '-' and '_')")
        return self.dir / f"{game_id}{RECORD_SUFFIX}"

    def create(self, names: list[str], seed: int | None) -> KeptGame:
        with self._lock:
            self.dir.mkdir(parents=True, exist_ok=True)
            base = time.strftime("%Y%m%d-%H%M%S")
            game_id, n = base, 1
            while self.path(game_id).exists() or game_id in self._games:
                n += 1
                game_id = f"{base}-{n}"
            try:
                keeper = Scorekeeper.create(
                    self.path(game_id), CONTRIVANCE.name, names, seed=seed, observed=seed is None
                )
            except ScorekeeperError as exc:
                raise ApiError(400, str(exc)) from exc
            game = self._games[game_id] = KeptGame(game_id, keeper)
            return game

    def get(self, game_id: str) -> KeptGame:
        path = self.path(game_id)
        with self._lock:
            game = self._games.get(game_id)
            if game is not None:
                return game
            if not path.is_file():
                raise ApiError(404, f"no Contrivance game {game_id!r}")
            try:
                keeper = Scorekeeper.open(path)
            except (RecordError, ScorekeeperError) as exc:
                raise ApiError(409, f"Contrivance game {game_id!r} cannot be opened: {exc}") from exc
            game = self._games[game_id] = KeptGame(game_id, keeper)
            return game

    def listing(self) -> list[dict[str, Any]]:
        """Every Contrivance record, newest first (ids only for those not opened yet)."""
        paths = sorted(self.dir.glob(f"*{RECORD_SUFFIX}"), reverse=True) if self.dir.is_dir() else []
        out = []
        for p in paths:
            game_id = p.name[: -len(RECORD_SUFFIX)]
            item: dict[str, Any] = {"id": game_id, "url": url_for("contrivance.game_page", game_id=game_id)}
            loaded = self._games.get(game_id)
            if loaded is not None:
                view = loaded.snapshot.view
                item.update(names=view["names"], over=view["game_over"], round=view["round"])
            out.append(item)
        return out


def games() -> Games:
    app = current_app
    found = app.extensions.get("contrivance_games")
    if found is None:
        found = app.extensions.setdefault("contrivance_games", Games(app.config["GAMES_DIR"]))
    return found


# ---------------------------------------------------------------------------- input checks


def check_names(raw: Any) -> list[str]:
    """Players' names in seat order (seat 0 owns row 1), checked as every game's are."""
    try:
        return hub_check_names(raw, "contrivance")
    except HubError as exc:
        raise ApiError(exc.status, str(exc)) from exc


def _int(raw: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or not lo <= raw <= hi:
        raise ApiError(400, f"{name}: expected a whole number {lo}..{hi}, got {raw!r}")
    return raw


def workbench_from_json(raw: Any) -> tuple[list[str], tuple[tuple[Tile | None, ...], ...]]:
    """A finished table as entered: ``builders`` (row k + 1 is seat k's) and ``workbench``, rows
    of 5 squares each ``null`` or ``{"builder", "double", "value", "facing"}``."""
    builders = raw.get("builders")
    if not isinstance(builders, list) or not MIN_PLAYERS <= len(builders) <= MAX_PLAYERS:
        raise ApiError(
            400, f"builders: expected the Builder of each row, {MIN_PLAYERS} to {MAX_PLAYERS} rows"
        )
    for i, b in enumerate(builders):
        if b not in BUILDERS:
            raise ApiError(400, f"builders[{i}]: expected one of {list(BUILDERS)}, got {b!r}")
    if len(set(builders)) != len(builders):
        raise ApiError(400, "builders: each Builder owns one row; a Builder appears twice")
    rows = raw.get("workbench")
    if not isinstance(rows, list) or len(rows) != len(builders):
        raise ApiError(400, f"workbench: expected {len(builders)} rows, one per Builder")
    bench = []
    for r, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != COLUMNS:
            raise ApiError(400, f"workbench[{r}]: expected {COLUMNS} squares (null for an empty one)")
        out_row: list[Tile | None] = []
        for c, t in enumerate(row):
            where = f"workbench[{r}][{c}]"
            if t is None:
                out_row.append(None)
                continue
            if not isinstance(t, dict) or set(t) - {"builder", "double", "value", "facing"}:
                raise ApiError(400, f'{where}: expected null or {{"builder", "double", "value", "facing"}}')
            if t.get("builder") not in BUILDERS:
                raise ApiError(
                    400, f"{where}.builder: expected one of {list(BUILDERS)}, got {t.get('builder')!r}"
                )
            double = t.get("double", False)
            if not isinstance(double, bool):
                raise ApiError(400, f"{where}.double: expected true or false")
            if t.get("facing") not in EDGES:
                raise ApiError(400, f"{where}.facing: expected one of {list(EDGES)}, got {t.get('facing')!r}")
            value = _int(t.get("value"), f"{where}.value", MIN_VALUE, MAX_VALUE)
            rivets = DEFAULT_EDITION.double_rivets if double else (0,)
            tile_id = f"{t['builder']}-{4 if double else 1}"
            out_row.append(Tile(tile_id, str(t["builder"]), rivets, value, EDGES.index(t["facing"])))
        bench.append(tuple(out_row))
    return [str(b) for b in builders], tuple(bench)


# ---------------------------------------------------------------------------- pages


def _page(template: str, **context: Any) -> str:
    return render_template(template, csrf=csrf_token(), builders=list(BUILDERS), **context)


@bp.get("/contrivance")
def index_page() -> str:
    return _page("contrivance_index.html", games=games().listing())


@bp.get("/contrivance/games/<game_id>")
def game_page(game_id: str) -> str:
    game = games().get(game_id)
    return _page("contrivance.html", game_id=game_id, initial=game.event_since(None))


@bp.get("/contrivance/score")
def finished_table_page() -> str:
    return _page("contrivance_score.html")


# ---------------------------------------------------------------------------- API

TILE = {
    "oneOf": [
        {"type": "null"},
        S.obj(
            ["builder", "value", "facing"],
            {
                "builder": {"enum": list(BUILDERS)},
                "double": {"type": "boolean"},
                "value": {"type": "integer", "minimum": MIN_VALUE, "maximum": MAX_VALUE},
                "facing": {"enum": list(EDGES)},
            },
            closed=True,
        ),
    ]
}
DAMAGE_ENTERED = (-20, 30)
FINISHED_TABLE = S.obj(
    ["builders", "workbench", "damage"],
    {
        "builders": {"type": "array", "items": {"enum": list(BUILDERS)}},
        "workbench": {
            "type": "array",
            "items": {"type": "array", "items": TILE, "minItems": COLUMNS, "maxItems": COLUMNS},
        },
        "damage": {
            "type": "integer",
            "minimum": DAMAGE_ENTERED[0],
            "maximum": DAMAGE_ENTERED[1],
            "description": "the Damage at the end; a wide sanity range, not a rule",
        },
        "requirement": {"type": ["integer", "null"], "minimum": 0, "maximum": 4},
    },
    closed=True,
)
NEW_GAME = S.obj(
    ["names"],
    {
        "names": {"type": "array", "items": S.STR, "minItems": MIN_PLAYERS, "maxItems": MAX_PLAYERS},
        "deal": {"type": "boolean", "description": "Builders and hands dealt from a seed"},
        "seed": {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_SEED},
    },
    closed=True,
)
STEP_BODY = S.obj(["step"], {"step": {"type": "object", "description": "docs/contrivance.md"}}, closed=True)
GAMES = S.obj(["games"], {"games": {"type": "array", "items": S.obj(["id"], {"id": S.STR})}})
SNAPSHOT = S.obj(
    ["id", "seq", "view", "log_from", "log"],
    {
        "id": S.STR,
        "seq": S.INT,
        "view": S.obj(
            ["state", "legal", "log", "scoring", "awaiting", "game_over"],
            {
                "state": S.OBJ,
                "legal": {"type": "array", "items": S.obj(["step", "text"], {"step": S.OBJ, "text": S.STR})},
                "log": {"type": "array"},
                "scoring": {"type": ["object", "null"]},
                "awaiting": {"type": ["string", "null"]},
                "game_over": S.BOOL,
            },
        ),
        "log_from": S.INT,
        "log": {"type": "array"},
    },
)
SCORED = S.obj(
    ["builders", "workbench", "scoring", "report"],
    {
        "builders": S.STR_LIST,
        "workbench": {"type": "array", "items": {"type": "array"}},
        "scoring": S.OBJ,
        "report": {"type": ["string", "array", "object"]},
    },
)


@bp.get("/api/contrivance/games")
@document("the Contrivance games kept by hand", ok=GAMES)
def list_games() -> Response:
    return jsonify({"games": games().listing()})


@bp.post("/api/contrivance/games")
@document(
    "create a Contrivance game kept by hand (dealt from a seed, or Builders and hands entered)",
    ok=S.CREATED,
    body=NEW_GAME,
    ok_status=201,
    errors=(503,),
)
@require_admin
def create_game() -> Response:
    data = valid_body("game")
    deal = data.get("deal", False)  # its type and the seed's range are NEW_GAME's, checked by valid_body
    seed = data.get("seed")
    if seed is not None and not deal:
        raise ApiError(400, "seed: only a dealt setup (deal: true) uses a seed")
    if deal and seed is None:
        seed = secrets.randbelow(2**31)
    created = games().create(check_names(data.get("names")), seed)
    resp = jsonify(
        {"id": created.id, "url": url_for("contrivance.game_page", game_id=created.id), "seed": seed}
    )
    resp.status_code = 201
    return resp


@bp.get("/api/contrivance/games/<game_id>")
@document("the table, the legal steps, the log and the scoring", ok=SNAPSHOT, errors=(404, 409))
def get_game(game_id: str) -> Response:
    return jsonify(games().get(game_id).event_since(None))


@bp.get("/api/contrivance/games/<game_id>/events")
@document(
    "snapshots as server-sent events",
    media="text/event-stream",
    errors=(404, 409),
    query={"since": {"type": "string"}},
    headers={"Last-Event-ID": {"type": "string"}},
)
def events(game_id: str) -> Response:
    game = games().get(game_id)
    seen = game.parse_event_id(request.headers.get("Last-Event-ID") or request.args.get("since"))
    cfg = current_app.config
    stream = event_stream(game, seen, float(cfg["SSE_HEARTBEAT_S"]), float(cfg["SSE_MAX_S"]))  # type: ignore[arg-type]
    resp = Response(stream, mimetype="text/event-stream")
    resp.headers["Cache-Control"] = "no-cache"
    resp.headers["X-Accel-Buffering"] = "no"
    return resp


@bp.get("/api/contrivance/games/<game_id>/export")
@document("the game record as JSON (Scorekeeper.from_export rebuilds it)", ok=S.EXPORT, errors=(404, 409))
def export(game_id: str) -> Response:
    game = games().get(game_id)
    data = game.export()
    resp = Response(json.dumps(data, indent=1), mimetype="application/json")
    resp.headers["Content-Disposition"] = f'attachment; filename="contrivance-{game_id}.json"'
    return resp


@bp.post("/api/contrivance/games/<game_id>/steps")
@document(
    "enter one step (docs/contrivance.md has every step's JSON)",
    ok=S.CHANGED,
    body=STEP_BODY,
    errors=(404, 409, 422, 503),
)
@require_admin
def play(game_id: str) -> Response:
    game = games().get(game_id)
    data = valid_body()
    with game.locked() as keeper:
        try:
            keeper.play(data["step"], who=g.who)
        except InvalidStep as exc:
            raise ApiError(422, str(exc)) from exc
        except IllegalStep as exc:
            raise ApiError(
                409,
                exc.message,
                code=exc.code,
                rulings=list(RULES[exc.code].rulings),
                rule=RULES[exc.code].summary,
                player=exc.player,
            ) from exc
        except ScorekeeperError as exc:
            raise ApiError(409, str(exc)) from exc
    return jsonify({"ok": True, "seq": game.snapshot.seq})


@bp.post("/api/contrivance/games/<game_id>/undo")
@document("take back the last step entered", ok=S.CHANGED, errors=(404, 409, 503))
@require_admin
def undo(game_id: str) -> Response:
    game = games().get(game_id)
    with game.locked() as keeper:
        try:
            keeper.undo(who=g.who)
        except ScorekeeperError as exc:
            raise ApiError(409, str(exc)) from exc
    return jsonify({"ok": True, "seq": game.snapshot.seq})


@bp.post("/api/contrivance/score")
@document(
    "score a finished Workbench entered once (no game behind it): sets, burn-outs, bonuses",
    ok=SCORED,
    body=FINISHED_TABLE,
)
def score_finished_table() -> Response:
    data = valid_body("table")
    builders, bench = workbench_from_json(data)
    damage: int = data["damage"]  # a whole number in DAMAGE_ENTERED: the schema's
    scoring = score_workbench(bench, builders, damage, data.get("requirement"))  # 0..4 or null: the schema's
    return jsonify(
        {
            "builders": builders,
            "workbench": [[None if t is None else t.to_json() for t in row] for row in bench],
            "scoring": scoring.to_json(),
            "report": report(scoring),
        }
    )
