"""Retrieval metrics exact to trec_eval, with bootstrap intervals, failures, leaks and paired tests."""

from relgrade.metrics._core import compute, join
from relgrade.metrics._evaluate import Comparison, EvalReport, aevaluate_retriever, compare, evaluate, evaluate_retriever
from relgrade.metrics._measures import DEFAULT_KS, DEFAULT_RANK_METRIC, Metric, default_metrics, parse_metric, parse_metrics
from relgrade.metrics._neighbours import AnnReport, ann_recall
from relgrade.metrics._repeats import RepeatReport, evaluate_repeats, stability
from relgrade.metrics._settings import DEFAULT_NO_ANSWER, NO_ANSWER_MODES, labels_fingerprint, queries_fingerprint
from relgrade.metrics._stats import Difference, Estimate, bootstrap_means, estimates, paired_difference

__all__ = [
    "AnnReport",
    "DEFAULT_KS",
    "DEFAULT_NO_ANSWER",
    "DEFAULT_RANK_METRIC",
    "NO_ANSWER_MODES",
    "Comparison",
    "Difference",
    "Estimate",
    "EvalReport",
    "Metric",
    "RepeatReport",
    "aevaluate_retriever",
    "ann_recall",
    "bootstrap_means",
    "compare",
    "compute",
    "default_metrics",
    "estimates",
    "evaluate",
    "evaluate_repeats",
    "evaluate_retriever",
    "join",
    "labels_fingerprint",
    "paired_difference",
    "parse_metric",
    "parse_metrics",
    "queries_fingerprint",
    "stability",
]
