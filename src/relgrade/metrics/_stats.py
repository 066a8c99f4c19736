"""Bootstrap intervals over queries and paired tests between runs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Estimate:
    """A mean over queries with its 95% percentile-bootstrap interval (``ci95`` None when n < 2)."""

    value: float
    ci95: tuple[float, float] | None
    n: int

    def to_dict(self) -> dict:
        return {"value": self.value, "ci95": None if self.ci95 is None else list(self.ci95), "n_queries": self.n}


def bootstrap_means(values: np.ndarray, *, n_boot: int = 1000, rng: np.random.Generator) -> np.ndarray:
    """Means of ``values`` (n_queries × n_metrics) over ``n_boot`` resamples of queries: (n_boot × n_metrics).

    Every metric sees the same resampled queries, so the intervals are mutually consistent.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    n, m = values.shape
    out = np.empty((n_boot, m))
    chunk = max(1, min(n_boot, 4_000_000 // max(n, 1)))
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        for j in range(m):
            out[start:stop, j] = values[idx, j].mean(axis=1)
    return out


def estimates(values: dict[str, np.ndarray], *, n_boot: int = 1000, seed: int = 0, ci: bool = True) -> dict[str, Estimate]:
    """Mean and 95% percentile-bootstrap CI (resampling queries, explicit seed) for each metric."""
    names = list(values)
    if not names:
        return {}
    matrix = np.column_stack([values[name] for name in names])
    n = matrix.shape[0]
    means = matrix.mean(axis=0) if n else np.full(len(names), np.nan)
    if not ci or n < 2 or n_boot < 1:
        return {name: Estimate(float(means[j]), None, n) for j, name in enumerate(names)}
    boots = bootstrap_means(matrix, n_boot=n_boot, rng=np.random.default_rng(seed))
    lo, hi = np.percentile(boots, [2.5, 97.5], axis=0)
    return {name: Estimate(float(means[j]), (float(lo[j]), float(hi[j])), n) for j, name in enumerate(names)}


@dataclass(frozen=True)
class Difference:
    """``b - a`` averaged over shared queries, its bootstrap CI and a two-sided paired randomisation p-value."""

    a: float
    b: float
    diff: float
    ci95: tuple[float, float] | None
    p_value: float
    n: int

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "diff": self.diff, "ci95": None if self.ci95 is None else list(self.ci95),
                "p_value": self.p_value, "n_queries": self.n}


def paired_difference(a: np.ndarray, b: np.ndarray, *, n_boot: int = 1000, n_perm: int = 10000, seed: int = 0) -> Difference:
    """Paired comparison of two per-query arrays (same queries, same order).

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
    ci = None
    if n >= 2:
        boots = bootstrap_means(d, n_boot=n_boot, rng=rng)[:, 0]
        lo, hi = np.percentile(boots, [2.5, 97.5])
        ci = (float(lo), float(hi))
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
    return Difference(float(a.mean()), float(b.mean()), float(d.mean()), ci, float(p), n)
