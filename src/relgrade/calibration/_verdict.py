"""The plain verdict on a judge: Landis & Koch band of the unweighted kappa, what to do, and labels needed."""

from __future__ import annotations

import math

from relgrade._verdict import ACTIONS
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
            target: float = TARGET_HALFWIDTH, method: str | None = None) -> Verdict:
    """Plain verdict on the unweighted kappa, e.g. ``fair (κ 0.29, 95% CI 0.24–0.34): do not use judge labels alone``.

    ``method`` (e.g. ``"BCa"``) names the interval in the text; below :data:`FEW_QUERIES` queries the text
    says the CI is approximate.
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
        if half <= target + 1e-9:
            text += f"; the CI is already within ±{target:.2f}"
            needed, more = n_pairs, 0
        else:
            factor = (half / target) ** 2
            needed = int(math.ceil(n_pairs * factor - 1e-9))
            more = needed - n_pairs
            more_queries = int(math.ceil(n_queries * factor - 1e-9)) - n_queries
            text += (f"; about {more} more labeled pairs (≈ {more_queries} more queries at the current pairs per "
                     f"query) would shrink the CI to ±{target:.2f}")
    if model and model.startswith("local/"):
        text += "; " + LOCAL_NOTE.format(model=model)
    return Verdict(band, "kappa", kappa.value, ci, action, text, needed, more, target, no_ci)
