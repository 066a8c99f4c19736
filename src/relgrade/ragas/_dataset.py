"""ragas datasets as relgrade golden sets and runs, and back.

A ragas ``SingleTurnSample`` carries, for retrieval: ``user_input`` (the query),
``retrieved_contexts`` / ``retrieved_context_ids`` (what the retriever returned, in rank order)
and ``reference_contexts`` / ``reference_context_ids`` (what should have been found). It has no
query id and no graded relevance, so:

- the query id is relgrade's :func:`relgrade.io.query_id_for` of ``user_input`` (the same id a
  JSONL run without ``query_id`` gets, so ids match across tools);
- a context without an id gets :func:`chunk_id_for` of its text (``c_`` + 10 hex of SHA-1), on
  both sides, so retrieved and reference contexts given only as text still match;
- every reference context is relevant with grade 1; writing back, ``reference_context_ids`` are
  the golden documents with a grade > 0, in golden order.

Accepted inputs: a ragas ``EvaluationDataset``, a list of ``SingleTurnSample`` or of plain dicts,
or the path of the JSONL file ragas' ``EvaluationDataset.to_jsonl`` writes (read without ragas,
errors name the line). :func:`write_ragas_jsonl` writes that same JSONL (key order and
``ensure_ascii=False`` as ragas does), readable by ``EvaluationDataset.from_jsonl``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade.io import GoldenCase, GoldenSet, Run, query_id_for

_FIELDS = ("user_input", "retrieved_contexts", "reference_contexts", "retrieved_context_ids", "reference_context_ids")


def require_ragas():
    """Import ragas, or raise the one-line InputError naming the extra."""
    try:
        import ragas
    except ImportError:
        raise InputError("needs the 'ragas' extra: pip install 'relgrade[ragas]'") from None
    return ragas


def chunk_id_for(text: str) -> str:
    """A stable id for a context that has none: ``c_`` and 10 hex digits of the SHA-1 of its text."""
    return "c_" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]


def _rows(dataset: Any) -> tuple[list[tuple[str, dict[str, Any]]], str | None]:
    """``[(where, row dict)]`` from any accepted input; ``where`` names the sample in errors."""
    if isinstance(dataset, (str, Path)):
        from relgrade.io._text import iter_jsonl, read_text

        text = read_text(dataset, what="ragas dataset")
        return [(f"{dataset}:{n}", obj) for n, obj in iter_jsonl(dataset, text, what="ragas dataset")], str(dataset)
    samples = getattr(dataset, "samples", dataset)
    if not isinstance(samples, Iterable) or isinstance(samples, (dict, bytes)):
        raise InputError(f"expected a ragas EvaluationDataset, a list of samples or a JSONL path, got {type(dataset).__name__}")
    rows = []
    for i, sample in enumerate(samples, 1):
        if isinstance(sample, Mapping):
            row = dict(sample)
        elif hasattr(sample, "model_dump"):
            row = sample.model_dump(exclude_none=True)
        else:
            raise InputError(f"sample {i} is a {type(sample).__name__}, not a ragas SingleTurnSample or a dict")
        rows.append((f"sample {i}", row))
    return rows, None


def _str_list(row: dict[str, Any], key: str, where: str) -> list[str] | None:
    value = row.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        raise InputError(f"{where}: '{key}' must be a list of strings (ids may be integers)")
    return [str(v) for v in value]


def _query(row: dict[str, Any], where: str) -> str:
    query = row.get("user_input")
    if isinstance(query, list):
        raise InputError(f"{where}: a multi-turn sample; relgrade reads single-turn samples (user_input a string)")
    if not isinstance(query, str) or not query.strip():
        raise InputError(f"{where}: missing 'user_input' (the query, a non-empty string)")
    return query


def _ids(row: dict[str, Any], kind: str, where: str) -> tuple[list[str], list[str] | None] | None:
    """``(ids, texts)`` of the ``kind`` (retrieved/reference) contexts, or None when neither is given."""
    texts = _str_list(row, f"{kind}_contexts", where)
    ids = _str_list(row, f"{kind}_context_ids", where)
    if ids is None and texts is None:
        return None
    if ids is not None and texts is not None and len(ids) != len(texts):
        raise InputError(f"{where}: {len(ids)} {kind}_context_ids but {len(texts)} {kind}_contexts; "
                         "give one id per context or drop the ids")
    if ids is None:
        ids = [chunk_id_for(t) for t in texts]  # type: ignore[union-attr]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise InputError(f"{where}: {kind} context {dup!r} appears twice; list each context once")
    return ids, texts


def _check_unique(seen: dict[str, str], qid: str, where: str) -> None:
    if qid in seen:
        raise InputError(f"{where}: repeats the user_input of {seen[qid]}; ragas samples carry no query id, so "
                         "relgrade derives it from the text: keep one sample per query")
    seen[qid] = where


def _samples(rows, kind: str, need: str):
    """``(query_id, query, (ids, texts))`` per row, with the ``kind`` contexts (``reference``/``retrieved``)."""
    seen: dict[str, str] = {}
    for where, row in rows:
        query = _query(row, where)
        found = _ids(row, kind, where)
        if found is None:
            raise InputError(f"{where}: no '{kind}_context_ids' or '{kind}_contexts'; {need}")
        qid = query_id_for(query)
        _check_unique(seen, qid, where)
        yield qid, query, found


def golden_from_ragas(dataset: Any) -> GoldenSet:
    """A :class:`~relgrade.io.GoldenSet` from the references of a ragas dataset (grade 1 each)."""
    rows, source = _rows(dataset)
    cases = [GoldenCase(query=query, relevant_doc_ids=tuple(found[0]), query_id=qid)
             for qid, query, found in _samples(rows, "reference", "a golden set needs the contexts that should be "
                                               "found (an empty list marks a no-answer query)")]
    return GoldenSet(tuple(cases), source=source)


def run_from_ragas(dataset: Any, *, name: str = "ragas") -> Run:
    """A :class:`~relgrade.io.Run` from the retrieved contexts of a ragas dataset (texts kept)."""
    rows, source = _rows(dataset)
    qs, ds, ss = [], [], []
    queries: dict[str, str] = {}
    texts: dict[str, str] = {}
    for qid, query, found in _samples(rows, "retrieved", "a run needs what the retriever returned"):
        queries[qid] = query
        ids, chunk_texts = found
        n = len(ids)
        for i, doc in enumerate(ids):
            qs.append(qid)
            ds.append(doc)
            ss.append(float(n - i))
            if chunk_texts is not None:
                texts.setdefault(doc, chunk_texts[i])
    return Run(qs, ds, ss, queries=queries, texts=texts, name=name, source=source)


def ragas_rows(golden: GoldenSet | None = None, run: Run | None = None, *, k: int = 10,
               texts: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The ragas sample dicts (as ``SingleTurnSample.to_dict()`` gives them) for a golden set and/or a run.

    One sample per query: golden queries in golden order, then queries only in the run. A run gives
    ``retrieved_context_ids`` (its top ``k``) and ``retrieved_contexts`` when every one of those
    documents has a text (from the run or ``texts``); a golden case gives ``reference_context_ids``
    (documents with grade > 0) and ``reference_contexts`` when all their texts are known.
    """
    if golden is None and run is None:
        raise InputError("to_ragas needs a golden set, a run, or both")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    known = {**(run.texts if run is not None else {}), **(texts or {})}
    ranked = run.ranked() if run is not None else {}
    order: dict[str, str | None] = {}
    cases = {}
    for case in golden or ():
        order[case.query_id] = case.query
        cases[case.query_id] = case
    for qid in ranked:
        order.setdefault(qid, None)
    rows = []
    for qid, query in order.items():
        query = query or (run.queries.get(qid) if run is not None else None)
        if not query:
            raise InputError(f"query {qid!r} has no text; ragas needs user_input: use a JSONL run with 'query' "
                             "or a golden set")
        row: dict[str, Any] = {"user_input": query}
        retrieved = ranked.get(qid, [])[:k] if run is not None else None
        if retrieved is not None and retrieved and all(d in known for d in retrieved):
            row["retrieved_contexts"] = [known[d] for d in retrieved]
        case = cases.get(qid)
        references = [d for d, g in case.grades().items() if g > 0] if case is not None else None
        if references and all(d in known for d in references):
            row["reference_contexts"] = [known[d] for d in references]
        if retrieved is not None:
            row["retrieved_context_ids"] = retrieved
        if references is not None:
            row["reference_context_ids"] = references
        rows.append(row)
    return rows


def to_ragas(golden: GoldenSet | None = None, run: Run | None = None, *, k: int = 10,
             texts: Mapping[str, str] | None = None):
    """A ragas ``EvaluationDataset`` of :func:`ragas_rows` (needs the ``ragas`` extra)."""
    rows = ragas_rows(golden, run, k=k, texts=texts)
    require_ragas()
    from ragas import EvaluationDataset

    return EvaluationDataset.from_list(rows)


def write_ragas_jsonl(path: str | Path, golden: GoldenSet | None = None, run: Run | None = None, *, k: int = 10,
                      texts: Mapping[str, str] | None = None) -> Path:
    """Write :func:`ragas_rows` as the JSONL ``EvaluationDataset.to_jsonl`` writes (no ragas needed)."""
    p = Path(path)
    rows = ragas_rows(golden, run, k=k, texts=texts)
    try:
        with open(p, "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps({f: row[f] for f in _FIELDS if f in row}, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror}); check the folder exists", path=p) from None
    return p
