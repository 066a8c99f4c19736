"""Repeated runs of one configuration (ANN searches, sampled rerankers, seeds): the interval of their mean and the
noise between two sets of repeats.

Notation: ``x[q, r]`` is a metric of query ``q`` (n queries) in repeat ``r`` (R repeats), ``m_r = mean_q x[q, r]``
the repeat's mean, ``xbar_q = mean_r x[q, r]`` the query's mean over repeats.

* :func:`repeat_interval`: the interval for the configuration's expected metric, over queries *and* over the
  retrieval's randomness. Two parts, combined in quadrature on each side of the mean::

      h_q = the interval of relgrade.stats.mean_intervals over the n values xbar_q (query-to-query variation)
      h_r = t_{R-1, 1-alpha/2} * sd(m_1..m_R) / sqrt(R)                       (repeat-to-repeat variation)
      [mean - sqrt(lo_part^2 + h_r^2), mean + sqrt(hi_part^2 + h_r^2)]  intersected with [lower, upper]

  ``h_q`` alone misses a random effect that all queries of one repeat share (an index built with another
  seed shifts every query alike: it does not vary between queries, so the spread of ``xbar_q`` cannot see
  it); ``h_r`` measures it from the spread of the repeat means. With identical repeats ``h_r = 0`` and the
  interval is exactly the single-run one. Coverage at 10 queries and 3 repeats, with and without a shared
  effect, is simulated in ``tests/stats/test_repeats.py``.
* :func:`repeat_noise`: the half-width of the ``1 - alpha`` Welch t interval of ``mean(b) - mean(a)`` from two
  sets of repeat means of the same queries (Welch 1947, Satterthwaite degrees of freedom). Two sets of repeats
  of an unchanged configuration differ by less than this in ``1 - alpha`` of builds, which is the allowance
  ``relgrade gate`` adds to ``--max-drop`` so that repeat noise alone does not fail a build. With a single
  run on one side, that side's variance is taken from the other side; with single runs on both, 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from relgrade.stats._means import mean_intervals, t_quantile


def repeat_interval(x, *, alpha: float = 0.05, lower: float = 0.0, upper: float = 1.0) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` of the n x R matrix ``x`` (rows = queries, columns = repeats; module docstring)."""
    x = np.asarray(x, dtype=np.float64)
    n, reps = x.shape
    per_query = x.mean(axis=1)
    q = mean_intervals(per_query, alpha=alpha, lower=lower, upper=upper)
    mean = float(per_query.mean())
    h_r = 0.0
    if reps >= 2:
        h_r = t_quantile(reps, alpha) * float(x.mean(axis=0).std(ddof=1)) / np.sqrt(reps)
    lo = mean - float(np.hypot(mean - q.lo[0], h_r))
    hi = mean + float(np.hypot(q.hi[0] - mean, h_r))
    return mean, max(lower, lo), min(upper, hi)


def repeat_noise(a: Sequence[float], b: Sequence[float], *, alpha: float = 0.05) -> float:
    """Half-width of the Welch t interval of ``mean(b) - mean(a)`` (module docstring); 0 without any repeats."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(a) < 2 and len(b) < 2:
        return 0.0
    va = a.var(ddof=1) if len(a) >= 2 else b.var(ddof=1)
    vb = b.var(ddof=1) if len(b) >= 2 else a.var(ddof=1)
    sa, sb = va / len(a), vb / len(b)
    if sa + sb == 0:
        return 0.0
    if len(a) >= 2 and len(b) >= 2:
        df = (sa + sb) ** 2 / (sa ** 2 / (len(a) - 1) + sb ** 2 / (len(b) - 1))
    else:  # one variance estimate serves both sides: its own degrees of freedom
        df = max(len(a), len(b)) - 1
    from scipy.stats import t

    return float(t.ppf(1 - alpha / 2, df) * np.sqrt(sa + sb))


__all__ = ["repeat_interval", "repeat_noise"]
