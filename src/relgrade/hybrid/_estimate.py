"""``estimate``: metric values with honest intervals from human labels on a few queries and judge labels on all.

Setting (Angelopoulos et al., "Prediction-powered inference", Science 2023; PPI++: Angelopoulos,
Duchi & Zrnic 2023): humans labeled a uniform random subset of the queries (every top-k pair of
each), the judge labeled every query. Each metric is computed per query by the one metrics core
(:func:`relgrade.metrics.join` + :func:`relgrade.metrics.compute`) under human labels on the labeled
queries (``Y``); the judges' predictions of it (:func:`relgrade.hybrid.predict`) on
the same queries (``Yhat``) and on the others (``Yhat_unlabeled``) turn it into the PPI++ mean and
interval of :mod:`relgrade.hybrid._ppi`, beside the human-only one (the same construction at
``lam = 0``) and the judge-only value.

The estimand is the mean of the metric under human labels over the queries (human ∪ judge topics),
with the no-answer rule of every other command (:data:`relgrade.metrics.DEFAULT_NO_ANSWER`):
``no_answer="zero"`` counts every query (one without a relevant document scores 0, trec_eval ``-c``);
``no_answer="exclude"`` (default) is the mean over the queries with a relevant document under *human*
labels, a ratio ``E[Y] / E[A]`` estimated by :mod:`relgrade.hybrid._ratio` (its human-only interval is
the same inversion at ``lam = 0``).

The interval is valid only when the labeled queries are a random sample of all queries
(``relgrade sample`` draws one); a hand-picked subset is not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from relgrade._errors import InputError
from relgrade._verdict import judge_block
from relgrade._words import plural
from relgrade.io import Qrels, Run
from relgrade.metrics import Metric, parse_metrics
from relgrade.metrics._evaluate import find_leaks, no_shared_queries
from relgrade.metrics._settings import (
    DEFAULT_NO_ANSWER, check_no_answer, check_rel_threshold, labels_fingerprint, queries_fingerprint,
)
from relgrade.hybrid._active import active_factor, active_intervals, active_names, check_pool
from relgrade.hybrid._coverage import coverage
from relgrade.hybrid._estimate_report import EstimateReport, MetricEstimate
from relgrade.hybrid._predict import DEFAULT_PREDICTION, judge_sets, predict, union_qrels
from relgrade.hybrid._plan import active_draws, judge_worth, plan_active, plan_labels
from relgrade.hybrid._ppi import PPI_INTERVAL, Means, human_only_means, ppi_means
from relgrade.hybrid._ratio import HUMAN_RATIO_INTERVAL, RATIO_INTERVAL, ratio_means
from relgrade.hybrid._values import answerable, per_query_values, split_queries
from relgrade.hybrid._values import as_qrels as _as_qrels
from relgrade._intervals import mean_ci
from relgrade.stats._augmented import MEAN_INTERVAL, at_bounds, column

__all__ = ["EstimateReport", "MetricEstimate", "answerable", "estimate", "per_query_values", "split_queries"]

def prepare(human, judge, metrics, k, no_answer: str, rel_threshold: int, runs: Sequence[Run]):
    """``(human Qrels, judge sets, judges' union Qrels, metrics, labeled, unlabeled, rel_threshold)`` checked as
    every hybrid report needs them: a known rule and threshold, at least 2 labeled queries, runs that share
    queries; ``judge`` is one judge's labels or a list (:func:`relgrade.hybrid.judge_sets`)."""
    check_no_answer(no_answer)
    rel_threshold = check_rel_threshold(rel_threshold)
    human_q, sets = _as_qrels(human, "human"), judge_sets(judge)
    judge_q = union_qrels(sets)
    chosen = parse_metrics(metrics, k)
    labeled, unlabeled = split_queries(human_q, judge_q)
    n = len(labeled)
    if n < 2:
        raise InputError(f"the human labels cover {n} quer{'y' if n == 1 else 'ies'}; PPI++ needs at least 2 "
                         "human-labeled queries (label a random sample of queries, e.g. with relgrade sample)",
                         path=human_q.source)
    population = labeled + unlabeled
    for run in runs:
        if not set(run.query_ids()).intersection(population):
            raise no_shared_queries(run, population, human_q.source)
    return human_q, sets, judge_q, chosen, labeled, unlabeled, rel_threshold


def too_few_answerable(n_answered: int, n: int, path) -> InputError:
    return InputError(f"{n_answered} of the {n} human-labeled queries have a relevant document; the mean over "
                      "answerable queries (--no-answer exclude) needs at least 2: label more queries or use "
                      "--no-answer zero", path=path)


def _intervals(Y, A, J, Ahat, n: int, no_answer: str, alpha: float, bounds=(0.0, 1.0)) -> tuple[Means, Means]:
    """(PPI, human-only) of each column under the rule; the human-only one is the same construction at lam = 0."""
    if no_answer == "zero":
        return (ppi_means(Y, J[:n], J[n:], alpha=alpha, lower=bounds[0], upper=bounds[1]),
                human_only_means(Y, alpha=alpha, lower=bounds[0], upper=bounds[1]))
    args = (Y, A, J[:n], Ahat[:n], J[n:], Ahat[n:])
    return (ratio_means(*args, alpha=alpha, bounds=bounds), ratio_means(*args, alpha=alpha, bounds=bounds, lam=0.0))


def estimate(
    run: Run | Mapping[str, Any],
    human: Qrels | Mapping[str, Mapping[str, int]],
    judge: Any,
    metrics: Sequence[str | Metric] | None = None,
    *,
    k: Sequence[int] | None = None,
    rel_threshold: int = 1,
    no_answer: str = DEFAULT_NO_ANSWER,
    alpha: float = 0.05,
    crossfit: Any = None,
    forbidden: Qrels | Mapping[str, Sequence[str]] | None = None,
    leak_k: int | None = None,
    prediction: str = DEFAULT_PREDICTION,
    folds: int | None = None,
    seed: int = 0,
    target_width: float | None = None,
    calibration: Any = None,
    audit: Any = None,
    design: Any = None,
    active_u: Mapping[str, float] | None = None,
) -> EstimateReport:
    """PPI++ estimate, human-only and judge-only values of each metric (default: as ``evaluate``).

    ``metrics``/``k`` are parsed by :func:`relgrade.metrics.parse_metrics`; ``no_answer`` is the rule
    of every command (module docstring). ``forbidden`` (``{query_id: [doc_id, ...]}`` or a
    :class:`~relgrade.io.Qrels` / golden set with forbidden documents): the run's leaks in its top
    ``leak_k`` (default: the largest metric cutoff) are reported, so the gate keeps its tenant-leak
    guard on estimate reports; without it ``leaks`` is None.

    ``judge``: one judge's labels or a list of several; ``prediction``, ``folds``, ``seed``: how the judges
    predict each query's metric (:func:`relgrade.hybrid.predict`: ``"soft"``, the default, cross-fits a
    calibration of all judges on the human labels; ``"hard"`` is the metric on one judge's grades).

    ``crossfit`` (with ``prediction="hard"``; a :class:`relgrade.calibration.CrossFit` of ``judge`` against
    ``human``, from :func:`relgrade.calibration.crossfit_mapping`): required when the judge's grades were
    mapped by a mapping fitted on these human labels (see :mod:`relgrade.hybrid._predict`).

    ``target_width``: each estimate carries a :class:`~relgrade.hybrid._plan.Plan`, the human-labeled
    queries an interval of that width (before clipping) needs without and with the judge.

    ``calibration`` (a :class:`relgrade._verdict.JudgeVerdict`, from ``relgrade calibrate``): recorded in the
    report's ``judge`` block, so that ``relgrade gate`` knows what the judge is worth (None: not calibrated); so is
    ``audit`` (a :class:`relgrade._verdict.AuditVerdict`, from ``relgrade audit``; None: not audited).

    ``design``: the :class:`relgrade.hybrid.ActiveDesign` of human labels from ``relgrade sample --design active``
    (:func:`relgrade.hybrid.read_design`), estimated by the inverse-probability-weighted PPI++ of
    :mod:`relgrade.hybrid._active`; None: a uniform sample (the PPI++ above). ``active_u`` (with ``target_width``
    and a uniform sample: the judges' per-query uncertainty, :func:`relgrade.hybrid._active.judge_uncertainty`):
    each plan also projects the draws an active second batch would need (``Plan.active_queries``).
    """
    if target_width is not None and not (isinstance(target_width, (int, float)) and 0 < target_width <= 1):
        raise InputError(f"--target-width must be a width in (0, 1] (e.g. 0.1), got {target_width!r}")
    run = run if isinstance(run, Run) else Run.from_dict(run)
    human_q, sets, judge_q, chosen, labeled, unlabeled, rel_threshold = prepare(human, judge, metrics, k, no_answer,
                                                                                rel_threshold, [run])
    n, population = len(labeled), labeled + unlabeled
    in_run = set(run.query_ids())
    Y = per_query_values(human_q, run, chosen, labeled, rel_threshold=rel_threshold)
    A = answerable(human_q, labeled, rel_threshold)
    pred = predict(run, human_q, sets, chosen, rel_threshold=rel_threshold, prediction=prediction, folds=folds,
                   seed=seed, crossfit=crossfit)
    J, Ahat = pred.values[0], pred.answerable
    notes: list[str] = []
    if no_answer == "exclude" and (A > 0).sum() < 2:
        raise too_few_answerable(int((A > 0).sum()), n, human_q.source)
    if design is not None:
        check_pool(design, labeled, unlabeled, human_q.source)
        ppi, classical, _ = active_intervals(Y, A, J, Ahat, n, no_answer, alpha, design, labeled)
    else:
        ppi, classical = _intervals(Y, A, J, Ahat, n, no_answer, alpha)
    judged = np.ones(len(population), bool) if no_answer == "zero" else Ahat > 0.5  # soft: more likely than not
    judge_only = J[judged].mean(axis=0) if judged.any() else None
    if no_answer == "exclude" and n - int((A > 0).sum()):
        notes.append(f"{plural(n - int((A > 0).sum()), 'human-labeled query has', 'human-labeled queries have')} "
                     "no relevant document: kept out of the means (--no-answer exclude)")
    hum_cov, jud_cov = _coverages(human_q, judge_q, run, chosen, labeled, population)
    notes += _coverage_notes(hum_cov, jud_cov, judge_q, labeled, prediction)
    absent = [q for q in labeled if q not in in_run]
    if absent:
        notes.append(f"{len(absent)} of the {plural(n, 'human-labeled query', 'human-labeled queries')} are not in the run (e.g. {', '.join(absent[:3])}): "
                     "they score 0 under human and judge labels alike, which the estimates count as measured; "
                     "check that the run answers the queries that were labeled")
    ignored = sorted(in_run - set(population))
    if ignored:
        notes.append(f"{plural(len(ignored), 'run query has', 'run queries have')} no label from humans or the judge "
                     f"and {'was' if len(ignored) == 1 else 'were'} ignored")
    if not unlabeled:
        notes.append("every query is human-labeled: the PPI++ estimate is the human-only one")

    names, human_names = active_names(no_answer, Y.shape[1]) if design is not None else interval_names(no_answer, Y)
    out = {m.name: _metric(j, m, ppi, classical, n, len(population), judge_only, len(human_q) / n,
                           (names[0], human_names[j]), alpha, target_width, 0 if design is None else design.n)
           for j, m in enumerate(chosen)}
    if target_width is not None and design is None and active_u is not None and unlabeled:
        factor = active_factor(Y, J, ppi.lam, n, population, active_u)
        for j, m in enumerate(chosen):
            e = out[m.name]
            draws = active_draws(float(target_width), n=n, ppi_half=e.half_widths[0], factor=float(factor[j]),
                                 alpha=alpha)
            out[m.name] = replace(e, plan=replace(e.plan, active_queries=draws))
    per_query = {
        "human": {q: {m.name: float(Y[i, j]) for j, m in enumerate(chosen)} for i, q in enumerate(labeled)},
        "judge": {q: {m.name: float(J[i, j]) for j, m in enumerate(chosen)} for i, q in enumerate(population)},
    }
    cut = leak_k or max((m.k for m in chosen if m.k is not None), default=10)
    leaks, fq = run_leaks(forbidden, population, run, cut, rel_threshold)
    settings = {"kind": "estimate", **label_settings(human_q, judge_q, chosen, population, rel_threshold=rel_threshold,
                                                     no_answer=no_answer, alpha=alpha, crossfit=crossfit,
                                                     prediction=pred.description, intervals=names, leak_k=cut,
                                                     forbidden=fq, sets=sets),
                "run": run.name, "human": human_q.source, "judge": judge_q.source}
    if design is not None:
        settings["design"] = {"name": "active", "draws": design.n, "pool": design.pool}
    return EstimateReport(out, labeled, unlabeled, {k_: c.human for k_, c in hum_cov.items()},
                          {k_: c.judge for k_, c in jud_cov.items()}, tuple(notes), per_query, settings, leaks,
                          judge_block(sum(map(len, judge_q.labels.values())), calibration, audit))


def interval_names(no_answer: str, Y: np.ndarray, bounds=(0.0, 1.0)) -> tuple[tuple[str, str], list[str]]:
    """``((PPI, human-only) names the report's settings record, [human-only name of each column])``, from
    :mod:`relgrade._intervals`: the human-only interval of a column is plus-two when its values are 0/1, the
    ratio's under ``--no-answer exclude``."""
    if no_answer == "exclude":
        return (RATIO_INTERVAL, HUMAN_RATIO_INTERVAL), [HUMAN_RATIO_INTERVAL] * Y.shape[1]
    binary = at_bounds(Y, *bounds)
    return (PPI_INTERVAL, MEAN_INTERVAL), [mean_ci(bool(b)).name for b in binary]


def run_leaks(forbidden, population, run: Run, cut: int, rel_threshold: int):
    """``(leaks, forbidden Qrels)``: the run's forbidden documents in its top ``cut``; ``(None, None)`` without
    forbidden documents (the report then carries no leak check, and the gate fails on it)."""
    if forbidden is None:
        return None, None
    fq = forbidden if isinstance(forbidden, Qrels) else (
        forbidden.to_qrels() if callable(getattr(forbidden, "to_qrels", None)) else Qrels({}, forbidden=forbidden))
    return tuple(find_leaks(Qrels({}, topics=population, forbidden=fq.forbidden, queries=fq.queries), run, cut,
                            rel_threshold=rel_threshold)), fq


def label_settings(human_q: Qrels, judge_q: Qrels, chosen, population, *, rel_threshold: int, no_answer: str,
                   alpha: float, crossfit, prediction: dict, intervals, leak_k: int, forbidden,
                   sets=()) -> dict[str, Any]:
    """The settings every hybrid report records (the gate compares labels, queries, threshold and rule;
    ``prediction``: how the judges predicted the metric, :attr:`relgrade.hybrid.Prediction.description`)."""
    return {
        "metrics": [m.name for m in chosen], "rel_threshold": rel_threshold, "no_answer": no_answer, "alpha": alpha,
        "labels": labels_fingerprint(human_q),
        "judge_labels": labels_fingerprint(judge_q) if len(sets) <= 1 else [labels_fingerprint(j.grades) for j in sets],
        "queries": queries_fingerprint(population), "n_labeled": len(human_q.topics), "crossfit": crossfit is not None,
        "leak_k": leak_k, "prediction": prediction, "interval": {"ppi": intervals[0], "human_only": intervals[1]},
        "forbidden": None if forbidden is None else {"path": getattr(forbidden, "source", None),
                                                     "n_docs": sum(map(len, forbidden.forbidden.values()))},
    }


def _metric(j: int, metric: Metric, ppi: Means, classical: Means, n: int, population: int, judge_only, per_query,
            names, alpha: float, target_width, active: int = 0) -> MetricEstimate:
    lam = float(ppi.lam[j])
    half_p, half_h = float(ppi.half[j]), float(classical.half[j])
    skew_h = float(classical.est.skew[j]) if classical.est is not None else 0.0
    parts = list(dict.fromkeys(x for x in (ppi.notes[j], classical.notes[j]) if x))
    value = float(ppi.value[j])
    if not 0.0 <= value <= 1.0:  # PPI's correction can step outside the metric's range
        parts.append(f"the PPI++ estimate {value:.6g} lies outside [0, 1] and is reported as the nearest end")
        value = min(1.0, max(0.0, value))
    lo, hi, hlo, hhi = (min(1.0, max(0.0, float(v))) for v in (ppi.lo[j], ppi.hi[j], classical.lo[j], classical.hi[j]))
    lo, hi = min(lo, value), max(hi, value)
    worth = judge_worth(n=n, human_half_n=half_h, ppi_width=hi - lo, human_width=hhi - hlo, skew_n=skew_h,
                        alpha=alpha)
    plan = None
    if target_width is not None and active:
        plan = plan_active(float(target_width), n=active, population=population, human_half_n=half_h, ppi_half=half_p,
                           alpha=alpha)
    elif target_width is not None:
        moments = column(ppi.est.moments, j) if lam > 0 and ppi.est is not None else None
        plan = plan_labels(float(target_width), n=n, population=population, human_half_n=half_h, skew_n=skew_h,
                           ppi_half=half_p, moments=moments, alpha=alpha)
    return MetricEstimate(metric.name, value, (lo, hi), float(classical.value[j]), (hlo, hhi), n,
                          None if judge_only is None else float(judge_only[j]), population, worth, per_query,
                          "; ".join(parts) or None, lam, (half_p, half_h), names[0], names[1], plan)


def _coverages(human_q, judge_q, run, chosen, labeled, population):
    hum = coverage(human_q, run, "human", chosen, topics=labeled, per_query=False)  # every labeled pair is human
    jud = coverage(judge_q, run, "judge", chosen, topics=population, per_query=False)
    return hum, jud


def _coverage_notes(hum_cov, jud_cov, judge_q, labeled, prediction: str) -> list[str]:
    notes = []
    gaps = {name: c.human for name, c in hum_cov.items() if c.n_docs and c.human < 1}
    if gaps:
        worst = min(gaps, key=gaps.get)
        notes.append(f"humans labeled only {gaps[worst]:.1%} of the {worst} top-k pairs of the labeled queries; "
                     "unlabeled pairs count as not relevant: label every top-k pair of each labeled query")
    shallow = {name: c.judge for name, c in jud_cov.items() if c.n_docs and c.judge < 1}
    if shallow:  # the depth rule: a metric that reads deeper than the judge pooled meets unjudged chunks
        worst = min(shallow, key=shallow.get)
        notes.append(f"the judge graded only {shallow[worst]:.1%} of the chunks {worst} reads; the others count as "
                     "not relevant: judge with --depth at least the metric's cutoff, or the results per query for mrr "
                     "and ndcg without one (or use mrr@k)")
    no_judge = [q for q in labeled if q not in judge_q.labels]
    if no_judge:
        notes.append(f"{plural(len(no_judge), 'human-labeled query has', 'human-labeled queries have')} no judge label "
                     f"(judge values {'0' if prediction == 'hard' else 'from the base rate of pairs no judge graded'} "
                     "there); "
                     f"e.g. {', '.join(no_judge[:3])}")
    return notes
