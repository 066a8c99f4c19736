"""Pooling: the (query, chunk) pairs to judge are the union of the top ``depth`` of every run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from relgrade._errors import InputError
from relgrade._words import plural


@dataclass(frozen=True)
class Pair:
    """One (query, chunk) pair to judge, with the ids the qrels are written under.

    ``runs``: the indices (in the order given to :func:`pool`) of the runs that showed this text
    for this (query id, doc id); empty when the pair was built by hand.
    """

    query_id: str
    doc_id: str
    query: str
    text: str
    runs: tuple[int, ...] = ()


def pool(runs: Sequence[Any], depth: int = 10, *, corpus: Mapping[str, str] | None = None,
         queries: Mapping[str, str] | None = None) -> list[Pair]:
    """Union of the top ``depth`` documents of each run, per query, as :class:`Pair` s.

    Order: queries in first-seen order across the runs, then documents in first-seen rank order.
    Query texts come from the runs (JSONL ``query`` fields, first run first), ``queries``
    (``{query_id: query}``) winning when given. A chunk is judged on the text *the run showed*:
    ``corpus`` (``{doc_id: text}``) when it has the doc, else the run's own ``text``, else the text
    another run gave that doc id. Two runs that show one doc id with different texts (two
    chunkers, one id scheme) give two pairs with the same ids and their own texts, each judged on
    its text; ``Pair.runs`` says which runs showed which text (see
    :meth:`relgrade.judge.JudgeResult.qrels` for how they come out in qrels). Pairs with no query
    text or no chunk text raise one :class:`InputError` naming how many and one example, before
    anything is paid for.
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise InputError(f"--depth must be a positive integer, got {depth!r}")
    if not runs:
        raise InputError("no run given; pass at least one --run")
    any_text: dict[str, str] = {}
    query_texts: dict[str, str] = {}
    for run in runs:
        for d, t in getattr(run, "texts", {}).items():
            any_text.setdefault(d, t)
        for q, t in getattr(run, "queries", {}).items():
            query_texts.setdefault(q, t)
    corpus = corpus or {}
    query_texts.update(queries or {})
    # qid -> doc -> text -> indices of the runs that showed that text (first-seen order at each level)
    order: dict[str, dict[str, dict[Any, list[int]]]] = {}
    for index, run in enumerate(runs):
        own = getattr(run, "texts", {})
        for qid, docs in run.ranked(depth).items():
            bucket = order.setdefault(qid, {})
            for d in docs[:depth]:
                text = corpus[d] if d in corpus else own.get(d, any_text.get(d))
                shown = bucket.setdefault(d, {})
                seen = shown.setdefault(text if isinstance(text, str) else None, [])
                if index not in seen:
                    seen.append(index)
    pairs: list[Pair] = []
    no_query: list[str] = []
    no_text: list[tuple[str, str]] = []
    for qid, docs in order.items():
        query = query_texts.get(qid)
        if not isinstance(query, str) or not query.strip():
            no_query.append(qid)
            continue
        for d, shown in docs.items():
            for text, seen in shown.items():
                if not isinstance(text, str) or not text.strip():
                    no_text.append((qid, d))
                    continue
                pairs.append(Pair(qid, d, query, text, tuple(seen)))
    if no_query:
        raise InputError(
            f"{plural(len(no_query), 'query has', 'queries have')} no text (e.g. query {no_query[0]!r}); give a JSONL run with "
            "'query' fields or --queries FILE (qid<TAB>query)"
        )
    if no_text:
        q, d = no_text[0]
        raise InputError(
            f"{len(no_text)} pooled pairs have no chunk text (e.g. doc {d!r} of query {q!r}); give a JSONL run "
            "with 'text' fields or --corpus FILE (doc_id<TAB>text or JSONL)"
        )
    return pairs
