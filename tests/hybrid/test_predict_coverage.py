"""Coverage of estimate's intervals with soft predictions (one judge, two judges) at 10 labeled queries.

Each draw is a fresh population of 30 queries with 6 pooled documents; humans label the first 10 (an
exchangeable sample); judges err like LLM judges (lenient, and some queries much worse than others); the run
ranks by grade + noise. The predictions come from :func:`relgrade.hybrid.predict` (cross-fitted on the 10
labeled queries), the intervals from the PPI++ mean (``--no-answer zero``) and the ratio (``exclude``, the
default) that ``estimate`` builds. The truth is the population's mean under human labels (under ``exclude``,
over its queries with a relevant document). 200 draws per judge setting: a 0.95 coverage has a standard
error of 0.015, so the bar 0.90 is 3 standard errors below nominal.
"""

from __future__ import annotations

import numpy as np
import pytest

from relgrade.hybrid import per_query_values, ppi_means, predict
from relgrade.hybrid._estimate import ratio_means
from relgrade.hybrid._values import answerable
from relgrade.io import Qrels, Run
from relgrade.metrics import parse_metrics

METRICS = parse_metrics(["recall@3", "ndcg@5", "mrr"])  # recall@3: a 0/1 metric, mean about 0.8
N, D, N_LAB, REPS = 30, 6, 10, 200


def _population(rng, n_judges: int):
    truth, run, judges = {}, {}, [{} for _ in range(n_judges)]
    for i in range(N):
        q = f"q{i}"
        g = rng.choice(4, size=D, p=[0.55, 0.2, 0.15, 0.1])
        truth[q] = {f"d{j}": int(x) for j, x in enumerate(g)}
        keep = 0.25 if rng.random() < 0.25 else 0.65  # a query every judge misreads
        for judge in judges:
            lenient = np.minimum(g + (rng.random(D) < 0.3), 3)
            judge[q] = {f"d{j}": int(x) for j, x in enumerate(np.where(rng.random(D) < keep, lenient,
                                                                        rng.integers(0, 4, D)))}
        run[q] = {f"d{j}": float(x + rng.normal(0, 1.5)) for j, x in enumerate(g)}
    return truth, judges, Run.from_dict(run)


@pytest.mark.parametrize("n_judges", [1, 2])
def test_soft_prediction_intervals_cover_at_10_labeled_queries(n_judges):
    rng = np.random.default_rng(40 + n_judges)
    m = len(METRICS)
    Y, Yhat, Yu, zero_truth, cover_exclude = [], [], [], [], []
    for _ in range(REPS):
        truth, judges, run = _population(rng, n_judges)
        queries = list(truth)
        human = {q: truth[q] for q in queries[:N_LAB]}
        y = per_query_values(Qrels(truth), run, METRICS, queries)
        a = answerable(Qrels(truth), queries, 1)
        pred = predict(run, human, judges if n_judges > 1 else judges[0], METRICS)
        assert pred.queries == tuple(queries)
        J, Ahat = pred.values[0], pred.answerable
        Y.append(y[:N_LAB]), Yhat.append(J[:N_LAB]), Yu.append(J[N_LAB:]), zero_truth.append(y.mean(axis=0))
        ratio = ratio_means(y[:N_LAB], a[:N_LAB], J[:N_LAB], Ahat[:N_LAB], J[N_LAB:], Ahat[N_LAB:])
        truth_x = y[a > 0].mean(axis=0)  # every metric is 0 on a query without a relevant document (threshold 1)
        cover_exclude.append((ratio.lo <= truth_x) & (truth_x <= ratio.hi))
    est = ppi_means(np.hstack(Y), np.hstack(Yhat), np.hstack(Yu))  # one column per (draw, metric)
    truth = np.concatenate(zero_truth)
    zero = ((est.lo <= truth) & (truth <= est.hi)).reshape(REPS, m).mean(axis=0)
    exclude = np.mean(cover_exclude, axis=0)
    for j, metric in enumerate(METRICS):
        print(f"{n_judges} judge(s), {metric}: coverage --no-answer zero {zero[j]:.3f}, exclude {exclude[j]:.3f}")
    assert (zero >= 0.90).all() and (exclude >= 0.90).all()
    assert (est.width > 0).all()
