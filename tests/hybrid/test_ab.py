"""compare --human --judge: the paired difference of two runs as a PPI++ target, and gate --paired on it."""

from __future__ import annotations

import json

import numpy as np
import ppi_py
import pytest

from relgrade.cli import main
from relgrade.hybrid import human_only_means, ppi_means
from relgrade.hybrid._ab import compare_runs
from relgrade.io import Run
from relgrade.metrics import compare, evaluate, paired_difference

METRICS = ["ndcg@5", "mrr", "recall@3"]


def _values(labels, run, topics, metric):
    rep = evaluate({q: labels[q] for q in topics}, run, [metric], no_answer="zero", ci=False)
    return np.array([rep.per_query[q][metric] for q in topics])


def test_difference_is_ppi_on_the_per_query_difference_beside_the_human_only_paired_interval(world):
    truth, human, judge, _, runs_raw = world
    a, b = Run.from_dict(runs_raw["b"], name="b"), Run.from_dict(runs_raw["a"], name="a")
    report = compare_runs(a, b, human, judge, METRICS, no_answer="zero", prediction="hard")  # the judge's grades
    labeled, others = list(human), [q for q in judge if q not in human]
    for m in METRICS:
        d = report.differences[m]
        D = _values(human, b, labeled, m) - _values(human, a, labeled, m)
        Dj = _values(judge, b, labeled + others, m) - _values(judge, a, labeled + others, m)
        n = len(labeled)
        ppi = ppi_means(D, Dj[:n], Dj[n:], lower=-1.0, upper=1.0)
        assert d.lam == pytest.approx(ppi.lam[0]) and d.diff == pytest.approx(ppi.value[0], abs=1e-12)
        point = float(np.ravel(ppi_py.ppi_mean_pointestimate(D, Dj[:n], Dj[n:], lam=d.lam))[0])
        assert d.diff == pytest.approx(point, abs=1e-12) and d.b - d.a == pytest.approx(d.diff, abs=1e-12)
        assert d.ci95 == pytest.approx((ppi.lo[0], ppi.hi[0]))
        # the human-only interval is compare --qrels' paired interval on the labeled queries (the same construction)
        ref = paired_difference(_values(human, a, labeled, m), _values(human, b, labeled, m), n_perm=0)
        assert d.human_ci95 == pytest.approx(ref.ci95) and d.human_only == pytest.approx(ref.diff)
        assert d.human_ci95 == pytest.approx(tuple(x[0] for x in (human_only_means(D, lower=-1, upper=1).lo,
                                                                  human_only_means(D, lower=-1, upper=1).hi)))
        # issue 35: the width ratio and the judge worth are read off the two intervals as printed
        assert d.width_ratio == pytest.approx((d.ci95[1] - d.ci95[0]) / (d.human_ci95[1] - d.human_ci95[0]))
        assert (d.effective_n is None) == (d.width_ratio >= 1) and d.judge_only == pytest.approx(Dj.mean())
    settings = report.to_dict()["settings"]
    assert settings["kind"] == "compare" and settings["paired"] and settings["runs"] == ["b", "a"]
    assert settings["interval"]["ppi"] == "PPI++" and settings["prediction"]["kind"] == "hard"
    ev = compare(evaluate(human, a, METRICS, no_answer="zero"), evaluate(human, b, METRICS, no_answer="zero"), n_perm=0)
    assert ev.differences["mrr"].ci95 == pytest.approx(report.differences["mrr"].human_ci95)


def test_exclude_difference_is_the_difference_of_the_two_runs_ratios(world):
    truth, human, judge, _, runs_raw = world
    empty = ("q1", "q3", "q20")
    human = {q: ({d: 0 for d in docs} if q in empty else docs) for q, docs in human.items()}
    a, b = Run.from_dict(runs_raw["b"], name="b"), Run.from_dict(runs_raw["a"], name="a")
    report = compare_runs(a, b, human, judge, ["ndcg@5"])  # the default, soft prediction
    d = report.differences["ndcg@5"]
    answered = [q for q in human if q not in empty]
    human_diff = (_values(human, b, answered, "ndcg@5") - _values(human, a, answered, "ndcg@5")).mean()
    assert d.human_only == pytest.approx(human_diff)
    assert d.b - d.a == pytest.approx(d.diff) and d.ci95[0] <= d.diff <= d.ci95[1]
    assert report.settings["no_answer"] == "exclude" and d.interval == "PPI++ ratio"
    assert report.settings["prediction"]["kind"] == "soft"


