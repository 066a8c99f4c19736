"""``compare`` with judge labels: the paired difference of two runs as a PPI++ target (A/B with a judge).

The guide's loop is "change one component, keep what improves the metric". Humans labeled a random sample
of the queries, the judge all of them; per query the difference ``D = metric(B) - metric(A)`` under human
labels is the labeled value and the judge's difference ``Dhat`` its prediction, so the PPI++ interval of
:mod:`relgrade.hybrid._ppi` on [-1, 1] (``--no-answer exclude``: the ratio of :mod:`relgrade.hybrid._ratio`,
the same answerable queries for both runs) gives the difference with its interval, beside the human-only one
(the same construction at ``lam = 0``: ``relgrade compare --qrels`` on the labeled queries gives it with
``--no-answer zero``) and the judge-only difference. ``a`` and ``b`` are each run's PPI++ value at the
difference's ``lam`` (their difference is the estimate of ``B - A``; each is reported within [0, 1]).

``relgrade gate --paired`` gates the candidate B on the difference (or on the upper end of its interval,
``--beyond-ci``); the report carries the same settings as ``estimate`` and B's leaks (``forbidden``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from relgrade._intervals import described
from relgrade._verdict import WORTH_WITHHELD, judge_block, worth_withheld
from relgrade._words import plural
from relgrade.io import Qrels, Run
from relgrade.metrics import Metric
from relgrade.metrics._evaluate import text_table
from relgrade.metrics._settings import DEFAULT_NO_ANSWER
from relgrade.hybrid._active import active_intervals, active_names, active_value, check_pool
from relgrade.hybrid._estimate import (_intervals, estimate, interval_names, label_settings, prepare, run_leaks,
                                       too_few_answerable)
from relgrade.hybrid._predict import DEFAULT_PREDICTION, predict
from relgrade.hybrid._values import answerable, per_query_values
from relgrade.hybrid._estimate_report import WIDTH_HELP, shown_ratio as _shown_ratio, worth_cell
from relgrade.hybrid._plan import judge_worth
from relgrade.hybrid._ppi import ppi_point


OWN_NOTE = ("B - A is estimated with one lam for the difference and one prediction model over both runs' pools, so "
            "its A and B can differ from each run's own estimate")


@dataclass(frozen=True)
class DifferenceEstimate:
    """``B - A`` for one metric: PPI++ with its interval, human-only and judge-only, and the judge's worth."""

    metric: str
    a: float
    b: float
    diff: float
    ci95: tuple[float, float]
    human_only: float
    human_ci95: tuple[float, float]
    judge_only: float | None
    n_labeled: int
    n_queries: int
    lam: float
    half_widths: tuple[float, float]
    effective_n: float | None
    interval: str
    human_interval: str
    note: str | None = None
    own: tuple[float, float] | None = None  # each run's own estimate, as relgrade estimate gives it (issue 36)

    @property
    def width_ratio(self) -> float | None:
        """PPI / human-only interval width, both as shown (:mod:`relgrade.hybrid._estimate_report`)."""
        return _shown_ratio(self.ci95, self.human_ci95)

    def to_dict(self) -> dict[str, Any]:
        return {"ppi": {"a": self.a, "b": self.b, "value": self.diff, "ci95": list(self.ci95), "lam": self.lam,
                        "interval": self.interval, "method": described(self.interval),
                        "own": None if self.own is None else {"a": self.own[0], "b": self.own[1]},
                        "why_a_b_differ_from_own": OWN_NOTE},
                "human_only": {"value": self.human_only, "ci95": list(self.human_ci95), "n_queries": self.n_labeled,
                               "interval": self.human_interval, "method": described(self.human_interval)},
                "judge_only": {"value": self.judge_only, "n_queries": self.n_queries},
                "width_ratio": self.width_ratio, "effective_human_queries": self.effective_n, "note": self.note}


