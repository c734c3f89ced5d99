"""The card file: what it holds, and that a corrupt or hand-edited file fails naming card and field."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from referee.gizmos import CardDataError, GizmosError, default_cards, load_cards
from referee.gizmos.cards import COLORS, EFFECT_KINDS, KIND_COLUMN, parse_cards

ROOT = Path(__file__).resolve().parent.parent
CARD_FILE = ROOT / "referee" / "gizmos" / "data" / "cards.json"
SHARED_REFERENCE = ROOT.parent / "shared" / "reference" / "gizmos_cards.json"


def document() -> dict[str, Any]:
    return json.loads(CARD_FILE.read_text(encoding="utf-8"))


def test_the_bundled_cards_are_36_36_36_and_4_starting() -> None:
    cards = default_cards()
    assert len(cards) == 112 and [c.id for c in cards] == list(range(112))
    assert Counter(c.level for c in cards) == {0: 4, 1: 36, 2: 36, 3: 36}
    assert {c.color for c in cards if c.level == 0} == {"none"}
    for level in (1, 2):  # each color equally represented below Level III
        assert Counter(c.color for c in cards if c.level == level) == {c: 9 for c in COLORS}
    assert [c.id for c in cards if c.color == "any"] == [92, 93, 94, 95]
    assert {c.cost for c in cards if c.level == 1} == {1}
    assert {c.cost for c in cards if c.level == 2} == {2, 3}
    assert {c.cost for c in cards if c.level == 3} == {4, 5, 6, 7}
    assert {c.effect.kind for c in cards} == set(EFFECT_KINDS)
    assert all(KIND_COLUMN[c.effect.kind] == c.type for c in cards)


def test_load_cards_from_a_path_gives_the_same_cards(tmp_path: Path) -> None:
    path = tmp_path / "cards.json"
    path.write_text(CARD_FILE.read_text(encoding="utf-8"), encoding="utf-8")
    assert load_cards(path) == default_cards()
    assert load_cards() is default_cards()


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """An edit of one field of the document, addressed like ``cards.57.effect.count``."""

    def edit(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is _DELETE:
            del node[last]
        else:
            node[int(last) if isinstance(node, list) else last] = value

    return edit


_DELETE = object()

CORRUPTIONS = [
    ("cards.57.color", "purple", "card 57: field 'color'"),
    ("cards.57.cost", 9, "card 57: field 'cost'"),
    ("cards.57.cost", "2", "card 57: field 'cost'"),
    ("cards.20.cost", 0, "card 20: field 'cost'"),
    ("cards.92.cost", 6, "card 92: field 'cost'"),
    ("cards.0.cost", 1, "card 0: field 'cost'"),
    ("cards.0.vp", 2, "card 0: field 'vp'"),
    ("cards.0.color", "red", "card 0: field 'color'"),
    ("cards.45.level", 1, "card 45: field 'level'"),
    ("cards.45.level", True, "card 45: field 'level'"),
    ("cards.45.type", "upgrade", "card 45: field 'type'"),
    ("cards.45.type", "engine", "card 45: field 'type'"),
    ("cards.45.text", "", "card 45: field 'text'"),
    ("cards.45.colour", "red", "card 45: field 'colour'"),
    ("cards.45.vp", -1, "card 45: field 'vp'"),
    ("cards.30.id", 31, "card at position 30: field 'id'"),
    ("cards.30.effect", "draw", "card 30: field 'effect'"),
    ("cards.30.effect.kind", "teleport", "card 30: field 'effect.kind'"),
    ("cards.30.effect.reward", "steal", "card 30: field 'effect.reward'"),
    ("cards.30.effect.count", _DELETE, "card 30: field 'effect.count'"),
    ("cards.30.effect.count", 0, "card 30: field 'effect.count'"),
    ("cards.30.effect.colors", ["pink"], "card 30: field 'effect.colors'"),
    ("cards.30.effect.colors", ["red", "red"], "card 30: field 'effect.colors'"),
    ("cards.30.effect.colours", ["red"], "card 30: field 'effect.colours'"),
    ("cards.4.effect.from", "green", "card 4: field 'effect.from'"),
    ("cards.42.effect.uses", 3, "card 42: field 'effect.uses'"),
    ("cards.44.effect.colors", [], "card 44: field 'effect.colors'"),
    ("cards.12.effect.energy", -1, "card 12: field 'effect.energy'"),
    ("cards.82.effect.applies_to", "everything", "card 82: field 'effect.applies_to'"),
    ("cards.82.effect.amount", 0, "card 82: field 'effect.amount'"),
    ("cards.88.effect.action", "pick", "card 88: field 'effect.action'"),
    ("cards.92.effect.per", "gizmo", "card 92: field 'effect.per'"),
    ("cards.106.effect.build_level", 4, "card 106: field 'effect.build_level'"),
    ("cards.110.effect.level", 0, "card 110: field 'effect.level'"),
    ("cards.1.effect.count", 2, "card 1: field 'effect'"),
    ("format", "gizmo-cards", "format"),
    ("version", 2, "unsupported version 2"),
    ("cards", [], "expected a list of 112 cards"),
]


@pytest.mark.parametrize("path,value,message", CORRUPTIONS, ids=[f"{p}={v!r}" for p, v, _ in CORRUPTIONS])
def test_a_corrupt_card_file_names_the_card_and_the_field(
    tmp_path: Path, path: str, value: Any, message: str
) -> None:
    doc = document()
    _set(path, value)(doc)
    bad = tmp_path / "cards.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(CardDataError) as info:
        load_cards(bad)
    assert message in str(info.value)
    assert isinstance(info.value, GizmosError)


def test_a_missing_or_duplicated_card_is_refused() -> None:
    doc = document()
    doc["cards"].pop(50)
    with pytest.raises(CardDataError, match="112 cards"):
        parse_cards(doc)
    doc = document()
    doc["cards"][50] = copy.deepcopy(doc["cards"][49])
    with pytest.raises(CardDataError, match="card at position 50: field 'id'"):
        parse_cards(doc)


def test_a_card_file_that_is_not_json(tmp_path: Path) -> None:
    bad = tmp_path / "cards.json"
    bad.write_text('{"format": "gizmos-cards", "cards": [', encoding="utf-8")
    with pytest.raises(CardDataError, match="cannot read JSON"):
        load_cards(bad)
    with pytest.raises(CardDataError, match="cannot read JSON"):
        load_cards(tmp_path / "absent.json")


def _build_cards(*args: str) -> subprocess.CompletedProcess[str]:
    script = str(ROOT / "scripts" / "build_cards.py")
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True, timeout=60)


def test_build_cards_reproduces_the_bundled_file(tmp_path: Path) -> None:
    reference = tmp_path / "reference.json"
    reference.write_text(json.dumps(list(reversed(document()["cards"]))), encoding="utf-8")
    out = tmp_path / "cards.json"
    done = _build_cards(str(reference), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8") == CARD_FILE.read_text(encoding="utf-8")


def test_build_cards_refuses_a_bad_reference_in_one_line(tmp_path: Path) -> None:
    cards = document()["cards"]
    cards[57]["cost"] = 12
    reference = tmp_path / "reference.json"
    reference.write_text(json.dumps(cards), encoding="utf-8")
    out = tmp_path / "cards.json"
    done = _build_cards(str(reference), "--out", str(out))
    assert done.returncode == 2 and not out.exists()
    assert "card 57: field 'cost'" in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(not SHARED_REFERENCE.exists(), reason="the shared reference is not beside this checkout")
def test_the_bundled_file_is_built_from_the_shared_reference(tmp_path: Path) -> None:
    out = tmp_path / "cards.json"
    done = _build_cards(str(SHARED_REFERENCE), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8") == CARD_FILE.read_text(encoding="utf-8")
