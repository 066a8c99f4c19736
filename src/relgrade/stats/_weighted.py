"""Inverse-probability-weighted PPI++ for an active design: the judge chooses which queries humans label.

Active statistical inference (Zrnic & Candès, "Active statistical inference", ICML 2024): the judge labels every
query of a pool of ``N`` queries; the ``n`` human-labeled queries are ``n`` independent draws *with replacement*
from the pool, draw ``j`` picking query ``i`` with a known probability ``q_i`` (``sum_i q_i = 1``). With ``f_i`` the
judge's prediction of the per-query metric ``Y_i`` and ``w_j = 1 / (N q_j)`` (1 under the uniform design ``q =
1/N``), the estimate of the pool mean is Hansen & Hurwitz's (1943) estimator of the human-minus-judge correction
added to the judge's pool mean:

    theta = lam * mean_pool(f) + (1/n) sum_j z_j,    z_j = w_j (Y_j - lam f_j)

Given the pool, the ``n`` terms ``lam mean_pool(f) + z_j`` are iid with mean the pool mean of ``Y`` for *any* ``lam``
and any ``q`` with ``q_i > 0`` wherever ``Y_i != lam f_i`` (the floor below keeps every ``q_i > 0``): unbiased whatever
the judge. Its variance given the pool, ``Var(w (Y - lam f)) / n``, is least at ``q_i`` proportional to ``|Y_i -
lam f_i|`` (over the pool's distribution of that error: ``sqrt(E[(Y_i - f_i)^2])``, the judge's own uncertainty
about query ``i``), which is what :func:`design_probabilities` approximates with the judge's predicted spread
``u_i`` of the per-query metric, mixed with uniform so that no query's probability falls below ``floor / N``:

    q_i = (1 - floor) u_i / sum(u) + floor / N

The floor bounds every weight by ``w_i <= 1 / floor`` (a useless ``u`` costs at most the variance of those weights;
a judge that gives every query the same ``u`` gives the uniform design exactly).

**Interval.** Student t on the ``z_j`` with ``n - 1 - e`` degrees of freedom, variance

    V = s^2(z) / n  +  e^2 v s^2(w f) / n  +  sigma^2 / N

the first the Hansen-Hurwitz variance estimator (unbiased for ``Var(theta | pool)`` at a fixed ``lam``; its sum of
squares is divided by ``n - 1 - e``, the degrees of freedom left after the labels chose ``lam``), the second the fitted slope's
error ``v`` times the spread of the weighted predictions, for the share ``e`` of ``lam`` the labels chose (as in
:mod:`relgrade.stats._augmented`), the third the pool's own sampling (the pool is a sample of the queries users
send, as the unlabeled queries of the uniform PPI++ are: the same estimand, so the two designs' numbers compare),
``sigma^2`` the Hájek-weighted variance of the human values. Clipped to ``[lower, upper]`` and widened to hold the
estimate, as the uniform interval is; ``half`` is ``t * se`` before that. A sample whose ``z`` are all equal gets the
floor of :mod:`relgrade.stats._augmented` (one pseudo-observation at the far bound). No Hall skewness correction
and no plus-two: measured coverage, ``tests/stats/test_weighted.py`` and ``benchmarks/ppi_trec_dl.py --grid-design``.

**lam.** ``z`` is least variable at the slope of ``w Y`` on ``w f``; for a calibrated prediction (``E[Y | f, q] =
f``) that slope is 1, so as :func:`relgrade.stats._augmented.tune` does, the fitted slope is shrunk toward 1 with
weight ``tau^2 / (tau^2 + v)`` (``v`` its variance, ``tau^2 = max(PRIOR_VAR, (ols - 1)^2 - v)``), ``lam`` in [0, 1];
the judge labels the whole pool (the labeled queries too), so there is no ``N / (N + n)`` factor. ``joint``: one
slope fitted on every column together (``rank-systems``: a pair's difference is the difference of the estimates).

**Ratio** (``--no-answer exclude``): ``R = theta(Y) / theta(A)`` with each estimate at its own ``lam``, the
interval Student t on the linearised terms ``(z_Y - R z_A) / theta(A)`` (the delta method), the pool term from the
Hájek variance of ``(Y - R A) / theta(A)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from relgrade._errors import InputError
from relgrade._intervals import PPI_ACTIVE, PPI_ACTIVE_RATIO
from relgrade.stats._augmented import PRIOR_SLOPE, PRIOR_VAR, t_quantile_df

ACTIVE_INTERVAL = PPI_ACTIVE.name
ACTIVE_RATIO_INTERVAL = PPI_ACTIVE_RATIO.name
DEFAULT_FLOOR = 0.3
"""The uniform share of the active design: every query's probability is at least ``DEFAULT_FLOOR / N``."""


