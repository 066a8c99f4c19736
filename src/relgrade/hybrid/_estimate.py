"""``estimate``: metric values with honest intervals from human labels on a few queries and judge labels on all.

Setting (Angelopoulos et al., "Prediction-powered inference", Science 2023; PPI++: Angelopoulos,
Duchi & Zrnic 2023): humans labeled a uniform random subset of the queries (every top-k pair of
each), the judge labeled every query. Each metric is computed per query by the one metrics core
(:func:`relgrade.metrics.join` + :func:`relgrade.metrics.compute`) three ways: under human labels on
the labeled queries (``Y``), under judge labels on the same queries (``Yhat``) and under judge labels
on the others (``Yhat_unlabeled``); :func:`relgrade.hybrid.ppi_means` turns them into the PPI++ mean and
95% interval (see :mod:`relgrade.hybrid._ppi`).

The estimand is the mean of the metric under human labels over the queries (human ∪ judge topics),
with the no-answer rule of every other command (:data:`relgrade.metrics.DEFAULT_NO_ANSWER`):

* ``no_answer="zero"``: every query counts, one without a relevant document scores 0 (trec_eval
  ``-c``); the estimand is ``E[Y]``, estimated by PPI++ as above.
* ``no_answer="exclude"`` (default): the mean over the queries that have a relevant document under
  *human* labels, ``theta = E[Y] / E[A]`` with ``A`` = 1 when the query has one (every metric is 0
  on a query without one, so ``Y = Y * A``). Whether an unlabeled query is answerable is unknown, so
  queries are never dropped by their judge labels (that would make the labeled and unlabeled queries
  different populations). Instead, for each candidate ``r`` the PPI++ mean of ``Z_r = Y - r * A``
  (judge side ``Yhat - r * Ahat``) is tested against 0: the estimate is the ``r`` where its PPI++
  estimate is 0, the interval every ``r`` whose PPI++ interval holds 0 (test inversion, as
  Fieller's interval for a ratio of means), found by bisection on [0, 1]. At the true ``theta``,
  ``E[Z_theta] = 0``, so the interval keeps the PPI++ interval's coverage. The human-only value is
  the mean over the labeled queries with a relevant document, the judge-only value the mean over the
  queries with one under judge labels. When every labeled query with a relevant document scores the
  same (a lucky sample, e.g. recall 1 on all of them), the inversion would give a zero-width
  interval; the Wilson score interval on those queries replaces it (conservative, noted).

The interval is valid only when the labeled queries are a random sample of all queries
(``relgrade sample`` draws one); a hand-picked subset is not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from relgrade._errors import InputError
from relgrade.io import Qrels, Run
from relgrade.metrics import Metric, compute, join, parse_metrics
from relgrade.metrics._evaluate import find_leaks, no_shared_queries
from relgrade.metrics._settings import (
    DEFAULT_NO_ANSWER, check_no_answer, check_rel_threshold, labels_fingerprint, queries_fingerprint,
)
from relgrade.hybrid._coverage import coverage
from relgrade.hybrid._ppi import Means, effective_n, human_only_means, ppi_means
from relgrade.stats import at_bounds


@dataclass(frozen=True)
class MetricEstimate:
    """One metric: the PPI++ estimate, the human-only and the judge-only values, and what the judge was worth."""

    metric: str
    ppi: float
    ppi_ci95: tuple[float, float]
    human_only: float
    human_ci95: tuple[float, float]
    n_labeled: int
    judge_only: float
    n_queries: int
    effective_n: float | None  # labeled queries the human-only interval would need to be as narrow
    labels_per_query: float  # human labels per labeled query (to express effective_n in labels)
    note: str | None = None

    @property
    def width_ratio(self) -> float | None:
        """PPI width / human-only width (< 1: the judge helped)."""
        hw = self.human_ci95[1] - self.human_ci95[0]
        return None if hw <= 0 else (self.ppi_ci95[1] - self.ppi_ci95[0]) / hw

    @property
    def effective_labels(self) -> float | None:
        return None if self.effective_n is None else self.effective_n * self.labels_per_query

    def to_dict(self) -> dict[str, Any]:
        return {
            "ppi": {"value": self.ppi, "ci95": list(self.ppi_ci95),
                    "method": "PPI++ (power-tuned lam as ppi-python), Student t n-1 df, "
                    "variance floor when the labeled sample shows no variation, plus-two for a 0/1 metric "
                    "(relgrade.hybrid._ppi)"},
            "human_only": {"value": self.human_only, "ci95": list(self.human_ci95), "n_queries": self.n_labeled,
                           "method": "Student t n-1 df, variance floor for a constant sample, plus-two for a 0/1 metric "
                                     "(relgrade.stats._means)"},
            "judge_only": {"value": self.judge_only, "n_queries": self.n_queries},
            "width_ratio": self.width_ratio,
            "effective_human_queries": self.effective_n,
            "effective_human_labels": self.effective_labels,
            "note": self.note,
        }


@dataclass(frozen=True)
class EstimateReport:
    """What :func:`estimate` returns. ``to_dict`` is the ``--json`` shape; ``table`` the terminal one."""

    estimates: dict[str, MetricEstimate]
    labeled: tuple[str, ...]
    unlabeled: tuple[str, ...]
    human_coverage: dict[str, float]
    judge_coverage: dict[str, float]
    notes: tuple[str, ...] = ()
    per_query: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    leaks: tuple[dict[str, Any], ...] | None = None  # None: no forbidden documents were given

    def to_dict(self) -> dict[str, Any]:
        return {
            "aggregate": {name: est.to_dict() for name, est in self.estimates.items()},
            "n_labeled": len(self.labeled), "n_unlabeled": len(self.unlabeled),
            "labeled_queries": list(self.labeled),
            "coverage": {"human_on_labeled": self.human_coverage, "judge_on_all": self.judge_coverage},
            "leaks": None if self.leaks is None else [dict(x) for x in self.leaks],
            "notes": list(self.notes), "per_query": self.per_query, "settings": self.settings,
        }

    def table(self) -> str:
        from relgrade.metrics._evaluate import text_table

        n, N = len(self.labeled), len(self.labeled) + len(self.unlabeled)
        rule = self.settings.get("no_answer")
        scope = ("; means over the queries with a relevant document (--no-answer exclude)" if rule == "exclude"
                 else "; every query counts (--no-answer zero)" if rule == "zero" else "")
        head = ("metric", "PPI++", "95% CI", "human", "95% CI", "judge", "width", "judge worth")
        rows = []
        for name, e in self.estimates.items():
            ratio = "" if e.width_ratio is None else f"{e.width_ratio:.2f}"
            worth = "n/a" if e.effective_n is None else f"{e.effective_n:.0f} queries (x{e.effective_n / n:.2f})"
            rows.append((name, f"{e.ppi:.4f}", f"[{e.ppi_ci95[0]:.4f}, {e.ppi_ci95[1]:.4f}]", f"{e.human_only:.4f}",
                         f"[{e.human_ci95[0]:.4f}, {e.human_ci95[1]:.4f}]", f"{e.judge_only:.4f}", ratio, worth))
        return "\n".join([f"{n} human-labeled queries of {N}; 95% intervals{scope}", text_table(head, rows, "<><><>><"),
                          "width = PPI width / human-only width; judge worth = n * width^-2 labeled queries "
                          "(the labeled queries the human-only interval would need to be as narrow; n/a when a "
                          "variance was floored)"])


def _as_qrels(labels, what: str) -> Qrels:
    if isinstance(labels, Qrels):
        return labels
    if isinstance(labels, Mapping):
        return Qrels.from_dict(labels)
    to_qrels = getattr(labels, "to_qrels", None)
    if callable(to_qrels):
        return to_qrels()
    raise InputError(f"{what} labels must be Qrels or {{qid: {{doc_id: grade}}}}, got {type(labels).__name__}")


def per_query_values(qrels: Qrels, run: Run, metrics: Sequence[Metric], topics: Sequence[str], *,
                     rel_threshold: int = 1) -> np.ndarray:
    """(len(topics) × len(metrics)) per-query values from the metrics core; a topic the run lacks scores 0."""
    if not topics:
        return np.zeros((0, len(metrics)))
    values = compute(join(qrels, run, rel_threshold=rel_threshold, topics=topics), metrics, rel_threshold=rel_threshold)
    return np.column_stack([values[m.name] for m in metrics])


def split_queries(human: Qrels, judge: Qrels) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(labeled, unlabeled): human topics, then judge topics without a human label."""
    labeled = tuple(human.topics)
    seen = set(labeled)
    return labeled, tuple(q for q in judge.topics if q not in seen)


