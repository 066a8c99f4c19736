"""Statistics shared by every part of relgrade: the one query bootstrap and the interval for a mean.

* :mod:`relgrade.stats._bootstrap`: cluster (query) bootstrap multiplicities, resampled sums, the
  leave-one-query-out jackknife, percentile and BCa intervals; randomness only through an explicit ``rng``.
* :mod:`relgrade.stats._augmented`: the one interval for a mean over queries, with or without a judge
  (PPI++): pseudo-rows (plus-two, variance floor), Student t, Hall's skewness correction, lam tuned with
  the small-sample corrections in view; :mod:`relgrade.stats._means` is its human-only face.
* :mod:`relgrade.stats._clustered`: the mean over items in clusters (``audit``'s grade shifts over pairs, clustered
  by query): the cluster-robust (CR1) Student t interval.
* :mod:`relgrade.stats._repeats`: repeated runs of one configuration: the interval over queries and repeats,
  and the noise allowance between two sets of repeats.
"""

from relgrade.stats._bootstrap import (
    bca_ci, index_blocks, jackknife_se, leave_one_out, percentile_ci, query_indices, query_weights, resample,
    resample_means,
    studentized_ci,
)
from relgrade.stats._augmented import MEAN_INTERVAL, PPI_INTERVAL, Rectified, rectified_means
from relgrade.stats._clustered import ClusteredMean, clustered_mean
from relgrade.stats._means import MeanIntervals, at_bounds, mean_intervals, t_quantile
from relgrade.stats._repeats import repeat_interval, repeat_noise

__all__ = [
    "ClusteredMean",
    "MEAN_INTERVAL",
    "MeanIntervals",
    "PPI_INTERVAL",
    "Rectified",
    "at_bounds",
    "bca_ci",
    "index_blocks",
    "clustered_mean",
    "jackknife_se",
    "leave_one_out",
    "mean_intervals",
    "percentile_ci",
    "query_indices",
    "query_weights",
    "rectified_means",
    "repeat_interval",
    "repeat_noise",
    "resample",
    "resample_means",
    "studentized_ci",
    "t_quantile",
]
