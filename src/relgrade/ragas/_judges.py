"""ragas metrics as relgrade judges: ragas' own prompts, one (query, chunk) pair per call.

A ragas judge is a relgrade :class:`~relgrade.judge.Prompt` whose text is what ragas itself sends
(``prompt.to_string(input)``: instruction, JSON schema of the output, few-shot examples, the input
as JSON), with the query and the delimited chunk in the input's JSON strings (``escape="json"``:
the rendered message is byte for byte ``to_string(Input(question=neutralise(query),
context=delimit(chunk), ...))``). It then runs through relgrade's engine like any prompt: the same
model settings, store, retries, repair, budget and outputs. Its version is the sha256 of that text
(and of the grade key and scale), so a ragas upgrade that changes the prompt gets new store keys,
and its store keys never collide with relgrade's own prompts.

Judges
------
``ragas:context_precision``
    ragas' ``ContextPrecisionPrompt`` (``ragas.metrics._context_precision``, used by
    ``LLMContextPrecisionWithoutReference`` / ``ContextUtilization``): "verify if the context was
    useful in arriving at the given answer", answer ``{"reason", "verdict": 0|1}``; the verdict is
    the grade (scale 0-1). ragas fills ``answer`` with the pipeline's generated response (without
    reference) or the reference answer (with reference). A retrieval-only pair has neither, so the
    query itself stands in as the stated need: ``answer = query``. The verdict then reads "is
    this chunk useful to answer the query". To reproduce ragas' score on a dataset with answers,
    run ragas itself; this judge grades chunks, not answers.
``ragas:context_relevance``
    ragas' ``ContextRelevanceJudge1Prompt`` (``ragas.metrics.collections.context_relevance``,
    NVIDIA's first judge): a rating 0 (not relevant), 1 (partially), 2 (relevant) for one context,
    answer ``{"rating": N}``; the rating is the grade (scale 0-2). ragas' metric averages two judge
    prompts over all contexts joined; here the first judge grades each chunk on its own
    (pointwise, as relgrade judges), so there is no second judge and no join.

Binary verdicts are labels 0/1, so ``relgrade calibrate --scale 0,1 --threshold 1`` measures a
ragas judge against human labels side by side with relgrade's ``binary`` prompt.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache

from relgrade._errors import InputError
from relgrade.judge._prompt import Prompt

_Q, _C = "{{query}}", "{{chunk}}"


@dataclass(frozen=True)
class _Spec:
    key: str
    max_grade: int
    what: str


JUDGES: dict[str, _Spec] = {
    "ragas:context_precision": _Spec("verdict", 1, "ragas' per-chunk context precision verdict 0/1 (answer = query)"),
    "ragas:context_relevance": _Spec("rating", 2, "ragas' context relevance rating 0-2 (first judge, one chunk)"),
}


def known_judges() -> tuple[str, ...]:
    """The names ``--judge`` accepts (``relgrade`` is relgrade's own, set by ``--prompt``)."""
    return ("relgrade", *JUDGES)


def _template(name: str) -> str:
    if name == "ragas:context_precision":
        from ragas.metrics._context_precision import QAC, ContextPrecisionPrompt

        return ContextPrecisionPrompt().to_string(QAC(question=_Q, context=_C, answer=_Q))
    from ragas.metrics.collections.context_relevance.util import ContextRelevanceInput, ContextRelevanceJudge1Prompt

    return ContextRelevanceJudge1Prompt().to_string(ContextRelevanceInput(user_input=_Q, context=_C))


@lru_cache(maxsize=None)
def ragas_prompt(name: str) -> Prompt:
    """The relgrade :class:`Prompt` of ragas judge ``name`` (e.g. ``"ragas:context_precision"``)."""
    spec = JUDGES.get(name)
    if spec is None:
        raise InputError(f"--judge {name}: unknown judge; known: {', '.join(known_judges())}")
    from relgrade.ragas._dataset import require_ragas

    require_ragas()
    user = _template(name)
    if user.count(_C) != 1 or _Q not in user:
        raise InputError(f"{name}: the installed ragas renders its prompt differently than expected; "
                         "install the version the 'ragas' extra pins")
    blob = json.dumps({"judge": name, "user": user, "key": spec.key, "max_grade": spec.max_grade, "escape": "json"},
                      ensure_ascii=False, sort_keys=True)
    return Prompt(name=name, system=None, user=user, sha256=hashlib.sha256(blob.encode("utf-8")).hexdigest(),
                  max_grade=spec.max_grade, grade_key=spec.key, escape="json")


def judge_prompt(judge: str | None, prompt=None, max_grade: int | None = None):
    """What ``--judge`` / ``--prompt`` select: a ragas :class:`Prompt`, or ``prompt`` unchanged for ``relgrade``."""
    if judge is None or judge == "relgrade":
        return prompt
    if judge not in JUDGES:
        raise InputError(f"--judge {judge}: unknown judge; known: {', '.join(known_judges())}")
    if prompt is not None:
        raise InputError(f"--judge {judge} brings its own prompt; drop --prompt {prompt}")
    if max_grade is not None:
        raise InputError(f"--judge {judge} fixes its scale (0-{JUDGES[judge].max_grade}); drop --max-grade")
    return ragas_prompt(judge)