@dataclass(frozen=True)
class PairedReport:
    """What :func:`compare_runs` returns; ``to_dict`` is ``relgrade compare --human --judge --json``."""

    a: str
    b: str
    differences: dict[str, DifferenceEstimate]
    labeled: tuple[str, ...]
    unlabeled: tuple[str, ...]
    notes: tuple[str, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)
    leaks: tuple[dict[str, Any], ...] | None = None  # B's leaks; None: no forbidden documents were given
    judge: dict[str, Any] | None = None  # judge labels and the judge's calibration (relgrade._verdict.judge_block)

    def to_dict(self) -> dict[str, Any]:
        aggregate = {m: d.to_dict() for m, d in self.differences.items()}
        if worth_withheld(self.judge):
            for entry in aggregate.values():
                entry["effective_human_queries"], entry["judge_worth"] = None, "withheld"
        return {"kind": "compare", "a": self.a, "b": self.b,
                "aggregate": aggregate,
                "n_labeled": len(self.labeled), "n_unlabeled": len(self.unlabeled),
                "leaks": None if self.leaks is None else [dict(x) for x in self.leaks],
                "notes": list(self.notes), "settings": self.settings, "judge": self.judge}

    def table(self) -> str:
        head = ("metric", "B-A PPI++", "95% CI", "B-A human-only", "95% CI", "judge-only", "width", "judge worth")
        rows = []
        for name, d in self.differences.items():
            worth = worth_cell(d.effective_n, d.n_labeled, d.lam, d.width_ratio, worth_withheld(self.judge))
            rows.append((name, f"{d.diff:+.4f}", f"[{d.ci95[0]:+.4f}, {d.ci95[1]:+.4f}]", f"{d.human_only:+.4f}",
                         f"[{d.human_ci95[0]:+.4f}, {d.human_ci95[1]:+.4f}]",
                         "n/a" if d.judge_only is None else f"{d.judge_only:+.4f}",
                         "" if d.width_ratio is None else f"{d.width_ratio:.2f}", worth))
        n, N = len(self.labeled), len(self.labeled) + len(self.unlabeled)
        own = [f"{name} A {d.own[0]:.4f}, B {d.own[1]:.4f}" for name, d in self.differences.items() if d.own]
        return "\n".join([f"B - A over {plural(n, 'human-labeled query', 'human-labeled queries')} of {N}; 95% intervals",
                          text_table(head, rows, "<><><>><"), WIDTH_HELP]
                         + ([WORTH_WITHHELD] if worth_withheld(self.judge) else [])
                         + ([f"each run's own estimate (relgrade estimate): {'; '.join(own)}; {OWN_NOTE}"] if own else []))


