"""The inverse-probability-weighted PPI++ of the active design (relgrade.stats._weighted): a by-hand oracle,
exact unbiasedness over every draw, the floor, and coverage in simulated worlds of 25 queries."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from relgrade._errors import InputError
from relgrade.stats._weighted import (
    MAX_DESIGN_EFFECT, design_effect, design_probabilities, weighted_lambda, weighted_means, weighted_ratio,
)


def test_design_probabilities_mix_uncertainty_with_a_uniform_floor():
    u = np.array([0.0, 1.0, 3.0, 0.0])
    q = design_probabilities(u, 0.2, max_effect=None)
    assert q.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(q, 0.8 * u / 4 + 0.2 / 4)
    assert q.min() == pytest.approx(0.2 / 4)  # no query below floor / N
    assert design_effect(q) > 1.5  # mean(1 / (N q)): what these weights cost a judge whose u says nothing
    capped = design_probabilities(u, 0.2)  # the floor raised until that cost is at most MAX_DESIGN_EFFECT
    assert design_effect(capped) == pytest.approx(MAX_DESIGN_EFFECT, abs=1e-9)
    a = (capped[0] * 4)  # the raised floor share: q = (1 - a) u / sum(u) + a / N
    np.testing.assert_allclose(capped, (1 - a) * u / 4 + a / 4)
    assert a > 0.2
    np.testing.assert_array_equal(design_probabilities(np.full(5, 0.3)), np.full(5, 0.2))  # no information: uniform
    with pytest.raises(InputError, match="--floor"):
        design_probabilities(u, 0.0)
    with pytest.raises(InputError, match="not be negative|finite"):
        design_probabilities(np.array([1.0, -1.0]))


def test_weighted_means_match_the_formula_by_hand():
    Y = np.array([0.2, 0.9, 0.5, 0.5])
    f_draw = np.array([0.3, 0.6, 0.4, 0.4])
    F = np.array([0.3, 0.6, 0.4, 0.1, 0.8])  # the pool: N = 5; draws 3 and 4 are the same query
    q = np.array([0.1, 0.3, 0.25, 0.25])
    lam = 0.7
    got = weighted_means(Y, f_draw, F, q, lam=lam)
    N, n = 5, 4
    w = [1 / (N * x) for x in q]
    r = [Y[j] - lam * f_draw[j] for j in range(n)]
    r_bar = sum(a * b for a, b in zip(w, r)) / sum(w)
    value = lam * F.mean() + r_bar
    w_bar = sum(w) / n
    phi = [w[j] / w_bar * (r[j] - r_bar) for j in range(n)]
    s2 = sum(x * x for x in phi) / (n - 1)
    h = [x / sum(w) for x in w]
    mu = sum(a * b for a, b in zip(h, Y))
    pool_var = sum(a * (b - mu) ** 2 for a, b in zip(h, Y)) * n / (n - 1)
    se = np.sqrt(s2 / n + pool_var / N)
    t = stats.t.ppf(0.975, n - 1)
    k3 = sum(x ** 3 for x in phi) * n / ((n - 1) * (n - 2))
    s = float(np.clip(k3 / n ** 2 / se ** 3, -0.75 / t, 0.75 / t))
    a, b = s / 3, s / 6

    def g_inv(x):  # Hall's transformation g(T) = T + a T^2 + a^2 T^3 / 3 + b, inverted
        return (np.cbrt(1 + 3 * a * (x - b)) - 1) / a

    for x in (t, -t):  # the inverse is the inverse
        y = g_inv(x)
        assert y + a * y * y + a * a * y ** 3 / 3 + b == pytest.approx(x, abs=1e-12)
    assert got.value[0] == pytest.approx(value, abs=1e-12)
    assert got.se[0] == pytest.approx(se, abs=1e-12)
    assert got.skew[0] == pytest.approx(s, abs=1e-12)
    assert got.lo[0] == pytest.approx(max(0.0, value - se * g_inv(t)), abs=1e-12)
    assert got.hi[0] == pytest.approx(min(1.0, value - se * g_inv(-t)), abs=1e-12)
    assert got.half[0] == pytest.approx(se * (g_inv(t) - g_inv(-t)) / 2, abs=1e-12)


def test_the_estimate_is_nearly_unbiased_over_every_triple_of_draws():
    """Exact expectation over all N^3 samples of 3 draws: unbiased under the uniform design (the PPI++ point
    estimate), and under an unequal one Hájek's bias is a small share of the standard error."""
    rng = np.random.default_rng(3)
    N = 6
    Y, F = rng.uniform(0, 1, N), rng.uniform(0, 1, N)
    for q in (np.full(N, 1 / N), design_probabilities(rng.uniform(0, 1, N), 0.3)):
        for lam in (0.0, 0.4, 1.0):
            mean = second = 0.0
            for draw in itertools.product(range(N), repeat=3):
                idx = np.array(draw)
                v = weighted_means(Y[idx], F[idx], F, q[idx], lam=lam).value[0]
                p = np.prod(q[idx])
                mean += p * v
                second += p * v * v
            sd = np.sqrt(second - mean * mean)
            if np.ptp(q) == 0:
                assert mean == pytest.approx(Y.mean(), abs=1e-12)
            else:
                assert 0 < abs(mean - Y.mean()) < 0.15 * sd


