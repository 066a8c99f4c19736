"""Every store row carries a check that ties its grade to its raw answer; an altered row is an error, never a grade.

A row written by this relgrade holds ``check`` in its JSON record: the first 32 hex digits of SHA-256 over
``key|status|grade|length|raw answer`` (what the grade must follow from; the other fields of the record, reason,
tokens, cost, do not decide a grade). Reading a row recomputes it (:func:`verify`): ``UPDATE judgments SET grade =
3 - grade``, a status flipped from ``unjudged`` to ``judged``, an edited raw answer, a row copied under another key
all change it. It costs about 5% of writing a row and of reading one back (``python benchmarks/store_protocol.py``).
This guards against edits, bugs and foreign tools, not against someone who recomputes the hash on purpose.

Rows written before the check existed (no ``check`` key) are verified by re-parsing (:func:`reparse_problem`):
the stored raw answer of a ``judged`` row must read as its grade under the row's prompt, with the parser that
wrote it; a row that is not ``judged`` has no grade. They open as they are, no migration.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

CHECK = "check"


def row_check(key: str, status: str, grade: int | None, record: Mapping[str, Any]) -> str:
    """The check of a row: SHA-256 of ``key|status|grade|len|raw answer`` (the length makes it unambiguous)."""
    raw = record.get("raw_answer")
    raw = raw if isinstance(raw, str) else repr(raw)
    blob = f"{key}|{status}|{grade}|{len(raw)}|{raw}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(blob).hexdigest()[:32]


def seal(key: str, status: str, grade: int | None, record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` with its ``check`` (what a store writes)."""
    body = {k: v for k, v in record.items() if k not in {CHECK, "status", "grade"}}
    body[CHECK] = row_check(key, status, grade, body)
    return body


def verify(key: str, status: str, grade: int | None, record: Mapping[str, Any]) -> bool:
    """True when the row's check matches (a row without one is checked later by :func:`reparse_problem`)."""
    check = record.get(CHECK)
    return check is None or check == row_check(key, status, grade, record)


def reparse_problem(record: Mapping[str, Any], scale, grade_key: str) -> str | None:
    """Why a row without a check is not what its raw answer says (None when it is); see the module doc."""
    if CHECK in record:
        return None
    status, grade = record.get("status"), record.get("grade")
    if status != "judged":
        return None if grade is None else f"status {status} with grade {grade}"
    answer = record.get("raw_answer")
    if not isinstance(answer, str):
        return "a judged row without its raw answer"
    from relgrade.judge._parse import parse_answer

    read = parse_answer(answer, scale, grade_key).grade
    return None if read == grade else f"grade {grade} but its stored answer reads {read}"


__all__ = ["CHECK", "reparse_problem", "row_check", "seal", "verify"]
