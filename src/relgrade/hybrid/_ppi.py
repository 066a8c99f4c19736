"""Prediction-powered means over queries (PPI++, Angelopoulos, Duchi & Zrnic 2023) that hold at 5-30 labeled queries.

The units are queries. For one metric, ``Y`` holds its per-query values under human labels on the ``n``
human-labeled queries, ``Yhat`` the judge's predictions of them on the same queries and ``Yhat_unlabeled``
on the ``N`` other queries. The estimate is ppi-python's ``ppi_mean_pointestimate(Y, Yhat, Yhat_unlabeled,
lam=lam)``; the interval and the choice of ``lam`` are :mod:`relgrade.stats._augmented`'s:

* the labeled rows are augmented with the pseudo-rows of the human-only interval (plus-two for a 0/1 metric,
  as half a pseudo-query in each (human, judge) cell, and ``s ** PLUS_TWO_POWER`` of it for a graded metric with a share
  ``s`` of its values at a bound; a far-bound row with a neutral judge value for a constant graded sample),
  so ``lam = 0`` gives the human-only interval exactly;
* ``lam = N / (N + n)`` times the fitted slope shrunk toward 1, a prediction's own slope (:func:`relgrade.stats.
  _augmented.tune`), with the small-sample corrections for the share the labels chose (a degree of freedom, the
  slope's error times the judge's mean shift): narrower than the human-only interval on average, not on every
  sample (issue 35: the per-sample cap cost coverage exactly where the judge would have corrected the sample);
* Student t with ``n - 1 - e`` degrees of freedom and Hall's skewness correction for graded metrics.

Coverage (``tests/stats/test_coverage.py``, ``benchmarks/ppi_trec_dl.py``): exact enumeration for 0/1 metrics
at n = 5-30 over true means 0.02-0.98 and judges from useless to perfect, simulation for graded ones.

The interval is valid whatever the judge's quality, as long as the human-labeled queries are a uniform random
sample of all queries (``relgrade sample --design queries``). Degenerate cases are explicit, never NaN:
fewer than 2 labeled queries is an :class:`~relgrade.InputError`; with no unlabeled query, or a judge whose
values are constant over all queries, ``lam = 0`` and ``note`` says so; constant human values show nothing of the
judge's slope, so ``lam`` is the prior's (the judge corrects a sample that is all at one value by luck).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from relgrade._errors import InputError
from relgrade.stats._augmented import FLOOR, PPI_INTERVAL, Rectified, rectified_means
from relgrade.stats._shifted import ShiftedAt

__all__ = ["PPI_INTERVAL", "Means", "human_only_means", "ppi_means", "ppi_point", "ppi_pvalues"]


def ppi_module():
    """``ppi_py``, imported lazily and without the global ``warnings.simplefilter("ignore")`` it sets."""
    with warnings.catch_warnings():  # restores the filters on exit
        import ppi_py
    return ppi_py


@dataclass(frozen=True)
class Means:
    """Column-wise estimates of a mean: values, CI bounds (one entry per column), notes, ``lam`` and ``half``:
    half the interval's width before it is widened to hold the estimate and clipped to the range (the one
    half-width the width ratio and "judge worth" use). ``est`` keeps the construction's details."""

    value: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    notes: tuple[str | None, ...]
    lam: np.ndarray
    half: np.ndarray
    est: Rectified | None = None

    @property
    def width(self) -> np.ndarray:
        return self.hi - self.lo


