"""The vectorised metrics core, exact to trec_eval.

Semantics (trec_eval 9, as exposed by pytrec_eval, which the test suite uses as the oracle):

* Within a query, documents are ordered by score descending; equal scores are broken by doc id
  in *descending* lexicographic (byte) order. The rank column of a TREC run is ignored.
* A document is relevant when its grade is >= ``rel_threshold``; unjudged documents have grade 0.
* nDCG uses linear gain (the grade itself, negatives count 0) and discount ``log2(rank + 1)``;
  the ideal ranking is built from every judged document of the query (Järvelin & Kekäläinen 2002).
* A query of the qrels that the run lacks scores 0 on every measure (trec_eval ``-c``).

Everything is computed at once over flat arrays (one row per retrieved document): 100k queries with
100 documents each (10M rows), four metrics, take seconds, not minutes; ``python
benchmarks/metrics_speed.py`` prints the time from a dict-of-dicts beside ranx and ir_measures (the
README's measured section has the figures of one run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from relgrade.io import Qrels, Run
from relgrade.metrics._measures import Metric


@dataclass(frozen=True)
class Ranked:
    """A run joined to qrels, sorted in trec_eval order. Arrays are parallel, one row per document."""

    topics: tuple[str, ...]
    topic: np.ndarray  # int index into topics
    doc: np.ndarray  # doc ids (object)
    score: np.ndarray
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

    def top(self, t: int, k: int) -> np.ndarray:
        s = self.starts[t]
        return self.doc[s : s + min(k, self.counts[t])]


def join(qrels: Qrels, run: Run, *, rel_threshold: int = 1, topics: Sequence[str] | None = None) -> Ranked:
    topics = tuple(qrels.topics if topics is None else topics)
    index = pd.Index(topics)
    n_topics = len(topics)

    q_ids: list[str] = []
    q_docs: list[str] = []
    q_grades: list[int] = []
    for q, docs in qrels.labels.items():
        q_ids.extend([q] * len(docs))
        q_docs.extend(docs)
        q_grades.extend(docs.values())
    q_topic = index.get_indexer(np.array(q_ids, dtype=object)) if q_ids else np.zeros(0, np.int64)
    q_doc = np.array(q_docs, dtype=object)
    q_grade = np.array(q_grades, dtype=np.int64)
    keep_q = q_topic >= 0
    q_topic, q_doc, q_grade = q_topic[keep_q], q_doc[keep_q], q_grade[keep_q]

    r_topic = _topic_index(index, run.query_id)
    in_topics = r_topic >= 0
    ignored = tuple(sorted(set(run.query_id[~in_topics].tolist()))) if not in_topics.all() else ()
    r_topic = r_topic[in_topics]
    r_doc = run.doc_id[in_topics]
    r_score = run.score[in_topics]

    n_run = len(r_doc)
    codes, uniques = pd.factorize(np.concatenate([r_doc, q_doc]), sort=True)
    codes = codes.astype(np.int64)
    r_code, q_code = codes[:n_run], codes[n_run:]
    n_docs = max(len(uniques), 1)

    # trec_eval order: topic, score desc, doc id desc.
    order = _trec_order(r_topic, r_score, r_code, n_topics, n_docs)
    if not _is_identity(order):
        r_topic, r_doc, r_score, r_code = r_topic[order], r_doc[order], r_score[order], r_code[order]

    # grades by a sorted-key join
    q_key = q_topic.astype(np.int64) * n_docs + q_code
    key_order = np.argsort(q_key, kind="stable")
    q_key_sorted, q_grade_sorted = q_key[key_order], q_grade[key_order]
    r_key = r_topic.astype(np.int64) * n_docs + r_code
    pos = np.searchsorted(q_key_sorted, r_key)
    pos_clipped = np.minimum(pos, max(len(q_key_sorted) - 1, 0))
    judged = (pos < len(q_key_sorted)) & (q_key_sorted[pos_clipped] == r_key) if len(q_key_sorted) else np.zeros(n_run, bool)
    grade = np.where(judged, q_grade_sorted[pos_clipped] if len(q_key_sorted) else 0, 0)

    counts = np.bincount(r_topic, minlength=n_topics)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if n_topics else np.zeros(0, np.int64)
    rank = np.arange(n_run) - starts[r_topic] if n_run else np.zeros(0, np.int64)

    n_relevant = np.bincount(q_topic[q_grade >= rel_threshold], minlength=n_topics)
    gains = np.maximum(q_grade, 0).astype(np.float64)
    ideal_order = np.lexsort((-gains, q_topic))
    ideal_topic = q_topic[ideal_order]
    ideal_gains = gains[ideal_order]
    q_counts = np.bincount(ideal_topic, minlength=n_topics)
    q_starts = np.concatenate([[0], np.cumsum(q_counts)[:-1]]) if n_topics else np.zeros(0, np.int64)
    ideal_rank = np.arange(len(ideal_topic)) - q_starts[ideal_topic] if len(ideal_topic) else np.zeros(0, np.int64)

    return Ranked(
        topics=topics, topic=r_topic, doc=r_doc, score=r_score, rank=rank, grade=grade, judged=judged,
        starts=starts, counts=counts, n_relevant=n_relevant, ideal_gains=ideal_gains,
        ideal_topic=ideal_topic, ideal_rank=ideal_rank, ignored_queries=ignored,
    )


def _topic_index(index: pd.Index, query_id: np.ndarray) -> np.ndarray:
    """``index.get_indexer(query_id)``, hashing each run of equal consecutive ids once (runs are grouped by query)."""
    if len(query_id) == 0:
        return np.zeros(0, np.int64)
    change = np.flatnonzero(query_id[1:] != query_id[:-1]) + 1
    starts = np.concatenate([[0], change])
    lengths = np.diff(np.concatenate([starts, [len(query_id)]]))
    return np.repeat(index.get_indexer(query_id[starts]), lengths)


def _trec_order(topic: np.ndarray, score: np.ndarray, code: np.ndarray, n_topics: int, n_docs: int) -> np.ndarray:
    """Row order by (topic asc, score desc, doc code desc): one integer sort key when it fits in int64.

    Scores are compared as trec_eval stores them, in single precision (:func:`relgrade.io._run.trec_score`):
    ``0.30000000000000004`` and ``0.3`` tie, and the tie goes to the doc id.
    """
    if len(topic) == 0:
        return np.zeros(0, np.int64)
    from relgrade.io._run import trec_score

    score = trec_score(score)
    uniq, inverse = np.unique(score, return_inverse=True)
    n_scores = len(uniq)
    desc_score = (n_scores - 1 - inverse).astype(np.int64)
    if n_topics * n_scores * n_docs < 2**62:
        key = (topic.astype(np.int64) * n_scores + desc_score) * n_docs + (n_docs - 1 - code)
        return np.argsort(key, kind="stable")
    key = topic.astype(np.int64) * n_scores + desc_score
    order = np.argsort(key, kind="stable")
    if np.any(key[order][1:] == key[order][:-1]):  # ties in score: fall back to the three-key sort
        return np.lexsort((-code, -score, topic))
    return order


def _is_identity(order: np.ndarray) -> bool:
    return bool(len(order) == 0 or (order[0] == 0 and np.all(np.diff(order) == 1)))


def compute(ranked: Ranked, metrics: Sequence[Metric], *, rel_threshold: int = 1) -> dict[str, np.ndarray]:
    """Per-query values, ``{metric name: array over ranked.topics}``."""
    n = len(ranked.topics)
    rel = ranked.grade >= rel_threshold
    out: dict[str, np.ndarray] = {}
    discount = 1.0 / np.log2(ranked.rank + 2.0)
    ideal_discount = 1.0 / np.log2(ranked.ideal_rank + 2.0)
    for metric in metrics:
        k = metric.k
        within = ranked.rank < k if k is not None else np.ones(len(ranked.rank), bool)
        if metric.measure in {"recall", "precision", "frac_recall"}:
            hits = np.bincount(ranked.topic[rel & within], minlength=n).astype(np.float64)
            if metric.measure == "recall":
                value = (hits > 0).astype(np.float64)
            elif metric.measure == "precision":
                value = hits / k
            else:
                value = np.divide(hits, ranked.n_relevant, out=np.zeros(n), where=ranked.n_relevant > 0)
        elif metric.measure == "mrr":
            mask = rel & within
            first_topic, first_row = np.unique(ranked.topic[mask], return_index=True)
            value = np.zeros(n)
            value[first_topic] = 1.0 / (ranked.rank[mask][first_row] + 1.0)
        elif metric.measure == "ndcg":
            gains = np.maximum(ranked.grade, 0) * discount
            dcg = np.bincount(ranked.topic[within], weights=gains[within], minlength=n)
            iwithin = ranked.ideal_rank < k if k is not None else np.ones(len(ranked.ideal_rank), bool)
            idcg = np.bincount(
                ranked.ideal_topic[iwithin], weights=(ranked.ideal_gains * ideal_discount)[iwithin], minlength=n
            )
            value = np.divide(dcg, idcg, out=np.zeros(n), where=idcg > 0)
        else:  # pragma: no cover - Metric validates measures
            raise AssertionError(metric.measure)
        out[metric.name] = value
    return out
