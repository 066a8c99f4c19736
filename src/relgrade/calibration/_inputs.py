"""Reading judge and human labels for calibration ("bring your own judge").

Judge labels: any qrels file :func:`relgrade.io.read_qrels` reads, or the JSONL *details* file the
judge writes beside its qrels (one object per judgment with ``query_id``, ``doc_id``, ``grade`` — null
when unjudged — and optional ``distribution``, ``expected_grade``, ``reason``, ``query``, ``text``,
``model``). Human labels: TREC qrels, CSV/JSONL with an optional ``annotator`` column, or a file
written by ``relgrade sample`` once humans filled its ``grade`` column (rows still empty are skipped
and counted). Grades outside the declared scale are an error naming the file, the count and one
line: never clipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relgrade._words import plural
from relgrade.io._labels import DEFAULT_SCALE, LabelSet, on_judge_scale, read_labels


@dataclass(frozen=True)
class JudgeLabels:
    """A judge's grades with what came beside them (scores, distributions, texts, reasons)."""

    name: str
    labels: Mapping[str, Mapping[str, int]]
    expected: Mapping[str, Mapping[str, float]] | None = None
    distribution: Mapping[tuple[str, str], Mapping[int, float]] = field(default_factory=dict)
    info: Mapping[tuple[str, str], Mapping[str, str]] = field(default_factory=dict)
    model: str | None = None
    n_unjudged: int = 0
    source: str | None = None
    scale: tuple[int, ...] | None = None
    """The judge's own scale when its details file says so (``"scale": [0, 1]``), else None (``--scale``)."""
    unjudged: tuple[tuple[str, str], ...] = ()
    """The ``(query_id, doc_id)`` pairs of the details file whose grade is null (pooled, not graded)."""


@dataclass(frozen=True)
class HumanLabels:
    """Human grades (consensus = lower median), per-annotator grades, texts, and skipped empty rows."""

    labels: Mapping[str, Mapping[str, int]]
    annotations: Mapping[tuple[str, str], Mapping[str, int]] = field(default_factory=dict)
    info: Mapping[tuple[str, str], Mapping[str, str]] = field(default_factory=dict)
    n_empty: int = 0
    source: str | None = None
    weights: Mapping[tuple[str, str], float] | None = None
    """Inclusion weights ``{(query_id, doc_id): 1/pi}`` when the file has a ``weight`` column (a sample file)."""
    design: str | None = None
    """The sampling design the file records (``queries`` or ``strata``), else None."""

    def weighting(self) -> tuple[dict[tuple[str, str], float] | None, str | None]:
        """``(weights or None, note or None)`` for :func:`~relgrade.calibration.agreement`. A ``strata`` sample
        whose ``weight`` column is empty is compared unweighted, with a note saying so, never silently (weights
        missing on some compared pairs only are refused by ``agreement`` itself)."""
        if self.weights:
            return dict(self.weights), None
        if self.design == "strata":
            return None, ("the sample's design is strata but its 'weight' column is empty: compared unweighted, which "
                          "over-represents the rare judge grades (kappa may be inflated); restore the weight column "
                          "that relgrade sample wrote")
        return None, None


def judge_labels(labels: LabelSet, name: str) -> JudgeLabels:
    """:class:`JudgeLabels` from a label set read by :func:`relgrade.io.read_labels`."""
    expected: dict[str, dict[str, float]] = {}
    dist: dict[tuple[str, str], Mapping[int, float]] = {}
    for lab in labels.labels:
        if lab.expected_grade is not None:
            expected.setdefault(lab.query_id, {})[lab.doc_id] = lab.expected_grade
        if lab.distribution is not None:
            dist[(lab.query_id, lab.doc_id)] = lab.distribution
    return JudgeLabels(name, labels.grades(), expected or None, dist, labels.info(), labels.model, labels.n_empty,
                       labels.source, labels.scale, labels.unjudged)


def read_judge(path: str | Path, *, scale=DEFAULT_SCALE, name: str | None = None) -> JudgeLabels:
    """Judge labels from a qrels file or a judge details JSONL (:func:`relgrade.io.read_labels`)."""
    return judge_labels(read_labels(path, source="judge", scale=scale), name or Path(path).stem)


def read_human(path: str | Path, *, scale=DEFAULT_SCALE) -> HumanLabels:
    """Human labels; rows of a ``relgrade sample`` file whose grade is still empty are skipped and counted."""
    from relgrade._errors import InputError

    labels = read_labels(path, source="human", scale=scale)
    if not labels.labels:
        raise InputError(f"no graded row ({plural(labels.n_empty, 'row')} with an empty grade); fill the 'grade' column first",
                         path=path)
    return HumanLabels(labels.grades(), labels.annotations(), labels.info(), labels.n_empty, str(path),
                       labels.weights(), labels.design)


def binarize(labels: Mapping[Any, Mapping[str, int]], threshold: int, scale: tuple[int, int]) -> dict[Any, dict[str, int]]:
    """``labels`` (``{query: {doc: grade}}`` or ``{(query, doc): {annotator: grade}}``) on a binary ``scale``:
    ``scale[1]`` where the grade is ``>= threshold``, else ``scale[0]`` (:func:`relgrade.io.on_judge_scale`)."""
    grades = [g for docs in labels.values() for g in docs.values()]
    lo = min([*grades, threshold - 1])
    hi = max([*grades, threshold, lo + 2])
    return on_judge_scale(labels, scale, tuple(range(lo, hi + 1)), threshold)[1]


def iter_pairs(labels: Mapping[str, Mapping[str, int]]) -> Iterable[tuple[str, str, int]]:
    for q, docs in labels.items():
        for d, g in docs.items():
            yield q, d, g


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False)
