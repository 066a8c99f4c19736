"""The query-bootstrap helpers calibration shares: BCa/percentile aggregation, jackknife weights, per-pair replicates."""

from __future__ import annotations

import numpy as np

from relgrade.calibration._results import Agreement


def bca_agreement(value: float, reps: np.ndarray | None, n: int, jack: np.ndarray | None = None) -> Agreement:
    """The statistic with its BCa interval (percentile when no jackknife is given)."""
    from relgrade.stats import bca_ci, percentile_ci

    if reps is None:
        ci = None
    elif jack is None:
        ci = percentile_ci(reps)
    else:
        ci = bca_ci(float(value), reps, jack)
    return Agreement(float(value), with_width(ci), n)


def with_width(ci: tuple[float, float] | None) -> tuple[float, float] | None:
    """The one rule for a statistic that is the same on every resample of queries: no CI (None), never a zero-width
    "0.00 (0.00–0.00)" beside another statistic's "no CI" (issue 36)."""
    return None if ci is None or not ci[1] > ci[0] else ci


def jackknife_weights(n_queries: int) -> np.ndarray:
    """Leave-one-query-out multiplicities ``(Q, Q)``: ``1 - I`` (row i drops query i)."""
    return np.ones((n_queries, n_queries)) - np.eye(n_queries)


class JackknifeRows:
    """:func:`jackknife_weights` without the ``(Q, Q)`` array (800 MB at 10,000 queries): ``shape`` and row slices
    ``[start:stop]``, built when asked (what :func:`pair_stat` reads)."""

    def __init__(self, n_queries: int) -> None:
        self.shape = (n_queries, n_queries)

    def __getitem__(self, rows: slice) -> np.ndarray:
        start, stop, _ = rows.indices(self.shape[0])
        out = np.ones((max(0, stop - start), self.shape[1]))
        out[np.arange(len(out)), np.arange(start, start + len(out))] = 0.0
        return out


def pair_stat(fn, weights_q: np.ndarray, group: np.ndarray, chunk: int = 100) -> np.ndarray:
    """Apply a weighted per-pair statistic over bootstrap replicates, in chunks to bound memory."""
    out = []
    for start in range(0, weights_q.shape[0], chunk):
        out.append(fn(weights_q[start:start + chunk][:, group]))
    return np.concatenate(out) if out else np.empty(0)
