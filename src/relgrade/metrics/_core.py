"""The vectorised metrics core, exact to trec_eval.

Semantics (trec_eval 9, as exposed by pytrec_eval, which the test suite uses as the oracle):

* Within a query, documents are ordered by score descending; equal scores are broken by doc id
  in *descending* lexicographic (byte) order. The rank column of a TREC run is ignored.
* A document is relevant when its grade is >= ``rel_threshold``; unjudged documents have grade 0.
* nDCG uses linear gain (the grade itself, negatives count 0) and discount ``log2(rank + 1)``;
  the ideal ranking is built from every judged document of the query (Järvelin & Kekäläinen 2002).
* A query of the qrels that the run lacks scores 0 on every measure (trec_eval ``-c``).

Everything is computed at once over flat arrays (one row per retrieved document), on ids factorised once
(:mod:`relgrade.io._columns`): no Python loop per row. ``python benchmarks/metrics_speed.py`` prints the time
beside ranx and ir_measures, in-process and as whole processes from files (the README's measured section has the
figures of one run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from relgrade.io import Qrels, Run
from relgrade.io._columns import Ids, positions, strings, take
from relgrade.io._order import trec_order
from relgrade.metrics._measures import Metric


@dataclass(frozen=True)
class Ranked:
    """A run joined to qrels, in trec_eval order. Arrays are parallel, one row per retrieved document of a topic;
    each topic's rows are contiguous (``starts``, ``counts``), in rank order."""

    topics: tuple[str, ...]
    topic: np.ndarray  # int index into topics
    doc_index: Ids  # doc ids of the rows (factorised)
    run_score: np.ndarray  # the run's scores, in the run's row order (see run_row and score)
    rank: np.ndarray  # 0-based rank within its query
    grade: np.ndarray  # int grade, 0 when unjudged
    judged: np.ndarray  # bool
    starts: np.ndarray  # first row of each topic (len(topics))
    counts: np.ndarray  # rows per topic
    n_relevant: np.ndarray  # relevant judged docs per topic
    ideal_gains: np.ndarray  # per qrels row: gain sorted desc within topic
    ideal_topic: np.ndarray
    ideal_rank: np.ndarray
    ignored_queries: tuple[str, ...]  # in the run, not among the topics
    label_topic: np.ndarray | None = None  # the labels of the topics: topic index, doc ids and grade of each
    label_doc: Ids | None = None
    label_grade: np.ndarray | None = None
    run_row: np.ndarray | None = None  # the run row of each row (None: the same index)

    @property
    def doc(self) -> np.ndarray:
        """The doc id of each row (object array, built on first use)."""
        return self.doc_index.values()

    @property
    def score(self) -> np.ndarray:
        """The score of each row (built on first use)."""
        return self.run_score if self.run_row is None else self.run_score[self.run_row]

    def top(self, t: int, k: int) -> np.ndarray:
        s = int(self.starts[t])
        codes = self.doc_index.codes[s : s + min(k, int(self.counts[t]))]
        return np.array(take(self.doc_index.names, codes).to_pylist(), dtype=object)


