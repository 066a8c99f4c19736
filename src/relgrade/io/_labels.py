"""Reading and writing label files: the one label reader, the one writer, and qrels.

The rows become the one label model of :mod:`relgrade.io._label_model` (:class:`Label`, :class:`LabelSet`,
re-exported here). One reader, :func:`read_labels`, reads every label file:

* TREC qrels ``query_id iteration doc_id grade`` (whitespace separated);
* CSV or JSONL with columns ``query_id, doc_id, grade`` and any of :data:`COLUMNS` (aliases such as ``qid``,
  ``docno``, ``relevance``, ``rater`` are accepted). This covers human labels, the export of the label page
  (``relgrade label --export``), a ``relgrade sample`` file (rows whose grade is still empty are counted in
  ``n_empty`` and skipped), a hybrid label set (a ``source`` column), and the judge's details JSONL
  (``OUT.details.jsonl``: a null grade is an unjudged pair; its ``scale`` is the judge's scale);
* a golden set (:mod:`relgrade.io._golden`).

Rules, the same for every file: ids follow the one id rule of :mod:`relgrade.io._ids` (strings, the whitespace
around them dropped, ``NA``, ``NULL``, ``nan`` are ids, never missing values); a grade is an integer written as an integer, float or string (``2``, ``2.0``, ``"2"``), never NaN,
infinity or a boolean; one row per (pair, annotator) for human labels and per pair for a judge; a grade outside
the scale is an error naming the file, the count and the first line (nothing is clipped); a label made on
a text records the text's SHA-256 (``text`` alone is hashed). Several annotators of one pair are combined by
:func:`lower_median` (with grades 1 and 2 the pair gets 1: conservative).

One writer, :func:`write_labels`: CSV or JSONL by extension. In CSV, a text cell that a spreadsheet would run
as a formula (starting ``=``, ``+``, ``-``, ``@``, tab or CR) is written with a leading ``'`` and read back
without it (OWASP, "CSV injection"), so ids survive the round trip.

Plain TREC qrels are read as columns (:mod:`relgrade.io._trec`): :func:`read_qrels` keeps them as columns,
:func:`read_labels` makes the :class:`Label` rows from them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from dataclasses import fields
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade.io._golden import is_golden, read_golden_text
from relgrade.io._grades import (  # noqa: F401  (re-exported: relgrade.io._labels is where callers import them)
    ANNOTATOR_FIELDS, DEFAULT_SCALE, DESIGNS, DETAIL_KEYS, DOC_FIELDS, GRADE_FIELDS, QUERY_FIELDS, SOURCES, TIME_FIELDS,
    lower_median, parse_grade, parse_scale_value, span,
)
from relgrade.io._columns import paused_gc, to_numpy
from relgrade.io._ids import as_id
from relgrade.io._label_model import (  # noqa: F401  (re-exported)
    COLUMNS, Label, LabelSet, check_in_scale, on_judge_scale, text_sha256,
)
from relgrade.io._qrels import LabelColumns, Qrels, check_trec_ids
from relgrade.io._text import csv_cell, iter_csv, iter_jsonl, loads_json, pick, read_bytes, read_text, sniff_bytes
from relgrade.io._trec import QRELS_FIELDS, fast_columns, fast_ids, qrels_lines, repeats_pair


# -- the reader -------------------------------------------------------------------------------------------------
def _is_details(obj: Mapping[str, Any]) -> bool:
    return "grade" in obj and "source" not in obj and any(k in obj for k in DETAIL_KEYS)


def _str(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return value.strip() if isinstance(value, str) else str(value)


def _number(value: Any, name: str, path, line: int, *, positive: bool = False) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} {value!r} is not a number", path=path, line=line) from None
    if not math.isfinite(number) or (positive and number <= 0):
        kind = "a positive finite number" if positive else "a finite number"
        raise InputError(f"{name} {value!r} must be {kind}", path=path, line=line)
    return number


def _count(value: Any, name: str, path, line: int) -> int | None:
    number = _number(value, name, path, line, positive=True)
    if number is not None and number != int(number):
        raise InputError(f"{name} {value!r} must be a whole number", path=path, line=line)
    return None if number is None else int(number)


_PLAIN = frozenset(("query_id", "doc_id", "grade", "annotator"))


def _plain_label(query_id: str, doc_id: str, grade: int | None, source: str, annotator: str | None) -> Label:
    """A :class:`Label` with only the plain fields set, built without the dataclass ``__init__`` (which sets all
    21 fields one by one: 4x the cost of the whole TREC reader on 500k rows). The unset fields read their
    defaults from the class; ``source`` is checked by the caller."""
    lab = object.__new__(Label)
    d = lab.__dict__
    d["query_id"], d["doc_id"], d["grade"], d["source"] = query_id, doc_id, grade, source
    if annotator is not None:
        d["annotator"] = annotator
    return lab


_DEFAULTS = {f.name: f.default for f in fields(Label)}


def _label(query_id: str, doc_id: str, grade: int | None, source: str, **rest: Any) -> Label:
    """``Label(query_id, doc_id, grade, source, **rest)`` for a checked ``source``, built as :func:`_plain_label`
    builds one: the fields left at their default are not set (they read it from the class), the frozen
    dataclass's one-by-one ``__init__`` is skipped (a judge's details file has a row per pair)."""
    lab = _plain_label(query_id, doc_id, grade, source, None)
    d = lab.__dict__
    for name, value in rest.items():
        if value is not _DEFAULTS[name]:
            d[name] = value
    return lab


_DETAILS = frozenset(("query_id", "doc_id", "grade", "expected_grade", "model", "prompt_hash", "status", "query", "text",
                      "text_sha256", "reason", "time", "runs"))
"""The keys of a judge's details row that :func:`_details_label` reads as :func:`_row_label` does (no aliases)."""
_DETAIL_MARKS = ("expected_grade", "reason", "model", "prompt_hash", "status")  # DETAIL_KEYS a _DETAILS row can hold


