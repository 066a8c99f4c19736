"""Circularity: a judge that shares a model family with the system it grades (``audit --system-model``).

When the model behind a system's reranker or generator and the judge come from one family, the judge tends to
prefer what its own family retrieves and writes, and judge-based evaluation of that system turns circular: the
system is scored by the preferences it was built from (Clarke & Dietz 2024, "LLM-based relevance assessment still
can't replace human relevance assessment"). A family here is a vendor's line of models, read
from the model name (:data:`FAMILIES`); a name none of them matches has no known family, and only the same name
counts as shared.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["FAMILIES", "Circularity", "circularity", "family"]

FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(pattern)) for name, pattern in (
    ("OpenAI GPT and o-series", r"gpt|chatgpt|davinci|text-embedding-|(?:^|[/:.])o[1-9](?:$|[-:])"),
    ("Anthropic Claude", r"claude"),
    ("Google Gemini and Gemma", r"gemini|gemma|palm|bison"),
    ("Meta Llama", r"llama"),
    ("Mistral", r"mistral|mixtral|ministral|codestral|magistral|pixtral|devstral"),
    ("Alibaba Qwen", r"qwen|qwq"),
    ("DeepSeek", r"deepseek"),
    ("Microsoft Phi", r"(?:^|[/:._-])phi-?\d"),
    ("Cohere Command", r"command-|c4ai|cohere|(?:^|[/:])aya|rerank-(?:english|multilingual)"),
    ("xAI Grok", r"grok"),
    ("IBM Granite", r"granite"),
    ("Amazon Nova and Titan", r"amazon\.nova|(?:^|[/:.])nova-|titan"),
    ("Zhipu GLM", r"(?:^|[/:._-])glm"),
    ("Moonshot Kimi", r"kimi|moonshot"),
))


def family(model: str) -> str | None:
    """The family of a model name (``openai/gpt-4o-mini`` -> ``OpenAI GPT and o-series``), None when unknown. The
    provider prefix (the first segment of a litellm name with a ``/``) is not read: ``ollama/llama3`` is Llama, not
    a guess from "ollama"."""
    name = model.strip().lower()
    if "/" in name:
        name = name.split("/", 1)[1]
    return next((fam for fam, pattern in FAMILIES if pattern.search(name)), None)


@dataclass(frozen=True)
class Circularity:
    """A system model against the judge: their families, and whether they are one (``shared``)."""

    system_model: str
    system_family: str | None
    judge_model: str
    judge_family: str | None
    shared: bool

    def line(self) -> str:
        if self.shared and self.system_model.lower() == self.judge_model.lower():
            why = "is the judge itself"
        elif self.shared:
            why = f"shares the judge's family ({self.system_family})"
        elif self.system_family is None:
            return (f"note: the family of the system model {self.system_model} is unknown to relgrade: check yourself "
                    f"that it is not the judge's ({self.judge_family or 'unknown'})")
        else:
            return f"system model {self.system_model} ({self.system_family}): not the judge's family"
        return (f"warning: circularity: the system model {self.system_model} {why}: the judge favours what its own "
                "family retrieves and writes, so judge-based numbers for this system run high (Clarke & Dietz "
                "2024); judge it with a model of another family, or rely on human labels (PPI++)")

    def to_dict(self) -> dict[str, Any]:
        return {"system_model": self.system_model, "system_family": self.system_family,
                "judge_model": self.judge_model, "judge_family": self.judge_family, "shared": self.shared}


def circularity(judge_model: str, system_models: Sequence[str]) -> tuple[Circularity, ...]:
    """One :class:`Circularity` per system model (``--system-model``, repeatable: a reranker and a generator)."""
    judge_family = family(judge_model)
    out = []
    for model in system_models:
        fam = family(model)
        same = model.strip().lower() == judge_model.strip().lower()
        out.append(Circularity(model, fam, judge_model, judge_family, same or (fam is not None and fam == judge_family)))
    return tuple(out)
