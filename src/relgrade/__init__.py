"""relgrade: evaluate the retrieval step of RAG and search systems.

Public front door::

    from relgrade import read_qrels, read_run, evaluate, assert_quality
    report = evaluate(read_qrels("qrels.txt"), read_run("run.txt"), ["recall@5", "ndcg@10"])
    assert_quality(report, min={"recall@5": 0.75})    # relgrade gate's rule, as an AssertionError

Beside ``evaluate``: ``estimate`` (PPI++ from human labels on some queries and judge labels on all),
``agreement`` (a judge against human labels, with CIs), ``judge_pairs`` (the LLM judge), ``gate`` and ``gate_min``.

Names are imported lazily (PEP 562) so ``import relgrade`` and ``relgrade --help`` stay instant.
"""

from __future__ import annotations

import importlib
from typing import Any

from relgrade._errors import InputError
from relgrade._version import __version__  # noqa: F401  (pyproject.toml says the same)

_LAZY = {
    "GoldenCase": "relgrade.io",
    "GoldenSet": "relgrade.io",
    "Qrels": "relgrade.io",
    "Run": "relgrade.io",
    "read_corpus": "relgrade.io",
    "read_golden": "relgrade.io",
    "read_qrels": "relgrade.io",
    "read_queries": "relgrade.io",
    "read_run": "relgrade.io",
    "write_qrels": "relgrade.io",
    "write_run": "relgrade.io",
    "Estimate": "relgrade.metrics",
    "EvalReport": "relgrade.metrics",
    "Metric": "relgrade.metrics",
    "Comparison": "relgrade.metrics",
    "compare": "relgrade.metrics",
    "evaluate": "relgrade.metrics",
    "evaluate_retriever": "relgrade.metrics",
    "evaluate_repeats": "relgrade.metrics",
    "ann_recall": "relgrade.metrics",
    "AnnReport": "relgrade.metrics",
    "RepeatReport": "relgrade.metrics",
    "aevaluate_retriever": "relgrade.metrics",
    "adapt": "relgrade.adapters",
    "retrieve": "relgrade.adapters",
    "aretrieve": "relgrade.adapters",
    "parse_metric": "relgrade.metrics",
    "parse_metrics": "relgrade.metrics",
    "GoldenCheck": "relgrade.versioning",
    "check_golden": "relgrade.versioning",
    "corpus_fingerprint": "relgrade.versioning",
    "stamp_golden": "relgrade.versioning",
    "GateResult": "relgrade.gating._gate",
    "GateRow": "relgrade.gating._gate",
    "gate": "relgrade.gating._gate",
    "read_report": "relgrade.gating._gate",
    "gate_min": "relgrade.gating._min",
    "FloorResult": "relgrade.gating._min",
    "assert_quality": "relgrade.gating._assert",
    "estimate": "relgrade.hybrid",
    "EstimateReport": "relgrade.hybrid",
    "agreement": "relgrade.calibration",
    "CalibrationReport": "relgrade.calibration",
    "judge_pairs": "relgrade.judge",
}

__all__ = ["InputError", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'relgrade' has no attribute {name!r}")
