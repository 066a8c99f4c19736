"""Does a report agree with itself? Checked after its numbers (:mod:`relgrade.gating._checks`), before the gate
trusts it: a report that contradicts itself is an :class:`~relgrade.InputError` (exit 2), never a pass.

Per kind (``settings.kind``; a report without one is checked as far as it goes):

- every kind: ``kind`` one of :data:`KINDS` (and the same at the top, where a report records it twice); the
  ``aggregate`` holds exactly the metrics ``settings.metrics`` lists; ``paired`` is ``true`` or absent (``"no"`` is
  not a yes), and only a ``compare`` report is paired;
- ``evaluate``: no metric has a ``ppi`` part, ``per_query`` is ``{query: {metric: value}}``, and each metric's
  value is the mean of its per-query values, over as many queries as the report counts (``n_queries``);
- ``ann-recall``: its one metric is ``neighbour_recall@k`` for its own ``settings.k``, the mean of its per-query
  values;
- ``compare`` (``relgrade compare --human --judge``): ``paired`` is true, and each difference is ``b - a``
  (within [-1, 1]); where the entry's note says a run's PPI++ value lay outside [0, 1] and is reported as the
  nearest end, with the value the note gives;
- ``estimate``: each metric has its ``ppi`` estimate (without a paired report's ``a`` and ``b``), and the human-only and judge-only parts count the report's
  labeled and all queries.

A report without leak information where it should have some (an ``ann-recall`` report made with labels, any other
kind) is not refused here: the gate's leak guard fails it (exit 1), as it fails any report without leaks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from relgrade._errors import InputError

KINDS = ("evaluate", "estimate", "compare", "ann-recall")
"""The kinds of report the gate and history read (``relgrade evaluate / estimate / compare --human --judge /
ann-recall --json``)."""
_TOL = 1e-9
_FIX = "the report contradicts itself (edited by hand?): re-write it with the command that made it"


def _bad(name: str, what: str) -> InputError:
    return InputError(f"{what}; {_FIX}", path=name)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _mean_of(rows: Any, metric: str) -> tuple[float, int] | None:
    """(mean, count) of ``metric`` over the per-query rows (``{q: {metric: v}}`` or ``{q: v}``), None if absent."""
    if not isinstance(rows, Mapping) or not rows:
        return None
    values = [r.get(metric) if isinstance(r, Mapping) else r for r in rows.values()]
    values = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return (math.fsum(values) / len(values), len(values)) if values else None


def _means(data: Mapping, name: str) -> None:
    """Each metric's value is the mean of its per-query values, over the queries the report counts."""
    rows = data.get("per_query")
    n_top = _count(data.get("n_queries"))
    if isinstance(rows, Mapping) and n_top is not None and n_top != len(rows):
        raise _bad(name, f"n_queries is {n_top} but per_query holds {len(rows)} queries")
    for metric, entry in data["aggregate"].items():
        if not isinstance(entry, Mapping):
            continue
        got = _mean_of(rows, metric)
        if got is None:
            continue
        mean, n = got
        value = entry.get("value")
        if isinstance(value, (int, float)) and abs(value - mean) > _TOL * max(1.0, abs(mean)):
            raise _bad(name, f"aggregate.{metric}.value is {value!r} but the mean of its {n} per-query values is "
                             f"{mean!r}")
        counted = _count(entry.get("n_queries"))
        if counted is not None and counted != n:
            raise _bad(name, f"aggregate.{metric}.n_queries is {counted} but per_query holds {n} values of it")


def _evaluate(data: Mapping, name: str) -> None:
    for metric, entry in data["aggregate"].items():
        if isinstance(entry, Mapping) and "ppi" in entry:
            raise _bad(name, f"aggregate.{metric} has a 'ppi' part, which an evaluate report does not have (an "
                             "estimate's or a paired comparison's)")
    rows = data.get("per_query")
    if isinstance(rows, Mapping) and any(not isinstance(r, Mapping) or any(isinstance(v, Mapping) for v in r.values())
                                         for r in rows.values()):
        raise _bad(name, "per_query is not one {metric: value} object per query, as an evaluate report's is")
    _means(data, name)


_CLIPPED = re.compile(r"PPI\+\+ value of ([AB]), (\S+), lies outside \[0, 1\]")
"""How a paired report's note says a run's PPI++ value was reported as the nearest end of [0, 1] (relgrade.hybrid._ab)."""


