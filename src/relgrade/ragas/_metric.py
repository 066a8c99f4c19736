"""relgrade's judge as a ragas metric: ``ragas.evaluate(dataset, metrics=[RelgradeContextPrecision(...)])``.

Each sample's ``retrieved_contexts`` are graded by relgrade's engine (:func:`relgrade.judge.ajudge_pairs`:
pointwise, stored, retried, repaired, within the budget), optionally mapped onto the human scale by a
calibration :class:`~relgrade.calibration.GradeMapping`, and scored as ragas scores context precision:
average precision over the ranked contexts (ragas' ``_calculate_average_precision``)::

    rel_i = 1 if grade_i >= threshold else 0          (grade_i after the mapping, if any)
    AP    = sum_i rel_i * (sum_{j<=i} rel_j / i) / sum_i rel_i      (0 when no context is relevant)

Unjudged and failed contexts (no readable grade after the repair, or no answer after the retries)
are left out and the ranks close up: the score is the AP *of the judged contexts*, never a 0 put in
for a missing grade. A sample with no judged context scores NaN. Either case logs a warning on the
``relgrade.ragas`` logger naming the query, and :attr:`RelgradeContextPrecision.results` keeps one
:class:`SampleScore` per sample (judged / unjudged / failed counts and grades), so nothing is
dropped silently.

Doc ids for the store and the results are ``retrieved_context_ids`` when the sample has them, else
:func:`~relgrade.ragas.chunk_id_for` of the text; the query id is ``query_id_for(user_input)``.
The store key depends only on (model, prompt, sampling, query text, chunk text), so a second
``evaluate`` on the same data pays nothing, and labels already paid for by ``relgrade judge`` are reused.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragas.metrics.base import MetricOutputType, MetricType, SingleTurnMetric

from relgrade._errors import InputError
from relgrade.io import query_id_for
from relgrade.judge import JudgeConfig, Pair, ajudge_pairs
from relgrade.judge._judge import _resolve
from relgrade.ragas._dataset import chunk_id_for
from relgrade.ragas._judges import JUDGES, ragas_prompt

logger = logging.getLogger("relgrade.ragas")


def average_precision(relevant: Sequence[int]) -> float:
    """ragas' context-precision AP of binary relevances in rank order (0.0 when none is relevant)."""
    hits = 0
    total = 0.0
    for i, rel in enumerate(relevant, 1):
        if rel:
            hits += 1
            total += hits / i
    return total / hits if hits else 0.0


@dataclass(frozen=True)
class SampleScore:
    """What the metric did with one sample: its score and how many contexts were judged."""

    query_id: str
    user_input: str
    score: float
    judged: int
    unjudged: int
    failed: int
    grades: tuple[int | None, ...]
    """Per context in rank order: the grade used (after the mapping), None when not judged."""


@dataclass
class RelgradeContextPrecision(SingleTurnMetric):
    """Context precision of a sample's retrieved contexts graded by relgrade's judge (see the module doc).

    ``model``, ``prompt`` (``graded``, ``binary``, a file, a :class:`~relgrade.judge.Prompt` or a ragas
    judge name such as ``"ragas:context_precision"``), ``api_base``, ``api_key_env``, ``store`` and
    ``config`` (:class:`~relgrade.judge.JudgeConfig`) are :func:`relgrade.judge.judge_pairs`'.
    ``mapping`` is a calibration ``GradeMapping`` (e.g. ``GradeMapping.from_dict(calibrate_json["mapping"])``).
    ``threshold``: a context is relevant when its grade is ``>= threshold`` (default 1 on a 0-1
    scale, else 2, as ``relgrade calibrate --threshold``).
    """

    name: str = "relgrade_context_precision"
    _required_columns: dict = field(default_factory=lambda: {MetricType.SINGLE_TURN: {"user_input", "retrieved_contexts"}})
    output_type: MetricOutputType = MetricOutputType.CONTINUOUS
    model: str | None = None
    prompt: Any = None
    api_base: str | None = None
    api_key_env: str | None = None
    store: str | Path | None = None
    config: JudgeConfig | None = None
    mapping: Any = None
    threshold: int | None = None
    results: list[SampleScore] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.prompt, str) and self.prompt in JUDGES:
            self.prompt = ragas_prompt(self.prompt)
        self.model, resolved = _resolve(self.model, self.prompt, None)
        self.prompt = resolved
        scale = tuple(self.mapping.scale) if self.mapping is not None else resolved.scale
        if self.threshold is None:
            self.threshold = 1 if max(scale) == 1 else 2
        if not min(scale) < self.threshold <= max(scale):
            raise InputError(f"threshold {self.threshold} is not inside the scale {list(scale)}; "
                             f"pick a grade from {min(scale) + 1} to {max(scale)}")

    def init(self, run_config: Any) -> None:
        """Nothing to set up: timeouts and retries come from ``config``, not ragas' RunConfig."""

    def _only_required_columns_single_turn(self, sample):
        return sample  # keep retrieved_context_ids (not a ragas "required column") for the doc ids

    def _grade(self, judgment) -> int | None:
        if judgment is None or judgment.grade is None:
            return None
        if self.mapping is None:
            return judgment.grade
        use_expected = self.mapping.input == "expected_grade" and judgment.expected_grade is not None
        return self.mapping.apply(judgment.expected_grade if use_expected else judgment.grade)

    async def _single_turn_ascore(self, sample: Any, callbacks: Any = None) -> float:
        query = sample.user_input
        contexts = list(sample.retrieved_contexts or [])
        if not isinstance(query, str) or not query.strip():
            raise InputError("relgrade_context_precision needs 'user_input' (the query) in every sample")
        ids = [str(i) for i in sample.retrieved_context_ids] if sample.retrieved_context_ids else None
        if ids is not None and len(ids) != len(contexts):
            raise InputError(f"{len(ids)} retrieved_context_ids but {len(contexts)} retrieved_contexts for "
                             f"{query[:60]!r}; give one id per context")
        ids = ids or [chunk_id_for(c) for c in contexts]
        qid = query_id_for(query)
        pairs = [Pair(qid, d, query, c) for d, c in zip(ids, contexts)]
        result = await ajudge_pairs(pairs, model=self.model, prompt=self.prompt, store=self.store,
                                    config=self.config, api_base=self.api_base, api_key_env=self.api_key_env)
        by_id = {j.doc_id: j for j in result.judgments}
        grades = tuple(self._grade(by_id.get(d)) for d in ids)
        judged = [g for g in grades if g is not None]
        failed = sum(1 for d in ids if d not in by_id or by_id[d].status == "failed")
        unjudged = len(ids) - len(judged) - failed
        score = average_precision([int(g >= self.threshold) for g in judged]) if judged else math.nan
        if len(judged) < len(ids):
            logger.warning("relgrade_context_precision: query %s: %d of %d contexts not judged (%d unjudged, %d failed); "
                           "%s", qid, len(ids) - len(judged), len(ids), unjudged, failed,
                           "score is NaN" if not judged else "score is the AP of the judged contexts")
        self.results.append(SampleScore(qid, query, score, len(judged), unjudged, failed, grades))
        return score
