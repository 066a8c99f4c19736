"""The mean over answerable queries (``--no-answer exclude``): a PPI++ ratio ``E[Y] / E[A]`` by test inversion.

``A`` is 1 on a query with a relevant document under human labels (every metric is 0 without one, so
``Y = Y * A``); whether an unlabeled query is answerable is unknown, so queries are never dropped by their
judge labels. For a candidate ratio ``r``, ``Z_r = Y - r A`` (judge side ``Yhat - r Ahat``) has mean 0 exactly
at the true ratio; the interval is every ``r`` whose ``Z_r`` interval (:mod:`relgrade.stats._augmented`, at
one ``lam`` for all ``r``) holds 0 (Fieller's construction for a ratio of means), the estimate the ``r`` where
the PPI++ estimate of ``E[Z_r]`` is 0: ``PPI(Y) / PPI(A)``, both at that ``lam``. ``lam = 0`` gives the
human-only interval of the same construction (with every labeled query answerable, the interval of the
mean over them).

* ``lam`` is tuned on ``Z_r0`` at the human-only ratio ``r0`` and kept for every ``r``: one estimator, whose
  ratio is linear in the metric, so the difference of two systems' ratios is the ratio of their difference
  (``rank-systems`` relies on it). So is the skewness of Hall's correction: far from the estimate, ``Z_r``'s
  skewness comes from the unanswerable queries' zeros, not from the metric.
* The pseudo-rows are those of the human values on the answerable queries, shifted by ``r`` (answerable,
  judge answerable): plus-two for a 0/1 metric, a far-bound row for a constant one. Each ``Z_r`` thus gets
  the floor of the metric at ``r``, not of ``Z``'s whole range: before, a floor at -1 (or a pair of
  maximally discordant pseudo-queries) kept ``r = 0`` inside the interval at 5 labeled queries for half of
  the draws.
* ``half``: half the width of the inverted interval searched over the metric's range widened by its own
  length on each side, before it is intersected with the range.
"""

from __future__ import annotations

import numpy as np

from relgrade._intervals import PPI_RATIO, RATIO
from relgrade.hybrid._ppi import Means, ppi_means
from relgrade.stats._augmented import Pseudo, pseudo_rows
from relgrade.stats._shifted import Shifted

RATIO_INTERVAL = PPI_RATIO.name  # the no-answer ratio's interval (test inversion at one lam)
HUMAN_RATIO_INTERVAL = RATIO.name  # the same inversion at lam = 0: the human-only ratio
_STEPS = 54  # bisection steps: the ends to machine precision over the search range


def _pseudo(Y_answered: np.ndarray, r: np.ndarray, neutral: np.ndarray, lower: float, upper: float) -> Pseudo:
    """The human-only pseudo-rows of the answerable values, as rows of ``Z_r`` (module docstring)."""
    p = pseudo_rows(Y_answered, neutral, lower, upper)
    shift = np.ones_like(p.y) * r
    floor_row = p.w[-1] > 0
    yhat = np.vstack([p.yhat[:-1] - shift[:-1], np.where(floor_row, neutral, p.yhat[-1])])
    return Pseudo(p.y - shift, yhat, p.w, p.centre, p.kind)


