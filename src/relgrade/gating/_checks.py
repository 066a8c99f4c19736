"""What ``gate`` checks in both reports before comparing them: every number and interval, the types of the settings,
and bounded-size numbers. A malformed report is an :class:`~relgrade.InputError` (exit 2), never a pass.

Reading (:func:`loads_report`): a JSON number of more than :data:`MAX_DIGITS` characters (a 5000-digit number) is
refused while parsing; ``NaN`` and ``Infinity`` are read so that the check below can name where they are.

Checking (:func:`check_report`), with one message template (where, the value, what is wrong, how to fix):

- ``aggregate``: one entry per metric, each key a metric's name; in an entry, every number is finite; a metric's
  values (``value``, a ``ci95`` end, a per-metric number, the ``values`` of repeats, a pair's ``a`` and ``b``) are in
  the metric's range [0, 1] (a paired report's differences, ``settings.kind`` ``compare``, in [-1, 1]); a ``ci95`` is ``null`` or
  two numbers ``lo <= hi`` with ``lo <= value <= hi`` (values of ``estimate``'s ``ppi``, ``human_only``,
  ``judge_only`` alike); counts (``n_*``) are whole numbers >= 0; ``width_ratio`` and ``effective_*`` numbers >= 0.
- ``per_query``: every number finite and in [0, 1] (a metric value).
- other numbers in those objects: finite and at most 1e15 in size; anywhere else in the report: finite.
- ``settings``: ``labels`` and ``queries`` objects with a ``sha256`` string (and whole counts), ``rel_threshold`` an
  integer, ``no_answer`` one of the rules, ``alpha`` in (0, 1), ``metrics`` a list of names, the cutoffs
  ``leak_k`` / ``failure_k`` positive integers.

``null`` stands for "not computed" (an interval of one query, a judge that graded nothing) and is accepted wherever a
number is optional; the gate then refuses the metric it needs only when it needs it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from relgrade._errors import InputError

MAX_DIGITS = 40
"""Longest JSON number a report may hold (a float's 17 significant digits, a sign, an exponent, with room)."""
MAX_MAGNITUDE = 1e15
MAX_COUNT = 10 ** 12
_TOL = 1e-9
_NONNEGATIVE = ("width_ratio", "effective_")  # numbers of an estimate entry that are >= 0 (or null)
_FIX = "re-write it with 'relgrade evaluate --json' or 'relgrade estimate --json'"


class _Refused(ValueError):
    pass


def _number(text: str) -> float | int:
    if len(text) > MAX_DIGITS:
        raise _Refused(f"a number of {len(text)} characters (at most {MAX_DIGITS})")
    return float(text) if any(c in text for c in ".eE") else int(text)


def loads_report(text: str, path: str) -> Any:
    """Parse a report's JSON text; InputError (naming the line) for invalid JSON or an over-long number."""
    try:
        return json.loads(text, parse_int=_number, parse_float=_number)
    except _Refused as exc:
        raise InputError(f"{exc}; the report is malformed: {_FIX}", path=path) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc.msg}); pass a file written by 'relgrade evaluate --json'",
                         path=path, line=exc.lineno) from None
    except RecursionError:
        raise InputError("JSON nested too deeply; pass a file written by 'relgrade evaluate --json'", path=path) from None


def _show(value: Any) -> str:
    try:
        text = repr(value)
    except ValueError:  # an int too long to print (Python's digit limit)
        return "a number too long to show"
    return text if len(text) <= 60 else text[:57] + "..."


def _bad(where: str, value: Any, problem: str, name: str) -> InputError:
    return InputError(f"{where} is {_show(value)}, {problem}; the report is malformed: {_FIX}", path=name)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finite(value: Any, where: str, name: str, *, unit: bool = False, low: float = 0.0) -> float:
    if not _is_number(value):
        raise _bad(where, value, "not a number", name)
    if abs(value) > MAX_MAGNITUDE or not math.isfinite(value):
        raise _bad(where, value, "not a finite number", name)
    if unit and not low - _TOL <= value <= 1 + _TOL:
        raise _bad(where, value, f"outside the range [{low:g}, 1]", name)
    return float(value)


def _count(value: Any, where: str, name: str) -> None:
    if not (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT):
        raise _bad(where, value, "not a whole number >= 0", name)


def _interval(ci: Any, value: Any, where: str, name: str, low: float = 0.0) -> None:
    if ci is None:
        return
    if not (isinstance(ci, list) and len(ci) == 2):
        raise _bad(where, ci, "not null or a [low, high] pair", name)
    lo = _finite(ci[0], f"{where}[0]", name, unit=True, low=low)
    hi = _finite(ci[1], f"{where}[1]", name, unit=True, low=low)
    if lo > hi + _TOL:
        raise _bad(where, ci, "a reversed interval (low > high)", name)
    if _is_number(value) and not lo - _TOL <= value <= hi + _TOL:
        raise _bad(where, ci, f"an interval that does not hold its value {value!r}", name)


