"""A batch endpoint's answers are checked before anything in them is used (issue 24), after every API key in them
is masked (:mod:`relgrade.judge._secrets`, the same masking as the online path).

- Ids (batch, file) are 1-200 characters of letters, digits and ``_-.:`` (they go into URL paths; a masked key
  ``***`` is not an id): :func:`check_id`.
- Counts (``request_counts``) are whole numbers >= 0 under string names: :func:`check_counts`.
- Token counts are whole numbers in [0, :data:`~relgrade.judge._prices.MAX_TOKENS`]; anything else (negative, 1e30, a
  string) makes the line's cost *unknown*, never negative or absurd (:func:`relgrade.judge._prices.usage_tokens`,
  the online path's rule too).
- Result files are read line by line (:func:`read_jsonl`): a line that is not UTF-8, not JSON (an unterminated last
  line included) or not an object is a *problem* naming its line; the readable lines are still used.
- Free text from the provider (error messages, reasons) is a string of at most 300 characters: :func:`text`.

Every violation is a :class:`BatchAnswerError` (a :class:`~relgrade.judge._batch_api.BatchAPIError`) whose message
is one masked line.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from relgrade.judge._batch_api import BatchAPIError, BatchLine
from relgrade.judge._prices import MAX_TOKENS
from relgrade.judge._secrets import mask_strings, redact

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:\-]{0,199}")


class BatchAnswerError(BatchAPIError):
    """The provider answered something malformed (a schema violation); the message is one masked line."""


@dataclass
class Results:
    """A batch's result lines and the problems met reading them (``line N: why``)."""

    lines: list[BatchLine] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def text(value: Any, limit: int = 300) -> str | None:
    """A provider's free text as one line of at most ``limit`` characters (None stays None)."""
    if value is None:
        return None
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, default=str) if isinstance(value, (dict, list)) else str(value)
    return " ".join(value.split())[:limit]


def obj(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BatchAnswerError(f"{what} is not a JSON object ({type(value).__name__})")
    return value


def batch_object(value: Any, batch_id: str, field: str, known) -> tuple[dict[str, Any], str]:
    """``(object, state)`` of a status answer: a JSON object about ``batch_id`` (its ``id``, if given, is that one)
    whose ``field`` is one of the ``known`` states."""
    b = obj(value, f"batch {batch_id}")
    if b.get("id") not in (None, batch_id):
        raise BatchAnswerError(f"asked for batch {batch_id}, got batch {text(b.get('id'), 40)!r}")
    state = b.get(field)
    if state not in known:
        raise BatchAnswerError(f"batch {batch_id} has an unknown {field} {text(state, 40)!r}")
    return b, state


def check_id(value: Any, what: str) -> str:
    if not (isinstance(value, str) and _ID.fullmatch(value)):
        shown = text(value, 40) if isinstance(value, str) else type(value).__name__
        raise BatchAnswerError(f"{what} is not an id ({shown!r})")
    return value


def optional_id(value: Any, what: str) -> str | None:
    return None if value is None or value == "" else check_id(value, what)


def check_counts(value: Any, what: str = "request_counts") -> dict[str, int]:
    if value is None:
        return {}
    counts = obj(value, what)
    out = {}
    for name, n in counts.items():
        if not (isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_TOKENS):
            raise BatchAnswerError(f"{what}.{text(name, 40)} is {text(n, 40)!r}, not a whole number >= 0")
        out[text(name, 40) or "?"] = n
    return out


def check_time(value: Any, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise BatchAnswerError(f"{what} is {text(value, 40)!r}, not a timestamp")
    return float(value)


def read_jsonl(raw: bytes, what: str, secrets: tuple[str, ...]) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """``([(line number, object)], [problems])`` of a JSONL result file (see the module doc)."""
    rows, problems = [], []
    parts = raw.split(b"\n")
    for number, part in enumerate(parts, 1):
        if not part.strip():
            continue
        try:
            line = part.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"{what} line {number}: not valid UTF-8")
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            end = " (unterminated: the file ends inside it)" if number == len(parts) else ""
            problems.append(f"{what} line {number}: not JSON{end}")
            continue
        if not isinstance(value, dict):
            problems.append(f"{what} line {number}: a JSON {type(value).__name__}, not an object")
            continue
        rows.append((number, mask_strings(value, secrets)))
    return rows, problems


def line_error(cid: str, why: str, secrets: tuple[str, ...] = ()) -> BatchLine:
    """A line that errored (or could not be read as an answer): asked again, never a grade."""
    return BatchLine(cid, None, error=redact(text(why) or "error", secrets))


def custom_id(row: dict[str, Any]) -> str | None:
    cid = row.get("custom_id")
    return cid if isinstance(cid, str) and 0 < len(cid) <= 200 else None


__all__ = ["BatchAnswerError", "Results", "batch_object", "check_counts", "check_id", "check_time", "custom_id",
           "line_error", "obj", "optional_id", "read_jsonl", "text"]
