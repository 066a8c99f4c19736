"""Every malformed input exits 2 with one line naming the file (and line) and the fix; no traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from relgrade.cli import main

GOOD_QRELS = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n"
GOOD_RUN = "q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys\nq2 Q0 d3 1 0.7 sys\n"


def run_cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(GOOD_QRELS)
    (tmp_path / "run.txt").write_text(GOOD_RUN)
    return tmp_path


CASES = {
    "bad_rank": ("run.txt", GOOD_RUN.replace(" 2 1.5", " two 1.5"), "run", ":2:", "rank 'two' is not an integer"),
    "bad_score": ("run.txt", GOOD_RUN.replace("0.7", "high"), "run", ":3:", "score 'high' is not a number"),
    "few_fields": ("run.txt", GOOD_RUN + "q3 Q0 d9 1\n", "run", ":4:", "expected 6 fields"),
    "nan_score": ("run.txt", GOOD_RUN.replace("0.7", "nan"), "run", ":3:", "not a finite number"),
    "dup_doc": ("run.txt", GOOD_RUN + "q1 Q0 d1 3 0.1 sys\n", "run", ":4:", "appears twice"),
    "truncated_jsonl": ("run.jsonl", '{"query_id": "q1", "results": [{"doc_id": "d1"}]}\n{"query_id": "q2", "resu', "run", ":2:", "truncated"),
    "dup_query_jsonl": ("run.jsonl", '{"query_id": "q1", "results": []}\n{"query_id": "q1", "results": []}\n', "run", ":2:", "duplicate query_id 'q1'"),
    "binary": ("run.txt", b"\x00\x01\x02binary", "run", "run.txt:", "binary data"),
    "latin1": ("run.txt", "q1 Q0 caf\xe9 1 2.0 sys\n".encode("latin-1"), "run", ":1:", "not valid UTF-8"),
    "empty": ("run.txt", "", "run", "run.txt:", "empty run file"),
    "bad_grade": ("qrels.txt", GOOD_QRELS.replace("d2 0", "d2 x"), "qrels", ":2:", "grade 'x' is not a number"),
    "dup_pair_qrels": ("qrels.txt", GOOD_QRELS + "q1 0 d1 1\n", "qrels", ":4:", "labeled again"),
    "golden_dup_id": ("golden.jsonl", '{"query_id": "a", "query": "x", "relevant_doc_ids": ["d1"]}\n{"query_id": "a", "query": "y", "relevant_doc_ids": []}\n', "qrels", ":2:", "duplicate query_id 'a'"),
    "golden_no_query": ("golden.jsonl", '{"relevant_doc_ids": ["d1"]}\n', "qrels", ":1:", "missing 'query'"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_inputs_exit_2_with_one_line(capsys, files, case):
    name, content, role, where, message = CASES[case]
    path = files / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    run = path if role == "run" else files / "run.txt"
    qrels = path if role == "qrels" else files / "qrels.txt"
    code, out, err = run_cli(capsys, "evaluate", "--run", str(run), "--qrels", str(qrels))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("relgrade: error: ")
    assert str(path) in lines[0] and where in lines[0] and message in lines[0]
    assert "Traceback" not in out + err


def test_missing_file_and_unknown_metric(capsys, files):
    code, _, err = run_cli(capsys, "evaluate", "--run", str(files / "nope.txt"), "--qrels", str(files / "qrels.txt"))
    assert code == 2 and "nope.txt: no such run file" in err
    code, _, err = run_cli(capsys, "evaluate", "--run", str(files / "run.txt"), "--qrels", str(files / "qrels.txt"), "--metric", "map@5")
    assert code == 2 and "--metric map@5" in err and "known: recall@k" in err


def test_real_entry_point_prints_no_traceback(files):
    bad = files / "bad.txt"
    bad.write_text("q1 Q0 d1\n")
    proc = subprocess.run([sys.executable, "-m", "relgrade.cli", "evaluate", "--run", str(bad), "--qrels", str(files / "qrels.txt")],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"relgrade: error: {bad}:1: expected 6 fields 'query_id Q0 doc_id rank score tag' (TREC run), got 3"
    assert "Traceback" not in proc.stderr
