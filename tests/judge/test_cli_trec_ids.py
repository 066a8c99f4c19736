"""Judge qrels written as TREC cannot hold ids with spaces: refused before any call, CSV written fine (issue 15)."""

from __future__ import annotations

from relgrade.cli import main
from relgrade.io import read_labels, read_qrels

MODEL = "openai/gpt-4o-mini"


def test_ids_with_spaces_refused_for_trec_out_before_paying(server, tmp_path, make_run, fake_key, monkeypatch, capsys):
    run = make_run(tmp_path / "run.jsonl", {"q 1": ("a question", [("doc one", "text [[grade=2]]"),
                                                                  ("NA", "text [[grade=0]]")])})
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    base = ["judge", "--run", str(run), "--model", MODEL, "--api-base", server.base_url,
            "--store", str(tmp_path / "s.sqlite")]
    assert main([*base, "--out", str(tmp_path / "j.qrels")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("relgrade: error: ") and "'q 1' is empty, starts with # or contains whitespace" in err
    assert str(tmp_path / "j.qrels") in err and "\n" not in err
    assert server.stats()["requests"] == 0 and not (tmp_path / "j.qrels").exists()

    assert main([*base, "--out", str(tmp_path / "j.csv")]) == 0
    assert read_qrels(tmp_path / "j.csv").labels == {"q 1": {"doc one": 2, "NA": 0}}
    details = read_labels(tmp_path / "j.csv.details.jsonl")
    assert {(lab.query_id, lab.doc_id, lab.source, lab.model) for lab in details.labels} == \
        {("q 1", "doc one", "judge", MODEL), ("q 1", "NA", "judge", MODEL)}
