"""The gate: library function relgrade.gate and the CLI that prints it, on reports written by evaluate."""

from __future__ import annotations

import dataclasses
import json

import pytest

import relgrade
from relgrade import InputError
from relgrade.cli import main

QRELS = "".join(f"q{i} 0 rel{i} 2\nq{i} 0 other{i} 0\n" for i in range(20)) + "q20 0 other20 0\n"  # q20: no answer


def write_run(path, hits: int):
    lines = []
    for i in range(21):
        first, second = (f"rel{i}", f"other{i}") if i < hits else (f"other{i}", f"noise{i}")
        lines += [f"q{i} Q0 {first} 1 2.0 t\n", f"q{i} Q0 {second} 2 1.0 t\n"]
    path.write_text("".join(lines))


def evaluate(tmp_path, name, hits, *extra, qrels="qrels.txt"):
    run = tmp_path / f"{name}.txt"
    if not run.exists():
        write_run(run, hits)
    out = tmp_path / f"{name}.json"
    assert main(["evaluate", "--run", str(run), "--qrels", str(tmp_path / qrels), "--metric", "recall@5",
                 "--json", str(out), *extra]) == 0
    return out


@pytest.fixture
def reports(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    return {"base": evaluate(tmp_path, "base", 18), "same": evaluate(tmp_path, "same", 18),
            "worse": evaluate(tmp_path, "worse", 17)}


def gate(*args):
    return main(["gate", *map(str, args)])


def test_library_gate_result(reports):
    result = relgrade.gate(reports["base"], reports["worse"], metrics=["recall@5"], max_drop=0.02)
    assert isinstance(result, relgrade.GateResult)
    assert not result.passed and result.exit_code == 1
    (row,) = result.rows
    assert (row.metric, row.baseline, row.current, row.passed) == ("recall@5", 0.9, 0.85, False)
    assert row.drop == pytest.approx(0.05) and row.change == pytest.approx(-0.05)
    assert len(result.reasons) == 1 and "recall@5" in result.reasons[0]
    data = result.to_dict()
    assert data["result"] == "FAIL" and data["metrics"][0]["drop"] == pytest.approx(0.05)
    assert data["settings"]["no_answer"] == "exclude" and data["settings"]["rel_threshold"] == 1
    json.dumps(data)  # serialisable
    # 5 points dropped: passes at max_drop 0.06, exactly at the boundary 0.05 as well
    assert relgrade.gate(reports["base"], reports["worse"], max_drop=0.06).passed
    assert relgrade.gate(reports["base"], reports["worse"], max_drop=0.05).passed
    assert relgrade.gate(reports["base"], reports["same"]).passed
    # report objects and dicts work like paths
    base = json.loads(reports["base"].read_text())
    assert relgrade.gate(base, json.loads(reports["worse"].read_text())).exit_code == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.passed = True  # type: ignore[misc]


def test_library_gate_takes_eval_reports():
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(10)}
    good = {f"q{i}": {f"d{i}": 1.0} for i in range(10)}
    bad = {f"q{i}": {f"d{i}" if i < 5 else "x": 1.0} for i in range(10)}
    a = relgrade.evaluate(qrels, good, ["recall@5"])
    b = relgrade.evaluate(qrels, bad, ["recall@5"])
    result = relgrade.gate(a, b)
    assert result.rows[0].baseline == 1.0 and result.rows[0].current == 0.5 and not result.passed
    assert result.baseline == "baseline" and result.current == "current"
    assert relgrade.gate(b, a).passed


def test_gate_refuses_reports_computed_differently(tmp_path, reports, capsys):
    zero = evaluate(tmp_path, "zero", 18, "--no-answer", "zero")
    assert gate("--baseline", reports["base"], "--current", zero) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no_answer 'exclude' vs 'zero'" in err and "--no-answer" in err
    thr = evaluate(tmp_path, "thr", 18, "--rel-threshold", "2")
    assert gate("--baseline", reports["base"], "--current", thr) == 2
    assert "--rel-threshold" in capsys.readouterr().err
    # one grade changed in the labels
    (tmp_path / "qrels2.txt").write_text(QRELS.replace("q3 0 other3 0", "q3 0 other3 1"))
    other = evaluate(tmp_path, "other", 18, qrels="qrels2.txt")
    assert gate("--baseline", reports["base"], "--current", other) == 2
    err = capsys.readouterr().err
    assert "labels" in err and "same labels file" in err
    with pytest.raises(InputError, match="computed differently"):
        relgrade.gate(reports["base"], other)


def test_same_labels_in_another_format_are_comparable(tmp_path, reports):
    rows = [line.split() for line in QRELS.splitlines()]
    (tmp_path / "qrels.csv").write_text("query_id,doc_id,grade\n" + "".join(f"{q},{d},{g}\n" for q, _, d, g in rows))
    csv = evaluate(tmp_path, "worse", 17, qrels="qrels.csv")
    assert gate("--baseline", reports["base"], "--current", csv) == 1  # compared, and the drop fails


@pytest.mark.parametrize("value", ["nan", "-0.01", "inf", "-inf"])
def test_max_drop_must_be_finite_and_non_negative(reports, capsys, value):
    assert gate("--baseline", reports["base"], "--current", reports["worse"], "--max-drop", value) == 2
    err = capsys.readouterr().err
    assert "--max-drop must be a finite number >= 0" in err and len(err.strip().splitlines()) == 1


