"""Issue 39.2: rank-systems' column-wise taus and paired tests give the numbers of the plain loops they replace."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy.stats import kendalltau

from relgrade.hybrid._ppi import ppi_point
from relgrade.hybrid._rank import SOURCES, _boot_taus, _tau, kendall_taus
from relgrade.metrics import paired_difference
from relgrade.metrics._stats import paired_differences
from relgrade.stats import query_indices


def test_kendall_taus_are_scipys_with_ties_and_constant_rows():
    rng = np.random.default_rng(0)
    x = np.round(rng.random((400, 6)), 1)  # many ties
    y = np.round(x + rng.normal(0, 0.2, x.shape), 1)
    x[:5] = 0.3  # constant rows: undefined
    y[5:10, :] = y[5:10, :1]
    got = kendall_taus(x, y)
    for b in range(len(x)):
        want = kendalltau(x[b], y[b]).statistic if np.ptp(x[b]) and np.ptp(y[b]) else np.nan
        assert (np.isnan(got[b]) and np.isnan(want)) or got[b] == want, b
    assert np.isnan(got[:10]).all() and np.isfinite(got[10:]).all()


def plain_tau(x, y):
    """``_tau`` before issue 39.2: scipy's statistic (None when either side is constant or tau is not finite)."""
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    tau = kendalltau(x, y).statistic
    return None if not np.isfinite(tau) else float(tau)


def test_the_point_tau_is_scipys():
    rng = np.random.default_rng(4)
    for _ in range(300):
        m = int(rng.integers(2, 8))
        x, y = np.round(rng.random(m), 1), np.round(rng.random(m), 1)
        assert _tau(x, y) == plain_tau(x, y)
    assert _tau(np.ones(3), np.arange(3.0)) is None and _tau(None, np.arange(3.0)) is None


def plain_boot_taus(H, J, n, N, lam, n_boot, rng, source_pairs):
    """The loop of rank_systems before issue 39 (one replicate at a time, scipy's tau)."""
    boot = {sp: [] for sp in source_pairs}
    labeled_draws = query_indices(n, n_boot, rng)
    unlabeled_draws = query_indices(N, n_boot, rng) + n if N else np.zeros((n_boot, 0), np.int64)
    for il, iu in zip(labeled_draws, unlabeled_draws):
        Hb, Jl, Ju = H[il], J[il], J[iu]
        m = {"human": Hb.mean(axis=0), "judge": np.concatenate([Jl, Ju]).mean(axis=0)}
        m["ppi"] = ppi_point(Hb, Jl, Ju, lam) if N else m["human"]
        for x, y in source_pairs:
            t = plain_tau(m[x], m[y])
            if t is not None:
                boot[(x, y)].append(t)
    return boot


@pytest.mark.parametrize("n, N, systems, seed", [(8, 200, 5, 0), (15, 0, 4, 1), (6, 50, 2, 2), (30, 3000, 5, 3)])
def test_block_taus_are_the_plain_loops(n, N, systems, seed):
    rng = np.random.default_rng(seed)
    H = np.round(rng.random((n, systems)), 1)  # ties between systems on a resample
    J = np.round(rng.random((n + N, systems)), 2)
    pairs = list(combinations(SOURCES, 2))
    fast = _boot_taus(H, J, n, N, 0.7, 300, np.random.default_rng(seed), pairs)
    plain = plain_boot_taus(H, J, n, N, 0.7, 300, np.random.default_rng(seed), pairs)
    for sp in pairs:
        assert len(fast[sp]) == len(plain[sp]) > 0
        assert np.abs(fast[sp] - np.array(plain[sp])).max() <= 1e-12


def test_paired_differences_are_the_one_at_a_time_ones():
    rng = np.random.default_rng(4)
    n = 700
    A = rng.random((n, 4))
    B = np.column_stack([A[:, 0] + rng.normal(0.02, 0.1, n), A[:, 1], rng.random(n), A[:, 3] + 0.001])
    B = np.clip(B, 0, 1)
    got = paired_differences(A, B, n_perm=3000, seed=9)
    for c in range(4):
        want = paired_difference(A[:, c], B[:, c], n_perm=3000, seed=9)
        assert got[c] == want, c
    assert got[1].p_value == 1.0 and got[3].p_value < 0.05  # a column without a difference; one with a clear one


def test_student_t_tails_are_scipy_stats():
    """ppi_pvalues' F: scipy.special.stdtr gives scipy.stats.t.cdf and .sf, edge cases included."""
    from scipy import special, stats

    x = np.array([-np.inf, -50, -3, -1e-300, 0, 0.5, 2, 50, np.inf, np.nan, 1, 1, 1, 1, 1, -2])
    df = np.array([3, 3, 0.5, 2, 1, 1e9, 7.3, 2, 3, 3, 0, -1, np.nan, np.inf, 1e-300, np.inf])
    np.testing.assert_array_equal(special.stdtr(df, x), stats.t.cdf(x, df))
    np.testing.assert_array_equal(special.stdtr(df, -x), stats.t.sf(x, df))