def _details_label(row: Mapping[str, Any], path, line: int, source: str) -> Label:
    """:func:`_row_label` of a row whose keys are all in :data:`_DETAILS` (a judge's details line): the same Label,
    without the alias lookups and the fields such a row cannot set (``tests/io/test_details_rows.py``)."""
    get = row.get
    q = as_id(get("query_id"), "query_id", path=path, line=line)  # checked in _row_label's order: the same error
    d = as_id(get("doc_id"), "doc_id", path=path, line=line)
    g = parse_grade(get("grade"), path=path, line=line)
    text = get("text") if isinstance(get("text"), str) and get("text") else None
    sha = _str(get("text_sha256")) or (text_sha256(text) if text is not None else None)
    query, reason = get("query"), get("reason")
    judged = "grade" in row and any(k in row for k in _DETAIL_MARKS)
    return _label(q, d, g, "judge" if judged else source, model=_str(get("model")),
                  prompt_hash=_str(get("prompt_hash")), time=_str(get("time")), text_sha256=sha,
                  expected_grade=_number(get("expected_grade"), "expected_grade", path, line),
                  query=query if isinstance(query, str) and query else None, text=text,
                  reason=reason if isinstance(reason, str) else None)


def _row_label(row: Mapping[str, Any], path, line: int, source: str) -> Label:
    if _DETAILS.issuperset(row) and not _PLAIN.issuperset(row):  # a judge's details line: the fast reading
        return _details_label(row, path, line, source)
    if _PLAIN.issuperset(row):  # the common plain row: no provenance to read
        a = row.get("annotator")
        return _plain_label(as_id(row.get("query_id"), "query_id", path=path, line=line), as_id(row.get("doc_id"), "doc_id", path=path, line=line),
                            parse_grade(row.get("grade"), path=path, line=line), source,
                            a.strip() or None if type(a) is str else _str(a))
    q = as_id(pick(row, QUERY_FIELDS), "query_id", path=path, line=line)
    d = as_id(pick(row, DOC_FIELDS), "doc_id", path=path, line=line)
    g = parse_grade(pick(row, GRADE_FIELDS), path=path, line=line)
    src = row.get("source")
    if src not in (None, ""):
        if src not in SOURCES:
            raise InputError(f"source must be 'human' or 'judge', got {src!r}", path=path, line=line)
        source = src
    elif _is_details(row):
        source = "judge"
    text = row.get("text") if isinstance(row.get("text"), str) and row.get("text") else None
    sha = _str(row.get("text_sha256")) or (text_sha256(text) if text is not None else None)
    scale = row.get("scale")
    if isinstance(scale, str):
        scale = loads_json(scale, path=path, line=line) if scale.strip() else None
    dist = row.get("distribution")
    if dist is not None:
        if not isinstance(dist, Mapping):
            raise InputError("'distribution' must map grades to probabilities, e.g. {\"0\": 0.1, ...}", path=path, line=line)
        try:
            dist = {int(k): float(v) for k, v in dist.items()}
        except (TypeError, ValueError):
            raise InputError("'distribution' must map grades to probabilities, e.g. {\"0\": 0.1, ...}",
                             path=path, line=line) from None
    ann = row.get("annotations")
    if isinstance(ann, Mapping):
        ann = {str(k): parse_grade(v, path=path, line=line) for k, v in ann.items()}
    else:
        ann = None
    design = _str(row.get("design"))
    if design is not None and design not in DESIGNS:
        raise InputError(f"design {design!r} is not one of {', '.join(DESIGNS)}", path=path, line=line)
    mapped = row.get("mapped")
    return _label(
        q, d, g, source,
        annotator=_str(pick(row, ANNOTATOR_FIELDS)), annotations=ann,
        model=_str(row.get("model")), prompt_hash=_str(row.get("prompt_hash")),
        judge_grade=parse_grade(row.get("judge_grade"), path=path, line=line, what="judge_grade"),
        mapped=mapped is True or (isinstance(mapped, str) and mapped.strip().lower() == "true"),
        time=_str(pick(row, TIME_FIELDS)), text_sha256=sha,
        scale=None if scale is None else parse_scale_value(scale, path=path, line=line),
        design=design, stratum=_str(row.get("stratum")),
        weight=_number(row.get("weight"), "weight", path, line, positive=True),
        draws=_count(row.get("draws"), "draws", path, line), pool=_count(row.get("pool"), "pool", path, line),
        expected_grade=_number(row.get("expected_grade"), "expected_grade", path, line),
        distribution=dist,
        query=row.get("query") if isinstance(row.get("query"), str) and row.get("query") else None,
        text=text, reason=row.get("reason") if isinstance(row.get("reason"), str) else None,
    )


