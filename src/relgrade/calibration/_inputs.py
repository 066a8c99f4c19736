"""Reading judge and human labels for calibration ("bring your own judge").

Judge labels: any qrels file :func:`relgrade.io.read_qrels` reads, or the JSONL *details* file the
judge writes beside its qrels (one object per judgment with ``query_id``, ``doc_id``, ``grade`` — null
when unjudged — and optional ``distribution``, ``expected_grade``, ``reason``, ``query``, ``text``,
``model``). Human labels: TREC qrels, CSV/JSONL with an optional ``annotator`` column, or a file
written by ``relgrade sample`` once humans filled its ``grade`` column (rows still empty are skipped
and counted). Grades outside the declared scale are an error naming the file, the count and one
line: never clipped.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade.io import Qrels, read_qrels
from relgrade.io._qrels import ANNOTATOR_FIELDS, DOC_FIELDS, GRADE_FIELDS, QUERY_FIELDS
from relgrade.io._text import iter_jsonl, iter_lines, pick, read_text, sniff_kind

DETAIL_KEYS = ("distribution", "expected_grade", "reason")


@dataclass(frozen=True)
class JudgeLabels:
    """A judge's grades with what came beside them (scores, distributions, texts, reasons)."""

    name: str
    labels: Mapping[str, Mapping[str, int]]
    expected: Mapping[str, Mapping[str, float]] | None = None
    distribution: Mapping[tuple[str, str], Mapping[int, float]] = field(default_factory=dict)
    info: Mapping[tuple[str, str], Mapping[str, str]] = field(default_factory=dict)
    model: str | None = None
    n_unjudged: int = 0
    source: str | None = None
    scale: tuple[int, ...] | None = None
    """The judge's own scale when its details file says so (``"scale": [0, 1]``), else None (``--scale``)."""
    unjudged: tuple[tuple[str, str], ...] = ()
    """The ``(query_id, doc_id)`` pairs of the details file whose grade is null (pooled, not graded)."""


@dataclass(frozen=True)
class HumanLabels:
    """Human grades (consensus = lower median), per-annotator grades, texts, and skipped empty rows."""

    labels: Mapping[str, Mapping[str, int]]
    annotations: Mapping[tuple[str, str], Mapping[str, int]] = field(default_factory=dict)
    info: Mapping[tuple[str, str], Mapping[str, str]] = field(default_factory=dict)
    n_empty: int = 0
    source: str | None = None


def _bad_scale(path, count: int, sample: tuple[int, str], scale) -> InputError:
    number, line = sample
    line = line.strip()
    if len(line) > 160:
        line = line[:157] + "..."
    where = f"line {number}" if number else "for example"
    return InputError(
        f"{count} label(s) outside the scale {list(scale)}; e.g. {where}: {line!r}; "
        "fix the labels or declare the scale with --scale (nothing is clipped)",
        path=path,
    )


def _int_grade(value: Any, path, number: int) -> int:
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise InputError(f"grade {value!r} is not a number; use an integer grade", path=path, line=number) from None
    if f != int(f):
        raise InputError(f"grade {value!r} is not an integer grade", path=path, line=number)
    return int(f)


def _check_qrels_scale(path, text: str, qrels: Qrels, scale) -> None:
    allowed = set(scale)
    bad_pairs = {(q, d) for q, docs in qrels.labels.items() for d, g in docs.items() if g not in allowed}
    bad_pairs |= {key for key, grades in qrels.annotations.items() if any(g not in allowed for g in grades.values())}
    if not bad_pairs:
        return
    sample = (0, repr(sorted(bad_pairs)[0]))
    for number, line in iter_lines(text):
        if any(q in line and d in line for q, d in bad_pairs):
            sample = (number, line)
            break
    raise _bad_scale(path, len(bad_pairs), sample, scale)


def _is_details(text: str, path) -> bool:
    if sniff_kind(path, text) != "jsonl":
        return False
    for _, obj in iter_jsonl(path, text, what="judge file"):
        return "grade" in obj and any(k in obj for k in DETAIL_KEYS)
    return False


def read_judge(path: str | Path, *, scale=(0, 1, 2, 3), name: str | None = None) -> JudgeLabels:
    """Judge labels from a qrels file or a judge details JSONL (sniffed)."""
    text = read_text(path, what="judge labels file")
    label = name or Path(path).stem
    if not _is_details(text, path):
        qrels = read_qrels(path)
        _check_qrels_scale(path, text, qrels, scale)
        return JudgeLabels(label, qrels.to_dict(), source=str(path))
    declared = _declared_scale(path, text)
    if declared is not None:
        scale = declared
    allowed = set(scale)
    labels: dict[str, dict[str, int]] = {}
    expected: dict[str, dict[str, float]] = {}
    dist: dict[tuple[str, str], dict[int, float]] = {}
    info: dict[tuple[str, str], dict[str, str]] = {}
    model = None
    unjudged: dict[tuple[str, str], None] = {}
    n_unjudged = 0
    bad: list[tuple[int, str]] = []
    raw_lines = text.splitlines()
    for number, obj in iter_jsonl(path, text, what="judge details file"):
        q, d = pick(obj, QUERY_FIELDS), pick(obj, DOC_FIELDS)
        if q in (None, "") or d in (None, ""):
            raise InputError("each judgment needs 'query_id' and 'doc_id'", path=path, line=number)
        q, d = str(q), str(d)
        if model is None and isinstance(obj.get("model"), str):
            model = obj["model"]
        texts = {k: obj[k] for k in ("query", "text", "reason") if isinstance(obj.get(k), str)}
        if texts:
            info[(q, d)] = texts
        g = obj.get("grade")
        if g is None:
            unjudged[(q, d)] = None
            n_unjudged += 1
            continue
        g = _int_grade(g, path, number)
        if g not in allowed:
            bad.append((number, raw_lines[number - 1]))
            continue
        if d in labels.get(q, {}):
            raise InputError(f"pair ({q}, {d}) is judged twice; keep one judgment per pair", path=path, line=number)
        labels.setdefault(q, {})[d] = g
        e = obj.get("expected_grade")
        if isinstance(e, (int, float)) and not isinstance(e, bool):
            expected.setdefault(q, {})[d] = float(e)
        p = obj.get("distribution")
        if isinstance(p, Mapping):
            try:
                dist[(q, d)] = {int(k): float(v) for k, v in p.items()}
            except (TypeError, ValueError):
                raise InputError("'distribution' must map grades to probabilities, e.g. {\"0\": 0.1, ...}",
                                 path=path, line=number) from None
    if bad:
        raise _bad_scale(path, len(bad), bad[0], scale)
    return JudgeLabels(label, labels, expected or None, dist, info, model, n_unjudged, str(path), declared,
                       tuple(k for k in unjudged if k[1] not in labels.get(k[0], {})))


