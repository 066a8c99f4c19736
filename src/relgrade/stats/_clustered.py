"""The interval for a mean over items that come in clusters: ``audit``'s mean grade shift over pairs, clustered by
query.

For values ``x_i`` (one per pair) in clusters ``g`` (queries) of sizes ``n_g``, ``N`` values in ``G`` clusters, with
``S_g = sum_{i in g} (x_i - mean)`` and ``c_g = n_g / N``:

    mean = sum x_i / N,    se^2 = sum_g S_g^2 / (1 - c_g) / N^2,    [mean - t_{df, 1-alpha/2} se,  mean + t se]

the cluster-robust variance with the bias-reduced linearisation CR2 of Bell & McCaffrey (2002) (for a mean, each
cluster's residual sum is scaled by ``(1 - c_g)^(-1/2)``), and their Satterthwaite degrees of freedom,

    df = tr(C)^2 / tr(C^2),    C = diag(n_g / ((1 - c_g) N^2)) - s s' / N,    s_g = n_g (1 - c_g)^(-1/2) / N

(Imbens & Kolesár 2016, "Robust standard errors in small samples"; Pustejovsky & Tipton 2018). With clusters of one
size both reduce to the plain CR1 sandwich with ``G - 1`` degrees of freedom (Cameron & Miller 2015); with one pair
per query, to Student's t interval over pairs. Pairs of one query share the query's difficulty and the judge's
reading of its intent, so their shifts are correlated: treating them as independent makes the interval too
narrow. With few or unequal clusters CR1 with ``G - 1`` degrees of freedom is still too narrow in the far tails an
audit reads (each of K probes at ``alpha / K``): on the simulated fair judges of ``tests/audit/test_stats.py`` (4-40
queries of unequal sizes, 500 seeds each) it flagged 0.6-5.8% of audits falsely over six probes, CR2 with these
degrees of freedom 0.6-4.4%.

A sample whose cluster sums all vanish (every pair shifted by the same amount, or every value equal) would get a
zero-width interval: as :func:`relgrade.stats.mean_intervals` does, its variance gets one pseudo-observation, a
cluster of its own at the bound farther from the mean, so the interval never has zero width (three pairs that
all moved one grade up are not proof of a bias). The interval is intersected with ``[lower, upper]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ClusteredMean", "clustered_mean"]


@dataclass(frozen=True)
class ClusteredMean:
    """A mean over items with its clustered interval; ``df``: the t quantile's degrees of freedom; ``floored``: the
    variance had the pseudo-observation."""

    value: float
    lo: float
    hi: float
    se: float
    n: int
    clusters: int
    df: float
    floored: bool = False


def _cr2(x: np.ndarray, codes: np.ndarray, n_clusters: int) -> tuple[float, float, float]:
    """``(mean, CR2 standard error, Bell-McCaffrey degrees of freedom)`` of ``x`` clustered by ``codes``."""
    n = len(x)
    mean = float(x.mean())
    sums = np.bincount(codes, weights=x - mean, minlength=n_clusters)
    size = np.bincount(codes, minlength=n_clusters).astype(np.float64)
    keep = 1 - size / n
    var = float((sums ** 2 / keep).sum()) / n ** 2
    d = size / (keep * n ** 2)
    s2 = size ** 2 / keep / n ** 2
    tr = d.sum() - s2.sum() / n
    tr2 = (d ** 2).sum() - 2 * (d * s2).sum() / n + (s2.sum() / n) ** 2
    return mean, var ** 0.5, float(tr ** 2 / tr2)


def clustered_mean(values, clusters: Sequence, *, alpha: float = 0.05, lower: float = -np.inf,
                   upper: float = np.inf) -> ClusteredMean:
    """The mean of ``values`` and its ``1 - alpha`` interval clustered by ``clusters`` (one label per value; module
    docstring). At least 2 clusters; ``lower``/``upper`` bound the values (and the floor's pseudo-observation)."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or len(x) != len(clusters):
        raise ValueError(f"values and clusters must be 1-d of one length, got {x.shape} and {len(clusters)}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not np.isfinite(x).all():
        raise ValueError("values must be finite")
    index: dict = {}
    codes = np.fromiter((index.setdefault(c, len(index)) for c in clusters), dtype=np.intp, count=len(x))
    n_clusters = len(index)
    if n_clusters < 2:
        raise ValueError(f"a clustered interval needs at least 2 clusters, got {n_clusters}")
    mean, se, df = _cr2(x, codes, n_clusters)
    floored = not se > 1e-12
    if floored:
        bound = lower if abs(mean - lower) >= abs(upper - mean) else upper
        if not np.isfinite(bound):
            raise ValueError("a constant sample needs finite lower and upper bounds for its variance floor")
        _, se, df = _cr2(np.append(x, bound), np.append(codes, n_clusters), n_clusters + 1)
    from scipy.special import stdtrit  # what scipy.stats.t.ppf computes, without importing scipy.stats

    t = float(stdtrit(df, 1 - alpha / 2))
    lo, hi = max(lower, mean - t * se), min(upper, mean + t * se)
    return ClusteredMean(mean, float(lo), float(hi), float(se), len(x), n_clusters, df, floored)
