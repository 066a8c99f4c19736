"""Validity of the PPI++ intervals by simulation: synthetic judges of known quality, 2000 repetitions.

A population of 3000 queries with 10 retrieved documents each gets human grades; per-query nDCG@10
and recall@5 come from the metrics core. Each repetition draws 200 queries as "human-labeled" (a
uniform random sample) and computes the PPI++ and human-only intervals of the population mean. The
judge is fixed within a scenario (PPI's guarantee holds for any fixed judge): an informative one that
keeps the human grade with probability 0.85 (else a uniformly random grade), and a useless one whose
grades are drawn independently of the human grades.
"""

from __future__ import annotations

import numpy as np
import pytest

from relgrade.hybrid import human_only_means, ppi_means
from relgrade.io import Qrels, Run
from relgrade.metrics import compute, join, parse_metric

M, D, N_LABELED, REPS, BLOCK = 3000, 10, 200, 2000, 500
P = [0.75, 0.12, 0.08, 0.05]
METRICS = [parse_metric("ndcg@10"), parse_metric("recall@5")]


def _values(grades: np.ndarray, run: Run) -> np.ndarray:
    labels = {f"q{i}": {f"d{j}": int(grades[i, j]) for j in range(D)} for i in range(M)}
    v = compute(join(Qrels(labels), run), METRICS)
    return np.column_stack([v[m.name] for m in METRICS])


@pytest.fixture(scope="module")
def world():
    rng = np.random.default_rng(7)
    grades = rng.choice(4, size=(M, D), p=P)
    qids = np.repeat(np.array([f"q{i}" for i in range(M)], dtype=object), D)
    docs = np.array([f"d{j}" for j in range(D)] * M, dtype=object)
    run = Run(qids, docs, np.tile(np.arange(D, 0, -1.0), M))
    human = _values(grades, run)
    keep = rng.random((M, D)) < 0.85
    informative = _values(np.where(keep, grades, rng.integers(0, 4, (M, D))), run)
    useless = _values(rng.choice(4, size=(M, D), p=P), run)
    order = np.argsort(rng.random((REPS, M)), axis=1)
    return human, {"informative": informative, "useless": useless}, order[:, :N_LABELED], order[:, N_LABELED:]


def _simulate(world, judge_name: str, m: int):
    human, judges, lab, unl = world
    judge = judges[judge_name]
    Y, Yhat, Yu = human[lab, m].T, judge[lab, m].T, judge[unl, m].T  # columns = repetitions
    lo, hi = [], []
    for s in range(0, REPS, BLOCK):  # columns are independent (one lam each): blocks only bound memory
        est = ppi_means(Y[:, s:s + BLOCK], Yhat[:, s:s + BLOCK], Yu[:, s:s + BLOCK])
        lo.append(est.lo)
        hi.append(est.hi)
    lo, hi = np.concatenate(lo), np.concatenate(hi)
    classical = human_only_means(Y)
    theta = human[:, m].mean()
    coverage = np.mean((lo <= theta) & (theta <= hi))
    human_coverage = np.mean((classical.lo <= theta) & (theta <= classical.hi))
    ratio = np.mean(hi - lo) / np.mean(classical.width)
    return coverage, human_coverage, ratio


@pytest.mark.parametrize("m", range(len(METRICS)), ids=[x.name for x in METRICS])
def test_informative_judge_is_valid_and_narrower(world, m):
    coverage, human_coverage, ratio = _simulate(world, "informative", m)
    assert coverage >= 0.93
    assert human_coverage >= 0.93
    assert ratio < 0.85  # the judge is worth more labeled queries


@pytest.mark.parametrize("m", range(len(METRICS)), ids=[x.name for x in METRICS])
def test_useless_judge_stays_valid_and_about_as_wide(world, m):
    _, judges, _, _ = world
    human = world[0]
    assert abs(np.corrcoef(human[:, m], judges["useless"][:, m])[0, 1]) < 0.1  # the scenario is what it says
    coverage, _, ratio = _simulate(world, "useless", m)
    assert coverage >= 0.93
    assert 0.9 <= ratio <= 1.1