def _declared_scale(path, text: str) -> tuple[int, ...] | None:
    """The ``scale`` list of the first judgment (``relgrade judge`` writes it on every row), or None."""
    for number, obj in iter_jsonl(path, text, what="judge details file"):
        value = obj.get("scale")
        if value is None:
            return None
        ok = isinstance(value, list) and len(value) >= 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                 for v in value)
        if not ok or value != sorted(set(value)):
            raise InputError(f"'scale' must list at least two increasing integer grades, e.g. [0, 1, 2, 3]; got {value!r}",
                             path=path, line=number)
        return tuple(value)
    return None


def binarize(labels: Mapping[Any, Mapping[str, int]], threshold: int, scale: tuple[int, int]) -> dict[Any, dict[str, int]]:
    """``labels`` (``{query: {doc: grade}}`` or ``{(query, doc): {annotator: grade}}``) on a binary ``scale``:
    ``scale[1]`` where the grade is ``>= threshold``, else ``scale[0]``."""
    lo, hi = scale
    return {q: {d: hi if g >= threshold else lo for d, g in docs.items()} for q, docs in labels.items()}


def _rows(path, text: str, kind: str) -> Iterator[tuple[int, dict[str, Any], str]]:
    raw = text.splitlines()
    if kind == "jsonl":
        for number, obj in iter_jsonl(path, text, what="human labels file"):
            yield number, obj, raw[number - 1]
        return
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames:
        raise InputError("CSV has no header; the first line must name query_id,doc_id,grade", path=path, line=1)
    reader.fieldnames = [h.strip().lower() for h in reader.fieldnames]
    if not any(h in reader.fieldnames for h in GRADE_FIELDS):
        raise InputError(f"CSV header {reader.fieldnames} has no grade column; add 'grade'", path=path, line=1)
    for row in reader:
        number = reader.line_num
        yield number, {k: (v.strip() if isinstance(v, str) else v) for k, v in row.items() if k}, \
            raw[number - 1] if number - 1 < len(raw) else ""


def read_human(path: str | Path, *, scale=(0, 1, 2, 3)) -> HumanLabels:
    """Human labels; rows of a ``relgrade sample`` file whose grade is still empty are skipped and counted."""
    text = read_text(path, what="human labels file")
    kind = sniff_kind(path, text)
    if kind == "jsonl":
        first = next((obj for _, obj in iter_jsonl(path, text, what="human labels file")), {})
        if pick(first, DOC_FIELDS) is None:  # a golden set: let the io reader handle it
            kind = "other"
    if kind not in {"jsonl", "csv"}:
        qrels = read_qrels(path)
        _check_qrels_scale(path, text, qrels, scale)
        return HumanLabels(qrels.to_dict(), qrels.annotations, source=str(path))
    allowed = set(scale)
    records: list[tuple[str, str, int, str | None]] = []
    info: dict[tuple[str, str], dict[str, str]] = {}
    seen: dict[tuple[str, str, str], int] = {}
    empty = 0
    bad: list[tuple[int, str]] = []
    for number, row, raw in _rows(path, text, kind):
        q, d, g, a = (pick(row, names) for names in (QUERY_FIELDS, DOC_FIELDS, GRADE_FIELDS, ANNOTATOR_FIELDS))
        if q in (None, "") or d in (None, ""):
            raise InputError("each label needs query_id and doc_id", path=path, line=number)
        q, d = str(q), str(d)
        texts = {k: row[k] for k in ("query", "text") if isinstance(row.get(k), str) and row.get(k)}
        if texts:
            info.setdefault((q, d), texts)
        if g is None or (isinstance(g, str) and not g.strip()):
            empty += 1
            continue
        g = _int_grade(g, path, number)
        if g not in allowed:
            bad.append((number, raw))
            continue
        a = None if a in (None, "") else str(a)
        key = (q, d, a or "")
        if key in seen:
            raise InputError(f"pair ({q}, {d}) is labeled again (first on line {seen[key]}); one label per pair "
                             "and annotator", path=path, line=number)
        seen[key] = number
        records.append((q, d, g, a))
    if bad:
        raise _bad_scale(path, len(bad), bad[0], scale)
    if not records:
        raise InputError(f"no graded row ({empty} row(s) with an empty grade); fill the 'grade' column first",
                         path=path)
    qrels = Qrels.from_records(records, source=str(path))
    return HumanLabels(qrels.to_dict(), qrels.annotations, info, empty, str(path))


def iter_pairs(labels: Mapping[str, Mapping[str, int]]) -> Iterable[tuple[str, str, int]]:
    for q, docs in labels.items():
        for d, g in docs.items():
            yield q, d, g


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False)
