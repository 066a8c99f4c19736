"""The CI gate as a library function: :func:`gate` compares two reports and returns a :class:`GateResult`.

Rule (the guide's): the change under test fails when, for any gated metric,

    baseline - current > max_drop                      (default)
    baseline - upper end of current's 95% CI > max_drop (``beyond_ci=True``)

(``max_drop`` plus the repeat noise when a report holds repeats, see :mod:`relgrade.gating._loop`), or when
the current report lists any leak (a forbidden document retrieved in the top k), or when a report rests on
judge labels whose calibration verdict says not to use them (:func:`relgrade._verdict.gate_judge`;
``accept_judge=True`` / ``--accept-judge`` lets it pass, recorded in ``to_dict()["judge"]``). Reports over
different corpus fingerprints are refused unless ``allow_corpus_change``. The value of an ``evaluate``
report is its mean; of an ``estimate`` report its PPI++ estimate (and the
PPI++ interval with ``beyond_ci``).

Refused with :class:`~relgrade.InputError` (the CLI's exit 2), never passed: reports computed
differently (labels, query set, relevance threshold or no-answer rule, see
:mod:`relgrade.metrics._settings`), a ``max_drop`` that is not a finite number >= 0, a metric value
or interval that is not finite or not in [0, 1], a malformed ``leaks`` list, and with ``beyond_ci`` a
current report whose intervals are not 95% (``estimate --alpha``). A current report with
no leak information at all fails the gate (exit 1): the tenant-leak guard is never silently off, only
explicitly (``no_tenants=True`` / ``--no-tenants``: the runs serve no tenants; recorded, and leaks a report
does list still fail).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade._words import plural
from relgrade.gating._loop import corpus_change, repeat_allowance

DEFAULT_GATE_METRICS = ("recall@5",)
DEFAULT_MAX_DROP = 0.02
_TOL = 1e-12


@dataclass(frozen=True)
class GateRow:
    """One gated metric. ``bound`` is what was compared with the baseline: current's value, or the upper
    end of its 95% CI with ``beyond_ci``; ``drop = baseline - bound``; ``passed = drop <= max_drop``."""

    metric: str
    baseline: float
    current: float
    bound: float
    drop: float
    passed: bool
    noise: float = 0.0  # repeat noise allowed on top of max_drop (relgrade.gating._loop.repeat_allowance)

    @property
    def change(self) -> float:
        return self.current - self.baseline

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "baseline": self.baseline, "current": self.current, "change": self.change,
                "bound": self.bound, "drop": self.drop, "passed": self.passed, "repeat_noise": self.noise}


@dataclass(frozen=True)
class GateResult:
    """What :func:`gate` returns: ``passed``, one :class:`GateRow` per metric, the current report's leaks,
    and ``reasons`` (one sentence per failure; empty when passed). ``exit_code`` is the CLI's (0 or 1)."""

    passed: bool
    rows: tuple[GateRow, ...]
    leaks: tuple[dict[str, Any], ...]
    reasons: tuple[str, ...]
    max_drop: float
    beyond_ci: bool
    baseline: str
    current: str
    settings: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # the judge's calibration behind each report, --no-tenants
    judge: dict[str, Any] = field(default_factory=dict)  # relgrade._verdict.gate_judge's record
    no_tenants: bool = False

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    @property
    def rule(self) -> str:
        return f"max drop {self.max_drop:g}" + (" beyond the candidate's 95% CI" if self.beyond_ci else "")

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "result": "pass" if self.passed else "FAIL", "exit_code": self.exit_code,
                "baseline": self.baseline, "current": self.current, "max_drop": self.max_drop,
                "beyond_ci": self.beyond_ci, "rule": self.rule, "metrics": [r.to_dict() for r in self.rows],
                "leaks": [dict(x) for x in self.leaks], "reasons": list(self.reasons), "settings": self.settings,
                "notes": list(self.notes), "judge": self.judge, "no_tenants": self.no_tenants}

    def table(self, max_leaks: int = 10) -> str:
        """The text the CLI prints: aligned metric rows, the leaks, the reasons and the verdict."""
        lines = [f"{'metric':<16}{'baseline':>10}{'candidate':>10}{'change':>10}   verdict ({self.rule})"]
        for r in self.rows:
            verdict = ("ok" if r.passed else "FAIL: regression") + (f" (repeat noise {r.noise:.4f} allowed)" if r.noise else "")
            lines.append(f"{r.metric:<16}{r.baseline:>10.4f}{r.current:>10.4f}{r.change:>+10.4f}   {verdict}")
        if self.leaks:
            n = len(self.leaks)
            lines.append(f"FAIL: {n} {'leak' if n == 1 else 'leaks'} (forbidden "
                         f"{'document' if n == 1 else 'documents'} in the top k) in {self.current}:")
            for row in self.leaks[:max_leaks]:
                lines.append(f"  {row.get('query_id')}: {row.get('doc_id')} at rank {row.get('rank')}")
            if n > max_leaks:
                lines.append(f"  ... and {n - max_leaks} more")
        lines += list(self.notes)
        lines += [f"FAIL: {reason}" for reason in self.reasons if not reason.startswith(("leak:", "regression:"))]
        lines.append("gate: pass" if self.passed else "gate: FAIL")
        return "\n".join(lines)


