"""Issue 39.2: a judge's details line read by the short path gives the Label (or the error) of the general one."""

from __future__ import annotations

import json

import pytest

import relgrade.io._labels as labels_module
from relgrade._errors import InputError
from relgrade.io._labels import _row_label, read_labels

ROWS = [
    {"query_id": "q1", "doc_id": "d1", "grade": 2, "expected_grade": 1.7, "model": "m", "prompt_hash": "p"},
    {"query_id": " q2 ", "doc_id": 7, "grade": "3", "text": "a passage", "query": "what", "reason": "fits",
     "time": "2026-01-01T00:00:00+00:00", "status": "ok", "runs": ["a"]},
    {"query_id": "q3", "doc_id": "d3", "grade": None, "status": "remaining", "text": "", "query": ""},
    {"query_id": "q4", "doc_id": "d4", "grade": 1.0, "text_sha256": "abc", "text": "x", "reason": 5, "model": ""},
    {"query_id": "q5", "doc_id": "d5", "grade": 0, "text": "x"},  # no detail key: the caller's source
    {"query_id": "q6", "doc_id": "d6", "grade": 2, "expected_grade": "2.5", "model": 3},
]
BAD = [
    {"query_id": "", "doc_id": "d", "grade": 1, "expected_grade": "x", "model": "m"},  # both wrong: the id first
    {"query_id": "q", "doc_id": "d", "grade": 1.5, "model": "m"},
    {"query_id": "q", "doc_id": "d", "grade": 1, "expected_grade": float("nan"), "model": "m"},
    {"query_id": "q", "doc_id": None, "grade": True, "model": "m"},
]


def _general(monkeypatch):
    monkeypatch.setattr(labels_module, "_DETAILS", frozenset())  # every row through the general reading


@pytest.mark.parametrize("source", ["human", "judge"])
def test_short_path_labels_equal_the_general_ones(monkeypatch, source):
    fast = [_row_label(row, "f.jsonl", i + 1, source) for i, row in enumerate(ROWS)]
    _general(monkeypatch)
    plain = [_row_label(row, "f.jsonl", i + 1, source) for i, row in enumerate(ROWS)]
    for a, b in zip(fast, plain):
        assert a == b and a.to_dict() == b.to_dict()
    assert fast[0].source == "judge" and fast[4].source == source and fast[1].text_sha256  # hashed text


@pytest.mark.parametrize("row", BAD)
def test_short_path_errors_equal_the_general_ones(monkeypatch, row):
    with pytest.raises(InputError) as fast:
        _row_label(row, "f.jsonl", 3, "judge")
    _general(monkeypatch)
    with pytest.raises(InputError) as plain:
        _row_label(row, "f.jsonl", 3, "judge")
    assert str(fast.value) == str(plain.value)


def test_a_details_file_reads_the_same_both_ways(tmp_path, monkeypatch):
    path = tmp_path / "judge.details.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    fast = read_labels(path, source="judge")
    _general(monkeypatch)
    plain = read_labels(path, source="judge")
    assert fast == plain and len(fast.labels) == 5 and fast.n_empty == 1
