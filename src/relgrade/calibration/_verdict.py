"""The plain verdict on a judge: Landis & Koch band of the unweighted kappa, what to do, and labels needed."""

from __future__ import annotations

import math

from relgrade._verdict import ACTIONS, DO_NOT_USE
from relgrade.calibration._results import FEW_QUERIES, NO_CI_CONSTANT, NO_CI_FEW, TARGET_HALFWIDTH, Agreement, Verdict

# Landis & Koch (1977), "The measurement of observer agreement for categorical data", Biometrics 33:159-174.
BANDS = (
    (0.0, "poor"),
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
    (1.0, "almost perfect"),
)
LOCAL_NOTE = (
    "the judge is the embedded local model ({model}): a plumbing default with near-zero agreement, "
    "unreliable for decisions; use a stronger judge model for real labels"
)


def band_of(value: float) -> str:
    """Landis & Koch band: <0 poor, <=0.20 slight, <=0.40 fair, <=0.60 moderate, <=0.80 substantial, else almost perfect."""
    if not math.isfinite(value):
        return "undefined"
    if value < 0:
        return "poor"
    for upper, name in BANDS[1:]:
        if value <= upper + 1e-12:
            return name
    return "almost perfect"


def verdict(kappa: Agreement, *, n_pairs: int, n_queries: int, model: str | None = None,
            target: float = TARGET_HALFWIDTH, method: str | None = None, unlabeled_queries: int | None = None,
            unlabeled_pairs: int | None = None) -> Verdict:
    """Plain verdict on the unweighted kappa, e.g. ``fair (κ 0.29, 95% CI 0.24–0.34): do not use judge labels alone``.

    ``method`` (e.g. ``"BCa"``) names the interval in the text; below :data:`FEW_QUERIES` queries the text
    says the CI is approximate. The advice on more labels (:func:`_more_labels`) is capped at the ``unlabeled_queries``
    (holding ``unlabeled_pairs``) the judge graded and humans did not, when known; a judge whose whole CI lies in a
    "do not use" band gets no such advice: no number of labels rescues it.
    """
    band = band_of(kappa.value)
    if band == "undefined":
        text = "undefined: kappa cannot be computed (both raters used a single grade); label a more varied sample"
        return Verdict(band, "kappa", kappa.value, kappa.ci95, "label a more varied sample", text, None, None, target)
    action = ACTIONS[band]
    ci = kappa.ci95
    kind = f"{method} " if method else ""
    no_ci = None if ci else NO_CI_FEW if n_queries < 2 else NO_CI_CONSTANT
    ci_text = f", 95% {kind}CI {ci[0]:.2f}–{ci[1]:.2f}" if ci else f", no CI: {no_ci}"
    text = f"{band} (κ {kappa.value:.2f}{ci_text}): {action}"
    if ci and n_queries < FEW_QUERIES:
        text += f"; with {n_queries} queries the CI is approximate"
    needed = more = None
    if ci:
        lo_band, hi_band = band_of(ci[0]), band_of(ci[1])
        if lo_band != hi_band:
            text += f"; the CI spans {lo_band} to {hi_band}"
        half = (ci[1] - ci[0]) / 2
        if hi_band in DO_NOT_USE:
            text += (f"; no number of labels rescues this judge: its whole CI is at or below {BANDS[1][0]:.2f} "
                     f"({hi_band}), and more labels would only narrow it there; use a stronger judge model")
        elif half <= target + 1e-9:
            text += f"; the CI is already within ±{target:.2f}"
            needed, more = n_pairs, 0
        else:
            advice, needed, more = _more_labels(half, target, n_pairs, n_queries, unlabeled_queries, unlabeled_pairs)
            text += advice
    if model and model.startswith("local/"):
        text += "; " + LOCAL_NOTE.format(model=model)
    return Verdict(band, "kappa", kappa.value, ci, action, text, needed, more, target, no_ci)


def _more_labels(half: float, target: float, n_pairs: int, n_queries: int, unlabeled_queries: int | None,
                 unlabeled_pairs: int | None) -> tuple[str, int, int]:
    """``(advice, labels needed, more labels)`` for a CI of half-width ``half`` to reach ``target``, from the
    half-width scaling as ``1 / sqrt(n)``, and no more than the queries left unlabeled hold."""
    factor = (half / target) ** 2
    needed = int(math.ceil(n_pairs * factor - 1e-9))
    more = needed - n_pairs
    more_queries = int(math.ceil(n_queries * factor - 1e-9)) - n_queries
    if unlabeled_queries is None or more_queries <= unlabeled_queries:
        return (f"; about {more} more labeled pairs (≈ {more_queries} more queries at the current pairs per query) "
                f"would shrink the CI to ±{target:.2f}", needed, more)
    if unlabeled_queries == 0:
        return (f"; every query the judge graded is labeled already: only new queries (judged, then labeled) would "
                f"shrink the CI towards ±{target:.2f}", n_pairs, 0)
    pairs = unlabeled_pairs if unlabeled_pairs is not None else round(n_pairs / n_queries * unlabeled_queries)
    reach = half * math.sqrt(n_queries / (n_queries + unlabeled_queries))
    return (f"; ±{target:.2f} would need about {more_queries} more queries, but only {unlabeled_queries} the judge "
            f"graded are unlabeled: labeling all of them ({pairs} pairs) would shrink the CI to about ±{reach:.2f}",
            n_pairs + pairs, pairs)