def read_report(path: str | Path) -> dict[str, Any]:
    """A report JSON (``relgrade evaluate --json`` or ``relgrade estimate --json``) as a dict; InputError if not one."""
    from relgrade.io._text import read_text

    from relgrade.gating._checks import loads_report

    return _check_report(loads_report(read_text(str(path), what="report file"), str(path)), str(path))


def _check_report(data: Any, name: str) -> dict[str, Any]:
    if not isinstance(data, dict) or not isinstance(data.get("aggregate"), dict):
        raise InputError("no 'aggregate' object; pass a file written by 'relgrade evaluate --json' or "
                         "'relgrade estimate --json'", path=name)
    from relgrade.gating._checks import check_report  # every number, interval and setting (issue 24)

    return check_report(data, name)


def _as_report(report: Any, default_name: str) -> tuple[dict[str, Any], str]:
    if isinstance(report, (str, Path)):
        return read_report(report), str(report)
    if isinstance(report, Mapping):
        return _check_report(dict(report), default_name), default_name
    to_dict = getattr(report, "to_dict", None)
    if callable(to_dict):
        return _check_report(to_dict(), default_name), default_name
    raise InputError(f"{default_name} must be a report path, a report dict or an EvalReport/EstimateReport, "
                     f"got {type(report).__name__}")


def _entry(data: dict, key: str, name: str) -> Any:
    agg = data["aggregate"]
    if key not in agg:
        raise InputError(f"metric {key!r} is not in this report (it has {', '.join(sorted(map(str, agg))) or 'none'}); "
                         "re-run evaluate with --metric or gate on another --metric", path=name)
    value = agg[key]
    if isinstance(value, dict) and isinstance(value.get("ppi"), dict):  # relgrade estimate --json
        value = value["ppi"]
    return value


def _unit_number(value: Any, what: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{what} is {value!r}, not a finite number; the report is malformed: "
                         "re-write it with 'relgrade evaluate --json' or 'relgrade estimate --json'", path=name)
    if not -_TOL <= value <= 1 + _TOL:
        raise InputError(f"{what} is {value!r}, outside [0, 1]; the report is malformed: re-write it with "
                         "'relgrade evaluate --json' or 'relgrade estimate --json'", path=name)
    return float(value)


def metric_value(data: dict, key: str, name: str) -> float:
    """The gated value of ``key`` (the PPI++ value in an ``estimate`` report), checked finite and in [0, 1]."""
    value = _entry(data, key, name)
    if isinstance(value, dict):
        value = value.get("value")
    return _unit_number(value, f"metric {key!r} value", name)


