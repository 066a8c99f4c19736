"""Reading and writing golden sets, qrels, runs, corpora and queries.

Every reader follows one id rule (:mod:`relgrade.io._ids`): ids are strings with the whitespace around them
dropped; a JSON integer is its decimal string; any other non-string id is refused naming the file and line.

Floors (each module imports only from those above it in this list): ``_text``, ``_ids``, ``_grades``;
``_columns``; ``_order``, ``_trec``; ``_qrels``, ``_run``; ``_label_model``, ``_golden``, ``_corpus``;
``_labels``, ``_run_read``.
"""

from relgrade.io._corpus import read_corpus, read_queries
from relgrade.io._golden import GoldenCase, GoldenSet, query_id_for, read_golden
from relgrade.io._grades import lower_median, parse_grade
from relgrade.io._label_model import COLUMNS as LABEL_COLUMNS, Label, LabelSet, check_in_scale, on_judge_scale, text_sha256
from relgrade.io._labels import read_labels, read_qrels, write_labels, write_qrels
from relgrade.io._qrels import Qrels
from relgrade.io._run import Run, run_from_hits
from relgrade.io._run_read import read_run, write_run

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
