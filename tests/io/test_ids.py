"""One id rule for every reader (issue 24): the same hostile ids through labels, runs, golden sets, corpora, queries,
the label page's items and the in-memory constructors give the same ids, or the same one-line refusal."""

from __future__ import annotations

import json
import sys

import pandas as pd
import pytest

from relgrade import evaluate
from relgrade._errors import InputError
from relgrade.cli import main
from relgrade.io import Qrels, Run, read_corpus, read_golden, read_labels, read_qrels, read_queries, read_run
from relgrade.io._ids import WHITESPACE, as_id
from relgrade.label._items import read_items

# (written id, id every reader must give): whitespace around an id is dropped, inside it is kept
PADDED = [(" q1", "q1"), ("q2 ", "q2"), ("\tq3\u00a0", "q3"), ("\u3000NA\u2003", "NA"), ("doc one", "doc one"),
          ("NULL", "NULL")]
# JSON values that are not ids: refused naming the file and line
NOT_IDS = [1.5, True, None, {"a": 1}, [1], "", "   "]


def test_whitespace_is_what_python_strips():
    assert set(WHITESPACE) == {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    assert as_id(7) == "7" and as_id(" x ") == "x"
    for value in NOT_IDS:
        with pytest.raises(InputError):
            as_id(value)


def _json_readers(tmp_path, qid, did):
    """Every reader of JSON-carried ids, fed the pair (qid, did); each returns the (query id, doc id) it read."""
    def write(name, obj):
        path = tmp_path / name
        path.write_text(json.dumps(obj) + "\n", encoding="utf-8")
        return path

    def labels():
        lab = read_labels(write("l.jsonl", {"query_id": qid, "doc_id": did, "grade": 1})).labels[0]
        return lab.query_id, lab.doc_id

    def run():
        r = read_run(write("r.jsonl", {"query_id": qid, "results": [{"doc_id": did}]}))
        return r.query_id[0], r.doc_id[0]

    def golden():
        case = read_golden(write("g.jsonl", {"query_id": qid, "query": "a question", "relevant_doc_ids": [did]})).cases[0]
        return case.query_id, case.relevant_doc_ids[0]

    def corpus_and_queries():
        (doc,) = read_corpus(write("c.jsonl", {"doc_id": did, "text": "body"}))
        (query,) = read_queries(write("q.jsonl", {"query_id": qid, "query": "a question"}))
        return query, doc

    def items():
        item = read_items(write("i.jsonl", {"query_id": qid, "query": "a question", "doc_id": did, "text": "body"}))[0]
        return item.query_id, item.doc_id

    return {"labels": labels, "run": run, "golden": golden, "corpus/queries": corpus_and_queries, "items": items}


@pytest.mark.parametrize("written,expected", PADDED)
def test_every_json_reader_strips_the_same_way(tmp_path, written, expected):
    for name, read in _json_readers(tmp_path, written, written).items():
        assert read() == (expected, expected), name


def test_every_json_reader_reads_an_integer_as_its_decimal_string(tmp_path):
    for name, read in _json_readers(tmp_path, 7, 12).items():
        assert read() == ("7", "12"), name


@pytest.mark.parametrize("bad", NOT_IDS, ids=repr)
def test_every_json_reader_refuses_a_non_id_naming_file_and_line(tmp_path, bad):
    for name, read in _json_readers(tmp_path, "q1", bad).items():
        with pytest.raises(InputError) as err:
            read()
        message = str(err.value)
        assert ".jsonl:1: " in message and "\n" not in message, (name, message)


@pytest.mark.parametrize("written,expected", PADDED)
def test_text_readers_strip_the_same_way(tmp_path, written, expected):
    cell = written.replace('"', '""')
    (tmp_path / "l.csv").write_text(f'query_id,doc_id,grade\n"{cell}","{cell}",2\n', encoding="utf-8")
    assert read_qrels(tmp_path / "l.csv").labels == {expected: {expected: 2}}
    (tmp_path / "c.tsv").write_text(f"{written}\tbody\n", encoding="utf-8")
    (tmp_path / "q.tsv").write_text(f"{written}\ta question\n", encoding="utf-8")
    if written.strip("\t") == written:  # a TSV field cannot start or end with the tab that separates it
        assert list(read_corpus(tmp_path / "c.tsv")) == [expected] and list(read_queries(tmp_path / "q.tsv")) == [expected]
    (tmp_path / "i.csv").write_text(f'query_id,query,doc_id,text\n"{cell}",a question,"{cell}",body\n', encoding="utf-8")
    assert read_items(tmp_path / "i.csv")[0].key == (expected, expected)


def test_constructors_follow_the_rule():
    run = Run.from_dict({" q1 ": {"d1\u00a0": 1.0}, 7: {8: 2.0}})
    assert run.query_ids() == ["q1", "7"] and run.doc_id.tolist() == ["d1", "8"]
    assert Qrels({" q1 ": {" d1": 2}}).labels == {"q1": {"d1": 2}}
    assert Run.from_frame(pd.DataFrame({"query_id": [" q"], "doc_id": ["d "], "score": [1.0]})).ranked() == {"q": ["d"]}
    with pytest.raises(InputError, match="appears twice"):
        Run.from_dict({"q": {"d": 1.0, " d": 2.0}})
    with pytest.raises(InputError, match="labeled twice"):
        Qrels({"q": {"d": 1, "d ": 2}})
    with pytest.raises(InputError, match="not an id"):
        Run.from_dict({"q": {1.5: 1.0}})


def test_a_padded_query_id_in_a_jsonl_run_matches_trec_qrels(tmp_path):
    """The case issue 24 found: the label reader stripped, the run reader did not, the query scored 0."""
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "r.jsonl").write_text(json.dumps({"query_id": " q1 ", "results": [{"doc_id": " d1"}]}) + "\n"
                                      + json.dumps({"query_id": "q2\u00a0", "results": ["d2 "]}) + "\n")
    report = evaluate(read_qrels(tmp_path / "q.txt"), read_run(tmp_path / "r.jsonl"), ["recall@1"], ci=False)
    assert report.per_query == {"q1": {"recall@1": 1.0}, "q2": {"recall@1": 1.0}}


def test_cli_refuses_a_non_id_in_one_line(tmp_path, capsys):
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "r.jsonl").write_text(json.dumps({"query_id": "q1", "results": [{"doc_id": "d0"}]}) + "\n"
                                      + json.dumps({"query_id": "q2", "results": [{"doc_id": {"a": 1}}]}) + "\n")
    assert main(["evaluate", "--run", str(tmp_path / "r.jsonl"), "--qrels", str(tmp_path / "q.txt")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"relgrade: error: {tmp_path / 'r.jsonl'}:2: ") and "not an id" in err and "\n" not in err
