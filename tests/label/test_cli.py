from __future__ import annotations

import socket

from relgrade.cli import main
from relgrade.io import read_qrels
from relgrade.label import LabelStore


def test_bad_items_file_exits_2_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "items.csv"
    bad.write_text("query_id,query,doc_id,text\nq1,x,d1,ok\nq1,x,,missing doc\n", encoding="utf-8")
    assert main(["label", str(bad), "--no-browser"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"relgrade: error: {bad}:3: missing doc_id") and "\n" not in err
    assert not (tmp_path / "items.csv.labels.sqlite").exists()


def test_busy_port_exits_2(items_file, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["label", str(items_file), "--no-browser", "--port", str(port)]) == 2
    assert "pass another --port, or --port 0" in capsys.readouterr().err


def test_export_writes_what_read_qrels_reads(items_file, tmp_path, capsys):
    assert main(["label", str(items_file), "--export", str(tmp_path / "x.csv")]) == 2
    assert "label first" in capsys.readouterr().err
    store = tmp_path / "items.jsonl.labels.sqlite"
    with LabelStore(store) as db:
        db.put("q0", "d0", "alice", 3)
        db.put("q0", "d0", "bob", 2)
        db.put("q0", "d1", "bob", None)
    out = tmp_path / "human.csv"
    assert main(["label", str(items_file), "--export", str(out)]) == 0
    assert "wrote 2 labels" in capsys.readouterr().out
    assert read_qrels(out).annotations == {("q0", "d0"): {"alice": 3, "bob": 2}}
    custom = tmp_path / "elsewhere.sqlite"
    with LabelStore(custom) as db:
        db.put("q2", "d6", "carol", 1)
    assert main(["label", str(items_file), "--store", str(custom), "--export", str(out), "--annotator", "carol"]) == 0
    assert read_qrels(out).labels == {"q2": {"d6": 1}}
