"""Runs: what a retriever returned, per query, in rank order.

Formats read: TREC runs (``qid Q0 docid rank score tag``; as in trec_eval the rank column is
ignored and documents are ordered by score *in single precision* (trec_eval stores a score as a C
``float``), ties broken by doc id in reverse lexicographic order; ids are strings, always: ``NA`` or
``NULL`` is a doc id, never a missing value) and a RAG-native JSONL, one line per query::

    {"query_id", "query", "results": [{"doc_id", "text"?, "score"?}, ...]}

where list order is rank order. Texts met in a JSONL run are kept in :attr:`Run.texts`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relgrade._errors import InputError
from relgrade.io._text import iter_jsonl, iter_lines, pick, read_text, sniff_kind

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


def trec_score(score: "np.ndarray") -> "np.ndarray":
    """Scores as trec_eval compares them: rounded to float32 (its ``TEXT_RESULTS.sim`` is a C ``float``), so
    ``0.30000000000000004`` and ``0.3`` tie and the doc id decides, as in trec_eval and pytrec_eval."""
    import numpy as np

    return np.asarray(score, dtype=np.float64).astype(np.float32)


class Run:
    """Retrieved documents per query.

    ``query_id``, ``doc_id`` and ``score`` are parallel numpy arrays, one row per retrieved
    document. For a JSONL run the score is derived from list position (``n - position``) so that
    rank order is list order; the scores the file gave are kept in ``given_score``.
    """

    __slots__ = ("query_id", "doc_id", "score", "given_score", "queries", "texts", "name", "source")

    def __init__(
        self,
        query_id: "np.ndarray",
        doc_id: "np.ndarray",
        score: "np.ndarray",
        *,
        given_score: "np.ndarray | None" = None,
        queries: Mapping[str, str] | None = None,
        texts: Mapping[str, str] | None = None,
        name: str = "run",
        source: str | None = None,
    ):
        import numpy as np

        self.query_id = np.asarray(query_id, dtype=object)
        self.doc_id = np.asarray(doc_id, dtype=object)
        self.score = np.asarray(score, dtype=np.float64)
        self.given_score = self.score if given_score is None else np.asarray(given_score, dtype=np.float64)
        if not (len(self.query_id) == len(self.doc_id) == len(self.score)):
            raise ValueError("query_id, doc_id and score must have the same length")
        self.queries: dict[str, str] = dict(queries or {})
        self.texts: dict[str, str] = dict(texts or {})
        self.name = name
        self.source = source

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float] | Sequence[str]], **kwargs: Any) -> "Run":
        """From ``{qid: {doc_id: score}}`` (trec_eval semantics) or ``{qid: [doc_id, ...]}`` (rank order)."""
        qs: list[str] = []
        ds: list[str] = []
        ss: list[float] = []
        for q, docs in run.items():
            q = str(q)
            if isinstance(docs, Mapping):
                qs.extend([q] * len(docs))
                first = next(iter(docs), "")
                ds.extend(docs if type(first) is str else map(str, docs))
                ss.extend(docs.values())
            else:
                n = len(docs)
                if len(set(docs)) != n:
                    raise InputError(f"query {q!r} lists a document twice; each document once per query")
                for i, d in enumerate(docs):
                    qs.append(q)
                    ds.append(str(d))
                    ss.append(float(n - i))
        return cls(qs, ds, ss, **kwargs)

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
        run = cls(frame[q].astype(str).to_numpy(), frame[d].astype(str).to_numpy(), score, **kwargs)
        run.check_unique()
        return run

    # -- views ----------------------------------------------------------------------------------
    def check_unique(self) -> None:
        import pandas as pd

        dup = pd.DataFrame({"q": self.query_id, "d": self.doc_id}).duplicated()
        if dup.any():
            i = int(dup.to_numpy().argmax())
            raise InputError(
                f"document {self.doc_id[i]!r} appears twice for query {self.query_id[i]!r}; "
                "each document once per query", path=self.source,
            )

    def ranked(self) -> dict[str, list[str]]:
        """``{qid: [doc_id, ...]}`` in trec_eval's order (score descending, then doc id descending)."""
        out: dict[str, list[str]] = {q: [] for q in self.query_ids()}
        rows = sorted(zip(trec_score(self.score).tolist(), self.doc_id.tolist(), self.query_id.tolist()), reverse=True)
        for _, d, q in rows:
            out[q].append(d)
        return out

    def query_ids(self) -> list[str]:
        return list(dict.fromkeys(self.query_id.tolist()))

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for q, d, s in zip(self.query_id.tolist(), self.doc_id.tolist(), self.score.tolist()):
            out.setdefault(q, {})[d] = s
        return out

    def to_frame(self) -> "pd.DataFrame":
        import pandas as pd

        frame = pd.DataFrame({"query_id": self.query_id, "doc_id": self.doc_id, "score": self.score,
                              "_order": trec_score(self.score)})
        frame = frame.sort_values(["query_id", "_order", "doc_id"], ascending=[True, False, False], kind="stable")
        frame = frame.drop(columns="_order")
        frame["rank"] = frame.groupby("query_id", sort=False).cumcount() + 1
        return frame.reset_index(drop=True)

    def __len__(self) -> int:
        return len(self.doc_id)

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {len(set(self.query_id.tolist()))} queries, {len(self)} rows)"


