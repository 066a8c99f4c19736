"""The vectorised bootstrap statistics equal their oracles on the expanded sample."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from relgrade.calibration import _stats as S

SCALE = [0, 1, 2, 3]


def _random_pairs(rng, n=300):
    human = rng.integers(0, 4, n)
    noise = rng.integers(-1, 2, n)
    judge = np.clip(human + noise * (rng.random(n) < 0.6), 0, 3)
    return human, judge


@pytest.mark.parametrize("weights", ["unweighted", "linear", "quadratic"])
def test_kappa_equals_sklearn(weights):
    rng = np.random.default_rng(1)
    for _ in range(20):
        h, j = _random_pairs(rng, int(rng.integers(5, 200)))
        conf = S.confusions(h, j, np.zeros(len(h), dtype=int), 1, 4)[0]
        expected = cohen_kappa_score(h, j, labels=SCALE, weights=None if weights == "unweighted" else weights)
        assert S.kappa(conf, weights) == pytest.approx(expected, abs=1e-12)


def test_kappa_with_an_unused_middle_grade_uses_scale_positions():
    h = np.array([0, 0, 2, 2, 3, 3, 0, 2])
    j = np.array([0, 2, 2, 3, 3, 0, 0, 2])
    conf = S.confusions(h, j, np.zeros(8, dtype=int), 1, 4)[0]
    assert S.kappa(conf, "linear") == pytest.approx(cohen_kappa_score(h, j, labels=SCALE, weights="linear"))


def test_kappa_undefined_is_nan():
    conf = np.zeros((4, 4))
    conf[2, 2] = 10
    assert np.isnan(S.kappa(conf))


def test_binary_kappa_and_accuracy_and_leniency():
    rng = np.random.default_rng(2)
    h, j = _random_pairs(rng)
    conf = S.confusions(h, j, np.zeros(len(h), dtype=int), 1, 4)[0]
    assert S.kappa(S.binarise(conf, 2)) == pytest.approx(cohen_kappa_score(h >= 2, j >= 2))
    assert S.accuracy(conf) == pytest.approx(np.mean(h == j))
    assert S.leniency(conf, np.array(SCALE)) == pytest.approx(np.mean(j - h))
    from sklearn.metrics import precision_score, recall_score

    p, r = S.precision_recall(conf)
    np.testing.assert_allclose(p, precision_score(h, j, labels=SCALE, average=None, zero_division=np.nan))
    np.testing.assert_allclose(r, recall_score(h, j, labels=SCALE, average=None, zero_division=np.nan))


def test_alpha_two_raters_equals_krippendorff():
    rng = np.random.default_rng(3)
    for _ in range(20):
        h, j = _random_pairs(rng, int(rng.integers(5, 200)))
        conf = S.confusions(h, j, np.zeros(len(h), dtype=int), 1, 4)[0]
        expected = krippendorff.alpha(reliability_data=[h, j], level_of_measurement="ordinal", value_domain=SCALE)
        assert S.ordinal_alpha(S.coincidences_two(conf)) == pytest.approx(expected, abs=1e-12)


def test_alpha_many_raters_with_missing_equals_krippendorff():
    rng = np.random.default_rng(4)
    data = rng.integers(0, 4, size=(4, 60)).astype(float)
    data[rng.random(data.shape) < 0.4] = np.nan
    counts = np.stack([(data == g).sum(axis=0) for g in SCALE], axis=1)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=SCALE)
    assert S.ordinal_alpha(S.value_count_coincidences(counts)) == pytest.approx(expected, abs=1e-12)


def test_resampled_confusions_match_expanded_sample():
    """Kappa from weight-summed per-query matrices equals sklearn on the duplicated queries."""
    rng = np.random.default_rng(5)
    q = 12
    group = rng.integers(0, q, 240)
    h, j = _random_pairs(rng, 240)
    per_query = S.confusions(h, j, group, q, 4)
    weights = S.query_weights(q, 5, rng)
    boot = S.resample(per_query, weights)
    for b in range(5):
        take = np.concatenate([np.flatnonzero(group == g) for g in range(q) for _ in range(int(weights[b, g]))])
        assert S.kappa(boot[b], "quadratic") == pytest.approx(
            cohen_kappa_score(h[take], j[take], labels=SCALE, weights="quadratic"))


def test_query_weights_sum_to_number_of_queries():
    w = S.query_weights(7, 50, np.random.default_rng(0))
    assert w.shape == (50, 7) and np.all(w.sum(axis=1) == 7)


def test_weighted_rank_statistics_equal_scipy_and_sklearn_on_expanded_sample():
    rng = np.random.default_rng(6)
    n = 80
    y = rng.integers(0, 4, n)
    x = np.round(y + rng.normal(0, 1.0, n), 1)  # rounding creates ties
    weights = rng.integers(0, 4, size=(6, n)).astype(float)
    rho = S.weighted_spearman(x, y, weights)
    tau = S.weighted_kendall(x, y, 4, weights)
    auc = S.weighted_auc(x, y >= 2, weights)
    for b in range(6):
        take = np.repeat(np.arange(n), weights[b].astype(int))
        assert rho[b] == pytest.approx(stats.spearmanr(x[take], y[take]).statistic, abs=1e-10)
        assert tau[b] == pytest.approx(stats.kendalltau(x[take], y[take]).statistic, abs=1e-10)
        assert auc[b] == pytest.approx(roc_auc_score(y[take] >= 2, x[take]), abs=1e-12)


def test_percentile_ci_ignores_nan_and_needs_two_values():
    assert S.percentile_ci(np.array([np.nan, 1.0])) is None
    lo, hi = S.percentile_ci(np.r_[np.arange(101.0), np.nan])
    assert (lo, hi) == pytest.approx((2.5, 97.5))
