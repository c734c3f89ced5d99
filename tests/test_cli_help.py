"""The whole ``gizmos-referee`` command tree answers ``--help``, and every option says what it is."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from referee.app.cli import build_parser, main


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def _parser_at(path: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


COMMANDS = list(_commands(build_parser()))


def test_the_tree_has_every_group_and_command() -> None:
    top = {p[0] for p in COMMANDS if p}
    assert top >= {"new", "legal", "apply", "score", "simulate", "demo", "run", "finetune", "serve"}
    assert ("vision", "observe") in COMMANDS and ("vision", "train") in COMMANDS
    assert ("hardware", "listen") in COMMANDS and ("hardware", "vectors") in COMMANDS
    assert len(COMMANDS) > 25


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "gizmos-referee")
def test_every_command_answers_help(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: gizmos-referee" + "".join(f" {p}" for p in path))


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "gizmos-referee")
def test_every_option_has_help_and_shows_its_default(path: tuple[str, ...]) -> None:
    parser = _parser_at(path)
    text = " ".join(parser.format_help().split())  # unwrapped
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        name = action.option_strings[0] if action.option_strings else action.dest
        assert action.help, f"gizmos-referee {' '.join(path)}: {name} has no help text"
        if action.default not in (None, False, [], argparse.SUPPRESS):
            shown = "default" in action.help or " ".join(f"(default: {action.default})".split()) in text
            assert shown, f"gizmos-referee {' '.join(path)}: {name} does not show its default"
