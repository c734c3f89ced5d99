"""The rules engines' shared error model: one exception type per kind of failure, one stable code
per rule (python-chess style). It sits below every engine (standard library only).

Each engine keeps its own names: its base error (``GizmosError``, ``ContrivanceError``, both
:class:`EngineError`), its ``InvalidStep`` and ``StateError``, its rule table ``RULES`` and its
``IllegalStep``, which is :class:`IllegalStepBase` bound to that table. What they share, a
rule's record and how a broken rule is raised and put into JSON, is written here once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar


class EngineError(Exception):
    """Base of every error a rules engine raises."""


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule code, the numbered rulings it enforces and a plain description."""

    code: str
    rulings: tuple[int, ...]
    summary: str


class IllegalStepBase(EngineError):
    """A well-formed step that breaks a rule. ``code`` is stable; ``message`` is plain language.

    An engine's ``IllegalStep`` subclasses this with its rule table as ``RULES``; a code that is
    not in the table is a programming error (``KeyError``).
    """

    RULES: ClassVar[Mapping[str, Rule]] = {}

    def __init__(self, code: str, message: str, player: int | None = None) -> None:
        if code not in self.RULES:
            raise KeyError(f"unknown rule code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.player = player

    @property
    def rule(self) -> Rule:
        """The rule this step broke."""
        return self.RULES[self.code]

    def to_json(self) -> dict[str, object]:
        """The error as JSON (for the CLI and the API), the same form for every game."""
        return {
            "error": "illegal_step",
            "code": self.code,
            "rulings": list(self.rule.rulings),
            "message": self.message,
            "player": self.player,
        }
