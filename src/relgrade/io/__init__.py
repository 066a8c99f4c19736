"""Reading and writing golden sets, qrels, runs, corpora and queries."""

from relgrade.io._corpus import read_corpus, read_queries
from relgrade.io._golden import GoldenCase, GoldenSet, query_id_for, read_golden
from relgrade.io._labels import (
    COLUMNS as LABEL_COLUMNS, Label, LabelSet, check_in_scale, lower_median, on_judge_scale, parse_grade, read_labels,
    text_sha256, write_labels,
)
from relgrade.io._qrels import Qrels, read_qrels, write_qrels
from relgrade.io._run import Run, read_run, run_from_hits, write_run

__all__ = [
    "LABEL_COLUMNS",
    "GoldenCase",
    "Label",
    "LabelSet",
    "check_in_scale",
    "lower_median",
    "on_judge_scale",
    "parse_grade",
    "read_labels",
    "text_sha256",
    "write_labels",
    "GoldenSet",
    "Qrels",
    "Run",
    "query_id_for",
    "read_corpus",
    "read_golden",
    "read_qrels",
    "read_queries",
    "read_run",
    "run_from_hits",
    "write_qrels",
    "write_run",
]
