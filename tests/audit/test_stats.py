"""The audit's statistics on simulated judges: false alarms over many seeds on fair judges (all probes together),
the interval's construction against an oracle, the identity probe on a deterministic judge, and power.

A simulated judge grades a pair by an ordinal latent ``mu_i + m_(q, kind) + sigma * eps`` (thresholds 0.5 / 1.5 /
2.5): ``mu_i`` the pair's relevance, ``eps`` each call's own noise (a re-ask can change the grade) and
``m_(q, kind)`` a query-level noise of each kind of answer (the judge reads one query's perturbed passages alike:
the shifts of a query's pairs are correlated). A *fair* judge draws every kind of answer alike, so a probe's answer
and its baseline are exchangeable and every true shift is exactly 0: any bias flagged is a false alarm.
"""

from __future__ import annotations

import numpy as np
import pytest

from relgrade.audit import PROBES, analyse
from relgrade.stats import clustered_mean

NAMES = [p.name for p in PROBES]
THRESHOLDS = np.array([0.5, 1.5, 2.5])


def simulate(rng, n, queries, sigma, tau, shift=None):
    """Grades of every kind of answer for ``n`` pairs in ``queries`` queries of unequal sizes; ``shift``: (probe,
    latent shift) planted in one probe."""
    q = np.sort(np.concatenate([np.arange(queries), rng.integers(0, queries, n - queries)]))
    mu = rng.choice([0.0, 1.3, 2.05, 2.7], n, p=[0.4, 0.3, 0.2, 0.1])
    grades = {}
    for kind in ["original", *NAMES]:
        latent = mu + tau * rng.standard_normal(queries)[q] + sigma * rng.standard_normal(n)
        if shift is not None and kind == shift[0]:
            latent = latent + shift[1]
        grades[kind] = (latent[:, None] > THRESHOLDS).sum(axis=1).tolist()
    return grades, [f"q{i}" for i in q]


def false_alarms(n, queries, sigma, tau, seeds, *, alpha=0.05, clustered=True):
    rng = np.random.default_rng(n * 1000 + queries)
    hits = 0
    for _ in range(seeds):
        grades, qids = simulate(rng, n, queries, sigma, tau)
        results = analyse(grades, qids if clustered else [str(i) for i in range(n)], probes=NAMES, alpha=alpha)
        hits += any(r.bias for r in results)
    return hits / seeds


# (pairs, queries, call noise sigma, query-level noise tau): from a handful of unequal queries with strong query-level
# noise to a typical audit. A re-ask changes 45-55% of the grades in these worlds (a very noisy judge: the hard case).
FAIR = [(20, 4, 0.5, 0.4), (60, 12, 0.5, 0.3), (100, 10, 0.7, 0.4), (200, 40, 0.6, 0.3)]


def test_false_alarms_over_all_probes_stay_under_5_percent():
    rates = {cfg: false_alarms(*cfg, seeds=500) for cfg in FAIR}
    print("false alarms over 6 probes per audit:", rates)
    assert all(rate <= 0.05 for rate in rates.values()), rates
    assert np.mean(list(rates.values())) <= 0.04, rates


def test_without_the_corrections_the_same_judges_raise_false_alarms():
    """The same fair judges with 95% intervals per probe (no family-wise correction) or with pairs treated as
    independent (no clustering): far above 5%. The test above can fail."""
    uncorrected = false_alarms(60, 12, 0.5, 0.3, seeds=200, alpha=0.05 * len(NAMES))
    unclustered = false_alarms(100, 10, 0.7, 0.4, seeds=200, clustered=False)
    assert uncorrected > 0.10 and unclustered > 0.15, (uncorrected, unclustered)


def test_identity_holds_zero_on_a_deterministic_judge():
    rng = np.random.default_rng(3)
    grades = rng.integers(0, 4, 80).tolist()
    qids = [f"q{i // 5}" for i in range(80)]
    result = analyse({"original": grades, "identity": list(grades)}, qids, probes=["identity"])[0]
    assert result.shift == 0 and result.ci95[0] < 0 < result.ci95[1] and not result.bias
    assert result.changed == 0 and result.floored  # no variation: the variance floor, never a zero-width interval


