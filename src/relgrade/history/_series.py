"""Quality over time (the guide: "Monitor in production ... periodically audit", "Metrics -> Dashboard").

:func:`history` reads reports of successive builds (``relgrade evaluate --json``, ``estimate --json``,
``ann-recall --json``; CI artifacts) and lines them up: per metric the value with its 95% interval, the gate's
threshold (``baseline value - max_drop``, or a ``minimum``), and per report its leaks and failed queries.
Order: by the time each report records (``recorded.time``, written by the CLI's ``--json``) when every
report has one, else as given. A point where the labels or the corpus changed from the previous one is marked:
values on both sides of it measure different things.
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


def recorded() -> dict[str, Any]:
    """``{"time": UTC ISO 8601, "commit": the CI's commit variable, else git's HEAD here, else None}``."""
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

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "path": self.path, "time": self.time, "commit": self.commit, "values": self.values,
                "ci95": {m: None if c is None else list(c) for m, c in self.ci95.items()}, "leaks": self.leaks,
                "failures": self.failures, "changed": list(self.changed)}


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

    def to_dict(self) -> dict[str, Any]:
        return {"metrics": list(self.metrics), "order": self.order, "rule": self.rule, "thresholds": self.thresholds,
                "points": [p.to_dict() for p in self.points], "notes": self.notes}

    def table(self) -> str:
        from relgrade.metrics._evaluate import text_table

        head = ["report", "time", *self.metrics, "leaks", "failed"]
        rows = []
        for p in self.points:
            cells = [p.label + (f" ({', '.join(p.changed)} changed)" if p.changed else ""), p.time or ""]
            for m in self.metrics:
                flag = " *" if self.thresholds.get(m) is not None and p.values[m] < self.thresholds[m] - 1e-12 else ""
                cells.append(f"{p.values[m]:.4f}{flag}")
            cells += ["n/a" if p.leaks is None else str(p.leaks), "n/a" if p.failures is None else str(p.failures)]
            rows.append(cells)
        lines = [text_table(head, rows, align="<<" + ">" * (len(self.metrics) + 2))]
        if self.rule:
            lines.append(f"gate: {self.rule}; * = below the threshold")
        return "\n".join(lines)


def _point(data: dict, path: str, metrics: Sequence[str]) -> Point:
    from relgrade._gate import _entry, metric_value

    values, cis = {}, {}
    for m in metrics:
        values[m] = metric_value(data, m, path)
        entry = _entry(data, m, path)
        ci = entry.get("ci95") if isinstance(entry, dict) else None
        cis[m] = (float(ci[0]), float(ci[1])) if isinstance(ci, list) and len(ci) == 2 else None
    rec = data.get("recorded") if isinstance(data.get("recorded"), dict) else {}
    commit = rec.get("commit") if isinstance(rec.get("commit"), str) else None
    leaks = data.get("leaks")
    failures = data.get("failures")
    label = (commit[:8] if re.fullmatch(r"[0-9a-f]{9,64}", commit) else commit[:24]) if commit else Path(path).stem
    return Point(label, path, rec.get("time") if isinstance(rec.get("time"), str)
                 else None, commit, values, cis, len(leaks) if isinstance(leaks, list) else None,
                 len(failures) if isinstance(failures, list) else None)


def _fingerprints(data: dict) -> dict[str, Any]:
    s = data.get("settings") or {}
    return {k: (s.get(k) or {}).get("sha256") if isinstance(s.get(k), dict) else None for k in ("labels", "corpus")}


def history(reports: Sequence[str | Path], *, metrics: Sequence[str] | None = None, baseline: str | Path | None = None,
            max_drop: float | None = None, minimum: float | None = None) -> History:
    """Line up ``reports`` (paths) over time (module docstring); the threshold is ``baseline``'s value - ``max_drop``
    (default the gate's 0.02) or ``minimum``."""
    from relgrade._gate import DEFAULT_MAX_DROP, metric_value, read_report
    from relgrade.metrics._measures import parse_metrics

    if len(reports) < 1:
        raise InputError("history needs at least one report: relgrade history R1.json R2.json ... --html trend.html")
    if baseline is not None and minimum is not None:
        raise InputError("pass --baseline (threshold = its value - --max-drop) or --min, not both")
    if minimum is not None and not (isinstance(minimum, (int, float)) and 0 <= minimum <= 1):
        raise InputError(f"--min must be a number in [0, 1] (e.g. 0.95), got {minimum!r}")
    if max_drop is not None and not (isinstance(max_drop, (int, float)) and 0 <= max_drop < float("inf")):
        raise InputError(f"--max-drop must be a finite number >= 0 (e.g. 0.02), got {max_drop!r}")
    datas = [(read_report(p), str(p)) for p in reports]
    if metrics:
        keys = [m if m in datas[0][0]["aggregate"] else parse_metrics([m], option="--metric")[0].name for m in metrics]
    else:
        keys = [m for m in datas[0][0]["aggregate"] if all(m in d["aggregate"] for d, _ in datas)]
        if not keys:
            raise InputError(f"the reports share no metric ({datas[0][1]} has {', '.join(datas[0][0]['aggregate'])}); "
                             "pass --metric with one every report has")
    points = [_point(d, p, keys) for d, p in datas]
    order = "given"
    if all(p.time for p in points):
        order = "time"
        idx = sorted(range(len(points)), key=lambda i: dt.datetime.fromisoformat(points[i].time))
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
        thresholds = {m: metric_value(base, m, str(baseline)) - drop for m in keys}
        rule = f"at most {drop:g} below the baseline {baseline}"
    notes = [f"{p.label}: {', '.join(p.changed)} changed since the previous report" for p in marked if p.changed]
    return History(tuple(keys), tuple(marked), thresholds, order, rule, notes)


__all__ = ["History", "Point", "history", "recorded"]
