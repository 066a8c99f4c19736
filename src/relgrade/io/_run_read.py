"""Reading and writing runs.

Formats read: TREC runs (``qid Q0 docid rank score tag``; the rank column must be an integer and is ignored, the
order is trec_eval's, see :mod:`relgrade.io._order`) and a RAG-native JSONL, one line per query::

    {"query_id", "query", "results": [{"doc_id", "text"?, "score"?}, ...]}

where list order is rank order (``results`` may also list bare doc ids). Texts met in a JSONL run are kept in
:attr:`Run.texts`. Ids follow :mod:`relgrade.io._ids`. A plain TREC run is read as columns
(:mod:`relgrade.io._trec`), anything else line by line with the same checks and one-line errors.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade.io._columns import Ids, off_rule, ramp, reader_pool, strings, to_numpy
from relgrade.io._golden import query_id_for
from relgrade.io._ids import as_id
from relgrade.io._qrels import check_trec_ids
from relgrade.io._run import Run
from relgrade.io._text import iter_jsonl, pick, read_bytes, read_text, sniff_bytes
from relgrade.io._trec import RUN_FIELDS, fast_columns, fast_ids, run_lines, repeats_pair

DOC_FIELDS = ("doc_id", "id", "docid", "pid")


def read_run(path: str | Path, *, name: str | None = None) -> Run:
    """Read a TREC run or a RAG-native JSONL run."""
    data = read_bytes(path, what="run file")
    label = name or Path(path).stem
    kind = sniff_bytes(path, data)
    fast = _fast_jsonl_run if kind == "jsonl" else _fast_trec_run if kind not in {"json", "jsonl"} else None
    run = fast(path, data, label) if fast is not None else None
    if run is not None:
        return run
    text = read_text(path, what="run file", data=data)
    return _read_jsonl_run(path, text, label) if kind in {"json", "jsonl"} else _read_trec_run(path, text, label)


def _fast_trec_run(path, data: bytes, name: str) -> Run | None:
    """A plain TREC run read as columns; None sends it to the line-exact reader (module docstring)."""
    import numpy as np
    import pyarrow as pa

    table = fast_columns(data, RUN_FIELDS, {"rank": pa.int64(), "score": pa.float64()})
    if table is None:
        return None
    score = to_numpy(table.column("score"))
    if not np.isfinite(score).all():
        return None
    query, doc = fast_ids(table, "query_id"), fast_ids(table, "doc_id")
    del table
    if query is None or doc is None or repeats_pair(query.codes, doc.codes, query.n_names, doc.n_names):
        return None
    return Run(query, doc, score, name=name, source=str(path))


def _read_trec_run(path, text: str, name: str) -> Run:
    qs: list[str] = []
    ds: list[str] = []
    ss: list[float] = []
    for _, q, d, score in run_lines(path, text):
        qs.append(q)
        ds.append(d)
        ss.append(score)
    return Run(qs, ds, ss, name=name, source=str(path))


def _fast_jsonl_run(path, data: bytes, name: str) -> Run | None:
    """A JSONL run of plain lines (string ids, object results with ``doc_id``, numeric scores) read as columns by
    pyarrow's JSON reader; None sends it to the line-exact reader (ids to convert or strip, aliases, bare doc ids,
    a bad line, a repeated id, a lone surrogate escape, which pyarrow refuses: whatever the line-exact reader must
    see)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    hit = pa.struct([("doc_id", pa.string()), ("score", pa.float64()), ("text", pa.string())])
    schema = pa.schema([("query_id", pa.string()), ("query", pa.string()), ("results", pa.list_(hit))])
    try:
        table = pj.read_json(pa.BufferReader(data), read_options=pj.ReadOptions(block_size=1 << 26),
                             parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"),
                             memory_pool=reader_pool())
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    results, qid, query = (table.column(c).combine_chunks() for c in ("results", "query_id", "query"))
    if results.null_count or not len(qid):
        return None
    if qid.null_count or pc.any(pc.match_substring_regex(qid, "^$")).as_py():  # no query_id: derive it
        query_ids, query_texts = qid.to_pylist(), query.to_pylist()
        if any(not q and not (isinstance(t, str) and t.strip()) for q, t in zip(query_ids, query_texts)):
            return None
        qid = strings([q or query_id_for(t) for q, t in zip(query_ids, query_texts)])
    hits = results.flatten()
    if hits.null_count:
        return None
    doc, given, texts = hits.flatten()
    scores = to_numpy(given).copy()
    scores[to_numpy(pc.indices_nonzero(pc.is_null(given)))] = np.nan
    if doc.null_count or np.isinf(scores).any() or np.isnan(scores).sum() != given.null_count:
        return None
    queries, docs = Ids.encode(qid), Ids.encode(doc)
    if off_rule(queries.names) is not None or off_rule(docs.names) is not None or queries.n_names != len(qid):
        return None
    sizes = to_numpy(results.value_lengths()).astype(np.int64)
    rows = Ids(np.repeat(queries.codes, sizes), queries.names)
    if repeats_pair(rows.codes, docs.codes, rows.n_names, docs.n_names):
        return None
    with_text = pc.is_valid(texts)
    text_of = dict(zip(doc.filter(with_text).to_pylist(), texts.filter(with_text).to_pylist()))
    with_query = pc.is_valid(query)
    query_of = dict(zip(qid.filter(with_query).to_pylist(), query.filter(with_query).to_pylist()))
    return Run(rows, docs, (np.repeat(sizes, sizes) - ramp(sizes)).astype(np.float64), given_score=scores,
               queries=query_of, texts=text_of, name=name, source=str(path))


