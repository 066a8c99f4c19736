"""The one label model: every graded (query, doc) pair relgrade reads or writes, with its provenance.

A :class:`Label` is one row: ``query_id, doc_id, grade`` (None when the pair is pooled but not graded yet),
``source`` (``human`` or ``judge``), who made it (``annotator`` or ``model`` and ``prompt_hash``), the grade
``scale`` it was given on, ``text_sha256`` of the chunk text it was made on, ``time``, and the sampling design
that chose it (``design``, ``stratum`` and the inclusion ``weight`` = 1/pi). A :class:`LabelSet` is the rows of
one file plus what the file declares (scale, design); ``to_frame()`` gives a pandas table with
:data:`COLUMNS`.

One reader, :func:`read_labels`, reads every label file:

* TREC qrels ``query_id iteration doc_id grade`` (whitespace separated);
* CSV or JSONL with columns ``query_id, doc_id, grade`` and any of :data:`COLUMNS` (aliases such as ``qid``,
  ``docno``, ``relevance``, ``rater`` are accepted). This covers human labels, the export of the label page
  (``relgrade label --export``), a ``relgrade sample`` file (rows whose grade is still empty are counted in
  ``n_empty`` and skipped), a hybrid label set (a ``source`` column), and the judge's details JSONL
  (``OUT.details.jsonl``: a null grade is an unjudged pair; its ``scale`` is the judge's scale);
* a golden set (:mod:`relgrade.io._golden`).

Rules, the same for every file: ids are strings, always (``NA``, ``NULL``, ``nan`` are ids, never missing
values); a grade is an integer written as an integer, float or string (``2``, ``2.0``, ``"2"``), never NaN,
infinity or a boolean; one row per (pair, annotator) for human labels and per pair for a judge; a grade outside
the scale is an error naming the file, the count and the first line (nothing is clipped); a label made on
a text records the text's SHA-256 (``text`` alone is hashed). Several annotators of one pair are combined by
:func:`lower_median` (with grades 1 and 2 the pair gets 1: conservative).

One writer, :func:`write_labels`: CSV or JSONL by extension. In CSV, a text cell that a spreadsheet would run
as a formula (starting ``=``, ``+``, ``-``, ``@``, tab or CR) is written with a leading ``'`` and read back
without it (OWASP, "CSV injection"), so ids survive the round trip.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relgrade._errors import InputError
from relgrade.io._text import csv_cell, iter_csv, iter_jsonl, iter_lines, loads_json, pick, read_text, sniff_kind

if TYPE_CHECKING:
    import pandas as pd

    from relgrade.io._qrels import Qrels

SOURCES = ("human", "judge")
DEFAULT_SCALE = (0, 1, 2, 3)
DESIGNS = ("queries", "strata")

QUERY_FIELDS = ("query_id", "qid", "topic", "query-id")
DOC_FIELDS = ("doc_id", "docid", "docno", "pid", "corpus_id", "corpus-id")
GRADE_FIELDS = ("grade", "relevance", "label", "score", "rel")
ANNOTATOR_FIELDS = ("annotator", "assessor", "rater")
TIME_FIELDS = ("time", "timestamp", "labeled_at", "created")
DETAIL_KEYS = ("distribution", "expected_grade", "reason", "model", "prompt_hash", "status")

COLUMNS = ("query_id", "doc_id", "grade", "source", "annotator", "model", "prompt_hash", "scale", "text_sha256",
           "time", "design", "stratum", "weight")
"""The columns of :meth:`LabelSet.to_frame` (further fields of :class:`Label` are added when any row has them)."""


def text_sha256(text: str) -> str:
    """Hex SHA-256 of ``text`` encoded as UTF-8 (no normalisation: any change makes a label stale)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Label:
    """One graded (query, doc) pair and where it came from (module docstring)."""

    query_id: str
    doc_id: str
    grade: int | None
    source: str  # "human" or "judge"
    annotator: str | None = None
    annotations: Mapping[str, int] | None = None  # several annotators: each one's grade
    model: str | None = None
    prompt_hash: str | None = None
    judge_grade: int | None = None  # the judge's own grade when a mapping changed it
    mapped: bool = False
    time: str | None = None
    text_sha256: str | None = None
    scale: tuple[int, ...] | None = None
    design: str | None = None
    stratum: str | None = None
    weight: float | None = None  # 1 / inclusion probability
    expected_grade: float | None = None
    distribution: Mapping[int, float] | None = None
    query: str | None = None
    text: str | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise InputError(f"label source must be one of {SOURCES}, got {self.source!r}")

    def to_dict(self, columns: Sequence[str] | None = None) -> dict[str, Any]:
        """The row as JSON-ready values; without ``columns`` the unset (None/False) fields are left out."""
        names = columns or [f.name for f in fields(self)]
        out: dict[str, Any] = {}
        for name in names:
            value = getattr(self, name, None)
            if columns is None and (value is None or value is False) and name != "grade":
                continue
            if name == "scale" and value is not None:
                value = list(value)
            elif name in ("annotations", "distribution") and value is not None:
                value = {str(k): v for k, v in value.items()}
            out[name] = value
        return out


