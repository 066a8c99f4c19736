"""estimate(): the same metrics core for human and judge labels, PPI++ from ppi-python on top."""

from __future__ import annotations

import json

import numpy as np
import ppi_py
import pytest
from scipy import stats

from relgrade._errors import InputError
from relgrade.hybrid import PPI_INTERVAL, estimate, human_only_means, judge_worth, ppi_means
from relgrade._intervals import PLUS_TWO, STUDENT_T
from relgrade.stats import MEAN_INTERVAL
from relgrade.cli import main
from relgrade.io import Run
from relgrade.metrics import evaluate

METRICS = ["ndcg@5", "recall@3", "precision@5", "mrr"]


def _per_query(labels, run, topics):
    rep = evaluate(labels, run, METRICS, no_answer="zero", ci=False)
    return np.array([[rep.per_query[q][m] for m in METRICS] for q in topics])


def test_estimate_matches_evaluate_and_ppi_py(world):
    truth, human, judge, _, runs = world
    run = Run.from_dict(runs["b"])
    report = estimate(run, human, judge, METRICS, no_answer="zero",  # plain PPI++ (exclude: test_no_answer.py)
                      prediction="hard")  # the metric on the judge's grades (soft: test_predict.py)
    labeled = list(human)
    others = [q for q in judge if q not in human]
    assert report.labeled == tuple(labeled) and report.unlabeled == tuple(others)
    Y = _per_query(human, run, labeled)
    J = _per_query(judge, run, labeled + others)
    n = len(labeled)
    for j, m in enumerate(METRICS):
        e = report.estimates[m]
        y, yh, yu = Y[:, j], J[:n, j], J[n:, j]
        # point estimates: ppi-python at the report's lam, and numpy, are the oracles
        assert e.ppi == pytest.approx(min(1.0, max(0.0, float(np.ravel(ppi_py.ppi_mean_pointestimate(
            y, yh, yu, lam=e.lam))[0]))))
        assert e.human_only == pytest.approx(y.mean())
        assert e.judge_only == pytest.approx(J[:, j].mean())
        # intervals: the library's interval functions on the per-query values (their formula: test_ppi.py)
        ppi, human_only = ppi_means(y, yh, yu), human_only_means(y)
        assert e.lam == pytest.approx(ppi.lam[0], abs=1e-12)
        assert e.ppi_ci95 == pytest.approx((min(ppi.lo[0], e.ppi), max(ppi.hi[0], e.ppi)))
        assert e.human_ci95 == pytest.approx((human_only.lo[0], human_only.hi[0]))
        # issue 35: the width ratio and the judge worth read the two intervals as printed
        shown_p, shown_h = e.ppi_ci95[1] - e.ppi_ci95[0], e.human_ci95[1] - e.human_ci95[0]
        assert e.width_ratio == pytest.approx(shown_p / shown_h)
        worth = judge_worth(n=n, human_half_n=human_only.half[0], ppi_width=shown_p, human_width=shown_h,
                            skew_n=human_only.est.skew[0])
        assert e.effective_n == (None if worth is None else pytest.approx(worth))
        assert (e.effective_n is None) == (e.width_ratio >= 1)
        if e.effective_n is not None:
            assert e.effective_labels == pytest.approx(e.effective_n * 8)
        binary = bool(np.isin(y, (0.0, 1.0)).all())  # the human-only interval of a 0/1 metric is plus-two
        assert e.to_dict()["ppi"]["interval"] == PPI_INTERVAL
        assert e.to_dict()["human_only"]["interval"] == (PLUS_TWO.name if binary else STUDENT_T.name)
    assert report.human_coverage["ndcg@5"] == 1.0
    assert report.settings["interval"] == {"ppi": PPI_INTERVAL, "human_only": MEAN_INTERVAL}


def test_intervals_stay_inside_the_metric_range():
    # every query hits at rank 1 under both label sets except one: the normal interval would pass 1
    docs = {f"q{i}": {"d1": 1} for i in range(12)}
    run = Run.from_dict({q: {"d1": 2.0, "d2": 1.0} for q in docs})
    human = {q: dict(v) for q, v in list(docs.items())[:6]}
    human["q0"] = {"d2": 1}
    report = estimate(run, human, docs, ["recall@1"])
    e = report.estimates["recall@1"]
    assert 0.0 <= e.ppi_ci95[0] <= e.ppi_ci95[1] == 1.0
    assert 0.0 <= e.human_ci95[0] <= e.human_ci95[1] == 1.0


def test_a_perfect_judge_is_worth_more_queries_and_covers_the_truth(world):
    truth, human, _, _, runs = world
    run = Run.from_dict(runs["b"])
    report = estimate(run, human, truth, ["ndcg@5"], prediction="hard")  # hard grades agree exactly
    e = report.estimates["ndcg@5"]
    full = evaluate(truth, run, ["ndcg@5"], no_answer="zero", ci=False).aggregate["ndcg@5"].value
    assert abs(e.ppi - full) < abs(e.human_only - full) + 0.01
    # agreeing on every labeled query is not taken at its word (issue 29): lam is tuned, not forced to 1, the
    # interval keeps a width and covers the full-label value, and the judge is worth more labeled queries
    assert 0 < e.lam < 1 and e.effective_n > e.n_labeled and e.width_ratio < 0.9
    assert e.ppi_ci95[0] <= full <= e.ppi_ci95[1] and e.ppi_ci95[1] - e.ppi_ci95[0] > 0.05
    assert e.note is None or "lam = 1" not in e.note