def _paired(data: Mapping, name: str) -> None:
    for metric, entry in data["aggregate"].items():
        ppi = entry.get("ppi") if isinstance(entry, Mapping) else None
        if not isinstance(ppi, Mapping):
            raise _bad(name, f"aggregate.{metric} has no 'ppi' difference, which a paired report holds")
        a, b, d = ppi.get("a"), ppi.get("b"), ppi.get("value")
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b, d)):
            raise _bad(name, f"aggregate.{metric}.ppi lacks the a, b and value (B - A) a paired report holds")
        raw, tol = {"A": float(a), "B": float(b)}, _TOL
        note = entry.get("note")
        for run, text in _CLIPPED.findall(note if isinstance(note, str) else ""):
            try:
                value = float(text.rstrip(","))
            except ValueError:
                continue
            reported = {"A": a, "B": b}[run]
            if math.isfinite(value) and abs(min(1.0, max(0.0, value)) - reported) <= _TOL:
                raw[run], tol = value, 1e-5 * (2 + abs(value))  # the note gives 6 significant digits
        expected = min(1.0, max(-1.0, raw["B"] - raw["A"]))  # the difference is reported within [-1, 1]
        if abs(d - expected) > tol:
            clipped = "" if (raw["A"], raw["B"]) == (a, b) else f" (before [0, 1]: a {raw['A']!r}, b {raw['B']!r})"
            raise _bad(name, f"aggregate.{metric}.ppi.value (B - A) is {d!r} but its a is {a!r} and its b "
                             f"{b!r}{clipped}")


def _estimate(data: Mapping, name: str) -> None:
    n_labeled, n_unlabeled = _count(data.get("n_labeled")), _count(data.get("n_unlabeled"))
    for metric, entry in data["aggregate"].items():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("ppi"), Mapping):
            raise _bad(name, f"aggregate.{metric} has no 'ppi' estimate, which an estimate report holds")
        if "a" in entry["ppi"] or "b" in entry["ppi"]:
            raise _bad(name, f"aggregate.{metric}.ppi holds runs a and b, as a paired comparison does, not an "
                             "estimate")
        parts = (("human_only", n_labeled, "labeled queries"),
                 ("judge_only", None if n_labeled is None or n_unlabeled is None else n_labeled + n_unlabeled,
                  "queries in all"))
        for part, n, what in parts:
            got = _count(entry.get(part, {}).get("n_queries")) if isinstance(entry.get(part), Mapping) else None
            if n is not None and got is not None and got != n:
                raise _bad(name, f"aggregate.{metric}.{part}.n_queries is {got} but the report has {n} {what}")


def _ann(data: Mapping, settings: Mapping, name: str) -> None:
    k = settings.get("k")
    if not (isinstance(k, int) and not isinstance(k, bool) and k >= 1):
        raise _bad(name, f"settings.k is {k!r}, not the whole number an ann-recall report records")
    own = f"neighbour_recall@{k}"
    if list(data["aggregate"]) != [own]:
        raise _bad(name, f"an ann-recall report at k {k} holds {own} alone, not "
                         f"{', '.join(map(str, data['aggregate'])) or 'nothing'}")
    _means(data, name)


def check_consistent(data: Mapping[str, Any], name: str) -> None:
    """Refuse (:class:`InputError`) a report that contradicts itself (module docstring)."""
    settings = data.get("settings")
    if not isinstance(settings, Mapping):
        return
    kind = settings.get("kind")
    if "kind" in data and data["kind"] != kind:
        raise _bad(name, f"the report's kind is {data['kind']!r} but settings.kind is {kind!r}")
    if kind is not None and kind not in KINDS:
        raise _bad(name, f"settings.kind is {kind!r}, not a report kind relgrade gates ({', '.join(KINDS)})")
    if "paired" in settings and settings["paired"] is not True:
        raise _bad(name, f"settings.paired is {settings['paired']!r}; a paired report records true")
    if settings.get("paired") and kind != "compare":
        raise _bad(name, f"settings.paired is true but settings.kind is {kind!r}; only a compare report is paired")
    metrics = settings.get("metrics")
    if isinstance(metrics, list) and set(metrics) != set(map(str, data["aggregate"])):
        raise _bad(name, f"settings.metrics lists {', '.join(map(str, metrics)) or 'nothing'} but the aggregate holds "
                         f"{', '.join(map(str, data['aggregate'])) or 'nothing'}")
    if kind == "evaluate":
        _evaluate(data, name)
    elif kind == "ann-recall":
        _ann(data, settings, name)
    elif kind == "compare":
        if settings.get("paired") is not True:
            raise _bad(name, "a compare report with an 'aggregate' is paired (compare --human --judge), and this "
                             "one does not record settings.paired true")
        _paired(data, name)
    elif kind == "estimate":
        _estimate(data, name)


GATED_BY = {"evaluate": "relgrade gate --baseline B.json --current C.json (or --min)",
            "estimate": "relgrade gate --baseline B.json --current C.json (or --min)",
            "compare": "relgrade gate --paired AB.json", "ann-recall": "relgrade gate --current R.json --min 0.95"}


def require_kind(data: Mapping[str, Any], name: str, allowed: tuple[str, ...], reader: str = "this gate") -> None:
    """Refuse a report of a kind ``reader`` does not read, naming the gate that does."""
    settings = data.get("settings")
    kind = settings.get("kind") if isinstance(settings, Mapping) else None
    if kind is not None and kind not in allowed:
        kinds = ", ".join(allowed[:-1]) + (" and " if len(allowed) > 1 else "") + allowed[-1]
        raise InputError(f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} report is gated with '{GATED_BY[kind]}'; "
                         f"{reader} reads {kinds} reports", path=name)


__all__ = ["KINDS", "check_consistent", "require_kind"]
