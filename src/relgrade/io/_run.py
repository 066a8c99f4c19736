"""Runs: what a retriever returned, per query, in rank order.

As in trec_eval, documents are ordered by score *in single precision* (trec_eval stores a score as a C ``float``),
ties broken by doc id in reverse lexicographic order (:mod:`relgrade.io._order`); ids follow the one id rule of
:mod:`relgrade.io._ids` (``NA`` or ``NULL`` is a doc id, never a missing value). The readers are in
:mod:`relgrade.io._run_read`.

A run is held as columns: query and doc ids factorised once (:class:`relgrade.io._columns.Ids`), scores as
float64. ``query_id`` and ``doc_id`` (one Python string per row) are built only when asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from relgrade._errors import InputError
from relgrade.io._columns import Ids, take
from relgrade.io._ids import as_id
from relgrade.io._order import trec_order, trec_score

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["Run", "run_from_hits", "trec_score"]


class Run:
    """Retrieved documents per query.

    ``query_id``, ``doc_id`` and ``score`` are parallel arrays, one row per retrieved document
    (``query_index`` and ``doc_index`` hold the same ids factorised). For a JSONL run the score is derived from
    list position (``n - position``) so that rank order is list order; the scores the file gave are kept in
    ``given_score``.
    """

    __slots__ = ("query_index", "doc_index", "score", "given_score", "queries", "texts", "name", "source", "retrieval",
                 "_order")

    def __init__(
        self,
        query_id: "np.ndarray | Sequence[str] | Ids",
        doc_id: "np.ndarray | Sequence[str] | Ids",
        score: "np.ndarray",
        *,
        given_score: "np.ndarray | None" = None,
        queries: Mapping[str, str] | None = None,
        texts: Mapping[str, str] | None = None,
        name: str = "run",
        source: str | None = None,
    ):
        import numpy as np

        self.query_index = query_id if isinstance(query_id, Ids) else Ids.from_values(query_id, "query_id", source)
        self.doc_index = doc_id if isinstance(doc_id, Ids) else Ids.from_values(doc_id, "doc_id", source)
        self.score = np.asarray(score, dtype=np.float64)
        self.given_score = self.score if given_score is None else np.asarray(given_score, dtype=np.float64)
        if not (len(self.query_index) == len(self.doc_index) == len(self.score) == len(self.given_score)):
            raise ValueError("query_id, doc_id and score must have the same length")
        self.queries: dict[str, str] = dict(queries or {})
        self.texts: dict[str, str] = dict(texts or {})
        self.name = name
        self.source = source
        self.retrieval: dict[str, Any] | None = None  # how a retriever's hits became this run (relgrade.adapters)
        self._order: Any = False  # not computed yet

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float] | Sequence[str]], **kwargs: Any) -> "Run":
        """From ``{qid: {doc_id: score}}`` (trec_eval semantics) or ``{qid: [doc_id, ...]}`` (rank order)."""
        import numpy as np

        if all(type(docs) is dict for docs in run.values()):  # the usual shape, flattened at C speed
            ds = list(chain.from_iterable(run.values()))
            ss = np.fromiter(chain.from_iterable(map(dict.values, run.values())), np.float64, len(ds))
            sizes = list(map(len, run.values()))
        else:
            ds, scores, sizes = [], [], []
            for q, docs in run.items():
                sizes.append(len(docs))
                if isinstance(docs, Mapping):
                    ds.extend(docs)
                    scores.extend(docs.values())
                else:
                    if len(set(docs)) != len(docs):
                        raise InputError(f"query {q!r} lists a document twice; each document once per query")
                    ds.extend(docs)
                    scores.extend(range(len(docs), 0, -1))
            ss = np.array(scores, dtype=np.float64)
        query = Ids.from_values(list(run), "query_id")
        query = Ids(np.repeat(query.codes, sizes), query.names, rewritten=query.rewritten)
        docs = Ids.from_values(ds, "doc_id")
        made = cls(query, docs, ss, **kwargs)
        if query.rewritten or docs.rewritten:
            made.check_unique()  # keys that the id rule made equal ('d1' and ' d1')
        return made

    @classmethod
    def from_frame(cls, frame: "pd.DataFrame", **kwargs: Any) -> "Run":
        """From a DataFrame with columns ``query_id, doc_id`` and ``score`` (or ``rank``)."""
        cols = {c.lower(): c for c in frame.columns}
        q = next((cols[n] for n in ("query_id", "qid") if n in cols), None)
        d = next((cols[n] for n in ("doc_id", "docid", "docno", "pid") if n in cols), None)
        if q is None or d is None:
            raise InputError(f"DataFrame needs columns query_id and doc_id; got {list(frame.columns)}")
        if "score" in cols:
            score = frame[cols["score"]].astype(float).to_numpy()
        elif "rank" in cols:
            score = -frame[cols["rank"]].astype(float).to_numpy()
        else:
            raise InputError("DataFrame needs a 'score' or 'rank' column to order the documents")
        run = cls(frame[q].tolist(), frame[d].tolist(), score, **kwargs)
        run.check_unique()
        return run

    # -- views ----------------------------------------------------------------------------------
    @property
    def query_id(self) -> "np.ndarray":
        """The query id of each row (numpy object array, built on first use)."""
        return self.query_index.values()

    @property
    def doc_id(self) -> "np.ndarray":
        """The doc id of each row (numpy object array, built on first use)."""
        return self.doc_index.values()

    def check_unique(self) -> None:
        """Refuse a (query, doc) pair listed twice."""
        import numpy as np

        key = self.query_index.codes.astype(np.int64) * max(self.doc_index.n_names, 1) + self.doc_index.codes
        order = np.argsort(key, kind="stable")
        twice = np.flatnonzero(key[order][1:] == key[order][:-1])
        if len(twice):
            i = int(order[twice[0] + 1])
            raise InputError(
                f"document {self.doc_index.name_list()[self.doc_index.codes[i]]!r} appears twice for query "
                f"{self.query_index.name_list()[self.query_index.codes[i]]!r}; each document once per query",
                path=self.source,
            )

    def trec_order(self) -> "np.ndarray | None":
        """Row permutation into trec_eval's order (queries in first-seen order), None when already in it (cached)."""
        if self._order is False:
            self._order = trec_order(self.query_index.codes, self.score, self.doc_index.codes, self.doc_index.names)
        return self._order

    def ranked(self, depth: int | None = None) -> dict[str, list[str]]:
        """``{qid: [doc_id, ...]}`` in trec_eval's order (score descending, then doc id descending), queries in
        first-seen order; with ``depth`` only the top ``depth`` of each query."""
        import numpy as np

        order = self.trec_order()
        q = self.query_index.codes if order is None else self.query_index.codes[order]
        d = self.doc_index.codes if order is None else self.doc_index.codes[order]
        if not len(q):
            return {}
        starts = np.flatnonzero(np.concatenate([[True], q[1:] != q[:-1]]))
        counts = np.diff(np.append(starts, len(q)))
        if depth is not None:
            d = d[np.arange(len(q)) - np.repeat(starts, counts) < depth]
            counts = np.minimum(counts, depth)
        ends = np.cumsum(counts)
        docs = take(self.doc_index.names, d).to_pylist()
        names = self.query_index.name_list()
        return {names[c]: docs[e - n:e] for c, n, e in zip(q[starts].tolist(), counts.tolist(), ends.tolist())}

    def query_ids(self) -> list[str]:
        """Query ids in first-seen order."""
        return list(self.query_index.name_list())

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for q, d, s in zip(self.query_id.tolist(), self.doc_id.tolist(), self.score.tolist()):
            out.setdefault(q, {})[d] = s
        return out

    def to_frame(self) -> "pd.DataFrame":
        """One row per retrieved document in trec_eval's order, with its ``rank`` from 1."""
        import numpy as np
        import pandas as pd

        order = self.trec_order()
        rows = np.arange(len(self)) if order is None else order
        frame = pd.DataFrame({"query_id": self.query_id[rows], "doc_id": self.doc_id[rows], "score": self.score[rows]})
        frame = frame.sort_values("query_id", kind="stable")
        frame["rank"] = frame.groupby("query_id", sort=False).cumcount() + 1
        return frame.reset_index(drop=True)

    def __len__(self) -> int:
        return len(self.score)

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {self.query_index.n_names} queries, {len(self)} rows)"


