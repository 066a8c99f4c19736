"""The pairs to label: ``query_id, query, doc_id, text[, judge_grade]`` read from CSV or JSONL.

This is the file ``relgrade sample`` writes. Extra columns are ignored (an empty ``grade``
column, ranks, scores). ``relgrade sample`` keeps the judge's grades out of it, in the file
beside it (:func:`judge_file_for`: ``items.judge.csv`` for ``items.csv``), so that whoever fills the
file in a spreadsheet is blind to the judge too; a ``judge_grade`` column of another items file is
read. The page never receives a judge grade unless asked (``--show-judge``, which reads the file
beside the items when they have none), so annotators are not anchored by it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from relgrade._errors import InputError
from relgrade.io._ids import as_id
from relgrade.io._text import iter_csv, iter_jsonl, pick, read_text, sniff_kind

QUERY_ID_FIELDS = ("query_id", "qid", "topic", "query-id")
QUERY_FIELDS = ("query", "question", "query_text")
DOC_FIELDS = ("doc_id", "docid", "docno", "pid", "corpus_id", "corpus-id")
TEXT_FIELDS = ("text", "passage", "chunk", "content", "doc_text")
JUDGE_FIELDS = ("judge_grade", "judge", "judge_label")


@dataclass(frozen=True)
class Item:
    """One (query, chunk) pair to grade. ``judge_grade`` is None when the file has none."""

    query_id: str
    query: str
    doc_id: str
    text: str
    judge_grade: int | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.query_id, self.doc_id)

    @property
    def text_sha256(self) -> str:
        """SHA-256 of the text shown to the annotator: the store records it with the label (staleness check)."""
        from relgrade.io import text_sha256

        return text_sha256(self.text)


def judge_file_for(path: str | Path) -> Path:
    """Where ``relgrade sample`` keeps the judge's grades of an items file: ``items.judge.csv`` beside ``items.csv``
    (the same format), out of the annotators' sight (:data:`relgrade.io._outputs.SIDE_FILES`)."""
    from relgrade.io._outputs import side_path

    return side_path(path, "items", "its judge grades")


def with_judge_grades(items: tuple[Item, ...], path: str | Path) -> tuple[Item, ...]:
    """``items`` with the judge's grades of the file beside them (:func:`judge_file_for`) when they carry none."""
    from dataclasses import replace

    beside = judge_file_for(path)
    if any(it.judge_grade is not None for it in items) or not beside.is_file():
        return items
    from relgrade.io import read_labels

    grades = {(lab.query_id, lab.doc_id): lab.grade for lab in read_labels(beside, source="judge").labels}
    return tuple(replace(it, judge_grade=grades.get(it.key)) for it in items)


def read_items(path: str | Path) -> tuple[Item, ...]:
    """Read the pairs to label, in file order; every problem is an :class:`InputError` with file:line."""
    text = read_text(path, what="items file")
    kind = sniff_kind(path, text)
    if kind == "jsonl":
        rows: Iterator[tuple[int, dict[str, Any]]] = iter_jsonl(path, text, what="items file")
    elif kind == "csv" or (kind == "whitespace" and "," in text.splitlines()[0]):
        rows = _csv_rows(path, text)
    else:
        raise InputError(
            "expected a CSV (header query_id,query,doc_id,text) or JSONL items file, as written by "
            "'relgrade sample'; use a .csv or .jsonl file",
            path=path,
        )
    items: list[Item] = []
    seen: dict[tuple[str, str], int] = {}
    for number, row in rows:
        item = _item(row, path, number)
        if item.key in seen:
            raise InputError(
                f"pair ({item.query_id}, {item.doc_id}) is listed again (first on line {seen[item.key]}); "
                "keep one line per pair",
                path=path, line=number,
            )
        seen[item.key] = number
        items.append(item)
    if not items:
        raise InputError("no pairs to label; the file needs at least one row", path=path)
    return tuple(items)


def _csv_rows(path: str | Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    return iter_csv(path, text, what="items file (query_id,query,doc_id,text)")


def _item(row: dict[str, Any], path: str | Path, line: int) -> Item:
    query_id, query, doc_id, text, judge = (
        pick(row, names) for names in (QUERY_ID_FIELDS, QUERY_FIELDS, DOC_FIELDS, TEXT_FIELDS, JUDGE_FIELDS)
    )
    missing = [name for name, value in (("query", query), ("doc_id", doc_id), ("text", text)) if _blank(value)]
    if _blank(query_id) and not _blank(query):
        from relgrade.io import query_id_for

        query_id = query_id_for(str(query))
    if _blank(query_id):
        missing.insert(0, "query_id")
    if missing:
        raise InputError(
            f"missing {', '.join(missing)}; each pair needs query_id, query, doc_id and text "
            "(re-run 'relgrade sample' with a run that carries the query and chunk texts)",
            path=path, line=line,
        )
    return Item(as_id(query_id, "query_id", path=path, line=line), str(query),
                as_id(doc_id, "doc_id", path=path, line=line), str(text), _judge(judge, path, line))


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _judge(value: Any, path: str | Path, line: int) -> int | None:
    from relgrade.io import parse_grade

    number = parse_grade(value, path=path, line=line, what="judge_grade")
    if number is not None and not 0 <= number <= 3:
        raise InputError(f"judge_grade {value!r} is not one of 0, 1, 2, 3; fix it or leave it empty", path=path, line=line)
    return number
