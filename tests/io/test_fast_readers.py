"""The columnar readers (pyarrow) read exactly what the line-exact readers read, or hand the file to them (issue 28):
odd but valid files give the same ids, scores and order; invalid ones the same one-line error naming file and line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from relgrade._errors import InputError
from relgrade.io import read_labels, read_qrels, read_run
from relgrade.io._labels import _fast_trec_qrels
from relgrade.io._run_read import _fast_jsonl_run, _fast_trec_run, _read_jsonl_run, _read_trec_run

PLAIN_RUN = "q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 2.5 sys\nq1 Q0 NA 3 -0 sys\nq2 Q0 déjà 1 1e-3 sys\nq2 Q0 d1 2 .5 sys\n"
# valid files the columnar reader must not read differently: each goes to the line-exact reader or reads the same
ODD_RUNS = {
    "plain": PLAIN_RUN,
    "tabs": PLAIN_RUN.replace(" ", "\t"),
    "crlf_bom": "\ufeff" + PLAIN_RUN.replace("\n", "\r\n"),
    "cr_only": PLAIN_RUN.replace("\n", "\r"),
    "comment": "# a comment line\n" + PLAIN_RUN,
    "comment_six_fields": "#q Q0 x 1 9 sys\n" + PLAIN_RUN,
    "blank_lines": "\n\n" + PLAIN_RUN.replace("\n", "\n\n"),
    "two_spaces": PLAIN_RUN.replace("Q0 ", "Q0  "),
    "leading_space": " " + PLAIN_RUN,
    "vertical_tab_splits": PLAIN_RUN.replace("q2 Q0", "q2\x0bQ0"),
    "no_break_space_splits": PLAIN_RUN.replace("q2 Q0", "q2\u00a0Q0"),
    "unit_separator_splits": PLAIN_RUN.replace("d1 2 .5", "d1\x1f2 .5"),
    "plus_rank": PLAIN_RUN.replace("d2 2", "d2 +2"),
    "underscore_score": PLAIN_RUN.replace("2.5 sys\nq1 Q0 d2", "2_5 sys\nq1 Q0 d2"),
    "no_final_newline": PLAIN_RUN.rstrip("\n"),
    "ties_unsorted": "q1 Q0 a 1 1 s\nq1 Q0 c 2 1 s\nq1 Q0 b 3 1 s\nq1 Q0 z 4 0.30000000000000004 s\nq1 Q0 y 5 0.3 s\n",
}
BAD_RUNS = {  # (text, line of the error, words of the message)
    "duplicate_doc": (PLAIN_RUN + "q1 Q0 d2 9 0.1 sys\n", 6, "appears twice"),
    "nan_score": (PLAIN_RUN.replace("-0", "nan"), 3, "not a finite number"),
    "inf_score": (PLAIN_RUN.replace("-0", "1e400"), 3, "not a finite number"),
    "word_rank": (PLAIN_RUN.replace("d1 2 .5", "d1 two .5"), 5, "not an integer"),
    "five_fields": (PLAIN_RUN.replace(" sys\nq2 Q0 d1", "\nq2 Q0 d1"), 4, "expected 6 fields"),
    "tab_in_field": (PLAIN_RUN.replace("sys\nq2 Q0 d1", "s\tys\nq2 Q0 d1"), 4, "expected 6 fields"),
    "bad_utf8": (None, 6, "not valid UTF-8"),
}


def _same_run(a, b):
    assert a.query_id.tolist() == b.query_id.tolist() and a.doc_id.tolist() == b.doc_id.tolist()
    assert a.score.tolist() == b.score.tolist() and a.ranked() == b.ranked()


def _outcome(read):
    """What a reader gives: its run's rows, or its error's one line."""
    try:
        run = read()
    except InputError as err:
        return "error", str(err)
    return "run", (run.query_id.tolist(), run.doc_id.tolist(), run.score.tolist(), run.ranked())


@pytest.mark.parametrize("name", ODD_RUNS)
def test_odd_trec_runs_read_as_the_line_exact_reader_reads_them(tmp_path, name):
    path = tmp_path / "run.txt"
    path.write_bytes(ODD_RUNS[name].encode("utf-8"))
    text = path.read_bytes().decode("utf-8").lstrip("\ufeff")
    assert _outcome(lambda: read_run(path)) == _outcome(lambda: _read_trec_run(path, text, "run"))
    fast = _fast_trec_run(path, path.read_bytes(), "run")
    if name in {"plain", "tabs", "crlf_bom", "cr_only", "blank_lines", "no_final_newline", "ties_unsorted"}:
        assert fast is not None, "a plain file takes the columnar reader"
    elif name not in {"plus_rank", "underscore_score"}:
        assert fast is None, "an odd file goes to the line-exact reader"
    if fast is not None:
        _same_run(fast, _read_trec_run(path, text, "run"))


def test_trec_order_of_ties_is_trec_evals(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text(ODD_RUNS["ties_unsorted"])
    assert read_run(path).ranked() == {"q1": ["c", "b", "a", "z", "y"]}  # doc id descending; 0.3 ties in float32


@pytest.mark.parametrize("name", BAD_RUNS)
def test_invalid_trec_runs_fail_in_one_line_with_file_and_line(tmp_path, name):
    text, line, words = BAD_RUNS[name]
    path = tmp_path / "run.txt"
    path.write_bytes(PLAIN_RUN.encode() + b"q3 Q0 \xff 1 1 s\n" if text is None else text.encode("utf-8"))
    with pytest.raises(InputError) as err:
        read_run(path)
    assert str(err.value).startswith(f"{path}:{line}: ") and words in str(err.value) and "\n" not in str(err.value)


PLAIN_QRELS = "q1 0 d1 2\nq1 0 NA 0\nq2 0 déjà 3\nq2 0 d1 -1\n"


@pytest.mark.parametrize("variant", ["plain", "tabs", "crlf_bom", "blank_lines", "comment", "float_grade", "vt"])
def test_odd_trec_qrels_read_the_same(tmp_path, variant):
    text = {"plain": PLAIN_QRELS, "tabs": PLAIN_QRELS.replace(" ", "\t"), "crlf_bom": "\ufeff" + PLAIN_QRELS.replace("\n", "\r\n"),
            "blank_lines": PLAIN_QRELS.replace("\n", "\n\n"), "comment": "# c\n" + PLAIN_QRELS,
            "float_grade": PLAIN_QRELS.replace("3\n", "3.0\n"), "vt": PLAIN_QRELS.replace("q2 0", "q2\x0b0")}[variant]
    path = tmp_path / "q.txt"
    path.write_bytes(text.encode("utf-8"))
    expected = {"q1": {"d1": 2, "NA": 0}, "q2": {"déjà": 3, "d1": -1}}
    if variant == "vt":  # a vertical tab ends a line for str.splitlines(): the line-exact reader's error
        with pytest.raises(InputError, match=r"q.txt:3: expected 4 fields"):
            read_qrels(path)
        assert _fast_trec_qrels(path, path.read_bytes()) is None
        return
    assert read_qrels(path).labels == expected
    labels = read_labels(path, scale=None)
    assert labels.grades() == expected and list(labels.lines) == [n for n, line in enumerate(text.splitlines(), 1)
                                                                  if line.strip() and not line.lstrip("\ufeff").startswith("#")]
    assert (_fast_trec_qrels(path, path.read_bytes()) is not None) == (variant in {"plain", "tabs", "crlf_bom"})


@pytest.mark.parametrize("text,line,words", [
    (PLAIN_QRELS + "q1 0 d1 3\n", 5, "labeled again"),
    (PLAIN_QRELS.replace("-1", "1.5"), 4, "not an integer grade"),
    (PLAIN_QRELS.replace("q2 0 d1", "q2 d1"), 4, "expected 4 fields"),
])
def test_invalid_trec_qrels_fail_in_one_line(tmp_path, text, line, words):
    path = tmp_path / "q.txt"
    path.write_text(text)
    for read in (read_qrels, lambda p: read_labels(p, scale=None)):
        with pytest.raises(InputError) as err:
            read(path)
        assert str(err.value).startswith(f"{path}:{line}: ") and words in str(err.value)


def test_scale_errors_show_the_offending_line(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text(PLAIN_QRELS.replace("-1", "7"))
    with pytest.raises(InputError, match=r"1 label\(s\) outside the scale \[0, 1, 2, 3\]; e.g. line 4: 'q2 0 d1 7'"):
        read_labels(path)


JSONL = [
    {"query_id": "q1", "query": "first", "results": [{"doc_id": "d1", "text": "one", "score": 0.3},
                                                     {"doc_id": "NA", "score": 2}, {"doc_id": "d2"}]},
    {"query_id": "q2", "results": [{"doc_id": "d1", "text": "one again", "extra": [1]}]},
    {"query": "no id here", "results": [{"doc_id": "d3"}]},
]
ODD_JSONL = {
    "plain": JSONL,
    "int_ids": [{"query_id": 7, "results": [{"doc_id": 8}]}],
    "bare_doc_ids": [{"query_id": "q1", "results": ["d1", "d2"]}],
    "alias": [{"query_id": "q1", "results": [{"id": "d1"}, {"pid": "d2"}]}],
    "padded": [{"query_id": " q1", "results": [{"doc_id": "d1 "}]}],
    "empty_results": [{"query_id": "q1", "results": []}, {"query_id": "q2", "results": [{"doc_id": "x"}]}],
}


@pytest.mark.parametrize("name", ODD_JSONL)
def test_jsonl_runs_read_as_the_line_exact_reader_reads_them(tmp_path, name):
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(obj) + "\n" for obj in ODD_JSONL[name]))
    ours, exact = read_run(path), _read_jsonl_run(path, path.read_text(), "run")
    _same_run(ours, exact)
    assert np.array_equal(ours.given_score, exact.given_score, equal_nan=True)
    assert ours.queries == exact.queries and ours.texts == exact.texts
    assert (_fast_jsonl_run(path, path.read_bytes(), "run") is not None) == (name in {"plain", "empty_results"})


@pytest.mark.parametrize("line,words", [
    ('{"query_id": "q1", "results": [{"doc_id": "d1", "score": NaN}]}', "not a JSON number"),
    ('{"query_id": "q1", "results": [{"doc_id": "d1"}, {"doc_id": "d1"}]}', "appears twice"),
    ('{"query_id": "q0", "results": []}\n{"query_id": "q0", "results": []}', "duplicate query_id"),
    ('{"query_id": "q1", "results": [{"doc_id": "d1", "score": true}]}', "not a number"),
    ('{"query_id": "q1", "results": [{"doc_id": "d1", "score": 1e400}]}', "not a finite number"),
    ('{"query_id": "q1", "results": [{"doc_id": "d\\ud800"}]}', "lone UTF-16 surrogate"),
    ('{"query_id": "q1", "query": "half \\uD83D", "results": [{"doc_id": "d1"}]}', "lone UTF-16 surrogate"),
])
def test_invalid_jsonl_runs_fail_in_one_line(tmp_path, line, words):
    path = tmp_path / "run.jsonl"
    path.write_text('{"query_id": "ok", "results": ["x"]}\n' + line + "\n")
    with pytest.raises(InputError) as err:
        read_run(path)
    assert f"{path}:" in str(err.value) and words in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("pyarrow_converter", [False, True])
def test_both_string_converters_agree(monkeypatch, pyarrow_converter):
    """``strings`` builds the array from its buffers, or with pyarrow's converter when pandas is loaded anyway."""
    import sys

    from relgrade.io._columns import strings

    if pyarrow_converter:
        import pandas  # noqa: F401
    else:
        monkeypatch.delitem(sys.modules, "pandas", raising=False)
    values = ["a", "", "déjà vu", "東京", "NA", " x "]
    assert strings(values).to_pylist() == values
    for bad, error in ((["a", 1], TypeError), (["a", None], TypeError), (["\ud800"], UnicodeEncodeError)):
        with pytest.raises(error):
            strings(bad)