def metric_upper(data: dict, key: str, name: str) -> float:
    """Upper end of ``key``'s 95% interval (PPI++ in an ``estimate`` report, else ``ci95``), checked."""
    value = _entry(data, key, name)
    ci = value.get("ci95") if isinstance(value, dict) else None
    if not (isinstance(ci, (list, tuple)) and len(ci) == 2):
        raise InputError(f"metric {key!r} has no 95% interval, which --beyond-ci needs; write the report with "
                         "'relgrade estimate --json' or 'relgrade evaluate --json' (n >= 2 queries)", path=name)
    lo = _unit_number(ci[0], f"metric {key!r} ci95 lower end", name)
    hi = _unit_number(ci[1], f"metric {key!r} ci95 upper end", name)
    if lo > hi:
        raise InputError(f"metric {key!r} ci95 [{lo}, {hi}] is reversed; the report is malformed", path=name)
    return hi


def report_leaks(data: dict, name: str) -> tuple[dict[str, Any], ...] | None:
    """The report's leaks (None when it carries no leak information); InputError when malformed."""
    leaks = data.get("leaks")
    if leaks is None:
        return None
    if not isinstance(leaks, list):
        raise InputError(f"'leaks' must be a list of {{query_id, doc_id, rank}} objects, got "
                         f"{type(leaks).__name__}; re-write the report with 'relgrade evaluate --json'", path=name)
    for i, row in enumerate(leaks):
        if not (isinstance(row, dict) and isinstance(row.get("query_id"), str) and isinstance(row.get("doc_id"), str)
                and isinstance(row.get("rank"), int) and not isinstance(row.get("rank"), bool)):
            raise InputError(f"'leaks' entry {i} is not a {{query_id, doc_id, rank}} object ({str(row)[:60]!r}); "
                             "re-write the report with 'relgrade evaluate --json'", path=name)
    return tuple(leaks)


def leak_check(leaks, name: str, hint: str, *, no_tenants: bool = False, where: str | None = None
               ) -> tuple[list[str], list[str]]:
    """The tenant-leak guard on a report's leaks (:func:`report_leaks`): ``(notes, reasons)``. No leak
    information fails (``hint``: how to write a report that has it) unless ``no_tenants``; any leak fails
    (``where``: the run named in the message, default ``name``)."""
    if leaks is None and no_tenants:
        return [f"leak check: off for {name} (--no-tenants: the runs serve no tenants)"], []
    if leaks is None:
        return [], [f"{name} carries no leak information, so the tenant-leak guard cannot run; write it with {hint}"]
    if leaks:
        return [], [f"leak: {plural(len(leaks), 'forbidden document')} in the top k of {where or name}"]
    return [], []


def check_comparable(base: dict, cur: dict, base_name: str, cur_name: str) -> dict[str, Any]:
    """InputError unless both reports record the same labels, queries, threshold and no-answer rule."""
    from relgrade.metrics._settings import differences, missing_settings

    for data, name in ((base, base_name), (cur, cur_name)):
        missing = missing_settings(data.get("settings"))
        if missing:
            raise InputError(f"the report records no {', '.join(missing)} setting(s), so the gate cannot check that "
                             "both reports were computed alike; re-write it with this relgrade's "
                             "'relgrade evaluate --json' or 'relgrade estimate --json'", path=name)
    diffs = differences(base["settings"], cur["settings"])
    if diffs:
        what = "; ".join(d for d, _ in diffs)
        fix = "; ".join(dict.fromkeys(f for _, f in diffs))
        raise InputError(f"{base_name} and {cur_name} were computed differently ({what}); {fix}")
    return {k: base["settings"][k] for k in ("labels", "queries", "rel_threshold", "no_answer")}


def _interval(settings: dict) -> Any:
    """The current report's interval construction: estimate's PPI one, else the one the report names."""
    interval = settings.get("interval")
    return interval.get("ppi") if isinstance(interval, dict) else interval


