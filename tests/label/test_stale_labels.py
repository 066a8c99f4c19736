"""Issue 16: a label made on the label page, whose chunk text then changes, is reported stale by ``hybrid``."""

from __future__ import annotations

import csv
import hashlib
import json

from relgrade.cli import main
from relgrade.label import LabelStore


def _corpus(path, texts):
    path.write_text("".join(json.dumps({"doc_id": d, "text": t}) + "\n" for d, t in texts.items()), encoding="utf-8")
    return path


def test_label_from_the_page_goes_stale_when_its_chunk_changes(label_server, items_file, tmp_path, capsys):
    rows = [json.loads(line) for line in items_file.read_text(encoding="utf-8").splitlines()]
    texts = {r["doc_id"]: r["text"] for r in rows}
    server = label_server(items_file)
    for doc, grade in (("d0", 3), ("d1", 0)):
        status, _ = server.request("/api/label", {"query_id": "q0", "doc_id": doc, "annotator": "ann", "grade": grade})
        assert status == 200
    assert "Traceback" not in server.stop()

    export = tmp_path / "human.csv"
    assert main(["label", str(items_file), "--export", str(export)]) == 0
    with open(export, newline="", encoding="utf-8") as fh:
        exported = {r["doc_id"]: r for r in csv.DictReader(fh)}
    assert exported["d0"]["text_sha256"] == hashlib.sha256(texts["d0"].encode("utf-8")).hexdigest()

    # unchanged corpus: both labels fresh
    out = tmp_path / "hy.jsonl"
    assert main(["hybrid", "--human", str(export), "--corpus", str(_corpus(tmp_path / "c0.jsonl", texts)),
                 "--out", str(out)]) == 0
    assert "stale" not in capsys.readouterr().out

    # d0's chunk is rewritten: its label is reported stale and set apart; d1 stays in use
    changed = {**texts, "d0": texts["d0"] + " (rewritten)"}
    assert main(["hybrid", "--human", str(export), "--corpus", str(_corpus(tmp_path / "c1.jsonl", changed)),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "1 stale labels not used" in printed and "stale: q0 / d0 (human ann)" in printed
    in_use = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["doc_id"], r["grade"]) for r in in_use] == [("d1", 0)]
    stale = [json.loads(line) for line in (tmp_path / "hy.jsonl.stale.jsonl").read_text().splitlines()]
    assert [(r["doc_id"], r["reason"]) for r in stale] == [("d0", "chunk text changed since it was labeled")]


def test_labels_of_an_old_store_without_hashes_are_unchecked_not_fresh(tmp_path, capsys):
    import sqlite3

    store = tmp_path / "old.sqlite"
    db = sqlite3.connect(store)  # the schema before text_sha256 was kept
    db.executescript("""CREATE TABLE labels (id INTEGER PRIMARY KEY AUTOINCREMENT, query_id TEXT NOT NULL,
        doc_id TEXT NOT NULL, annotator TEXT NOT NULL, grade INTEGER, skipped INTEGER NOT NULL DEFAULT 0,
        note TEXT NOT NULL DEFAULT '', time TEXT NOT NULL, UNIQUE (query_id, doc_id, annotator));
        INSERT INTO labels (query_id, doc_id, annotator, grade, skipped, note, time)
        VALUES ('q0', 'd0', 'ann', 2, 0, '', '2024-01-01T00:00:00+00:00');""")
    db.commit()
    db.close()
    with LabelStore(store) as s:
        assert s.export(tmp_path / "h.csv") == 1
    corpus = _corpus(tmp_path / "c.jsonl", {"d0": "whatever it says now"})
    assert main(["hybrid", "--human", str(tmp_path / "h.csv"), "--corpus", str(corpus),
                 "--out", str(tmp_path / "hy.jsonl")]) == 0
    printed = capsys.readouterr().out
    assert "1 labels unchecked for staleness (1 without a recorded text hash" in printed
    (row,) = [json.loads(line) for line in (tmp_path / "hy.jsonl").read_text().splitlines()]
    assert "text_sha256" not in row  # never stamped with the current text