@dataclass(frozen=True)
class LabelSet:
    """The graded rows of one label file (one per pair and annotator) and what the file declares."""

    labels: tuple[Label, ...]
    source: str | None = None
    scale: tuple[int, ...] | None = None  # the scale the file declares (a judge's details 'scale'), else None
    design: str | None = None  # the sampling design the rows record ('queries' or 'strata'), else None
    n_empty: int = 0  # rows without a grade: unjudged (judge) or not labeled yet (a sample file)
    unjudged: tuple[tuple[str, str], ...] = ()  # the (query, doc) pairs of those rows
    model: str | None = None
    lines: tuple[int, ...] = field(default=(), repr=False, compare=False)  # file line of each row

    def __len__(self) -> int:
        return len(self.labels)

    def consensus(self) -> tuple[Label, ...]:
        """One label per pair: the :func:`lower_median` of its annotators' grades, every grade in ``annotations``,
        the latest time; a pair labeled on two different texts is an error (relabel it on the current text)."""
        if len({(lab.query_id, lab.doc_id) for lab in self.labels}) == len(self.labels) and \
                all(lab.annotations is None for lab in self.labels):
            return self.labels  # one row per pair: nothing to combine
        groups: dict[tuple[str, str], list[Label]] = {}
        for lab in self.labels:
            groups.setdefault((lab.query_id, lab.doc_id), []).append(lab)
        out = []
        for key, group in groups.items():
            if len(group) == 1 and group[0].annotations is None:
                out.append(group[0])
                continue
            hashes = {lab.text_sha256 for lab in group} - {None}
            if len(hashes) > 1:
                raise InputError(f"pair {key} was labeled on two different texts; relabel it on the current text",
                                 path=self.source)
            grades = {lab.annotator or "": lab.grade for lab in group}
            times = [lab.time for lab in group if lab.time]
            names = sorted(n for n in grades if n)
            first = group[0]
            out.append(Label(key[0], key[1], lower_median(grades.values()), first.source,
                             annotator=",".join(names) or None, annotations=grades if len(grades) > 1 else None,
                             model=first.model, prompt_hash=first.prompt_hash, time=max(times) if times else None,
                             text_sha256=hashes.pop() if hashes else None, scale=first.scale, design=first.design,
                             stratum=first.stratum, weight=first.weight, query=first.query, text=first.text))
        return tuple(out)

    def grades(self) -> dict[str, dict[str, int]]:
        """``{query_id: {doc_id: grade}}`` of the consensus labels."""
        out: dict[str, dict[str, int]] = {}
        for lab in self.consensus():
            out.setdefault(lab.query_id, {})[lab.doc_id] = lab.grade
        return out

    def annotations(self) -> dict[tuple[str, str], dict[str, int]]:
        """``{(query_id, doc_id): {annotator: grade}}`` for pairs with a named annotator or several grades."""
        per: dict[tuple[str, str], dict[str, int]] = {}
        for lab in self.labels:
            per.setdefault((lab.query_id, lab.doc_id), {})[lab.annotator or ""] = lab.grade
        return {k: v for k, v in per.items() if len(v) > 1 or any(v)}

    def weights(self) -> dict[tuple[str, str], float] | None:
        """``{(query_id, doc_id): 1/pi}`` when the rows carry inclusion weights, else None."""
        out = {(lab.query_id, lab.doc_id): lab.weight for lab in self.labels if lab.weight is not None}
        return out or None

    def info(self) -> dict[tuple[str, str], dict[str, str]]:
        """``{(query_id, doc_id): {"query", "text", "reason"}}`` for the rows that carry texts."""
        out: dict[tuple[str, str], dict[str, str]] = {}
        for lab in self.labels:
            texts = {k: getattr(lab, k) for k in ("query", "text", "reason") if getattr(lab, k)}
            if texts:
                out.setdefault((lab.query_id, lab.doc_id), texts)
        return out

    def to_qrels(self) -> "Qrels":
        from relgrade.io._qrels import Qrels

        plain = all(lab.annotator is None and lab.annotations is None for lab in self.labels)
        return Qrels(self.grades(), annotations={} if plain else self.annotations(), source=self.source)

    def to_frame(self) -> "pd.DataFrame":
        """A pandas table, one row per label, with :data:`COLUMNS` (plus any other field a row sets)."""
        import pandas as pd

        extra = [f.name for f in fields(Label) if f.name not in COLUMNS
                 and any(getattr(lab, f.name) not in (None, False) for lab in self.labels)]
        cols = list(COLUMNS) + extra
        return pd.DataFrame([lab.to_dict(cols) for lab in self.labels], columns=cols, dtype=object)