def join(qrels: Qrels, run: Run, *, rel_threshold: int = 1, topics: Sequence[str] | None = None) -> Ranked:
    """Join ``run`` to ``qrels`` over ``topics`` (default: the qrels' topics), on the factorised ids."""
    topics = tuple(qrels.topics if topics is None else topics)
    n_topics = len(topics)
    topic_names = strings(topics)
    r_topic, r_code, run_row, ignored = _rows(run, topic_names)
    starts, counts, rank = _blocks(r_topic, n_topics)

    # the labels of the topics, their docs coded as the run's (-1: never retrieved)
    labels = qrels.columns
    q_topic = positions(labels.query.names, topic_names)[labels.query.codes]
    keep = q_topic >= 0
    q_topic, q_grade, q_doc = q_topic[keep], labels.grade[keep], labels.doc.take(keep)
    q_code = positions(q_doc.names, run.doc_index.names)[q_doc.codes]
    grade, judged = _grades(r_topic, r_code, q_topic, q_grade, q_code, n_topics, max(run.doc_index.n_names, 1))

    n_relevant = np.bincount(q_topic[q_grade >= rel_threshold], minlength=n_topics)
    gains = np.maximum(q_grade, 0)
    top_gain = int(gains.max()) if len(gains) else 0
    if n_topics * (top_gain + 1) < 2**62:
        ideal_order = np.argsort(q_topic.astype(np.int64) * (top_gain + 1) + (top_gain - gains), kind="stable")
    else:
        ideal_order = np.lexsort((-gains, q_topic))
    ideal_topic = q_topic[ideal_order]
    ideal_gains = gains[ideal_order].astype(np.float64)
    q_counts = np.bincount(ideal_topic, minlength=n_topics)
    q_starts = np.concatenate([[0], np.cumsum(q_counts)[:-1]]) if n_topics else np.zeros(0, np.int64)
    ideal_rank = np.arange(len(ideal_topic)) - q_starts[ideal_topic] if len(ideal_topic) else np.zeros(0, np.int64)

    return Ranked(
        topics=topics, topic=r_topic, doc_index=Ids(r_code, run.doc_index.names), run_score=run.score, rank=rank,
        grade=grade, judged=judged, starts=starts, counts=counts, n_relevant=n_relevant, ideal_gains=ideal_gains,
        ideal_topic=ideal_topic, ideal_rank=ideal_rank, ignored_queries=ignored, label_topic=q_topic, label_doc=q_doc,
        label_grade=q_grade, run_row=run_row,
    )


def _rows(run: Run, topic_names) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, tuple[str, ...]]:
    """The run's rows in trec_eval order (cached on the run) that belong to a topic: ``(topic index, doc code,
    run row or None, ignored run queries)``. Arrays are 32-bit: memory, not arithmetic, is what a 10M-row run costs."""
    order = run.trec_order()
    of_query = positions(run.query_index.names, topic_names).astype(np.int32)
    r_topic = of_query[run.query_index.codes if order is None else run.query_index.codes[order]]
    r_code = run.doc_index.codes if order is None else run.doc_index.codes[order]
    outside = np.flatnonzero(of_query < 0)
    if not len(outside):
        return r_topic, r_code, order, ()
    names = run.query_index.name_list()
    keep = r_topic >= 0
    run_row = np.flatnonzero(keep) if order is None else order[keep]
    return r_topic[keep], r_code[keep], run_row, tuple(sorted(names[i] for i in outside.tolist()))


