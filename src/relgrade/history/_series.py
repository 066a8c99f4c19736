"""Quality over time (the guide: "Monitor in production ... periodically audit", "Metrics -> Dashboard").

:func:`history` reads reports of successive builds (``relgrade evaluate --json``, ``estimate --json``,
``ann-recall --json``; CI artifacts) and lines them up: per metric the value with its 95% interval, the gate's
threshold (``baseline value - max_drop``, or a ``minimum``), and per report where its numbers come from
(:func:`source`: PPI++, human, judge or hybrid labels, exact search), the judge's calibration verdict behind them,
its leaks and failed queries. Order: by the time each report records (``recorded.time``, an ISO 8601 time written
by :func:`recorded` with every report's ``--json``) when every report has one, else as given; a time without a
zone is taken as UTC (said in a note when the reports mix both). A point where the labels or the corpus changed
from the previous one is marked: values on both sides of it measure different things.

With a threshold, the newest report is gated as ``relgrade gate`` would: below the threshold on a metric, or
listing a leak, it fails (:attr:`History.failures`; the CLI's exit 1). Every text taken from a report is made
printable first (:func:`printable`: a control character is shown as its escape, never sent to a terminal).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relgrade._errors import InputError

COMMIT_VARIABLES = ("GITHUB_SHA", "CI_COMMIT_SHA", "BUILD_SOURCEVERSION", "GIT_COMMIT", "BUILDKITE_COMMIT")


def printable(text: str) -> str:
    """``text`` with every control or format character (ESC, BEL, a bidi override, ...) written as its escape."""
    import unicodedata

    return "".join(ch if unicodedata.category(ch) not in ("Cc", "Cf") else ch.encode("unicode_escape").decode("ascii")
                   for ch in text)


def recorded() -> dict[str, Any]:
    """``{"time": UTC ISO 8601, "commit": the CI's commit variable, else git's HEAD here, else None}``: what every
    report's ``--json`` records (the CLI's one report writer), which :func:`history` orders by."""
    commit = next((os.environ[v] for v in COMMIT_VARIABLES if os.environ.get(v)), None)
    if commit is None:
        try:
            out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False)
            commit = out.stdout.strip() or None if out.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            commit = None
    return {"time": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "commit": commit}


@dataclass(frozen=True)
class Point:
    """One report: where it came from, each metric's value and interval, its leaks and failed queries."""

    label: str
    path: str
    time: str | None
    commit: str | None
    values: dict[str, float]
    ci95: dict[str, tuple[float, float] | None]
    leaks: int | None
    failures: int | None
    changed: tuple[str, ...] = ()  # "labels" / "corpus": differs from the previous point
    source: str = ""  # where the numbers come from (:func:`source`)
    judge: str | None = None  # the judge's calibration verdict behind them (:func:`judge_verdict`), None: no judge
    judge_do_not_use: bool = False  # that verdict says not to use the judge's labels (the gate fails the report)

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "path": self.path, "time": self.time, "commit": self.commit, "values": self.values,
                "ci95": {m: None if c is None else list(c) for m, c in self.ci95.items()}, "leaks": self.leaks,
                "failures": self.failures, "changed": list(self.changed), "source": self.source, "judge": self.judge,
                "judge_do_not_use": self.judge_do_not_use}


