"""One interval for a mean over queries, with or without a judge (PPI++), that holds at 5-30 labeled queries.

``Y`` (n x m) holds per-query values in ``[lower, upper]`` on the n labeled queries (a column per metric or
per replicate); a judge, when there is one, predicts them: ``Yhat`` (n x m) on the same queries and ``Yu``
(N x m) on N other queries. For ``lam`` in [0, 1] the estimate is ppi-python's
``ppi_mean_pointestimate(Y, Yhat, Yu, lam=lam)`` (Angelopoulos, Duchi & Zrnic 2023, PPI++):

    theta(lam) = mean(Y) + lam * (mean(Yu) - mean(Yhat))

``lam = 0`` is the mean of the human values alone, and the interval at ``lam = 0`` *is* the human-only
interval (``evaluate``, ``compare``, ``estimate``'s human column): one construction, not two.

**Augmented sample.** The labeled rows get pseudo-rows, each with a human value and a judge value:

* a column with a share ``s`` of its human values at ``lower`` or ``upper`` gets ``w = s ** PLUS_TWO_POWER``
  (10) of the plus-two: ``w / 2`` of a pseudo-query in each of the four (human, judge) cells
  ``{lower, upper}^2``. A 0/1 column (``s = 1``: hit rate, recall with one relevant document) gets all of it:
  for the human values plus-two (one pseudo-observation at each bound, Agresti & Coull 1998), at ``lam = 1``
  the adjustment of Agresti & Min (2005) for paired proportions; these rows count in the centre and variance.
  A graded column's share counts in the variance and skewness, not in the centre (the plain mean). It is the
  Wald failure of a binomial near 0 or 1 (Brown, Cai & DasGupta 2001) in a graded metric: a sample mostly at
  one bound, ``[0, 0, 0, 0, 0.1]`` from a population with 40% of its queries at 0 and mean 0.15, shows a
  standard error of 0.02 and its t interval [0, 0.10] misses (with its share of the plus-two: [0, 0.32]); as
  ``s`` tends to 1 the pseudo-rows tend to the whole plus-two. ``w`` is 0.35 at ``s = 0.9``, 0.11 at 0.8, 0.03
  at 0.7, under 0.01 below 0.6, so a sample spread over the range is barely touched. Measured (``tests/stats/test_ppi_coverage.py``, 40% of the queries at one bound,
  2000 draws): human-only coverage 0.907-0.923 -> 0.943-0.961 at 5 labeled queries and 0.941-0.953 ->
  0.949-0.962 at 10, PPI 0.899-0.921 -> 0.939-0.961 and 0.928-0.948 -> 0.943-0.955; mean human-only widths
  +3% at 5, +0.6% at 10, +0.0-0.3% in the middle and MRR worlds. A power of 8 covered 0.96 at 5 (widths +5%),
  12 only 0.934-0.938 (PPI) at 10; counting the share in the centre changed coverage by at most 0.003. The
  cost is on PPI widths where most values sit at a bound and the judge is good: MRR on TREC DL 2020
  (``benchmarks/ppi_trec_dl.py``, kappa 0.6 judge) width ratio 0.741 -> 0.786 at 5, 0.757 -> 0.785 at 10;
* a constant graded column (ten queries at nDCG 1 by luck) gets one row at the bound farther from the mean
  with the *neutral* judge value ``mean(Yhat)``: a variance floor, not counted in the centre. Its covariance
  with the judge is 0, so ``lam = 0`` there: constant human values carry no information on the judge's errors.

**Variance.** (Constant unlabeled judge values get the same one-pseudo-observation floor as constant human
values, so no variance is ever 0.) With ``S`` the central (co)moment sums of the augmented rows (weights as above), ``nv`` their
count, ``d = mean(Yu) - mean_c(Yhat)`` (``mean_c``: over the rows of the centre) and ``e`` the share of ``lam``
the labels chose (:func:`tune`; 0 at ``lam = 0``):

    V(lam) = lam^2 s^2(Yu) / N  +  (S_yy - 2 lam S_yh + lam^2 S_hh) / ((nv - 1 - e) n)  +  e^2 s_e^2 d^2 / S_hh

The middle term is the rectifier's variance with ``e`` degrees of freedom given up for the slope as far as the
labels chose it; the last is the regression estimator's term for the slope's own error times the judge's mean shift
(Cochran 1977, 7.25), ``s_e^2 = (S_yy - S_yh^2 / S_hh) / (nv - 2)``, with the shift's expected square
``E[d^2] = S_hh / ((nv - 1) n) + s^2(Yu) / N`` (the labeled and unlabeled queries are drawn alike, so ``d`` is 0 on
average), not its realised value (with ``d^2`` the estimate ``mean(Y) + lam d`` was a nonlinear function of ``d``).
At ``lam = 0`` both corrections vanish. The quantile is Student's t with ``n - 1 - e`` degrees of freedom.

**lam** (issue 35). A prediction of ``Y`` has slope 1 on it when it is calibrated (``E[Y | Yhat] = Yhat``), and then
the best ``lam`` for ``N`` unlabeled queries is ``c = N / (N + n)`` (the least variance of ``mean(Y) + lam (mean(Yu)
- mean(Yhat))``, ``lam^2 s_f^2 / N + s^2(Y - lam f) / n``, is at ``lam = c cov / s_f^2``). So ``lam = c beta``
with ``beta`` the fitted slope ``lam_ols = S_yh / S_hh`` shrunk toward :data:`PRIOR_SLOPE` 1: ``beta = w lam_ols +
(1 - w)``, ``w = tau^2 / (tau^2 + v)``, ``v = s_e^2 / S_hh`` the fitted slope's variance and ``tau^2 = max(
PRIOR_VAR, (lam_ols - 1)^2 - v)`` (the prior variance 0.1, raised James-Stein style when the labels put the slope
far from 1: a judge with no information is pulled toward ``lam = 0``); ``lam`` in [0, 1], ``e = c w``. The labels
pin ``lam`` as far as they pin the slope: ten queries barely, thousands fully. Nothing in the choice looks at the
interval it makes. The rule it replaced chose ``lam`` to minimise the interval's own half-width, so no interval
was ever wider than the human-only one; but on samples that showed the judge little covariance (the
unrepresentative ones) it chose ``lam = 0`` and gave the human-only interval where the judge would have corrected
the sample: with the judge labeling 50 times the queries, nDCG@10 covered 0.925-0.933 on TREC DL 2020 at 10 labeled
queries, and recall@5 and MRR threw the judge away on 20-79% of the draws. Now the PPI interval is narrower on
average, not on every sample (``estimate`` prints and records the width ratio as shown; the share of samples
where it is the wider is measured in ``benchmarks/ppi_trec_dl.py --grid``). Measured (``--grid``, a kappa 0.3
LLM-like judge, the default soft prediction): see the README.

**Skewness.** Misses of the t interval are lopsided for skewed metrics (nDCG@10 near 0.8: above the truth
three times as often as below). Graded columns (not 0/1 or floored ones) get Hall's (1992) transformation of
the studentized statistic, ``g(T) = T + a T^2 + a^2 T^3 / 3 + b`` with ``a = s / 3``, ``b = s / 6`` and ``s``
the estimate's skewness ``k3 / V^1.5``, ``k3 = lam^3 k3(Yu) / N^2 + k3(Y - lam Yhat) / n^2`` (unbiased third
cumulants of the augmented rows); the interval is ``centre - se g^-1(+-t)``. ``|s|`` is capped at
``SKEW_CAP / t``: beyond it g flattens and its inverse jumps (a skewness estimate from ten queries does not
deserve that).

**Interval.** ``[centre - se g^-1(t), centre - se g^-1(-t)]`` with ``centre = mean_c(Y) + lam d`` (the
plus-two centre for a 0/1 column), widened to hold ``theta(lam)`` and intersected with ``[lower, upper]``;
neither step can lose the true value. ``half`` is half the width *before* those two steps (planning reads it); the
width ratio and "judge worth" read the intervals as shown (:mod:`relgrade.hybrid._estimate_report`). Coverage is
measured in ``tests/stats/test_coverage.py`` (exact
enumeration for 0/1 metrics, simulation for graded ones) and ``benchmarks/ppi_trec_dl.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from relgrade._intervals import MEAN_CI, PLUS_TWO_POWER, PPI  # the names (and the plus-two share) live in one place
from relgrade.stats._shifted import ShiftedAt

MEAN_INTERVAL = MEAN_CI  # the human-only interval (lam = 0): evaluate, compare, estimate's human column
PPI_INTERVAL = PPI.name  # the PPI++ interval of this module with lam tuned
SKEW_CAP = 0.75  # |skewness| <= SKEW_CAP / t in Hall's transformation
NONE, FLOOR, PLUS_TWO = 0, 1, 2  # pseudo-row kind of a column
_GRID = np.linspace(0.0, 1.0, 101)  # joint_lambda's grid of lam
PRIOR_SLOPE = 1.0  # a prediction of Y: E[Y | Yhat] = Yhat has slope 1 (tune shrinks the fitted slope toward it)
PRIOR_VAR = 0.1  # the prior variance of the slope around PRIOR_SLOPE (the spread of real predictions' slopes)


@dataclass(frozen=True)
class Pseudo:
    """Pseudo-rows (k x m each): human and judge values, weights, and whether they count in the centre."""

    y: np.ndarray
    yhat: np.ndarray
    w: np.ndarray
    centre: np.ndarray
    kind: np.ndarray  # (m,) NONE, FLOOR or PLUS_TWO


def _at_either(x, lower: float, upper: float) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    eps = 1e-9 * (upper - lower)
    return np.isclose(x, lower, rtol=0, atol=eps) | np.isclose(x, upper, rtol=0, atol=eps)


def at_bounds(x, lower: float, upper: float) -> np.ndarray:
    """Per column of ``x`` (rows = queries): every value is ``lower`` or ``upper`` (a 0/1 metric, up to
    rounding), the columns that get the full plus-two. An empty column counts as at the bounds."""
    return _at_either(x, lower, upper).all(axis=0)


def plus_two_weight(x, lower: float, upper: float) -> np.ndarray:
    """Per column: the share of the plus-two a column gets, ``s ** PLUS_TWO_POWER`` with ``s`` the share of
    its values at ``lower`` or ``upper`` (module docstring); 1 for a 0/1 column, 0 with no value at a bound."""
    at = _at_either(x, lower, upper)
    return np.where(at.all(axis=0), 1.0, at.mean(axis=0) ** PLUS_TWO_POWER)


def pseudo_rows(Y: np.ndarray, neutral: np.ndarray, lower: float, upper: float) -> Pseudo:
    """The augmented rows of the module docstring for the human values ``Y`` (n x m); ``neutral``: the judge
    value of a floor row (``mean(Yhat)``, or anything when there is no judge)."""
    m = Y.shape[1]
    binary = at_bounds(Y, lower, upper)
    share = plus_two_weight(Y, lower, upper)
    floor = (np.ptp(Y, axis=0) == 0) & ~binary
    mean = Y.mean(axis=0)
    far = np.where(mean - lower >= upper - mean, lower, upper)
    cells = [(lower, lower), (lower, upper), (upper, lower), (upper, upper)]
    y = np.vstack([np.full(m, a) for a, _ in cells] + [far])
    yhat = np.vstack([np.full(m, b) for _, b in cells] + [np.broadcast_to(neutral, (m,))])
    w = np.vstack([share / 2] * 4 + [np.where(floor, 1.0, 0.0)])
    centre = np.vstack([binary] * 4 + [np.zeros(m, bool)])
    return Pseudo(y, yhat, w, centre, np.where(binary, PLUS_TWO, np.where(floor, FLOOR, NONE)))


@dataclass(frozen=True)
class Moments:
    """What the interval needs from the rows, per column (module docstring)."""

    n: int
    N: int
    nv: np.ndarray
    ybar: np.ndarray
    hbar: np.ndarray
    yc: np.ndarray
    hc: np.ndarray
    S: dict  # yy, yh, hh: central sums of squares and products; yyy, yyh, yhh, hhh: of cubes
    ubar: np.ndarray
    su: np.ndarray
    k3u: np.ndarray
    kind: np.ndarray
    varies: np.ndarray | bool = True  # the judge's values are not all equal (else lam = 0: no information)


def moments(Y: np.ndarray, Yhat: np.ndarray, Yu: np.ndarray, pseudo: Pseudo, lower=0.0, upper=1.0) -> Moments:
    """The moments of the augmented rows; ``lower``/``upper`` (scalars or one per column): the judge's range,
    whose far bound floors the variance of constant unlabeled judge values (as the human values' floor)."""
    n, N = Y.shape[0], Yu.shape[0]
    w, py, ph = pseudo.w, pseudo.y, pseudo.yhat
    nv = n + w.sum(axis=0)
    yv = (Y.sum(axis=0) + (w * py).sum(axis=0)) / nv
    hv = (Yhat.sum(axis=0) + (w * ph).sum(axis=0)) / nv
    wc = w * pseudo.centre
    nc = n + wc.sum(axis=0)
    yc = (Y.sum(axis=0) + (wc * py).sum(axis=0)) / nc
    hc = (Yhat.sum(axis=0) + (wc * ph).sum(axis=0)) / nc
    dy, dh, qy, qh = Y - yv, Yhat - hv, py - yv, ph - hv

    def s(*factors):
        real = np.prod([f[0] for f in factors], axis=0).sum(axis=0)
        return real + (w * np.prod([f[1] for f in factors], axis=0)).sum(axis=0)

    y_, h_ = (dy, qy), (dh, qh)
    S = {"yy": s(y_, y_), "yh": s(y_, h_), "hh": s(h_, h_), "yyy": s(y_, y_, y_), "yyh": s(y_, y_, h_),
         "yhh": s(y_, h_, h_), "hhh": s(h_, h_, h_)}
    m = Y.shape[1]
    if isinstance(Yu, ShiftedAt):  # the no-answer ratio's Z_r: from sums where that is exact enough (stats/_shifted)
        ubar, su, k3u, varies = _shifted_moments(Yu, Yhat, lower, upper)
    elif N:
        ubar, su, k3u = _unlabeled(Yu, Yhat, lower, upper)
        varies = np.ptp(np.vstack([Yhat, Yu]), axis=0) > 0
    else:
        ubar, su, k3u = (np.zeros(m) for _ in range(3))
        varies = np.ptp(np.vstack([Yhat, Yu]), axis=0) > 0
    return Moments(n, N, nv, Y.mean(axis=0), Yhat.mean(axis=0), yc, hc, S, ubar, su, k3u, pseudo.kind, varies)


def _unlabeled(Yu: np.ndarray, Yhat: np.ndarray, lower, upper):
    """``(mean, variance, third cumulant)`` of the unlabeled judge values per column (N >= 1): one unlabeled query
    takes the spread of every judge value; constant values get the one-pseudo-observation floor."""
    N = Yu.shape[0]
    ref = Yu if N > 1 else np.vstack([Yhat, Yu])  # one unlabeled query: the spread of every judge value
    k = ref.shape[0]
    m3 = ((ref - ref.mean(axis=0)) ** 3).mean(axis=0)
    ubar, su = Yu.mean(axis=0), ref.var(axis=0, ddof=1)
    k3u = m3 * k * k / ((k - 1) * (k - 2)) if k > 2 else m3
    mid = ref.mean(axis=0)
    far = np.where(mid - lower >= upper - mid, lower, upper)
    su = np.where(np.ptp(ref, axis=0) == 0, (far - mid) ** 2 / (k + 1), su)  # a constant judge is luck too
    return ubar, su, k3u


def _shifted_moments(Yu: ShiftedAt, Yhat: np.ndarray, lower, upper):
    """:func:`_unlabeled` and ``varies`` of shifted columns: from their sums, and from the array for the columns
    :meth:`ShiftedAt.stats` marks (possibly constant or cancelling) or when N < 3."""
    N, c = Yu.shape
    if N < 3:
        dense = Yu.dense()
        return (*_unlabeled(dense, Yhat, lower, upper), np.ptp(np.vstack([Yhat, dense]), axis=0) > 0)
    ubar, su, m3, exact = Yu.stats()
    k3u = m3 * N * N / ((N - 1) * (N - 2))
    varies = np.ones(c, dtype=bool)
    cols = np.flatnonzero(exact)
    if len(cols):
        dense = Yu.dense(cols)
        lo, hi = (np.broadcast_to(np.asarray(b, dtype=np.float64), (c,))[cols] for b in (lower, upper))
        ubar, su, k3u = ubar.copy(), su.copy(), k3u.copy()
        ubar[cols], su[cols], k3u[cols] = _unlabeled(dense, Yhat[:, cols], lo, hi)
        varies[cols] = np.ptp(np.vstack([Yhat[:, cols], dense]), axis=0) > 0
    return ubar, su, k3u, varies


def _slope(M: Moments):
    """``lam_ols`` and ``s_e^2 / S_hh`` (inf where the slope cannot be estimated) per column."""
    S = M.S
    with np.errstate(divide="ignore", invalid="ignore"):
        ols = np.where(S["hh"] > 0, S["yh"] / S["hh"], 0.0)
        resid = np.maximum(S["yy"] - np.where(S["hh"] > 0, S["yh"] ** 2 / S["hh"], 0.0), 0.0)
        slope_var = np.where((S["hh"] > 0) & (M.nv > 2), resid / np.maximum(M.nv - 2, 1e-300) / S["hh"], np.inf)
    return ols, slope_var


def _share(lam, ols):
    """``e``: the share of the fitted slope ``lam`` uses (1 when the fitted slope is not positive)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(lam > 0, np.where(ols > 0, np.minimum(1.0, lam / np.where(ols > 0, ols, 1.0)), 1.0), 0.0)


def variance(M: Moments, lam, e):
    """``V(lam)`` of the module docstring (``lam``, ``e`` broadcast against the columns)."""
    S, n = M.S, M.n
    _, slope_var = _slope(M)
    d2 = S["hh"] / np.maximum(M.nv - 1, 1) / n + M.su / max(M.N, 1)  # E[d^2]: the judge's mean shift is 0 on average
    rect = (S["yy"] - 2 * lam * S["yh"] + lam ** 2 * S["hh"]) / ((M.nv - 1 - e) * n)
    with np.errstate(invalid="ignore"):
        slope = np.where((lam > 0) & (e > 0), e ** 2 * slope_var * d2, 0.0)  # e = 0: lam is the prior's alone
    return lam ** 2 * M.su / max(M.N, 1) + rect + slope


def t_quantile_df(df, alpha: float):
    """``t_{df, 1 - alpha/2}`` for real ``df`` (scipy's ``stdtrit``)."""
    from scipy.special import stdtrit

    return stdtrit(df, 1 - alpha / 2)


def tune(M: Moments, alpha: float = 0.05, *, prior_slope: float = PRIOR_SLOPE,
         prior_var: float = PRIOR_VAR) -> tuple[np.ndarray, np.ndarray]:
    """``(lam, e)`` per column (module docstring, **lam**): ``lam = c * beta`` with ``c = N / (N + n)`` and
    ``beta`` the fitted slope shrunk toward ``prior_slope``; ``e`` the weight of the fitted slope in ``beta``
    (the share of ``lam`` the labels chose: a degree of freedom and the slope's error term in proportion).
    ``alpha`` is unused (``lam`` does not look at the interval it makes: kept for the callers' signature)."""
    m = M.ybar.shape[0]
    ols, slope_var = _slope(M)
    ok = (M.N > 0) & np.broadcast_to(M.varies, (m,))
    if not np.any(ok):
        return np.zeros(m), np.zeros(m)
    c = M.N / (M.N + M.n)
    with np.errstate(invalid="ignore", over="ignore"):
        v = np.where(np.isfinite(slope_var), slope_var, np.inf)
        tau2 = np.maximum(prior_var, (ols - prior_slope) ** 2 - np.where(np.isfinite(v), v, 0.0))
        w = np.where(np.isfinite(v), tau2 / (tau2 + v), 0.0)
    beta = w * ols + (1 - w) * prior_slope
    lam = np.where(ok, np.clip(c * beta, 0.0, 1.0), 0.0)
    return lam, np.where(lam > 0, c * w, 0.0)


def _hall_inverse(x, s):
    """``g^-1(x)`` of Hall's transformation with estimate skewness ``s`` (``a = s/3``, ``b = s/6``)."""
    a, b = s / 3, s / 6
    small = np.abs(a) < 1e-9
    safe = np.where(small, 1.0, a)
    return np.where(small, x - b, (np.cbrt(1 + 3 * safe * (x - b)) - 1) / safe)


@dataclass(frozen=True)
class Rectified:
    """Column-wise estimate and interval (module docstring): ``centre - below`` to ``centre + above`` before
    the interval is widened to hold ``value`` and intersected with the range (``lo``, ``hi``)."""

    value: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    below: np.ndarray
    above: np.ndarray
    centre: np.ndarray
    lam: np.ndarray
    se: np.ndarray
    df: np.ndarray
    skew: np.ndarray
    kind: np.ndarray
    moments: Moments | None = None  # what the interval was computed from (planning more labels reads it)
    fallback: np.ndarray | int = 0  # 0, or 2: a tuned lam fell back to 0, the PPI interval wholly outside the range
    share: np.ndarray | float = 0.0  # e: the weight of the labels in choosing lam (tune)

    @property
    def half(self) -> np.ndarray:
        """Half the width before widening and clipping: the one half-width of width ratios and judge worth."""
        return (self.below + self.above) / 2

    @property
    def width(self) -> np.ndarray:
        return self.hi - self.lo


def at_lambda(M: Moments, lam, *, alpha: float, lower: float, upper: float, skew=None, share=None) -> Rectified:
    """The estimate and interval at ``lam`` (one per column); ``skew`` fixes the estimate's skewness (the
    no-answer ratio keeps the one at its human-only ratio for every candidate ratio); ``share``: the weight ``e``
    the labels had in choosing ``lam`` (:func:`tune`); without it, ``lam`` counts as a share ``min(1, lam /
    lam_ols)`` of the fitted slope (a ``lam`` chosen on these labels some other way)."""
    lam = np.where(M.varies, np.broadcast_to(np.asarray(lam, dtype=np.float64), M.ybar.shape), 0.0)
    if share is None:
        ols, _ = _slope(M)
        e = _share(lam, ols)
    else:
        e = np.where(lam > 0, np.broadcast_to(np.asarray(share, dtype=np.float64), M.ybar.shape), 0.0)
    V = np.maximum(variance(M, lam, e), 0.0)
    se = np.sqrt(V)
    df = M.n - 1 - e
    t = t_quantile_df(df, alpha)
    S, n, nv = M.S, M.n, M.nv
    with np.errstate(divide="ignore", invalid="ignore"):
        kf = np.where(nv > 2, nv * nv / ((nv - 1) * (nv - 2)), 1.0)
        k3 = (lam ** 3 * M.k3u / max(M.N, 1) ** 2
              + kf * (S["yyy"] - 3 * lam * S["yyh"] + 3 * lam ** 2 * S["yhh"] - lam ** 3 * S["hhh"]) / (nv * n * n))
        s = np.where((M.kind == NONE) & (V > 0) & np.isfinite(V), k3 / V ** 1.5, 0.0) if skew is None else skew
    s = np.clip(np.nan_to_num(s), -SKEW_CAP / t, SKEW_CAP / t)
    below, above = se * _hall_inverse(t, s), -se * _hall_inverse(-t, s)
    d = M.ubar - M.hc
    centre = M.yc + lam * d
    value = M.ybar + lam * (M.ubar - M.hbar)
    lo = np.clip(np.minimum(centre - below, value), lower, upper)
    hi = np.clip(np.maximum(centre + above, value), lower, upper)
    return Rectified(value, lo, hi, below, above, centre, lam, se, df, s, M.kind, M, share=e)


def _matrix(x) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    return arr[:, None] if arr.ndim == 1 else arr


def rectified_means(Y, Yhat=None, Yu=None, *, alpha: float = 0.05, lower: float = 0.0, upper: float = 1.0,
                    lam=None, pseudo: Pseudo | None = None, skew=None, share=None, prior_slope: float = PRIOR_SLOPE,
                    prior_var: float = PRIOR_VAR) -> Rectified:
    """The estimate and interval of each column (module docstring): human-only without ``Yhat`` (or with
    ``lam=0``), PPI++ with ``lam`` from :func:`tune` (``lam=None``) or given (``share``: see :func:`at_lambda`).
    Inputs are checked by the callers.

    A tuned ``lam`` falls back to 0 (``fallback`` 2) where the PPI interval lies wholly outside the range: the
    judge's correction overshoots what the metric can be, so it is not used. Nothing else compares the PPI
    interval with the human-only one: it may be the wider of the two on a sample (never on average)."""
    Y = _matrix(Y)
    Yhat = np.zeros_like(Y) if Yhat is None else _matrix(Yhat)
    Yu = np.zeros((0, Y.shape[1])) if Yu is None else Yu if isinstance(Yu, ShiftedAt) else _matrix(Yu)
    if Yu.shape[0] == 0 and Yu.shape[1] != Y.shape[1]:
        Yu = np.zeros((0, Y.shape[1]))
    if pseudo is None:
        pseudo = pseudo_rows(Y, Yhat.mean(axis=0), lower, upper)
    M = moments(Y, Yhat, Yu, pseudo, lower, upper)
    if lam is not None:
        return at_lambda(M, lam, alpha=alpha, lower=lower, upper=upper, skew=skew, share=share)
    lam, e = tune(M, alpha, prior_slope=prior_slope, prior_var=prior_var)
    tuned = at_lambda(M, lam, alpha=alpha, lower=lower, upper=upper, skew=skew, share=e)
    if not (tuned.lam > 0).any():
        return tuned
    outside = (tuned.lam > 0) & ((tuned.centre + tuned.above < lower) | (tuned.centre - tuned.below > upper))
    if not outside.any():
        return tuned
    human = at_lambda(M, 0.0, alpha=alpha, lower=lower, upper=upper, skew=skew)
    back = np.where(outside, 2, 0)
    return Rectified(*(np.where(outside, h, t) for h, t in zip(_fields(human), _fields(tuned))), M, back,
                     np.where(outside, 0.0, tuned.share))


def _fields(r: Rectified) -> tuple:
    return (r.value, r.lo, r.hi, r.below, r.above, r.centre, r.lam, r.se, r.df, r.skew, r.kind)


def column(M: Moments, j: int) -> Moments:
    """The moments of column ``j`` alone, as scalars (planning reads one metric at a time)."""
    pick = lambda a: float(np.asarray(a)[j])  # noqa: E731
    return Moments(M.n, M.N, pick(M.nv), pick(M.ybar), pick(M.hbar), pick(M.yc), pick(M.hc),
                   {k: pick(v) for k, v in M.S.items()}, pick(M.ubar), pick(M.su), pick(M.k3u), int(M.kind[j]),
                   bool(np.broadcast_to(M.varies, M.ybar.shape)[j]))


def prepare(Y, Yhat, Yu, *, lower: float, upper: float) -> Moments:
    """The moments of the augmented rows of ``Y`` (n x m) with the judge's ``Yhat`` (n x m) and ``Yu`` (N x m)."""
    Y, Yhat, Yu = _matrix(Y), _matrix(Yhat), _matrix(Yu)
    return moments(Y, Yhat, Yu, pseudo_rows(Y, Yhat.mean(axis=0), lower, upper), lower, upper)


def joint_lambda(parts, *, alpha: float = 0.05, prior_slope: float = PRIOR_SLOPE,
                 prior_var: float = PRIOR_VAR) -> tuple[float, float]:
    """``(lam, e)`` for several estimates at once (``parts``: their :class:`Moments`): :func:`tune`'s rule on the
    slope fitted to every column together (the pooled sums of squares and products), so that every system and
    every pair of ``rank-systems`` is estimated with the same ``lam`` (each pair's difference is then the difference
    of the means). ``alpha`` is unused, as in :func:`tune`."""
    M0 = parts[0]
    if not M0.N:
        return 0.0, 0.0
    yh = hh = res = dof = 0.0
    for M in parts:
        keep = np.broadcast_to(M.varies, M.ybar.shape) & (M.S["hh"] > 0)
        yh += float(M.S["yh"][keep].sum())
        hh += float(M.S["hh"][keep].sum())
        with np.errstate(divide="ignore", invalid="ignore"):
            res += float(np.maximum(M.S["yy"] - M.S["yh"] ** 2 / M.S["hh"], 0.0)[keep].sum())
        dof += float((M.nv - 2)[keep].sum()) if np.ndim(M.nv) else float(M.nv - 2) * int(keep.sum())
    if hh <= 0 or dof <= 0:
        return float(np.clip(M0.N / (M0.N + M0.n) * prior_slope, 0.0, 1.0)), 0.0
    ols, v = yh / hh, res / dof / hh
    tau2 = max(prior_var, (ols - prior_slope) ** 2 - v)
    w = tau2 / (tau2 + v)
    c = M0.N / (M0.N + M0.n)
    lam = float(np.clip(c * (w * ols + (1 - w) * prior_slope), 0.0, 1.0))
    return lam, (c * w if lam > 0 else 0.0)