def design_probabilities(u, floor: float = DEFAULT_FLOOR) -> np.ndarray:
    """Per-draw probabilities ``q`` over a pool from the judges' per-query uncertainty ``u`` (module docstring):
    ``(1 - floor) u / sum(u) + floor / N``; uniform when ``u`` is constant (or all 0)."""
    u = np.asarray(u, dtype=np.float64)
    if u.ndim != 1 or not u.size:
        raise InputError("the active design needs at least one judged query in its pool")
    if not np.isfinite(u).all() or (u < 0).any():
        raise InputError("the judges' per-query uncertainty must be finite and not negative")
    if not 0 < floor <= 1:
        raise InputError(f"--floor must be in (0, 1] (the uniform share of the active design), got {floor!r}")
    N = u.size
    if np.ptp(u) == 0 or u.sum() <= 0:
        return np.full(N, 1.0 / N)
    return (1 - floor) * u / u.sum() + floor / N


@dataclass(frozen=True)
class Weighted:
    """Column-wise estimate and interval of the module docstring; ``half``: ``t * se`` before widening and
    clipping (the half-width width ratios and planning read), ``share``: ``e``."""

    value: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    lam: np.ndarray
    se: np.ndarray
    df: np.ndarray
    half: np.ndarray
    share: np.ndarray

    @property
    def width(self) -> np.ndarray:
        return self.hi - self.lo


def _matrix(x) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    return a[:, None] if a.ndim == 1 else a


def _slope(x: np.ndarray, y: np.ndarray, joint: bool):
    """``(ols, v)`` of ``y`` on ``x`` per column (pooled when ``joint``); ``v`` inf where not estimable."""
    dx, dy = x - x.mean(axis=0), y - y.mean(axis=0)
    sxx, sxy, syy = (dx * dx).sum(axis=0), (dx * dy).sum(axis=0), (dy * dy).sum(axis=0)
    dof = np.full(x.shape[1], x.shape[0] - 2.0)
    if joint:
        sxx, sxy, syy, dof = (np.array([a.sum()]) for a in (sxx, sxy, syy, dof))
    with np.errstate(divide="ignore", invalid="ignore"):
        ols = np.where(sxx > 0, sxy / sxx, 0.0)
        resid = np.maximum(syy - np.where(sxx > 0, sxy ** 2 / sxx, 0.0), 0.0)
        v = np.where((sxx > 0) & (dof > 0), resid / np.maximum(dof, 1e-300) / sxx, np.inf)
    return ols, v


def weighted_lambda(x: np.ndarray, y: np.ndarray, *, joint: bool = False, varies=True):
    """``(lam, e)`` per column (module docstring, **lam**) for the weighted predictions ``x = w f`` and human
    values ``y = w Y`` over the draws; ``joint``: one ``lam`` for every column."""
    ols, v = _slope(x, y, joint)
    with np.errstate(invalid="ignore"):
        tau2 = np.maximum(PRIOR_VAR, (ols - PRIOR_SLOPE) ** 2 - np.where(np.isfinite(v), v, 0.0))
        wt = np.where(np.isfinite(v), tau2 / (tau2 + v), 0.0)
    lam = np.clip(wt * ols + (1 - wt) * PRIOR_SLOPE, 0.0, 1.0)
    lam, e = np.broadcast_to(lam, (x.shape[1],)), np.broadcast_to(wt, (x.shape[1],))
    lam = np.where(varies, lam, 0.0)
    return lam, np.where(lam > 0, e, 0.0)


def _check(Y, Yhat, F, q, alpha):
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha!r}")
    n = Y.shape[0]
    if n < 2:
        raise InputError(f"an interval needs at least 2 human-labeled draws, got {n}; label more queries")
    if Yhat.shape != Y.shape or F.shape[1] != Y.shape[1] or q.shape != (n,):
        raise InputError(f"shapes do not match: Y {Y.shape}, Yhat {Yhat.shape}, pool {F.shape}, q {q.shape}")
    if not (np.isfinite(q).all() and (q > 0).all() and (q <= 1).all()):
        raise InputError("every draw's probability must be in (0, 1]")