def _trec_rows(path, text: str, source: str):
    """``(line, Label)`` per TREC qrels line (the fields are whitespace-free tokens: no id to strip)."""
    for number, fields_ in qrels_lines(path, text):
        yield number, _plain_label(fields_[0], fields_[2], parse_grade(fields_[3], path=path, line=number), source, None)


def _fast_trec_qrels(path, data: bytes) -> LabelColumns | None:
    """Plain TREC qrels as columns, one row per line; None sends the file to the line-exact reader."""
    import numpy as np
    import pyarrow as pa

    table = fast_columns(data, QRELS_FIELDS, {"grade": pa.int64()})
    if table is None:
        return None
    newlines = int(np.count_nonzero(np.frombuffer(data, np.uint8) == 10))
    if table.num_rows != newlines + (data[-1:] != b"\n"):
        return None  # blank lines: rows are not lines
    query, doc = fast_ids(table, "query_id"), fast_ids(table, "doc_id")
    if query is None or doc is None or repeats_pair(query.codes, doc.codes, query.n_names, doc.n_names):
        return None
    return LabelColumns(query, doc, to_numpy(table.column("grade")).astype(np.int64, copy=False))


def _trec_label_set(path, data: bytes, columns: LabelColumns, source: str, scale) -> LabelSet:
    import numpy as np

    with paused_gc():
        labels = tuple(map(_plain_label, columns.query.values().tolist(), columns.doc.values().tolist(),
                           columns.grade.tolist(), repeat(source), repeat(None)))
    result = LabelSet(labels, str(path), lines=tuple(range(1, len(labels) + 1)))
    if scale is not None and not np.isin(columns.grade, list(scale)).all():
        check_in_scale(result, scale, text=read_text(path, what="labels file", data=data))
    return result