def read_run(path: str | Path, *, name: str | None = None) -> Run:
    """Read a TREC run or a RAG-native JSONL run."""
    text = read_text(path, what="run file")
    kind = sniff_kind(path, text)
    label = name or Path(path).stem
    if kind in {"jsonl", "json"}:
        return _read_jsonl_run(path, text, label)
    return _read_trec_run(path, text, label)


def _read_trec_run(path, text: str, name: str) -> Run:
    run = _fast_trec_run(text, name, path)
    if run is not None:
        return run
    qs: list[str] = []
    ds: list[str] = []
    ss: list[float] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in iter_lines(text):
        fields = line.split()
        if len(fields) != 6:
            raise InputError(
                f"expected 6 fields 'query_id Q0 doc_id rank score tag' (TREC run), got {len(fields)}; "
                "ids cannot contain spaces (use a JSONL run)", path=path, line=number,
            )
        q, _, d, rank, score, _tag = fields
        try:
            int(rank)
        except ValueError:
            raise InputError(f"rank {rank!r} is not an integer; the 4th field is the rank (1, 2, ...)", path=path, line=number) from None
        try:
            value = float(score)
        except ValueError:
            raise InputError(f"score {score!r} is not a number; the 5th field is the score", path=path, line=number) from None
        if value != value or value in (float("inf"), float("-inf")):
            raise InputError(f"score {score!r} is not a finite number", path=path, line=number)
        key = (q, d)
        if key in seen:
            raise InputError(f"document {d!r} appears twice for query {q!r} (first on line {seen[key]}); keep one line", path=path, line=number)
        seen[key] = number
        qs.append(q)
        ds.append(d)
        ss.append(value)
    return Run(qs, ds, ss, name=name, source=str(path))


def _fast_trec_run(text: str, name: str, path) -> Run | None:
    """Parse a well-formed TREC run with pandas' C reader; None sends it to the line-exact parser."""
    import io

    import numpy as np
    import pandas as pd

    if "#" in text[:4096]:
        return None
    try:
        frame = pd.read_csv(
            io.StringIO(text), sep=r"\s+", header=None, dtype=str, engine="c",
            names=["q", "z", "d", "rank", "score", "tag", "extra"], skip_blank_lines=True, na_filter=False,
            keep_default_na=False,
        )
    except Exception:
        return None
    if frame["tag"].isna().any() or frame["extra"].notna().any() or (frame["tag"] == "").any() or (frame["extra"] != "").any():
        return None
    score = pd.to_numeric(frame["score"], errors="coerce").to_numpy(dtype=np.float64)
    rank = pd.to_numeric(frame["rank"], errors="coerce").to_numpy()
    if not np.isfinite(score).all() or not np.isfinite(rank).all() or (rank != np.floor(rank)).any():
        return None
    if frame.duplicated(["q", "d"]).any():
        return None
    return Run(frame["q"].to_numpy(), frame["d"].to_numpy(), score, name=name, source=str(path))


