"""Relevance labels (qrels): ``{query_id: {doc_id: grade}}`` with the set of declared topics.

A :class:`Qrels` is held as columns (query and doc ids factorised once, grades as int64): the metrics join them
to a run without a Python loop per label; ``labels`` (the dict of dicts) is built on first use. The readers are
:func:`relgrade.io.read_qrels` and :func:`relgrade.io.read_labels` (:mod:`relgrade.io._labels`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relgrade._errors import InputError
from relgrade.io._columns import Ids, take
from relgrade.io._grades import ANNOTATOR_FIELDS, DOC_FIELDS, GRADE_FIELDS, QUERY_FIELDS, lower_median, parse_grade
from relgrade.io._ids import as_id

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


@dataclass(frozen=True)
class LabelColumns:
    """One row per labeled pair: ``query`` and ``doc`` ids (factorised) and the integer ``grade``."""

    query: Ids
    doc: Ids
    grade: "np.ndarray"

    @classmethod
    def from_mapping(cls, labels: Mapping[Any, Mapping[Any, Any]]) -> "LabelColumns":
        import numpy as np

        docs = list(chain.from_iterable(labels.values()))
        grades = list(chain.from_iterable(d.values() for d in labels.values()))
        sizes = list(map(len, labels.values()))
        query = Ids.from_values(list(labels), "query_id")
        column = np.array(grades)
        if column.dtype.kind not in "iub":
            column = np.array([int(g) for g in grades], dtype=np.int64)
        made = cls(Ids(np.repeat(query.codes, sizes), query.names, rewritten=query.rewritten),
                   Ids.from_values(docs, "doc_id"), column.astype(np.int64, copy=False))
        if query.rewritten or made.doc.rewritten:
            made.check_unique(None)
        return made

    def check_unique(self, source: str | None) -> None:
        """Refuse a pair labeled twice (ids the id rule made equal, e.g. ``d1`` and `` d1``)."""
        import numpy as np

        key = self.query.codes.astype(np.int64) * max(self.doc.n_names, 1) + self.doc.codes
        ordered = np.sort(key)
        twice = np.flatnonzero(ordered[1:] == ordered[:-1])
        if len(twice):
            q, d = divmod(int(ordered[twice[0]]), max(self.doc.n_names, 1))
            raise InputError(f"pair ({self.query.name_list()[q]}, {self.doc.name_list()[d]}) is labeled twice; keep "
                             "one label per pair", path=source)

    def to_dict(self) -> dict[str, dict[str, int]]:
        import numpy as np

        if not len(self.grade):
            return {}
        order = np.argsort(self.query.codes, kind="stable")
        q = self.query.codes[order]
        docs = take(self.doc.names, self.doc.codes[order]).to_pylist()
        grades = self.grade[order].tolist()
        starts = np.flatnonzero(np.concatenate([[True], q[1:] != q[:-1]]))
        ends = np.append(starts[1:], len(q)).tolist()
        names = self.query.name_list()
        return {names[c]: dict(zip(docs[s:e], grades[s:e])) for c, s, e in zip(q[starts].tolist(), starts.tolist(), ends)}


class Qrels:
    """Graded labels for (query, document) pairs.

    ``labels`` maps query id to ``{doc_id: grade}``. ``topics`` holds every declared query, also
    those with no relevant document (no-answer cases). ``forbidden`` maps a query to documents
    that must never be retrieved for it (tenant / permission cases). ``annotations`` keeps the
    individual grades when several annotators labeled the same pair (``labels`` then holds their
    lower median, see :meth:`from_records`). Ids follow :mod:`relgrade.io._ids`.
    """

    __slots__ = ("columns", "_labels", "topics", "forbidden", "queries", "annotations", "tags", "source")

    def __init__(
        self,
        labels: Mapping[str, Mapping[str, int]] | LabelColumns,
        *,
        topics: Iterable[str] | None = None,
        forbidden: Mapping[str, Iterable[str]] | None = None,
        queries: Mapping[str, str] | None = None,
        annotations: Mapping[tuple[str, str], Mapping[str, int]] | None = None,
        tags: Mapping[str, Iterable[str]] | None = None,
        source: str | None = None,
    ):
        self.columns = labels if isinstance(labels, LabelColumns) else LabelColumns.from_mapping(labels)
        self._labels: dict[str, dict[str, int]] | None = None
        declared = dict.fromkeys(as_id(t, "topic") for t in (topics if topics is not None else []))
        declared.update(dict.fromkeys(self.columns.query.name_list()))
        self.topics: tuple[str, ...] = tuple(declared)
        self.forbidden: dict[str, frozenset[str]] = {
            as_id(q, "query_id"): frozenset(as_id(d, "forbidden doc_id") for d in docs)
            for q, docs in (forbidden or {}).items() if docs
        }
        self.queries: dict[str, str] = dict(queries or {})
        self.annotations: dict[tuple[str, str], dict[str, int]] = {
            k: dict(v) for k, v in (annotations or {}).items()
        }
        self.tags: dict[str, tuple[str, ...]] = {q: tuple(t) for q, t in (tags or {}).items()}
        self.source = source

    @property
    def labels(self) -> dict[str, dict[str, int]]:
        """``{query_id: {doc_id: grade}}`` (built from the columns on first use)."""
        if self._labels is None:
            self._labels = self.columns.to_dict()
        return self._labels

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, labels: Mapping[str, Mapping[str, int]], **kwargs: Any) -> "Qrels":
        return cls(labels, **kwargs)

    @classmethod
    def keeping(cls, labels: dict[str, dict[str, int]], *, source: str | None = None,
                columns: LabelColumns | None = None) -> "Qrels":
        """``Qrels(labels)`` that keeps ``labels`` as its :attr:`labels` (no second dict built from the columns) when
        the id rule leaves every id as it is and every grade is an ``int``, non-empty per query: a reader's own dict,
        which no one changes afterwards. ``columns``: the reader's own columns of the same pairs, laid out as
        ``Qrels(labels)`` lays them out (rows grouped by query in ``labels``' order, ids numbered first-seen), used
        instead of encoding the ids again."""
        made = cls(labels if columns is None else columns, source=source)
        if not (made.columns.query.rewritten or made.columns.doc.rewritten) and all(labels.values()) and \
                all(type(g) is int for docs in labels.values() for g in docs.values()):
            made._labels = labels
        return made

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
            per_pair.setdefault((as_id(q, "query_id", path=source), as_id(d, "doc_id", path=source)), {})[a or ""] = g
        labels: dict[str, dict[str, int]] = {}
        annotations: dict[tuple[str, str], dict[str, int]] = {}
        for (q, d), by_annotator in per_pair.items():
            labels.setdefault(q, {})[d] = lower_median(by_annotator.values())
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
        grades = [parse_grade(v, what=f"grade in column {g!r}") for v in frame[g].tolist()]
        if any(v is None for v in grades):
            raise InputError(f"DataFrame column {g!r} has an empty grade; every row needs a grade")
        records = zip(frame[q].tolist(), frame[d].tolist(), grades, annotators)
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
        return len(self.columns.grade)

    def __repr__(self) -> str:
        return f"Qrels({len(self.topics)} topics, {len(self)} labels)"


def check_trec_ids(ids: Iterable[str], *, path: str | Path, what: str = "qrels") -> None:
    """Refuse ids a TREC file cannot hold (empty, or with whitespace: the line would split wrong)."""
    for i in ids:
        if not i or i.startswith("#") or any(c.isspace() for c in i):
            raise InputError(f"id {i!r} is empty, starts with # or contains whitespace, so TREC {what} cannot hold it; "
                             "write a .csv or .jsonl file instead", path=path)
