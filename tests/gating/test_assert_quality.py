"""``relgrade.assert_quality``: the gate in a test suite (issue 36, item 11; the guide's
``evaluator.assert_quality(min_recall_at_5=0.75)``). It fails exactly where ``relgrade gate`` exits 1, floor or
baseline, leak, missing leak information or "do not use" judge, and its AssertionError names the failed metrics, their
intervals and the queries that pulled them down."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import relgrade
from relgrade import InputError, assert_quality
from relgrade._verdict import JudgeVerdict
from relgrade.cli import main

N = 20


def _report(hits: int, leak: bool = False):
    """recall@5 = hits / N on N queries, one relevant document each; a forbidden document in q0's top 5 if ``leak``."""
    golden = relgrade.GoldenSet(tuple(relgrade.GoldenCase(query=f"question {i}", query_id=f"q{i}",
                                                          relevant_doc_ids=(f"d{i}",),
                                                          forbidden_doc_ids=("secret",) if i == 0 else ())
                                      for i in range(N)))
    run = {f"q{i}": {f"d{i}" if i < hits else f"x{i}": 2.0, "secret" if leak and i == 0 else f"y{i}": 1.0}
           for i in range(N)}
    return relgrade.evaluate(golden, run, ["recall@5", "mrr"])


def test_a_floor_passes_or_fails_as_gate_min_does(tmp_path):
    report = _report(16)  # recall@5 0.80
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report.to_dict()))
    for floor in (0.75, 0.80, 0.85):
        code = main(["gate", "--current", str(path), "--min", str(floor), "--metric", "recall@5"])
        try:
            results = assert_quality(report, min={"recall@5": floor})
            raised = False
        except AssertionError:
            raised = True
        assert raised == (code == 1), floor
        if not raised:
            assert results[0].passed and results[0].rows[0].current == pytest.approx(0.8)
    assert_quality(str(path), min={"recall@5": 0.8, "mrr": 0.8})  # a path, several floors


def test_the_message_names_metric_interval_and_the_lowest_queries():
    with pytest.raises(AssertionError) as failed:
        assert_quality(_report(14), min={"recall@5": 0.75, "mrr": 0.5}, name="nightly")
    text = str(failed.value)
    assert text.startswith("nightly fails its quality gate (1 reason):")
    assert "below the minimum: recall@5 0.7000" in text and "mrr" not in text.split("\n")[1]
    assert "recall@5: 0.7000 (95% CI 0.4587–0.9049, plus-two)" in text  # the interval evaluate reports
    assert "lowest queries by recall@5: q14 0.00 (question 14); q15 0.00 (question 15)" in text


def test_a_baseline_fails_on_a_drop_beyond_max_drop_naming_the_queries_that_lost():
    base, worse = _report(18), _report(15)
    assert assert_quality(_report(18), baseline=base, metrics=["recall@5"])[0].passed
    with pytest.raises(AssertionError) as failed:
        assert_quality(worse, baseline=base, metrics=["recall@5"], max_drop=0.1)
    text = str(failed.value)
    assert "regression: recall@5 0.9000 -> 0.7500" in text and "more than the max drop 0.1" in text
    assert "queries that lost most recall@5: q15 1.00 -> 0.00; q16 1.00 -> 0.00; q17 1.00 -> 0.00" in text
    assert assert_quality(worse, baseline=base, metrics=["recall@5"], max_drop=0.2)[0].passed
    assert relgrade.gate(base, worse, metrics=["recall@5"], max_drop=0.1).passed is False  # the same rule


def test_a_leak_fails_every_assertion_once():
    with pytest.raises(AssertionError) as failed:
        assert_quality(_report(20, leak=True), min={"recall@5": 0.5, "mrr": 0.5})
    text = str(failed.value)
    assert "(1 reason)" in text and "leak: 1 forbidden document in the top k of report" in text


def _estimate(band: str | None):
    rng = np.random.default_rng(0)
    run = {f"q{i}": {f"d{i}-{j}": 10.0 - j for j in range(5)} for i in range(30)}
    truth = {q: {d: int(rng.random() < 0.4) * 2 for d in docs} for q, docs in run.items()}
    judge = {q: {d: g if rng.random() < 0.8 else 2 - g for d, g in docs.items()} for q, docs in truth.items()}
    human = {q: truth[q] for q in list(truth)[:12]}
    verdict = None if band is None else JudgeVerdict("fake/judge", band, 0.05 if band == "slight" else 0.7,
                                                     (0.0, 0.1) if band == "slight" else (0.6, 0.8), f"{band} ...")
    return relgrade.estimate(run, human, judge, ["recall@5"], calibration=verdict)


def test_estimate_reports_follow_the_gate_on_leak_information_and_the_judge():
    report = _estimate("substantial")
    with pytest.raises(AssertionError, match="carries no leak information"):
        assert_quality(report, min={"recall@5": 0.1})
    assert assert_quality(report, min={"recall@5": 0.1}, no_tenants=True)[0].passed
    bad = _estimate("slight")
    with pytest.raises(AssertionError, match="judge: report rests on .* judge labels of fake/judge and its "
                                             "calibration says slight"):
        assert_quality(bad, min={"recall@5": 0.1}, no_tenants=True)
    assert assert_quality(bad, min={"recall@5": 0.1}, no_tenants=True, accept_judge=True)[0].passed
    assert not relgrade.gate_min(bad.to_dict(), minimum=0.1, no_tenants=True).passed  # gate --min: the same


def test_gate_min_honours_no_tenants_and_the_judge_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "estimate.json"
    path.write_text(json.dumps(_estimate("slight").to_dict()))
    argv = ["gate", "--current", str(path), "--min", "0.1"]
    assert main(argv) == 1 and "no leak information" in capsys.readouterr().out
    assert main([*argv, "--no-tenants"]) == 1
    out = capsys.readouterr().out
    assert "leak check: off" in out and "calibration says slight" in out and "judge fake/judge" in out
    assert main([*argv, "--no-tenants", "--accept-judge"]) == 0


def test_bad_calls_are_input_errors():
    with pytest.raises(InputError, match="needs min="):
        assert_quality(_report(10))
    with pytest.raises(InputError, match="dict of metric floors"):
        assert_quality(_report(10), min=0.75)
    with pytest.raises(InputError, match="not in this report"):
        assert_quality(_report(10), min={"ndcg@10": 0.5})


def test_the_face_exports_the_library_entry_points_lazily():
    from relgrade.calibration import agreement
    from relgrade.hybrid import estimate
    from relgrade.judge import judge_pairs

    assert (relgrade.estimate, relgrade.agreement, relgrade.judge_pairs) == (estimate, agreement, judge_pairs)
    assert {"assert_quality", "estimate", "agreement", "judge_pairs"} <= set(relgrade.__all__)
    code = "import relgrade, sys; relgrade.assert_quality; print(sorted(m for m in ('numpy', 'litellm') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"
