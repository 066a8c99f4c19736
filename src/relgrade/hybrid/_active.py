"""Human labels of an active sample (``relgrade sample --design active``): their design, and the estimates from it.

The labels file records, on every row of a labeled query, ``design`` = ``active``, ``weight`` = ``1 / (n q)``,
``draws`` and ``pool`` (:mod:`relgrade.calibration._active`). :func:`read_design` reads them back (``None`` for any
other design: the uniform PPI++ of :mod:`relgrade.hybrid._ppi`, whose numbers are unchanged), refusing what cannot
be one active sample: rows with and without the design, a query whose rows disagree, probabilities that sum above
1. :func:`check_pool` refuses a judged pool other than the one drawn from (the estimator averages the judge over
that pool). ``estimate``, ``compare`` and ``rank-systems`` then use :mod:`relgrade.stats._weighted`: each query
counts once per draw, weighted ``1 / (N q)`` (self-normalised: Hájek's form).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from relgrade._errors import InputError
from relgrade._intervals import HANSEN_HURWITZ, HANSEN_HURWITZ_RATIO
from relgrade.hybrid._ppi import Means
from relgrade.stats._weighted import ACTIVE_INTERVAL, ACTIVE_RATIO_INTERVAL, Weighted, weighted_means, weighted_ratio

NOTE_ACTIVE = "active design: each labeled query weighted 1/(N q) by the probability q it was drawn with"


@dataclass(frozen=True)
class ActiveDesign:
    """The active sample the human labels come from: per labeled query its per-draw probability ``q`` and its
    ``draws``; ``pool``: the judged queries drawn from."""

    q: Mapping[str, float]
    draws: Mapping[str, int]
    pool: int
    source: str | None = None

    @property
    def n(self) -> int:
        return sum(self.draws.values())

    def rows(self, labeled: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(index into labeled, q)`` per draw: a query drawn twice is two draws."""
        at = {query: i for i, query in enumerate(labeled)}
        idx = [at[query] for query in labeled for _ in range(self.draws[query])]
        return np.array(idx, dtype=np.int64), np.array([self.q[labeled[i]] for i in idx])


def read_design(labels: Sequence[Any], path: Any = None) -> ActiveDesign | None:
    """The :class:`ActiveDesign` of human ``labels`` (:class:`relgrade.io.Label` rows), None when they are not
    from an active sample (module docstring)."""
    active = [lab for lab in labels if getattr(lab, "design", None) == "active"]
    if not active:
        return None
    if len(active) != len(labels):
        raise InputError(f"{len(labels) - len(active)} of the {len(labels)} labeled rows lack design 'active' while "
                         "the others have it; labels of an active sample and others cannot be combined (keep the "
                         "file relgrade sample --design active wrote, or label a --pilot into it)", path=path)
    per: dict[str, tuple] = {}
    for lab in active:
        key = (lab.weight, lab.draws, lab.pool)
        if None in key:
            raise InputError(f"query {lab.query_id!r} has design 'active' without its weight, draws and pool; keep the "
                             "columns relgrade sample --design active wrote", path=path)
        if per.setdefault(lab.query_id, key) != key:
            raise InputError(f"the rows of query {lab.query_id!r} disagree on weight, draws or pool; keep the "
                             "values relgrade sample --design active wrote", path=path)
    pools = {pool for _, _, pool in per.values()}
    if len(pools) > 1:
        raise InputError(f"the rows name several pools {sorted(pools)}; one active sample has one pool", path=path)
    n = sum(d for _, d, _ in per.values())
    q = {query: 1.0 / (n * w) for query, (w, _, _) in per.items()}
    if sum(q.values()) > 1 + 1e-6:
        raise InputError(f"the weights do not match one active sample of {n} draws (their probabilities sum to "
                         f"{sum(q.values()):.3f} > 1); keep the values relgrade sample --design active wrote", path=path)
    return ActiveDesign(q, {query: d for query, (_, d, _) in per.items()}, pools.pop(), None if path is None else str(path))


def check_pool(design: ActiveDesign, labeled: Sequence[str], unlabeled: Sequence[str], path: Any = None) -> None:
    """Refuse a judged pool other than the one the active sample was drawn from."""
    N = len(labeled) + len(unlabeled)
    if N != design.pool:
        raise InputError(f"the active sample was drawn from a pool of {design.pool} judged queries, but the judge "
                         f"labels and the human labels cover {N}; estimate with the judge labels it was drawn from",
                         path=path or design.source)
    missing = sorted(set(design.q) - set(labeled))
    if missing:  # pragma: no cover - the labeled queries are the human labels' queries
        raise InputError(f"query {missing[0]!r} of the active sample has no human label", path=path)


def _means(w: Weighted, notes) -> Means:
    return Means(w.value, w.lo, w.hi, tuple(notes), w.lam, w.half, None)


