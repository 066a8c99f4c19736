"""The rows a report lists beside its means, made from the joined arrays (:class:`~relgrade.metrics._core.Ranked`):
failed queries (what was expected, what came back), leaks of forbidden documents, and no-answer queries.

Ids are looked up in one batch per list, not once per query, so a run where half of 100k queries fail costs
arrays, not 50k separate lookups.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from relgrade.io import Qrels, Run
from relgrade.io._columns import paused_gc, ramp, take
from relgrade.io._order import byte_ranks
from relgrade.metrics._core import Ranked


def _split(items: list[Any], counts: np.ndarray) -> list[list[Any]]:
    ends = np.cumsum(counts).tolist()
    return [items[e - n:e] for n, e in zip(counts.tolist(), ends)]


def failure_rows(ranked: Ranked, texts: Mapping[str, str], included: np.ndarray, k: int,
                 threshold: int) -> list[dict[str, Any]]:
    """The ``included`` topics without a relevant document in the top ``k``: ``{query_id, query, expected, got}``,
    ``expected`` the relevant documents by grade (highest first) then id, ``got`` the top ``k`` retrieved."""
    n = len(ranked.topics)
    hit = np.bincount(ranked.topic[(ranked.grade >= threshold) & (ranked.rank < k)], minlength=n) > 0
    fail = included[~hit[included]]
    if not len(fail):
        return []
    n_got = np.minimum(ranked.counts[fail], k)
    rows = np.repeat(ranked.starts[fail], n_got) + ramp(n_got)
    got = take(ranked.doc_index.names, ranked.doc_index.codes[rows]).to_pylist()
    failing = np.zeros(n, bool)
    failing[fail] = True
    sel = np.flatnonzero(failing[ranked.label_topic] & (ranked.label_grade >= threshold))
    topic, grade, doc = ranked.label_topic[sel], ranked.label_grade[sel], ranked.label_doc.codes[sel]
    distinct, inverse = np.unique(doc, return_inverse=True)
    doc_rank = byte_ranks(ranked.label_doc.names, distinct)[inverse]
    span = int(grade.max() - grade.min()) + 1 if len(grade) else 1
    if n * span * max(len(distinct), 1) < 2**62:
        order = np.argsort((topic.astype(np.int64) * span + (grade.max() - grade)) * max(len(distinct), 1) + doc_rank)
    else:
        order = np.lexsort((doc_rank, -grade, topic))
    expected = take(ranked.label_doc.names, doc[order]).to_pylist()
    n_expected = np.bincount(topic, minlength=n)[fail]
    qids = [ranked.topics[t] for t in fail.tolist()]
    with paused_gc():  # a dict and two lists per failed query: no cycle among them
        return [{"query_id": q, "query": texts.get(q), "expected": e, "got": g}
                for q, e, g in zip(qids, _split(expected, n_expected), _split(got, n_got))]


def leak_rows(ranked: Ranked, qrels: Qrels, texts: Mapping[str, str], k: int) -> list[dict[str, Any]]:
    """Forbidden documents retrieved in the top ``k``: ``{query_id, query, doc_id, rank}``."""
    out = []
    index = {q: i for i, q in enumerate(ranked.topics)} if qrels.forbidden else {}
    for qid, forbidden in qrels.forbidden.items():
        t = index.get(qid)
        if t is None:
            continue
        for rank, doc in enumerate(ranked.top(t, k).tolist(), 1):
            if doc in forbidden:
                out.append({"query_id": qid, "query": texts.get(qid), "doc_id": doc, "rank": rank})
    return out


def no_answer_rows(ranked: Ranked, run: Run, texts: Mapping[str, str], topics: np.ndarray) -> list[dict[str, Any]]:
    """``{query_id, query, top_doc, top_score, n_retrieved}`` of each of ``topics`` (the score the run gave)."""
    out = []
    for t in topics.tolist():
        qid = ranked.topics[t]
        row: dict[str, Any] = {"query_id": qid, "query": texts.get(qid), "top_doc": None, "top_score": None,
                               "n_retrieved": int(ranked.counts[t])}
        if ranked.counts[t]:
            s = int(ranked.starts[t])
            row["top_doc"] = ranked.top(t, 1)[0]
            given = run.given_score[s if ranked.run_row is None else int(ranked.run_row[s])]
            if np.isfinite(given):
                row["top_score"] = float(given)
        out.append(row)
    return out