def test_uniform_probabilities_give_the_plain_ppi_point_estimate():
    rng = np.random.default_rng(4)
    F = rng.uniform(0, 1, 20)
    idx = rng.integers(0, 20, 8)
    Y = np.clip(F[idx] + rng.normal(0, 0.1, 8), 0, 1)
    got = weighted_means(Y, F[idx], F, np.full(8, 1 / 20), lam=0.6)
    assert got.value[0] == pytest.approx(Y.mean() + 0.6 * (F.mean() - F[idx].mean()), abs=1e-12)


def test_lambda_is_shrunk_toward_one_and_zero_for_a_constant_judge():
    x = np.array([[0.1], [0.5], [0.9], [0.3]])
    lam, e = weighted_lambda(x, x)  # y = x exactly: slope 1, no error
    assert lam[0] == pytest.approx(1.0) and e[0] == pytest.approx(1.0)
    lam, _ = weighted_lambda(x, 0.5 * x)  # slope 0.5, no error: the labels pin it
    assert lam[0] == pytest.approx(0.5)
    got = weighted_means(np.array([0.2, 0.4, 0.6]), np.full(3, 0.5), np.full(7, 0.5), np.full(3, 1 / 7))
    assert got.lam[0] == 0.0


def _world(rng, Q: int, informative: bool):
    """Informative: the judge is sure of 70% of the queries (error sd 0.03) and knows which; else the error sd
    is uniform on [0.02, 0.4] and the judge's uncertainty is drawn apart from it."""
    f = rng.beta(2, 2, Q)
    s = np.where(rng.random(Q) < 0.3, 0.4, 0.03) if informative else rng.uniform(0.02, 0.4, Q)
    Y = np.clip(f + rng.normal(0, 1, Q) * s, 0, 1)
    return Y, f, (s if informative else rng.uniform(0.02, 0.4, Q))


@pytest.mark.parametrize("informative", [True, False])
def test_coverage_and_width_in_worlds_of_25_queries(informative):
    """The pool is N = 25 draws from a world of 25 queries (the truth: the world's mean), n = 10 labeled draws;
    the judge's uncertainty is its true error scale (informative) or noise. Coverage within 0.925-0.97 for both
    designs; the active design narrower when informed (measured 0.975-0.977, the design effect capped at 1.02), at
    most 2% wider when not (measured 1.00-1.01)."""
    rng = np.random.default_rng(11 if informative else 12)
    hit_a, hit_u, wa, wu = [], [], [], []
    for _ in range(2000):
        Yw, fw, uw = _world(rng, 25, informative)
        pool = rng.integers(0, 25, 25)
        Y, f, u = Yw[pool], fw[pool], uw[pool]
        q = design_probabilities(u)
        d = rng.choice(25, 10, p=q)
        a = weighted_means(Y[d], f[d], f, q[d])
        du = rng.integers(0, 25, 10)
        b = weighted_means(Y[du], f[du], f, np.full(10, 1 / 25))
        hit_a.append(a.lo[0] <= Yw.mean() <= a.hi[0])
        hit_u.append(b.lo[0] <= Yw.mean() <= b.hi[0])
        wa.append(a.width[0])
        wu.append(b.width[0])
    assert 0.925 <= np.mean(hit_a) <= 0.97  # measured 0.933-0.949 (4000 draws, two seeds); MC se 0.005
    assert 0.925 <= np.mean(hit_u) <= 0.97
    ratio = np.mean(wa) / np.mean(wu)
    assert ratio < 0.99 if informative else ratio < 1.02


def test_ratio_is_the_ratio_of_the_weighted_estimates():
    rng = np.random.default_rng(5)
    N = 15
    A = (rng.uniform(0, 1, N) < 0.7).astype(float)
    Y = A * rng.uniform(0, 1, N)
    F, Fa = np.clip(Y + rng.normal(0, 0.1, N), 0, 1), np.clip(A + rng.normal(0, 0.2, N), 0, 1)
    q = design_probabilities(rng.uniform(0, 1, N))
    d = rng.choice(N, 8, p=q)
    got = weighted_ratio(Y[d], A[d], F[d], Fa[d], F, Fa, q[d], lam=0.0)
    w = 1 / (N * q[d])
    assert got.value[0] == pytest.approx((w * Y[d]).sum() / (w * A[d]).sum(), abs=1e-12)
    assert got.lo[0] <= got.value[0] <= got.hi[0]
    with pytest.raises(InputError, match="relevant document"):
        weighted_ratio(Y[d], np.zeros(8), F[d], Fa[d], F, Fa, q[d])
