"""Hybrid golden sets and prediction-powered metric estimates.

Front door::

    from relgrade.hybrid import estimate, merge_labels, rank_systems
    report = estimate(run, human_qrels, judge_qrels, ["ndcg@10", "recall@10"])
    report.estimates["ndcg@10"].ppi_ci95          # PPI++ 95% interval (ppi-python)
    report.estimates["ndcg@10"].effective_n       # human-labeled queries the judge was worth

* :func:`merge_labels` / :func:`read_hybrid` / :func:`write_hybrid`: labels with provenance (human +
  annotator, or judge + model + prompt hash; time; SHA-256 of the chunk text), human beats judge,
  stale labels (chunk text changed) set apart, calibrated mapping applied when adopted.
* :func:`coverage`: judged@k, the share of each metric's top-k labels from humans, the judge or nowhere.
* :func:`estimate`: PPI++ estimate and CI, human-only (Student t) and judge-only values per metric.
* :func:`predict`: the judges' prediction of each query's metric that PPI corrects: soft (the default:
  calibrated on the human labels by cross-fitting, several judges at once) or hard (one judge's grades).
* :func:`rank_systems`: rankings under human, judge and PPI++ labels, Kendall tau with bootstrap CIs,
  flipped pairs, paired tests.
* :func:`ppi_means` / :func:`human_only_means`: the column-wise interval functions underneath.
"""

from relgrade.hybrid._coverage import Coverage, coverage, coverage_table
from relgrade.hybrid._estimate import EstimateReport, MetricEstimate, estimate, per_query_values
from relgrade.hybrid._inputs import (
    JudgeInput, JudgeMapping, crossfit_for_ppi, on_common_scale, read_human_labels, read_judge_labels, read_mapping, require_random_sample,
)
from relgrade.hybrid._labels import (
    HybridLabels, Label, Stale, calibration_path_for, is_hybrid, merge_labels, read_hybrid, recheck, stale_path_for,
    text_sha256, write_hybrid,
)
from relgrade.hybrid._ppi import Means, effective_n, human_only_means, ppi_means, ppi_pvalues
from relgrade.hybrid._predict import JudgeSet, Prediction, judge_sets, predict
from relgrade.hybrid._rank import PairResult, RankingReport, SourceDifference, TauResult, rank_systems

__all__ = [
    "Coverage",
    "EstimateReport",
    "HybridLabels",
    "JudgeInput",
    "JudgeMapping",
    "JudgeSet",
    "Label",
    "Means",
    "MetricEstimate",
    "PairResult",
    "Prediction",
    "RankingReport",
    "SourceDifference",
    "Stale",
    "TauResult",
    "calibration_path_for",
    "coverage",
    "crossfit_for_ppi",
    "coverage_table",
    "effective_n",
    "estimate",
    "human_only_means",
    "is_hybrid",
    "judge_sets",
    "merge_labels",
    "on_common_scale",
    "require_random_sample",
    "per_query_values",
    "ppi_means",
    "ppi_pvalues",
    "predict",
    "rank_systems",
    "read_human_labels",
    "read_hybrid",
    "read_judge_labels",
    "read_mapping",
    "recheck",
    "stale_path_for",
    "text_sha256",
    "write_hybrid",
]
