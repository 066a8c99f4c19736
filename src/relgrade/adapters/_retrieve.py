"""Run a retriever over a golden set and keep what it returned as a :class:`~relgrade.io.Run`.

:func:`retrieve` (synchronous) and :func:`aretrieve` (a coroutine) ask the retriever once per query for its
``top_k`` documents. ``concurrency`` bounds the queries in flight: through the library's async API
(``ainvoke``, ``aretrieve``, ``asearch``, an ``async def`` callable) when it has one, else through worker
threads; 1 (the default) asks one query after another. The run keeps the list order as rank order, the
scores as given and the texts (for the judge); which id it is scored by, and how repeated ids are treated, is
:mod:`relgrade.adapters._ids` (said in ``run.retrieval``, which the report records).

A retriever is held to a deadline: ``timeout`` seconds per query (default :data:`DEFAULT_TIMEOUT`). A query that
takes longer is one :class:`~relgrade.InputError` naming it, whether the retriever waits politely or blocks its
thread or its event loop: :func:`retrieve` asks from daemon threads it watches (a hung call is left behind, never
waited for at exit), :func:`aretrieve` bounds each await. ``timeout=None`` waits as long as it takes, asking from the
caller's own thread (for a retriever bound to it, e.g. a ``sqlite3`` connection). Whatever a retriever returns is
checked (a list of hits of its library's kind, number scores); a problem is one error naming the query and what
came back, and an exception the retriever raises itself gets a note naming the query.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from relgrade._defaults import RETRIEVER_TIMEOUT
from relgrade._errors import InputError
from relgrade.adapters._adapt import Adapter, BadResult, Hit, MissingId, adapt
from relgrade.adapters._ids import Duplicate, assign, choose
from relgrade.io import Run, run_from_hits

DEFAULT_TIMEOUT = RETRIEVER_TIMEOUT
"""Seconds one query may take before the retriever is taken to hang (:data:`relgrade._defaults.RETRIEVER_TIMEOUT`)."""


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


def _check(top_k: Any, concurrency: Any, timeout: Any) -> None:
    for name, value in (("top_k", top_k), ("concurrency", concurrency)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"{name} must be a whole number >= 1, got {value!r}")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not 0 < timeout < math.inf):
        raise InputError(f"timeout must be a number of seconds above 0 (e.g. {DEFAULT_TIMEOUT:g}), or None to wait "
                         f"as long as a query takes; got {timeout!r}")


def _labeled_docs(golden: Any) -> set[str]:
    docs: set[str] = set()
    for case in golden if not isinstance(golden, Mapping) else ():
        docs.update(getattr(case, "relevant_doc_ids", ()), getattr(case, "relevance_grades", {}) or {},
                    getattr(case, "forbidden_doc_ids", ()))
    return docs


def _build(adapter: Adapter, queries: list[tuple[str, str]], results: list[list[Hit]], golden: Any) -> Run:
    labeled = _labeled_docs(golden)
    choice = choose(adapter.kind, adapter.id_key, results, labeled)
    chosen, slots = [], 0
    for (qid, _), hits in zip(queries, results):
        try:
            kept, n = assign(choice, hits, adapter.kind)
        except (MissingId, Duplicate) as exc:
            raise InputError(f"query {qid!r}: {exc}") from None
        chosen.append(kept)
        slots += n
    run = run_from_hits(((qid, query, hits) for (qid, query), hits in zip(queries, chosen)), name=adapter.name)
    got = {h.id for hits in chosen for h in hits} - {None}
    if labeled and got and not (got & labeled):
        tried = sorted({where for hits in results for h in hits for where, _ in h.parents})
        also = f" (nor their {' or '.join(tried)})" if tried else ""
        raise InputError(
            f"none of the {len(got)} document ids the {adapter.kind} returned (e.g. {sorted(got)[0]!r}){also} is a "
            f"document of the golden set (e.g. {sorted(labeled)[0]!r}); the retriever's ids are not your doc ids: "
            "pass id_key= the metadata key that holds them (e.g. id_key='doc_id')")
    run.retrieval = {"retriever": adapter.kind, "ids": choice.source, "fallback": choice.fallback,
                     "chunk_slots": slots, "line": choice.line(slots)}
    return run


def _refused(exc: Exception, qid: str) -> InputError:
    return InputError(f"query {qid!r}: {exc}")


def _search(adapter: Adapter, qid: str, query: str, top_k: int) -> list[Hit]:
    try:
        return adapter.search(query, top_k)
    except (MissingId, BadResult) as exc:
        raise _refused(exc, qid) from None
    except Exception as exc:
        exc.add_note(f"relgrade: raised by the {adapter.kind} for query {qid!r}")
        raise


class _Watch:
    """When each query in flight started (monotonic seconds), for the deadline."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started: dict[str, float] = {}

    def begin(self, qid: str) -> None:
        with self.lock:
            self.started[qid] = time.monotonic()

    def end(self, qid: str) -> None:
        with self.lock:
            self.started.pop(qid, None)

    def overdue(self, timeout: float) -> str | None:
        now = time.monotonic()
        with self.lock:
            return next((q for q, t in self.started.items() if now - t > timeout), None)


def _late(adapter: Adapter, qid: str, timeout: float) -> InputError:
    return InputError(f"query {qid!r}: the {adapter.kind} gave no answer within {timeout:g} s (timeout={timeout:g}); "
                      "it may hang: check it, or pass a larger timeout= (None waits as long as it takes)")


def _daemon(fn: Callable[[], Any]) -> Future:
    """``fn()`` in a daemon thread (one left hanging never holds the process at exit), as a future."""
    future: Future = Future()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn())
        except BaseException as exc:  # delivered to the waiting caller
            future.set_exception(exc)

    threading.Thread(target=work, daemon=True, name="relgrade-retrieve").start()
    return future