def test_compare_cli_and_gate_paired(files, tmp_path, capsys):
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"query_id": "q0", "query": "q", "relevant_doc_ids": ["q0d0"],
                                  "forbidden_doc_ids": ["nowhere"]}) + "\n")
    out = {}
    for name, (a, b) in {"better": ("run_b", "run_a"), "worse": ("run_a", "run_b")}.items():
        out[name] = tmp_path / f"{name}.json"
        assert main(["compare", "--run-a", str(files[a]), "--run-b", str(files[b]), "--human", str(files["human"]),
                     "--judge", str(files["judge"]), "--metric", "ndcg@10", "--forbidden", str(golden), "--json",
                     str(out[name])]) == 0
    text = capsys.readouterr().out
    assert "B-A PPI++" in text and "B-A human-only" in text and "judge-only" in text
    data = json.loads(out["better"].read_text())
    ppi = data["aggregate"]["ndcg@10"]["ppi"]
    assert data["leaks"] == [] and ppi["value"] > 0 and ppi["ci95"][0] > 0
    assert main(["gate", "--paired", str(out["better"]), "--metric", "ndcg@10"]) == 0
    assert main(["gate", "--paired", str(out["worse"]), "--metric", "ndcg@10"]) == 1
    # beyond the CI: a drop of less than max-drop beyond the upper end passes
    worse = json.loads(out["worse"].read_text())["aggregate"]["ndcg@10"]["ppi"]
    slack = -worse["ci95"][1] + 0.01
    assert main(["gate", "--paired", str(out["worse"]), "--metric", "ndcg@10", "--beyond-ci", "--max-drop",
                 f"{slack:.6f}"]) == 0
    assert main(["gate", "--paired", str(out["worse"]), "--metric", "ndcg@10", "--beyond-ci", "--max-drop",
                 f"{slack - 0.02:.6f}"]) == 1
    capsys.readouterr()


@pytest.mark.parametrize("argv, message", [
    (["--qrels", "QRELS", "--human", "H", "--judge", "J"], "not both"),
    (["--human", "H"], "--human needs --judge"),
    ([], "give --labels"),
])
def test_compare_option_errors_exit_2_with_one_line(files, capsys, argv, message):
    argv = [str(files["human"]) if x in ("H", "QRELS") else str(files["judge"]) if x == "J" else x for x in argv]
    assert main(["compare", "--run-a", str(files["run_a"]), "--run-b", str(files["run_b"]), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err


def test_gate_paired_refuses_malformed_or_unpaired_reports(files, tmp_path, capsys):
    out = tmp_path / "ab.json"
    assert main(["compare", "--run-a", str(files["run_a"]), "--run-b", str(files["run_b"]), "--human",
                 str(files["human"]), "--judge", str(files["judge"]), "--metric", "ndcg@10", "--json", str(out)]) == 0
    good = json.loads(out.read_text())
    cases = {
        "nan": lambda d: d["aggregate"]["ndcg@10"]["ppi"].update(value=float("nan")),
        "reversed": lambda d: d["aggregate"]["ndcg@10"]["ppi"].update(ci95=[0.5, -0.5]),
        "range": lambda d: d["aggregate"]["ndcg@10"]["ppi"].update(ci95=[-3, 3]),
        "unpaired": lambda d: d["settings"].update(kind="estimate"),
    }
    for name, edit in cases.items():
        data = json.loads(json.dumps(good))
        edit(data)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data))
        capsys.readouterr()
        assert main(["gate", "--paired", str(path), "--metric", "ndcg@10"]) == 2, name
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.startswith("relgrade: error:"), (name, err)
    assert main(["gate", "--paired", str(out), "--current", str(out)]) == 2
    assert main(["gate", "--baseline", str(out)]) == 2
    assert main(["gate", "--paired", str(out), "--metric", "ndcg@10"]) == 1  # no leak information: fails


def test_reports_and_gate_verdicts_name_their_interval_construction(world, files, tmp_path):
    from relgrade import gate
    from relgrade.gating._paired import gate_paired
    from relgrade.hybrid import PPI_INTERVAL, RATIO_INTERVAL, estimate
    from relgrade.stats import MEAN_INTERVAL

    truth, human, judge, _, runs_raw = world
    run = Run.from_dict(runs_raw["a"], name="a")
    ev = evaluate(truth, run, ["ndcg@5"], no_answer="zero")
    assert ev.settings["interval"] == MEAN_INTERVAL
    assert gate(ev, ev, metrics=["ndcg@5"]).settings["interval"] == MEAN_INTERVAL
    est = estimate(run, human, judge, ["ndcg@5"], no_answer="zero", forbidden={})
    assert gate(est, est, metrics=["ndcg@5"]).settings["interval"] == PPI_INTERVAL
    assert estimate(run, human, judge, ["ndcg@5"]).settings["interval"]["ppi"] == RATIO_INTERVAL
    paired = compare_runs(run, Run.from_dict(runs_raw["b"], name="b"), human, judge, ["ndcg@5"], no_answer="zero",
                          forbidden=None)
    assert gate_paired(paired.to_dict(), metrics=["ndcg@5"]).settings["interval"] == PPI_INTERVAL
    assert compare(ev, ev, n_perm=0).settings["interval"] == MEAN_INTERVAL
