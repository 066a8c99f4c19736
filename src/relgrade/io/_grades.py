"""Grades: the one grade parser, the lower median of several annotators, scales, and the field names every label
reader accepts (aliases such as ``qid``, ``docno``, ``relevance``, ``rater``)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from relgrade._errors import InputError

SOURCES = ("human", "judge")
DEFAULT_SCALE = (0, 1, 2, 3)
DESIGNS = ("queries", "strata", "active")

QUERY_FIELDS = ("query_id", "qid", "topic", "query-id")
DOC_FIELDS = ("doc_id", "docid", "docno", "pid", "corpus_id", "corpus-id")
GRADE_FIELDS = ("grade", "relevance", "label", "score", "rel")
ANNOTATOR_FIELDS = ("annotator", "assessor", "rater")
TIME_FIELDS = ("time", "timestamp", "labeled_at", "created")
DETAIL_KEYS = ("distribution", "expected_grade", "reason", "model", "prompt_hash", "status")


def parse_grade(value: Any, *, path: str | Path | None = None, line: int | None = None,
                what: str = "grade") -> int | None:
    """An integer grade from ``2``, ``2.0`` or ``"2"``; None for null or an empty cell. NaN, infinity,
    booleans, fractions and words are an :class:`InputError` naming the file and line."""
    if type(value) is str and value.isdecimal():  # the common case (int() reads every Unicode decimal digit)
        return int(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise InputError(f"{what} {value!r} is a boolean; use an integer grade such as 0, 1, 2 or 3", path=path, line=line)
    if isinstance(value, int):
        return value
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise InputError(f"{what} {value!r} is not a number; use an integer grade such as 0, 1, 2 or 3",
                         path=path, line=line) from None
    if not math.isfinite(number):
        raise InputError(f"{what} {value!r} is not a finite number; use an integer grade such as 0, 1, 2 or 3",
                         path=path, line=line)
    if number != int(number):
        raise InputError(f"{what} {value!r} is not an integer grade; use 0, 1, 2 or 3", path=path, line=line)
    return int(number)


def lower_median(grades: Iterable[int]) -> int:
    """The lower median of several annotators' grades (1 and 2 give 1; 0, 2, 3 give 2)."""
    ordered = sorted(grades)
    return ordered[(len(ordered) - 1) // 2]


def parse_scale_value(value: Any, *, path: str | Path | None = None, line: int | None = None) -> tuple[int, ...]:
    """A declared scale (a list of at least two increasing integers) or an :class:`InputError`."""
    ok = isinstance(value, (list, tuple)) and len(value) >= 2 and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value)
    if not ok or list(value) != sorted(set(value)):
        raise InputError(f"'scale' must list at least two increasing integer grades, e.g. [0, 1, 2, 3]; got {value!r}",
                         path=path, line=line)
    from relgrade._defaults import MAX_SCALE_GRADES

    if value[-1] - value[0] >= MAX_SCALE_GRADES:  # grade ranges lo..hi are built from it
        raise InputError(f"'scale' spans {value[0]}-{value[-1]}, over the limit of {MAX_SCALE_GRADES} grades",
                         path=path, line=line)
    return tuple(value)



def span(scale: Sequence[int]) -> str:
    """``0-3`` for a contiguous scale, else ``0,2,4``."""
    scale = list(scale)
    return f"{scale[0]}-{scale[-1]}" if scale == list(range(scale[0], scale[-1] + 1)) else ",".join(map(str, scale))
