"""Issue 39.3: the O(P log P) leave-one-query-out AUC, Kendall and Spearman equal the plain jackknife (the weighted
statistic on each leave-one-out weight row) to 1e-12, on hostile inputs, and calibrate's intervals with them."""

from __future__ import annotations

import numpy as np
import pytest

from relgrade.calibration import _stats as S
from relgrade.calibration._intervals import JackknifeRows, pair_stat
from relgrade.calibration._loo import loo_auc, loo_kendall, loo_spearman


def _plain(fn, nq, group, w):
    ww = np.ones(len(group)) if w is None else w
    return pair_stat(lambda rows: fn(rows * ww[None]), JackknifeRows(nq), group, chunk=7)


def _case(rng, trial):
    nq = int(rng.integers(2, 14))
    sizes = rng.integers(1, 7, nq) if trial % 5 else np.ones(nq, dtype=int)  # every fifth: one pair a query
    group = np.repeat(np.arange(nq), sizes)
    p = len(group)
    x = rng.integers(0, 4, p) / 2.0 if trial % 4 else rng.normal(size=p)  # heavy ties in the score, or none
    k = 4
    y = rng.choice([0, 1, 3], p) if trial % 2 else rng.integers(0, k, p)  # grade 2 absent in every other case
    if trial % 7 == 0:
        y[group == 0] = 3  # one query holds the only items of a grade
    w = None if trial % 3 == 0 else rng.choice([1.0, 2.5, 0.3, 7.0 / 3.0], p)  # strata-like inclusion weights
    return nq, group, x, y, k, w


@pytest.mark.parametrize("seed", range(4))
def test_leave_one_out_equals_the_plain_jackknife(seed):
    rng = np.random.default_rng(seed)
    grades = np.array([0.0, 1.0, 2.0, 3.0])
    for trial in range(120):
        nq, group, x, y, k, w = _case(rng, trial)
        cases = (
            (loo_auc(x, y >= 2, group, nq, w), _plain(lambda W: S.weighted_auc(x, y >= 2, W), nq, group, w)),
            (loo_kendall(x, y, k, group, nq, w), _plain(lambda W: S.weighted_kendall(x, y, k, W), nq, group, w)),
            (loo_spearman(x, y, k, group, nq, w),
             _plain(lambda W: S.weighted_spearman(x, grades[y], W), nq, group, w)),
        )
        # the plain Kendall decides "x (or y) constant" on n0 - n1 (n0 - n2) of float sums, which a rounding residue
        # can leave above 0 (then 0 / tiny = 0); the fast one decides on counts: NaN, as tau-b is undefined there
        constant = np.array([min(len(np.unique(x[group != g])), len(np.unique(y[group != g]))) < 2
                             for g in range(nq)])
        residue = constant & (cases[1][1] == 0.0) & np.isnan(cases[1][0])
        cases[1][1][residue] = np.nan
        for fast, plain in cases:
            assert fast.shape == (nq,)
            assert (np.isnan(fast) == np.isnan(plain)).all(), (trial, fast, plain)
            assert np.allclose(fast, plain, atol=1e-12, rtol=0, equal_nan=True), (trial, fast, plain)


def test_leave_one_out_at_a_few_thousand_pairs():
    rng = np.random.default_rng(9)
    nq = 300
    group = np.repeat(np.arange(nq), rng.integers(1, 30, nq))
    y = rng.choice(4, len(group), p=[0.5, 0.2, 0.2, 0.1])
    x = np.clip(y + rng.normal(0, 0.5, len(group)), 0, 3).round(2)
    for w in (None, rng.choice([1.0, 2.5, 0.3], len(group))):
        assert np.abs(loo_auc(x, y >= 2, group, nq, w)
                      - _plain(lambda W: S.weighted_auc(x, y >= 2, W), nq, group, w)).max() <= 1e-12
        assert np.abs(loo_kendall(x, y, 4, group, nq, w)
                      - _plain(lambda W: S.weighted_kendall(x, y, 4, W), nq, group, w)).max() <= 1e-12
        assert np.abs(loo_spearman(x, y, 4, group, nq, w)
                      - _plain(lambda W: S.weighted_spearman(x, y.astype(float), W), nq, group, w)).max() <= 1e-12
