"""docs/contrivance.md says what the code does: every step example parses and prints back the
same, every step kind and Tool card has one, the code table is the engine's, the worked example
is what the engine prints."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from referee.contrivance import CONTRIVANCE, RULES, step_from_json
from referee.contrivance.steps import KINDS, TARGETS
from tests.contrivance_tables import table
from tests.test_contrivance_scoring import bonus_table

DOC = (Path(__file__).resolve().parent.parent / "docs" / "contrivance.md").read_text(encoding="utf-8")


def test_every_step_example_parses_and_prints_back_the_same() -> None:
    examples = [json.loads(m) for m in re.findall(r"`(\{\"kind\":[^`]*\})`", DOC)]
    assert {e["kind"] for e in examples} == set(KINDS)
    played = {e["card"] for e in examples if e["kind"] == "play"}
    assert {c for c in TARGETS if not c.startswith("points")} <= played and "points-2" in played
    for raw in examples:
        assert step_from_json(raw).to_json() == raw, raw


def test_the_code_table_is_the_engines() -> None:
    rows = re.findall(r"^\| `([A-Z_]+)` \| ([\d, ]+) \| (.+) \|$", DOC, flags=re.M)
    assert {code: (tuple(int(x) for x in rulings.split(", ")), text) for code, rulings, text in rows} == {
        r.code: (r.rulings, r.summary) for r in RULES.values()
    }


def test_the_worked_example_is_what_the_engine_prints() -> None:
    final = replace(
        table(2, bonus_table("Mechanic"), builders=("Mechanic", "Engineer")),
        phase="over",
        damage=0,
        requirement=2,
    )
    block = re.search(r"prints \(the same.*?```\n(.*?)```", DOC, flags=re.S)
    assert block is not None and block.group(1) == CONTRIVANCE.score_report(final)
