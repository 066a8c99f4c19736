"""Coverage of the PPI++ interval (relgrade.stats._augmented) at 5-30 labeled queries, judges from useless to
perfect: exact enumeration for 0/1 metrics, simulation for graded ones (issue 29).

0/1 metric: the labeled (human, judge) pairs are multinomial over the four cells and the unlabeled judge values
binomial, so the coverage at a true mean p is a finite sum over every sample the interval can see. Graded
metrics: queries drawn with replacement from a large population (the truth is its mean), fixed seeds. The
printed numbers are what README's PPI paragraph quotes (``python -m pytest -s tests/stats/test_ppi_coverage.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom, multinomial

from relgrade.hybrid import human_only_means, ppi_means

P_GRID = np.linspace(0.02, 0.98, 25)
# P(judge 1 | human 0), P(judge 0 | human 1); "useless": independent of the human value, same mean
JUDGES_01 = {"useless": None, "medium": (0.2, 0.2), "good": (0.05, 0.05), "perfect": (0.0, 0.0),
             "lenient": (0.3, 0.02)}


def _cells(p: float, judge) -> np.ndarray:
    if judge is None:
        return np.array([(1 - p) ** 2, (1 - p) * p, p * (1 - p), p * p])
    f0, f1 = judge
    return np.array([(1 - p) * (1 - f0), (1 - p) * f0, p * f1, p * (1 - f1)])


def _samples(n: int):
    """Every labeled sample of n (human, judge) pairs, as counts of the cells 00, 01, 10, 11 and as columns."""
    counts = np.array([(a, b, c, n - a - b - c) for a in range(n + 1) for b in range(n + 1 - a)
                       for c in range(n + 1 - a - b)])
    Y, Yh = np.zeros((n, len(counts))), np.zeros((n, len(counts)))
    for j, cnt in enumerate(counts):
        Y[:, j] = np.repeat([0, 0, 1, 1], cnt)
        Yh[:, j] = np.repeat([0, 1, 0, 1], cnt)
    return counts, Y, Yh


@pytest.mark.parametrize("n", [5, 10, 15, 30])
def test_ppi_interval_of_a_01_metric_has_exact_coverage_at_every_true_mean(n):
    N = 3 * n
    counts, Y, Yh = _samples(n)
    human = human_only_means(Y)
    by_u = []
    for u in range(N + 1):  # the interval depends on the unlabeled judge values through their count only
        Yu = np.zeros((N, len(counts)))
        Yu[:u] = 1
        by_u.append(ppi_means(Y, Yh, Yu))
    for name, judge in JUDGES_01.items():
        cov, ratios = [], []
        for p in P_GRID:
            cells = _cells(p, judge)
            pmf = multinomial.pmf(counts, n, cells)
            pu = binom.pmf(np.arange(N + 1), N, cells[1] + cells[3])
            held = sum(w * (pmf * ((e.lo <= p) & (p <= e.hi))).sum() for w, e in zip(pu, by_u))
            cov.append(held)
            ratios.append(sum(w * (pmf * e.width).sum() for w, e in zip(pu, by_u)) / (pmf * human.width).sum())
        worst = int(np.argmin(cov))
        print(f"0/1 metric n={n} judge={name}: exact PPI coverage min {cov[worst]:.3f} at p={P_GRID[worst]:.2f}, "
              f"mean width ratio {np.mean(ratios):.3f} (at most {max(ratios):.3f})")
        assert min(cov) >= (0.93 if n == 5 else 0.94)
        # issue 35: widths as shown, narrower on average for a judge with information from 10 labeled queries; a
        # judge with none costs a little (lam is not chosen by looking at the interval it makes), and at 5 the degree
        # of freedom lam's tuning spends costs a 0/1 judge of medium quality up to 4% (measured 1.029-1.039)
        if n == 5:
            assert np.mean(ratios) <= 1.05
        elif name == "useless":
            assert np.mean(ratios) <= 1.02
        else:
            assert np.mean(ratios) < 0.97
    for e in by_u:
        assert (e.width > 0).all()


def _world(kind: str, rng, size: int) -> np.ndarray:
    u = rng.random(size)
    if kind == "middle":  # nDCG-like: 30% at 1, 20% at 0, the rest Beta(2, 2)
        return np.where(u < 0.3, 1.0, np.where(u < 0.5, 0.0, rng.beta(2, 2, size)))
    if kind == "near 0":  # 40% at 0, the rest Beta(1, 3): mean 0.15
        return np.where(u < 0.4, 0.0, rng.beta(1, 3, size))
    if kind == "near 1":
        return np.where(u < 0.4, 1.0, rng.beta(3, 1, size))
    ranks = rng.geometric(0.3, size)  # MRR: first relevant document at a geometric rank, 0 past 10
    return np.where(ranks > 10, 0.0, 1.0 / ranks)


def _judge(kind: str, y: np.ndarray, world: str, rng) -> np.ndarray:
    if kind == "useless":
        return _world(world, rng, y.size)
    if kind == "agrees 95%":  # exactly the human value on 95% of queries, an independent draw elsewhere
        return np.where(rng.random(y.size) < 0.95, y, _world(world, rng, y.size))
    noise, bias = {"medium": (0.2, 0.0), "good": (0.05, 0.0), "biased": (0.1, 0.15)}[kind]
    return np.clip(y + bias + rng.normal(0, noise, y.size), 0, 1)


@pytest.mark.parametrize("n", [5, 10, 30])
@pytest.mark.parametrize("world", ["middle", "near 0", "near 1", "mrr"])
def test_ppi_and_human_only_cover_graded_metrics_drawn_with_replacement(world, n):
    """Measured (2000 draws, SE 0.005-0.007): PPI and human-only 0.939 or more in every world at every n; with 40%
    of the queries at one bound, PPI 0.939-0.961 and human-only 0.943-0.961 at 5, 0.943-0.962 at 10, 0.940-0.969
    at 30; in the middle and for MRR 0.943-0.981.

    Before (issue 29): near a bound 0.90-0.92 at 5 and 0.93-0.95 at 10, PPI and human-only alike. The misses were
    the draws whose labeled sample is mostly values at the bound: the Wald failure of a binomial near 0 or 1
    (such a sample shows a small variance), which the PPI interval inherits where such a sample tunes lam to
    0. The fix at that cause (relgrade.stats._augmented): a column with a share s of its values at a bound gets
    s ** 10 of the plus-two pseudo-rows in its variance, so a sample that is nearly 0/1 gets nearly plus-two's
    interval; mean human-only widths near a bound +3% at 5 and +0.6% at 10, +0.0-0.3% in the middle and MRR
    worlds. Tried before and not the cause (4,000 draws): a full degree of freedom for the slope, the slope's
    error term, the centre's O(1/n) bias; Hall's skewness cap raised to 1.0 covered 0.94-0.96 at 5 but made
    the intervals at 10 40% wider."""
    rng = np.random.default_rng(len(world) * 100 + n)
    reps, pop = 2000, 100_000
    y = _world(world, rng, pop)
    truth = y.mean()
    for judge in ("useless", "medium", "good", "biased", "agrees 95%"):
        yh = _judge(judge, y, world, rng)
        i, iu = rng.integers(0, pop, (n, reps)), rng.integers(0, pop, (3 * n, reps))
        ppi, human = ppi_means(y[i], yh[i], yh[iu]), human_only_means(y[i])
        cp, ch = (float(np.mean((e.lo <= truth) & (truth <= e.hi))) for e in (ppi, human))
        held, zero = (ppi.lo <= truth) & (truth <= ppi.hi), ppi.lam == 0
        print(f"graded {world} n={n} judge={judge}: PPI coverage {cp:.3f}, human-only {ch:.3f}, misses "
              f"{np.mean(ppi.lo > truth):.3f} above / {np.mean(ppi.hi < truth):.3f} below, width ratio "
              f"{ppi.width.mean() / human.width.mean():.2f}; lam = 0 in {zero.mean():.3f} of the draws, "
              f"covering {held[zero].mean() if zero.any() else float('nan'):.3f} there, "
              f"{held[~zero].mean() if (~zero).any() else float('nan'):.3f} elsewhere")
        near_bound = world in ("near 0", "near 1")  # 40% of the queries at one bound: heavy skew
        floor = 0.92 if near_bound and n == 5 else 0.93  # targets 0.93 at n = 5, 0.94 from 10
        assert cp >= floor and ch >= floor  # 2000 draws: standard error 0.005-0.007
        assert cp >= ch - 0.025  # the judge costs little coverage where the humans alone barely hold
        ratio = ppi.width.mean() / human.width.mean()  # issue 35: narrower on average (as shown), not per sample
        assert ratio <= (1.06 if judge == "useless" else 0.9)


@pytest.mark.parametrize("n", [10, 30])
def test_ppi_covers_when_the_judge_labels_fifty_times_the_queries(n):
    """issue 35, where users live: 10-30 labeled queries and 50 times as many judged (both drawn with replacement).
    Measured (2000 draws): 0.935-0.988 for every judge in the middle and MRR worlds and for the good, biased and
    95%-agreeing judges near a bound; the medium judge (noise 0.2 on the truth, clipped to [0, 1]: a prediction
    whose slope is 0.64, with a point mass at the bound) covers 0.92-0.94 near a bound, and the useless one
    0.935-0.954 (human-only 0.95-0.96). The human-only interval there relies on Hall's correction and the
    plus-two share; the rectified values have a point mass that ten queries rarely show. The README's Limits
    quote these; on TREC DL 2020 with LLM-like judges (benchmarks/ppi_trec_dl.py --grid) PPI covers 0.94 or more."""
    rng = np.random.default_rng(7 * n)
    reps, pop = 2000, 100_000
    for world in ("middle", "near 0", "near 1", "mrr"):
        y = _world(world, rng, pop)
        truth = y.mean()
        for judge in ("useless", "medium", "good", "biased", "agrees 95%"):
            yh = _judge(judge, y, world, rng)
            i, iu = rng.integers(0, pop, (n, reps)), rng.integers(0, pop, (50 * n, reps))
            ppi, human = ppi_means(y[i], yh[i], yh[iu]), human_only_means(y[i])
            cp = float(np.mean((ppi.lo <= truth) & (truth <= ppi.hi)))
            above, below = float(np.mean(ppi.lo > truth)), float(np.mean(ppi.hi < truth))
            ratio = ppi.width.mean() / human.width.mean()
            print(f"N = 50n: {world} n={n} judge={judge}: PPI coverage {cp:.3f} (misses {above:.3f} above, {below:.3f} "
                  f"below), width ratio {ratio:.2f}, wider on {np.mean(ppi.width > human.width + 1e-12):.1%}")
            hard = judge in ("medium", "useless") and world != "middle"
            assert cp >= (0.915 if hard else 0.93)
            assert ratio <= (1.03 if judge == "useless" else 0.9)


def test_skewness_correction_balances_the_misses_of_a_skewed_metric():
    """issue 29: nDCG@10 at 10 queries drawn with replacement missed above the truth 5.1-5.4% of the time and
    below 1.8-2.2% (t interval). Here a left-skewed nDCG-like metric (mean about 0.8)."""
    rng = np.random.default_rng(5)
    pop = np.where(rng.random(200_000) < 0.55, 1.0, rng.beta(2.5, 1.5, 200_000))
    truth = pop.mean()
    sample = pop[rng.integers(0, pop.size, (10, 4000))]
    est = human_only_means(sample)
    above, below = float(np.mean(est.lo > truth)), float(np.mean(est.hi < truth))
    t_half = 2.262 * sample.std(axis=0, ddof=1) / np.sqrt(10)
    t_above = float(np.mean(sample.mean(axis=0) - t_half > truth))
    print(f"skewed metric n=10: misses above {above:.3f}, below {below:.3f} (t interval: above {t_above:.3f})")
    assert above < t_above / 2 and 1 - above - below >= 0.94
