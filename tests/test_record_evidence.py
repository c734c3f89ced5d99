"""Evidence for disputes in the game record (schema 2): the camera's crops kept per warning, a
schema-1 record migrated in place without losing an entry, and exports that carry the crops."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.tracker import Tracker
from referee.tracker.record import SCHEMA_VERSION, GameRecord, RecordError


def jpeg(shade: int) -> bytes:
    ok, buf = cv2.imencode(".jpg", np.full((24, 32, 3), shade, np.uint8))
    assert ok
    return buf.tobytes()


def v1_record(path: Path) -> list[dict[str, object]]:
    """A record as the referee wrote it before schema 2 (no evidence table, schema 1)."""
    tracker = Tracker.create(path, ["Ana", "Ben"], seed=2, observed=False)
    tracker.end_game("admin")
    entries = tracker.record.export()["entries"]
    tracker.record.close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE evidence")
    db.execute("UPDATE meta SET value='1' WHERE key='schema'")
    db.commit()
    db.close()
    return entries


def schema_of(path: Path) -> tuple[str, set[str]]:
    db = sqlite3.connect(path)
    try:
        schema = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        db.close()
    return schema, tables - {"sqlite_sequence"}


def test_a_schema_1_record_is_read_as_it_is_and_migrated_when_written(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    entries = v1_record(path)
    assert schema_of(path) == ("1", {"meta", "entries"})

    viewer = GameRecord(path, readonly=True)  # viewing changes nothing, and shows no evidence
    assert viewer.evidence_index() == {} and viewer.evidence(1, "before") is None
    assert viewer.export()["entries"] == entries
    viewer.close()
    assert schema_of(path) == ("1", {"meta", "entries"})

    resumed = Tracker.open(path)  # opened to be written: migrated, every entry kept
    assert schema_of(path) == (str(SCHEMA_VERSION), {"meta", "entries", "evidence"})
    assert resumed.record.export()["entries"] == entries and resumed.ended_by == "admin"
    resumed.record.add_evidence(1, "before", jpeg(10), ["row"])
    resumed.record.close()
    again = GameRecord(path)  # a migrated record opens again as it is
    assert again.evidence(1, "before") == jpeg(10) and len(again) == len(entries)
    again.close()


def test_evidence_is_kept_per_warning_and_moment_and_exported(tmp_path: Path) -> None:
    record = GameRecord(tmp_path / "g.sqlite")
    record.append("setup", {"names": ["Ana", "Ben"]})
    record.add_evidence(3, "before", jpeg(20), ["row", "ring 1"], at=5.0)
    record.add_evidence(3, "after", jpeg(40), ["row", "ring 1"], at=6.0)
    record.add_evidence(3, "after", jpeg(60), ["row"], at=7.0)  # a second crop replaces the first
    assert record.evidence(3, "after") == jpeg(60) and record.evidence(4, "before") is None
    assert record.evidence_index() == {3: {"moments": ["before", "after"], "zones": ["ring 1", "row"]}}
    export = json.loads(json.dumps(record.export()))
    assert export["version"] == SCHEMA_VERSION and len(export["evidence"]) == 2
    copy = GameRecord(":memory:")
    copy.load_export(export)
    assert copy.evidence(3, "before") == jpeg(20) and copy.evidence(3, "after") == jpeg(60)
    assert [e.payload for e in copy.entries()] == [{"names": ["Ana", "Ben"]}]


def test_a_version_1_export_still_imports(tmp_path: Path) -> None:
    tracker = Tracker.create(":memory:", ["Ana", "Ben"], seed=1, observed=False)
    export = tracker.record.export()
    old = {"format": "gizmos-record", "version": 1, "entries": export["entries"]}
    assert Tracker.from_export(old).state == tracker.state


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((1, "during", jpeg(1), []), "moment must be one of"),
        ((0, "before", jpeg(1), []), "warning must be a warning id"),
        ((1, "before", b"GIF89a", []), "expected JPEG bytes"),
        ((1, "before", b"\xff\xd8" + bytes(300 * 1024), []), "is over"),
    ],
)
def test_bad_evidence_is_refused_in_one_line(args: tuple[object, ...], error: str) -> None:
    record = GameRecord(":memory:")
    with pytest.raises(RecordError, match=error):
        record.add_evidence(*args)  # type: ignore[arg-type]
    assert record.evidence_index() == {}


def test_evidence_in_a_failed_transaction_is_not_kept(tmp_path: Path) -> None:
    record = GameRecord(tmp_path / "g.sqlite")
    with pytest.raises(ValueError), record.transaction():
        record.add_evidence(1, "before", jpeg(5), ["row"])
        raise ValueError("the warning itself could not be written")
    assert record.evidence_index() == {}


def test_bad_evidence_in_an_export_names_the_field() -> None:
    bad = {"format": "gizmos-record", "version": 2, "entries": [], "evidence": [{"moment": "before"}]}
    with pytest.raises(RecordError, match=r"export.evidence\[0\].warning"):
        GameRecord.evidence_of_export(bad)
    bad["evidence"] = [{"warning": 1, "moment": "after", "time": 1.0, "zones": [], "jpeg_base64": "@@"}]
    with pytest.raises(RecordError, match="not base64"):
        GameRecord.evidence_of_export(bad)
