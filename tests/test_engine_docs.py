"""The engine's docs say what the code does: step examples, the rule-code table, the README snippet."""

from __future__ import annotations

import doctest
import json
import re
from pathlib import Path

from referee.gizmos import RULES, IllegalStep, Step, apply, check_invariants, legal_steps, step_from_json
from referee.gizmos.steps import KINDS
from tests.tables import table

ROOT = Path(__file__).resolve().parent.parent
STEPS_MD = (ROOT / "docs" / "steps.md").read_text(encoding="utf-8")
RULES_MD = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _step_examples() -> list[dict[str, object]]:
    found = [json.loads(m) for m in re.findall(r"`(\{\"kind\":[^`]*\})`", STEPS_MD)]
    block = re.search(r"## A turn, step by step\s+```json\n(.*?)```", STEPS_MD, flags=re.S)
    assert block is not None
    found += [json.loads(line) for line in block.group(1).splitlines() if line.strip()]
    return found


def test_every_step_example_parses_and_prints_back_the_same() -> None:
    examples = _step_examples()
    assert {e["kind"] for e in examples} == set(KINDS)  # every kind has an example
    for raw in examples:
        step = step_from_json(raw)
        assert step.to_json() == raw, raw


def test_every_step_kind_is_in_the_tables() -> None:
    for kind in KINDS:
        assert f"| `{kind}` |" in STEPS_MD


def test_the_documented_turn_is_legal_step_by_step() -> None:
    block = re.search(r"## A turn, step by step\s+```json\n(.*?)```", STEPS_MD, flags=re.S)
    assert block is not None
    steps = [step_from_json(json.loads(line)) for line in block.group(1).splitlines() if line.strip()]
    s = table(gizmos={0: [32, 36]}, rings={0: (1, 0, 0, 0)}, display=[4], deck_order={1: [31]})
    for step in steps:
        assert step in legal_steps(s), step.to_json()
        s = apply(s, step)  # observed mode: the reveal and dispense come from the example
        check_invariants(s)
    assert s.current == 1 and s.players[0].vp_tokens == 1 and s.players[0].ring == (0, 1, 0, 0)
    assert s.display[0][0] == 31


def test_the_documented_error_is_what_apply_raises() -> None:
    m = re.search(r"```json\n(\{\"error\":.*?\})\n```", STEPS_MD, flags=re.S)
    assert m is not None
    documented = json.loads(m.group(1))
    s = table(rings={0: (2, 1, 1, 1)})
    try:
        apply(s, Step("pick", 0, color=0))
    except IllegalStep as exc:
        assert exc.to_json() == documented
    else:
        raise AssertionError("a Pick into a full ring was accepted")


def test_rules_md_lists_every_code_with_its_rulings() -> None:
    rows = re.findall(r"^\| `([A-Z_]+)` \| ([0-9, –]+) \|", RULES_MD, flags=re.M)
    listed: dict[str, set[int]] = {}
    for code, rulings in rows:
        numbers: set[int] = set()
        for part in rulings.split(","):
            lo, _, hi = part.strip().partition("–")
            numbers |= set(range(int(lo), int(hi or lo) + 1))
        listed[code] = numbers
    assert set(listed) == set(RULES)
    for code, rule in RULES.items():
        assert listed[code] == set(rule.rulings), code


def test_the_readme_snippet_runs_as_a_doctest() -> None:
    m = re.search(r"## Using the engine from Python\s+```python\n(.*?)```", README, flags=re.S)
    assert m is not None
    test = doctest.DocTestParser().get_doctest(m.group(1), {}, "README.md", str(ROOT / "README.md"), 0)
    assert len(test.examples) >= 8
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