def _edit(path, fn):
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))  # json writes NaN / Infinity for float('nan') / float('inf')
    return path


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 1.5, "0.9", None])
def test_bad_metric_value_never_passes(reports, capsys, value):
    cur = _edit(reports["same"], lambda d: d["aggregate"]["recall@5"].update(value=value))
    assert gate("--baseline", reports["base"], "--current", cur) == 2
    err = capsys.readouterr().err
    assert "same.json" in err and "recall@5" in err and len(err.strip().splitlines()) == 1
    base = _edit(reports["base"], lambda d: d["aggregate"]["recall@5"].update(value=value))
    assert gate("--baseline", base, "--current", reports["worse"]) == 2


@pytest.mark.parametrize("ci", [[float("nan"), float("nan")], [0.8, float("inf")], [0.9, 0.8], "x", [0.8]])
def test_beyond_ci_refuses_a_broken_interval(reports, capsys, ci):
    cur = _edit(reports["worse"], lambda d: d["aggregate"]["recall@5"].update(ci95=ci))
    assert gate("--baseline", reports["base"], "--current", cur, "--beyond-ci") == 2
    assert "worse.json" in capsys.readouterr().err
    # without --beyond-ci the interval is not compared, but a malformed report is still refused (issue 24)
    assert gate("--baseline", reports["base"], "--current", cur) == 2
    assert "worse.json" in capsys.readouterr().err


def test_beyond_ci_passes_when_the_interval_reaches_the_baseline(reports):
    cur = json.loads(reports["worse"].read_text())
    assert cur["aggregate"]["recall@5"]["ci95"][1] >= 0.9  # 17/20 with a bootstrap interval reaching 0.9+
    result = relgrade.gate(reports["base"], reports["worse"], beyond_ci=True)
    assert result.passed and result.rows[0].bound == cur["aggregate"]["recall@5"]["ci95"][1]
    _edit(reports["worse"], lambda d: d["aggregate"]["recall@5"].update(ci95=[0.5, 0.86]))  # holds its value 0.85
    assert not relgrade.gate(reports["base"], reports["worse"], beyond_ci=True).passed


@pytest.mark.parametrize("leaks", ["x", {"q1": "d"}, [{"query_id": "q1"}], [["q1", "d", 1]],
                                   [{"query_id": "q1", "doc_id": "d", "rank": "1"}]])
def test_malformed_leaks_is_an_input_error(reports, capsys, leaks):
    cur = _edit(reports["same"], lambda d: d.update(leaks=leaks))
    assert gate("--baseline", reports["base"], "--current", cur) == 2
    err = capsys.readouterr().err
    assert "same.json" in err and "'leaks'" in err and len(err.strip().splitlines()) == 1


def test_report_without_leak_information_fails(reports, capsys):
    cur = _edit(reports["same"], lambda d: d.pop("leaks"))
    assert gate("--baseline", reports["base"], "--current", cur) == 1
    out = capsys.readouterr().out
    assert "no leak information" in out and out.strip().endswith("gate: FAIL")


def test_leak_count_is_singular_or_plural(reports, capsys):
    one = [{"query_id": "q1", "query": None, "doc_id": "secret", "rank": 2}]
    cur = _edit(reports["same"], lambda d: d.update(leaks=one))
    assert gate("--baseline", reports["base"], "--current", cur) == 1
    out = capsys.readouterr().out
    assert "FAIL: 1 leak (forbidden document in the top k)" in out and "1 leaks" not in out
    cur = _edit(reports["same"], lambda d: d.update(leaks=one * 3))
    assert gate("--baseline", reports["base"], "--current", cur) == 1
    assert "FAIL: 3 leaks (forbidden documents in the top k)" in capsys.readouterr().out


def test_gate_text_is_aligned(reports, capsys):
    assert gate("--baseline", reports["base"], "--current", reports["worse"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["metric", "baseline", "candidate", "change"]
    assert lines[1].split()[:4] == ["recall@5", "0.9000", "0.8500", "-0.0500"]
    assert lines[0].index("change") + len("change") == lines[1].index("-0.0500") + len("-0.0500")


def test_unknown_gate_metric_lists_known_ones(reports, capsys):
    assert gate("--baseline", reports["base"], "--current", reports["same"], "--metric", "recal@5") == 2
    err = capsys.readouterr().err
    assert "--metric recal@5" in err and "known: recall@k" in err


def test_deeply_nested_report_is_one_line(reports, tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert gate("--baseline", reports["base"], "--current", deep) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "deep.json" in err


def test_settings_record_the_labels_file_and_names_in_messages(tmp_path, reports):
    import hashlib

    data = json.loads(reports["base"].read_text())
    labels = data["settings"]["labels"]
    assert labels["file_sha256"] == hashlib.sha256((tmp_path / "qrels.txt").read_bytes()).hexdigest()
    assert labels["n_queries"] == 21 and labels["n_labels"] == 41
    assert data["settings"]["queries"]["n"] == 20  # q20 has no relevant doc: excluded by default
    result = relgrade.gate(reports["base"], reports["worse"], names=("bm25", "tfidf"))
    assert (result.baseline, result.current) == ("bm25", "tfidf")
