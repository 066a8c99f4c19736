"""Judged@k coverage: where the labels of the retrieved top k came from (human, judge, nowhere).

For a metric with cutoff k, the top k of each query is taken in trec_eval order (the order the
metrics core uses, :func:`relgrade.metrics.join`), and each retrieved document is counted under the
source of its label: ``human``, ``judge``, or ``none`` (unlabeled, so the metrics count it as not
relevant). The overall shares pool every top-k slot of the queries (``sum of counts / sum of
min(k, retrieved)``); per query, the shares are within that query's top k. A metric without a cutoff
(``mrr``, ``ndcg``) covers the whole ranking. A query that retrieved nothing has ``n_docs`` 0 and
shares 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from relgrade.io import Qrels, Run
from relgrade.metrics import Metric, join, parse_metrics

KINDS = ("human", "judge", "none")


@dataclass(frozen=True)
class Coverage:
    """Shares of a metric's top-k documents by label source, overall and per query."""

    metric: str
    k: int | None
    human: float
    judge: float
    none: float
    n_docs: int
    per_query: Mapping[str, Mapping[str, float]]

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"human": self.human, "judge": self.judge, "none": self.none, "n_docs": self.n_docs,
                               "k": self.k}
        if per_query:
            out["per_query"] = {q: dict(v) for q, v in self.per_query.items()}
        return out


def _shares(counts: np.ndarray) -> tuple[float, float, float, int]:
    total = int(counts.sum())
    if total == 0:
        return 0.0, 0.0, 0.0, 0
    h, j, n = (float(c) / total for c in counts)
    return h, j, n, total


def coverage(
    qrels: Qrels,
    run: Run,
    sources: Mapping[tuple[str, str], str] | str,
    metrics: Sequence[str | Metric],
    *,
    topics: Sequence[str] | None = None,
    per_query: bool = True,
) -> dict[str, Coverage]:
    """``{metric name: Coverage}`` of ``run``'s top k over ``topics`` (default: the qrels' topics).

    ``sources``: the source of each labeled pair, or one source (``"human"``, ``"judge"``) for every pair of
    ``qrels`` (read off the join, no lookup per pair); ``per_query=False`` leaves ``Coverage.per_query`` empty."""
    chosen = parse_metrics(metrics)
    ranked = join(qrels, run, topics=topics)
    n_topics = len(ranked.topics)
    code = {"human": 0, "judge": 1}
    names = ranked.topics
    if isinstance(sources, str):
        src = np.where(ranked.judged, code.get(sources, 2), 2).astype(np.int64)
    else:
        src = np.fromiter((code.get(sources.get((names[t], d), ""), 2) for t, d in zip(ranked.topic, ranked.doc)),
                          dtype=np.int64, count=len(ranked.doc))
    out: dict[str, Coverage] = {}
    for metric in chosen:
        within = ranked.rank < metric.k if metric.k is not None else np.ones(len(ranked.rank), bool)
        per = np.zeros((n_topics, 3), dtype=np.int64)
        np.add.at(per, (ranked.topic[within], src[within]), 1)
        h, j, n, total = _shares(per.sum(axis=0))
        by_query = {}
        for t in range(n_topics) if per_query else ():
            qh, qj, qn, qt = _shares(per[t])
            by_query[names[t]] = {"human": qh, "judge": qj, "none": qn, "n_docs": qt}
        out[metric.name] = Coverage(metric.name, metric.k, h, j, n, total, by_query)
    return out


def coverage_table(cov: Mapping[str, Coverage]) -> str:
    """Plain-text table: one row per metric, the shares of its top-k labels by source."""
    lines = [f"{'judged@k':<16}{'human':>8}{'judge':>8}{'none':>8}   docs in the top k"]
    for name, c in cov.items():
        lines.append(f"{name:<16}{c.human:>8.1%}{c.judge:>8.1%}{c.none:>8.1%}   {c.n_docs}")
    return "\n".join(lines)