def test_incomplete_human_labels_are_reported(world):
    _, human, judge, _, runs = world
    top2 = {q: sorted(runs["b"][q], key=lambda d: -runs["b"][q][d])[:2] for q in human}
    partial = {q: {d: human[q][d] for d in top2[q]} for q in human}
    report = estimate(Run.from_dict(runs["b"]), partial, judge, ["ndcg@5"])
    assert report.human_coverage["ndcg@5"] == pytest.approx(2 / 5)
    assert any("labeled only 40.0%" in n for n in report.notes)


def test_too_few_human_queries_is_an_input_error(world):
    _, human, judge, _, runs = world
    one = {"q0": human["q0"]}
    with pytest.raises(InputError, match="at least 2"):
        estimate(Run.from_dict(runs["a"]), one, judge, ["ndcg@5"])


def test_a_constant_metric_gets_a_documented_value_not_nan(world):
    _, human, judge, _, runs = world
    run = Run.from_dict(runs["a"])  # ranks by the human grades: recall@3 is 1 on every query
    e = estimate(run, human, judge, ["recall@3"], no_answer="zero").estimates["recall@3"]
    Y = _per_query(human, run, list(human))
    assert np.ptp(Y[:, METRICS.index("recall@3")]) == 0
    # a constant sample is luck, not proof: the interval keeps a width (issue 14), no false "the metric is constant"
    n = Y.shape[0]
    plus = np.r_[np.ones(n), 0.0, 1.0]  # recall@3 is 0/1 here: plus-two
    low = plus.mean() - stats.t.ppf(0.975, n - 1) * np.std(plus, ddof=1) / np.sqrt(n)
    assert e.human_only == 1.0 and e.human_ci95 == pytest.approx((low, 1.0))
    assert np.isfinite(e.ppi) and np.isfinite(e.ppi_ci95).all() and e.ppi_ci95[1] - e.ppi_ci95[0] > 0.05
    assert e.note is None or "metric is constant" not in e.note
    assert (e.effective_n is None) == (e.width_ratio >= 1)


def test_an_all_unjudged_judge_is_refused_in_one_line(world, files, tmp_path, capsys):
    # issue 24: an all-unjudged judge showed "judge 0.0000" and a "judge worth"; it judges none of the labeled
    # queries, so its errors cannot be measured: exit 2 with one line (relgrade.hybrid._predict's rule)
    _, human, _, _, runs = world
    with pytest.raises(InputError, match="grades none of the 12 human-labeled queries"):
        estimate(Run.from_dict(runs["b"]), human, {}, ["ndcg@5"])
    details = tmp_path / "unjudged.details.jsonl"
    details.write_text("".join(json.dumps({"query_id": q, "doc_id": d, "query": "q", "text": "t", "grade": None,
                                           "model": "m", "prompt_hash": "p", "status": "unparsed"}) + "\n"
                               for q, docs in human.items() for d in docs))
    assert main(["estimate", "--run", str(files["run_b"]), "--human", str(files["human"]), "--judge",
                 str(details)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "human-labeled queries" in err


def test_labeled_queries_missing_from_the_run_are_said_plainly(world):
    truth, human, judge, _, runs = world
    partial = {q: docs for q, docs in runs["b"].items() if q not in ("q0", "q1", "q2")}
    report = estimate(Run.from_dict(partial), human, judge, ["ndcg@5"])
    assert any("3 of the 12 human-labeled queries are not in the run" in note for note in report.notes)


def test_target_width_plans_the_labels(world):
    truth, human, judge, _, runs = world
    run = Run.from_dict(runs["b"])
    first = estimate(run, human, judge, ["mrr"]).estimates["mrr"]
    now = estimate(run, human, judge, ["mrr"], target_width=2 * first.half_widths[0]).estimates["mrr"].plan
    # today's PPI width: today's labels with the judge, the judge's worth (rounded up) without it
    assert now.ppi_queries == first.n_labeled and now.human_queries == int(np.ceil(first.effective_n))
    e = estimate(run, human, judge, ["mrr"], target_width=1.8 * first.half_widths[0]).estimates["mrr"]
    plan = e.plan
    assert plan.population == 40 and plan.target_width == pytest.approx(1.8 * first.half_widths[0])
    assert e.n_labeled < plan.ppi_queries < plan.human_queries <= 40
    assert "needs about" in plan.sentence("mrr", e.n_labeled) and e.to_dict()["plan"]["ppi_queries"] == plan.ppi_queries
    with pytest.raises(InputError, match="--target-width"):
        estimate(run, human, judge, ["mrr"], target_width=0)
