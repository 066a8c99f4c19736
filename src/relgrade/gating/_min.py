"""A floor instead of a baseline: ``relgrade gate --current R.json --min 0.95`` (the guide: "ANN tuning uses recall
vs exact baseline", "Gate compression on recall regression").

The current report fails when, for any gated metric, its value (with ``beyond_ci``: the upper end of its 95%
interval) is below ``minimum``, or when it lists a leak, or when it rests on judge labels whose calibration says
not to use them (unless ``accept_judge``), as in :func:`relgrade.gate`. Gated metrics default to the report's own
primary metric for an ``ann-recall`` report (``neighbour_recall@k``), else recall@5. An ``ann-recall`` report made
without labels carries no leak information and says so; every other report without leak information (an
``ann-recall`` report made with labels included) fails, as in :func:`relgrade.gate`, unless ``no_tenants`` (the
runs serve no tenants; recorded).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from relgrade._errors import InputError
from relgrade.gating._gate import (
    DEFAULT_GATE_METRICS, GateResult, GateRow, _as_report, leak_check, metric_upper, metric_value, report_leaks,
)

_TOL = 1e-12


@dataclass(frozen=True)
class FloorResult(GateResult):
    """:class:`~relgrade.GateResult` of a floor gate: each row's ``baseline`` is the ``minimum``."""

    minimum: float = 0.0

    @property
    def rule(self) -> str:
        return f"value >= {self.minimum:g}" + (" (upper end of the 95% CI)" if self.beyond_ci else "")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "minimum": self.minimum, "baseline": None}

    def table(self, max_leaks: int = 10) -> str:
        lines = [f"{'metric':<22}{'minimum':>10}{'candidate':>10}   verdict ({self.rule})"]
        for r in self.rows:
            lines.append(f"{r.metric:<22}{r.baseline:>10.4f}{r.current:>10.4f}   {'ok' if r.passed else 'FAIL: below the minimum'}")
        body = GateResult.table(self, max_leaks).splitlines()[1 + len(self.rows):]
        return "\n".join(lines + body)


def _keys(data: dict, metrics: Sequence[str] | None) -> list[str]:
    from relgrade.metrics._measures import parse_metrics

    settings = data.get("settings") or {}
    if not metrics:
        own = settings.get("metrics") if settings.get("kind") == "ann-recall" else None
        metrics = own[:1] if isinstance(own, list) and own else list(DEFAULT_GATE_METRICS)
    keys = []
    for m in metrics:
        if m in data["aggregate"]:  # a report's own name (neighbour_recall@10) is taken as written
            keys.append(m)
        else:
            keys += [x.name for x in parse_metrics([m], option="--metric")]
    return keys


def gate_min(current: Any, *, minimum: float, metrics: Sequence[str] | None = None, beyond_ci: bool = False,
             name: str | None = None, no_tenants: bool = False, accept_judge: bool = False) -> FloorResult:
    """Gate ``current`` (a path, report dict or report object) on an absolute ``minimum`` (module docstring)."""
    if isinstance(minimum, bool) or not isinstance(minimum, (int, float)) or not math.isfinite(minimum) \
            or not 0 <= minimum <= 1:
        raise InputError(f"--min must be a number in [0, 1] (e.g. 0.95), got {minimum!r}")
    cur, cur_name = _as_report(current, "current")
    cur_name = name or cur_name
    from relgrade.gating._consistency import require_kind

    require_kind(cur, cur_name, ("evaluate", "estimate", "ann-recall"))
    rows, reasons = [], []
    for key in _keys(cur, metrics):
        value = metric_value(cur, key, cur_name)
        bound = metric_upper(cur, key, cur_name) if beyond_ci else value
        ok = bound >= minimum - _TOL
        rows.append(GateRow(key, float(minimum), value, bound, float(minimum) - bound, ok))
        if not ok:
            what = "the upper end of its 95% CI" if beyond_ci else "its value"
            reasons.append(f"below the minimum: {key} {value:.4f}; {what} is {minimum - bound:.4f} below {minimum:g}")
    leaks = report_leaks(cur, cur_name)
    settings = {"kind": (cur.get("settings") or {}).get("kind"), "leak_check": leaks is not None}
    from relgrade._verdict import gate_judge

    notes, judge_reasons, judge = gate_judge([(cur, cur_name)], accept=accept_judge)
    reasons += judge_reasons
    # an ann-recall report made without labels has no leak information; one made with labels has, and fails the
    # guard when it dropped it, as every other report does
    labeled = (cur.get("settings") or {}).get("labels") is not None
    if leaks is not None or settings["kind"] != "ann-recall" or labeled:
        leak_notes, leak_reasons = leak_check(leaks, cur_name, "'relgrade evaluate --json', or 'relgrade estimate "
                                              "--json --forbidden GOLDEN', or pass --no-tenants when the runs serve "
                                              "no tenants", no_tenants=no_tenants)
        notes += leak_notes
        reasons += leak_reasons
    return FloorResult(not reasons, tuple(rows), leaks or (), tuple(reasons), 0.0, bool(beyond_ci), "minimum",
                       cur_name, settings, tuple(notes), judge, bool(no_tenants), minimum=float(minimum))


__all__ = ["FloorResult", "gate_min"]
