"""``estimate``: metric values with honest intervals from human labels on a few queries and judge labels on all.

Setting (Angelopoulos et al., "Prediction-powered inference", Science 2023; PPI++: Angelopoulos,
Duchi & Zrnic 2023): humans labeled a uniform random subset of the queries (every top-k pair of
each), the judge labeled every query. Each metric is computed per query by the one metrics core
(:func:`relgrade.metrics.join` + :func:`relgrade.metrics.compute`) three ways: under human labels on
the labeled queries (``Y``), under judge labels on the same queries (``Yhat``) and under judge labels
on the others (``Yhat_unlabeled``); :func:`relgrade.hybrid.ppi_means` turns them into the PPI++ mean and
95% interval (see :mod:`relgrade.hybrid._ppi`).

The estimand is the mean of the metric under human labels over *all* queries (human ∪ judge topics).
Every query counts, also one without any relevant document, which scores 0 (trec_eval ``-c`` and
``no_answer="zero"``): excluding queries by their labels would make the labeled and unlabeled queries
different populations and void the interval. The interval is valid only when the labeled queries are
a random sample of all queries (``relgrade sample`` draws one); a hand-picked subset is not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from relgrade._errors import InputError
from relgrade.io import Qrels, Run
from relgrade.metrics import Metric, compute, default_metrics, join, parse_metric
from relgrade.hybrid._coverage import coverage
from relgrade.hybrid._ppi import effective_n, human_only_means, ppi_means


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
                    "variance floor when the labeled sample shows no variation (relgrade.hybrid._ppi)"},
            "human_only": {"value": self.human_only, "ci95": list(self.human_ci95), "n_queries": self.n_labeled,
                           "method": "Student t n-1 df, variance floor for a constant sample (relgrade.stats._means)"},
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "aggregate": {name: est.to_dict() for name, est in self.estimates.items()},
            "n_labeled": len(self.labeled), "n_unlabeled": len(self.unlabeled),
            "labeled_queries": list(self.labeled),
            "coverage": {"human_on_labeled": self.human_coverage, "judge_on_all": self.judge_coverage},
            "notes": list(self.notes), "per_query": self.per_query, "settings": self.settings,
        }

    def table(self) -> str:
        n, N = len(self.labeled), len(self.labeled) + len(self.unlabeled)
        lines = [f"{n} human-labeled queries of {N}; 95% intervals",
                 f"{'metric':<14}{'PPI++':>8}  {'95% CI':<18}{'human':>8}  {'95% CI':<18}{'judge':>8}"
                 f"{'width':>8}  judge worth"]
        for name, e in self.estimates.items():
            ratio = "" if e.width_ratio is None else f"{e.width_ratio:.2f}"
            worth = "n/a" if e.effective_n is None else f"{e.effective_n:.0f} queries (x{e.effective_n / n:.2f})"
            lines.append(f"{name:<14}{e.ppi:>8.4f}  [{e.ppi_ci95[0]:.4f}, {e.ppi_ci95[1]:.4f}]  "
                         f"{e.human_only:>6.4f}  [{e.human_ci95[0]:.4f}, {e.human_ci95[1]:.4f}]  "
                         f"{e.judge_only:>6.4f}{ratio:>8}  {worth}")
        lines.append("width = PPI width / human-only width; judge worth = n * width^-2 labeled queries "
                     "(the labeled queries the human-only interval would need to be as narrow; n/a when a "
                     "variance was floored)")
        return "\n".join(lines)


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


def resolve_metrics(metrics, k) -> list[Metric]:
    if metrics:
        return list(dict.fromkeys(parse_metric(m) for m in metrics))
    return default_metrics(tuple(k) if k else (10,))


def estimate(
    run: Run | Mapping[str, Any],
    human: Qrels | Mapping[str, Mapping[str, int]],
    judge: Qrels | Mapping[str, Mapping[str, int]],
    metrics: Sequence[str | Metric] | None = None,
    *,
    k: Sequence[int] | None = None,
    rel_threshold: int = 1,
    alpha: float = 0.05,
    crossfit: Any = None,
) -> EstimateReport:
    """PPI++ estimate, human-only and judge-only values of each metric (default recall/precision/nDCG@10, MRR).

    ``crossfit`` (a :class:`relgrade.calibration.CrossFit` of ``judge`` against ``human``, from
    :func:`relgrade.calibration.crossfit_mapping`): required when the judge's grades were mapped by a
    mapping fitted on these human labels. The judge values of a labeled query then come from its
    out-of-fold mapped grades, those of the other queries are averaged over the fold mappings
    (cross-prediction, Zrnic & Candès 2024); ``judge`` gives the query lists and coverage.
    """
    run = run if isinstance(run, Run) else Run.from_dict(run)
    human_q, judge_q = _as_qrels(human, "human"), _as_qrels(judge, "judge")
    chosen = resolve_metrics(metrics, k)
    labeled, unlabeled = split_queries(human_q, judge_q)
    n = len(labeled)
    if n < 2:
        raise InputError(f"the human labels cover {n} quer{'y' if n == 1 else 'ies'}; PPI needs at least 2 "
                         "human-labeled queries (label a random sample of queries, e.g. with relgrade sample)",
                         path=human_q.source)
    population = labeled + unlabeled
    Y = per_query_values(human_q, run, chosen, labeled, rel_threshold=rel_threshold)
    J = per_query_values(judge_q, run, chosen, population, rel_threshold=rel_threshold)
    if crossfit is not None:
        J = np.vstack([per_query_values(Qrels(crossfit.labeled), run, chosen, labeled, rel_threshold=rel_threshold),
                       np.mean([per_query_values(Qrels(u), run, chosen, unlabeled, rel_threshold=rel_threshold)
                                for u in crossfit.unlabeled], axis=0)])
    Yhat, Yu = J[:n], J[n:]
    ppi = ppi_means(Y, Yhat, Yu, alpha=alpha)
    classical = human_only_means(Y, alpha=alpha)

    hum_cov = coverage(human_q, run, {(q, d): "human" for q, docs in human_q.labels.items() for d in docs},
                       chosen, topics=labeled)
    jud_cov = coverage(judge_q, run, {(q, d): "judge" for q, docs in judge_q.labels.items() for d in docs},
                       chosen, topics=population)
    notes: list[str] = []
    gaps = {name: c.human for name, c in hum_cov.items() if c.n_docs and c.human < 1}
    if gaps:
        worst = min(gaps, key=gaps.get)
        notes.append(f"humans labeled only {gaps[worst]:.1%} of the {worst} top-k pairs of the labeled queries; "
                     "unlabeled pairs count as not relevant: label every top-k pair of each labeled query")
    no_judge = [q for q in labeled if q not in judge_q.labels]
    if no_judge:
        notes.append(f"{len(no_judge)} human-labeled queries have no judge label (judge values 0 there); "
                     f"e.g. {', '.join(no_judge[:3])}")
    in_run = set(run.query_id.tolist())
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
        note = "; ".join(parts) or None
        out[metric.name] = MetricEstimate(metric.name, float(ppi.value[j]), (lo, hi), float(classical.value[j]),
                                          (hlo, hhi), n, float(J[:, j].mean()), len(population), eff,
                                          labels_per_query, note)
    per_query = {
        "human": {q: {m.name: float(Y[i, j]) for j, m in enumerate(chosen)} for i, q in enumerate(labeled)},
        "judge": {q: {m.name: float(J[i, j]) for j, m in enumerate(chosen)} for i, q in enumerate(population)},
    }
    settings = {"metrics": [m.name for m in chosen], "rel_threshold": int(rel_threshold), "alpha": alpha,
                "no_answer": "zero (every query counts; see relgrade.hybrid._estimate)", "run": run.name,
                "human": human_q.source, "judge": judge_q.source}
    return EstimateReport(out, labeled, unlabeled, {n_: c.human for n_, c in hum_cov.items()},
                          {n_: c.judge for n_, c in jud_cov.items()}, tuple(notes), per_query, settings)
