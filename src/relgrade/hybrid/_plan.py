"""What the judge is worth, and how many human labels a target interval width needs: from the same formulas.

Widths are those of :mod:`relgrade.stats._augmented` before the interval is intersected with the metric's
range (``2 * half``), the one definition the width ratio uses too.

* Human-only at ``m`` labeled queries: the per-query standard deviation of the ``n`` labeled ones, Student t
  with ``m - 1`` degrees of freedom and the estimate's skewness shrinking as ``1 / sqrt(m)``:
  ``half(m) = half(n) sqrt(n / m) F(m) / F(n)``, ``F(m) = (g^-1(t_{m-1}) - g^-1(-t_{m-1})) / 2``. At
  ``m = n`` it is the human-only interval itself.
* **Judge worth**: the ``m`` at which the human-only interval would be as narrow as the PPI one, both as shown
  (intersected with the range; none when the PPI interval shown is not the narrower).
* PPI at ``m`` labeled queries of the ``Q`` in the population (``N = Q - m`` unlabeled): the pilot's
  variances (the augmented rows' ``S_yy, S_yh, S_hh`` and ``s^2(Yu)``), ``lam = N / (N + m)`` times the pilot's
  shrunk slope (:func:`relgrade.stats._augmented.tune`),
  ``V_m = lam^2 s^2(Yu) / N + (S_yy - 2 lam S_yh + lam^2 S_hh) / ((nv - 1) m)``, scaled by the factor that
  makes it the PPI interval at ``m = n`` (the pilot's small-sample corrections, kept as they are: they only
  shrink as ``m`` grows). A projection from a pilot, not a guarantee.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from relgrade.stats._augmented import SKEW_CAP, Moments, _hall_inverse, t_quantile_df, tune

_MAX_QUERIES = 1_000_000


def _spread(m, skew_n: float, n: int, alpha: float) -> float:
    """``F(m)``: half the width of Hall's t interval in standard errors at ``m`` queries."""
    t = float(t_quantile_df(m - 1, alpha))
    s = float(np.clip(skew_n * np.sqrt(n / m), -SKEW_CAP / t, SKEW_CAP / t))
    return float(_hall_inverse(t, s) - _hall_inverse(-t, s)) / 2


def human_half(m: float, *, n: int, half_n: float, skew_n: float, alpha: float) -> float:
    """Half-width of the human-only interval at ``m`` labeled queries, from the one at ``n`` (module docstring)."""
    return half_n * np.sqrt(n / m) * _spread(m, skew_n, n, alpha) / _spread(n, skew_n, n, alpha)


def _smallest(fits, lo: float, hi: float, *, whole: bool = False) -> float | None:
    """The smallest ``m`` in ``[lo, hi]`` with ``fits(m)`` (monotone): a whole number, or to 0.01; None if ``hi``
    does not fit."""
    if not fits(hi):
        return None
    if fits(lo):
        return lo
    while hi - lo > (1 if whole else 0.01):
        mid = (lo + hi) // 2 if whole else (lo + hi) / 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi


def judge_worth(*, n: int, human_half_n: float, ppi_width: float, human_width: float, skew_n: float,
                alpha: float = 0.05) -> float | None:
    """Human-labeled queries the human-only interval would need to be as narrow as the PPI one, both *as shown*
    (intersected with the metric's range): the human-only width at ``m`` queries is its projection
    ``2 human_half(m)`` scaled by the share of it the range left at ``n`` (``human_width / (2 human_half_n)``), so
    at ``m = n`` it is the width shown. None when the PPI interval shown is not narrower than the human-only one
    (then the judge bought nothing on this sample, whatever ``lam``)."""
    if not (human_half_n > 0 and human_width > 0 and 0 < ppi_width < human_width):
        return None
    scale = human_width / (2 * human_half_n)
    return _smallest(lambda m: 2 * scale * human_half(m, n=n, half_n=human_half_n, skew_n=skew_n, alpha=alpha)
                     <= ppi_width, float(n), float(_MAX_QUERIES))


def _as_columns(M: Moments) -> Moments:
    """One column's scalar moments (:func:`relgrade.stats._augmented.column`) as one-column arrays, for ``tune``."""
    a = lambda x: np.atleast_1d(np.asarray(x, dtype=np.float64))  # noqa: E731
    return Moments(M.n, M.N, a(M.nv), a(M.ybar), a(M.hbar), a(M.yc), a(M.hc), {k: a(v) for k, v in M.S.items()},
                   a(M.ubar), a(M.su), a(M.k3u), np.atleast_1d(M.kind), np.atleast_1d(M.varies))


def _ppi_half_formula(M: Moments, m: np.ndarray, population: int, alpha: float) -> np.ndarray:
    """The PPI half-width at each ``m`` labeled queries from the pilot's variances (module docstring)."""
    S = M.S
    N = population - m
    lam_n, _ = tune(_as_columns(M))
    beta = float(lam_n[0]) * (M.N + M.n) / M.N if M.N else 0.0  # the pilot's shrunk slope (tune's rule)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where((N >= 1) & (M.N > 0), np.clip(beta * N / np.maximum(N + m, 1e-300), 0.0, 1.0), 0.0)
        rect = (S["yy"] - 2 * lam * S["yh"] + lam * lam * S["hh"]) / (M.nv - 1)
        V = np.where(lam > 0, lam * lam * M.su / np.maximum(N, 1), 0.0) + rect / m
    return t_quantile_df(m - 1, alpha) * np.sqrt(V)


