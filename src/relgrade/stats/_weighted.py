"""Inverse-probability-weighted PPI++ for an active design: the judge chooses which queries humans label.

Active statistical inference (Zrnic & Candès, "Active statistical inference", ICML 2024): the judge labels every
query of a pool of ``N`` queries; the ``n`` human-labeled queries are ``n`` independent draws *with replacement*
from the pool, draw ``j`` picking query ``i`` with a known probability ``q_i`` (``sum_i q_i = 1``). With ``f_i`` the
judge's prediction of the per-query metric ``Y_i`` and ``w_j = 1 / (N q_j)`` (1 under the uniform design ``q =
1/N``), the estimate of the pool mean is the judge's pool mean plus the weighted mean of the human-minus-judge
correction:

    theta = lam * mean_pool(f) + sum_j w_j r_j / sum_j w_j,    r_j = Y_j - lam f_j

The correction is Hájek's (1971) self-normalised form of Hansen & Hurwitz's (1943) ``(1/n) sum_j w_j r_j``, which is
exactly unbiased but carries the weights' own noise wherever ``r`` is far from 0: ten labeled queries at nDCG 1
gave a Hansen-Hurwitz human-only estimate of 0.68 (the mean of their weights) where Hájek's is 1. Hájek's is
consistent with a bias of order ``1/n`` (none under the uniform design, where it is the PPI++ point estimate
``mean(Y) + lam (mean_pool(f) - mean(f))``), and its variance is that of the *centred* correction. Given the pool,
the variance is least at ``q_i`` proportional to ``|r_i - mean r|``, the judge's own error on query ``i``, which
:func:`design_probabilities` approximates with the judge's predicted spread ``u_i`` of the per-query metric, mixed
with uniform so that no query's probability falls below ``floor / N``:

    q_i = (1 - floor) u_i / sum(u) + floor / N

The floor bounds every weight by ``w_i <= 1 / floor``. What a useless ``u`` costs is known before any label: when
the errors are unrelated to ``q``, the correction's variance is the uniform design's times the design effect
``mean_pool(w) = mean_pool(1 / (N q))``; so the floor is raised as far as needed to keep it at most
:data:`MAX_DESIGN_EFFECT` (1.02: about 1% of width). That also caps what an informative ``u`` can gain; a judge that
gives every query the same ``u`` gives the uniform design exactly.

**Interval.** Student t with ``n - 1 - e`` degrees of freedom on the linearised terms ``phi_j = (w_j / mean w)
(r_j - theta_r)`` (``theta_r`` the Hájek mean of ``r``), variance

    V = sum(phi^2) / ((n - 1 - e) n)  +  e^2 v s^2(x) / n  +  sigma^2 / N

the first the linearised (delta-method) variance of the Hájek mean, its sum of squares divided by the degrees of
freedom left after the labels chose ``lam``; the second the fitted slope's error ``v`` times the spread of the
weighted centred predictions ``x``, for the share ``e`` of ``lam`` the labels chose (as in
:mod:`relgrade.stats._augmented`); the third the pool's own sampling (the pool is a sample of the queries users
send, as the unlabeled queries of the uniform PPI++ are: the same estimand, so the two designs' numbers compare),
``sigma^2`` the Hájek-weighted variance of the human values. Hall's (1992) skewness correction as in
:mod:`relgrade.stats._augmented` (the estimate's skewness ``k3(phi) / n^2 / V^1.5``, capped at ``SKEW_CAP / t``):
``[theta - se g^-1(t), theta - se g^-1(-t)]``, clipped to ``[lower, upper]`` and widened to hold the estimate, as the
uniform interval is; ``half`` is half its width before that. A sample whose terms are all equal gets the floor of
:mod:`relgrade.stats._augmented` (one pseudo-observation at the far bound). No plus-two. Measured (``tests/stats/test_weighted.py``, worlds of 25 queries, n = 10, 4000 draws): coverage
0.933-0.949 (uniform q in the same construction 0.937-0.950), width 0.975 of the same construction's at uniform q
when ``u`` is the judge's true error scale (sure of 70% of the queries), 1.006 when it is noise; without the cap on
the design effect, a noise ``u`` as spread (0.4 for 30% of the queries, 0.03 for the rest) covered only
0.893-0.899, the few heavily weighted draws making the variance estimate too small at ten draws (0.939 with the
cap). On TREC DL 2020: ``benchmarks/ppi_trec_dl.py --grid-design`` and the README.

**lam.** The correction is least variable at the slope of ``x = w (f - mean_w f)`` on ``y = w (Y - mean_w Y)``
(both Hájek-centred and weighted); for a calibrated prediction (``E[Y | f, q] = f``) that slope is 1, so as
:func:`relgrade.stats._augmented.tune` does, the fitted slope is shrunk toward 1 with weight ``tau^2 / (tau^2 +
v)`` (``v`` its variance, ``tau^2 = max(PRIOR_VAR, (ols - 1)^2 - v)``), ``lam`` in [0, 1]; the judge labels the whole
pool (the labeled queries too), so there is no ``N / (N + n)`` factor. ``joint``: one slope fitted on every column
together (``rank-systems``: a pair's difference is the difference of the estimates).

**Ratio** (``--no-answer exclude``): ``R = theta(Y) / theta(A)`` with each estimate at its own ``lam``, the
interval Student t on the linearised terms ``(phi_Y - R phi_A) / theta(A)`` (the delta method), the pool term from
the Hájek variance of ``(Y - R A) / theta(A)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from relgrade._errors import InputError
from relgrade._intervals import PPI_ACTIVE, PPI_ACTIVE_RATIO
from relgrade.stats._augmented import PRIOR_SLOPE, PRIOR_VAR, SKEW_CAP, _hall_inverse, t_quantile_df

ACTIVE_INTERVAL = PPI_ACTIVE.name
ACTIVE_RATIO_INTERVAL = PPI_ACTIVE_RATIO.name
DEFAULT_FLOOR = 0.3
"""The uniform share of the active design: every query's probability is at least ``DEFAULT_FLOOR / N``."""
MAX_DESIGN_EFFECT = 1.02
"""The floor is raised until ``mean_pool(1 / (N q))`` is at most this: an uncertainty that says nothing about the
judge's errors then costs at most about 1% of width (``sqrt(1.02)``)."""