def _blocks(topic: np.ndarray, n_topics: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(starts, counts)`` of each topic's block of rows and each row's 0-based rank in its block."""
    starts, counts = np.zeros(n_topics, np.int64), np.zeros(n_topics, np.int64)
    n = len(topic)
    if not n:
        return starts, counts, np.zeros(0, np.int32)
    first = np.flatnonzero(np.concatenate([[True], topic[1:] != topic[:-1]]))
    lengths = np.diff(np.append(first, n))
    starts[topic[first]], counts[topic[first]] = first, lengths
    rank = np.ones(n, np.int32 if n < 2**31 else np.int64)  # +1 per row, back to 0 at each block: a cumsum
    rank[0] = 0
    rank[first[1:]] = 1 - lengths[:-1]
    return starts, counts, np.cumsum(rank, out=rank)


def _grades(r_topic, r_code, q_topic, q_grade, q_code, n_topics: int, n_docs: int) -> tuple[np.ndarray, np.ndarray]:
    """``(grade, judged)`` of each row: rows keyed (topic, doc); a table of every key when it fits in 256 MB and in 16
    bytes a row (or 4 MB), else a sorted-key join (the same grades)."""
    n = len(r_code)
    retrieved = q_code >= 0
    if not n or not retrieved.any():
        return np.zeros(n, np.int8), np.zeros(n, bool)
    width = np.int32 if n_topics * n_docs < 2**31 else np.int64
    q_key = q_topic[retrieved].astype(width) * n_docs + q_code[retrieved]
    q_val = q_grade[retrieved]
    r_key = r_topic.astype(width)
    r_key *= n_docs
    r_key += r_code
    cells = n_topics * n_docs  # a table only when it is small beside the rows (its fill costs its size)
    if cells <= min(1 << 28, max(1 << 22, 16 * (n + len(q_key)))) and q_val.min() > -128 and q_val.max() < 128:
        table = np.full(n_topics * n_docs, -128, np.int8)
        table[q_key] = q_val
        grade = table[r_key]
        del table
        judged = grade != -128
        grade[~judged] = 0
        return grade, judged
    key_order = np.argsort(q_key)
    q_key, q_val = q_key[key_order], q_val[key_order]
    pos = np.minimum(np.searchsorted(q_key, r_key), len(q_key) - 1)
    judged = q_key[pos] == r_key
    grade = np.zeros(n, q_val.dtype)
    grade[judged] = q_val[pos[judged]]
    return grade, judged


def _trec_order(topic: np.ndarray, score: np.ndarray, code: np.ndarray, n_topics: int, n_docs: int) -> np.ndarray:
    """Row order by (topic asc, score desc in float32, doc code desc) for doc codes already in byte order of their
    ids (:func:`relgrade.io._order.trec_order`); ``n_topics`` and ``n_docs`` are accepted for compatibility."""
    order = trec_order(np.asarray(topic), np.asarray(score), np.asarray(code), None, stable=True)
    return np.arange(len(topic)) if order is None else order


def compute(ranked: Ranked, metrics: Sequence[Metric], *, rel_threshold: int = 1) -> dict[str, np.ndarray]:
    """Per-query values, ``{metric name: array over ranked.topics}``."""
    n = len(ranked.topics)
    cuts = [m.k for m in metrics]
    if None in cuts or not cuts:
        topic, rank, grade = ranked.topic, ranked.rank, ranked.grade
    else:  # every metric has a cutoff: only the rows above the deepest one matter
        top = ranked.rank < max(cuts)
        topic, rank, grade = ranked.topic[top], ranked.rank[top], ranked.grade[top]
    rel = grade >= rel_threshold
    out: dict[str, np.ndarray] = {}
    for metric in metrics:
        k = metric.k
        within = rank < k if k is not None else np.ones(len(rank), bool)
        if metric.measure in {"recall", "precision", "frac_recall"}:
            hits = np.bincount(topic[rel & within], minlength=n).astype(np.float64)
            if metric.measure == "recall":
                value = (hits > 0).astype(np.float64)
            elif metric.measure == "precision":
                value = hits / k
            else:
                value = np.divide(hits, ranked.n_relevant, out=np.zeros(n), where=ranked.n_relevant > 0)
        elif metric.measure == "mrr":
            rows = np.flatnonzero(rel & within)
            first = rows[np.concatenate([[True], topic[rows[1:]] != topic[rows[:-1]]])] if len(rows) else rows
            value = np.zeros(n)  # rows of a topic are contiguous and in rank order: its first hit is its best
            value[topic[first]] = 1.0 / (rank[first] + 1.0)
        elif metric.measure == "ndcg":
            gains = np.maximum(grade[within], 0) * (1.0 / np.log2(rank[within] + 2.0))
            dcg = np.bincount(topic[within], weights=gains, minlength=n)
            iwithin = ranked.ideal_rank < k if k is not None else np.ones(len(ranked.ideal_rank), bool)
            ideal = ranked.ideal_gains[iwithin] * (1.0 / np.log2(ranked.ideal_rank[iwithin] + 2.0))
            idcg = np.bincount(ranked.ideal_topic[iwithin], weights=ideal, minlength=n)
            value = np.divide(dcg, idcg, out=np.zeros(n), where=idcg > 0)
        else:  # pragma: no cover - Metric validates measures
            raise AssertionError(metric.measure)
        out[metric.name] = value
    return out
