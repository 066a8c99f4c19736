"""relgrade's judge as a ragas metric.

ragas 0.4's public metric API (``ragas.metrics.collections``: ``ascore(**inputs)`` and
``abatch_score(inputs)`` returning :class:`ragas.metrics.MetricResult`, used inside an ``@experiment``)::

    metric = RelgradeContextPrecision(model="openai/gpt-4o-mini", config=JudgeConfig(max_cost=1.0))
    results = await metric.abatch_score([{"user_input": q, "retrieved_contexts": [...]}, ...])
    result = await metric.ascore(user_input=q, retrieved_contexts=[...], retrieved_context_ids=[...])

It is also a legacy ``SingleTurnMetric``, so the deprecated ``ragas.evaluate(dataset, metrics=[metric])``
keeps working. Every path judges through **one** :class:`relgrade.judge.JudgeSession` per metric
(one store connection, one budget, one caller): ``max_cost``, ``concurrency``, ``rpm`` and ``tpm`` of
``config`` hold for all the samples the metric scores, not per sample. Once ``max_cost`` would be
exceeded, the contexts not yet judged count as not judged (below) and a warning says so.

Each sample's ``retrieved_contexts`` are graded by relgrade's engine (pointwise, stored, retried,
repaired, within the budget), optionally mapped onto the human scale by a
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
from relgrade.judge import JudgeConfig, JudgeSession, Pair
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
    session: JudgeSession | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.prompt, str) and self.prompt in JUDGES:
            self.prompt = ragas_prompt(self.prompt)
        # One judging session for every sample this metric scores (module docstring).
        self.session = JudgeSession(model=self.model, prompt=self.prompt, store=self.store, config=self.config,
                                    api_base=self.api_base, api_key_env=self.api_key_env)
        self.model, resolved = self.session.model, self.session.prompt
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
        return await self._score(sample.user_input, sample.retrieved_contexts, sample.retrieved_context_ids)

    async def ascore(self, user_input: str, retrieved_contexts: Sequence[str],
                     retrieved_context_ids: Sequence[Any] | None = None) -> Any:
        """ragas' modern metric API: one sample's score as a :class:`ragas.metrics.MetricResult`."""
        from ragas.metrics import MetricResult

        score = await self._score(user_input, retrieved_contexts, retrieved_context_ids)
        last = self.results[-1]
        return MetricResult(value=score, reason=f"{last.judged} of {len(last.grades)} contexts judged; "
                                                f"grades {list(last.grades)}")

    async def abatch_score(self, inputs: Sequence[dict[str, Any]]) -> list[Any]:
        """ragas' modern batch API: every sample scored concurrently through the one session."""
        import asyncio

        return list(await asyncio.gather(*(self.ascore(**row) for row in inputs)))

    def batch_score(self, inputs: Sequence[dict[str, Any]]) -> list[Any]:
        """Synchronous :meth:`abatch_score` (not from inside a running event loop)."""
        import asyncio

        async def run() -> list[Any]:
            try:
                return await self.abatch_score(inputs)
            finally:
                await self.session.aclose()

        return asyncio.run(run())

    async def _score(self, query: Any, contexts: Any, ids: Any) -> float:
        contexts = list(contexts or [])
        if not isinstance(query, str) or not query.strip():
            raise InputError("relgrade_context_precision needs 'user_input' (the query) in every sample")
        ids = [str(i) for i in ids] if ids else None
        if ids is not None and len(ids) != len(contexts):
            raise InputError(f"{len(ids)} retrieved_context_ids but {len(contexts)} retrieved_contexts for "
                             f"{query[:60]!r}; give one id per context")
        ids = ids or [chunk_id_for(c) for c in contexts]
        qid = query_id_for(query)
        pairs = [Pair(qid, d, query, c) for d, c in zip(ids, contexts)]
        result = await self.session.ajudge(pairs)
        by_id = {j.doc_id: j for j in result.judgments}
        grades = tuple(self._grade(by_id.get(d)) for d in ids)
        judged = [g for g in grades if g is not None]
        stopped = {p.doc_id for p in result.remaining}
        failed = sum(1 for d in ids if d not in stopped and (d not in by_id or by_id[d].status == "failed"))
        unjudged = len(ids) - len(judged) - failed
        score = average_precision([int(g >= self.threshold) for g in judged]) if judged else math.nan
        if len(judged) < len(ids):
            why = f"; max_cost reached, {len(stopped)} not sent" if stopped else ""
            logger.warning("relgrade_context_precision: query %s: %d of %d contexts not judged (%d unjudged, %d failed%s); "
                           "%s", qid, len(ids) - len(judged), len(ids), unjudged, failed, why,
                           "score is NaN" if not judged else "score is the AP of the judged contexts")
        self.results.append(SampleScore(qid, query, score, len(judged), unjudged, failed, grades))
        return score