def _watched(adapter: Adapter, work: Callable[[_Watch], Any], timeout: float) -> Any:
    """``work(watch)`` in a daemon thread; the caller waits, and raises for the first query past the deadline."""
    watch = _Watch()
    future = _daemon(lambda: work(watch))
    poll = min(0.05, timeout / 4)
    while True:
        try:
            return future.result(timeout=poll)
        except FutureTimeout:
            late = watch.overdue(timeout)
            if late is not None:
                raise _late(adapter, late, timeout) from None


def _in_turn(adapter: Adapter, queries: list[tuple[str, str]], top_k: int, watch: _Watch) -> list[list[Hit]]:
    out = []
    for qid, text in queries:
        watch.begin(qid)
        out.append(_search(adapter, qid, text, top_k))
        watch.end(qid)
    return out


def _threads(adapter: Adapter, queries: list[tuple[str, str]], top_k: int, concurrency: int,
             watch: _Watch) -> list[list[Hit]]:
    """At most ``concurrency`` queries at once, each in a daemon worker thread; the first error stops the rest."""
    results: list[Any] = [None] * len(queries)
    errors: list[BaseException] = []
    todo = iter(enumerate(queries))
    lock = threading.Lock()

    def worker() -> None:
        while not errors:
            with lock:
                item = next(todo, None)
            if item is None:
                return
            i, (qid, text) = item
            watch.begin(qid)
            try:
                results[i] = _search(adapter, qid, text, top_k)
            except BaseException as exc:  # re-raised by the caller
                errors.append(exc)
                return
            watch.end(qid)

    threads = [threading.Thread(target=worker, daemon=True, name="relgrade-retrieve") for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


async def _gather(adapter: Adapter, queries: list[tuple[str, str]], top_k: int, concurrency: int,
                  timeout: float | None, watch: _Watch | None = None) -> list[list[Hit]]:
    gate = asyncio.Semaphore(concurrency)

    async def one(qid: str, query: str) -> list[Hit]:
        async with gate:
            if watch is not None:
                watch.begin(qid)
            try:
                if adapter.has_async:
                    pending = adapter.asearch(query, top_k)
                else:  # a daemon thread, not the loop's executor: a hung call never holds asyncio.run's shutdown
                    pending = asyncio.wrap_future(_daemon(lambda: adapter.search(query, top_k)))
                hits = await (pending if timeout is None else asyncio.wait_for(pending, timeout))
            except (MissingId, BadResult) as exc:
                raise _refused(exc, qid) from None
            except (asyncio.TimeoutError, TimeoutError):
                raise _late(adapter, qid, timeout) from None
            except Exception as exc:
                exc.add_note(f"relgrade: raised by the {adapter.kind} for query {qid!r}")
                raise
            if watch is not None:
                watch.end(qid)
            return hits

    return list(await asyncio.gather(*(one(q, text) for q, text in queries)))


def retrieve(retriever: Any, golden: Any, *, top_k: int = 10, id_key: Any = None, concurrency: int = 1,
             timeout: float | None = DEFAULT_TIMEOUT) -> Run:
    """Ask ``retriever`` (see :func:`relgrade.adapters.adapt`) for the top ``top_k`` of every query of ``golden``
    (a :class:`~relgrade.GoldenSet` or ``{query_id: query}``); return the run. ``timeout``: seconds a query may take
    (None: no limit; module docstring). InputError for a document without an id, a result that is not a list of
    hits, a document listed twice, a query past the deadline, and when no returned id (own or parent) is a
    document of the golden set (an id that is not yours)."""
    _check(top_k, concurrency, timeout)
    adapter = adapt(retriever, id_key=id_key)
    queries = _queries(golden)
    use_async = adapter.only_async or (concurrency > 1 and adapter.has_async)
    if timeout is None:
        if use_async:
            results = _run_coroutine(lambda: _gather(adapter, queries, top_k, concurrency, None))
        elif concurrency == 1:
            results = [_search(adapter, q, text, top_k) for q, text in queries]
        else:
            results = _threads(adapter, queries, top_k, concurrency, _Watch())
    elif use_async:
        results = _watched(adapter, lambda w: asyncio.run(_gather(adapter, queries, top_k, concurrency, timeout, w)),
                           timeout)
    elif concurrency == 1:
        results = _watched(adapter, lambda w: _in_turn(adapter, queries, top_k, w), timeout)
    else:
        results = _watched(adapter, lambda w: _threads(adapter, queries, top_k, concurrency, w), timeout)
    return _build(adapter, queries, results, golden)


async def aretrieve(retriever: Any, golden: Any, *, top_k: int = 10, id_key: Any = None, concurrency: int = 8,
                    timeout: float | None = DEFAULT_TIMEOUT) -> Run:
    """:func:`retrieve` as a coroutine: at most ``concurrency`` queries in flight (the library's async API when it
    has one, else its sync API in daemon threads), each awaited at most ``timeout`` seconds (a coroutine that
    blocks the caller's event loop itself is beyond any deadline: use :func:`retrieve` for it)."""
    _check(top_k, concurrency, timeout)
    adapter = adapt(retriever, id_key=id_key)
    queries = _queries(golden)
    return _build(adapter, queries, await _gather(adapter, queries, top_k, concurrency, timeout), golden)


def _run_coroutine(make):
    """``asyncio.run(make())``; on a loop of its own in a worker thread when one is running (a notebook cell)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    return _daemon(lambda: asyncio.run(make())).result()


__all__ = ["DEFAULT_TIMEOUT", "aretrieve", "retrieve"]
