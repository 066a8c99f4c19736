"""The gate on a paired report (``relgrade compare --human --judge --json``): candidate B against baseline A.

Rule, per gated metric, with ``d`` the PPI++ difference ``B - A`` (:mod:`relgrade.hybrid._ab`):

    -d > max_drop                          (default)
    -(upper end of d's 95% CI) > max_drop  (``beyond_ci=True``)

or B lists a leak; a report without leak information fails (the tenant-leak guard is never silently off).
Both runs were scored on the same labels and queries by construction, so there is no second report to
compare settings with; the report's own numbers are checked (finite, ordered, in range) and refused with
:class:`~relgrade.InputError` (the CLI's exit 2) when malformed, as :func:`relgrade.gate` does.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade.gating._gate import (DEFAULT_GATE_METRICS, DEFAULT_MAX_DROP, GateResult, GateRow, _check_report,
                                   leak_check, read_report, report_leaks)

_TOL = 1e-12
_WRITER = "'relgrade compare --human H --judge J --json'"
_FIX = f"re-write it with {_WRITER}"


def _number(value: Any, what: str, name: str, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{what} is {value!r}, not a finite number; the report is malformed: {_FIX}", path=name)
    if not lo - _TOL <= value <= hi + _TOL:
        raise InputError(f"{what} is {value!r}, outside [{lo:g}, {hi:g}]; the report is malformed: {_FIX}", path=name)
    return float(value)


def _row(data: dict, key: str, name: str) -> tuple[float, float, float, float]:
    """(a, b, difference, upper end of its 95% CI) of ``key``, checked."""
    agg = data["aggregate"]
    if key not in agg:
        raise InputError(f"metric {key!r} is not in this report (it has {', '.join(sorted(map(str, agg))) or 'none'}); "
                         "re-run compare with --metric or gate on another --metric", path=name)
    ppi = agg[key].get("ppi") if isinstance(agg[key], dict) else None
    if not isinstance(ppi, dict) or not isinstance(ppi.get("ci95"), (list, tuple)) or len(ppi["ci95"]) != 2:
        raise InputError(f"metric {key!r} has no PPI++ difference with a 95% interval; {_FIX}", path=name)
    a = _number(ppi.get("a"), f"metric {key!r} value of A", name, 0.0, 1.0)
    b = _number(ppi.get("b"), f"metric {key!r} value of B", name, 0.0, 1.0)
    d = _number(ppi.get("value"), f"metric {key!r} difference", name, -1.0, 1.0)
    lo = _number(ppi["ci95"][0], f"metric {key!r} ci95 lower end", name, -1.0, 1.0)
    hi = _number(ppi["ci95"][1], f"metric {key!r} ci95 upper end", name, -1.0, 1.0)
    if not (lo <= d + _TOL and d <= hi + _TOL):
        raise InputError(f"metric {key!r} ci95 [{lo}, {hi}] does not hold its difference {d}; the report is "
                         f"malformed: {_FIX}", path=name)
    return a, b, d, hi


def gate_paired(report: str | Path | dict, *, metrics=None, max_drop: float = DEFAULT_MAX_DROP,
                beyond_ci: bool = False, accept_judge: bool = False, no_tenants: bool = False) -> GateResult:
    """Gate candidate B of a paired report (a path or its dict) on its difference to A (module docstring).

    ``accept_judge`` and ``no_tenants`` as in :func:`relgrade.gate`: the judge's calibration verdict recorded in
    the report fails the gate when it says not to use the judge's labels (unless accepted), and a report without
    leak information passes the leak check only when the runs serve no tenants."""
    from relgrade.metrics._measures import parse_metrics

    if isinstance(max_drop, bool) or not isinstance(max_drop, (int, float)) or not math.isfinite(max_drop) or max_drop < 0:
        raise InputError(f"--max-drop must be a finite number >= 0 (e.g. {DEFAULT_MAX_DROP}), got {max_drop!r}")
    name = str(report) if isinstance(report, (str, Path)) else "paired report"
    data = read_report(report) if isinstance(report, (str, Path)) else _check_report(report, name)
    from relgrade.gating._consistency import require_kind

    require_kind(data, name, ("compare",))
    settings = data.get("settings") if isinstance(data, dict) else None
    if not isinstance(settings, dict) or settings.get("kind") != "compare" or not settings.get("paired"):
        raise InputError(f"not a paired report; --paired reads the JSON of {_WRITER}", path=name)
    runs = ["A", "B"] if settings.get("runs") is None else settings["runs"]
    if not (isinstance(runs, list) and len(runs) == 2 and all(isinstance(r, str) for r in runs)):
        raise InputError(f"settings.runs is {runs!r:.60}, not the two run names [A, B] a paired report records; "
                         f"the report is malformed: {_FIX}", path=name)
    if beyond_ci and settings.get("alpha", 0.05) != 0.05:
        raise InputError(f"--beyond-ci reads the 95% interval, but the report's are {1 - settings['alpha']:.0%}; "
                         "re-run compare with --alpha 0.05", path=name)
    keys = [m.name for m in parse_metrics(metrics or DEFAULT_GATE_METRICS, option="--metric")]
    leaks = report_leaks(data, name)
    rows, reasons = [], []
    for key in keys:
        a, b, d, hi = _row(data, key, name)
        drop = -(hi if beyond_ci else d)  # what B loses against A (beyond the difference's interval)
        bound = a - drop  # in B's units: A plus the difference (or the upper end of its CI)
        ok = drop <= max_drop + _TOL
        rows.append(GateRow(key, a, b, bound, drop, ok))
        if not ok:
            what = "the upper end of its 95% CI" if beyond_ci else "it"
            reasons.append(f"regression: {key} B - A = {d:+.4f}; {what} is {drop:.4f} below A, more than the max "
                           f"drop {max_drop:g}")
    from relgrade._verdict import gate_judge

    notes, judge_reasons, judge = gate_judge([(data, name)], accept=accept_judge)
    reasons += judge_reasons
    leak_notes, leak_reasons = leak_check(leaks, name, "'relgrade compare --human H --judge J --forbidden GOLDEN "
                                          "--json OUT', or pass --no-tenants when the runs serve no tenants",
                                          no_tenants=no_tenants, where="B")
    notes += leak_notes
    reasons += leak_reasons
    kept = {k: settings.get(k) for k in ("labels", "queries", "rel_threshold", "no_answer")}
    kept["interval"] = (settings.get("interval") or {}).get("ppi") if isinstance(settings.get("interval"), dict) else None
    kept["prediction"] = settings.get("prediction")
    return GateResult(not reasons, tuple(rows), leaks or (), tuple(reasons), float(max_drop), bool(beyond_ci),
                      f"A = {runs[0]}", f"B = {runs[1]}", kept, tuple(notes), judge, bool(no_tenants))
