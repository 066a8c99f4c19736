"""Intervals for a mean over queries that hold at 10 queries, also for 0/1 metrics near 0 or 1.

One construction for every per-query mean relgrade reports (``evaluate``'s aggregates, ``compare``'s
paired differences, ``estimate``'s human-only interval; the PPI++ interval uses the same pieces, see
:mod:`relgrade.hybrid._ppi`). For values ``x_1..x_n`` known to lie in ``[lower, upper]``:

    mean(x)  +-  t_{n-1, 1-alpha/2} * sqrt(v / n),    v = s^2, or s^2_+ when the sample is constant

* ``s^2`` is the sample variance with ``n - 1`` in the denominator, and the quantile is Student's t with
  ``n - 1`` degrees of freedom (not the normal ``z``, optimistic below about 30 queries);
* ``s^2_+`` is the same variance of the sample *plus one pseudo-observation at the bound farther from the
  mean* (``lower`` if the mean is above the middle of the range, else ``upper``), used when the sample has
  no variation at all (``s^2 = 0``). It is a variance floor in the spirit of Wilson's and Agresti &
  Coull's (1998) intervals for a proportion: a graded sample that is constant by luck (ten queries with
  nDCG@10 = 1 when some queries score less) has ``s^2 = 0``, but one further query could have sat at the
  other end. The interval never has zero width;
* for a 0/1 metric (every value at ``lower`` or ``upper``: hit rate, success@k, recall with one relevant
  document) the t interval above undercovers at every n users have, not only for constant samples: exact
  binomial coverage of ``mean +- t s / sqrt(n)`` has minima of 0.82-0.87 at n = 10-30 (e.g. 0.823 at
  n = 30, p = 0.90), the oscillation of the Wald interval (Brown, Cai & DasGupta 2001). Such columns get
  the *plus-two* adjustment instead, after Agresti & Coull (1998): one pseudo-observation at each bound,
  ``centre = (sum + lower + upper) / (n + 2)``, ``v`` = the variance (ddof 1) of the n + 2 values, half-width
  ``t_{n-1} sqrt(v / n)``; the interval is widened to hold the plain mean if it did not. Its exact minimum
  coverage over p in [0.5, 0.999] is 0.946-0.959 at n = 10-30 (``tests/stats/test_coverage.py`` enumerates it);
* the interval is intersected with ``[lower, upper]`` (doing so never removes the true value).

The point estimate is the plain mean. The floor applies to constant graded samples only, so that the
PPI++ interval (whose rectifier gets the same floor) and the human-only one are built alike and their
width ratio still measures the judge. Coverage is measured in ``tests/stats/test_coverage.py``: exact
enumeration for 0/1 metrics at n = 10-30, simulation (fixed seeds, thousands of draws) for graded ones.
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
    """``t_{n-1, 1 - alpha/2}``: Student's t quantile with ``n - 1`` degrees of freedom (``scipy.special.stdtrit``,
    what ``scipy.stats.t.ppf`` computes, without importing ``scipy.stats``: 0.3 s of a command's start-up)."""
    from scipy.special import stdtrit

    return float(stdtrit(max(n - 1, 1), 1 - alpha / 2))


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


def at_bounds(x, lower: float, upper: float) -> np.ndarray:
    """Per column of ``x`` (rows = queries): every value is ``lower`` or ``upper`` (a 0/1 metric, up to
    rounding), the columns that get plus-two. An empty column counts as at the bounds."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    eps = 1e-9 * (upper - lower)
    return (np.isclose(x, lower, rtol=0, atol=eps) | np.isclose(x, upper, rtol=0, atol=eps)).all(axis=0)


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
    t = t_quantile(n, alpha)
    half = t * np.sqrt(floored_variance(x, lower, upper) / n)
    centre = mean
    binary = at_bounds(x, lower, upper)
    if binary.any():  # 0/1 values: one pseudo-observation at each bound (plus-two, after Agresti & Coull)
        plus = np.vstack([x, np.full((1, x.shape[1]), lower), np.full((1, x.shape[1]), upper)])
        centre = np.where(binary, plus.mean(axis=0), mean)
        half = np.where(binary, t * np.sqrt(plus.var(axis=0, ddof=1) / n), half)
    lo = np.clip(np.minimum(centre - half, mean), lower, upper)  # the plain mean always inside
    hi = np.clip(np.maximum(centre + half, mean), lower, upper)
    return MeanIntervals(mean, lo, hi, np.ptp(x, axis=0) == 0, half)
