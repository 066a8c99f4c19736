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
PPI++                       ``estimate``, ``compare --human --judge`` (prediction-powered)
PPI++ joint                 ``rank-systems`` (one lam for every system and pair)
ratio                       ``estimate`` / ``compare`` human-only with ``--no-answer exclude``
PPI++ ratio                 ``estimate`` / ``compare`` / ``rank-systems`` with ``--no-answer exclude``
PPI++ active (ratio)        the same commands on labels of ``relgrade sample --design active``
Student t over queries
and repeats                 ``evaluate`` / ``compare`` with several ``--run`` (repeats of one configuration)
studentized bootstrap       ``calibrate`` (up to 100 queries)
BCa bootstrap               ``calibrate`` (above 100 queries; Spearman, Kendall, AUC, human ceiling)
percentile bootstrap        ``rank-systems`` Kendall tau (descriptive)
clustered Student t,
simultaneous                ``audit`` grade shifts (pairs clustered by query; Bonferroni over the probes)
==========================  =======================================================================

The means' constructions are computed by :mod:`relgrade.stats._augmented` (one construction: the human-only
interval is the PPI++ one at ``lam = 0``), the ratio by :mod:`relgrade.hybrid._ratio`.
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


PLUS_TWO_POWER = 10
"""A graded column with a share s of its values at a bound gets s ** PLUS_TWO_POWER of plus-two's pseudo-observations
in its variance (relgrade.stats._augmented); a 0/1 column (s = 1) all of them."""

STUDENT_T = Construction(
    "Student t", "mean ± t(n−1) · s/√n over queries, with Hall's (1992) skewness correction for a graded metric; "
                 "when every query scores the same, the variance of the sample plus one pseudo-observation at the far "
                 f"bound; with a share s of the queries at a bound, s^{PLUS_TWO_POWER} of plus-two's "
                 "pseudo-observations in the variance")
PLUS_TWO = Construction(
    "plus-two", "for a 0/1 metric: the Student t interval centred on the values plus one pseudo-observation at each "
                "bound (after Agresti & Coull)")
PPI = Construction(
    "PPI++", "prediction-powered (Angelopoulos et al. 2023, power-tuned): the judge's prediction on every query "
             "corrected by the human–prediction difference on the human-labeled queries; lam = N/(N+n) times the "
             "fitted slope shrunk toward 1 (a calibrated prediction's), never chosen by looking at the interval, over "
             "the human-only interval's pseudo-observations, so lam = 0 gives exactly the human-only interval; "
             "narrower on average, not on every sample; Student t with the degrees of freedom the labels spent on lam, "
             "Hall's skewness correction for a graded metric")
PPI_JOINT = Construction(
    "PPI++ joint", "the PPI++ interval with one lam for every system and pair of rank-systems, so a pair's difference "
                   "is the difference of the systems' estimates and never contradicts the ranking")
RATIO = Construction(
    "ratio", "the mean over the queries with a relevant document (--no-answer exclude) from human labels alone: "
             "every ratio r whose Student t interval of Y − r·A holds 0 (test inversion; the PPI++ ratio at lam = 0)")
PPI_RATIO = Construction(
    "PPI++ ratio", "the mean over the queries with a relevant document (--no-answer exclude): every ratio r whose "
                   "PPI++ interval of Y − r·A, at one lam for every r, holds 0 (test inversion)")
PPI_ACTIVE = Construction(
    "PPI++ active", "inverse-probability-weighted PPI++ for human-labeled queries drawn with known unequal "
                    "probabilities q (relgrade sample --design active; Zrnic & Candès 2024): the judge's mean over the "
                    "judged pool plus the mean of (Y − lam·Yhat) / (N·q) over the draws, Student t on those terms "
                    "with the pool's own sampling term; lam the weighted fitted slope shrunk toward 1")
PPI_ACTIVE_RATIO = Construction(
    "PPI++ active ratio", "the PPI++ active estimates of E[Y] and E[A] (--no-answer exclude), their ratio with a "
                          "linearised (delta-method) Student t interval")
HANSEN_HURWITZ = Construction(
    "Hansen-Hurwitz", "the human-only estimate of an active sample: the mean of Y / (N·q) over the draws (Hansen & "
                      "Hurwitz 1943), Student t with the pool's own sampling term (PPI++ active at lam = 0)")
HANSEN_HURWITZ_RATIO = Construction(
    "Hansen-Hurwitz ratio", "the Hansen-Hurwitz estimates of E[Y] and E[A] (--no-answer exclude), their ratio with a "
                            "linearised Student t interval (PPI++ active ratio at lam = 0)")
REPEATS = Construction(
    "Student t over queries and repeats", "the Student t interval over the queries' mean over repeats, widened in "
                                          "quadrature by a Student t interval of the repeat means (relgrade.stats."
                                          "repeat_interval)")
STUDENTIZED = Construction(
    "studentized bootstrap", "bootstrap-t over queries, each replicate standardised by its leave-one-query-out "
                             "jackknife standard error; kappas and alpha on Fisher's atanh scale; neither side "
                             "narrower than Student's t with n − 1 df (relgrade.stats.studentized_ci)")
BCA = Construction(
    "BCa bootstrap", "bias-corrected and accelerated bootstrap over queries, leave-one-query-out jackknife "
                     "acceleration")
PERCENTILE = Construction(
    "percentile bootstrap", "the 2.5% and 97.5% quantiles of the replicates of a bootstrap over queries")

CLUSTERED = Construction(
    "clustered Student t, simultaneous", "mean over pairs ± t(df) · se over G queries, se from the queries' sums "
                                         "of deviations (cluster-robust CR2, Bell & McCaffrey's degrees of freedom, "
                                         "G − 1 for queries of one size), each probe at 1 − α/K for K probes "
                                         "(Bonferroni), so the K intervals hold together with 1 − α = 95% "
                                         "confidence (relgrade.stats.clustered_mean)")

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


CONSTRUCTIONS = (STUDENT_T, PLUS_TWO, PPI, PPI_JOINT, RATIO, PPI_RATIO, PPI_ACTIVE, PPI_ACTIVE_RATIO,
                 HANSEN_HURWITZ, HANSEN_HURWITZ_RATIO, REPEATS,
                 STUDENTIZED, BCA, PERCENTILE, CLUSTERED)


def described(name: str | None) -> str | None:
    """``name (definition)`` of the construction called ``name`` (for a JSON ``method`` field); ``name`` itself
    when it is a combination such as :data:`MEAN_CI`; None for None."""
    if name is None:
        return None
    return next((c.described for c in CONSTRUCTIONS if c.name == name), name)

__all__ = ["BCA", "CLUSTERED", "CONSTRUCTIONS", "Construction", "MEAN_CI", "MEAN_CI_HELP", "PERCENTILE", "PLUS_TWO",
           "HANSEN_HURWITZ", "HANSEN_HURWITZ_RATIO", "PLUS_TWO_POWER", "PPI", "PPI_ACTIVE", "PPI_ACTIVE_RATIO", "PPI_JOINT", "PPI_RATIO", "RATIO", "REPEATS", "STUDENTIZED", "STUDENT_T",
           "calibration_ci", "described", "mean_ci"]