def _matrix(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise InputError(f"{name} must be a vector or a matrix (rows = queries), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"{name} holds NaN or infinite values; per-query metric values must be finite")
    return arr


def _check(alpha: float, n: int) -> None:
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha!r}")
    if n < 2:
        raise InputError(f"an interval needs at least 2 human-labeled queries, got {n}; label more queries")


FLOOR_NOTE_HUMAN = ("the human values are the same on every labeled query (the sample, not necessarily the metric): "
                    "the interval's variance is floored by one pseudo-observation at the far bound")
NOTE_ALL_LABELED = "every query is human-labeled: the PPI++ estimate is the human-only one"
NOTE_CONSTANT_JUDGE = "the judge gives every query the same value: lam = 0, the human-only interval"
NOTE_CONSTANT_HUMAN = (FLOOR_NOTE_HUMAN + "; constant human values show nothing of the judge's slope, so lam is its "
                       "prior value (the judge corrects a sample that is all at one value by luck)")
NOTE_OUTSIDE = ("lam = 0: the PPI++ interval lay wholly outside the metric's range (the judge's correction overshoots "
                "what the metric can be), so the judge is not used: the human-only interval")
NOTE_LAM_ZERO = ("lam = 0: on these labeled queries the judge's predictions run against the human values, so the PPI++ "
                 "interval is the human-only one")


def _with_notes(est: Rectified, notes) -> Means:
    return Means(est.value, est.lo, est.hi, tuple(notes), est.lam, est.half, est)


def human_only_means(Y, *, alpha: float = 0.05, lower: float = 0.0, upper: float = 1.0) -> Means:
    """Mean and ``1 - alpha`` interval of each column of ``Y`` (rows = labeled queries, values in [lower, upper]):
    :func:`relgrade.stats.mean_intervals`, the PPI interval at ``lam = 0``."""
    Y = _matrix(Y, "Y")
    _check(alpha, Y.shape[0])
    est = rectified_means(Y, alpha=alpha, lower=lower, upper=upper, lam=0.0)
    return _with_notes(est, (FLOOR_NOTE_HUMAN if k == FLOOR else None for k in est.kind))


def ppi_means(Y, Yhat, Yhat_unlabeled, *, alpha: float = 0.05, lower: float = 0.0, upper: float = 1.0,
              lam=None, pseudo=None, skew=None, share=None) -> Means:
    """Power-tuned prediction-powered (PPI++) mean and ``1 - alpha`` interval of each column.

    ``Y`` and ``Yhat`` are (n x m), ``Yhat_unlabeled`` is (N x m); column j of each is one metric (or one
    simulation replicate), with values in ``[lower, upper]``. ``lam`` (one value or one per column) fixes the
    power-tuning parameter instead of tuning it; ``pseudo`` overrides the pseudo-rows
    (:class:`relgrade.stats._augmented.Pseudo`, as the no-answer ratio builds them), ``skew`` the estimate's
    skewness, ``share`` the weight the labels had in choosing a given ``lam``
    (:func:`relgrade.stats._augmented.at_lambda`).
    """
    Y, Yhat = _matrix(Y, "Y"), _matrix(Yhat, "Yhat")
    shifted = isinstance(Yhat_unlabeled, ShiftedAt)  # the no-answer ratio's Z_r (relgrade.stats._shifted)
    Yu = Yhat_unlabeled if shifted else _matrix(Yhat_unlabeled, "Yhat_unlabeled")
    n, m = Y.shape
    if Yhat.shape != Y.shape:
        raise InputError(f"Y and Yhat must have the same shape (same labeled queries), got {Y.shape} and {Yhat.shape}")
    if Yu.shape[0] and Yu.shape[1] != m:
        raise InputError(f"Yhat_unlabeled needs {m} columns like Y, got {Yu.shape[1]}")
    _check(alpha, n)
    if Yu.shape[0] == 0:
        Yu = np.zeros((0, m))
        lam = 0.0
    est = rectified_means(Y, Yhat, Yu, alpha=alpha, lower=lower, upper=upper, lam=lam, pseudo=pseudo, skew=skew,
                          share=share)
    constant_judge = ~np.broadcast_to(est.moments.varies, (m,))  # every judge value the same
    fallback = np.broadcast_to(est.fallback, (m,))
    notes: list[str | None] = []
    for j in range(m):
        if Yu.shape[0] == 0:
            notes.append(NOTE_ALL_LABELED)
        elif constant_judge[j]:
            notes.append(NOTE_CONSTANT_JUDGE + ("; " + FLOOR_NOTE_HUMAN if est.kind[j] == FLOOR else ""))
        elif est.kind[j] == FLOOR:
            notes.append(NOTE_CONSTANT_HUMAN if est.lam[j] > 0 else FLOOR_NOTE_HUMAN)
        elif fallback[j] == 2:
            notes.append(NOTE_OUTSIDE)
        elif est.lam[j] == 0 and lam is None:  # tuned to 0 (a given lam = 0 asks for the human-only interval)
            notes.append(NOTE_LAM_ZERO)
        else:
            notes.append(None)
    if not (np.isfinite(est.value) & np.isfinite(est.lo) & np.isfinite(est.hi)).all():  # pragma: no cover
        raise RuntimeError("non-finite PPI estimate")
    return _with_notes(est, notes)


def ppi_point(Y: np.ndarray, Yhat: np.ndarray, Yu: np.ndarray, lam) -> np.ndarray:
    """ppi-python's point estimate ``mean(Y) + lam (mean(Yu) - mean(Yhat))`` per column at a given ``lam``."""
    return Y.mean(axis=0) + lam * (Yu.mean(axis=0) - Yhat.mean(axis=0))


def ppi_pvalues(Y, Yhat, Yhat_unlabeled, *, null: float = 0.0, lower: float = 0.0, upper: float = 1.0,
                lam=None, share=None) -> np.ndarray:
    """Two-sided PPI++ p-values of ``mean == null`` per column, from the interval's own construction.

    With the interval's centre, standard error, degrees of freedom and skewness (:func:`ppi_means`), ``p`` is
    ``2 min(F(g(T)), 1 - F(g(T)))`` for ``T = (centre - null) / se``, ``g`` Hall's transformation and ``F``
    Student's t: ``p < alpha`` exactly when ``null`` is outside the ``1 - alpha`` interval before it is
    widened to hold the estimate. ppi-python's ``ppi_mean_pval`` is the large-sample version (normal
    quantile, no skewness term); the two agree as ``n`` grows (tested). A zero standard error gives 1 when
    the centre equals ``null``, else 0. ``F`` is ``scipy.special.stdtr``, what ``scipy.stats.t.cdf`` and ``.sf``
    compute (tested), without importing ``scipy.stats`` (most of a second of rank-systems).
    """
    from scipy.special import stdtr

    est = ppi_means(Y, Yhat, Yhat_unlabeled, lower=lower, upper=upper, lam=lam, share=share).est
    gap = est.centre - null
    with np.errstate(divide="ignore", invalid="ignore"):
        T = gap / est.se
        a, b = est.skew / 3, est.skew / 6
        g = T + a * T ** 2 + a * a * T ** 3 / 3 + b
        p = 2 * np.minimum(stdtr(est.df, g), stdtr(est.df, -g))
    return np.where(est.se > 0, np.minimum(p, 1.0), np.where(gap == 0, 1.0, 0.0))