@dataclass(frozen=True)
class History:
    """What :func:`history` returns: metrics, points in order, the gate's threshold per metric (or None)."""

    metrics: tuple[str, ...]
    points: tuple[Point, ...]
    thresholds: dict[str, float | None]
    order: str  # "time" or "given"
    rule: str | None = None
    notes: list[str] = field(default_factory=list)

    def below(self, metric: str) -> list[Point]:
        t = self.thresholds.get(metric)
        return [] if t is None else [p for p in self.points if p.values[metric] < t - 1e-12]

    @property
    def newest(self) -> Point:
        """The last report in order (by recorded time, else as given)."""
        return self.points[-1]

    @property
    def failures(self) -> list[str]:
        """Why the newest report fails the threshold as the gate would (empty without a threshold, or when it
        passes): a metric below the threshold, a leak it lists."""
        if self.rule is None:
            return []
        p = self.newest
        out = [f"{m} {p.values[m]:.4f} is below the threshold {self.thresholds[m]:.4f}" for m in self.metrics
               if self.thresholds.get(m) is not None and p.values[m] < self.thresholds[m] - 1e-12]
        if p.leaks:
            out.append(f"it lists {p.leaks} {'leak' if p.leaks == 1 else 'leaks'} (forbidden documents in the top k)")
        return out

    @property
    def exit_code(self) -> int:
        """The CLI's: 1 when the newest report fails the threshold (:attr:`failures`), else 0."""
        return 1 if self.failures else 0

    def to_dict(self) -> dict[str, Any]:
        return {"metrics": list(self.metrics), "order": self.order, "rule": self.rule, "thresholds": self.thresholds,
                "points": [p.to_dict() for p in self.points], "notes": self.notes,
                "newest": {"label": self.newest.label, "passed": not self.failures, "reasons": self.failures}
                if self.rule else None, "exit_code": self.exit_code}

    def table(self) -> str:
        """Per report: label, time, where its numbers come from, the judge's verdict (when a report rests on judge
        labels), each metric with its 95% interval (``*``: below the threshold), leaks and failed queries; then the gate's rule and verdict."""
        from relgrade.metrics._evaluate import text_table

        judged = any(p.judge for p in self.points)  # the judge column only where a report rests on judge labels
        head = ["report", "time", "source", *(["judge"] if judged else []), *[f"{m} [95% CI]" for m in self.metrics],
                "leaks", "failed"]
        rows = []
        for p in self.points:
            cells = [p.label + (f" ({', '.join(p.changed)} changed)" if p.changed else ""), p.time or "", p.source,
                     *([p.judge or ""] if judged else [])]
            for m in self.metrics:
                flag = " *" if self.thresholds.get(m) is not None and p.values[m] < self.thresholds[m] - 1e-12 else ""
                ci = p.ci95[m]
                cells.append(f"{p.values[m]:.4f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else " [no CI]") + flag)
            cells += ["n/a" if p.leaks is None else str(p.leaks), "n/a" if p.failures is None else str(p.failures)]
            rows.append(cells)
        lines = [text_table(head, rows, align="<" * (4 if judged else 3) + ">" * (len(self.metrics) + 2))]
        if self.rule:
            lines.append(f"gate: {self.rule}; * = below the threshold")
            verdict = "; ".join(self.failures)
            lines.append(f"gate: FAIL: the newest report {self.newest.label}: {verdict}" if verdict
                         else f"gate: pass: the newest report {self.newest.label} is at or above the threshold")
        return "\n".join(lines)


def source(data: dict) -> str:
    """Where a report's numbers come from: ``PPI++`` (estimate: human labels on a sample, the judge on all),
    ``exact search`` (ann-recall), ``human`` / ``judge`` / ``hybrid (H human, J judge)`` labels (evaluate on a
    hybrid set, which counts them), else ``labels`` (evaluate on a labels file that does not say who graded it)."""
    kind = (data.get("settings") or {}).get("kind")
    if kind == "estimate":
        return "PPI++"
    if kind == "ann-recall":
        return "exact search"
    counts = data.get("labels")
    if isinstance(counts, dict) and all(isinstance(counts.get(k), int) for k in ("human", "judge")):
        human, judge = counts["human"], counts["judge"]
        return "judge" if not human else "human" if not judge else f"hybrid ({human} human, {judge} judge)"
    return "labels"


def judge_verdict(data: dict, path: str) -> tuple[str | None, bool]:
    """``(the judge's calibration verdict in a few words, whether it says not to use the judge's labels)`` for a
    report resting on judge labels (``(None, False)`` otherwise): ``moderate (κ 0.52)``, ``not calibrated``."""
    from relgrade._verdict import DO_NOT_USE, report_judge

    block = report_judge(data, path)
    if block is None:
        return None, False
    cal = block.get("calibration")
    if not cal:
        return "not calibrated", False
    band = str(cal.get("band", "undefined"))
    kappa = cal.get("kappa")
    words = band + (f" (κ {kappa:.2f})" if isinstance(kappa, (int, float)) else "")
    return (f"{words}: do not use" if band in DO_NOT_USE else words), band in DO_NOT_USE


def _time(rec: dict, path: str) -> str | None:
    """The recorded time, checked to be ISO 8601 (InputError naming the report otherwise)."""
    when = rec.get("time")
    if when is None:
        return None
    try:
        if not isinstance(when, str):
            raise ValueError
        dt.datetime.fromisoformat(when)
    except ValueError:
        raise InputError(f"recorded.time is {when!r:.60}, not an ISO 8601 time such as 2024-06-01T03:00:00+00:00 (as "
                         "every report's --json writes it); correct it, or remove 'recorded' to order this report as "
                         "given", path=path) from None
    return when


def _point(data: dict, path: str, metrics: Sequence[str]) -> Point:
    from relgrade.gating._gate import _entry, metric_value

    values, cis = {}, {}
    for m in metrics:
        values[m] = metric_value(data, m, path)
        entry = _entry(data, m, path)
        ci = entry.get("ci95") if isinstance(entry, dict) else None
        cis[m] = (float(ci[0]), float(ci[1])) if isinstance(ci, list) and len(ci) == 2 else None
    rec = data.get("recorded") if isinstance(data.get("recorded"), dict) else {}
    commit = printable(rec["commit"]) if isinstance(rec.get("commit"), str) and rec["commit"] else None
    leaks = data.get("leaks")
    failures = data.get("failures")
    label = (commit[:8] if re.fullmatch(r"[0-9a-f]{9,64}", commit) else commit[:24]) if commit \
        else printable(Path(path).stem)
    judge, do_not_use = judge_verdict(data, path)
    return Point(label, printable(path), _time(rec, path), commit, values, cis,
                 len(leaks) if isinstance(leaks, list) else None, len(failures) if isinstance(failures, list) else None,
                 source=source(data), judge=judge, judge_do_not_use=do_not_use)


def _order(points: list[Point]) -> tuple[list[int], str | None]:
    """Indices of ``points`` by recorded time; a time without a zone is taken as UTC, said when zones are mixed."""
    parsed = [dt.datetime.fromisoformat(p.time) for p in points]  # checked by _time
    naive = [p for p, t in zip(points, parsed) if t.tzinfo is None]
    utc = [t.replace(tzinfo=dt.timezone.utc) if t.tzinfo is None else t for t in parsed]
    note = None
    if naive and len(naive) < len(points):
        note = (f"{len(naive)} of {len(points)} reports record a time without a time zone (e.g. {naive[0].label}: "
                f"{naive[0].time}): taken as UTC to order them with the others")
    return sorted(range(len(points)), key=lambda i: utc[i]), note


def _fingerprints(data: dict) -> dict[str, Any]:
    s = data.get("settings") or {}
    return {k: (s.get(k) or {}).get("sha256") if isinstance(s.get(k), dict) else None for k in ("labels", "corpus")}


def history(reports: Sequence[str | Path], *, metrics: Sequence[str] | None = None, baseline: str | Path | None = None,
            max_drop: float | None = None, minimum: float | None = None) -> History:
    """Line up ``reports`` (paths) over time (module docstring); the threshold is ``baseline``'s value - ``max_drop``
    (default the gate's 0.02) or ``minimum``."""
    from relgrade.gating._gate import DEFAULT_MAX_DROP, metric_value, read_report
    from relgrade.metrics._measures import parse_metrics

    if len(reports) < 1:
        raise InputError("history needs at least one report: relgrade history R1.json R2.json ... --html trend.html")
    if baseline is not None and minimum is not None:
        raise InputError("pass --baseline (threshold = its value - --max-drop) or --min, not both")
    if minimum is not None and not (isinstance(minimum, (int, float)) and 0 <= minimum <= 1):
        raise InputError(f"--min must be a number in [0, 1] (e.g. 0.95), got {minimum!r}")
    if max_drop is not None and not (isinstance(max_drop, (int, float)) and 0 <= max_drop < float("inf")):
        raise InputError(f"--max-drop must be a finite number >= 0 (e.g. 0.02), got {max_drop!r}")
    from relgrade.gating._consistency import require_kind

    datas = [(read_report(p), str(p)) for p in reports]
    for data, path in datas:
        require_kind(data, path, ("evaluate", "estimate", "ann-recall"), "relgrade history")  # a paired report
        # holds differences B - A, not values
    if metrics:
        keys = [m if m in datas[0][0]["aggregate"] else parse_metrics([m], option="--metric")[0].name for m in metrics]
    else:
        keys = [m for m in datas[0][0]["aggregate"] if all(m in d["aggregate"] for d, _ in datas)]
        if not keys:
            raise InputError(f"the reports share no metric ({datas[0][1]} has {', '.join(datas[0][0]['aggregate'])}); "
                             "pass --metric with one every report has")
    points = [_point(d, p, keys) for d, p in datas]
    order, zone_note = "given", None
    if all(p.time for p in points):
        order = "time"
        idx, zone_note = _order(points)
        points, datas = [points[i] for i in idx], [datas[i] for i in idx]
    marked, prev = [], None
    for point, (data, _) in zip(points, datas):
        fp = _fingerprints(data)
        changed = tuple(k for k in fp if prev is not None and fp[k] != prev[k])
        marked.append(Point(**{**point.__dict__, "changed": changed}))
        prev = fp
    thresholds: dict[str, float | None] = {m: None for m in keys}
    rule = None
    if minimum is not None:
        thresholds = {m: float(minimum) for m in keys}
        rule = f"value >= {minimum:g}"
    elif baseline is not None:
        drop = DEFAULT_MAX_DROP if max_drop is None else max_drop
        base = read_report(baseline)
        require_kind(base, str(baseline), ("evaluate", "estimate", "ann-recall"), "relgrade history --baseline")
        thresholds = {m: metric_value(base, m, str(baseline)) - drop for m in keys}
        rule = f"at most {drop:g} below the baseline {printable(str(baseline))}"
    notes = [zone_note] if zone_note else []
    notes += [f"{p.label}: {', '.join(p.changed)} changed since the previous report" for p in marked if p.changed]
    blocked = [p.label for p in marked if p.judge_do_not_use]
    if blocked:
        notes.append(f"{len(blocked)} of {len(marked)} reports rest on judge labels whose calibration says not to use "
                     f"them ({', '.join(blocked[:5])}{' ...' if len(blocked) > 5 else ''}): 'relgrade gate' fails "
                     "them unless --accept-judge")
    return History(tuple(keys), tuple(marked), thresholds, order, rule, notes)


__all__ = ["History", "Point", "history", "judge_verdict", "printable", "recorded", "source"]
