"""Hybrid golden sets and prediction-powered metric estimates.

Front door::

    from relgrade.hybrid import estimate, merge_labels, rank_systems
    report = estimate(run, human_qrels, judge_qrels, ["ndcg@10", "recall@10"])
    report.estimates["ndcg@10"].ppi_ci95          # PPI++ 95% interval (relgrade.stats._augmented)
    report.estimates["ndcg@10"].effective_n       # human-labeled queries the judge was worth (None: lam = 0)

* :func:`merge_labels` / :func:`read_hybrid` / :func:`write_hybrid`: labels with provenance (human +
  annotator, or judge + model + prompt hash; time; SHA-256 of the chunk text), human beats judge,
  stale labels (chunk text changed) set apart, calibrated mapping applied when adopted.
* :func:`coverage`: judged@k, the share of each metric's top-k labels from humans, the judge or nowhere.
* :func:`estimate`: PPI++ estimate and CI, human-only (Student t) and judge-only values per metric.
* :func:`predict`: the judges' prediction of each query's metric that PPI corrects: soft (the default:
  calibrated on the human labels by cross-fitting, several judges at once) or hard (one judge's grades).
* :func:`rank_systems`: rankings under human, judge and PPI++ labels, Kendall tau with bootstrap CIs,
  flipped pairs, paired tests.
* :func:`ppi_means` / :func:`human_only_means` / :func:`ratio_means`: the column-wise interval functions
  underneath; :func:`plan_labels` / :func:`judge_worth`: labels a target width needs, what the judge was worth.
"""

from relgrade.hybrid._active import ActiveDesign, read_design
from relgrade.hybrid._coverage import Coverage, coverage, coverage_table
from relgrade.hybrid._estimate import EstimateReport, MetricEstimate, estimate
from relgrade.hybrid._inputs import (
    JudgeInput, JudgeMapping, crossfit_for_ppi, on_common_scale, read_human_labels, read_judge_labels, read_mapping, require_random_sample,
)
from relgrade.hybrid._labels import (
    HybridLabels, Label, Stale, calibration_path_for, is_hybrid, merge_labels, read_hybrid, recheck, stale_path_for,
    text_sha256, write_hybrid,
)
from relgrade.hybrid._plan import Plan, judge_worth, plan_labels
from relgrade.hybrid._ppi import PPI_INTERVAL, Means, human_only_means, ppi_means, ppi_pvalues
from relgrade.hybrid._predict import JudgeSet, Prediction, judge_sets, predict
from relgrade.hybrid._ratio import RATIO_INTERVAL, ratio_means
from relgrade.hybrid._rank import JOINT_INTERVAL, PairResult, RankingReport, SourceDifference, TauResult, rank_systems
from relgrade.hybrid._values import per_query_values

__all__ = [
    "ActiveDesign",
    "read_design",
    "JOINT_INTERVAL",
    "PPI_INTERVAL",
    "RATIO_INTERVAL",
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
    "Plan",
    "Prediction",
    "RankingReport",
    "SourceDifference",
    "Stale",
    "TauResult",
    "calibration_path_for",
    "coverage",
    "crossfit_for_ppi",
    "coverage_table",
    "estimate",
    "human_only_means",
    "is_hybrid",
    "judge_sets",
    "judge_worth",
    "merge_labels",
    "on_common_scale",
    "require_random_sample",
    "per_query_values",
    "plan_labels",
    "predict",
    "ppi_means",
    "ppi_pvalues",
    "rank_systems",
    "ratio_means",
    "read_human_labels",
    "read_hybrid",
    "read_judge_labels",
    "read_mapping",
    "recheck",
    "stale_path_for",
    "text_sha256",
    "write_hybrid",
]
