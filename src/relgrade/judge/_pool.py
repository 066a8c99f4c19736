"""Pooling: the (query, chunk) pairs to judge are the union of the top ``depth`` of every run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from relgrade._errors import InputError


@dataclass(frozen=True)
class Pair:
    """One (query, chunk) pair to judge, with the ids the qrels are written under."""

    query_id: str
    doc_id: str
    query: str
    text: str


def pool(runs: Sequence[Any], depth: int = 10, *, corpus: Mapping[str, str] | None = None,
         queries: Mapping[str, str] | None = None) -> list[Pair]:
    """Union of the top ``depth`` documents of each run, per query, as :class:`Pair` s.

    Order: queries in first-seen order across the runs, then documents in first-seen rank order.
    Texts come from the runs (JSONL runs' ``text`` and ``query`` fields) and then from ``corpus``
    (``{doc_id: text}``) and ``queries`` (``{query_id: query}``), which win when given. Pairs
    with no query text or no chunk text raise one :class:`InputError` naming how many and one
    example, before anything is paid for.
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise InputError(f"--depth must be a positive integer, got {depth!r}")
    if not runs:
        raise InputError("no run given; pass at least one --run")
    texts: dict[str, str] = {}
    query_texts: dict[str, str] = {}
    for run in runs:
        for d, t in getattr(run, "texts", {}).items():
            texts.setdefault(d, t)
        for q, t in getattr(run, "queries", {}).items():
            query_texts.setdefault(q, t)
    texts.update(corpus or {})
    query_texts.update(queries or {})
    order: dict[str, dict[str, None]] = {}
    for run in runs:
        for qid, docs in run.ranked().items():
            bucket = order.setdefault(qid, {})
            for d in docs[:depth]:
                bucket.setdefault(d, None)
    pairs: list[Pair] = []
    no_query: list[str] = []
    no_text: list[tuple[str, str]] = []
    for qid, docs in order.items():
        query = query_texts.get(qid)
        if not isinstance(query, str) or not query.strip():
            no_query.append(qid)
            continue
        for d in docs:
            text = texts.get(d)
            if not isinstance(text, str) or not text.strip():
                no_text.append((qid, d))
                continue
            pairs.append(Pair(qid, d, query, text))
    if no_query:
        raise InputError(
            f"{len(no_query)} queries have no text (e.g. query {no_query[0]!r}); give a JSONL run with "
            "'query' fields or --queries FILE (qid<TAB>query)"
        )
    if no_text:
        q, d = no_text[0]
        raise InputError(
            f"{len(no_text)} pooled pairs have no chunk text (e.g. doc {d!r} of query {q!r}); give a JSONL run "
            "with 'text' fields or --corpus FILE (doc_id<TAB>text or JSONL)"
        )
    return pairs
