"""ragas, both ways: ragas datasets as golden sets and runs, ragas prompts as relgrade judges, and
relgrade's judge as a ragas metric.

::

    from relgrade.ragas import golden_from_ragas, run_from_ragas, to_ragas, ragas_prompt
    golden = golden_from_ragas("eval.jsonl")          # EvaluationDataset.to_jsonl output, or the dataset
    run = run_from_ragas(dataset)                      # retrieved_contexts(_ids) in rank order
    dataset = to_ragas(golden, run, k=10)              # -> ragas EvaluationDataset

    judge_pairs(pairs, prompt=ragas_prompt("ragas:context_precision"), ...)   # or relgrade judge --judge ...

    from relgrade.ragas import RelgradeContextPrecision
    ragas.evaluate(dataset, metrics=[RelgradeContextPrecision(model="openai/gpt-4o-mini")])

ragas itself is imported only when needed; without it these raise ``InputError: needs the 'ragas'
extra: pip install 'relgrade[ragas]'`` (reading and writing ragas JSONL works without it).
"""

from relgrade.ragas._dataset import (
    chunk_id_for, golden_from_ragas, ragas_rows, require_ragas, run_from_ragas, to_ragas, write_ragas_jsonl,
)
from relgrade.ragas._judges import JUDGES, judge_prompt, known_judges, ragas_prompt

__all__ = [
    "JUDGES",
    "RelgradeContextPrecision",
    "SampleScore",
    "average_precision",
    "chunk_id_for",
    "golden_from_ragas",
    "judge_prompt",
    "known_judges",
    "ragas_prompt",
    "ragas_rows",
    "require_ragas",
    "run_from_ragas",
    "to_ragas",
    "write_ragas_jsonl",
]

_METRIC = {"RelgradeContextPrecision", "SampleScore", "average_precision"}


def __getattr__(name: str):
    """``RelgradeContextPrecision`` subclasses a ragas class, so it is built on first access."""
    if name in _METRIC:
        require_ragas()
        from relgrade.ragas import _metric

        return getattr(_metric, name)
    raise AttributeError(f"module 'relgrade.ragas' has no attribute {name!r}")
