"""Issue 39.2: a judge's details JSONL read as columns gives what the line-by-line reader gives, or its error.

Every file below is read twice by :func:`relgrade.hybrid.read_judge_labels`: as it is (the columnar path,
:func:`relgrade.io._details.read_details_columns`, wherever it accepts the file) and with the columnar path switched
off (the plain reader). The two must return equal labels, counts, model and judge sets, or raise the same one-line
error. The polite files must take the columnar path (else this would test nothing); the hostile ones may take
either, as long as the answer is the plain reader's.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import relgrade.io._details as details_module
from relgrade._errors import InputError
from relgrade.hybrid import read_judge_labels
from relgrade.hybrid._inputs import JudgeLabels
from relgrade.hybrid._predict import judge_sets


def _lines(*rows) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


ROW = {"query_id": "q1", "doc_id": "d1", "grade": 2, "expected_grade": 1.7, "model": "m", "prompt_hash": "p"}

POLITE = {
    "plain": _lines(ROW, {**ROW, "doc_id": "d2", "grade": 0, "expected_grade": 0.2},
                    {**ROW, "query_id": "q2", "doc_id": "d1", "grade": 3, "expected_grade": None}),
    "every key": _lines(
        {"query_id": "q1", "doc_id": "d1", "grade": 1, "model": "", "prompt_hash": " p ", "status": "judged",
         "query": "what", "text": "a passage", "reason": "", "time": "2026-01-01T00:00:00+00:00", "runs": ["a", "b"]},
        {"query_id": "q1", "doc_id": "d2", "grade": 2, "model": " m2 ", "text": "", "query": "", "time": "  ",
         "text_sha256": " abc ", "expected_grade": 3},
        {"query_id": "q2", "doc_id": "d2", "grade": None, "status": "remaining", "model": "m3"},
        {"query_id": "q2", "doc_id": "d2", "grade": None, "status": "remaining"},  # unjudged twice: counted twice
        {"query_id": "q2", "doc_id": "d3", "grade": 0, "expected_grade": -0.0, "text": "tab\tand \u00e9 \U0001f600"},
        {"query_id": "q3", "doc_id": "d3", "grade": -0}),
    "unjudged then judged": _lines({**ROW, "grade": None}, ROW),
    "prompt of an unjudged row first": _lines({**ROW, "grade": None, "prompt_hash": "other", "model": "first"},
                                              {**ROW, "doc_id": "d2", "prompt_hash": "  "}, {**ROW, "prompt_hash": "p"}),
    "only ids and grades": _lines({"query_id": "q", "doc_id": "d", "grade": 1}),
    "no final newline": _lines(ROW, {**ROW, "doc_id": "d2"}).rstrip("\n"),
    "escapes": '{"query_id": "q\\u00e9", "doc_id": "d\\/1", "grade": 1, "text": "\\ud83d\\ude00 a \\"quote\\"\\n"}\n',
    "numbers as ids elsewhere": _lines({**ROW, "query_id": "7", "doc_id": "NA"}),
}

HOSTILE = {
    "truncated line": _lines(ROW) + '{"query_id": "q1", "doc_id": "d',
    "bad json middle": _lines(ROW, "{not json}", {**ROW, "doc_id": "d3"}),
    "graded pair twice": _lines(ROW, {**ROW, "grade": 1}),
    "graded pair twice apart": _lines(ROW, {**ROW, "doc_id": "d2"}, {**ROW, "grade": 0}),
    "missing query_id": _lines(ROW, {"doc_id": "d2", "grade": 1, "model": "m"}),
    "null doc_id": _lines({**ROW, "doc_id": None}),
    "empty id": _lines({**ROW, "doc_id": ""}),
    "blank id": _lines({**ROW, "doc_id": "  "}),
    "padded ids": _lines({**ROW, "query_id": " q1 ", "doc_id": "d1\u00a0"}, {**ROW, "doc_id": "d2"}),
    "padded ids collide": _lines(ROW, {**ROW, "doc_id": " d1"}),
    "integer ids": _lines({**ROW, "query_id": 7, "doc_id": 12}),
    "float id": _lines({**ROW, "doc_id": 1.0}),
    "NaN expected": _lines(ROW, '{"query_id": "q1", "doc_id": "d2", "grade": 1, "expected_grade": NaN}'),
    "Infinity expected": _lines('{"query_id": "q1", "doc_id": "d2", "grade": 1, "expected_grade": -Infinity}'),
    "huge expected": _lines('{"query_id": "q1", "doc_id": "d2", "grade": 1, "expected_grade": 1e400}'),
    "NaN grade": _lines('{"query_id": "q1", "doc_id": "d2", "grade": NaN, "model": "m"}'),
    "string expected": _lines({**ROW, "expected_grade": "2.5"}),
    "bad string expected": _lines({**ROW, "expected_grade": "high"}),
    "bool expected": _lines({**ROW, "expected_grade": True}),
    "float grade": _lines({**ROW, "grade": 2.0}),
    "string grade": _lines({**ROW, "grade": "2"}, {**ROW, "doc_id": "d2", "grade": " 3 "}),
    "fraction grade": _lines({**ROW, "grade": 1.5}),
    "exponent grade": _lines('{"query_id": "q1", "doc_id": "d2", "grade": 1e0, "model": "m"}'),
    "bool grade": _lines({**ROW, "grade": True}),
    "huge grade": _lines('{"query_id": "q1", "doc_id": "d2", "grade": 99999999999999999999, "model": "m"}'),
    "grade off scale": _lines(ROW, {**ROW, "doc_id": "d2", "grade": 7}),
    "negative grade": _lines({**ROW, "grade": -1}),
    "blank line": _lines(ROW) + "\n   \n" + _lines({**ROW, "doc_id": "d2"}),
    "two objects on a line": json.dumps(ROW) + json.dumps({**ROW, "doc_id": "d2"}) + "\n",
    "array line": _lines(ROW, "[1, 2]"),
    "number line": _lines(ROW, "5"),
    "CRLF": _lines(ROW, {**ROW, "doc_id": "d2"}).replace("\n", "\r\n"),
    "CR between tokens": '{"query_id": "q1",\r"doc_id": "d1", "grade": 1, "model": "m"}\n',
    "U+2028 in a string": _lines({**ROW, "text": "a\u2028b"}).replace("\\u2028", "\u2028"),
    "U+0085 in a string": _lines({**ROW, "reason": "a\u0085b"}).replace("\\u0085", "\u0085"),
    "lone surrogate": _lines({**ROW, "text": "x"}).replace('"x"', '"\\ud800"'),
    "BOM": "\ufeff" + _lines(ROW, {**ROW, "doc_id": "d2"}),
    "duplicate key": '{"query_id": "q1", "doc_id": "d1", "grade": 1, "grade": 2, "model": "m"}\n',
    "annotator key": _lines({**ROW, "annotator": "ann"}),
    "distribution key": _lines({**ROW, "distribution": {"0": 0.5, "1": 0.5}, "expected_grade": None}),
    "scale key": _lines({**ROW, "grade": 1, "scale": [0, 1]}, {**ROW, "doc_id": "d2", "grade": 0, "scale": [0, 1]}),
    "alias key": _lines({"qid": "q1", "docno": "d1", "grade": 1, "model": "m"}),
    "source key": _lines({**ROW, "source": "human"}),
    "model a number": _lines({**ROW, "model": 5}),
    "text a number": _lines({**ROW, "text": 5, "query": ["x"], "reason": 3}),
    "runs mixed types": _lines({**ROW, "runs": ["a"]}, {**ROW, "doc_id": "d2", "runs": 3}),
    "nested deep": _lines({**ROW, "runs": json.loads("[" * 200 + "]" * 200)}),
    "nested very deep": _lines(ROW) + '{"query_id": "q", "doc_id": "d", "grade": 1, "runs": ' + "[" * 100_000
                        + "]" * 100_000 + "}\n",
    "object nested very deep": '{"a":' * 100_000 + "1" + "}" * 100_000 + "\n",
    "many brackets in texts": _lines(*({**ROW, "doc_id": f"d{i}", "text": "[x] {y} " * 40} for i in range(3))),
    "golden first line": _lines({"query": "what", "relevant_doc_ids": ["d1"]}, ROW),
    "object per file": json.dumps([ROW]),
    "control char": _lines(ROW).replace('"q1"', '"q\x0b1"'),
    "only unjudged": _lines({**ROW, "grade": None}),
    "whitespace only": "   \n\n",
}


def _read(path, monkeypatch, columns: bool):
    with monkeypatch.context() as m:
        if not columns:
            m.setattr(details_module, "read_details_columns", lambda *a, **k: None)
        try:
            return read_judge_labels(path)
        except InputError as exc:
            return exc


def _same(fast, plain) -> None:
    if isinstance(plain, InputError):
        assert isinstance(fast, InputError), fast
        assert str(fast) == str(plain)
        return
    assert not isinstance(fast, InputError), fast
    assert (fast.n_unjudged, fast.model, fast.scale, fast.source) == (plain.n_unjudged, plain.model, plain.scale,
                                                                        plain.source)
    assert len(fast.labels) == len(plain.labels)
    assert fast.prompt_hash() == plain.prompt_hash() == next((x.prompt_hash for x in plain.labels if x.prompt_hash),
                                                             None)
    assert list(fast.labels) == list(plain.labels)
    assert [lab.to_dict() for lab in fast.labels] == [lab.to_dict() for lab in plain.labels]
    assert [lab.__dict__.get("time") for lab in fast.labels] == [lab.__dict__.get("time") for lab in plain.labels]
    if plain.labels:
        a, b = judge_sets(fast)[0], judge_sets(plain)[0]
        assert a.name == b.name and a.scale == b.scale
        assert list(a.grades.labels.items()) == list(b.grades.labels.items())
        assert list(a.raw.items()) == list(b.raw.items())
        assert list(a.expected.items()) == list(b.expected.items())
        assert a.grades.topics == b.grades.topics
        assert fast.to_qrels().labels == plain.to_qrels().labels
        made, fresh = a.grades.columns, b.grades.columns  # the columns kept from the reader: Qrels(dict)'s layout
        for x, y in ((made.query, fresh.query), (made.doc, fresh.doc)):
            assert np.array_equal(x.codes, y.codes) and x.codes.dtype == y.codes.dtype
            assert x.name_list() == y.name_list()
        assert np.array_equal(made.grade, fresh.grade) and made.grade.dtype == fresh.grade.dtype


@pytest.mark.parametrize("name", sorted(POLITE))
def test_polite_files_read_as_columns_equal_the_plain_reading(tmp_path, monkeypatch, name):
    path = tmp_path / "judge.details.jsonl"
    path.write_text(POLITE[name], encoding="utf-8")
    fast, plain = _read(path, monkeypatch, True), _read(path, monkeypatch, False)
    assert isinstance(fast.labels, JudgeLabels), "the columnar path refused a polite file"
    assert not isinstance(plain.labels, JudgeLabels)
    _same(fast, plain)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_files_get_the_plain_readers_answer(tmp_path, monkeypatch, name):
    path = tmp_path / "judge.details.jsonl"
    path.write_text(HOSTILE[name], encoding="utf-8", newline="")
    _same(_read(path, monkeypatch, True), _read(path, monkeypatch, False))


@pytest.mark.parametrize("data", [b'{"query_id": "q\xff", "doc_id": "d", "grade": 1}\n', b"",
                                  b'{"query_id": "q", "doc_id": "d", "grade": 1}\n\x00\n'])
def test_hostile_bytes_get_the_plain_readers_error(tmp_path, monkeypatch, data):
    path = tmp_path / "judge.details.jsonl"
    path.write_bytes(data)
    fast, plain = _read(path, monkeypatch, True), _read(path, monkeypatch, False)
    assert isinstance(plain, InputError)
    _same(fast, plain)


def test_missing_file_and_directory(tmp_path, monkeypatch):
    for path in (tmp_path / "nope.jsonl", tmp_path):
        _same(_read(path, monkeypatch, True), _read(path, monkeypatch, False))


def test_a_file_not_named_jsonl_and_a_narrower_scale(tmp_path, monkeypatch):
    path = tmp_path / "judge.txt"
    path.write_text(POLITE["plain"], encoding="utf-8")
    _same(_read(path, monkeypatch, True), _read(path, monkeypatch, False))
    with pytest.raises(InputError) as fast:
        read_judge_labels(path, scale=(0, 1))
    monkeypatch.setattr(details_module, "read_details_columns", lambda *a, **k: None)
    with pytest.raises(InputError) as plain:
        read_judge_labels(path, scale=(0, 1))
    assert str(fast.value) == str(plain.value) and ":" in str(plain.value)


def test_an_adopted_mapping_goes_line_by_line(tmp_path):
    from relgrade.hybrid._inputs import JudgeMapping

    path = tmp_path / "judge.details.jsonl"
    path.write_text(POLITE["plain"], encoding="utf-8")
    got = read_judge_labels(path, mapping=JudgeMapping(True, table={0: 0, 1: 0, 2: 1, 3: 1}))
    assert not isinstance(got.labels, JudgeLabels)
    assert [lab.grade for lab in got.labels] == [1, 0, 1] and all(lab.mapped for lab in got.labels)


def test_a_big_random_file_reads_the_same(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    rows = []
    for i in range(3000):
        row = {"query_id": f"q{rng.integers(0, 200)}", "doc_id": f"d{i}",
               "grade": None if rng.random() < 0.05 else int(rng.integers(0, 4)), "model": "m", "prompt_hash": "p"}
        if rng.random() < 0.7:
            row["expected_grade"] = round(float(rng.random() * 3), 3)
        if rng.random() < 0.1:
            row["text"] = f"passage {i}"
        rows.append(row)
    path = tmp_path / "judge.details.jsonl"
    path.write_text(_lines(*rows), encoding="utf-8")
    fast, plain = _read(path, monkeypatch, True), _read(path, monkeypatch, False)
    assert isinstance(fast.labels, JudgeLabels)
    _same(fast, plain)


def test_qrels_keeping_keeps_only_a_dict_by_the_rules():
    from relgrade.io import Qrels

    kept = {"q1": {"d1": 2, "d2": 0}, "q2": {"d1": 1}}
    q = Qrels.keeping(kept)
    assert q.labels is kept and q.labels == Qrels(kept).labels and q.topics == ("q1", "q2")
    for other in ({" q1": {"d1": 2}}, {"q1": {"d1 ": 2}}, {"q1": {"d1": True}}, {"q1": {}, "q2": {"d": 1}},
                  {"q1": {"d1": 2.0}}):
        got = Qrels.keeping(other)
        assert got.labels is not other and got.labels == Qrels(other).labels