def _pool_var(L: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The Hájek-weighted variance over the pool of the per-query values ``L`` (draws x columns)."""
    h = (1 / q) / (1 / q).sum()
    mu = (h[:, None] * L).sum(axis=0)
    n = L.shape[0]
    return (h[:, None] * (L - mu) ** 2).sum(axis=0) * n / (n - 1)


def _finish(value, z, q, N, extra, resid, e, alpha, lower, upper, lam) -> Weighted:
    n = z.shape[0]
    s2 = ((z - z.mean(axis=0)) ** 2).sum(axis=0) / (n - 1 - e)  # e degrees of freedom spent on lam's slope
    far = np.where(value - lower >= upper - value, lower, upper)
    s2 = np.where(np.ptp(z, axis=0) > 0, s2, (far - value) ** 2 / (n + 1))  # the floor of a constant sample
    V = s2 / n + extra + _pool_var(resid, q) / N
    se = np.sqrt(np.maximum(V, 0.0))
    df = n - 1 - e
    half = t_quantile_df(df, alpha) * se
    lo = np.clip(np.minimum(value - half, value), lower, upper)
    hi = np.clip(np.maximum(value + half, value), lower, upper)
    return Weighted(value, lo, hi, lam, se, df, half, e)


def _terms(Y, Yhat, F, q, lam, e, v):
    N = F.shape[0]
    w = 1.0 / (N * q)
    x, y = w[:, None] * Yhat, w[:, None] * Y
    z = lam * F.mean(axis=0) + y - lam * x
    with np.errstate(invalid="ignore"):
        extra = np.where(e > 0, e ** 2 * np.where(np.isfinite(v), v, 0.0) * x.var(axis=0, ddof=1) / Y.shape[0], 0.0)
    return z, extra


def weighted_means(Y, Yhat, F, q, *, alpha: float = 0.05, lower: float = 0.0, upper: float = 1.0, lam=None,
                   joint: bool = False) -> Weighted:
    """The estimate and interval of each column's pool mean (module docstring). ``Y``, ``Yhat``: (n x m) the human
    values and the judge's predictions on the n draws (a query drawn twice is two rows); ``F``: (N x m) the
    judge's predictions on every query of the pool; ``q``: (n,) each draw's probability. ``lam`` fixes ``lam``
    (0: the weighted human-only estimate); ``joint``: one tuned ``lam`` for every column."""
    Y, Yhat, F = _matrix(Y), _matrix(Yhat), _matrix(F)
    q = np.asarray(q, dtype=np.float64)
    _check(Y, Yhat, F, q, alpha)
    N = F.shape[0]
    w = 1.0 / (N * q)
    varies = np.ptp(F, axis=0) > 0
    _, v = _slope(w[:, None] * Yhat, w[:, None] * Y, joint)
    if lam is None:
        lam, e = weighted_lambda(w[:, None] * Yhat, w[:, None] * Y, joint=joint, varies=varies)
    else:
        lam = np.where(varies, np.broadcast_to(np.asarray(lam, dtype=np.float64), (Y.shape[1],)), 0.0)
        e = np.zeros(Y.shape[1])
    v = np.broadcast_to(v, (Y.shape[1],))
    z, extra = _terms(Y, Yhat, F, q, lam, e, v)
    return _finish(z.mean(axis=0), z, q, N, extra, Y, e, alpha, lower, upper, lam)


def weighted_ratio(Y, A, Yhat, Ahat, F, Fa, q, *, alpha: float = 0.05, lower: float = 0.0, upper: float = 1.0,
                   lam=None, joint: bool = False) -> Weighted:
    """``E[Y] / E[A]`` per column of ``Y`` (module docstring, **Ratio**): ``A``/``Ahat`` (n) the answerable
    indicators (or probabilities) on the draws, ``Fa`` (N) the judge's over the pool; the rest as
    :func:`weighted_means`. ``lam`` fixes the metric's ``lam`` (0: human-only; the denominator's then 0 too)."""
    Y, Yhat, F = _matrix(Y), _matrix(Yhat), _matrix(F)
    A, Ah, Fa = _matrix(A), _matrix(Ahat), _matrix(Fa)
    q = np.asarray(q, dtype=np.float64)
    _check(Y, Yhat, F, q, alpha)
    N, m = F.shape[0], Y.shape[1]
    w = 1.0 / (N * q)
    num_lam, num_e = (weighted_lambda(w[:, None] * Yhat, w[:, None] * Y, joint=joint, varies=np.ptp(F, axis=0) > 0)
                      if lam is None else (np.where(np.ptp(F, axis=0) > 0, np.broadcast_to(lam, (m,)), 0.0),
                                           np.zeros(m)))
    den_lam, den_e = (weighted_lambda(w[:, None] * Ah, w[:, None] * A, varies=np.ptp(Fa, axis=0) > 0)
                      if lam is None else (np.where(np.ptp(Fa, axis=0) > 0, np.broadcast_to(lam, (1,)), 0.0)[:1],
                                           np.zeros(1)))
    zy = num_lam * F.mean(axis=0) + w[:, None] * (Y - num_lam * Yhat)
    za = den_lam * Fa.mean(axis=0) + w[:, None] * (A - den_lam * Ah)
    den = float(za.mean())
    if not den > 0:
        raise InputError("no human-labeled draw has a relevant document; the mean over answerable queries "
                         "(--no-answer exclude) needs some: label more queries or use --no-answer zero")
    value = zy.mean(axis=0) / den
    lin = (zy - value * za) / den + value
    _, v = _slope(w[:, None] * Yhat, w[:, None] * Y, joint)
    extra = np.where(num_e > 0, num_e ** 2 * np.where(np.isfinite(v), v, 0.0)
                     * (w[:, None] * Yhat).var(axis=0, ddof=1) / Y.shape[0] / den ** 2, 0.0)
    return _finish(value, lin, q, N, extra, (Y - value * A) / den, num_e, alpha, lower, upper, num_lam)
