"""``relgrade evaluate`` and ``relgrade gate`` end to end on real files."""

from __future__ import annotations

import json

from relgrade.cli import main

QRELS = "".join(f"q{i} 0 rel{i} 2\nq{i} 0 other{i} 0\n" for i in range(20))


def write_run(path, hits: int):
    lines = []
    for i in range(20):
        first, second = (f"rel{i}", f"other{i}") if i < hits else (f"other{i}", f"noise{i}")
        lines += [f"q{i} Q0 {first} 1 2.0 t\n", f"q{i} Q0 {second} 2 1.0 t\n"]
    path.write_text("".join(lines))


def test_evaluate_json_and_gate(tmp_path, capsys):
    (tmp_path / "qrels.txt").write_text(QRELS)
    write_run(tmp_path / "base.txt", 18)
    write_run(tmp_path / "same.txt", 18)
    write_run(tmp_path / "worse.txt", 17)
    for name in ("base", "same", "worse"):
        code = main(["evaluate", "--run", str(tmp_path / f"{name}.txt"), "--qrels", str(tmp_path / "qrels.txt"),
                     "--k", "5", "--json", str(tmp_path / f"{name}.json")])
        assert code == 0
    out = capsys.readouterr().out
    assert "recall@5" in out and "failed queries" in out
    base = json.loads((tmp_path / "base.json").read_text())
    assert base["aggregate"]["recall@5"]["value"] == 0.9
    assert len(base["aggregate"]["recall@5"]["ci95"]) == 2
    assert base["failures"][0]["expected"] == ["rel18"] and base["failures"][0]["got"] == ["other18", "noise18"]

    assert main(["gate", "--baseline", str(tmp_path / "base.json"), "--current", str(tmp_path / "same.json")]) == 0
    # 0.90 -> 0.85 is a 5-point drop: blocked at the default 2%
    assert main(["gate", "--baseline", str(tmp_path / "base.json"), "--current", str(tmp_path / "worse.json")]) == 1
    assert main(["gate", "--baseline", str(tmp_path / "base.json"), "--current", str(tmp_path / "worse.json"),
                 "--max-drop", "0.06"]) == 0
    assert main(["gate", "--baseline", str(tmp_path / "base.json"), "--current", str(tmp_path / "worse.json"),
                 "--metric", "ndcg@10"]) == 2
    assert "ndcg@10" in capsys.readouterr().err


def test_gate_fails_on_any_leak(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"query_id": "t1", "query": "globex contract terms", "relevant_doc_ids": ["globex_terms"],
                                  "forbidden_doc_ids": ["acme_addendum"], "tags": ["tenant"]}) + "\n")
    (tmp_path / "safe.jsonl").write_text(json.dumps({"query_id": "t1", "results": [{"doc_id": "globex_terms"}]}) + "\n")
    (tmp_path / "leaky.jsonl").write_text(json.dumps({"query_id": "t1", "results": [{"doc_id": "globex_terms"}, {"doc_id": "acme_addendum"}]}) + "\n")
    for name in ("safe", "leaky"):
        assert main(["evaluate", "--run", str(tmp_path / f"{name}.jsonl"), "--qrels", str(golden), "--json", str(tmp_path / f"{name}.json")]) == 0
    leaky = json.loads((tmp_path / "leaky.json").read_text())
    assert leaky["leaks"] == [{"query_id": "t1", "query": "globex contract terms", "doc_id": "acme_addendum", "rank": 2}]
    assert leaky["aggregate"]["recall@5"]["value"] == 1.0  # same recall, still blocked
    assert main(["gate", "--baseline", str(tmp_path / "safe.json"), "--current", str(tmp_path / "leaky.json")]) == 1


def test_gate_input_errors(tmp_path, capsys):
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "ok.json").write_text(json.dumps({"aggregate": {"recall@5": 0.8}}))
    assert main(["gate", "--baseline", str(tmp_path / "bad.json"), "--current", str(tmp_path / "ok.json")]) == 2
    assert "bad.json:1: invalid JSON" in capsys.readouterr().err
    # a report that does not record how it was computed cannot be gated (issue 14): it used to pass
    assert main(["gate", "--baseline", str(tmp_path / "ok.json"), "--current", str(tmp_path / "ok.json")]) == 2
    err = capsys.readouterr().err
    assert "ok.json" in err and "records no labels" in err and len(err.strip().splitlines()) == 1
    assert main(["gate", "--baseline", str(tmp_path / "ok.json"), "--current", str(tmp_path / "missing.json")]) == 2


def test_compare_command(tmp_path, capsys):
    (tmp_path / "qrels.txt").write_text(QRELS)
    write_run(tmp_path / "a.txt", 10)
    write_run(tmp_path / "b.txt", 18)
    assert main(["compare", "--run-a", str(tmp_path / "a.txt"), "--run-b", str(tmp_path / "b.txt"),
                 "--qrels", str(tmp_path / "qrels.txt"), "--metric", "recall@5", "--json", str(tmp_path / "c.json")]) == 0
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["metrics"]["recall@5"]["diff"] == 0.4
    assert data["metrics"]["recall@5"]["p_value"] < 0.01
    assert data["settings"]["no_answer"] == "exclude" and data["settings"]["queries"]["n"] == 20
    assert len(data["settings"]["labels"]["sha256"]) == 64


def test_compare_table_columns_are_separated(tmp_path, capsys):
    (tmp_path / "qrels.txt").write_text(QRELS)
    write_run(tmp_path / "a.txt", 18)
    write_run(tmp_path / "b.txt", 18)  # identical runs: CI [+0.0000, +0.0000] and p 1.0000 used to run together
    assert main(["compare", "--run-a", str(tmp_path / "a.txt"), "--run-b", str(tmp_path / "b.txt"),
                 "--qrels", str(tmp_path / "qrels.txt"), "--metric", "recall@5,mrr"]) == 0
    lines = capsys.readouterr().out.splitlines()[2:]
    head, rows = lines[0], lines[1:]
    assert [r.split()[0] for r in rows] == ["recall@5", "mrr"]
    for row in rows:
        assert "]1.0000" not in row and row.split("]")[1].split() == ["1.0000"]
        assert row.index("[") == head.index("95% CI")  # the CI column starts under its header
        assert row.rindex("1.0000") == head.index("p (paired")  # and so does the p column


def test_evaluate_counts_are_singular_or_plural(tmp_path, capsys):
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"query_id": "t1", "query": "globex terms", "relevant_doc_ids": ["globex_terms"],
                                  "forbidden_doc_ids": ["acme_addendum"]}) + "\n"
                      + json.dumps({"query_id": "t2", "query": "nothing", "relevant_doc_ids": []}) + "\n")
    (tmp_path / "run.jsonl").write_text(
        json.dumps({"query_id": "t1", "results": [{"doc_id": "x"}, {"doc_id": "acme_addendum"}]}) + "\n"
        + json.dumps({"query_id": "t2", "results": [{"doc_id": "y"}]}) + "\n")
    assert main(["evaluate", "--run", str(tmp_path / "run.jsonl"), "--qrels", str(golden), "--metric", "recall@5"]) == 0
    out = capsys.readouterr().out
    assert "1 no-answer query (no relevant doc) reported apart" in out
    assert "1 failed query (no relevant doc in the top 5)" in out
    assert "LEAKS: 1 forbidden document retrieved in the top 5" in out
