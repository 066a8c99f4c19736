"""Retrieval metrics exact to trec_eval, with bootstrap intervals, failures, leaks and paired tests."""

from relgrade.metrics._core import compute, join
from relgrade.metrics._evaluate import Comparison, EvalReport, compare, evaluate, evaluate_retriever
from relgrade.metrics._measures import Metric, default_metrics, parse_metric
from relgrade.metrics._stats import Difference, Estimate, bootstrap_means, estimates, paired_difference

__all__ = [
    "Comparison",
    "Difference",
    "Estimate",
    "EvalReport",
    "Metric",
    "bootstrap_means",
    "compare",
    "compute",
    "default_metrics",
    "estimates",
    "evaluate",
    "evaluate_retriever",
    "join",
    "paired_difference",
    "parse_metric",
]
