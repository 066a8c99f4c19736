"""A lone UTF-16 surrogate (``"\\ud800"``: half an emoji, not text) never reaches a label store (issue 24): in the
items file it is one line naming the file; in a label's note or annotator name the real ``relgrade label`` server
answers 400, stores nothing and logs no traceback."""

from __future__ import annotations

import sqlite3

from relgrade.cli import main


def test_items_with_a_lone_surrogate_are_refused_in_one_line(tmp_path, capsys, monkeypatch):
    import relgrade.label._server as server

    monkeypatch.setattr(server, "serve", lambda *a, **k: (_ for _ in ()).throw(AssertionError("served")))
    items = tmp_path / "items.jsonl"
    items.write_text('{"query_id": "q1", "query": "what", "doc_id": "d1", "text": "half \\ud83d emoji"}\n')
    assert main(["label", str(items), "--no-browser", "--port", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(items) in err[0] and "surrogate" in err[0]


def test_a_note_or_name_with_a_lone_surrogate_is_400_and_stores_nothing(label_server, items_file):
    server = label_server(items_file)
    for body in ({"query_id": "q0", "doc_id": "d0", "annotator": "ann", "grade": 2, "note": "half \ud83d"},
                 {"query_id": "q0", "doc_id": "d0", "annotator": "ann \udc00", "grade": 2}):
        status, _ = server.request("/api/label", body)
        assert status == 400
    status, body = server.request("/api/label", {"query_id": "q0", "doc_id": "d0", "annotator": "ann", "grade": 1,
                                                 "note": "a whole emoji \U0001F600"})
    assert status == 200 and body["label"]["note"] == "a whole emoji \U0001F600"
    rows = sqlite3.connect(server.store).execute("SELECT grade, note FROM labels").fetchall()
    assert rows == [(1, "a whole emoji \U0001F600")]
    stderr = server.stop()
    assert "Traceback" not in stderr
