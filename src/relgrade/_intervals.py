"""One name for each interval construction relgrade reports, defined once.

Every table header, help text, report caption and JSON ``interval`` field takes its words from here, so
no text can call a Student t interval a bootstrap (issue 25). The constructions themselves live in
:mod:`relgrade.stats` (the means, the bootstrap) and :mod:`relgrade.hybrid._ppi` (PPI++); this module holds
only their names and one-line definitions, and imports nothing (``--help`` stays instant).

==========================  =======================================================================
construction                where
==========================  =======================================================================
Student t                   ``evaluate`` means, ``compare`` differences, ``estimate`` human-only
plus-two                    the same, for a 0/1 metric (every query scores 0 or 1)
PPI++                       ``estimate``, ``rank-systems`` (prediction-powered)
PPI++ ratio                 ``estimate`` / ``rank-systems`` with ``--no-answer exclude``
Student t over queries
and repeats                 ``evaluate`` / ``compare`` with several ``--run`` (repeats of one configuration)
Wilson score                ``estimate``, when every labeled answerable query scores the same
studentized bootstrap       ``calibrate`` (up to 100 queries)
BCa bootstrap               ``calibrate`` (above 100 queries; Spearman, Kendall, AUC, human ceiling)
percentile bootstrap        ``rank-systems`` Kendall tau (descriptive)
==========================  =======================================================================
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Construction:
    """An interval construction: ``name`` (what every text calls it) and ``definition`` (one sentence)."""

    name: str
    definition: str

    def __str__(self) -> str:
        return self.name

    @property
    def described(self) -> str:
        """``name (definition)``: for JSON ``method`` fields and report legends."""
        return f"{self.name} ({self.definition})"


STUDENT_T = Construction(
    "Student t", "mean ± t(n−1) · s/√n over queries; when every query scores the same, the variance of the sample "
                 "plus one pseudo-observation at the far bound")
PLUS_TWO = Construction(
    "plus-two", "for a 0/1 metric: the Student t interval centred on the values plus one pseudo-observation at each "
                "bound (after Agresti & Coull)")
PPI = Construction(
    "PPI++", "prediction-powered (Angelopoulos et al. 2023, power-tuned lam): the judge on every query corrected by "
             "the human–judge difference on the human-labeled queries; Student t (n−1 df), a variance floor when the "
             "labeled sample shows no variation, two plus-two pseudo-queries for a 0/1 metric")
PPI_RATIO = Construction(
    "PPI++ ratio", "the mean over the queries with a relevant document (--no-answer exclude): every ratio r whose "
                   "PPI++ interval of Y − r·A holds 0 (test inversion)")
REPEATS = Construction(
    "Student t over queries and repeats", "the Student t interval over the queries' mean over repeats, widened in "
                                          "quadrature by a Student t interval of the repeat means (relgrade.stats."
                                          "repeat_interval)")
WILSON = Construction(
    "Wilson score", "used when every labeled query with a relevant document scores the same (a zero-width interval "
                    "otherwise); conservative, without the judge")
STUDENTIZED = Construction(
    "studentized bootstrap", "bootstrap-t over queries, each replicate standardised by its leave-one-query-out "
                             "jackknife standard error")
BCA = Construction(
    "BCa bootstrap", "bias-corrected and accelerated bootstrap over queries, leave-one-query-out jackknife "
                     "acceleration")
PERCENTILE = Construction(
    "percentile bootstrap", "the 2.5% and 97.5% quantiles of the replicates of a bootstrap over queries")

MEAN_CI = f"{STUDENT_T.name} ({PLUS_TWO.name} for a 0/1 metric)"
"""The interval of every mean over queries and every paired difference (``evaluate``, ``compare``, human-only)."""

MEAN_CI_HELP = (f"The 95% CIs are {STUDENT_T.name} intervals over queries ({STUDENT_T.definition}), {PLUS_TWO.name} "
                "for a 0/1 metric; not a bootstrap")


def mean_ci(binary: bool) -> Construction:
    """The construction of a mean's interval: plus-two for a 0/1 column, else Student t."""
    return PLUS_TWO if binary else STUDENT_T


def calibration_ci(n_queries: int, max_studentized: int) -> Construction:
    """The construction of ``calibrate``'s confusion-matrix statistics: studentized up to ``max_studentized``
    queries, BCa above."""
    return STUDENTIZED if n_queries <= max_studentized else BCA


CONSTRUCTIONS = (STUDENT_T, PLUS_TWO, PPI, PPI_RATIO, REPEATS, WILSON, STUDENTIZED, BCA, PERCENTILE)

__all__ = ["BCA", "CONSTRUCTIONS", "Construction", "MEAN_CI", "MEAN_CI_HELP", "PERCENTILE", "PLUS_TWO", "PPI",
           "PPI_RATIO", "REPEATS", "STUDENTIZED", "STUDENT_T", "WILSON", "calibration_ci", "mean_ci"]