def _entry(obj: Any, where: str, name: str, low: float = 0.0) -> None:
    """A metric's entry (or a part of it: ``ppi``, ``human_only``...): numbers, intervals and counts."""
    if obj is None:
        return
    if _is_number(obj):
        _finite(obj, where, name, unit=True, low=low)
        return
    if not isinstance(obj, Mapping):
        if not isinstance(obj, str):
            raise _bad(where, obj, "not a number or an object", name)
        return
    for key, value in obj.items():
        at = f"{where}.{key}"
        if key == "ci95":
            _interval(value, obj.get("value"), at, name, low)
        elif key in ("value", "a", "b"):  # a metric's value (or its difference, low -1); runs A and B of a pair
            if value is not None:
                _finite(value, at, name, unit=True, low=low if key == "value" else 0.0)
        elif str(key).startswith("n_"):
            if value is not None:
                _count(value, at, name)
        elif str(key).startswith(_NONNEGATIVE):
            if value is not None and _finite(value, at, name) < 0:
                raise _bad(at, value, "negative", name)
        elif isinstance(value, Mapping):
            _entry(value, at, name, low)
        elif isinstance(value, list):
            for i, item in enumerate(value):  # e.g. repeats.values: one metric value per repeat
                if isinstance(item, Mapping):
                    _entry(item, f"{at}[{i}]", name, low)
                elif isinstance(item, (int, float)):
                    _finite(item, f"{at}[{i}]", name, unit=key == "values")
        elif _is_number(value) or isinstance(value, bool):
            _finite(value, at, name)
        elif value is not None and not isinstance(value, str):
            raise _bad(at, value, "not a number", name)


def _metric_name(key: Any, where: str, name: str) -> None:
    """A metric's name: a short string (a report may hold its own measures, e.g. ``neighbour_recall@10``)."""
    if not (isinstance(key, str) and 0 < len(key) <= 200 and key.strip() == key):
        raise _bad(where, key, "not a metric name", name)


def _per_query(obj: Any, where: str, name: str, low: float = 0.0, depth: int = 0) -> None:
    if obj is None or depth > 3:
        return
    if not isinstance(obj, Mapping):
        raise _bad(where, obj, "not an object", name)
    for key, value in obj.items():
        if isinstance(value, Mapping):
            _per_query(value, f"{where}.{key}", name, low, depth + 1)
        elif value is not None:
            _finite(value, f"{where}.{key}", name, unit=True, low=low)


def _fingerprint(value: Any, where: str, name: str, counts: tuple[str, ...]) -> None:
    if not isinstance(value, Mapping):
        raise _bad(where, value, "not an object with a sha256", name)
    sha = value.get("sha256")
    if not (isinstance(sha, str) and 0 < len(sha) <= 128):
        raise _bad(f"{where}.sha256", sha, "not a hash string", name)
    for key in counts:
        if value.get(key) is not None:
            _count(value[key], f"{where}.{key}", name)


def _settings(settings: Any, name: str) -> None:
    from relgrade.metrics._settings import NO_ANSWER_MODES

    if not isinstance(settings, Mapping):
        return  # a report without settings: the gate's own check names what is missing
    if "labels" in settings:
        _fingerprint(settings["labels"], "settings.labels", name, ("n_queries", "n_labels"))
    if "queries" in settings:
        _fingerprint(settings["queries"], "settings.queries", name, ("n",))
    threshold = settings.get("rel_threshold")
    if "rel_threshold" in settings and not (isinstance(threshold, int) and not isinstance(threshold, bool)
                                            and abs(threshold) <= 10 ** 6):
        raise _bad("settings.rel_threshold", threshold, "not an integer grade", name)
    if "no_answer" in settings and settings["no_answer"] not in NO_ANSWER_MODES:
        raise _bad("settings.no_answer", settings["no_answer"], f"not one of {', '.join(NO_ANSWER_MODES)}", name)
    alpha = settings.get("alpha")
    if alpha is not None and not (_is_number(alpha) and 0 < alpha < 1):
        raise _bad("settings.alpha", alpha, "not a number in (0, 1)", name)
    for key in ("leak_k", "failure_k"):
        k = settings.get(key)
        if k is not None and not (isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= MAX_COUNT):
            raise _bad(f"settings.{key}", k, "not a positive whole number", name)
    metrics = settings.get("metrics")
    if metrics is not None:
        if not isinstance(metrics, list):
            raise _bad("settings.metrics", metrics, "not a list of metric names", name)
        for m in metrics:
            _metric_name(m, "settings.metrics", name)


def _all_finite(obj: Any, where: str, name: str) -> None:
    """No NaN or infinity anywhere in the report (lists of leaks, failures, notes included)."""
    stack = [(obj, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise _bad(at or "a number", item, "not a finite number", name)
        if isinstance(item, int) and not isinstance(item, bool) and abs(item) > 10 ** MAX_DIGITS:
            raise _bad(at or "a number", item, "too large", name)
        if isinstance(item, Mapping):
            stack.extend((v, f"{at}.{k}" if at else str(k)) for k, v in item.items())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(item))


def check_report(data: dict[str, Any], name: str) -> dict[str, Any]:
    """Check every number, interval and setting of a report dict (see the module doc); return it."""
    settings = data.get("settings")
    low = -1.0 if isinstance(settings, Mapping) and settings.get("kind") == "compare" else 0.0  # differences B - A
    for key, entry in data["aggregate"].items():
        _metric_name(key, f"aggregate key {key!r}", name)
        _entry(entry, f"aggregate.{key}", name, low)
    if "per_query" in data:
        _per_query(data["per_query"], "per_query", name, low)
    _settings(data.get("settings"), name)
    _all_finite(data, "", name)
    from relgrade.gating._consistency import check_consistent  # does the report agree with itself (issue 34)

    check_consistent(data, name)
    return data


__all__ = ["MAX_DIGITS", "check_report", "loads_report"]