# -- one grade parser, one median, one scale check ------------------------------------------------------------
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


def check_in_scale(labels: LabelSet, scale: Sequence[int], *, text: str | None = None, option: str = "--scale") -> None:
    """Refuse labels outside ``scale``: one error with the count and the first offending line (never clipped)."""
    allowed = set(scale)
    bad = [i for i, lab in enumerate(labels.labels) if lab.grade not in allowed]
    if not bad:
        return
    i = bad[0]
    lab = labels.labels[i]
    line = labels.lines[i] if i < len(labels.lines) else None
    shown = f"({lab.query_id}, {lab.doc_id}) grade {lab.grade}"
    if text is not None and line is not None:
        raw = text.splitlines()[line - 1].strip() if line - 1 < len(text.splitlines()) else ""
        shown = repr(raw[:157] + "..." if len(raw) > 160 else raw)
    where = f"line {line}" if line else "for example"
    raise InputError(f"{len(bad)} label(s) outside the scale {list(scale)}; e.g. {where}: {shown}; "
                     f"fix the labels or declare the scale with {option} (nothing is clipped)", path=labels.source)


def on_judge_scale(human: Mapping[Any, Mapping[str, int]], judge_scale: Sequence[int] | None,
                   scale: Sequence[int], threshold: int) -> tuple[tuple[int, ...], dict[Any, dict[str, int]], bool]:
    """Put human grades on a judge's scale: ``(scale to compare on, human labels, binarized?)``.

    A binary judge (two grades, e.g. ``[0, 1]``) beside graded humans: the human grades are binarized at
    ``threshold`` (``>= threshold`` becomes the judge's high grade, below its low grade), as trec-style binary
    relevance does. A judge on the human scale, or on a narrower scale inside it, is compared grade for grade.
    Works on ``{query: {doc: grade}}`` and on ``{(query, doc): {annotator: grade}}`` alike.
    """
    scale = tuple(scale)
    j_scale = tuple(judge_scale) if judge_scale else scale
    if j_scale == scale or (set(j_scale) <= set(scale) and len(j_scale) != 2):
        return scale, {q: dict(d) for q, d in human.items()}, False
    if len(j_scale) == 2 and len(scale) > 2:
        if not scale[0] < threshold <= scale[-1]:
            raise InputError(f"threshold {threshold} must be in ({scale[0]}, {scale[-1]}] to binarize the scale "
                             f"{list(scale)}; e.g. --threshold 2")
        lo, hi = j_scale
        return j_scale, {q: {d: hi if g >= threshold else lo for d, g in docs.items()} for q, docs in human.items()}, True
    if set(j_scale) <= set(scale):
        return scale, {q: dict(d) for q, d in human.items()}, False
    raise InputError(f"the judge grades on {span(j_scale)}, which does not fit the human scale --scale {span(scale)}; "
                     "declare the human scale with --scale")


