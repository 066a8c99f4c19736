"""The embedded demo: bundled product docs, a golden set, human labels, two retrievers, and the pipeline.

``relgrade demo`` (or :func:`run_demo`) retrieves with both configurations, judges the pooled
chunks (the embedded local judge by default), calibrates the judge against the human labels,
builds hybrid labels with PPI intervals, evaluates both runs, gates the candidate against the
baseline and writes one self-contained HTML report.
"""

from __future__ import annotations

import importlib
from typing import Any

_DATA = ("corpus", "corpus_path", "corpus_records", "golden", "golden_path", "human_labels_path", "human_qrels",
         "retrievers", "tenant_of", "write_runs")


_ANN = ("ann_vectors", "exact_search", "ivf_search", "write_ann_runs", "write_loop_files")


def __getattr__(name: str) -> Any:  # lazy: ``relgrade --help`` must not import numpy through here
    if name in _DATA:
        return getattr(importlib.import_module("relgrade.demo._data"), name)
    if name in _ANN:
        return getattr(importlib.import_module("relgrade.demo._ann"), name)
    if name in ("DemoResult", "ending", "run_demo"):
        return getattr(importlib.import_module("relgrade.demo._pipeline"), name)
    raise AttributeError(f"module 'relgrade.demo' has no attribute {name!r}")


__all__ = [*_DATA, *_ANN, "DemoResult", "ending", "run_demo"]