@dataclass(frozen=True)
class Plan:
    """Human-labeled queries a ``target_width`` needs alone and with the judge (None: more than the population)."""

    target_width: float
    human_queries: int | None
    ppi_queries: int | None
    population: int
    design: str = "uniform"  # "active": draws of relgrade sample --design active with the same probabilities
    active_queries: int | None = None  # uniform labels: draws an active batch would need (projected), None: not asked

    def to_dict(self) -> dict:
        out = {"target_width": self.target_width, "human_only_queries": self.human_queries,
               "ppi_queries": self.ppi_queries, "population": self.population}
        if self.active_queries is not None:
            out["active_draws"] = self.active_queries
        return out if self.design == "uniform" else {**out, "design": self.design}

    def sentence(self, metric: str, n: int, alpha: float = 0.05) -> str:
        """One line a user can act on before paying annotators."""
        def count(m):
            return f"about {m} human-labeled queries" if m is not None else f"more than all {self.population} queries"
        if self.design == "active":
            return (f"{metric}: a {1 - alpha:.0%} interval {self.target_width:g} wide needs {count(self.human_queries)} "
                    f"without the judge, {count(self.ppi_queries)} with it, drawn as these were (--design active with "
                    f"the same probabilities; planned from these {n} draws over {self.population} judged queries)")
        active = ("" if self.active_queries is None else
                  f"; about {self.active_queries} draws of relgrade sample --design active with these judges (projected "
                  "from these uniform labels and the judges' uncertainty)")
        return (f"{metric}: a {1 - alpha:.0%} interval {self.target_width:g} wide needs {count(self.human_queries)} "
                f"without the judge, {count(self.ppi_queries)} with it (planned from these {n} labeled queries of "
                f"{self.population}){active}")


def plan_labels(target_width: float, *, n: int, population: int, human_half_n: float, skew_n: float,
                ppi_half: float, moments: Moments | None, alpha: float = 0.05) -> Plan:
    """Labeled queries for an interval of ``target_width`` (before clipping), without and with the judge.

    ``moments`` (one column) are the PPI interval's own; without them (no judge) the PPI plan is the human one.
    """
    tol = target_width * 1e-9  # the current width must fit the current labels

    def human_fits(m):
        return 2 * human_half(m, n=n, half_n=human_half_n, skew_n=skew_n, alpha=alpha) <= target_width + tol

    m_h = _smallest(human_fits, 2, population, whole=True)
    m_p = m_h
    if moments is not None and moments.N > 0:  # not monotone in m (the unlabeled queries run out): every m
        ms = np.arange(2, population + 1, dtype=np.float64)
        scale = ppi_half / float(_ppi_half_formula(moments, np.float64(n), population, alpha))
        fits = np.flatnonzero(2 * scale * _ppi_half_formula(moments, ms, population, alpha) <= target_width + tol)
        m_p = int(ms[fits[0]]) if len(fits) else None
        if m_p is not None and m_h is not None:
            m_p = min(m_p, m_h)  # labeling more queries can always fall back on the humans alone
        elif m_p is None:
            m_p = m_h
    return Plan(float(target_width), m_h, m_p, int(population))


def plan_active(target_width: float, *, n: int, population: int, human_half_n: float, ppi_half: float,
                alpha: float = 0.05) -> Plan:
    """The plan of an active sample (:mod:`relgrade.stats._weighted`): each interval's half-width at ``m`` draws with
    the same probabilities is its half-width at the ``n`` drawn, times ``sqrt(n / m) t_{m-1} / t_{n-1}`` (the
    draws' variance falls as ``1 / m``; the pool's own term, ``sigma^2 / N``, is small beside it at ``N >> n`` and is
    scaled alike: a projection, not a guarantee). A first uniform batch followed by an active one plans with the
    uniform :func:`plan_labels` for the first batch, then with this on the combined file."""
    tol = target_width * 1e-9
    t_n = float(t_quantile_df(n - 1, alpha))

    def fits(half_n):
        return lambda m: 2 * half_n * np.sqrt(n / m) * float(t_quantile_df(m - 1, alpha)) / t_n <= target_width + tol

    m_h = _smallest(fits(human_half_n), 2, _MAX_QUERIES, whole=True)
    m_p = _smallest(fits(ppi_half), 2, _MAX_QUERIES, whole=True)
    if m_p is not None and m_h is not None:
        m_p = min(m_p, m_h)
    return Plan(float(target_width), m_h, m_p, int(population), "active")


def active_draws(target_width: float, *, n: int, ppi_half: float, factor: float, alpha: float = 0.05) -> int | None:
    """Draws of an active design that a ``target_width`` needs, projected from a uniform sample's PPI++ half-width at
    ``n`` and the variance ``factor`` of :func:`relgrade.hybrid._active.active_factor`: ``half(m) = ppi_half sqrt(
    factor n / m) t_{m-1} / t_{n-1}``."""
    t_n = float(t_quantile_df(n - 1, alpha))
    tol = target_width * 1e-9
    return _smallest(lambda m: 2 * ppi_half * np.sqrt(factor * n / m) * float(t_quantile_df(m - 1, alpha)) / t_n
                     <= target_width + tol, 2, _MAX_QUERIES, whole=True)
