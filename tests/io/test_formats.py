"""Reading and writing every format, and DataFrames in and out."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from relgrade import InputError, Qrels, Run, read_corpus, read_golden, read_qrels, read_queries, read_run, write_qrels, write_run
from relgrade.io import query_id_for


def test_qrels_formats_agree(tmp_path):
    labels = {"q1": {"d1": 3, "d2": 0}, "q2": {"d3": 1}}
    paths = [write_qrels(labels, tmp_path / name) for name in ("q.txt", "q.csv", "q.jsonl")]
    for path in paths:
        assert read_qrels(path).labels == labels
    assert (tmp_path / "q.txt").read_text().splitlines()[0] == "q1 0 d1 3"


def test_csv_with_annotators_keeps_every_grade(tmp_path):
    (tmp_path / "h.csv").write_text("query_id,doc_id,grade,annotator\nq1,d1,1,ann\nq1,d1,2,bob\nq1,d2,3,ann\n")
    qrels = read_qrels(tmp_path / "h.csv")
    assert qrels.labels == {"q1": {"d1": 1, "d2": 3}}  # lower median of 1 and 2
    assert qrels.annotations[("q1", "d1")] == {"ann": 1, "bob": 2}


def test_golden_jsonl_and_json_list(tmp_path):
    cases = [
        {"query": "refund policy for premium members", "relevant_doc_ids": ["doc_042"]},
        {"query_id": "t", "query": "acme contract", "relevant_doc_ids": ["a"], "relevance_grades": {"a": 3, "b": 1},
         "forbidden_doc_ids": ["g"], "tags": ["tenant"]},
        {"query_id": "n", "query": "who won the 1998 world cup", "relevant_doc_ids": [], "tags": ["no-answer"]},
    ]
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "g.json").write_text(json.dumps(cases))
    for name in ("g.jsonl", "g.json"):
        golden = read_golden(tmp_path / name)
        assert golden.cases[0].query_id == query_id_for("refund policy for premium members")
        qrels = golden.to_qrels()
        assert qrels.topics == (golden.cases[0].query_id, "t", "n")
        assert qrels.labels["t"] == {"a": 3, "b": 1}
        assert qrels.forbidden == {"t": frozenset({"g"})}
        assert golden.cases[2].no_answer and "n" not in qrels.labels
    golden.to_jsonl(tmp_path / "again.jsonl")
    assert read_golden(tmp_path / "again.jsonl").cases == golden.cases


def test_jsonl_run_keeps_list_order_texts_and_scores(tmp_path):
    line = {"query_id": "q", "query": "sso", "results": [{"doc_id": "b", "text": "B text", "score": 0.1},
                                                          {"doc_id": "a", "text": "A text", "score": 0.9}]}
    (tmp_path / "r.jsonl").write_text(json.dumps(line) + "\n")
    run = read_run(tmp_path / "r.jsonl")
    assert run.ranked() == {"q": ["b", "a"]}  # list order is rank order, whatever the scores say
    assert run.texts == {"b": "B text", "a": "A text"} and run.queries == {"q": "sso"}
    assert run.given_score.tolist() == [0.1, 0.9]
    write_run(run, tmp_path / "r.txt")
    assert read_run(tmp_path / "r.txt").ranked() == {"q": ["b", "a"]}
    write_run(run, tmp_path / "r2.jsonl")
    assert read_run(tmp_path / "r2.jsonl").texts == run.texts


def test_run_without_query_id_matches_golden_by_query_text(tmp_path):
    (tmp_path / "r.jsonl").write_text(json.dumps({"query": "SSO setup with Okta", "results": ["d1"]}) + "\n")
    assert read_run(tmp_path / "r.jsonl").query_ids() == [query_id_for("SSO setup with Okta")]


def test_dataframes_in_and_out():
    frame = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "grade": [2, 0]})
    qrels = Qrels.from_frame(frame)
    assert qrels.labels == {"q": {"a": 2, "b": 0}}
    assert qrels.to_frame().equals(frame)
    run = Run.from_frame(pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [0.5, 0.9]}))
    assert run.to_frame()[["doc_id", "rank"]].values.tolist() == [["b", 1], ["a", 2]]
    with pytest.raises(InputError, match="appears twice"):
        Run.from_frame(pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "a"], "score": [1, 2]}))
    with pytest.raises(InputError, match="needs columns"):
        Qrels.from_frame(pd.DataFrame({"x": [1]}))


def test_corpus_and_queries(tmp_path):
    (tmp_path / "c.jsonl").write_text(json.dumps({"doc_id": "d1", "title": "T", "text": "body"}) + "\n")
    (tmp_path / "c.tsv").write_text("d1\tbody one\nd2\tbody two\n")
    (tmp_path / "q.tsv").write_text("1\twhat is sso\n2\trefunds\n")
    assert read_corpus(tmp_path / "c.jsonl") == {"d1": "T\nbody"}
    assert read_corpus(tmp_path / "c.tsv") == {"d1": "body one", "d2": "body two"}
    assert read_queries(tmp_path / "q.tsv") == {"1": "what is sso", "2": "refunds"}
    (tmp_path / "bad.tsv").write_text("d1 no tab here\n")
    with pytest.raises(InputError, match=r"bad.tsv:1: expected 'doc_id<TAB>text'"):
        read_corpus(tmp_path / "bad.tsv")
