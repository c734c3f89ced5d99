"""The referee proper: stable views, the explanation search, warnings and the game record.

It turns what the sensors report (:mod:`referee.observation`, :mod:`referee.events`) into legal
steps of the engine. It imports only the engine and that contract: no camera, no serial port,
no web (see docs/architecture.md). The names below are the package's public face; the modules
are ``tracker`` (the :class:`Tracker`: intake, explaining and accepting, warnings), ``base``
(what its parts share: settings, error, update, log line), ``view`` (stabilising what is seen),
``explain`` (the search), ``turns`` (camera only: which turns ended), ``sensors`` (the dispenser
against the camera), ``corrections`` (what a person's correction makes of the game),
``verdicts`` (warnings), ``record`` (the SQLite game record), ``history`` (a record's moments)
and ``scorekeeper`` (a game of any registered rule set entered step by step, in the same record).
"""

from __future__ import annotations

from referee.tracker.base import LogLine, TrackerError, TrackerSettings, Update
from referee.tracker.corrections import swap_cards
from referee.tracker.record import GameRecord, RecordError
from referee.tracker.scorekeeper import Scorekeeper, ScorekeeperError, replayed_states
from referee.tracker.tracker import Tracker, replay_states
from referee.tracker.verdicts import RefereeWarning

__all__ = [
    "GameRecord",
    "LogLine",
    "RecordError",
    "RefereeWarning",
    "Scorekeeper",
    "ScorekeeperError",
    "Tracker",
    "TrackerError",
    "TrackerSettings",
    "Update",
    "replay_states",
    "replayed_states",
    "swap_cards",
]
