"""The statistics of an audit: per probe, the mean grade shift over pairs with its interval, and the verdict.

For a probe P compared with its baseline B (:data:`relgrade.audit._probes.PROBES`), each pair i answered by both gives
``d_i = grade_P(i) - grade_B(i)``. The probe reports

* the **shift**, ``mean d_i`` over those pairs, with its interval: clustered by query (pairs of one query share the
  judge's reading of that query; :func:`relgrade.stats.clustered_mean`) and *simultaneous* over the K probes of the
  audit: each at level ``1 - alpha / K`` (Bonferroni), so that on a judge with no bias at all the chance that *any*
  interval misses 0 is at most ``alpha`` (5%), however many probes run;
* the share of pairs whose grade **changed** (``d_i != 0``), and those that rose and fell; the identity probe's
  share is the judge's own noise, the floor every other probe's share is read against;
* a **verdict**: a bias when the interval excludes 0 *and* the shift is at least ``min_shift`` grade (0.25 by
  default) in a direction the probe counts (both, or only a rise for truncation). The second condition keeps a
  shift too small to matter from failing an audit of many pairs.

Every probe but identity is compared with the *re-asked* original (or, for position, the length probe's answer),
not with the stored one: both answers then come from the judge as it is now, so a judge that drifted since the
store was filled shows it once, on the identity probe, instead of on every probe. With a deterministic judge the
re-ask equals the stored answer and the two comparisons coincide.

False alarms: the simultaneous intervals bound the chance of any false alarm by ``alpha`` when each interval holds
its level, and ``min_shift`` lowers it further. ``tests/audit/test_stats.py`` measures it on simulated fair judges
(a re-ask changes 45-55% of the grades, query-level noise, 20 to 200 pairs over 4 to 40 queries): 0.6-4.4% of
audits raise any false alarm over six probes, where 95% intervals per probe reach 19% and intervals that take the
pairs as independent 37%.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from relgrade._words import plural
from relgrade.audit._probes import PROBE
from relgrade.stats import clustered_mean

__all__ = ["DEFAULT_MIN_SHIFT", "ProbeResult", "analyse"]

DEFAULT_MIN_SHIFT = 0.25
"""The smallest mean grade shift an audit calls a bias (``--min-shift``)."""


@dataclass(frozen=True)
class ProbeResult:
    """One probe's outcome (module docstring). ``missing``: pairs without both answers (unjudged, failed, not yet
    judged); ``not_applicable``: pairs the perturbation does not apply to."""

    probe: str
    baseline: str
    n_pairs: int
    n_queries: int
    shift: float | None
    ci95: tuple[float, float] | None
    changed: float | None
    rose: float | None
    fell: float | None
    bias: bool
    verdict: str
    missing: int = 0
    not_applicable: int = 0
    floored: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"probe": self.probe, "baseline": self.baseline, "what": PROBE[self.probe].what,
                "n_pairs": self.n_pairs, "n_queries": self.n_queries, "shift": self.shift,
                "ci95": None if self.ci95 is None else list(self.ci95), "changed": self.changed, "rose": self.rose,
                "fell": self.fell, "bias": self.bias, "verdict": self.verdict, "missing": self.missing,
                "not_applicable": self.not_applicable, "variance_floor": self.floored}


def _verdict(probe: str, shift: float, lo: float, hi: float, min_shift: float) -> tuple[bool, str]:
    p = PROBE[probe]
    way = "rise" if shift > 0 else "fall"
    moved = f"grades {way} by {abs(shift):.2f} when {p.when}"
    excludes = lo > 0 or (hi < 0 and p.sides == "both")
    if excludes and abs(shift) >= min_shift:
        if probe == "identity":
            return True, (f"the judge does not reproduce its stored grades: {moved} (the model changed behind its "
                          "name, or its answers vary)")
        return True, f"bias: {moved}"
    if hi < 0 and p.sides == "up":
        return False, f"no bias: {moved}, as a judge that reads the whole passage does (only a rise is a bias)"
    if excludes:
        return False, f"no bias of {min_shift:g} grade or more: {moved}, under --min-shift"
    return False, "no bias: the interval holds 0"


def analyse(grades: Mapping[str, Sequence[int | None]], query_ids: Sequence[str], *, probes: Sequence[str],
            min_shift: float = DEFAULT_MIN_SHIFT, alpha: float = 0.05, max_grade: int = 3,
            not_applicable: Mapping[str, int] | None = None) -> tuple[ProbeResult, ...]:
    """The :class:`ProbeResult` of each of ``probes`` (module docstring).

    ``grades``: per answer, one grade or None per sampled pair (``original``: the stored answers; ``identity``: the
    re-asked ones; each other probe: its perturbed passages); ``query_ids``: each pair's query. ``alpha``: the
    chance of any false alarm on a fair judge, split over the probes. ``not_applicable``: pairs per probe whose
    passage it cannot perturb (their grade is None; counted apart from the missing answers).
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    qids = np.asarray(list(query_ids), dtype=object)
    k = len(probes)
    out = []
    for probe in probes:
        base = PROBE[probe].baseline
        a, b = (np.array([np.nan if g is None else g for g in grades[name]], dtype=float) for name in (probe, base))
        both = ~np.isnan(a) & ~np.isnan(b)
        skipped = (not_applicable or {}).get(probe, 0)
        missing = int(len(a) - both.sum()) - skipped
        d = a[both] - b[both]
        n_q = len(set(qids[both]))
        if n_q < 2:
            out.append(ProbeResult(probe, base, int(both.sum()), n_q, None, None, None, None, None, False,
                                   f"not measured: {plural(n_q, 'query has', 'queries have')} both answers; an "
                                   "interval needs 2", missing, skipped))
            continue
        est = clustered_mean(d, qids[both], alpha=alpha / k, lower=-max_grade, upper=max_grade)
        bias, text = _verdict(probe, est.value, est.lo, est.hi, min_shift)
        out.append(ProbeResult(probe, base, len(d), n_q, est.value, (est.lo, est.hi), float((d != 0).mean()),
                               float((d > 0).mean()), float((d < 0).mean()), bias, text, missing, skipped,
                               est.floored))
    return tuple(out)