def _read_jsonl_run(path, text: str, name: str) -> Run:
    qs: list[str] = []
    sizes: list[int] = []
    ds: list[str] = []
    ss: list[float] = []
    given: list[float] = []
    queries: dict[str, str] = {}
    texts: dict[str, str] = {}
    seen: dict[str, int] = {}
    nan = float("nan")
    for number, obj in iter_jsonl(path, text, what="run file"):
        results = obj.get("results")
        if not isinstance(results, list):
            raise InputError("missing 'results' (a list of {doc_id, text?, score?}) in a JSONL run", path=path, line=number)
        query = obj.get("query")
        qid = obj.get("query_id")
        if qid is None or qid == "":
            if not isinstance(query, str) or not query.strip():
                raise InputError("a run line needs 'query_id' or 'query'", path=path, line=number)
            qid = query_id_for(query)
        qid = as_id(qid, "query_id", path=path, line=number)
        if qid in seen:
            raise InputError(f"duplicate query_id {qid!r} (first on line {seen[qid]}); one line per query", path=path, line=number)
        seen[qid] = number
        if isinstance(query, str):
            queries[qid] = query
        docs_here: set[str] = set()
        n = len(results)
        for position, hit in enumerate(results):
            if type(hit) is dict:
                doc = hit.get("doc_id")
                if doc is None:
                    doc = pick(hit, DOC_FIELDS)
            elif isinstance(hit, str):
                doc, hit = hit, {}
            else:
                raise InputError(f"result {position + 1} must be an object with 'doc_id'", path=path, line=number)
            doc = as_id(doc, f"doc_id of result {position + 1}", path=path, line=number)
            if doc in docs_here:
                raise InputError(f"document {doc!r} appears twice in 'results'; list each document once", path=path, line=number)
            docs_here.add(doc)
            score = hit.get("score")
            if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
                raise InputError(f"score {score!r} of result {position + 1} is not a number", path=path, line=number)
            text_value = hit.get("text")
            if isinstance(text_value, str):
                texts[doc] = text_value
            ds.append(doc)
            ss.append(n - position)
            given.append(nan if score is None else _finite(score, position, path, number))
        qs.append(qid)
        sizes.append(n)
    import numpy as np

    query_ids = Ids.from_values(qs, "query_id", path)
    query_index = Ids(np.repeat(query_ids.codes, sizes), query_ids.names)
    return Run(query_index, Ids.from_values(ds, "doc_id", path), np.array(ss, dtype=np.float64),
               given_score=np.array(given, dtype=np.float64), queries=queries, texts=texts, name=name, source=str(path))


def _finite(score: float, position: int, path, line: int) -> float:
    try:
        value = float(score)
    except OverflowError:
        value = float("inf")
    if not math.isfinite(value):
        raise InputError(f"score of result {position + 1} is not a finite number", path=path, line=line)
    return value


def write_run(run: Run, path: str | Path, *, tag: str | None = None) -> Path:
    """Write a TREC run (or JSONL by extension), in rank order with ranks from 1."""
    p = Path(path)
    ranked = run.ranked()
    if p.suffix.lower() not in {".jsonl", ".ndjson"}:
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
