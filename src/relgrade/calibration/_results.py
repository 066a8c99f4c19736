"""What calibration reports: a statistic with its CI, the verdict, the human ceiling, and the whole report.

Plain frozen dataclasses with ``to_dict``; the statistics that fill them live in
:mod:`relgrade.calibration._agreement` (judge vs humans) and :mod:`relgrade.calibration._ceiling`
(human vs human), the verdict text in :mod:`relgrade.calibration._verdict`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from relgrade._intervals import BCA, calibration_ci

Labels = Mapping[str, Mapping[str, int]]
Scores = Mapping[str, Mapping[str, float]]

DEFAULT_SCALE = (0, 1, 2, 3)
TARGET_HALFWIDTH = 0.05
FEW_QUERIES = 30  # below this many queries the report calls its CIs approximate
STUDENTIZED_MAX_QUERIES = 100  # above: BCa (cost O(B Q) instead of O(B Q^2); few-cluster bias gone by then)
NO_CI_FEW = "it needs at least 2 queries"
NO_CI_CONSTANT = ("κ is the same on every resample of queries (a judge with one grade on every labeled pair has κ 0 "
                  "by construction)")
APPROX_NOTE = ("{nq} queries: the 95% CIs ({method} over queries) are approximate below {few} "
               "queries; label more queries for intervals you can lean on")


@dataclass(frozen=True)
class Agreement:
    """A statistic, its 95% query-bootstrap CI (studentized or BCa; None when not computable) and its pairs.

    ``value`` is NaN when the statistic is undefined (e.g. kappa when both raters used one grade only).
    """

    value: float
    ci95: tuple[float, float] | None
    n: int

    def to_dict(self) -> dict[str, Any]:
        value = None if not math.isfinite(self.value) else round(float(self.value), 6)
        ci = None if self.ci95 is None else [round(self.ci95[0], 6), round(self.ci95[1], 6)]
        return {"value": value, "ci95": ci, "n": self.n}


@dataclass(frozen=True)
class Verdict:
    """Landis & Koch band of the *unweighted* Cohen's kappa, its CI, what to do, and labels needed.

    ``labels_needed`` is the total number of labeled pairs for a CI half-width of ``target``, from
    the half-width scaling as ``1 / sqrt(n)``: ``n_needed = n * (halfwidth / target)^2``.
    """

    band: str
    statistic: str
    value: float
    ci95: tuple[float, float] | None
    action: str
    text: str
    labels_needed: int | None
    more_labels: int | None
    target_halfwidth: float = TARGET_HALFWIDTH
    no_ci: str | None = None  # why there is no CI (NO_CI_FEW, NO_CI_CONSTANT), when there is none

    def to_dict(self) -> dict[str, Any]:
        return {
            "band": self.band,
            "statistic": self.statistic,
            "value": None if not math.isfinite(self.value) else round(self.value, 6),
            "ci95": None if self.ci95 is None else [round(x, 6) for x in self.ci95],
            "action": self.action,
            "text": self.text,
            "labels_needed": self.labels_needed,
            "more_labels": self.more_labels,
            "target_halfwidth": self.target_halfwidth,
        }


@dataclass(frozen=True)
class HumanAgreement:
    """Human-human agreement (the ceiling) on pairs labeled by two or more annotators.

    ``pairwise_kappa`` is Cohen's kappa averaged over annotator pairs (each on the items both
    labeled), ``alpha`` Krippendorff's ordinal alpha across all annotators; ``judge_kappa`` the
    judge's kappa against each annotator on the same items, averaged; ``gap`` is
    ``pairwise_kappa - judge_kappa`` with a paired bootstrap CI.
    """

    n_annotators: int
    n_pairs: int
    n_queries: int
    pairwise_kappa: Agreement
    alpha: Agreement
    judge_kappa: Agreement | None
    gap: Agreement | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_annotators": self.n_annotators,
            "n_pairs": self.n_pairs,
            "n_queries": self.n_queries,
            "pairwise_kappa": self.pairwise_kappa.to_dict(),
            "krippendorff_alpha": self.alpha.to_dict(),
            "judge_kappa": None if self.judge_kappa is None else self.judge_kappa.to_dict(),
            "gap": None if self.gap is None else self.gap.to_dict(),
        }


@dataclass(frozen=True)
class CalibrationReport:
    """Everything ``relgrade calibrate`` says about one judge against the human labels."""

    judge: str
    model: str | None
    scale: tuple[int, ...]
    binary_threshold: int
    n_pairs: int
    n_queries: int
    kappa: Agreement
    kappa_linear: Agreement
    kappa_quadratic: Agreement
    binary_kappa: Agreement
    krippendorff_alpha: Agreement
    accuracy: Agreement
    leniency: Agreement
    confusion_matrix: tuple[tuple[int, ...], ...]
    per_grade: Mapping[int, Mapping[str, Agreement]]
    judge_distribution: tuple[int, ...]
    human_distribution: tuple[int, ...]
    continuous: Mapping[str, Agreement]
    verdict: Verdict
    human_agreement: HumanAgreement | None = None
    n_unjudged: int = 0
    n_judge_only: int = 0
    n_human_only: int = 0
    notes: tuple[str, ...] = ()
    n_boot: int = 1000
    seed: int = 0
    mapping: Any = None  # a GradeMapping attached by the caller (see relgrade.calibration.fit_mapping)
    weighted: bool = False  # statistics from the inclusion-weighted confusion matrix
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ci_method(self):
        """The construction (:mod:`relgrade._intervals`) of the confusion-matrix statistics' CIs: studentized
        bootstrap up to :data:`STUDENTIZED_MAX_QUERIES` queries, BCa above."""
        return calibration_ci(self.n_queries, STUDENTIZED_MAX_QUERIES)

    def row_normalised(self) -> list[list[float | None]]:
        out = []
        for row in self.confusion_matrix:
            total = sum(row)
            out.append([round(c / total, 6) if total else None for c in row])
        return out

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "judge": self.judge,
            "model": self.model,
            "scale": list(self.scale),
            "binary_threshold": self.binary_threshold,
            "n_pairs": self.n_pairs,
            "n_queries": self.n_queries,
            "n_unjudged": self.n_unjudged,
            "n_judge_only": self.n_judge_only,
            "n_human_only": self.n_human_only,
        }
        for name in ("kappa", "kappa_linear", "kappa_quadratic", "binary_kappa", "krippendorff_alpha", "accuracy"):
            out[name] = getattr(self, name).to_dict()
        out["leniency"] = self.leniency.to_dict()
        out["confusion_matrix"] = {
            "rows": "human",
            "columns": "judge",
            "labels": list(self.scale),
            "counts": [list(r) for r in self.confusion_matrix],
            "row_normalised": self.row_normalised(),
        }
        out["per_grade"] = {
            str(g): {k: v.to_dict() for k, v in stats.items()} for g, stats in self.per_grade.items()
        }
        out["distribution"] = {
            "judge": dict(zip(map(str, self.scale), self.judge_distribution)),
            "human": dict(zip(map(str, self.scale), self.human_distribution)),
        }
        for name, value in self.continuous.items():
            out[name] = value.to_dict()
        out["verdict"] = self.verdict.to_dict()
        out["human_agreement"] = None if self.human_agreement is None else self.human_agreement.to_dict()
        if self.mapping is not None:
            out["mapping"] = self.mapping.to_dict()
        out["notes"] = list(self.notes)
        out["bootstrap"] = {"n_boot": self.n_boot, "seed": self.seed, "resamples": "queries",
                            "interval": self.ci_method.described, "interval_continuous_and_human": BCA.described,
                            "approximate": self.n_queries < FEW_QUERIES}
        out["weighted"] = self.weighted
        out.update(self.extra)
        return out
