"""Calibration: how far a judge can be trusted against human labels, with honest uncertainty.

Front door::

    from relgrade.calibration import agreement, fit_mapping
    report = agreement(judge_labels, human_labels, n_boot=1000, seed=0)
    print(report.verdict.text)        # "fair (κ 0.29, 95% studentized CI 0.24–0.34): do not use judge labels alone"
    mapping = fit_mapping(judge_labels, human_labels)   # adopted only if held-out kappa improves
    crossfit = crossfit_mapping(judge_labels, human_labels)  # mapped grades PPI may use with the same labels

Labels are plain ``{query_id: {doc_id: grade}}`` mappings; files are read with :func:`read_judge`
and :func:`read_human`. Every statistic carries a 95% CI from a bootstrap over queries (studentized;
BCa above 100 queries).
"""

from relgrade.calibration._active import ACTIVE_K, query_uncertainty, sample_active
from relgrade.calibration._agreement import agreement
from relgrade.calibration._ceiling import human_agreement
from relgrade.calibration._crossfit import CrossFit, crossfit_mapping
from relgrade.calibration._disagreements import Disagreement, disagreements
from relgrade.calibration._fingerprint import LabelFingerprint
from relgrade.calibration._inputs import HumanLabels, JudgeLabels, read_human, read_judge
from relgrade.calibration._mapping import (
    Combination,
    CombinationReport,
    GradeMapping,
    combine_judges,
    fit_mapping,
    identity_mapping,
)
from relgrade.calibration._pairs import check_labels_in_scale
from relgrade.calibration._report import render_combination, render_disagreements, render_page, render_sections
from relgrade.calibration._results import Agreement, CalibrationReport, HumanAgreement, Verdict
from relgrade.calibration._sample import (
    DEFAULT_DESIGN,
    DESIGNS,
    Sample,
    SampleItem,
    Stratum,
    check_design,
    check_writable,
    pairs_per_query,
    queries_needed,
    query_pool,
    sample_pairs,
    sample_size,
    with_texts,
    write_sample,
)
from relgrade.calibration._verdict import band_of, verdict

__all__ = [
    "ACTIVE_K",
    "DEFAULT_DESIGN",
    "DESIGNS",
    "Agreement",
    "CalibrationReport",
    "Combination",
    "CombinationReport",
    "CrossFit",
    "Disagreement",
    "GradeMapping",
    "HumanAgreement",
    "HumanLabels",
    "JudgeLabels",
    "LabelFingerprint",
    "Sample",
    "SampleItem",
    "Stratum",
    "Verdict",
    "agreement",
    "band_of",
    "check_design",
    "check_labels_in_scale",
    "check_writable",
    "combine_judges",
    "crossfit_mapping",
    "disagreements",
    "fit_mapping",
    "human_agreement",
    "pairs_per_query",
    "queries_needed",
    "query_pool",
    "identity_mapping",
    "read_human",
    "read_judge",
    "render_combination",
    "render_disagreements",
    "render_page",
    "render_sections",
    "query_uncertainty",
    "sample_active",
    "sample_pairs",
    "sample_size",
    "verdict",
    "with_texts",
    "write_sample",
]
