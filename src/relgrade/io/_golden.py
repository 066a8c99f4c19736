"""Golden sets in the retrieval-evaluation guide's own shape.

One JSON object per line (or a JSON list of them)::

    {"query_id"?: str, "query": str, "relevant_doc_ids": [...],
     "relevance_grades"?: {doc_id: 0-3}, "forbidden_doc_ids"?: [...], "tags"?: [...],
     "text_sha256"?: {doc_id: sha256 of the text the case was labeled on}}

A case with no relevant document is a **no-answer** case; ``forbidden_doc_ids`` make it a
**tenant / permission** case: any of those documents in the top k is a leak. A missing
``query_id`` is derived from the query text (:func:`query_id_for`) so a run file written by
another tool with the same query text matches it. Ids follow :mod:`relgrade.io._ids`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from relgrade._errors import InputError
from relgrade.io._grades import parse_grade
from relgrade.io._ids import as_id
from relgrade.io._qrels import Qrels
from relgrade.io._text import iter_jsonl, loads_json, read_text, sniff_kind


def query_id_for(query: str) -> str:
    """A stable id for a query that has none: ``q_`` and 10 hex digits of its SHA-1."""
    return "q_" + hashlib.sha1(query.strip().encode("utf-8")).hexdigest()[:10]


@dataclass(frozen=True)
class GoldenCase:
    query: str
    relevant_doc_ids: tuple[str, ...] = ()
    query_id: str = ""
    relevance_grades: dict[str, int] = field(default_factory=dict)
    forbidden_doc_ids: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    text_sha256: dict[str, str] = field(default_factory=dict)  # doc -> SHA-256 of the text it was labeled on

    def __post_init__(self) -> None:
        if not self.query_id:
            object.__setattr__(self, "query_id", query_id_for(self.query))

    @property
    def no_answer(self) -> bool:
        return not self.relevant_doc_ids and not any(g > 0 for g in self.relevance_grades.values())

    def grades(self) -> dict[str, int]:
        """Relevant docs default to grade 1 unless ``relevance_grades`` says otherwise."""
        out = {d: 1 for d in self.relevant_doc_ids}
        out.update(self.relevance_grades)
        return out


@dataclass(frozen=True)
class GoldenSet:
    cases: tuple[GoldenCase, ...]
    source: str | None = None

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self):
        return iter(self.cases)

    def to_qrels(self) -> Qrels:
        return Qrels(
            {c.query_id: c.grades() for c in self.cases if c.grades()},
            topics=[c.query_id for c in self.cases],
            forbidden={c.query_id: c.forbidden_doc_ids for c in self.cases},
            queries={c.query_id: c.query for c in self.cases},
            tags={c.query_id: c.tags for c in self.cases},
            source=self.source,
        )

    def to_jsonl(self, path: str | Path) -> Path:
        p = Path(path)
        with open(p, "w", encoding="utf-8") as fh:
            for c in self.cases:
                obj: dict[str, Any] = {"query_id": c.query_id, "query": c.query, "relevant_doc_ids": list(c.relevant_doc_ids)}
                if c.relevance_grades:
                    obj["relevance_grades"] = c.relevance_grades
                if c.forbidden_doc_ids:
                    obj["forbidden_doc_ids"] = list(c.forbidden_doc_ids)
                if c.tags:
                    obj["tags"] = list(c.tags)
                if c.text_sha256:
                    obj["text_sha256"] = dict(c.text_sha256)
                fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
        return p


def is_golden(path: str | Path, text: str, kind: str) -> bool:
    """Whether a file of this sniffed ``kind`` is a golden set (TREC qrels, CSV and TSV never are)."""
    if kind == "json":
        return True
    if kind != "jsonl":
        return False
    for _, obj in iter_jsonl(path, text, what="file"):
        return "relevant_doc_ids" in obj or ("query" in obj and "doc_id" not in obj and "results" not in obj)
    return False


def read_golden(path: str | Path) -> GoldenSet:
    text = read_text(path, what="golden set")
    return read_golden_text(path, text, sniff_kind(path, text))


def read_golden_text(path: str | Path, text: str, kind: str) -> GoldenSet:
    if kind == "json":
        items = loads_json(text, path=path)
        if not isinstance(items, list):
            raise InputError("a JSON golden set must be a list of cases", path=path)
        rows: Iterable[tuple[int | None, Any]] = ((None, item) for item in items)
    else:
        rows = iter_jsonl(path, text, what="golden set")
    cases: list[GoldenCase] = []
    seen: dict[str, int | None] = {}
    for index, (line, obj) in enumerate(rows, 1):
        case = _case(obj, path, line, index)
        if case.query_id in seen:
            first = seen[case.query_id]
            where = f" (first on line {first})" if first else ""
            raise InputError(f"duplicate query_id {case.query_id!r}{where}; give each case its own query_id", path=path, line=line)
        seen[case.query_id] = line
        cases.append(case)
    return GoldenSet(tuple(cases), source=str(path))


def _case(obj: Any, path, line, index) -> GoldenCase:
    where = {"path": path, "line": line}
    if not isinstance(obj, dict):
        raise InputError(f"case {index} is not a JSON object", **where)
    query = obj.get("query")
    if not isinstance(query, str) or not query.strip():
        raise InputError("missing 'query' (a non-empty string)", **where)
    rel = obj.get("relevant_doc_ids", [])
    if not isinstance(rel, list):
        raise InputError("'relevant_doc_ids' must be a list of document ids", **where)
    grades = obj.get("relevance_grades") or {}
    if not isinstance(grades, dict):
        raise InputError("'relevance_grades' must be an object {doc_id: grade}", **where)
    clean: dict[str, int] = {}
    for doc, grade in grades.items():
        value = parse_grade(grade, what=f"grade for {doc!r}", **where)
        if value is None:
            raise InputError(f"grade for {doc!r} is empty; use an integer such as 0-3", **where)
        clean[as_id(doc, "doc_id in 'relevance_grades'", **where)] = value
    forbidden = obj.get("forbidden_doc_ids", [])
    if not isinstance(forbidden, list):
        raise InputError("'forbidden_doc_ids' must be a list of document ids", **where)
    tags = obj.get("tags", [])
    if not isinstance(tags, list):
        raise InputError("'tags' must be a list of strings", **where)
    hashes = obj.get("text_sha256") or {}
    if not (isinstance(hashes, dict) and all(isinstance(v, str) and len(v) == 64 for v in hashes.values())):
        raise InputError("'text_sha256' must be an object {doc_id: 64 hex digits} (relgrade check --stamp writes it)",
                         **where)
    qid = obj.get("query_id")
    return GoldenCase(
        query=query,
        relevant_doc_ids=tuple(as_id(d, "id in 'relevant_doc_ids'", **where) for d in rel),
        query_id="" if qid is None or qid == "" else as_id(qid, "query_id", **where),
        relevance_grades=clean,
        forbidden_doc_ids=tuple(as_id(d, "id in 'forbidden_doc_ids'", **where) for d in forbidden),
        tags=tuple(map(str, tags)),
        text_sha256={as_id(d, "doc_id in 'text_sha256'", **where): h.lower() for d, h in hashes.items()},
    )