def read_labels(path: str | Path, *, source: str = "human", scale: Sequence[int] | None = DEFAULT_SCALE,
                empty: str = "skip") -> LabelSet:
    """Read any label file (module docstring) into a :class:`LabelSet`.

    ``source`` is the default for rows that do not say (a details file is always ``judge``). ``scale``: grades
    outside it are an error (the scale a judge's details declare replaces it; None skips the check).
    ``empty``: ``"skip"`` counts rows without a grade in ``n_empty``; ``"error"`` refuses them (plain qrels).
    """
    if source not in SOURCES:
        raise InputError(f"source must be one of {SOURCES}, got {source!r}")
    data = read_bytes(path, what="labels file")
    kind = sniff_bytes(path, data)
    if kind == "whitespace":
        columns = _fast_trec_qrels(path, data)
        if columns is not None:
            return _trec_label_set(path, data, columns, source, scale)
    text = read_text(path, what="labels file", data=data)
    if kind in {"jsonl", "json"}:
        if is_golden(path, text, kind):
            qrels = read_golden_text(path, text, kind).to_qrels()
            labels = tuple(Label(q, d, g, source) for q, docs in qrels.labels.items() for d, g in docs.items())
            result = LabelSet(labels, str(path))
            if scale is not None:
                check_in_scale(result, scale, text=None)
            return result
        rows = iter_jsonl(path, text, what="labels file")
        per_pair_only = False
    elif kind == "csv":
        rows = iter_csv(path, text, what="labels file (query_id,doc_id,grade)")
        per_pair_only = False
    else:
        rows = _trec_rows(path, text, source)
        per_pair_only = True
    labels: list[Label] = []
    lines: list[int] = []
    unjudged: dict[tuple[str, str], None] = {}
    seen: dict[tuple[str, str, str], int] = {}
    declared: tuple[int, ...] | None = None
    model = None
    n_empty = 0
    header_checked = False
    for number, row in rows:
        if not header_checked and kind == "csv":
            missing = [n for n, names in (("query_id", QUERY_FIELDS), ("doc_id", DOC_FIELDS), ("grade", GRADE_FIELDS))
                       if not any(h in row for h in names)]
            if missing:
                raise InputError(f"CSV header {list(row)} has no {', '.join(missing)} column; the header must name "
                                 "query_id,doc_id,grade", path=path, line=1)
        header_checked = True
        lab = row if type(row) is Label else _row_label(row, path, number, source)
        if lab.source == "judge" and lab.scale is not None and declared is None:
            declared = lab.scale
        model = model or lab.model
        if lab.grade is None:
            if empty == "error" and lab.source != "judge" and not _is_details(row):
                raise InputError("missing grade; each label needs query_id, doc_id and grade", path=path, line=number)
            n_empty += 1
            unjudged[(lab.query_id, lab.doc_id)] = None
            continue
        judge_row = lab.source == "judge"
        key = (lab.query_id, lab.doc_id, "" if (per_pair_only or judge_row) else (lab.annotator or ""))
        if key in seen:
            who = f" by annotator {lab.annotator!r}" if key[2] else ""
            verb = "judged" if judge_row else "labeled"
            raise InputError(f"pair ({lab.query_id}, {lab.doc_id}) is {verb} again{who} (first on line {seen[key]}); "
                             "keep one label per pair and annotator", path=path, line=number)
        seen[key] = number
        labels.append(lab)
        lines.append(number)
    designs = {lab.design for lab in labels} - {None}
    if len(designs) > 1:
        raise InputError(f"rows of two sampling designs {sorted(designs)}; keep one design per file", path=path)
    graded = {(lab.query_id, lab.doc_id) for lab in labels}
    result = LabelSet(tuple(labels), str(path), declared, designs.pop() if designs else None, n_empty,
                      tuple(k for k in unjudged if k not in graded), model, tuple(lines))
    if scale is not None:
        check_in_scale(result, declared or scale, text=text)
    return result


