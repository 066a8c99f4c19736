"""Relevance labels (qrels): ``{query_id: {doc_id: grade}}`` with the set of declared topics.

Formats read: TREC qrels (``qid iter docid grade``), CSV or JSONL with columns
``query_id, doc_id, grade[, annotator]`` and a golden set (see :mod:`relgrade.io._golden`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relgrade._errors import InputError
from relgrade.io._text import read_text, sniff_kind

from relgrade.io._labels import ANNOTATOR_FIELDS, DOC_FIELDS, GRADE_FIELDS, QUERY_FIELDS, parse_grade

if TYPE_CHECKING:
    import pandas as pd


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
        from relgrade.io._labels import lower_median

        per_pair: dict[tuple[str, str], dict[str, int]] = {}
        for q, d, g, a in records:
            per_pair.setdefault((q, d), {})[a or ""] = g
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
        records = zip(frame[q].astype(str), frame[d].astype(str), grades, annotators)
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
    """Read TREC qrels, CSV/JSONL labels (any file :func:`relgrade.io.read_labels` reads) or a golden set."""
    from relgrade.io._labels import read_labels

    text = read_text(path, what="qrels file")
    kind = sniff_kind(path, text)
    if kind in {"jsonl", "json"}:
        from relgrade.io._golden import is_golden, read_golden_text

        if is_golden(path, text, kind):
            return read_golden_text(path, text, kind).to_qrels()
        if kind == "json":
            raise InputError("a JSON list here must be a golden set (objects with 'query' and 'relevant_doc_ids')", path=path)
    return read_labels(path, scale=None, empty="error").to_qrels()


def write_qrels(qrels: Qrels | Mapping[str, Mapping[str, int]], path: str | Path) -> Path:
    """Write TREC qrels (``qid 0 docid grade``), or CSV/JSONL by extension."""
    labels = qrels.labels if isinstance(qrels, Qrels) else qrels
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in {".csv", ".jsonl", ".ndjson", ".json"}:
        check_trec_ids([*labels, *(d for docs in labels.values() for d in docs)], path=p)
    if suffix in {".csv", ".jsonl", ".ndjson", ".json"}:
        from relgrade.io._labels import write_labels

        rows = ({"query_id": q, "doc_id": d, "grade": int(g)} for q, docs in labels.items() for d, g in docs.items())
        return write_labels(rows, p, columns=("query_id", "doc_id", "grade"))
    try:
        with open(p, "w", encoding="utf-8", newline="") as fh:
            for q, docs in labels.items():
                for d, g in docs.items():
                    fh.write(f"{q} 0 {d} {int(g)}\n")
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror}); choose another path", path=p) from None
    return p


def check_trec_ids(ids: Iterable[str], *, path: str | Path, what: str = "qrels") -> None:
    """Refuse ids a TREC file cannot hold (empty, or with whitespace: the line would split wrong)."""
    for i in ids:
        if not i or any(c.isspace() for c in i):
            raise InputError(f"id {i!r} is empty or contains whitespace, so TREC {what} cannot hold it; "
                             "write a .csv or .jsonl file instead", path=path)
