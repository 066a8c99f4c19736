"""Intervals for metric means over queries and paired tests between runs.

Every interval is :func:`relgrade.stats.mean_intervals`: mean +- t_{n-1} * s / sqrt(n), with a variance floor
(one pseudo-observation at the far bound of the range) when the per-query values are all equal, plus-two for
0/1 values (and a share of it in the variance of graded values mostly at a bound: ``relgrade._intervals.PLUS_TWO_POWER``)
and Hall's skewness correction for graded ones, intersected with the range ([0, 1] for a metric,
[-1, 1] for a difference of two). It replaced the percentile bootstrap,
which had zero width on a constant sample and covered 0/1 metrics near 0 or 1 far below 95% at 10 queries
(issue 14); coverage is measured in ``tests/stats/test_coverage.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Estimate:
    """A mean over queries with its 95% interval (``ci95`` None when n < 2; see the module docstring) and the name
    of the interval's construction (:mod:`relgrade._intervals`: Student t, or plus-two for a 0/1 metric)."""

    value: float
    ci95: tuple[float, float] | None
    n: int
    interval: str | None = None

    def to_dict(self) -> dict:
        return {"value": self.value, "ci95": None if self.ci95 is None else list(self.ci95), "n_queries": self.n,
                "interval": self.interval}


def bootstrap_means(values: np.ndarray, *, n_boot: int = 1000, rng: np.random.Generator) -> np.ndarray:
    """Means of ``values`` (n_queries × n_metrics) over ``n_boot`` query resamples (relgrade.stats)."""
    from relgrade.stats import resample_means

    return resample_means(values, n_boot=n_boot, rng=rng)


def estimates(values: dict[str, np.ndarray], *, n_boot: int = 1000, seed: int = 0, ci: bool = True,
              alpha: float = 0.05) -> dict[str, Estimate]:
    """Mean and ``1 - alpha`` interval (module docstring) of each metric's per-query values in [0, 1].

    ``n_boot`` and ``seed`` are accepted for compatibility and unused: the interval is analytic, the same on
    every run; ``n_boot=0`` or ``ci=False`` still turns intervals off.
    """
    from relgrade._intervals import mean_ci
    from relgrade.stats import at_bounds, mean_intervals

    names = list(values)
    if not names:
        return {}
    matrix = np.column_stack([values[name] for name in names])
    n = matrix.shape[0]
    means = matrix.mean(axis=0) if n else np.full(len(names), np.nan)
    if not ci or n < 2 or n_boot < 1:
        return {name: Estimate(float(means[j]), None, n) for j, name in enumerate(names)}
    est = mean_intervals(matrix, alpha=alpha, lower=0.0, upper=1.0)
    binary = at_bounds(matrix, 0.0, 1.0)
    return {name: Estimate(float(means[j]), (float(est.lo[j]), float(est.hi[j])), n, mean_ci(bool(binary[j])).name)
            for j, name in enumerate(names)}


@dataclass(frozen=True)
class Difference:
    """``b - a`` averaged over shared queries, its 95% interval (module docstring) and a paired randomisation p-value."""

    a: float
    b: float
    diff: float
    ci95: tuple[float, float] | None
    p_value: float
    n: int
    interval: str | None = None  # the construction's name (relgrade._intervals)

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "diff": self.diff, "ci95": None if self.ci95 is None else list(self.ci95),
                "interval": self.interval, "p_value": self.p_value, "n_queries": self.n}


def paired_difference(a: np.ndarray, b: np.ndarray, *, n_boot: int = 1000, n_perm: int = 10000, seed: int = 0) -> Difference:
    """Paired comparison of two per-query arrays (same queries, same order), values in [0, 1].

    Interval: :func:`relgrade.stats.mean_intervals` of ``d = b - a`` on [-1, 1] (``n_boot`` only switches it
    off at 0).

    p-value: randomisation (sign-flip) test of the mean difference (Smucker, Allan & Carterette 2007),
    ``(1 + #{|mean(s*d)| >= |mean(d)|}) / (1 + n_perm)``.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    d = b - a
    n = len(d)
    rng = np.random.default_rng(seed)
    if n == 0:
        return Difference(float("nan"), float("nan"), float("nan"), None, float("nan"), 0)
    observed = abs(d.mean())
    ci = interval = None
    if n >= 2 and n_boot >= 1:
        from relgrade._intervals import mean_ci
        from relgrade.stats import at_bounds, mean_intervals

        est = mean_intervals(d, lower=-1.0, upper=1.0)
        ci = (float(est.lo[0]), float(est.hi[0]))
        interval = mean_ci(bool(at_bounds(d, -1.0, 1.0)[0])).name
    if not d.any():
        p = 1.0
    else:
        extreme = 0
        chunk = max(1, min(n_perm, 2_000_000 // n))
        for start in range(0, n_perm, chunk):
            size = min(chunk, n_perm - start)
            signs = rng.integers(0, 2, size=(size, n), dtype=np.int8) * 2 - 1
            extreme += int((np.abs(signs @ d / n) >= observed - 1e-12).sum())
        p = (1 + extreme) / (1 + n_perm)
    return Difference(float(a.mean()), float(b.mean()), float(d.mean()), ci, float(p), n, interval)


def paired_differences(A: np.ndarray, B: np.ndarray, *, n_boot: int = 1000, n_perm: int = 10000,
                       seed: int = 0) -> list[Difference]:
    """:func:`paired_difference` of each column pair ``(A[:, k], B[:, k])``, the same numbers: with one seed every
    column flips the same signs, so they are drawn once for all columns (``rank-systems``: every pair of systems)."""
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    n, k = A.shape
    if n == 0 or k == 0:
        return [paired_difference(A[:, c], B[:, c], n_boot=n_boot, n_perm=n_perm, seed=seed) for c in range(k)]
    D = B - A
    observed = np.abs(D.mean(axis=0))
    extreme = np.zeros(k, dtype=np.int64)
    moves = D.any(axis=0)
    if moves.any():
        rng = np.random.default_rng(seed)
        chunk = max(1, min(n_perm, 2_000_000 // n))
        for start in range(0, n_perm, chunk):
            size = min(chunk, n_perm - start)
            signs = rng.integers(0, 2, size=(size, n), dtype=np.int8) * 2 - 1
            extreme += (np.abs(signs @ D / n) >= observed - 1e-12).sum(axis=0)
    out = []
    for c in range(k):
        one = paired_difference(A[:, c], B[:, c], n_boot=n_boot, n_perm=0, seed=seed)  # the interval; p below
        p = float((1 + extreme[c]) / (1 + n_perm)) if moves[c] else 1.0
        out.append(Difference(one.a, one.b, one.diff, one.ci95, p, one.n, one.interval))
    return out