def run_from_hits(per_query: Iterable[tuple[str, str, Sequence[Any]]], *, name: str = "retriever") -> Run:
    """Build a run from ``(query_id, query, hits)`` where hits have ``.id`` (the guide's retriever), in list order.
    A document listed twice for a query is refused, as the run readers refuse it in a file (one rule)."""
    qs, ds, ss, given = [], [], [], []
    queries: dict[str, str] = {}
    texts: dict[str, str] = {}
    for qid, query, hits in per_query:
        qid = as_id(qid, "query_id")
        queries[qid] = query
        seen: dict[str, int] = {}
        n = len(hits)
        for position, hit in enumerate(hits):
            doc = _hit_field(hit, ("id", "doc_id"))
            if doc is None:
                raise InputError(f"retriever hit {hit!r} has no '.id'; return objects with .id (and optionally .score, .text)")
            doc = as_id(doc, "hit id")
            if doc in seen:
                raise InputError(f"query {qid!r}: document {doc!r} appears twice in the hits ({seen[doc] + 1} and "
                                 f"{position + 1}); each document once per query, as in a run file")
            seen[doc] = position
            text = _hit_field(hit, ("text", "page_content", "content"))
            if isinstance(text, str):
                texts[doc] = text
            score = _hit_field(hit, ("score",))
            qs.append(qid)
            ds.append(doc)
            ss.append(float(n - position))
            given.append(float("nan") if score is None else float(score))
    return Run(qs, ds, ss, given_score=given, queries=queries, texts=texts, name=name)


def _hit_field(hit: Any, names: tuple[str, ...]) -> Any:
    if isinstance(hit, str):
        return hit if "id" in names else None
    for name in names:
        if isinstance(hit, Mapping) and name in hit:
            return hit[name]
        if hasattr(hit, name):
            return getattr(hit, name)
    return None
