"""Reading human labels, judge labels and a judge-to-human grade mapping, with provenance.

Human labels: TREC qrels (no annotator, no time), or CSV/JSONL with ``query_id, doc_id, grade`` and
optional ``annotator``, ``time`` (also ``timestamp``, ``labeled_at``), ``text`` or ``text_sha256``
(what ``relgrade label`` exports, or a ``relgrade sample`` file once graded: rows with an empty grade
are skipped). Several annotators of one pair give one label with their lower median grade (as
:meth:`relgrade.io.Qrels.from_records`), every annotator's grade in ``annotations`` and the latest time.

Judge labels: the details JSONL ``relgrade judge`` writes (``OUT.details.jsonl``: ``query_id, doc_id,
query, text, grade`` — null when unjudged, skipped and counted — ``expected_grade, model,
prompt_hash``...), or plain qrels (source ``judge``, no model). A judgment without a ``time`` key
gets the file's modification time.

Mapping (``--mapping``): the JSON ``relgrade calibrate --json`` writes (its ``"mapping"`` object, a
:class:`relgrade.calibration.GradeMapping`), or a simple ``{"adopted": true, "table": {"0": 0,
"1": 1, "2": 1, "3": 2}}`` for integer judge grades (top level or under ``"mapping"``). It is applied
only when ``adopted`` is true; a GradeMapping fitted on expected grades uses a judgment's
``expected_grade`` and falls back to its grade when it has none.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade.hybrid._labels import Label, text_sha256
from relgrade.io import read_qrels
from relgrade.io._qrels import ANNOTATOR_FIELDS, DOC_FIELDS, GRADE_FIELDS, QUERY_FIELDS
from relgrade.io._text import iter_jsonl, pick, read_text, sniff_kind

TIME_FIELDS = ("time", "timestamp", "labeled_at", "created")
DETAIL_KEYS = ("distribution", "expected_grade", "reason", "model", "prompt_hash", "status")


def _grade(value: Any, path, number: int) -> int:
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise InputError(f"grade {value!r} is not a number; use an integer grade", path=path, line=number) from None
    if f != int(f):
        raise InputError(f"grade {value!r} is not an integer grade", path=path, line=number)
    return int(f)


def _rows(path, text: str, kind: str):
    if kind == "jsonl":
        yield from iter_jsonl(path, text, what="human labels file")
        return
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames:
        raise InputError("CSV has no header; the first line must name query_id,doc_id,grade", path=path, line=1)
    reader.fieldnames = [h.strip().lower() for h in reader.fieldnames]
    if not any(h in reader.fieldnames for h in GRADE_FIELDS):
        raise InputError(f"CSV header {reader.fieldnames} has no grade column; add 'grade'", path=path, line=1)
    for row in reader:
        yield reader.line_num, {k: (v.strip() if isinstance(v, str) else v) for k, v in row.items() if k}


def read_human_labels(path: str | Path) -> list[Label]:
    """Human labels with annotator, time and text hash when the file has them (see module docstring)."""
    text = read_text(path, what="human labels file")
    kind = sniff_kind(path, text)
    if kind == "jsonl":
        first = next((obj for _, obj in iter_jsonl(path, text, what="human labels file")), {})
        if pick(first, DOC_FIELDS) is None:
            kind = "other"  # a golden set
    if kind not in {"jsonl", "csv"}:
        qrels = read_qrels(path)
        out = []
        for q, docs in qrels.labels.items():
            for d, g in docs.items():
                ann = qrels.annotations.get((q, d))
                out.append(Label(q, d, g, "human", annotator=",".join(sorted(ann)) if ann else None,
                                 annotations=dict(ann) if ann and len(ann) > 1 else None))
        return out
    per_pair: dict[tuple[str, str], dict[str, Any]] = {}
    empty = 0
    for number, row in _rows(path, text, kind):
        q, d, g, a = (pick(row, names) for names in (QUERY_FIELDS, DOC_FIELDS, GRADE_FIELDS, ANNOTATOR_FIELDS))
        if q in (None, "") or d in (None, ""):
            raise InputError("each label needs query_id and doc_id", path=path, line=number)
        if g is None or (isinstance(g, str) and not g.strip()):
            empty += 1
            continue
        key = (str(q), str(d))
        slot = per_pair.setdefault(key, {"grades": {}, "times": [], "sha": None, "line": number})
        who = "" if a in (None, "") else str(a)
        if who in slot["grades"]:
            raise InputError(f"pair {key} is labeled again{' by ' + repr(who) if who else ''} (first on line "
                             f"{slot['line']}); one label per pair and annotator", path=path, line=number)
        slot["grades"][who] = _grade(g, path, number)
        t = pick(row, TIME_FIELDS)
        if t not in (None, ""):
            slot["times"].append(str(t))
        sha = row.get("text_sha256") or (text_sha256(row["text"]) if isinstance(row.get("text"), str) and row["text"] else None)
        if sha:
            if slot["sha"] not in (None, sha):
                raise InputError(f"pair {key} was labeled on two different texts; relabel it on the current text",
                                 path=path, line=number)
            slot["sha"] = sha
    if not per_pair:
        raise InputError(f"no graded row ({empty} row(s) with an empty grade); fill the 'grade' column first", path=path)
    out = []
    for (q, d), slot in per_pair.items():
        grades = slot["grades"]
        ordered = sorted(grades.values())
        names = sorted(n for n in grades if n)
        out.append(Label(q, d, ordered[(len(ordered) - 1) // 2], "human",
                         annotator=",".join(names) or None,
                         annotations=dict(grades) if len(grades) > 1 else None,
                         time=max(slot["times"]) if slot["times"] else None, text_sha256=slot["sha"]))
    return out


@dataclass(frozen=True)
class JudgeMapping:
    """A judge-to-human grade mapping as read from ``--mapping``; identity unless ``adopted``."""

    adopted: bool
    table: Mapping[int, int] | None = None
    grade_mapping: Any = None  # relgrade.calibration.GradeMapping
    message: str = ""

    def apply(self, grade: int, expected: float | None = None) -> int:
        if not self.adopted:
            return grade
        if self.grade_mapping is not None:
            use_expected = self.grade_mapping.input == "expected_grade" and expected is not None
            return int(self.grade_mapping.apply(expected if use_expected else grade))
        if grade not in self.table:
            raise InputError(f"the mapping's table has no entry for judge grade {grade}; "
                             f"it maps {sorted(self.table)}")
        return int(self.table[grade])


def read_mapping(path: str | Path) -> JudgeMapping:
    """Read ``--mapping`` (see module docstring)."""
    text = read_text(path, what="mapping file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc.msg}); pass the file 'relgrade calibrate --json' wrote",
                         path=path, line=exc.lineno) from None
    if isinstance(data, dict) and isinstance(data.get("mapping"), dict):
        data = data["mapping"]
    if not isinstance(data, dict) or "adopted" not in data:
        raise InputError("no mapping found: expected {\"adopted\": true|false, \"table\": {\"0\": 0, ...}} or the "
                         "JSON of 'relgrade calibrate --json' (key \"mapping\")", path=path)
    adopted = data["adopted"]
    if not isinstance(adopted, bool):
        raise InputError(f"'adopted' must be true or false, got {adopted!r}", path=path)
    message = str(data.get("message", ""))
    if "points" in data and "input" in data and "scale" in data:
        from relgrade.calibration import GradeMapping

        try:
            gm = GradeMapping.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed calibration mapping ({exc}); re-run 'relgrade calibrate --json'", path=path) from None
        return JudgeMapping(adopted, grade_mapping=gm, message=message)
    table = data.get("table")
    if not isinstance(table, dict) or not table:
        raise InputError("the mapping needs a non-empty 'table' {\"judge grade\": human grade}", path=path)
    try:
        parsed = {int(k): int(v) for k, v in table.items()}
    except (TypeError, ValueError):
        raise InputError("the mapping's 'table' must map integer grades to integer grades, e.g. {\"2\": 1}", path=path) from None
    return JudgeMapping(adopted, table=parsed, message=message)


def _is_details(path, text: str) -> bool:
    if sniff_kind(path, text) != "jsonl":
        return False
    for _, obj in iter_jsonl(path, text, what="judge file"):
        return "grade" in obj and any(k in obj for k in DETAIL_KEYS)
    return False


@dataclass(frozen=True)
class JudgeInput:
    labels: tuple[Label, ...]
    n_unjudged: int
    model: str | None


def read_judge_labels(path: str | Path, *, mapping: JudgeMapping | None = None) -> JudgeInput:
    """Judge labels with model, prompt hash, time and text hash; the mapping applied when adopted."""
    text = read_text(path, what="judge labels file")
    mtime = datetime.fromtimestamp(Path(path).stat().st_mtime, timezone.utc).isoformat(timespec="seconds")
    mapping = mapping or JudgeMapping(False)
    out: list[Label] = []
    if not _is_details(path, text):
        qrels = read_qrels(path)
        for q, docs in qrels.labels.items():
            for d, g in docs.items():
                m = mapping.apply(g)
                out.append(Label(q, d, m, "judge", judge_grade=g if mapping.adopted else None, mapped=mapping.adopted, time=mtime))
        return JudgeInput(tuple(out), 0, None)
    unjudged = 0
    seen: dict[tuple[str, str], int] = {}
    model = None
    for number, obj in iter_jsonl(path, text, what="judge details file"):
        q, d = pick(obj, QUERY_FIELDS), pick(obj, DOC_FIELDS)
        if q in (None, "") or d in (None, ""):
            raise InputError("each judgment needs 'query_id' and 'doc_id'", path=path, line=number)
        key = (str(q), str(d))
        g = obj.get("grade")
        if g is None:
            unjudged += 1
            continue
        if key in seen:
            raise InputError(f"pair {key} is judged twice (first on line {seen[key]}); keep one judgment per pair",
                             path=path, line=number)
        seen[key] = number
        g = _grade(g, path, number)
        e = obj.get("expected_grade")
        e = float(e) if isinstance(e, (int, float)) and not isinstance(e, bool) else None
        m = mapping.apply(g, e)
        chunk = obj.get("text")
        sha = obj.get("text_sha256") or (text_sha256(chunk) if isinstance(chunk, str) else None)
        model = model or obj.get("model")
        out.append(Label(key[0], key[1], m, "judge", model=obj.get("model"), prompt_hash=obj.get("prompt_hash"),
                         judge_grade=g if mapping.adopted else None, mapped=mapping.adopted,
                         time=str(obj.get("time") or mtime), text_sha256=sha))
    return JudgeInput(tuple(out), unjudged, model)