def ratio_means(Y, A, Yhat, Ahat, Yhat_u, Ahat_u, *, alpha: float = 0.05, bounds: tuple[float, float] = (0.0, 1.0),
                lam=None, share=None) -> Means:
    """PPI++ estimate and interval of ``E[Y] / E[A]`` per column of ``Y`` (module docstring).

    ``A`` (n), ``Ahat`` (n) and ``Ahat_u`` (N) are the answerable indicators (or, cross-fitted, their fold
    means) under human and judge labels; ``Y``/``Yhat`` (n x m), ``Yhat_u`` (N x m), values in ``bounds``
    ([0, 1] for a metric, [-1, 1] for a difference of two). ``lam`` fixes the power-tuning parameter (0: the
    human-only interval); at least 2 labeled queries must be answerable (the caller checks).
    """
    Y, Yhat, Yu = (np.asarray(x, dtype=np.float64) for x in (Y, Yhat, Yhat_u))
    A, Ah, Au = (np.asarray(x, dtype=np.float64)[:, None] for x in (A, Ahat, Ahat_u))
    m = Y.shape[1]
    lower, upper = float(bounds[0]), float(bounds[1])
    answered = A[:, 0] > 0
    Ya = Y[answered]
    if len(Yu) == 0:
        Yu, Au = np.zeros((0, m)), np.zeros((0, 1))

    unlabeled = Shifted(Yu, Au[:, 0]) if len(Yu) else None  # Z_r's unlabeled side from sums (stats/_shifted)

    def z(r: np.ndarray, k: int = 1):  # Z_r of k copies of the columns (r: one value per copied column)
        Zh = np.tile(Yhat, k) - r * Ah
        pseudo = _pseudo(np.tile(Ya, k), r, Zh.mean(axis=0), lower, upper)
        Zu = unlabeled.at(r, k) if unlabeled is not None else np.tile(Yu, k) - r * Au
        return np.tile(Y, k) - r * A, Zh, Zu, pseudo

    def interval(r: np.ndarray, lam_r, k: int = 1, skew=None, share=None) -> Means:  # Z_r in [min(0, lower-r), max(0, upper-r)]
        Zy, Zh, Zu, pseudo = z(r, k)
        return ppi_means(Zy, Zh, Zu, alpha=alpha, lower=np.minimum(0.0, lower - r), upper=np.maximum(0.0, upper - r),
                         lam=lam_r, pseudo=pseudo, skew=skew, share=share)

    tuned = interval(Ya.mean(axis=0), lam, share=share)  # lam (tuned or given), its share and skewness at the human-only ratio
    lam, skew = tuned.lam.copy(), np.tile(tuned.est.skew, 2)
    share = np.tile(np.broadcast_to(tuned.est.share, (m,)), 2)
    a_hat = A.mean() + lam * ((Au.mean() if len(Au) else 0.0) - Ah.mean())  # PPI estimate of E[A]
    lam = np.where(a_hat > 0, lam, 0.0)  # the judge would make E[A] look <= 0: no judge
    a_hat = np.where(a_hat > 0, a_hat, A.mean())
    value = (Y.mean(axis=0) + lam * ((Yu.mean(axis=0) if len(Yu) else 0.0) - Yhat.mean(axis=0))) / a_hat

    span = upper - lower
    a, b = np.full(2 * m, lower - span), np.full(2 * m, upper + span)
    lam2 = np.tile(lam, 2)

    def side(r: np.ndarray) -> np.ndarray:  # lo of Z_r for the lower end, hi for the upper: both fall as r grows
        est = interval(r, lam2, 2, skew, share)
        return np.concatenate([est.lo[:m], est.hi[m:]])

    fa = side(a)
    fixed = np.where(fa <= 0, a, np.nan)  # the interval reaches below the search range
    fb = side(b)
    fixed = np.where(np.isnan(fixed) & (fb >= 0), b, fixed)
    for _ in range(_STEPS):
        mid = (a + b) / 2
        pos = side(mid) > 0
        a, b = np.where(pos, mid, a), np.where(pos, b, mid)
    root = np.where(np.isnan(fixed), (a + b) / 2, fixed)
    lo_w, hi_w = np.minimum(root[:m], value), np.maximum(root[m:], value)
    lo, hi = np.clip(lo_w, lower, upper), np.clip(hi_w, lower, upper)
    notes = list(tuned.notes)
    for j in np.flatnonzero(lam != tuned.lam):
        notes[j] = "lam = 0: with the judge's answerable share the mean's denominator would not be positive"
    return Means(value, lo, hi, tuple(notes), lam, (hi_w - lo_w) / 2, tuned.est)