def test_a_planted_shift_is_found_and_named():
    rng = np.random.default_rng(5)
    grades, qids = simulate(rng, 200, 40, 0.4, 0.1, shift=("length", 1.0))
    results = {r.probe: r for r in analyse(grades, qids, probes=NAMES)}
    assert [p for p, r in results.items() if r.bias] == ["length", "position"]  # position is read against length
    assert results["length"].shift > 0.5 and "grades rise" in results["length"].verdict
    assert results["position"].shift < -0.5


def test_truncation_counts_only_a_rise():
    qids = [f"q{i // 4}" for i in range(40)]
    base = [2] * 40
    fall = analyse({"original": base, "identity": base, "truncation": [1] * 40}, qids, probes=["identity", "truncation"])
    rise = analyse({"original": base, "identity": base, "truncation": [3] * 40}, qids, probes=["identity", "truncation"])
    assert not fall[1].bias and "only a rise is a bias" in fall[1].verdict
    assert rise[1].bias and rise[1].verdict.startswith("bias: grades rise by 1.00")


def test_a_shift_under_min_shift_is_no_bias():
    qids = [f"q{i // 10}" for i in range(400)]
    base = [1] * 400
    moved = [2 if i % 10 == 0 else 1 for i in range(400)]  # +0.1 on every query: certain, and small
    result = analyse({"original": base, "identity": base, "keywords": moved}, qids, probes=["identity", "keywords"])[1]
    assert result.ci95[0] > 0 and not result.bias and "under --min-shift" in result.verdict
    assert analyse({"original": base, "identity": base, "keywords": moved}, qids, probes=["identity", "keywords"],
                   min_shift=0.05)[1].bias


def test_missing_answers_are_left_out_and_counted():
    qids = ["a", "a", "b", "b", "c"]
    grades = {"original": [1, 2, None, 1, 0], "identity": [1, 2, 1, None, 0], "duplication": [2, None, 2, 2, 1]}
    result = analyse(grades, qids, probes=["identity", "duplication"], not_applicable={"duplication": 1})[1]
    assert result.n_pairs == 3 and result.missing == 1 and result.not_applicable == 1


def test_too_few_queries_is_not_measured():
    result = analyse({"original": [1, 1], "identity": [1, 2]}, ["a", "a"], probes=["identity"])[0]
    assert result.shift is None and not result.bias and result.verdict.startswith("not measured")


def _oracle_cr2(x, q, alpha):
    """CR2 with Bell-McCaffrey degrees of freedom from their matrix definitions (Imbens & Kolesár 2016, eq. 7-8),
    for the regression of x on a constant."""
    from scipy import stats

    n = len(x)
    X = np.ones((n, 1))
    H = X @ X.T / n
    e = x - x.mean()
    groups = [np.flatnonzero(np.asarray(q) == g) for g in dict.fromkeys(q)]
    meat, Gs = 0.0, []
    for idx in groups:
        w, V = np.linalg.eigh(np.eye(len(idx)) - H[np.ix_(idx, idx)])
        A = V @ np.diag(w ** -0.5) @ V.T
        meat += float((X[idx].T @ A @ e[idx])[0] ** 2)
        G = np.zeros(n)
        G[idx] = A @ X[idx, 0] / n
        Gs.append((np.eye(n) - H) @ G)
    G = np.array(Gs).T
    lam = np.linalg.eigvalsh(G.T @ G)
    df = lam.sum() ** 2 / (lam ** 2).sum()
    se = meat ** 0.5 / n
    t = stats.t.ppf(1 - alpha / 2, df)
    return x.mean() - t * se, x.mean() + t * se, df


@pytest.mark.parametrize("sizes", [[1] * 12, [3] * 6, [1, 2, 5, 9, 3], [20, 1, 1]])
def test_clustered_interval_matches_its_definition(sizes):
    rng = np.random.default_rng(len(sizes))
    q = [f"g{i}" for i, s in enumerate(sizes) for _ in range(s)]
    x = rng.integers(-2, 3, len(q)).astype(float) + 0.1 * rng.standard_normal(len(q))
    got = clustered_mean(x, q, alpha=0.01)
    lo, hi, df = _oracle_cr2(x, q, 0.01)
    assert got.lo == pytest.approx(lo, rel=1e-9) and got.hi == pytest.approx(hi, rel=1e-9)
    assert got.df == pytest.approx(df, rel=1e-9)
    if len(set(sizes)) == 1:
        assert got.df == pytest.approx(len(sizes) - 1)  # clusters of one size: CR1 with G - 1 degrees of freedom
