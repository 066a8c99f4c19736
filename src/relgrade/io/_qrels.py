"""Relevance labels (qrels): ``{query_id: {doc_id: grade}}`` with the set of declared topics.

Formats read: TREC qrels (``qid iter docid grade``), CSV or JSONL with columns
``query_id, doc_id, grade[, annotator]`` and a golden set (see :mod:`relgrade.io._golden`).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relgrade._errors import InputError
from relgrade.io._text import iter_jsonl, iter_lines, pick, read_text, sniff_kind

if TYPE_CHECKING:
    import pandas as pd

QUERY_FIELDS = ("query_id", "qid", "topic", "query-id")
DOC_FIELDS = ("doc_id", "docid", "docno", "pid", "corpus_id", "corpus-id")
GRADE_FIELDS = ("grade", "relevance", "label", "score", "rel")
ANNOTATOR_FIELDS = ("annotator", "assessor", "rater")


class Qrels:
    """Graded labels for (query, document) pairs.

    ``labels`` maps query id to ``{doc_id: grade}``. ``topics`` holds every declared query, also
    those with no relevant document (no-answer cases). ``forbidden`` maps a query to documents
    that must never be retrieved for it (tenant / permission cases). ``annotations`` keeps the
    individual grades when several annotators labeled the same pair (``labels`` then holds their
    lower median, see :meth:`from_records`).
    """

    __slots__ = ("labels", "topics", "forbidden", "queries", "annotations", "tags", "source")

    def __init__(
        self,
        labels: Mapping[str, Mapping[str, int]],
        *,
        topics: Iterable[str] | None = None,
        forbidden: Mapping[str, Iterable[str]] | None = None,
        queries: Mapping[str, str] | None = None,
        annotations: Mapping[tuple[str, str], Mapping[str, int]] | None = None,
        tags: Mapping[str, Iterable[str]] | None = None,
        source: str | None = None,
    ):
        self.labels: dict[str, dict[str, int]] = {
            str(q): {d if type(d) is str else str(d): g if type(g) is int else int(g) for d, g in docs.items()}
            for q, docs in labels.items()
        }
        declared = dict.fromkeys(str(t) for t in (topics if topics is not None else []))
        declared.update(dict.fromkeys(self.labels))
        self.topics: tuple[str, ...] = tuple(declared)
        self.forbidden: dict[str, frozenset[str]] = {
            str(q): frozenset(map(str, docs)) for q, docs in (forbidden or {}).items() if docs
        }
        self.queries: dict[str, str] = dict(queries or {})
        self.annotations: dict[tuple[str, str], dict[str, int]] = {
            k: dict(v) for k, v in (annotations or {}).items()
        }
        self.tags: dict[str, tuple[str, ...]] = {q: tuple(t) for q, t in (tags or {}).items()}
        self.source = source

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, labels: Mapping[str, Mapping[str, int]], **kwargs: Any) -> "Qrels":
        return cls(labels, **kwargs)

    @classmethod
    def from_records(
        cls, records: Iterable[tuple[str, str, int, str | None]], *, source: str | None = None
    ) -> "Qrels":
        """Build from ``(query_id, doc_id, grade, annotator)``; several annotators per pair allowed.

        With several grades for one pair, ``labels`` holds their lower median (conservative: with
        grades 1 and 2 the pair gets 1) and ``annotations`` keeps every grade.
        """
        per_pair: dict[tuple[str, str], dict[str, int]] = {}
        for q, d, g, a in records:
            per_pair.setdefault((q, d), {})[a or ""] = g
        labels: dict[str, dict[str, int]] = {}
        annotations: dict[tuple[str, str], dict[str, int]] = {}
        for (q, d), by_annotator in per_pair.items():
            grades = sorted(by_annotator.values())
            labels.setdefault(q, {})[d] = grades[(len(grades) - 1) // 2]
            if len(by_annotator) > 1 or any(by_annotator):
                annotations[(q, d)] = by_annotator
        return cls(labels, annotations=annotations, source=source)

    @classmethod
    def from_frame(cls, frame: "pd.DataFrame", **kwargs: Any) -> "Qrels":
        """From a DataFrame with columns ``query_id, doc_id, grade[, annotator]``."""
        cols = {c.lower(): c for c in frame.columns}
        q, d, g = (next((cols[n] for n in names if n in cols), None) for names in (QUERY_FIELDS, DOC_FIELDS, GRADE_FIELDS))
        if q is None or d is None or g is None:
            raise InputError(
                f"DataFrame needs columns query_id, doc_id, grade; got {list(frame.columns)}"
            )
        a = next((cols[n] for n in ANNOTATOR_FIELDS if n in cols), None)
        annotators = frame[a].astype(str) if a else [None] * len(frame)
        records = zip(frame[q].astype(str), frame[d].astype(str), frame[g].astype(int), annotators)
        made = cls.from_records(records, source=kwargs.pop("source", None))
        return cls(made.labels, annotations=made.annotations, source=made.source, **kwargs)

    # -- views ----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, dict[str, int]]:
        return {q: dict(docs) for q, docs in self.labels.items()}

    def to_frame(self) -> "pd.DataFrame":
        import pandas as pd

        rows = [(q, d, g) for q, docs in self.labels.items() for d, g in docs.items()]
        return pd.DataFrame(rows, columns=["query_id", "doc_id", "grade"])

    def relevant(self, query_id: str, threshold: int = 1) -> list[str]:
        return [d for d, g in self.labels.get(query_id, {}).items() if g >= threshold]

    def __len__(self) -> int:
        return sum(len(docs) for docs in self.labels.values())

    def __repr__(self) -> str:
        return f"Qrels({len(self.topics)} topics, {len(self)} labels)"


def read_qrels(path: str | Path) -> Qrels:
    """Read TREC qrels, CSV/JSONL qrels or a golden set (JSONL or JSON list) into :class:`Qrels`."""
    text = read_text(path, what="qrels file")
    kind = sniff_kind(path, text)
    if kind in {"jsonl", "json"}:
        from relgrade.io._golden import is_golden, read_golden_text

        if is_golden(path, text, kind):
            return read_golden_text(path, text, kind).to_qrels()
        if kind == "json":
            raise InputError("a JSON list here must be a golden set (objects with 'query' and 'relevant_doc_ids')", path=path)
        return Qrels.from_records(_jsonl_records(path, text), source=str(path))
    if kind == "csv":
        return Qrels.from_records(_csv_records(path, text), source=str(path))
    return Qrels.from_records(_trec_records(path, text), source=str(path))


def _grade(value: Any, path: str | Path, line: int) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"grade {value!r} is not a number; use an integer such as 0, 1, 2 or 3", path=path, line=line) from None
    if number != int(number):
        raise InputError(f"grade {value!r} is not an integer; use 0, 1, 2 or 3", path=path, line=line)
    return int(number)


def _trec_records(path: str | Path, text: str):
    seen: dict[tuple[str, str], int] = {}
    for number, line in iter_lines(text):
        fields = line.split()
        if len(fields) != 4:
            raise InputError(
                f"expected 4 fields 'query_id iteration doc_id grade' (TREC qrels), got {len(fields)}",
                path=path, line=number,
            )
        q, _, d, g = fields
        key = (q, d)
        if key in seen:
            raise InputError(
                f"pair ({q}, {d}) is labeled again (first on line {seen[key]}); keep one line per pair "
                "or use a CSV/JSONL file with an 'annotator' column",
                path=path, line=number,
            )
        seen[key] = number
        yield q, d, _grade(g, path, number), None


def _checked_records(path, rows):
    seen: dict[tuple[str, str, str], int] = {}
    for number, row in rows:
        q, d, g, a = (pick(row, names) for names in (QUERY_FIELDS, DOC_FIELDS, GRADE_FIELDS, ANNOTATOR_FIELDS))
        missing = [name for name, value in (("query_id", q), ("doc_id", d), ("grade", g)) if value in (None, "")]
        if missing:
            raise InputError(f"missing {', '.join(missing)}; each label needs query_id, doc_id and grade", path=path, line=number)
        a = None if a in (None, "") else str(a)
        key = (str(q), str(d), a or "")
        if key in seen:
            who = f" by annotator {a!r}" if a else ""
            raise InputError(
                f"pair ({q}, {d}) is labeled again{who} (first on line {seen[key]}); keep one label per pair and annotator",
                path=path, line=number,
            )
        seen[key] = number
        yield str(q), str(d), _grade(g, path, number), a


def _jsonl_records(path, text):
    yield from _checked_records(path, iter_jsonl(path, text, what="qrels file"))


def _csv_records(path, text):
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames:
        raise InputError("CSV has no header; the first line must name query_id,doc_id,grade", path=path, line=1)
    header = [h.strip().lower() for h in reader.fieldnames]
    reader.fieldnames = header
    if not any(h in header for h in GRADE_FIELDS):
        raise InputError(f"CSV header {header} has no grade column; add 'grade'", path=path, line=1)
    rows = ((reader.line_num, {k: (v.strip() if isinstance(v, str) else v) for k, v in row.items()}) for row in reader)
    yield from _checked_records(path, rows)


def write_qrels(qrels: Qrels | Mapping[str, Mapping[str, int]], path: str | Path) -> Path:
    """Write TREC qrels (``qid 0 docid grade``), or CSV/JSONL by extension."""
    labels = qrels.labels if isinstance(qrels, Qrels) else qrels
    p = Path(path)
    suffix = p.suffix.lower()
    with open(p, "w", encoding="utf-8", newline="") as fh:
        if suffix == ".csv":
            writer = csv.writer(fh)
            writer.writerow(["query_id", "doc_id", "grade"])
            for q, docs in labels.items():
                for d, g in docs.items():
                    writer.writerow([q, d, int(g)])
        elif suffix in {".jsonl", ".ndjson", ".json"}:
            for q, docs in labels.items():
                for d, g in docs.items():
                    fh.write(json.dumps({"query_id": q, "doc_id": d, "grade": int(g)}) + "\n")
        else:
            for q, docs in labels.items():
                for d, g in docs.items():
                    fh.write(f"{q} 0 {d} {int(g)}\n")
    return p
