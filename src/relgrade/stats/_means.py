"""The interval for a mean of per-query values over queries: ``evaluate``'s aggregates, ``compare``'s paired
differences, ``estimate``'s human-only column.

It is the interval of :mod:`relgrade.stats._augmented` without a judge (``lam = 0``), so the PPI++ interval
at ``lam = 0`` is this one exactly. For values ``x_1..x_n`` in ``[lower, upper]``:

    [mean_c - se g^-1(t), mean_c - se g^-1(-t)],   se = sqrt(v / n),   t = t_{n-1, 1-alpha/2}

* ``v`` is the sample variance (``n - 1`` in the denominator), the quantile Student's t with ``n - 1`` degrees
  of freedom (not the normal ``z``, optimistic below about 30 queries);
* a sample with no variation at all gets one pseudo-observation at the bound farther from the mean in ``v``
  (a variance floor after Wilson and Agresti & Coull): ten queries at nDCG@10 = 1 by luck have ``s^2 = 0``,
  but one further query could sit at the other end. The interval never has zero width;
* a 0/1 metric (every value at ``lower`` or ``upper``: hit rate, success@k, recall with one relevant
  document) gets *plus-two* (Agresti & Coull 1998): one pseudo-observation at each bound in the centre
  ``mean_c = (sum + lower + upper) / (n + 2)`` and in ``v`` (the variance of the n + 2 values). The t
  interval alone has exact minimum coverage 0.82-0.87 at n = 10-30 (e.g. 0.823 at n = 30, p = 0.90), the
  oscillation of the Wald interval (Brown, Cai & DasGupta 2001); plus-two's is 0.946-0.959;
* any other column gets Hall's (1992) skewness correction ``g`` (capped; see
  :mod:`relgrade.stats._augmented`): misses of the plain t interval are lopsided for skewed metrics
  (nDCG@10 near 0.8 at 10 queries drawn with replacement: above the truth 5-6% of the time, below 1-2%);
  ``mean_c`` is the plain mean. A share ``s`` of its values at a bound gets ``s ** PLUS_TWO_POWER`` (10) of plus-two's
  pseudo-observations in ``v`` (not in ``mean_c``): four queries at 0 and one at 0.1 are nearly a 0/1 sample,
  whose t interval misses as the Wald interval does;
* the interval is widened to hold the plain mean and intersected with ``[lower, upper]`` (neither step can
  lose the true value).

The point estimate is the plain mean. Coverage is measured in ``tests/stats/test_coverage.py``: exact
enumeration for 0/1 metrics, simulation (fixed seeds) for graded ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from relgrade.stats._augmented import MEAN_INTERVAL, NONE, at_bounds, rectified_means

__all__ = ["MEAN_INTERVAL", "MeanIntervals", "at_bounds", "mean_intervals", "t_quantile"]


@dataclass(frozen=True)
class MeanIntervals:
    """Column-wise mean and interval bounds; ``constant``: the sample had no variation; ``half``: half the
    width before the interval is widened to hold the mean and intersected with the range."""

    value: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    constant: np.ndarray
    half: np.ndarray
    floored: np.ndarray  # bool per column: the floor or the whole plus-two (a constant or 0/1 column)

    @property
    def width(self) -> np.ndarray:
        return self.hi - self.lo


def t_quantile(n: int, alpha: float) -> float:
    """``t_{n-1, 1 - alpha/2}``: Student's t quantile with ``n - 1`` degrees of freedom (``scipy.special.stdtrit``,
    what ``scipy.stats.t.ppf`` computes, without importing ``scipy.stats``: 0.3 s of a command's start-up)."""
    from scipy.special import stdtrit

    return float(stdtrit(max(n - 1, 1), 1 - alpha / 2))


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
    est = rectified_means(x, alpha=alpha, lower=lower, upper=upper, lam=0.0)
    return MeanIntervals(est.value, est.lo, est.hi, np.ptp(x, axis=0) == 0, est.half, est.kind != NONE)

