"""Prediction-powered means over queries (PPI++, Angelopoulos, Duchi & Zrnic 2023), from ppi-python.

The units are queries. For one metric, ``Y`` holds its per-query values under human labels on the
``n`` human-labeled queries, ``Yhat`` the values under judge labels on the same queries, and
``Yhat_unlabeled`` the values under judge labels on the ``N`` other queries. The power-tuned
prediction-powered estimate of the mean is

    theta_lam = lam * mean(Yhat_unlabeled) + mean(Y - lam * Yhat)

with ``lam`` chosen from the data to minimise the variance and clipped to [0, 1] (``lam = 1`` is the
original PPI of Angelopoulos et al., Science 2023; ``lam = 0`` is the classical human-only mean). Its
95% interval is the normal interval ``theta_lam +- z * sqrt(var(lam Yhat_unl) / N + var(Y - lam Yhat) / n)``.
Both come from :func:`ppi_py.ppi_mean_pointestimate` and :func:`ppi_py.ppi_mean_ci` with ``lam=None``
(power tuning) and ``lam_optim_mode="element"``, so every column of a matrix gets its own ``lam``:
exactly what one call per column would give (the tests check this against per-column calls).

The interval is valid (covers the population mean about 95% of the time) whatever the judge's
quality, as long as the human-labeled queries are a uniform random sample of all queries; a useless
judge gets ``lam`` near 0 and an interval about as wide as the human-only one.

The human-only interval is the classical CLT interval on the ``n`` labeled queries, built exactly as
ppi-python builds its baseline (``ppi_py.classical_mean_ci``) and its PPI intervals:
``mean(Y) +- z_{0.975} * sd(Y) / sqrt(n)`` with ``sd`` the population standard deviation (ddof 0).
Using the same construction on both sides makes the width ratio measure what the judge adds and
nothing else (a Student-t human-only interval would be wider by ``t/z`` alone: 9% at n = 15, which
would credit a useless judge). With few labeled queries (n below about 30) both normal intervals are
somewhat optimistic; label more queries rather than trusting a 95% interval from 10 of them.

The judge was worth ``effective_n = n * (human-only width / PPI width)^2`` human-labeled queries:
the number of labeled queries the human-only interval would need to be as narrow as the PPI one
(the width of a mean's interval shrinks as 1/sqrt(n)).

Degenerate cases are explicit, never a silent NaN:

* fewer than 2 labeled queries: :class:`~relgrade.InputError` (no interval can be formed);
* no unlabeled query (every query is human-labeled): the PPI estimate *is* the human-only one;
* the judge's values of a metric are constant over all queries: ``lam = 0`` is passed to ppi-python
  (nothing to learn from the judge), giving the classical normal interval, and ``note`` says so;
* an interval of zero width on either side (the metric is constant on the labeled queries, or on
  every query): ``effective_n`` is None and ``note`` says why.
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


def human_only_means(Y, *, alpha: float = 0.05) -> Means:
    """Classical mean and CLT ``1 - alpha`` interval of each column of ``Y`` (rows = labeled queries).

    Per column the same as ``ppi_py.classical_mean_ci(Y[:, j], alpha=alpha)``.
    """
    from scipy import stats

    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha!r}")
    Y = _matrix(Y, "Y")
    n = Y.shape[0]
    if n < 2:
        raise InputError(f"an interval needs at least 2 human-labeled queries, got {n}; label more queries")
    mean = Y.mean(axis=0)
    half = stats.norm.ppf(1 - alpha / 2) * Y.std(axis=0) / np.sqrt(n)
    notes = tuple("human values constant on the labeled queries: zero-width human-only interval" if h == 0 else None for h in half)
    return Means(mean, mean - half, mean + half, notes)


def ppi_means(Y, Yhat, Yhat_unlabeled, *, alpha: float = 0.05) -> Means:
    """Power-tuned prediction-powered (PPI++) mean and ``1 - alpha`` interval of each column.

    ``Y`` and ``Yhat`` are (n × m), ``Yhat_unlabeled`` is (N × m); column j of each is one metric (or
    one simulation replicate). See the module docstring for the formula and the degenerate cases.
    """
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
        classical = human_only_means(Y, alpha=alpha)
        note = "every query is human-labeled: the PPI estimate is the human-only one"
        return Means(classical.value, classical.lo, classical.hi, (note,) * m)

    ppi = ppi_module()
    value, lo, hi = np.empty(m), np.empty(m), np.empty(m)
    notes: list[str | None] = [None] * m
    constant = np.ptp(np.concatenate([Yhat, Yu]), axis=0) == 0
    tuned = np.flatnonzero(~constant)
    if len(tuned):
        args = (Y[:, tuned], Yhat[:, tuned], Yu[:, tuned])
        value[tuned] = np.ravel(ppi.ppi_mean_pointestimate(*args, lam_optim_mode="element"))
        low, high = ppi.ppi_mean_ci(*args, alpha=alpha, lam_optim_mode="element")
        lo[tuned], hi[tuned] = np.ravel(low), np.ravel(high)
    fixed = np.flatnonzero(constant)
    if len(fixed):
        args = (Y[:, fixed], Yhat[:, fixed], Yu[:, fixed])
        value[fixed] = np.ravel(ppi.ppi_mean_pointestimate(*args, lam=0.0))
        low, high = ppi.ppi_mean_ci(*args, alpha=alpha, lam=0.0)
        lo[fixed], hi[fixed] = np.ravel(low), np.ravel(high)
        for j in fixed:
            notes[j] = "the judge gives every query the same value: lam = 0, the classical normal interval"
    bad = ~(np.isfinite(value) & np.isfinite(lo) & np.isfinite(hi))
    if bad.any():  # pragma: no cover - guarded above; never hand out NaN silently
        raise RuntimeError(f"ppi-python returned a non-finite estimate for column(s) {np.flatnonzero(bad).tolist()}")
    return Means(value, lo, hi, tuple(notes))


def ppi_pvalues(Y, Yhat, Yhat_unlabeled, *, null: float = 0.0) -> np.ndarray:
    """Two-sided PPI++ p-values of ``mean == null`` per column (``ppi_py.ppi_mean_pval``)."""
    Y, Yhat, Yu = _matrix(Y, "Y"), _matrix(Yhat, "Yhat"), _matrix(Yhat_unlabeled, "Yhat_unlabeled")
    from scipy import stats

    out = np.empty(Y.shape[1])
    ppi = ppi_module() if Yu.shape[0] else None
    for j in range(Y.shape[1]):
        y, yh, yu = Y[:, j], Yhat[:, j], Yu[:, j]
        if ppi is None:  # every query labeled: the classical z-test (lam = 0)
            sd = y.std()
            out[j] = (1.0 if y.mean() == null else 0.0) if sd == 0 else \
                2 * stats.norm.sf(abs(y.mean() - null) / (sd / np.sqrt(len(y))))
            continue
        lam = 0.0 if np.ptp(np.concatenate([yh, yu])) == 0 else None
        if lam == 0.0 and np.ptp(y) == 0:
            out[j] = 1.0 if y[0] == null else 0.0
            continue
        out[j] = float(np.ravel(ppi.ppi_mean_pval(y, yh, yu, null=null, lam=lam))[0])
    return out


def effective_n(n: int, human_width: float, ppi_width: float) -> float | None:
    """``n * (human_width / ppi_width)^2``: labeled queries the human-only interval would need to match PPI."""
    if not (ppi_width > 0 and human_width > 0 and np.isfinite(human_width)):
        return None  # a zero-width interval on either side: no meaningful ratio (the note says why)
    return float(n * (human_width / ppi_width) ** 2)