# -- the writer -------------------------------------------------------------------------------------------------
def write_labels(labels: LabelSet | Iterable[Label | Mapping[str, Any]], path: str | Path, *,
                 columns: Sequence[str] | None = None) -> Path:
    """Write labels as CSV or JSONL (by extension); returns the path.

    ``labels``: a :class:`LabelSet`, :class:`Label` rows or plain mappings. ``columns``: exactly these columns
    (an absent value is an empty cell / null); without it, :data:`COLUMNS` that any row sets. CSV cells that a
    spreadsheet would run as formulas are neutralised (module docstring); JSONL is one object per line.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in {".csv", ".jsonl", ".ndjson", ".json"}:
        raise InputError("labels are written to a .csv or .jsonl file", path=p)
    rows = list(labels.labels if isinstance(labels, LabelSet) else labels)
    dicts = [r.to_dict(columns) if isinstance(r, Label) else dict(r) for r in rows]
    sparse = columns is None  # JSONL without explicit columns leaves unset values out
    if columns is None:
        present = {k for d in dicts for k, v in d.items() if v is not None}
        columns = [c for c in COLUMNS if c in present] + sorted(present - set(COLUMNS))
    try:
        with open(p, "w", encoding="utf-8", newline="") as fh:
            if suffix == ".csv":
                import csv

                writer = csv.writer(fh)
                writer.writerow(columns)
                for d in dicts:
                    writer.writerow([_cell(d.get(c)) for c in columns])
            else:
                for d in dicts:
                    obj = {c: d.get(c) for c in columns if not (sparse and d.get(c) is None)}
                    fh.write(json.dumps(obj, ensure_ascii=False, allow_nan=False) + "\n")
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror}); choose another path", path=p) from None
    except ValueError as exc:  # NaN / infinity refused by allow_nan=False
        raise InputError(f"cannot write a non-finite number ({exc})", path=p) from None
    return p


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value if not isinstance(value, tuple) else list(value), ensure_ascii=False)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value!r}")
    return csv_cell(value)


# -- qrels ------------------------------------------------------------------------------------------------------
def read_qrels(path: str | Path) -> Qrels:
    """Read TREC qrels, CSV/JSONL labels (any file :func:`read_labels` reads) or a golden set."""
    data = read_bytes(path, what="qrels file")
    kind = sniff_bytes(path, data)
    if kind in {"jsonl", "json"}:
        text = read_text(path, what="qrels file", data=data)
        if is_golden(path, text, kind):
            return read_golden_text(path, text, kind).to_qrels()
        if kind == "json":
            raise InputError("a JSON list here must be a golden set (objects with 'query' and 'relevant_doc_ids')", path=path)
    elif kind == "whitespace":
        columns = _fast_trec_qrels(path, data)
        if columns is not None:
            return Qrels(columns, source=str(path))
    return read_labels(path, scale=None, empty="error").to_qrels()


def write_qrels(qrels: Qrels | Mapping[str, Mapping[str, int]], path: str | Path) -> Path:
    """Write TREC qrels (``qid 0 docid grade``), or CSV/JSONL by extension."""
    labels = qrels.labels if isinstance(qrels, Qrels) else qrels
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in {".csv", ".jsonl", ".ndjson", ".json"}:
        rows = ({"query_id": q, "doc_id": d, "grade": int(g)} for q, docs in labels.items() for d, g in docs.items())
        return write_labels(rows, p, columns=("query_id", "doc_id", "grade"))
    check_trec_ids([*labels, *(d for docs in labels.values() for d in docs)], path=p)
    try:
        with open(p, "w", encoding="utf-8", newline="") as fh:
            for q, docs in labels.items():
                for d, g in docs.items():
                    fh.write(f"{q} 0 {d} {int(g)}\n")
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror}); choose another path", path=p) from None
    return p
