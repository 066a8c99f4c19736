"""Issue 39.3: the mapping guard's studentized intervals with each replicate's jackknife from the tables' margins
(``S.kappa_loo``) equal the plain ones (every leave-one-out table built) to 1e-12."""

from __future__ import annotations

import numpy as np
import pytest

import relgrade.calibration._guard as guard
from relgrade.calibration import _stats as S
from relgrade.calibration._guard import gain_guard


@pytest.mark.parametrize("weights", ["unweighted", "linear", "quadratic"])
def test_kappa_loo_is_kappa_of_every_leave_one_out_table(weights):
    rng = np.random.default_rng(1)
    for trial in range(40):
        q, k = int(rng.integers(2, 20)), 4
        per_query = rng.integers(0, 4, (q, k, k)).astype(float)
        if trial % 2:
            per_query *= rng.choice([1.0, 2.5, 0.3], (q, k, k))  # inclusion-weighted tables
        if trial % 3 == 0:
            per_query[:, 1:, :] = per_query[:, :, 1:] = 0  # one grade only: kappa undefined
        if trial % 5 == 0:
            per_query[0] = 0  # a query with no pair
        totals = (rng.integers(0, 3, (6, q)).astype(float) @ per_query.reshape(q, -1)).reshape(6, k, k)
        plain = S.kappa(totals[:, None] - per_query[None], weights)
        fast = S.kappa_loo(totals, per_query, weights)
        assert (np.isnan(plain) == np.isnan(fast)).all(), trial
        assert np.allclose(plain, fast, atol=1e-12, rtol=0, equal_nan=True), trial


@pytest.mark.parametrize("seed", range(3))
def test_gain_guard_intervals_are_the_plain_ones(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    for trial in range(6):
        q, k = int(rng.integers(3, 40)), 4
        human = rng.integers(0, k, (q, 15))
        judge = np.where(rng.random((q, 15)) < 0.6, human, rng.integers(0, k, (q, 15)))
        new = np.clip(judge + rng.integers(-1, 2, (q, 15)), 0, k - 1)
        group = np.repeat(np.arange(q), 15)
        w = rng.choice([1.0, 2.5, 0.3], q * 15) if trial % 2 else None
        per_base = S.confusions(human.ravel(), judge.ravel(), group, q, k, weights=w)
        per_new = S.confusions(human.ravel(), new.ravel(), group, q, k, weights=w)
        for weight in ("unweighted", "quadratic"):
            fast = gain_guard(per_base, per_new, weight, 200, seed, q * 15)
            monkeypatch.setattr(guard, "FAST_LOO", False)
            plain = gain_guard(per_base, per_new, weight, 200, seed, q * 15)
            monkeypatch.setattr(guard, "FAST_LOO", True)
            for a, b in zip(fast, plain):
                assert a.value == b.value
                assert (a.ci95 is None) == (b.ci95 is None)
                if a.ci95 is not None:
                    assert abs(a.ci95[0] - b.ci95[0]) <= 1e-12 and abs(a.ci95[1] - b.ci95[1]) <= 1e-12, (trial, weight)
