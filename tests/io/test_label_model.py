"""The one label model (issue 16): one reader, one writer, one grade parser, one median, one scale rule."""

from __future__ import annotations

import hashlib
import json

import pytest

from relgrade._errors import InputError
from relgrade.io import (
    LABEL_COLUMNS, Label, LabelSet, Qrels, lower_median, on_judge_scale, parse_grade, read_labels, read_qrels,
    text_sha256, write_labels, write_qrels,
)


def test_every_label_file_reads_into_one_table(tmp_path):
    details = tmp_path / "j.details.jsonl"
    details.write_text(
        json.dumps({"query_id": "q1", "doc_id": "d1", "text": "chunk", "grade": 1, "model": "m/x", "prompt_hash": "p",
                    "scale": [0, 1], "expected_grade": 0.8, "distribution": {"0": 0.2, "1": 0.8}}) + "\n"
        + json.dumps({"query_id": "q1", "doc_id": "d2", "grade": None, "model": "m/x", "status": "unparsed",
                      "scale": [0, 1]}) + "\n")
    judge = read_labels(details)
    assert judge.scale == (0, 1) and judge.n_empty == 1 and judge.unjudged == (("q1", "d2"),) and judge.model == "m/x"
    (lab,) = judge.labels
    assert (lab.source, lab.model, lab.prompt_hash, lab.grade, lab.expected_grade) == ("judge", "m/x", "p", 1, 0.8)
    assert lab.text_sha256 == hashlib.sha256(b"chunk").hexdigest() and lab.distribution == {0: 0.2, 1: 0.8}

    sample = tmp_path / "sample.csv"
    sample.write_text("query_id,query,doc_id,text,text_sha256,judge_grade,grade,design,stratum,weight\n"
                      "q1,what,d1,chunk,abc,2,3,strata,grade=2,4.5\nq1,what,d2,other,,1,,strata,grade=1,2\n")
    human = read_labels(sample)
    assert human.design == "strata" and human.n_empty == 1 and human.weights() == {("q1", "d1"): 4.5}
    assert human.labels[0].text_sha256 == "abc" and human.labels[0].judge_grade == 2
    frame = human.to_frame()
    assert list(frame.columns[:len(LABEL_COLUMNS)]) == list(LABEL_COLUMNS)
    assert frame.loc[0, "weight"] == 4.5 and frame.loc[0, "source"] == "human" and frame.loc[0, "design"] == "strata"

    trec = tmp_path / "q.txt"
    trec.write_text("q1 0 d1 2\nq1 0 d2 0\n")
    assert read_labels(trec).grades() == {"q1": {"d1": 2, "d2": 0}} == read_qrels(trec).labels


def test_writer_round_trips_through_the_reader_and_neutralises_formulas(tmp_path):
    ids = ["=HYPERLINK(\"http://x\")", "+1", "-2", "@sum", "'quoted", "''", "plain", "NA"]
    rows = [Label(q, f"doc {q}", i % 4, "human", annotator="=evil", time="2024-01-01", text=f"\t{q} text",
                  weight=1.5) for i, q in enumerate(ids)]
    for suffix in (".csv", ".jsonl"):
        path = write_labels(rows, tmp_path / f"labels{suffix}")
        back = read_labels(path)
        assert [(b.query_id, b.doc_id, b.grade, b.annotator, b.text, b.weight) for b in back.labels] == \
            [(r.query_id, r.doc_id, r.grade, r.annotator, r.text, r.weight) for r in rows]
        assert all(b.text_sha256 == text_sha256(b.text) for b in back.labels)
    import csv

    with open(tmp_path / "labels.csv", newline="", encoding="utf-8") as fh:
        cells = [c for row in list(csv.reader(fh))[1:] for c in row]
    assert not any(c.startswith(("=", "+", "-", "@", "\t")) for c in cells)