def span(scale: Sequence[int]) -> str:
    """``0-3`` for a contiguous scale, else ``0,2,4``."""
    scale = list(scale)
    return f"{scale[0]}-{scale[-1]}" if scale == list(range(scale[0], scale[-1] + 1)) else ",".join(map(str, scale))


# -- the reader -------------------------------------------------------------------------------------------------
def _is_details(obj: Mapping[str, Any]) -> bool:
    return "grade" in obj and "source" not in obj and any(k in obj for k in DETAIL_KEYS)


def _id(value: Any, name: str, path, line: int) -> str:
    if type(value) is str:
        out = value.strip()
        if out:
            return out
    if value is None or isinstance(value, (bool, dict, list)) or (isinstance(value, float) and not math.isfinite(value)):
        raise InputError(f"{name} {value!r} is not an id; each label needs query_id, doc_id and grade", path=path, line=line)
    out = value.strip() if isinstance(value, str) else str(value)
    if not out:
        raise InputError(f"missing {name}; each label needs query_id, doc_id and grade", path=path, line=line)
    return out


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


def _row_label(row: Mapping[str, Any], path, line: int, source: str) -> Label:
    if _PLAIN.issuperset(row):  # the common plain row: no provenance to read
        a = row.get("annotator")
        return _plain_label(_id(row.get("query_id"), "query_id", path, line), _id(row.get("doc_id"), "doc_id", path, line),
                            parse_grade(row.get("grade"), path=path, line=line), source,
                            a.strip() or None if type(a) is str else _str(a))
    q = _id(pick(row, QUERY_FIELDS), "query_id", path, line)
    d = _id(pick(row, DOC_FIELDS), "doc_id", path, line)
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
    return Label(
        q, d, g, source,
        annotator=_str(pick(row, ANNOTATOR_FIELDS)), annotations=ann,
        model=_str(row.get("model")), prompt_hash=_str(row.get("prompt_hash")),
        judge_grade=parse_grade(row.get("judge_grade"), path=path, line=line, what="judge_grade"),
        mapped=mapped is True or (isinstance(mapped, str) and mapped.strip().lower() == "true"),
        time=_str(pick(row, TIME_FIELDS)), text_sha256=sha,
        scale=None if scale is None else parse_scale_value(scale, path=path, line=line),
        design=design, stratum=_str(row.get("stratum")),
        weight=_number(row.get("weight"), "weight", path, line, positive=True),
        expected_grade=_number(row.get("expected_grade"), "expected_grade", path, line),
        distribution=dist,
        query=row.get("query") if isinstance(row.get("query"), str) and row.get("query") else None,
        text=text, reason=row.get("reason") if isinstance(row.get("reason"), str) else None,
    )


def _trec_rows(path, text: str, source: str):
    """``(line, Label)`` per TREC qrels line (the fields are whitespace-free tokens: no id to strip)."""
    for number, line in iter_lines(text):
        fields_ = line.split()
        if len(fields_) != 4:
            raise InputError(f"expected 4 fields 'query_id iteration doc_id grade' (TREC qrels), got {len(fields_)}",
                             path=path, line=number)
        yield number, _plain_label(fields_[0], fields_[2], parse_grade(fields_[3], path=path, line=number), source, None)


def read_labels(path: str | Path, *, source: str = "human", scale: Sequence[int] | None = DEFAULT_SCALE,
                empty: str = "skip") -> LabelSet:
    """Read any label file (module docstring) into a :class:`LabelSet`.

    ``source`` is the default for rows that do not say (a details file is always ``judge``). ``scale``: grades
    outside it are an error (the scale a judge's details declare replaces it; None skips the check).
    ``empty``: ``"skip"`` counts rows without a grade in ``n_empty``; ``"error"`` refuses them (plain qrels).
    """
    if source not in SOURCES:
        raise InputError(f"source must be one of {SOURCES}, got {source!r}")
    text = read_text(path, what="labels file")
    kind = sniff_kind(path, text)
    if kind in {"jsonl", "json"}:
        from relgrade.io._golden import is_golden, read_golden_text

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