def answerable(qrels: Qrels, topics: Sequence[str], rel_threshold: int) -> np.ndarray:
    """1.0 for each topic with a relevant document (grade >= ``rel_threshold``) in ``qrels``, else 0.0."""
    return np.array([1.0 if qrels.relevant(q, rel_threshold) else 0.0 for q in topics])


def ratio_means(Y, A, Yhat, Ahat, Yhat_u, Ahat_u, *, alpha: float = 0.05,
                bounds: tuple[float, float] = (0.0, 1.0)) -> Means:
    """PPI++ estimate and interval of ``E[Y] / E[A]`` per column of ``Y`` by test inversion (module docstring).

    ``A`` (n), ``Ahat`` (n) and ``Ahat_u`` (N) are the answerable indicators (or, cross-fitted, their
    fold means) under human and judge labels; ``Y``/``Yhat`` (n × m), ``Yhat_u`` (N × m). The ratio is
    searched in ``bounds`` ([0, 1] for a metric, [-1, 1] for a difference of two metrics).
    """
    Y, Yhat, Yhat_u = (np.asarray(x, dtype=np.float64) for x in (Y, Yhat, Yhat_u))
    A, Ahat, Ahat_u = (np.asarray(x, dtype=np.float64)[:, None] for x in (A, Ahat, Ahat_u))
    m = Y.shape[1]

    # Y in bounds, A in {0, 1}, r in bounds: Z_r = Y - r A lies in [lo - max(hi, 0), hi - min(lo, 0)]
    # ([-1, 1] for a metric, [-2, 2] for a difference): the range of ppi_means' variance floor and clipping
    z_lo, z_hi = float(bounds[0]) - max(float(bounds[1]), 0.0), float(bounds[1]) - min(float(bounds[0]), 0.0)

    # a 0/1 metric (0/1 under both labelings): the plus-two pseudo-queries of ppi_means, answerable, with
    # Y = 0 / judge 1 and Y = 1 / judge 0, so Z = Y - r gets (-r, 1 - r) against the judge's (1 - r, -r)
    binary = at_bounds(Y, 0, 1) & at_bounds(Yhat, 0, 1) & at_bounds(Yhat_u, 0, 1)
    use = np.tile(binary, 3) if tuple(bounds) == (0.0, 1.0) else np.zeros(3 * m, bool)

    def at(r: np.ndarray) -> Means:  # r: (3m,) candidate ratios, one per (target, metric) column
        pseudo = (use, np.vstack([-r, 1 - r]), np.vstack([1 - r, -r]))
        return ppi_means(np.tile(Y, 3) - r * A, np.tile(Yhat, 3) - r * Ahat,
                         np.tile(Yhat_u, 3) - r * Ahat_u if len(Yhat_u) else np.zeros((0, 3 * m)), alpha=alpha,
                         lower=z_lo, upper=z_hi, pseudo=pseudo)

    def side(res: Means) -> np.ndarray:  # targets: value, lo, hi of each metric, all decreasing in r
        return np.concatenate([res.value[:m], res.lo[m:2 * m], res.hi[2 * m:]])

    a, b = np.full(3 * m, float(bounds[0])), np.full(3 * m, float(bounds[1]))
    fa, fb = side(at(a)), side(at(b))
    fixed = np.where(fa <= 0, a, np.where(fb >= 0, b, np.nan))
    for _ in range(54):  # bisection to machine precision on the bounds
        mid = (a + b) / 2
        pos = side(at(mid)) > 0
        a, b = np.where(pos, mid, a), np.where(pos, b, mid)
    root = np.where(np.isnan(fixed), (a + b) / 2, fixed)
    value, lo, hi = root[:m], np.minimum(root[m:2 * m], root[:m]), np.maximum(root[2 * m:], root[:m])
    at_value = at(np.tile(value, 3))
    notes = list(at_value.notes[:m])
    floored = np.asarray(at_value.floored[:m], dtype=bool).copy()
    answered = A[:, 0] > 0
    if tuple(bounds) == (0.0, 1.0) and answered.any():
        for j in np.flatnonzero(hi - lo <= 1e-12):
            # a lucky sample, not a constant metric: every labeled answerable query scores the same
            w_lo, w_hi = wilson(float(Y[answered, j].mean()), int(answered.sum()), alpha)
            lo[j], hi[j] = min(w_lo, value[j]), max(w_hi, value[j])  # the estimate stays inside, also in floats
            notes[j] = (f"every labeled query with a relevant document scores {Y[answered, j].mean():g}, which "
                        "would give a zero-width interval: Wilson score interval on those "
                        f"{int(answered.sum())} queries instead (conservative: the judge is not used for it)")
            floored[j] = True
    return Means(value, lo, hi, tuple(notes), floored, (hi - lo) / 2)


