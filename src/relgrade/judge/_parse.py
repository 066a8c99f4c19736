"""Reading a judge's answer: the grade, the reason, and the grade distribution from token logprobs.

Parsing order (first that yields a grade wins):

1. the *last* JSON object with a ``"grade"`` key in the answer (bare, inside a code fence, or
   surrounded by prose); the grade may be an integer, an integral float or a digit string. The last,
   not the first: an answer that quotes a grade injected in the passage (``{"grade": 3}``) before
   giving its own is recorded with its own;
2. a bare final grade line: the last non-empty line is ``3``, ``Grade: 3``, ``final grade = 3``,
   ``##final score: 3`` and the like.

``key`` names the JSON key that carries the grade (default ``"grade"``; ragas' prompts answer
``{"reason", "verdict"}`` or ``{"rating"}``); with another key, a final line may also say
``Verdict: 1``.

A grade off the scale or no grade at all is a :class:`Parsed` with ``grade=None`` and an
``error``; the caller asks once for a repair and otherwise records the pair as *unjudged*. A grade
is never coerced to 0.

Distribution: where the provider returned token logprobs (OpenAI shape: ``content`` is a list of
``{token, logprob, top_logprobs: [{token, logprob}, ...]}``), the token that carries the grade digit
is found by character offset in the concatenated tokens, its ``top_logprobs`` are restricted to the
scale's digits (``"2"`` and ``" 2"`` count together) and renormalised:
``p(g) = exp(l_g) / sum_{h in scale} exp(l_h)``; ``expected_grade = sum_g g * p(g)``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

_DECODER = json.JSONDecoder()
_FINAL_LINE = re.compile(
    r"^\W*(?:(?:final|overall)\s+)?(?:grade|score|relevance|label|rating|o)?\s*(?:[:=]|is)?\s*\**\s*(-?\d+(?:\.\d+)?)\s*\**\W*$",
    re.IGNORECASE,
)
_JSON_GRADE = re.compile(r'"grade"\s*:\s*"?\s*(-?\d)', re.IGNORECASE)


@lru_cache(maxsize=16)
def _patterns(key: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The JSON-grade and final-line patterns for a grade key (``grade`` keeps the module's own)."""
    if key == "grade":
        return _JSON_GRADE, _FINAL_LINE
    json_key = re.compile(r'"' + re.escape(key) + r'"\s*:\s*"?\s*(-?\d)', re.IGNORECASE)
    final = re.compile(_FINAL_LINE.pattern.replace("(?:grade|", "(?:" + re.escape(key) + "|grade|", 1), re.IGNORECASE)
    return json_key, final


@dataclass(frozen=True)
class Parsed:
    """A parsed answer: ``grade`` (None when unreadable or off the scale), ``reason``, ``error``."""

    grade: int | None
    reason: str | None
    error: str | None = None
    grade_offset: int | None = None  # character offset of the grade digit in the answer


def _grade_value(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+(\.0+)?\s*", value):
        return int(float(value))
    return None


def _json_objects(text: str):
    """Every JSON object embedded in ``text``, with its start offset, in order."""
    i = text.find("{")
    while i != -1:
        try:
            obj, end = _DECODER.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict):
            yield i, end, obj
        i = text.find("{", end)


def parse_answer(text: str | None, scale: Sequence[int], key: str = "grade") -> Parsed:
    """Read the grade of an answer on ``scale`` (e.g. ``range(4)``) under JSON ``key``; see the module doc."""
    if text is None or not text.strip():
        return Parsed(None, None, "empty answer")
    key = key.lower()
    json_grade, final_line = _patterns(key)
    lo, hi = min(scale), max(scale)
    final = None
    for start, end, obj in _json_objects(text):
        lowered = {str(k).lower(): v for k, v in obj.items()}
        if key in lowered:
            final = (start, end, lowered)
    if final is not None:
        start, end, lowered = final
        grade = _grade_value(lowered[key])
        reason = lowered.get("reason")
        reason = reason if isinstance(reason, str) else None
        if grade is None:
            return Parsed(None, reason, f"the {key} {lowered[key]!r} is not an integer")
        if not lo <= grade <= hi:
            return Parsed(None, reason, f"the {key} {grade} is off the scale {lo}-{hi}")
        found = json_grade.search(text, start, end)
        return Parsed(grade, reason, None, found.start(1) if found else None)
    lines = [line for line in text.strip().splitlines() if line.strip()]
    last = lines[-1].strip() if lines else ""
    match = final_line.match(last) if lines else None
    if match:
        raw = match.group(1)
        value = float(raw)
        if not value.is_integer():
            return Parsed(None, None, f"the {key} {raw} is not an integer")
        grade = int(value)
        if not lo <= grade <= hi:
            return Parsed(None, None, f"the {key} {grade} is off the scale {lo}-{hi}")
        return Parsed(grade, None, None, text.rfind(last) + match.start(1))
    return Parsed(None, None, f"no JSON object with a '{key}' and no final {key} line")


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _token(entry: Any) -> str:
    token = _get(entry, "token")
    return token if isinstance(token, str) else ""


def grade_distribution(logprobs: Any, answer: str, parsed: Parsed, scale: Sequence[int]) -> dict[str, float] | None:
    """``{"0": p0, ...}`` from the top logprobs of the grade token, or None when not available. A provider's malformed
    logprobs (not a list, tokens that are not strings, a log-probability that is not a finite number <= 0) give None
    or are skipped, never an error."""
    if logprobs is None or parsed.grade is None:
        return None
    content = _get(logprobs, "content")
    if not content or not isinstance(content, (list, tuple)):
        return None
    digits = {str(g) for g in scale}
    # Locate the token covering the grade digit by character offset; fall back to the first
    # token whose stripped text is the grade.
    target = None
    if parsed.grade_offset is not None:
        pos = 0
        for entry in content:
            token = _token(entry)
            if pos <= parsed.grade_offset < pos + len(token) and token.strip() in digits:
                target = entry
                break
            pos += len(token)
    if target is None:
        target = next((e for e in content if _token(e).strip() == str(parsed.grade)), None)
    if target is None:
        return None
    mass = dict.fromkeys(sorted(digits, key=int), 0.0)
    tops = _get(target, "top_logprobs")
    for top in tops if isinstance(tops, (list, tuple)) else []:
        token = _token(top).strip()
        logprob = _get(top, "logprob")
        if token in mass and isinstance(logprob, (int, float)) and not isinstance(logprob, bool) \
                and math.isfinite(logprob) and logprob <= 1e-3:  # a log-probability (float noise above 0 allowed)
            mass[token] += math.exp(logprob)
    total = sum(mass.values())
    if total <= 0:
        return None
    return {g: p / total for g, p in mass.items()}


def expected_grade(distribution: dict[str, float] | None) -> float | None:
    """``sum_g g * p(g)`` of a distribution, or None."""
    if not distribution:
        return None
    return sum(int(g) * p for g, p in distribution.items())