def compare_runs(
    run_a: Run | Mapping[str, Any],
    run_b: Run | Mapping[str, Any],
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
    calibration: Any = None,
    audit: Any = None,
    design: Any = None,
) -> PairedReport:
    """PPI++ difference ``B - A`` of each metric with its interval, beside the human-only and judge-only ones;
    ``judge``, ``prediction``, ``folds``, ``seed`` and ``crossfit`` as for :func:`relgrade.hybrid.estimate` (one
    prediction model for both runs); ``calibration`` (the judge's :class:`relgrade._verdict.JudgeVerdict`, or None)
    is recorded in the report's ``judge`` block, which ``relgrade gate --paired`` reads, with ``audit`` (the judge's
    :class:`relgrade._verdict.AuditVerdict`, or None); ``design``: an active sample's, as for ``estimate``."""
    runs = [r if isinstance(r, Run) else Run.from_dict(r, name=name) for r, name in ((run_a, "A"), (run_b, "B"))]
    human_q, sets, judge_q, chosen, labeled, unlabeled, rel_threshold = prepare(human, judge, metrics, k, no_answer,
                                                                                rel_threshold, runs)
    n, population = len(labeled), labeled + unlabeled
    Y = [per_query_values(human_q, r, chosen, labeled, rel_threshold=rel_threshold) for r in runs]
    pred = predict(runs, human_q, sets, chosen, rel_threshold=rel_threshold, prediction=prediction, folds=folds,
                   seed=seed, crossfit=crossfit)
    P = pred.values  # runs x queries x metrics
    A, Ahat = answerable(human_q, labeled, rel_threshold), pred.answerable
    if no_answer == "exclude" and (A > 0).sum() < 2:
        raise too_few_answerable(int((A > 0).sum()), n, human_q.source)
    D, Dj = Y[1] - Y[0], P[1] - P[0]
    if design is not None:
        check_pool(design, labeled, unlabeled, human_q.source)
        ppi, human_only, raw = active_intervals(D, A, Dj, Ahat, n, no_answer, alpha, design, labeled, (-1.0, 1.0))
        names, human_names = active_names(no_answer, D.shape[1])
    else:
        ppi, human_only = _intervals(D, A, Dj, Ahat, n, no_answer, alpha, bounds=(-1.0, 1.0))
        names, human_names = interval_names(no_answer, D, bounds=(-1.0, 1.0))
    judged = np.ones(len(population), bool) if no_answer == "zero" else Ahat > 0.5  # soft: more likely than not
    own = [estimate(r, human_q, sets, chosen, rel_threshold=rel_threshold, no_answer=no_answer, alpha=alpha,
                    crossfit=crossfit, prediction=prediction, folds=folds, seed=seed, design=design).estimates
           for r in runs]
    out = {}
    for j, metric in enumerate(chosen):
        lam = float(ppi.lam[j])
        each = ([active_value(Y[i][:, j], P[i][:, j], A, Ahat, design, labeled, lam, raw.lam_a, no_answer)
                 for i in (0, 1)] if design is not None
                else [_run_value(Y[i][:, j], P[i][:, j], A, Ahat, n, lam, no_answer) for i in (0, 1)])
        half = (float(ppi.half[j]), float(human_only.half[j]))
        parts = list(dict.fromkeys(x for x in (ppi.notes[j], human_only.notes[j]) if x))
        diff = min(1.0, max(-1.0, each[1] - each[0]))
        for name, v in zip("AB", each):
            if not 0.0 <= v <= 1.0:  # the PPI correction can step outside the metric's range
                parts.append(f"the PPI++ value of {name}, {v:.6g}, lies outside [0, 1] and is reported as the nearest "
                             "end (the difference is not clipped)")
        each = [min(1.0, max(0.0, v)) for v in each]
        note = "; ".join(parts) or None
        ci = (min(float(ppi.lo[j]), diff), max(float(ppi.hi[j]), diff))
        worth = judge_worth(n=n, human_half_n=half[1], ppi_width=ci[1] - ci[0],
                            human_width=float(human_only.hi[j] - human_only.lo[j]),
                            skew_n=float(human_only.est.skew[j]) if human_only.est is not None else 0.0, alpha=alpha)
        out[metric.name] = DifferenceEstimate(
            metric.name, each[0], each[1], diff, ci,
            float(human_only.value[j]), (float(human_only.lo[j]), float(human_only.hi[j])),
            float(Dj[judged, j].mean()) if judged.any() else None, n, len(population), lam, half,
            worth, names[0], human_names[j], note, (own[0][metric.name].ppi, own[1][metric.name].ppi))
    notes = []
    absent = [q for q in labeled if any(q not in set(r.query_ids()) for r in runs)]
    if absent:
        notes.append(f"{len(absent)} of the {n} human-labeled queries are missing from a run (e.g. {absent[0]}): they "
                     "score 0 there under human and judge labels alike")
    cut = leak_k or max((m.k for m in chosen if m.k is not None), default=10)
    leaks, fq = run_leaks(forbidden, population, runs[1], cut, rel_threshold)
    settings = {"kind": "compare", "paired": True,
                **label_settings(human_q, judge_q, chosen, population, rel_threshold=rel_threshold, no_answer=no_answer,
                                 alpha=alpha, crossfit=crossfit, prediction=pred.description, intervals=names,
                                 leak_k=cut, forbidden=fq, sets=sets),
                "runs": [runs[0].name, runs[1].name]}
    if design is not None:
        settings["design"] = {"name": "active", "draws": design.n, "pool": design.pool}
    return PairedReport(runs[0].name, runs[1].name, out, labeled, unlabeled, tuple(notes), settings, leaks,
                        judge_block(sum(map(len, judge_q.labels.values())), calibration, audit))


def _run_value(y, yhat, A, Ahat, n: int, lam: float, no_answer: str) -> float:
    """One run's PPI++ value at ``lam``: the mean, or the ratio over answerable queries (linear in the metric at a
    fixed ``lam``, so two runs' values differ by exactly their difference's estimate)."""
    value = float(ppi_point(y, yhat[:n], yhat[n:], lam)) if len(yhat) > n else float(y.mean())
    if no_answer == "zero":
        return value
    a_hat = float(ppi_point(A, Ahat[:n], Ahat[n:], lam)) if len(Ahat) > n else float(A.mean())
    return value / a_hat if a_hat > 0 else float(y.mean() / A.mean())