def wilson(p: float, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval (Wilson 1927) of a proportion ``p`` from ``n`` values in [0, 1]: never zero width.

    ``(p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``; for a mean of values bounded in [0, 1]
    it is conservative at a given mean, as the Bernoulli has the largest variance there.
    """
    from scipy.stats import norm

    z = float(norm.ppf(1 - alpha / 2))
    d = 1 + z * z / n
    center = (p + z * z / (2 * n)) / d
    half = z / d * np.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n))
    lo, hi = max(0.0, center - half), min(1.0, center + half)
    return (0.0 if p <= 0 else lo), (1.0 if p >= 1 else hi)  # exact ends where rounding would miss them


def estimate(
    run: Run | Mapping[str, Any],
    human: Qrels | Mapping[str, Mapping[str, int]],
    judge: Qrels | Mapping[str, Mapping[str, int]],
    metrics: Sequence[str | Metric] | None = None,
    *,
    k: Sequence[int] | None = None,
    rel_threshold: int = 1,
    no_answer: str = DEFAULT_NO_ANSWER,
    alpha: float = 0.05,
    crossfit: Any = None,
    forbidden: Qrels | Mapping[str, Sequence[str]] | None = None,
    leak_k: int | None = None,
) -> EstimateReport:
    """PPI++ estimate, human-only and judge-only values of each metric (default: as ``evaluate``).

    ``metrics``/``k`` are parsed by :func:`relgrade.metrics.parse_metrics`; ``no_answer`` is the rule
    of every command (module docstring). ``forbidden`` (``{query_id: [doc_id, ...]}`` or a
    :class:`~relgrade.io.Qrels` / golden set with forbidden documents): the run's leaks in its top
    ``leak_k`` (default: the largest metric cutoff) are reported, so the gate keeps its tenant-leak
    guard on estimate reports; without it ``leaks`` is None.

    ``crossfit`` (a :class:`relgrade.calibration.CrossFit` of ``judge`` against ``human``, from
    :func:`relgrade.calibration.crossfit_mapping`): required when the judge's grades were mapped by a
    mapping fitted on these human labels. The judge values of a labeled query then come from its
    out-of-fold mapped grades, those of the other queries are averaged over the fold mappings
    (cross-prediction, Zrnic & Candès 2024); ``judge`` gives the query lists and coverage.
    """
    check_no_answer(no_answer)
    rel_threshold = check_rel_threshold(rel_threshold)
    run = run if isinstance(run, Run) else Run.from_dict(run)
    human_q, judge_q = _as_qrels(human, "human"), _as_qrels(judge, "judge")
    chosen = parse_metrics(metrics, k)
    labeled, unlabeled = split_queries(human_q, judge_q)
    n = len(labeled)
    if n < 2:
        raise InputError(f"the human labels cover {n} quer{'y' if n == 1 else 'ies'}; PPI needs at least 2 "
                         "human-labeled queries (label a random sample of queries, e.g. with relgrade sample)",
                         path=human_q.source)
    population = labeled + unlabeled
    in_run = set(run.query_ids())
    if not in_run.intersection(population):
        raise no_shared_queries(run, population, human_q.source)
    Y = per_query_values(human_q, run, chosen, labeled, rel_threshold=rel_threshold)
    J = per_query_values(judge_q, run, chosen, population, rel_threshold=rel_threshold)
    A, Ahat = answerable(human_q, labeled, rel_threshold), answerable(judge_q, population, rel_threshold)
    if crossfit is not None:
        folds = [Qrels(u) for u in crossfit.unlabeled]
        J = np.vstack([per_query_values(Qrels(crossfit.labeled), run, chosen, labeled, rel_threshold=rel_threshold),
                       np.mean([per_query_values(u, run, chosen, unlabeled, rel_threshold=rel_threshold)
                                for u in folds], axis=0)])
        Ahat = np.concatenate([answerable(Qrels(crossfit.labeled), labeled, rel_threshold),
                               np.mean([answerable(u, unlabeled, rel_threshold) for u in folds], axis=0)
                               if folds and unlabeled else np.zeros(len(unlabeled))])
    Yhat, Yu = J[:n], J[n:]
    notes: list[str] = []
    if no_answer == "zero":
        ppi = ppi_means(Y, Yhat, Yu, alpha=alpha)
        classical = human_only_means(Y, alpha=alpha)
        judge_only = J.mean(axis=0)
    else:
        answered = A > 0
        if answered.sum() < 2:
            raise InputError(f"{int(answered.sum())} of the {n} human-labeled queries have a relevant document; the "
                             "mean over answerable queries (--no-answer exclude) needs at least 2: label more "
                             "queries or use --no-answer zero", path=human_q.source)
        ppi = ratio_means(Y, A, Yhat, Ahat[:n], Yu, Ahat[n:], alpha=alpha)
        classical = human_only_means(Y[answered], alpha=alpha)
        judged = Ahat > 0
        judge_only = J[judged].mean(axis=0) if judged.any() else np.zeros(len(chosen))
        if n - int(answered.sum()):
            notes.append(f"{n - int(answered.sum())} human-labeled queries have no relevant document: kept out of "
                         "the means (--no-answer exclude)")

    hum_cov = coverage(human_q, run, {(q, d): "human" for q, docs in human_q.labels.items() for d in docs},
                       chosen, topics=labeled)
    jud_cov = coverage(judge_q, run, {(q, d): "judge" for q, docs in judge_q.labels.items() for d in docs},
                       chosen, topics=population)
    gaps = {name: c.human for name, c in hum_cov.items() if c.n_docs and c.human < 1}
    if gaps:
        worst = min(gaps, key=gaps.get)
        notes.append(f"humans labeled only {gaps[worst]:.1%} of the {worst} top-k pairs of the labeled queries; "
                     "unlabeled pairs count as not relevant: label every top-k pair of each labeled query")
    no_judge = [q for q in labeled if q not in judge_q.labels]
    if no_judge:
        notes.append(f"{len(no_judge)} human-labeled queries have no judge label (judge values 0 there); "
                     f"e.g. {', '.join(no_judge[:3])}")
    ignored = sorted(in_run - set(population))
    if ignored:
        notes.append(f"{len(ignored)} run queries have no label from humans or the judge and were ignored")
    if not unlabeled:
        notes.append("every query is human-labeled: the PPI estimate is the human-only one")

    labels_per_query = len(human_q) / n
    out: dict[str, MetricEstimate] = {}
    for j, metric in enumerate(chosen):
        lo, hi = float(ppi.lo[j]), float(ppi.hi[j])
        hlo, hhi = float(classical.lo[j]), float(classical.hi[j])
        floored = bool(ppi.floored[j] or classical.floored[j])
        eff = effective_n(n, 2 * float(classical.half[j]), 2 * float(ppi.half[j]), floored=floored)  # unclipped
        parts = list(dict.fromkeys(x for x in (ppi.notes[j], classical.notes[j]) if x))
        if floored:
            parts.append("no 'judge worth' from a floored variance (it would measure the floor, not the judge)")
        value = float(ppi.value[j])
        if not 0.0 <= value <= 1.0:  # PPI's correction can step outside the metric's range
            parts.append(f"the PPI++ estimate {value:.6g} lies outside [0, 1] and is reported as the nearest end")
            value = min(1.0, max(0.0, value))
        note = "; ".join(parts) or None
        # every metric lies in [0, 1]: intersecting an interval with the parameter space keeps its coverage
        lo, hi, hlo, hhi = (min(1.0, max(0.0, v)) for v in (lo, hi, hlo, hhi))
        lo, hi = min(lo, value), max(hi, value)
        out[metric.name] = MetricEstimate(metric.name, value, (lo, hi), float(classical.value[j]),
                                          (hlo, hhi), n, float(judge_only[j]), len(population), eff,
                                          labels_per_query, note)
    per_query = {
        "human": {q: {m.name: float(Y[i, j]) for j, m in enumerate(chosen)} for i, q in enumerate(labeled)},
        "judge": {q: {m.name: float(J[i, j]) for j, m in enumerate(chosen)} for i, q in enumerate(population)},
    }
    cut = leak_k or max((m.k for m in chosen if m.k is not None), default=10)
    leaks = None
    if forbidden is not None:
        fq = forbidden if isinstance(forbidden, Qrels) else (
            forbidden.to_qrels() if callable(getattr(forbidden, "to_qrels", None)) else Qrels({}, forbidden=forbidden))
        leaks = tuple(find_leaks(Qrels({}, topics=population, forbidden=fq.forbidden, queries=fq.queries), run, cut,
                                 rel_threshold=rel_threshold))
    settings = {
        "kind": "estimate", "metrics": [m.name for m in chosen], "rel_threshold": rel_threshold,
        "no_answer": no_answer, "alpha": alpha, "labels": labels_fingerprint(human_q),
        "judge_labels": labels_fingerprint(judge_q), "queries": queries_fingerprint(population),
        "n_labeled": n, "crossfit": crossfit is not None, "leak_k": cut,
        "forbidden": None if forbidden is None else {"path": getattr(fq, "source", None),
                                                     "n_docs": sum(map(len, fq.forbidden.values()))},
        "run": run.name, "human": human_q.source, "judge": judge_q.source,
    }
    return EstimateReport(out, labeled, unlabeled, {n_: c.human for n_, c in hum_cov.items()},
                          {n_: c.judge for n_, c in jud_cov.items()}, tuple(notes), per_query, settings, leaks)