def gate(
    baseline: Any,
    current: Any,
    *,
    metrics: Sequence[str] | None = None,
    max_drop: float = DEFAULT_MAX_DROP,
    beyond_ci: bool = False,
    names: Sequence[str] | None = None,
    allow_corpus_change: bool = False,
    accept_judge: bool = False,
    no_tenants: bool = False,
) -> GateResult:
    """Gate ``current`` against ``baseline`` (paths, report dicts, or ``EvalReport``/``EstimateReport`` objects).

    ``metrics`` default to recall@5 (the guide's gate). ``names`` (two strings, e.g. run names) are how
    messages call the two reports; default: their paths, else "baseline" and "current". See the module
    docstring for the rule and for what is refused (:class:`~relgrade.InputError`) rather than passed.
    ``accept_judge``: pass on judge labels whose calibration says not to use them (recorded). ``no_tenants``:
    the runs serve no tenants, so a report without leak information passes the leak check (recorded).
    """
    from relgrade.metrics._measures import parse_metrics

    if isinstance(max_drop, bool) or not isinstance(max_drop, (int, float)) or not math.isfinite(max_drop) or max_drop < 0:
        raise InputError(f"--max-drop must be a finite number >= 0 (e.g. {DEFAULT_MAX_DROP}), got {max_drop!r}")
    keys = [m.name for m in parse_metrics(metrics or DEFAULT_GATE_METRICS, option="--metric")]
    if names is not None and (isinstance(names, str) or len(names) != 2):
        raise InputError(f"names must be two strings (baseline, current), got {names!r}")
    base, base_name = _as_report(baseline, "baseline")
    cur, cur_name = _as_report(current, "current")
    from relgrade.gating._consistency import require_kind

    for data, name in ((base, base_name), (cur, cur_name)):
        require_kind(data, name, ("evaluate", "estimate"))
    if names is not None:
        base_name, cur_name = map(str, names)
    settings = check_comparable(base, cur, base_name, cur_name)
    settings["corpus"] = corpus_change(base, cur, base_name, cur_name, allow_corpus_change)
    # how each estimate report's judges predicted the metric (hard/soft, judges, folds); None for evaluate reports
    settings["prediction"] = {"baseline": base["settings"].get("prediction"), "current": cur["settings"].get("prediction")}
    settings["interval"] = _interval(cur["settings"])  # the construction of the interval --beyond-ci reads
    leaks = report_leaks(cur, cur_name)
    report_leaks(base, base_name)  # malformed leaks are an error on either side

    alpha = cur["settings"].get("alpha", 0.05)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InputError(f"settings 'alpha' is {alpha!r}, not a number in (0, 1); the report is malformed", path=cur_name)
    if beyond_ci and alpha != 0.05:
        raise InputError(f"--beyond-ci reads the 95% interval, but the report's intervals are {1 - alpha:.0%} "
                         f"(--alpha {alpha}); re-run 'relgrade estimate' with --alpha 0.05", path=cur_name)
    rows, reasons = [], []
    for key in keys:
        b, c = metric_value(base, key, base_name), metric_value(cur, key, cur_name)
        bound = metric_upper(cur, key, cur_name) if beyond_ci else c
        drop = b - bound
        noise = repeat_allowance(base, cur, key, base_name, cur_name, b, c)
        ok = drop <= max_drop + noise + _TOL
        rows.append(GateRow(key, b, c, bound, drop, ok, noise))
        if not ok:
            what = "the upper end of its 95% CI" if beyond_ci else "it"
            reasons.append(f"regression: {key} {b:.4f} -> {c:.4f}; {what} is {drop:.4f} below the baseline, "
                           f"more than the max drop {max_drop:g}" + (f" plus the repeat noise {noise:.4f}" if noise else ""))
    from relgrade._verdict import gate_judge

    notes, judge_reasons, judge = gate_judge([(cur, cur_name), (base, base_name)], accept=accept_judge)
    reasons += judge_reasons
    leak_notes, leak_reasons = leak_check(leaks, cur_name, "'relgrade evaluate --json', or 'relgrade estimate --json "
                                          "--forbidden GOLDEN', or pass --no-tenants when the runs serve no tenants",
                                          no_tenants=no_tenants)
    notes += leak_notes
    reasons += leak_reasons
    return GateResult(not reasons, tuple(rows), leaks or (), tuple(reasons), float(max_drop), bool(beyond_ci),
                      base_name, cur_name, settings, tuple(notes), judge, bool(no_tenants))
