"""Inclusion-weighted agreement: a ``--design strata`` sample estimates the population kappa (issue 14)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from relgrade import InputError
from relgrade.calibration import agreement
from relgrade.calibration._sample import DEFAULT_DESIGN, sample_pairs
from relgrade.calibration._stats import confusions, kappa


def _population(seed=0, n_queries=150, per_query=20):
    """Judge grades mostly 0; its errors depend on its grade, so the strata differ in agreement."""
    rng = np.random.default_rng(seed)
    human, judge = {}, {}
    for q in range(n_queries):
        h = rng.choice(4, size=per_query, p=[0.6, 0.2, 0.12, 0.08])
        right = rng.random(per_query) < np.array([0.8, 0.45, 0.5, 0.85])[h]
        j = np.where(right, h, rng.integers(0, 4, per_query))
        human[f"q{q}"] = {f"d{d}": int(h[d]) for d in range(per_query)}
        judge[f"q{q}"] = {f"d{d}": int(j[d]) for d in range(per_query)}
    return judge, human


def test_weighted_kappa_of_strata_samples_lands_on_the_population_kappa():
    judge, human = _population()
    keys = [(q, d) for q in judge for d in judge[q]]
    h = np.array([human[q][d] for q, d in keys])
    j = np.array([judge[q][d] for q, d in keys])
    truth = cohen_kappa_score(h, j)
    weighted, unweighted = [], []
    for seed in range(150):
        sample = sample_pairs(judge, n=240, design="strata", seed=seed)
        sub_h, sub_j = {}, {}
        for it in sample.items:
            sub_h.setdefault(it.query_id, {})[it.doc_id] = human[it.query_id][it.doc_id]
            sub_j.setdefault(it.query_id, {})[it.doc_id] = judge[it.query_id][it.doc_id]
        w = {(it.query_id, it.doc_id): it.weight for it in sample.items}
        weighted.append(agreement(sub_j, sub_h, weights=w, n_boot=0).kappa.value)
        unweighted.append(agreement(sub_j, sub_h, n_boot=0).kappa.value)
    print(f"population kappa {truth:.3f}; strata samples: weighted {np.mean(weighted):.3f}, "
          f"unweighted {np.mean(unweighted):.3f}")
    assert abs(np.mean(weighted) - truth) <= 0.02
    assert abs(np.mean(unweighted) - truth) >= 0.05  # the equal-allocation sample over-represents rare grades


def test_weighted_point_estimates_equal_sklearn_sample_weight_and_the_bootstrap_resamples_queries():
    judge, human = _population(seed=1, n_queries=12, per_query=8)
    rng = np.random.default_rng(2)
    w = {(q, d): float(rng.uniform(0.5, 5)) for q in judge for d in judge[q]}
    r = agreement(judge, human, weights=w, n_boot=200, seed=3)
    keys = [(q, d) for q in sorted(judge) for d in sorted(judge[q])]
    h = np.array([human[q][d] for q, d in keys])
    j = np.array([judge[q][d] for q, d in keys])
    sw = np.array([w[k] for k in keys])
    assert r.kappa.value == pytest.approx(cohen_kappa_score(h, j, labels=[0, 1, 2, 3], sample_weight=sw))
    assert r.kappa_quadratic.value == pytest.approx(
        cohen_kappa_score(h, j, labels=[0, 1, 2, 3], weights="quadratic", sample_weight=sw))
    assert r.binary_kappa.value == pytest.approx(cohen_kappa_score(h >= 2, j >= 2, sample_weight=sw))
    assert r.accuracy.value == pytest.approx(np.average(h == j, weights=sw))
    assert r.leniency.value == pytest.approx(np.average(j - h, weights=sw))
    single = confusions(h, j, np.zeros(len(h), dtype=np.int64), 1, 4, weights=sw)[0]
    assert r.kappa.value == pytest.approx(float(kappa(single)))
    assert r.weighted and r.to_dict()["weighted"] is True
    assert sum(map(sum, r.confusion_matrix)) == len(keys)  # sample counts shown
    assert r.kappa.ci95[0] < r.kappa.value < r.kappa.ci95[1]
    # all weights equal: the same as no weights
    same = agreement(judge, human, weights={k: 3.0 for k in w}, n_boot=200, seed=3)
    plain = agreement(judge, human, n_boot=200, seed=3)
    assert same.kappa.value == pytest.approx(plain.kappa.value)
    assert same.kappa.ci95 == pytest.approx(plain.kappa.ci95)


def test_missing_or_bad_weights_are_input_errors():
    judge, human = _population(seed=1, n_queries=3, per_query=4)
    with pytest.raises(InputError, match="no weight for query"):
        agreement(judge, human, weights={("q0", "d0"): 1.0}, n_boot=0)
    bad = {(q, d): 1.0 for q in judge for d in judge[q]}
    bad[("q1", "d2")] = 0.0
    with pytest.raises(InputError, match="must be positive"):
        agreement(judge, human, weights=bad, n_boot=0)


def test_the_default_design_is_queries():
    assert DEFAULT_DESIGN == "queries"
    assert inspect.signature(sample_pairs).parameters["design"].default == "queries"
    judge, _ = _population(seed=4, n_queries=10, per_query=3)
    assert sample_pairs(judge, n=2).design == "queries"