def test_one_grade_parser():
    assert [parse_grade(v) for v in (2, 2.0, "2", " 3 ", "", None)] == [2, 2, 2, 3, None, None]
    for bad in ("nan", float("nan"), float("inf"), "1e400", "-inf", True, 1.5, "two"):
        with pytest.raises(InputError):
            parse_grade(bad, path="f.csv", line=3)


def test_one_lower_median_for_qrels_and_labels():
    grades = [(1, 2), (0, 2, 3), (3,), (1, 1, 2, 2)]
    for gs in grades:
        records = [("q", "d", g, f"a{i}") for i, g in enumerate(gs)]
        labels = LabelSet(tuple(Label("q", "d", g, "human", annotator=f"a{i}") for i, g in enumerate(gs)))
        assert Qrels.from_records(records).labels["q"]["d"] == labels.grades()["q"]["d"] == lower_median(gs) == \
            sorted(gs)[(len(gs) - 1) // 2]


def test_scale_errors_name_the_line_and_count(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("query_id,doc_id,grade\nq1,d1,1\nq1,d2,4\nq1,d3,-1\n")
    with pytest.raises(InputError, match=r"h.csv: 2 label\(s\) outside the scale \[0, 1, 2, 3\]; e.g. line 3"):
        read_labels(p)
    assert read_labels(p, scale=None).grades() == {"q1": {"d1": 1, "d2": 4, "d3": -1}}


def test_csv_quote_never_closed_names_the_line_where_it_opened(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("query_id,doc_id,grade\nq1,d1,1\nq1,\"d2,2\nq2,d1,3\nq2,d2,0\n")
    with pytest.raises(InputError, match=r"h.csv:3: malformed CSV"):
        read_labels(p)
    p.write_text("query_id,doc_id,grade\nq1,d1,1,extra\n")
    with pytest.raises(InputError, match=r"h.csv:2: row has 4 cells but the header names 3"):
        read_labels(p)


def test_quoted_multiline_text_is_one_row_with_its_start_line(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text('query_id,doc_id,grade,text\nq1,d1,1,"two\nlines, with comma"\nq1,d2,5,x\n')
    with pytest.raises(InputError, match=r"line 4"):
        read_labels(p)
    lab = read_labels(p, scale=None).labels[0]
    assert lab.text == "two\nlines, with comma" and lab.text_sha256 == text_sha256("two\nlines, with comma")


def test_deep_and_non_finite_json_is_one_line_error(tmp_path):
    p = tmp_path / "h.jsonl"
    p.write_text('{"query_id": "q", "doc_id": "d", "grade": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(InputError, match="nested too deeply") as err:
        read_labels(p)
    assert "\n" not in str(err.value)
    p.write_text('{"query_id": "q", "doc_id": "d", "grade": NaN}\n')
    with pytest.raises(InputError, match="NaN is not a JSON number"):
        read_labels(p)


def test_trec_writers_refuse_ids_they_cannot_hold(tmp_path):
    with pytest.raises(InputError, match="contains whitespace"):
        write_qrels({"q 1": {"d1": 1}}, tmp_path / "j.qrels")
    with pytest.raises(InputError, match="starts with #"):
        write_qrels({"#q": {"d1": 1}}, tmp_path / "j.qrels")
    write_qrels({"q 1": {"d 1": 1}}, tmp_path / "j.csv")
    assert read_qrels(tmp_path / "j.csv").labels == {"q 1": {"d 1": 1}}


def test_binary_judge_scale_binarizes_the_humans_at_the_threshold():
    human = {"q": {"a": 0, "b": 1, "c": 2, "d": 3}}
    scale, on, binarized = on_judge_scale(human, (0, 1), (0, 1, 2, 3), 2)
    assert binarized and scale == (0, 1) and on == {"q": {"a": 0, "b": 0, "c": 1, "d": 1}}
    assert on_judge_scale(human, (0, 1, 2), (0, 1, 2, 3), 2) == ((0, 1, 2, 3), human, False)
    with pytest.raises(InputError, match="does not fit the human scale"):
        on_judge_scale(human, (0, 1, 2, 3, 4), (0, 1, 2, 3), 2)
