"""The judge's per-query predictions, computed in one place for ``estimate``, ``compare`` and ``rank-systems``.

A prediction of a query's metric is, today, the metric computed by the metrics core on the judge's grades
(or, when an adopted mapping was fitted on these human labels, on the cross-fitted mapped grades: a labeled
query from its out-of-fold mapping, the others averaged over the fold mappings, Zrnic & Candès 2024). Other
prediction kinds (calibrated soft predictions, several judges) replace :func:`judge_values` and nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from relgrade.io import Qrels, Run
from relgrade.metrics import Metric, compute, join

PREDICTION = "hard"  # the prediction kind judge_values computes (reports name it in their settings)


@dataclass(frozen=True)
class JudgeValues:
    """``values``: (labeled + unlabeled) x metrics predictions, labeled queries first; ``answerable``: the
    judge's answerable indicator (or its fold mean) per query, same order."""

    values: np.ndarray
    answerable: np.ndarray
    kind: str = PREDICTION


def per_query_values(qrels: Qrels, run: Run, metrics: Sequence[Metric], topics: Sequence[str], *,
                     rel_threshold: int = 1) -> np.ndarray:
    """(len(topics) x len(metrics)) per-query values from the metrics core; a topic the run lacks scores 0."""
    if not topics:
        return np.zeros((0, len(metrics)))
    values = compute(join(qrels, run, rel_threshold=rel_threshold, topics=topics), metrics, rel_threshold=rel_threshold)
    return np.column_stack([values[m.name] for m in metrics])


def answerable(qrels: Qrels, topics: Sequence[str], rel_threshold: int) -> np.ndarray:
    """1.0 for each topic with a relevant document (grade >= ``rel_threshold``) in ``qrels``, else 0.0."""
    return np.array([1.0 if qrels.relevant(q, rel_threshold) else 0.0 for q in topics])


def judge_values(judge: Qrels, run: Run, metrics: Sequence[Metric], labeled: Sequence[str],
                 unlabeled: Sequence[str], *, rel_threshold: int = 1, crossfit: Any = None) -> JudgeValues:
    """The judge's predictions of each metric on the labeled, then the unlabeled queries (module docstring)."""
    labeled, unlabeled = list(labeled), list(unlabeled)
    if crossfit is None:
        population = labeled + unlabeled
        return JudgeValues(per_query_values(judge, run, metrics, population, rel_threshold=rel_threshold),
                           answerable(judge, population, rel_threshold))
    folds = [Qrels(u) for u in crossfit.unlabeled]
    inner = Qrels(crossfit.labeled)
    values = np.vstack([per_query_values(inner, run, metrics, labeled, rel_threshold=rel_threshold),
                        np.mean([per_query_values(u, run, metrics, unlabeled, rel_threshold=rel_threshold)
                                 for u in folds], axis=0)])
    ans = np.concatenate([answerable(inner, labeled, rel_threshold),
                          np.mean([answerable(u, unlabeled, rel_threshold) for u in folds], axis=0)
                          if folds and unlabeled else np.zeros(len(unlabeled))])
    return JudgeValues(values, ans)
