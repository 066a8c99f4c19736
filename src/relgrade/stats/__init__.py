"""Statistics shared by every part of relgrade: the one query bootstrap and the interval for a mean.

* :mod:`relgrade.stats._bootstrap`: cluster (query) bootstrap multiplicities, resampled sums, the
  leave-one-query-out jackknife, percentile and BCa intervals; randomness only through an explicit ``rng``.
* :mod:`relgrade.stats._means`: Student-t interval with a pseudo-observation variance floor for a mean
  of bounded per-query values (never zero width from a lucky sample).
* :mod:`relgrade.stats._repeats`: repeated runs of one configuration: the interval over queries and repeats,
  and the noise allowance between two sets of repeats.
"""

from relgrade.stats._bootstrap import (
    bca_ci, jackknife_se, leave_one_out, percentile_ci, query_indices, query_weights, resample, resample_means,
    studentized_ci,
)
from relgrade.stats._means import MeanIntervals, at_bounds, floored_variance, mean_intervals, t_quantile
from relgrade.stats._repeats import repeat_interval, repeat_noise

__all__ = [
    "MeanIntervals",
    "at_bounds",
    "bca_ci",
    "floored_variance",
    "jackknife_se",
    "leave_one_out",
    "mean_intervals",
    "percentile_ci",
    "query_indices",
    "query_weights",
    "repeat_interval",
    "repeat_noise",
    "resample",
    "resample_means",
    "studentized_ci",
    "t_quantile",
]