def active_intervals(Y, A, J, Ahat, n: int, no_answer: str, alpha: float, design: ActiveDesign,
                     labeled: Sequence[str], bounds=(0.0, 1.0), *, lam=None, joint: bool = False, share=None):
    """(PPI++ active, human-only) :class:`~relgrade.hybrid._ppi.Means` of each column of ``Y`` (labeled queries x
    metrics) with the judges' ``J`` (labeled queries first, then the rest of the pool) under the rule; the
    human-only one is the same estimator at ``lam = 0`` (Hansen & Hurwitz's). Also returns the raw
    :class:`~relgrade.stats._weighted.Weighted` PPI++ result (its ``lam_a``: the denominator's ``lam``)."""
    idx, q = design.rows(labeled)
    lower, upper = bounds
    m = Y.shape[1]
    notes = [NOTE_ACTIVE] * m
    if no_answer == "zero":
        ppi = weighted_means(Y[idx], J[:n][idx], J, q, alpha=alpha, lower=lower, upper=upper, lam=lam, joint=joint,
                             share=share)
        human = weighted_means(Y[idx], J[:n][idx], J, q, alpha=alpha, lower=lower, upper=upper, lam=0.0)
    else:
        args = (Y[idx], A[idx], J[:n][idx], Ahat[:n][idx], J, Ahat, q)
        ppi = weighted_ratio(*args, alpha=alpha, lower=lower, upper=upper, lam=lam, joint=joint, share=share)
        human = weighted_ratio(*args, alpha=alpha, lower=lower, upper=upper, lam=0.0)
    return _means(ppi, notes), _means(human, notes), ppi


def active_names(no_answer: str, m: int) -> tuple[tuple[str, str], list[str]]:
    """As :func:`relgrade.hybrid._estimate.interval_names` for the active design."""
    if no_answer == "exclude":
        return (ACTIVE_RATIO_INTERVAL, HANSEN_HURWITZ_RATIO.name), [HANSEN_HURWITZ_RATIO.name] * m
    return (ACTIVE_INTERVAL, HANSEN_HURWITZ.name), [HANSEN_HURWITZ.name] * m


def active_value(y, yhat, A, Ahat, design: ActiveDesign, labeled: Sequence[str], lam: float, lam_a: float,
                 no_answer: str) -> float:
    """One run's PPI++ active value at ``lam`` (and the denominator's ``lam_a``): linear in the metric, so two runs'
    values differ by exactly their difference's estimate. ``yhat``/``Ahat``: over the pool, labeled first."""
    idx, q = design.rows(labeled)
    n, N = len(labeled), len(yhat)
    w = 1.0 / (N * q)
    num = lam * float(np.mean(yhat)) + float(np.sum(w * (y[idx] - lam * yhat[:n][idx])) / w.sum())
    if no_answer == "zero":
        return num
    den = lam_a * float(np.mean(Ahat)) + float(np.sum(w * (A[idx] - lam_a * Ahat[:n][idx])) / w.sum())
    return num / den


def active_pvalues(D, Dj, n: int, design: ActiveDesign, labeled: Sequence[str], lam: float, share: float) -> np.ndarray:
    """Two-sided p-values of ``mean == 0`` per column of the differences ``D`` at ``lam``, from the PPI++ active
    construction: ``p < alpha`` exactly when 0 is outside its ``1 - alpha`` interval before clipping."""
    from scipy import stats

    idx, q = design.rows(labeled)
    est = weighted_means(D[idx], Dj[:n][idx], Dj, q, lower=-1.0, upper=1.0, lam=lam, share=share)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2 * stats.t.sf(np.abs(est.value) / est.se, est.df)
    return np.where(est.se > 0, np.minimum(p, 1.0), np.where(est.value == 0, 1.0, 0.0))


class _Grades:
    """One judge's grades and distributions as :func:`relgrade.calibration.query_uncertainty` reads them."""

    def __init__(self, labels):
        self.labels: dict[str, dict[str, int]] = {}
        self.distribution: dict[tuple[str, str], Mapping[int, float]] = {}
        for lab in labels:
            grade = lab.judge_grade if lab.judge_grade is not None else lab.grade
            self.labels.setdefault(lab.query_id, {})[lab.doc_id] = grade
            if lab.distribution:
                self.distribution[(lab.query_id, lab.doc_id)] = lab.distribution


def judge_uncertainty(judges: Sequence[Any], runs: Sequence[Any] = ()) -> dict[str, float]:
    """``u`` of every judged query, as ``relgrade sample --design active`` computes it, from judge inputs
    (:class:`relgrade.hybrid.JudgeInput`: their label rows)."""
    from relgrade.calibration import query_uncertainty

    grades = [_Grades(j.labels) for j in judges]
    pool: dict[str, dict[str, None]] = {}
    for g in grades:
        for q, docs in g.labels.items():
            pool.setdefault(q, {}).update(dict.fromkeys(docs))
    return query_uncertainty(grades, {q: tuple(d) for q, d in pool.items()}, runs=runs)


def active_factor(Y, J, lam, n: int, population: Sequence[str], uncertainty: Mapping[str, float]) -> np.ndarray:
    """Per column: the variance of the PPI++ correction under the active design over its variance under the
    uniform one, projected from uniform labels (``Y``: labeled x metrics, ``J``: the pool, labeled first, ``lam``
    per column): ``mean(w r_c^2) / mean(r_c^2)`` over the labeled queries, ``r_c`` the centred ``Y - lam J`` and
    ``w = 1 / (N q)`` with ``q`` the active probabilities of :func:`judge_uncertainty`'s ``u`` (a uniform sample of
    the pool estimates both pool means)."""
    from relgrade.stats._weighted import design_probabilities

    q = design_probabilities([uncertainty.get(x, 0.0) for x in population])
    w = 1.0 / (len(population) * q[:n])
    r = Y - np.asarray(lam) * J[:n]
    rc2 = (r - r.mean(axis=0)) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rc2.mean(axis=0) > 0, (w[:, None] * rc2).mean(axis=0) / rc2.mean(axis=0), 1.0)
