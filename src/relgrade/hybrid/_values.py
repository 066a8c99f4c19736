"""Per-query values from the one metrics core, and the query split of every PPI command.

Below :mod:`relgrade.hybrid._predict` (the judge's predictions) and :mod:`relgrade.hybrid._estimate` /
:mod:`relgrade.hybrid._rank` (the intervals), so that both can use them without an import circle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from relgrade._errors import InputError
from relgrade.io import Qrels, Run
from relgrade.metrics import Metric, compute, join


def as_qrels(labels, what: str) -> Qrels:
    """``labels`` as :class:`~relgrade.io.Qrels`: Qrels, ``{qid: {doc_id: grade}}``, or anything with ``to_qrels()``."""
    if isinstance(labels, Qrels):
        return labels
    if isinstance(labels, Mapping):
        return Qrels.from_dict(labels)
    to_qrels = getattr(labels, "to_qrels", None)
    if callable(to_qrels):
        return to_qrels()
    raise InputError(f"{what} labels must be Qrels or {{qid: {{doc_id: grade}}}}, got {type(labels).__name__}")


def per_query_values(qrels: Qrels, run: Run, metrics: Sequence[Metric], topics: Sequence[str], *,
                     rel_threshold: int = 1) -> np.ndarray:
    """(len(topics) × len(metrics)) per-query values from the metrics core; a topic the run lacks scores 0."""
    if not topics:
        return np.zeros((0, len(metrics)))
    values = compute(join(qrels, run, rel_threshold=rel_threshold, topics=topics), metrics, rel_threshold=rel_threshold)
    return np.column_stack([values[m.name] for m in metrics])


def split_queries(human: Qrels, judge: Qrels) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(labeled, unlabeled): human topics, then judge topics without a human label."""
    labeled = tuple(human.topics)
    seen = set(labeled)
    return labeled, tuple(q for q in judge.topics if q not in seen)


def answerable(qrels: Qrels, topics: Sequence[str], rel_threshold: int) -> np.ndarray:
    """1.0 for each topic with a relevant document (grade >= ``rel_threshold``) in ``qrels``, else 0.0."""
    return np.array([1.0 if qrels.relevant(q, rel_threshold) else 0.0 for q in topics])
