"""What the organiser sees: every table's latest summary and online status, and the standings.

The board is game-agnostic: a table's summary says which game it plays (``kind``: "gizmos",
"contrivance", ...), its round, its players with their scores and ranks, its open warnings and
its camera and sensor health, and the board shows exactly that. Every change bumps a version,
so a page's event stream sends only the tables that changed since the version it last saw.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from web.tournament.store import TournamentStore


def standings(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Players across every finished, not excluded game: wins, points (players beaten), score.

    A player is known by name; ``points`` adds, for each game, how many players finished below
    them (a 4-player win is worth 3), so rounds of different table sizes add up fairly.
    """
    rows: dict[str, dict[str, Any]] = {}
    for game in games:
        summary = game.get("summary") or {}
        if game.get("excluded") or not summary.get("finished"):
            continue
        players = [p for p in summary.get("players", []) if isinstance(p, dict) and "name" in p]
        for p in players:
            row = rows.setdefault(
                str(p["name"]), {"name": str(p["name"]), "games": 0, "wins": 0, "points": 0, "score": 0}
            )
            rank = int(p.get("rank") or len(players))
            row["games"] += 1
            row["wins"] += int(rank == 1)
            row["points"] += sum(1 for q in players if int(q.get("rank") or len(players)) > rank)
            row["score"] += int(p.get("score") or 0)
    ordered = sorted(rows.values(), key=lambda r: (-r["points"], -r["wins"], -r["score"], r["name"]))
    for place, row in enumerate(ordered, 1):
        row["place"] = place
    return ordered


class Board:
    """The tables at a glance, thread-safe; :meth:`wait` blocks a page's stream until a change."""

    def __init__(self, store: TournamentStore) -> None:
        self.store = store
        self._cond = threading.Condition()
        self.version = 0
        self._tables: dict[str, dict[str, Any]] = {}
        self._versions: dict[str, int] = {}
        self._standings: list[dict[str, Any]] = []
        self._standings_version = 0
        for game in store.games():  # the latest game of each table, as stored
            if game["summary"] is not None:
                self._tables[game["table"]] = {
                    "summary": game["summary"],
                    "online": False,
                    "seen": game["updated"],
                }
                self._versions[game["table"]] = 0
        self._standings = standings(store.games())

    def update(self, table: str, summary: dict[str, Any] | None = None, online: bool | None = None) -> None:
        """A table's new summary or status (the receiver calls this after storing it)."""
        finished_changed = False
        with self._cond:
            row = self._tables.setdefault(table, {"summary": None, "online": False, "seen": 0.0})
            if summary is not None:
                old = row["summary"] or {}
                finished_changed = bool(summary.get("finished")) != bool(old.get("finished")) or (
                    summary.get("game") != old.get("game") and bool(summary.get("finished"))
                )
                row["summary"] = summary
            if online is not None:
                row["online"] = online
            row["seen"] = time.time()
            self.version += 1
            self._versions[table] = self.version
            self._cond.notify_all()
        if finished_changed:
            self.refresh_standings()

    def refresh_standings(self) -> None:
        new = standings(self.store.games())
        with self._cond:
            self._standings = new
            self.version += 1
            self._standings_version = self.version
            self._cond.notify_all()

    def snapshot(self, since: int = -1) -> dict[str, Any]:
        """The tables changed after version ``since`` (all of them for -1), and the standings."""
        with self._cond:
            tables = [
                {"table": t, **row}
                for t, row in sorted(self._tables.items())
                if self._versions.get(t, 0) > since
            ]
            out: dict[str, Any] = {"version": self.version, "tables": tables}
            if self._standings_version > since:
                out["standings"] = self._standings
        return out

    def wait(self, since: int, timeout: float) -> bool:
        """Block until the board moved past ``since`` (True) or ``timeout`` passed (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: self.version > since, timeout)
