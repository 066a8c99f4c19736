from __future__ import annotations

import csv
import json
import sqlite3
from datetime import datetime, timezone

import pytest

from relgrade._errors import InputError
from relgrade.io import read_qrels
from relgrade.label import EXPORT_COLUMNS, LabelStore


def test_labels_survive_reopen_and_replace(tmp_path):
    path = tmp_path / "labels.sqlite"
    with LabelStore(path) as store:
        store.put("q1", "d1", "ann", 2)
        store.put("q1", "d2", "ann", None, note="unsure")
        store.put("q1", "d1", "ann", 3, note="changed my mind")
    # Read back with plain sqlite3, not through the store: the rows are really on disk.
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = db.execute("SELECT query_id, doc_id, annotator, grade, skipped, note FROM labels ORDER BY id").fetchall()
    assert rows == [("q1", "d2", "ann", None, 1, "unsure"), ("q1", "d1", "ann", 3, 0, "changed my mind")]
    stamp = datetime.fromisoformat(db.execute("SELECT time FROM labels LIMIT 1").fetchone()[0])
    assert stamp.utcoffset() == timezone.utc.utcoffset(None)
    assert abs((datetime.now(timezone.utc) - stamp).total_seconds()) < 3600
    db.close()
    with LabelStore(path) as again:
        assert [(lab.doc_id, lab.grade, lab.skipped) for lab in again.labels("ann")] == [("d2", None, True), ("d1", 3, False)]


def test_undo_is_per_annotator_and_last_first(tmp_path):
    with LabelStore(tmp_path / "s.sqlite") as store:
        store.put("q", "a", "alice", 1)
        store.put("q", "b", "bob", 2)
        store.put("q", "c", "alice", 0)
        assert store.undo("alice").doc_id == "c"
        assert store.undo("alice").doc_id == "a"
        assert store.undo("alice") is None
        assert [lab.doc_id for lab in store.labels()] == ["b"]


def test_put_refuses_bad_grades(tmp_path):
    with LabelStore(tmp_path / "s.sqlite") as store:
        for bad in (4, -1, True, 1.5, "2"):
            with pytest.raises(ValueError):
                store.put("q", "d", "a", bad)
        with pytest.raises(ValueError):
            store.put("q", "d", "", 1)
        assert store.labels() == []


def test_export_csv_is_read_by_read_qrels_with_annotators(tmp_path):
    with LabelStore(tmp_path / "s.sqlite") as store:
        store.put("q1", "d1", "alice", 3, note='says "exact", with a comma')
        store.put("q1", "d1", "bob", 1)
        store.put("q1", "d2", "alice", 0)
        store.put("q2", "d9", "bob", None)  # a skip is not a label
        assert store.export(tmp_path / "h.csv") == 3
        assert store.export(tmp_path / "h.jsonl") == 3
        assert store.export(tmp_path / "bob.csv", annotator="bob") == 1
    with open(tmp_path / "h.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == EXPORT_COLUMNS
    assert rows[1][EXPORT_COLUMNS.index("note")] == 'says "exact", with a comma'
    for name in ("h.csv", "h.jsonl"):
        qrels = read_qrels(tmp_path / name)
        assert qrels.annotations[("q1", "d1")] == {"alice": 3, "bob": 1}
        assert qrels.annotations[("q1", "d2")] == {"alice": 0}
        assert "q2" not in qrels.labels
    first = json.loads((tmp_path / "h.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert set(first) == set(EXPORT_COLUMNS)
    assert read_qrels(tmp_path / "bob.csv").annotations == {("q1", "d1"): {"bob": 1}}


def test_bad_store_and_export_paths(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(InputError, match="not a relgrade label store"):
        LabelStore(junk)
    with pytest.raises(InputError, match="folder does not exist"):
        LabelStore(tmp_path / "nope" / "s.sqlite")
    with LabelStore(tmp_path / "store.csv") as store:
        store.put("q", "d", "a", 1)
        with pytest.raises(InputError, match=r"\.csv or \.jsonl"):
            store.export(tmp_path / "out.qrels")
        with pytest.raises(InputError, match="label store itself"):
            store.export(tmp_path / "store.csv")
        assert len(store.labels()) == 1
