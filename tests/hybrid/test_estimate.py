"""estimate(): the same metrics core for human and judge labels, PPI++ from ppi-python on top."""

from __future__ import annotations

import numpy as np
import ppi_py
import pytest
from scipy import stats

from relgrade._errors import InputError
from relgrade.hybrid import estimate
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
    for j, m in enumerate(METRICS):
        e = report.estimates[m]
        y, yh, yu = Y[:, j], J[: len(labeled), j], J[len(labeled):, j]
        # point estimates: ppi-python and numpy are the oracles
        assert e.ppi == pytest.approx(float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yh, yu,
                                                                                   lam_optim_mode="element"))[0]))
        assert e.human_only == pytest.approx(y.mean())
        assert e.judge_only == pytest.approx(J[:, j].mean())
        # intervals: the documented formula (relgrade.hybrid._ppi, relgrade.stats._means), written out here
        n, N = len(y), len(yu)
        t = stats.t.ppf(0.975, n - 1)
        if np.ptp(y - yh) == 0 or np.ptp(y) == 0:  # the floored cases have their own test
            continue
        lam = np.clip(np.mean((y - y.mean()) * (yh - yh.mean())) / ((1 + n / N) * np.var(np.r_[yh, yu], ddof=1)), 0, 1)
        rect = y - lam * yh
        binary = all(np.isin(a, (0.0, 1.0)).all() for a in (y, yh, yu))
        if binary:  # a 0/1 metric: plus-two, pseudo-queries (human 0, judge 1) and (human 1, judge 0)
            rect = np.r_[rect, -lam, 1.0]
        half = t * np.sqrt(lam ** 2 * np.var(yu, ddof=1) / N + np.var(rect, ddof=1) / n)
        centre = min(1.0, max(0.0, lam * yu.mean() + rect.mean() if binary else e.ppi))
        clip = lambda v: min(1.0, max(0.0, v))  # noqa: E731 - metrics live in [0, 1]
        assert e.ppi_ci95 == pytest.approx((clip(min(centre - half, e.ppi)), clip(max(centre + half, e.ppi))))
        yy = np.r_[y, 0.0, 1.0] if np.isin(y, (0.0, 1.0)).all() else y
        hhalf = t * np.std(yy, ddof=1) / np.sqrt(n)
        assert e.human_ci95 == pytest.approx((clip(min(yy.mean() - hhalf, y.mean())), clip(max(yy.mean() + hhalf, y.mean()))))
        assert e.effective_n == pytest.approx(n * (hhalf / half) ** 2)  # unclipped widths
        assert e.effective_labels == pytest.approx(e.effective_n * 8)
    assert report.human_coverage["ndcg@5"] == 1.0


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
    # agreeing on every labeled query cannot be told apart from a lucky sample at 12 queries: lam = 1, the
    # rectifier's variance floored (no "judge worth" from it), the interval still covers the full-label value
    assert e.effective_n is None and "lam = 1" in e.note
    assert e.ppi_ci95[0] <= full <= e.ppi_ci95[1] and e.ppi_ci95[1] - e.ppi_ci95[0] > 0


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
    # a constant sample is luck, not proof: the interval keeps a width (issue 14), no false
    # "the metric is constant", and no "judge worth" from a floored variance
    n = Y.shape[0]
    plus = np.r_[np.ones(n), 0.0, 1.0]  # recall@3 is 0/1 here: plus-two
    low = plus.mean() - stats.t.ppf(0.975, n - 1) * np.std(plus, ddof=1) / np.sqrt(n)
    assert e.human_only == 1.0 and e.human_ci95 == pytest.approx((low, 1.0))
    assert np.isfinite(e.ppi) and np.isfinite(e.ppi_ci95).all() and e.ppi_ci95[1] - e.ppi_ci95[0] > 0.05
    assert e.effective_n is None and "metric is constant" not in e.note and "floor" in e.note
