"""Prediction-powered means over queries (PPI++, Angelopoulos, Duchi & Zrnic 2023) that hold at 10 labeled queries.

The units are queries. For one metric, ``Y`` holds its per-query values under human labels on the
``n`` human-labeled queries, ``Yhat`` the values under judge labels on the same queries, and
``Yhat_unlabeled`` the values under judge labels on the ``N`` other queries. The power-tuned
prediction-powered estimate of the mean is

    theta_lam = lam * mean(Yhat_unlabeled) + mean(Y - lam * Yhat)

with ``lam = cov(Y, Yhat) / ((1 + n/N) var(all Yhat))`` clipped to [0, 1], per column (``lam = 1`` is the
original PPI of Angelopoulos et al., Science 2023; ``lam = 0`` the human-only mean). ``lam`` and the point
estimate are exactly ppi-python's (``ppi_mean_pointestimate(..., lam_optim_mode="element")``; the tests check
it). The interval is built for small ``n``:

    theta_lam  +-  t_{n-1, 1-alpha/2} * sqrt(lam^2 s^2(Yhat_unlabeled) / N  +  v_rect / n)

with ``s^2`` sample variances (ddof 1) and ``v_rect`` the variance of the rectifier ``Y - lam * Yhat``,
floored as the human-only interval is (:mod:`relgrade.stats._means`) when the labeled sample shows no
variation that could reveal the judge's errors:

* the judge and the humans differ by the same amount on every labeled query (usually: agree everywhere).
  ppi-python would then estimate the rectifier's variance as 0 and hand out a point, e.g. ``[1.0, 1.0]``
  while the judge's mean is 0.84 (issue 14). Here ``lam = 1`` (the rectifier then corrects the judge's
  bias in full) and ``v_rect`` is the variance of the rectifiers plus one pseudo-observation at the far
  bound of their range (with ``n`` agreements, ``1 / (n + 1)`` for a 0/1 metric), or the human values'
  own (floored) variance if that is smaller, i.e. no more than the human-only interval assumes;
* the human values are constant: ``Var(Y)`` in ``Var(Y - lam Yhat) = Var(Y) + lam^2 Var(Yhat)`` takes the
  human-only floor (the sample covariance is 0 then).

For a 0/1 metric (human and judge values all 0 or 1: hit rate, recall with one relevant document) the
t interval undercovers at 15-30 labeled queries whatever the judge (0.90 at n = 30, p = 0.9, a good
judge), as the Wald interval does for a proportion. Such columns get *plus-two*, as the human-only
interval does (:mod:`relgrade.stats._means`): two pseudo-queries, (human ``lower``, judge ``upper``) and
(human ``upper``, judge ``lower``), join the labeled ones for the rectifier's mean and variance; the
interval is centred on ``lam * mean(Yhat_unlabeled) + mean(rectifiers with the two)`` and widened to hold
the point estimate, which stays ppi-python's. Simulated coverage at n = 10-30 and true means 0.05-0.98:
>= 0.94 for useless, medium and good judges (``tests/stats/test_coverage.py``).

A ppi-python interval (normal quantile, ddof 0, no floor) held the truth in 30-56% of draws for recall@5
at 10 labeled TREC DL queries; this one is measured in ``tests/stats/test_coverage.py`` and
``benchmarks/intervals_trec_dl.py``. The interval is centred on the point estimate moved into
``[lower, upper]`` (a metric's range) and intersected with it; neither step can lose the true value.

The human-only interval is :func:`relgrade.stats.mean_intervals` on ``Y`` (Student t, the same floor), so
the width ratio of the two measures what the judge adds. The judge was worth ``effective_n = n *
(human-only width / PPI width)^2`` human-labeled queries, reported only when neither variance was
floored: a ratio of floors measures the floor rule, not the judge.

The interval is valid whatever the judge's quality, as long as the human-labeled queries are a uniform
random sample of all queries (``relgrade sample --design queries``); a useless judge gets ``lam`` near 0
and an interval about as wide as the human-only one.

Degenerate cases are explicit, never a silent NaN:

* fewer than 2 labeled queries: :class:`~relgrade.InputError` (no interval can be formed);
* no unlabeled query (every query is human-labeled): the PPI estimate *is* the human-only one;
* the judge's values of a metric are constant over all queries: ``lam = 0``, the human-only interval,
  and ``note`` says so.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from relgrade._errors import InputError


def ppi_module():
    """``ppi_py``, imported lazily and without the global ``warnings.simplefilter("ignore")`` it sets."""
    with warnings.catch_warnings():  # restores the filters on exit
        import ppi_py
    return ppi_py


@dataclass(frozen=True)
class Means:
    """Column-wise estimates of a mean: values, CI bounds (arrays of one entry per column) and notes."""

    value: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    notes: tuple[str | None, ...]
    floored: np.ndarray | None = None  # bool per column: the variance floor set the width (no effective n)
    half: np.ndarray | None = None  # half-widths before clipping to the range (effective n compares these)

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


def human_only_means(Y, *, alpha: float = 0.05, lower: float = 0.0, upper: float = 1.0) -> Means:
    """Mean and ``1 - alpha`` interval of each column of ``Y`` (rows = labeled queries, values in [lower, upper]).

    Student t with ``n - 1`` df and the pseudo-observation variance floor of :mod:`relgrade.stats._means`;
    the mean itself is ``Y.mean(axis=0)`` (as ``ppi_py.classical_mean_ci`` centres its interval).
    """
    from relgrade.stats import mean_intervals

    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha!r}")
    Y = _matrix(Y, "Y")
    n = Y.shape[0]
    if n < 2:
        raise InputError(f"an interval needs at least 2 human-labeled queries, got {n}; label more queries")
    est = mean_intervals(Y, alpha=alpha, lower=lower, upper=upper)
    notes = tuple(FLOOR_NOTE_HUMAN if c else None for c in est.constant)
    return Means(est.value, est.lo, est.hi, notes, est.constant.copy(), est.half)


FLOOR_NOTE_HUMAN = ("the human values are the same on every labeled query (the sample, not necessarily the metric): "
                    "the human-only interval's variance is floored by one pseudo-observation at the far bound (for a 0/1 "
                    "metric: one at each bound, plus-two)")
FLOOR_NOTE_PPI = ("the judge and the humans differ by the same amount on every labeled query (usually: they agree "
                  "everywhere): lam = 1 and the rectifier's variance floored by one pseudo-observation at the far "
                  "bound (for a 0/1 metric: two pseudo-queries, plus-two); no 'judge worth' from a floored variance")


def ppi_lambda(Y: np.ndarray, Yhat: np.ndarray, Yu: np.ndarray) -> np.ndarray:
    """PPI++ power-tuning ``lam`` per column, clipped to [0, 1], exactly as ppi-python's ``element`` mode.

    ``lam = cov(Y, Yhat) / ((1 + n / N) var(Yhat ∪ Yhat_unlabeled))`` with the covariance over the labeled
    queries (ddof 0) and the variance over all queries (ddof 1); 0 where that variance is 0.
    """
    n, N = Y.shape[0], Yu.shape[0]
    cov = ((Y - Y.mean(axis=0)) * (Yhat - Yhat.mean(axis=0))).mean(axis=0)
    var = np.concatenate([Yhat, Yu]).var(axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = cov / ((1 + n / N) * var)
    return np.clip(np.where(var > 0, lam, 0.0), 0.0, 1.0)


def ppi_point(Y: np.ndarray, Yhat: np.ndarray, Yu: np.ndarray) -> np.ndarray:
    """The PPI++ point estimate per column (as ``ppi_py.ppi_mean_pointestimate``, element mode); lam = 0 for a
    constant judge and lam = 1 where the judge and the humans differ by a constant (as :func:`ppi_means`)."""
    lam = _lambda(Y, Yhat, Yu)
    return lam * Yu.mean(axis=0) + (Y - lam * Yhat).mean(axis=0)


def _lambda(Y: np.ndarray, Yhat: np.ndarray, Yu: np.ndarray) -> np.ndarray:
    constant_judge = np.ptp(np.concatenate([Yhat, Yu]), axis=0) == 0
    agree = (np.ptp(Y - Yhat, axis=0) == 0) & ~constant_judge
    return np.where(constant_judge, 0.0, np.where(agree, 1.0, ppi_lambda(Y, Yhat, Yu)))


def ppi_means(Y, Yhat, Yhat_unlabeled, *, alpha: float = 0.05, lower: float = 0.0, upper: float = 1.0,
              pseudo: "tuple[np.ndarray, np.ndarray, np.ndarray] | None" = None) -> Means:
    """Power-tuned prediction-powered (PPI++) mean and ``1 - alpha`` interval of each column.

    ``Y`` and ``Yhat`` are (n × m), ``Yhat_unlabeled`` is (N × m); column j of each is one metric (or
    one simulation replicate), with values in ``[lower, upper]``. See the module docstring for the
    formula and the degenerate cases.

    ``pseudo``: ``(use, Y_pseudo, Yhat_pseudo)`` overrides the plus-two rows: ``use`` (m bools) says
    which columns get them, ``Y_pseudo`` and ``Yhat_pseudo`` (2 × m) are the two pseudo-queries'
    values (by default the 0/1 columns, with ``(lower, upper)`` paired with ``(upper, lower)``).
    """
    from relgrade.stats import at_bounds, floored_variance, t_quantile

    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha!r}")
    Y, Yhat, Yu = _matrix(Y, "Y"), _matrix(Yhat, "Yhat"), _matrix(Yhat_unlabeled, "Yhat_unlabeled")
    n, m = Y.shape
    if Yhat.shape != Y.shape:
        raise InputError(f"Y and Yhat must have the same shape (same labeled queries), got {Y.shape} and {Yhat.shape}")
    if Yu.shape[0] and Yu.shape[1] != m:
        raise InputError(f"Yhat_unlabeled needs {m} columns like Y, got {Yu.shape[1]}")
    if n < 2:
        raise InputError(f"an interval needs at least 2 human-labeled queries, got {n}; label more queries")
    if Yu.shape[0] == 0:
        classical = human_only_means(Y, alpha=alpha, lower=lower, upper=upper)
        note = "every query is human-labeled: the PPI estimate is the human-only one"
        return Means(classical.value, classical.lo, classical.hi, (note,) * m, classical.floored, classical.half)
    N = Yu.shape[0]
    constant_judge = np.ptp(np.concatenate([Yhat, Yu]), axis=0) == 0
    lam = _lambda(Y, Yhat, Yu)
    rect = Y - lam * Yhat
    value = lam * Yu.mean(axis=0) + rect.mean(axis=0)
    rect_var = rect.var(axis=0, ddof=1)
    agree_floor = np.ptp(rect, axis=0) == 0  # only when agree, or when Y is constant and lam = 0
    human_floor = (np.ptp(Y, axis=0) == 0) & ~agree_floor
    if agree_floor.any():  # the rectifier lies in [lower - lam * upper, upper - lam * lower]
        floor = np.minimum(floored_variance(rect, lower - lam * upper, upper - lam * lower),
                           floored_variance(Y, lower, upper))  # at most the human values' (lam = 0) variance
        rect_var = np.where(agree_floor, floor, rect_var)
    if human_floor.any():  # Var(Y - lam Yhat) = Var(Y) + lam^2 Var(Yhat): Var(Y) floored, the covariance is 0
        rect_var = np.where(human_floor, rect_var + floored_variance(Y, lower, upper), rect_var)
    floored = agree_floor | human_floor
    if pseudo is None:  # 0/1 metric under both labelings: plus-two (module docstring)
        binary = [at_bounds(a, lower, upper) for a in (Y, Yhat, Yu)]
        use = binary[0] & ((binary[1] & binary[2]) | constant_judge)  # constant judge: lam = 0, human-only
        Yp = np.vstack([np.full(m, lower), np.full(m, upper)])
        pseudo = (use, Yp, Yp[::-1])
    use, Yp, Yhp = (np.asarray(a, dtype=np.float64) for a in pseudo)
    use = use.astype(bool)
    centre = value
    if use.any():
        plus = np.vstack([rect, Yp - lam * Yhp])  # the two pseudo-queries' rectifiers
        centre = np.where(use, lam * Yu.mean(axis=0) + plus.mean(axis=0), value)
        rect_var = np.where(use, plus.var(axis=0, ddof=1), rect_var)
    judge_var = Yu.var(axis=0, ddof=1) if N > 1 else np.concatenate([Yhat, Yu]).var(axis=0, ddof=1)
    var = lam ** 2 * judge_var / N + rect_var / n
    half = t_quantile(n, alpha) * np.sqrt(var)
    point = np.clip(value, lower, upper)  # a point outside the range moves in: coverage can only grow
    centre = np.clip(centre, lower, upper)
    lo = np.clip(np.minimum(centre - half, point), lower, upper)
    hi = np.clip(np.maximum(centre + half, point), lower, upper)
    notes: list[str | None] = [None] * m
    for j in range(m):
        if constant_judge[j]:
            notes[j] = "the judge gives every query the same value: lam = 0, the human-only interval"
            if floored[j]:
                notes[j] += "; " + FLOOR_NOTE_HUMAN
        elif agree_floor[j]:
            notes[j] = FLOOR_NOTE_PPI
        elif human_floor[j]:
            notes[j] = FLOOR_NOTE_HUMAN + "; the PPI rectifier's variance includes that floor"
    if not (np.isfinite(value) & np.isfinite(lo) & np.isfinite(hi)).all():  # pragma: no cover - guarded above
        raise RuntimeError("non-finite PPI estimate")
    return Means(value, lo, hi, tuple(notes), floored, half)


def ppi_pvalues(Y, Yhat, Yhat_unlabeled, *, null: float = 0.0, lower: float = 0.0, upper: float = 1.0) -> np.ndarray:
    """Two-sided PPI++ p-values of ``mean == null`` per column, from the interval's own construction.

    ``p = 2 * P(T_{n-1} > |estimate - null| / se)`` with ``se`` the standard error of :func:`ppi_means` (the
    same ``lam``, ddof 1, variance floors and plus-two), so ``p < alpha`` exactly when ``null`` is outside the
    ``1 - alpha`` interval centred on the estimate. ppi-python's ``ppi_mean_pval`` is the large-sample
    version (normal quantile, ddof 0); the two agree as ``n`` grows (tested), and at 10-30 labeled queries
    this one is not the optimistic one. A zero standard error (only with a constant judge and constant
    human values, never in practice) gives 1 when the estimate equals ``null``, else 0.
    """
    from scipy import stats

    from relgrade.stats import t_quantile

    Y = _matrix(Y, "Y")
    est = ppi_means(Y, Yhat, Yhat_unlabeled, lower=lower, upper=upper)
    n = Y.shape[0]
    se = est.half / t_quantile(n, 0.05)
    gap = np.abs(est.value - null)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2 * stats.t.sf(gap / se, max(n - 1, 1))
    return np.where(se > 0, p, np.where(gap == 0, 1.0, 0.0))


def effective_n(n: int, human_width: float, ppi_width: float, *, floored: bool = False) -> float | None:
    """``n * (human_width / ppi_width)^2``: labeled queries the human-only interval would need to match PPI.

    None when either width came from a variance floor (``floored``): a ratio of floors measures the floor
    rule, not the judge.
    """
    if floored or not (ppi_width > 0 and human_width > 0 and np.isfinite(human_width)):
        return None  # a zero-width interval on either side: no meaningful ratio (the note says why)
    return float(n * (human_width / ppi_width) ** 2)
