"""The gate in a test suite: :func:`assert_quality` raises ``AssertionError`` where ``relgrade gate`` exits 1.

The guide gates in code (``evaluator.assert_quality(min_recall_at_5=0.75)``), as teams do in pytest::

    report = relgrade.evaluate(relgrade.read_golden("golden.jsonl"), relgrade.read_run("run.jsonl"))
    relgrade.assert_quality(report, min={"recall@5": 0.75})                       # gate --min
    relgrade.assert_quality(report, baseline="main.json", metrics=["recall@5"])   # gate --baseline, --max-drop

No rule of its own: a floor is :func:`relgrade.gate_min`, a baseline :func:`relgrade.gate` (with the same
``max_drop``, ``beyond_ci``, ``no_tenants`` and ``accept_judge``), so a leak, a report without leak information
or a "do not use" judge fails here exactly as it fails the gate. The message names each failed check, the metric's
value with its 95% interval, and the queries that pulled it down (the lowest, or those that lost most against the
baseline), so the test log says what to read next.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from relgrade._errors import InputError
from relgrade.gating._gate import DEFAULT_MAX_DROP, GateResult, _as_report, _entry, gate
from relgrade.gating._min import gate_min

WORST = 5


def assert_quality(report: Any, *, min: Mapping[str, float] | None = None, baseline: Any = None,  # noqa: A002
                   max_drop: float = DEFAULT_MAX_DROP, metrics: Sequence[str] | None = None, beyond_ci: bool = False,
                   no_tenants: bool = False, accept_judge: bool = False, worst: int = WORST,
                   name: str = "report") -> tuple[GateResult, ...]:
    """Raise ``AssertionError`` unless ``report`` (an ``evaluate`` or ``estimate`` report, its dict, or its JSON path)
    passes every floor of ``min`` (``{"recall@5": 0.75}``: ``relgrade gate --min``) and, with ``baseline`` (a report
    of the same kinds), drops no gated metric by more than ``max_drop`` (``metrics``: default the metrics of ``min``,
    else the gate's recall@5). Returns the gate results when it passes. See the module docstring."""
    if min is None and baseline is None:
        raise InputError("assert_quality needs min={'recall@5': 0.75} (a floor), baseline=REPORT (a drop), or both")
    if min is not None and (not isinstance(min, Mapping) or not min):
        raise InputError(f"min must be a dict of metric floors such as {{'recall@5': 0.75}}, got {min!r}")
    data, name = _as_report(report, name)
    results = [gate_min(data, minimum=floor, metrics=[metric], beyond_ci=beyond_ci, name=name,
                        no_tenants=no_tenants, accept_judge=accept_judge) for metric, floor in (min or {}).items()]
    if baseline is not None:
        base, base_name = _as_report(baseline, "baseline")
        gated = list(metrics) if metrics else list(min or ()) or None
        results.append(gate(base, data, metrics=gated, max_drop=max_drop, beyond_ci=beyond_ci,
                            names=(base_name, name), no_tenants=no_tenants, accept_judge=accept_judge))
        base_data = base
    else:
        base_data = None
    failed = [r for r in results if not r.passed]
    if failed:
        raise AssertionError(_message(failed, data, base_data, name, worst))
    return tuple(results)


def _interval(data: dict, metric: str, name: str) -> str:
    """``0.7200 (95% CI 0.6500–0.7900, Student t over queries)`` of a report's metric (its PPI++ value in an
    estimate report)."""
    entry = _entry(data, metric, name)
    value = entry.get("value") if isinstance(entry, Mapping) else entry
    ci = entry.get("ci95") if isinstance(entry, Mapping) else None
    how = entry.get("interval") if isinstance(entry, Mapping) else None
    shown = f"{value:.4f}" if isinstance(value, (int, float)) else str(value)
    if ci:
        shown += f" (95% CI {ci[0]:.4f}–{ci[1]:.4f}" + (f", {how}" if how else "") + ")"
    return shown


def _per_query(data: dict) -> tuple[dict[str, Mapping[str, float]], str]:
    """``({query: {metric: value}}, what the values are)``: an estimate report's human-labeled queries (the truth it
    has), else the report's own per-query values."""
    per = data.get("per_query") or {}
    if isinstance(per.get("human"), Mapping) and all(isinstance(v, Mapping) for v in per["human"].values()):
        return dict(per["human"]), "human-labeled queries"
    return {q: v for q, v in per.items() if isinstance(v, Mapping)}, "queries"


def _worst(data: dict, base: dict | None, metric: str, n: int) -> str:
    rows, what = _per_query(data)
    texts = {f.get("query_id"): f.get("query") for f in data.get("failures") or () if isinstance(f, Mapping)}
    values = {q: v[metric] for q, v in rows.items() if isinstance(v.get(metric), (int, float))}
    if not values or n <= 0:
        return ""
    before = _per_query(base)[0] if base is not None else {}
    lost = {q: before[q][metric] - v for q, v in values.items()
            if isinstance(before.get(q, {}).get(metric), (int, float))}
    if lost:
        order = sorted(lost, key=lambda q: (-lost[q], q))[:n]
        shown = [f"{q} {before[q][metric]:.2f} -> {values[q]:.2f}" for q in order if lost[q] > 0]
        head = f"{what} that lost most {metric}"
    else:
        order = sorted(values, key=lambda q: (values[q], q))[:n]
        shown = [f"{q} {values[q]:.2f}" + (f" ({texts[q]})" if texts.get(q) else "") for q in order]
        head = f"lowest {what} by {metric}"
    return f"  {head}: " + "; ".join(shown) if shown else ""


def _message(failed: list[GateResult], data: dict, base: dict | None, name: str, worst: int) -> str:
    reasons = list(dict.fromkeys(reason for r in failed for reason in r.reasons))  # a leak fails every floor: once
    reasons.sort(key=lambda reason: not reason.startswith(("regression:", "below the minimum:")))  # metrics first
    lines = [f"{name} fails its quality gate ({len(reasons)} {'reason' if len(reasons) == 1 else 'reasons'}):"]
    for reason in reasons:
        lines.append(f"  {reason}")
    leaks = next((r.leaks for r in failed if r.leaks), ())
    if leaks:
        lines.append("  leaks: " + "; ".join(f"{x.get('query_id')} {x.get('doc_id')} at rank {x.get('rank')}"
                                             for x in leaks[:worst]) + ("; ..." if len(leaks) > worst else ""))
    metrics = list(dict.fromkeys(row.metric for r in failed for row in r.rows if not row.passed))
    for metric in metrics:
        lines.append(f"{metric}: {_interval(data, metric, name)}"
                     + (f"; baseline {_interval(base, metric, 'baseline')}" if base is not None else ""))
        shown = _worst(data, base, metric, worst)
        if shown:
            lines.append(shown)
    return "\n".join(lines)


__all__ = ["assert_quality"]