def design_effect(q) -> float:
    """``mean_pool(1 / (N q))``: the factor on the variance of the active estimate when the judge's errors are
    unrelated to ``q`` (1 for the uniform design, above it for any other)."""
    q = np.asarray(q, dtype=np.float64)
    return float(np.mean(1.0 / (q.size * q)))


def design_probabilities(u, floor: float = DEFAULT_FLOOR, *, max_effect: float | None = MAX_DESIGN_EFFECT) -> np.ndarray:
    """Per-draw probabilities ``q`` over a pool from the judges' per-query uncertainty ``u`` (module docstring):
    ``(1 - a) u / sum(u) + a / N`` with ``a`` = :func:`design_floor`; uniform when ``u`` is constant (or all 0)."""
    u = np.asarray(u, dtype=np.float64)
    a = design_floor(u, floor, max_effect=max_effect)
    return np.full(u.size, 1.0 / u.size) if a >= 1 else (1 - a) * u / u.sum() + a / u.size


def design_floor(u, floor: float = DEFAULT_FLOOR, *, max_effect: float | None = MAX_DESIGN_EFFECT) -> float:
    """The uniform share ``a`` of the active design: ``floor``, raised (bisection) until :func:`design_effect` is at
    most ``max_effect`` (None: not raised); 1 when ``u`` is constant (or all 0)."""
    u = np.asarray(u, dtype=np.float64)
    if u.ndim != 1 or not u.size:
        raise InputError("the active design needs at least one judged query in its pool")
    if not np.isfinite(u).all() or (u < 0).any():
        raise InputError("the judges' per-query uncertainty must be finite and not negative")
    if not 0 < floor <= 1:
        raise InputError(f"--floor must be in (0, 1] (the uniform share of the active design), got {floor!r}")
    N = u.size
    if np.ptp(u) == 0 or u.sum() <= 0:
        return 1.0

    def at(a):
        return (1 - a) * u / u.sum() + a / N

    if max_effect is None or design_effect(at(floor)) <= max_effect:
        return float(floor)
    lo, hi = floor, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if design_effect(at(mid)) <= max_effect else (mid, hi)
    return float(hi)