def _read_jsonl_run(path, text: str, name: str) -> Run:
    from relgrade.io._golden import query_id_for

    qs: list[str] = []
    ds: list[str] = []
    ss: list[float] = []
    given: list[float] = []
    queries: dict[str, str] = {}
    texts: dict[str, str] = {}
    seen: dict[str, int] = {}
    for number, obj in iter_jsonl(path, text, what="run file"):
        results = obj.get("results")
        if not isinstance(results, list):
            raise InputError("missing 'results' (a list of {doc_id, text?, score?}) in a JSONL run", path=path, line=number)
        query = obj.get("query")
        qid = obj.get("query_id")
        if qid in (None, ""):
            if not isinstance(query, str) or not query.strip():
                raise InputError("a run line needs 'query_id' or 'query'", path=path, line=number)
            qid = query_id_for(query)
        qid = str(qid)
        if qid in seen:
            raise InputError(f"duplicate query_id {qid!r} (first on line {seen[qid]}); one line per query", path=path, line=number)
        seen[qid] = number
        if isinstance(query, str):
            queries[qid] = query
        docs_here: set[str] = set()
        n = len(results)
        for position, hit in enumerate(results):
            if isinstance(hit, str):
                hit = {"doc_id": hit}
            if not isinstance(hit, dict):
                raise InputError(f"result {position + 1} must be an object with 'doc_id'", path=path, line=number)
            doc = pick(hit, ("doc_id", "id", "docid", "pid"))
            if doc in (None, ""):
                raise InputError(f"result {position + 1} has no 'doc_id'", path=path, line=number)
            doc = str(doc)
            if doc in docs_here:
                raise InputError(f"document {doc!r} appears twice in 'results'; list each document once", path=path, line=number)
            docs_here.add(doc)
            score = hit.get("score")
            if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
                raise InputError(f"score {score!r} of result {position + 1} is not a number", path=path, line=number)
            text_value = hit.get("text")
            if isinstance(text_value, str):
                texts[doc] = text_value
            qs.append(qid)
            ds.append(doc)
            ss.append(float(n - position))
            given.append(float("nan") if score is None else float(score))
    return Run(qs, ds, ss, given_score=given, queries=queries, texts=texts, name=name, source=str(path))


def write_run(run: Run, path: str | Path, *, tag: str | None = None) -> Path:
    """Write a TREC run (or JSONL by extension), in rank order with ranks from 1."""
    p = Path(path)
    ranked = run.ranked()
    if p.suffix.lower() not in {".jsonl", ".ndjson"}:
        from relgrade.io._qrels import check_trec_ids

        check_trec_ids([*ranked, *(d for docs in ranked.values() for d in docs)], path=p, what="run")
    with open(p, "w", encoding="utf-8") as fh:
        if p.suffix.lower() in {".jsonl", ".ndjson"}:
            for q, docs in ranked.items():
                obj: dict[str, Any] = {"query_id": q}
                if q in run.queries:
                    obj["query"] = run.queries[q]
                obj["results"] = [{"doc_id": d, **({"text": run.texts[d]} if d in run.texts else {})} for d in docs]
                fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
        else:
            for q, docs in ranked.items():
                n = len(docs)
                for i, d in enumerate(docs):
                    fh.write(f"{q} Q0 {d} {i + 1} {n - i} {tag or run.name}\n")
    return p


def run_from_hits(per_query: Iterable[tuple[str, str, Sequence[Any]]], *, name: str = "retriever") -> Run:
    """Build a run from ``(query_id, query, hits)`` where hits have ``.id`` (the guide's retriever)."""
    qs, ds, ss, given = [], [], [], []
    queries: dict[str, str] = {}
    texts: dict[str, str] = {}
    for qid, query, hits in per_query:
        queries[qid] = query
        seen: set[str] = set()
        n = len(hits)
        for position, hit in enumerate(hits):
            doc = _hit_field(hit, ("id", "doc_id"))
            if doc is None:
                raise InputError(f"retriever hit {hit!r} has no '.id'; return objects with .id (and optionally .score, .text)")
            doc = str(doc)
            if doc in seen:
                continue
            seen.add(doc)
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
