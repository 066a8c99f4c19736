"""Run a retriever over a golden set and keep what it returned as a :class:`~relgrade.io.Run`.

:func:`retrieve` (synchronous) and :func:`aretrieve` (a coroutine) ask the retriever once per query for its
``top_k`` documents. ``concurrency`` bounds the queries in flight: through the library's async API
(``ainvoke``, ``aretrieve``, ``asearch``, an ``async def`` callable) when it has one, else through worker
threads; 1 (the default) asks one query after another. The run keeps the list order as rank order, the
scores as given and the texts (for the judge).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from relgrade._errors import InputError
from relgrade.adapters._adapt import Adapter, Hit, MissingId, adapt
from relgrade.io import Run, run_from_hits


def _queries(golden: Any) -> list[tuple[str, str]]:
    if isinstance(golden, Mapping):
        return [(str(q), str(text)) for q, text in golden.items()]
    if isinstance(golden, Iterable):
        out = []
        for case in golden:
            if not (hasattr(case, "query_id") and hasattr(case, "query")):
                raise InputError("queries must be a GoldenSet, GoldenCase objects or {query_id: query}, "
                                 f"got an item of type {type(case).__name__}")
            out.append((case.query_id, case.query))
        return out
    raise InputError(f"queries must be a GoldenSet or {{query_id: query}}, got {type(golden).__name__}")


def _check(top_k: Any, concurrency: Any) -> None:
    for name, value in (("top_k", top_k), ("concurrency", concurrency)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"{name} must be a whole number >= 1, got {value!r}")


def _labeled_docs(golden: Any) -> set[str]:
    docs: set[str] = set()
    for case in golden if not isinstance(golden, Mapping) else ():
        docs.update(getattr(case, "relevant_doc_ids", ()), getattr(case, "relevance_grades", {}) or {},
                    getattr(case, "forbidden_doc_ids", ()))
    return docs


def _build(adapter: Adapter, queries: list[tuple[str, str]], results: list[list[Hit]], golden: Any) -> Run:
    run = run_from_hits(((qid, query, hits) for (qid, query), hits in zip(queries, results)), name=adapter.name)
    labeled = _labeled_docs(golden)
    got = set(run.doc_id.tolist())
    if labeled and got and not (got & labeled):
        raise InputError(
            f"none of the {len(got)} document ids the {adapter.kind} returned (e.g. {sorted(got)[0]!r}) is a document "
            f"of the golden set (e.g. {sorted(labeled)[0]!r}); the retriever's ids are not your doc ids: pass "
            "id_key= the metadata key that holds them (e.g. id_key='doc_id')")
    return run


def _missing(exc: MissingId, qid: str) -> InputError:
    return InputError(f"query {qid!r}: {exc}")


def _search(adapter: Adapter, qid: str, query: str, top_k: int) -> list[Hit]:
    try:
        return adapter.search(query, top_k)
    except MissingId as exc:
        raise _missing(exc, qid) from None


async def _gather(adapter: Adapter, queries: list[tuple[str, str]], top_k: int, concurrency: int) -> list[list[Hit]]:
    gate = asyncio.Semaphore(concurrency)

    async def one(qid: str, query: str) -> list[Hit]:
        async with gate:
            try:
                if adapter.has_async:
                    return await adapter.asearch(query, top_k)
                return await asyncio.to_thread(adapter.search, query, top_k)
            except MissingId as exc:
                raise _missing(exc, qid) from None

    return list(await asyncio.gather(*(one(q, text) for q, text in queries)))


def retrieve(retriever: Any, golden: Any, *, top_k: int = 10, id_key: Any = None, concurrency: int = 1) -> Run:
    """Ask ``retriever`` (see :func:`relgrade.adapters.adapt`) for the top ``top_k`` of every query of ``golden``
    (a :class:`~relgrade.GoldenSet` or ``{query_id: query}``); return the run. InputError for a document
    without an id, and when no returned id is a document of the golden set (an id that is not yours)."""
    _check(top_k, concurrency)
    adapter = adapt(retriever, id_key=id_key)
    queries = _queries(golden)
    if concurrency == 1:
        results = [_search(adapter, q, text, top_k) for q, text in queries]
    elif adapter.has_async:
        results = _run_coroutine(lambda: _gather(adapter, queries, top_k, concurrency))
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="relgrade-retrieve") as pool:
            results = list(pool.map(lambda item: _search(adapter, item[0], item[1], top_k), queries))
    return _build(adapter, queries, results, golden)


async def aretrieve(retriever: Any, golden: Any, *, top_k: int = 10, id_key: Any = None, concurrency: int = 8) -> Run:
    """:func:`retrieve` as a coroutine: at most ``concurrency`` queries in flight (the library's async API when it
    has one, else its sync API in worker threads)."""
    _check(top_k, concurrency)
    adapter = adapt(retriever, id_key=id_key)
    queries = _queries(golden)
    return _build(adapter, queries, await _gather(adapter, queries, top_k, concurrency), golden)


def _run_coroutine(make):
    """``asyncio.run(make())``; on a loop of its own in a worker thread when one is running (a notebook cell)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="relgrade-retrieve") as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


__all__ = ["aretrieve", "retrieve"]