@dataclass(frozen=True)
class Weighted:
    """Column-wise estimate and interval of the module docstring; ``half``: half the width before widening and
    clipping (the half-width width ratios and planning read), ``share``: ``e``."""

    value: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    lam: np.ndarray
    se: np.ndarray
    df: np.ndarray
    half: np.ndarray
    share: np.ndarray
    lam_a: float = 0.0  # the ratio's denominator's lam (weighted_ratio)
    skew: np.ndarray | float = 0.0  # the estimate's skewness in Hall's correction

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


def _checked(Y, Yhat, F, q, alpha):
    """The inputs as float matrices, checked, and each draw's weight ``1 / (N q)``: ``(Y, Yhat, F, q, N, w)``."""
    Y, Yhat, F = _matrix(Y), _matrix(Yhat), _matrix(F)
    q = np.asarray(q, dtype=np.float64)
    _check(Y, Yhat, F, q, alpha)
    N = F.shape[0]
    return Y, Yhat, F, q, N, 1.0 / (N * q)


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


def _hajek(r: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sum w r / sum w, influence terms (w / mean w) (r - that))`` per column of ``r`` (draws x columns)."""
    wn = (w / w.mean())[:, None]
    mean = (wn * r).mean(axis=0)
    return mean, wn * (r - mean)


def _finish(value, phi, q, N, extra, resid, e, alpha, lower, upper, lam, lam_a=0.0) -> Weighted:
    n = phi.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):  # the terms' own degrees of freedom (module docstring)
        kish = np.where((phi ** 4).sum(axis=0) > 0, 3 * (phi ** 2).sum(axis=0) ** 2 / (phi ** 4).sum(axis=0), n)
    s2 = (phi ** 2).sum(axis=0) / (n - 1 - e)  # the terms have mean 0; e degrees of freedom spent on lam's slope
    far = np.where(value - lower >= upper - value, lower, upper)
    constant = np.ptp(phi, axis=0) <= 1e-12 * np.maximum(np.abs(phi).max(axis=0), 1.0)
    s2 = np.where(constant, (far - value) ** 2 / (n + 1), s2)  # the floor of a constant sample
    V = s2 / n + extra + _pool_var(resid, q) / N
    se = np.sqrt(np.maximum(V, 0.0))
    df = n - 1 - e
    t = t_quantile_df(df, alpha)
    k3 = (phi ** 3).sum(axis=0) * n / ((n - 1) * (n - 2)) if n > 2 else np.zeros_like(V)
    with np.errstate(divide="ignore", invalid="ignore"):
        skew = np.where(~constant & (V > 0), k3 / n ** 2 / V ** 1.5, 0.0)
    skew = np.clip(np.nan_to_num(skew), -SKEW_CAP / t, SKEW_CAP / t)
    below, above = se * _hall_inverse(t, skew), -se * _hall_inverse(-t, skew)
    lo = np.clip(np.minimum(value - below, value), lower, upper)
    hi = np.clip(np.maximum(value + above, value), lower, upper)
    return Weighted(value, lo, hi, lam, se, df, (below + above) / 2, e, lam_a, skew)


def _centred(Y, Yhat, w):
    """The weighted, Hájek-centred human values and predictions whose slope ``lam`` is fitted on."""
    return _hajek(Yhat, w)[1], _hajek(Y, w)[1]


def _lam(Y, Yhat, F, w, lam, share, joint):
    """``(lam, e, v)`` per column: tuned (``lam`` None) or given."""
    m = Y.shape[1]
    x, y = _centred(Y, Yhat, w)
    _, v = _slope(x, y, joint)
    varies = np.ptp(F, axis=0) > 0
    if lam is None:
        lam, e = weighted_lambda(x, y, joint=joint, varies=varies)
    else:
        lam = np.where(varies, np.broadcast_to(np.asarray(lam, dtype=np.float64), (m,)), 0.0)
        e = np.where(lam > 0, np.broadcast_to(np.asarray(share or 0.0, dtype=np.float64), lam.shape), 0.0)
    v = np.broadcast_to(v, (m,))
    with np.errstate(invalid="ignore"):
        extra = np.where(e > 0, e ** 2 * np.where(np.isfinite(v), v, 0.0) * x.var(axis=0, ddof=1) / Y.shape[0], 0.0)
    return lam, e, extra


def _corrected(Y, Yhat, F, w, lam):
    """``(lam mean_pool(F) + the Hájek mean of Y - lam Yhat, its influence terms)``."""
    mean, phi = _hajek(Y - lam * Yhat, w)
    return lam * F.mean(axis=0) + mean, phi


def weighted_means(Y, Yhat, F, q, *, alpha: float = 0.05, lower: float = 0.0, upper: float = 1.0, lam=None,
                   joint: bool = False, share=None) -> Weighted:
    """The estimate and interval of each column's pool mean (module docstring). ``Y``, ``Yhat``: (n x m) the human
    values and the judge's predictions on the n draws (a query drawn twice is two rows); ``F``: (N x m) the
    judge's predictions on every query of the pool; ``q``: (n,) each draw's probability. ``lam`` fixes ``lam``
    (0: the weighted human-only estimate; ``share``: the weight ``e`` the labels had in choosing it, default 0);
    ``joint``: one tuned ``lam`` for every column."""
    Y, Yhat, F, q, N, w = _checked(Y, Yhat, F, q, alpha)
    lam, e, extra = _lam(Y, Yhat, F, w, lam, share, joint)
    value, phi = _corrected(Y, Yhat, F, w, lam)
    return _finish(value, phi, q, N, extra, Y, e, alpha, lower, upper, lam)


def weighted_ratio(Y, A, Yhat, Ahat, F, Fa, q, *, alpha: float = 0.05, lower: float = 0.0, upper: float = 1.0,
                   lam=None, joint: bool = False, share=None) -> Weighted:
    """``E[Y] / E[A]`` per column of ``Y`` (module docstring, **Ratio**): ``A``/``Ahat`` (n) the answerable
    indicators (or probabilities) on the draws, ``Fa`` (N) the judge's over the pool; the rest as
    :func:`weighted_means`. ``lam`` fixes both ``lam`` (0: human-only)."""
    Y, Yhat, F, q, N, w = _checked(Y, Yhat, F, q, alpha)
    A, Ah, Fa = _matrix(A), _matrix(Ahat), _matrix(Fa)
    num_lam, num_e, extra = _lam(Y, Yhat, F, w, lam, share, joint)
    den_lam, _, _ = _lam(A, Ah, Fa, w, lam, share, False)
    num, phi_y = _corrected(Y, Yhat, F, w, num_lam)
    den, phi_a = _corrected(A, Ah, Fa, w, den_lam)
    den = float(den[0])
    if not den > 0:
        raise InputError("no human-labeled draw has a relevant document; the mean over answerable queries "
                         "(--no-answer exclude) needs some: label more queries or use --no-answer zero")
    value = num / den
    return _finish(value, (phi_y - value * phi_a) / den, q, N, extra / den ** 2, (Y - value * A) / den, num_e, alpha,
                   lower, upper, num_lam, float(den_lam[0]))
