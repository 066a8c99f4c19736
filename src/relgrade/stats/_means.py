"""Intervals for a mean over queries that hold at 10 queries, also for 0/1 metrics near 0 or 1.

One construction for every per-query mean relgrade reports (``evaluate``'s aggregates, ``compare``'s
paired differences, ``estimate``'s human-only interval; the PPI++ interval uses the same pieces, see
:mod:`relgrade.hybrid._ppi`). For values ``x_1..x_n`` known to lie in ``[lower, upper]``:

    mean(x)  +-  t_{n-1, 1-alpha/2} * sqrt(v / n),    v = s^2, or s^2_+ when the sample is constant

* ``s^2`` is the sample variance with ``n - 1`` in the denominator, and the quantile is Student's t with
  ``n - 1`` degrees of freedom (not the normal ``z``, optimistic below about 30 queries);
* ``s^2_+`` is the same variance of the sample *plus one pseudo-observation at the bound farther from the
  mean* (``lower`` if the mean is above the middle of the range, else ``upper``), used when the sample has
  no variation at all (``s^2 = 0``). It is a variance floor
  in the spirit of Wilson's and Agresti & Coull's (1998) intervals for a proportion: a sample that is
  constant by luck (ten queries with recall@5 = 1 when the true share is 0.9) has ``s^2 = 0``, but one
  further query could have sat at the other end. With ``n`` ones it gives ``v = 1 / (n + 1)``, a lower
  bound of about 0.79 at ``n = 10`` (Wilson: 0.72), so the interval never has zero width;
* the interval is intersected with ``[lower, upper]`` (doing so never removes the true value).

The point estimate is the plain mean. The floor applies to constant samples only, so that the PPI++
interval (whose rectifier gets the same floor) and the human-only one are built alike and their width
ratio still measures the judge. Coverage is measured in ``tests/stats/test_coverage.py`` (fixed seeds,
thousands of draws) at n = 10 for 0/1 metrics with true means 0.9-0.99 and 0.01-0.1 and for graded
metrics. For a 0/1 metric the weakest spot is a true mean near 0.78 (or 0.22) at n = 10, where an
all-ones sample (probability about 0.08) falls just outside: about 0.92 there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MeanIntervals:
    """Column-wise mean, interval bounds, and whether the sample was constant (the floor set the width)."""

    value: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    constant: np.ndarray  # bool per column: the sample had no variation
    half: np.ndarray  # half-width before intersecting with [lower, upper]

    @property
    def width(self) -> np.ndarray:
        return self.hi - self.lo


def t_quantile(n: int, alpha: float) -> float:
    """``t_{n-1, 1 - alpha/2}``: Student's t quantile with ``n - 1`` degrees of freedom."""
    from scipy.stats import t

    return float(t.ppf(1 - alpha / 2, max(n - 1, 1)))


def floored_variance(x: np.ndarray, lower: float | np.ndarray, upper: float | np.ndarray) -> np.ndarray:
    """``s^2`` per column of ``x`` (n x m), or ``s^2_+`` where the column is constant (module docstring)."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    mean = x.mean(axis=0)
    s2 = x.var(axis=0, ddof=1) if n > 1 else np.zeros(x.shape[1])
    lower = np.broadcast_to(np.asarray(lower, dtype=np.float64), mean.shape)
    upper = np.broadcast_to(np.asarray(upper, dtype=np.float64), mean.shape)
    far = np.where(mean - lower >= upper - mean, lower, upper)
    # one more value at ``far``: the sum of squares grows by n / (n + 1) * (far - mean)^2, divisor n
    s2_plus = ((n - 1) * s2 + n / (n + 1) * (far - mean) ** 2) / n
    return np.where(np.ptp(x, axis=0) == 0, s2_plus, s2)


def mean_intervals(x, *, alpha: float = 0.05, lower: float = 0.0, upper: float = 1.0) -> MeanIntervals:
    """Mean and ``1 - alpha`` interval of each column of ``x`` (rows = queries; module docstring).

    ``x`` must have at least 2 rows and values within ``[lower, upper]``.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    n = x.shape[0]
    if n < 2:
        raise ValueError(f"an interval needs at least 2 queries, got {n}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    eps = 1e-9 * (upper - lower)
    if (x < lower - eps).any() or (x > upper + eps).any():
        raise ValueError(f"values must lie in [{lower}, {upper}]")
    mean = x.mean(axis=0)
    half = t_quantile(n, alpha) * np.sqrt(floored_variance(x, lower, upper) / n)
    lo = np.clip(mean - half, lower, upper)
    hi = np.clip(mean + half, lower, upper)
    return MeanIntervals(mean, lo, hi, np.ptp(x, axis=0) == 0, half)
