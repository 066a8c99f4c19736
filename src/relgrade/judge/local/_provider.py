"""The litellm provider ``local``: the embedded model of :mod:`relgrade.judge.local._model` behind ``litellm.acompletion``.

The handler is a litellm ``CustomLLM`` registered as provider ``local``, so the judge core calls
``litellm.acompletion(model="local/gemma3-270m", messages=..., logprobs=True)`` as for any API
model. The message contents (system first, then the rest in order) are joined with a blank line
into one raw completion prompt (no chat template: the model is a base model) and graded by
:meth:`relgrade.judge.local._model._Engine.judge`. The response follows OpenAI's shape: ``content`` is
``{"grade": argmax, "reason": ...}`` and ``choices[0].logprobs`` carries the renormalised grade
probabilities as the grade token's ``top_logprobs``; usage is the prompt's token count plus one,
and the cost is 0 (``local/<model>`` is registered free in litellm's price table).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import time

from relgrade.judge.local._model import (
    _GRADES, _N_CTX, _REASON, DEFAULT_MODEL, GradeDistribution, _engine, _lock, _model_path, _require_llama_cpp,
)

__all__ = ["register"]

_handler = None


def _prompt_of(messages: list) -> str:
    """Join the messages' text contents (system first, then the rest in order) with blank lines."""
    texts = []
    ordered = [m for m in messages if m.get("role") == "system"]
    ordered += [m for m in messages if m.get("role") != "system"]
    for message in ordered:
        content = message.get("content")
        if isinstance(content, list):  # OpenAI content parts
            content = "".join(
                part.get("text", "") for part in content if isinstance(part, dict)
            )
        if content:
            texts.append(str(content))
    return "\n\n".join(texts)


def _logprob(p: float) -> float:
    return math.log(p) if p > 0.0 else -9999.0  # OpenAI's value for "very unlikely"


def _fill_response(model_response, model: str, dist: GradeDistribution):
    from litellm.types.utils import Choices, Message, Usage

    grade = str(dist.grade)
    top = [{"token": g, "logprob": _logprob(p), "bytes": list(g.encode())} for g, p in zip(_GRADES, dist.probs)]
    logprobs = {
        "content": [
            {
                "token": grade,
                "logprob": _logprob(dist.probs[dist.grade]),
                "bytes": list(grade.encode()),
                "top_logprobs": top,
            }
        ]
    }
    content = json.dumps({"grade": dist.grade, "reason": _REASON})
    model_response.choices = [
        Choices(
            finish_reason="stop",
            index=0,
            message=Message(content=content, role="assistant"),
            logprobs=logprobs,
        )
    ]
    model_response.model = f"local/{model}"
    model_response.created = int(time.time())
    model_response.usage = Usage(
        prompt_tokens=dist.prompt_tokens, completion_tokens=1, total_tokens=dist.prompt_tokens + 1
    )
    hidden = getattr(model_response, "_hidden_params", None)
    if isinstance(hidden, dict):
        hidden["response_cost"] = 0.0
    return model_response


def _make_handler():
    from litellm.llms.custom_llm import CustomLLM

    class LocalJudge(CustomLLM):
        """litellm provider ``local``: grades by the next-token distribution of a GGUF model."""

        def completion(self, model, messages, api_base, custom_prompt_dict, model_response, *args, **kwargs):
            dist = _engine(model).judge(_prompt_of(messages))
            _register_cost(model)
            return _fill_response(model_response, model, dist)

        async def acompletion(self, model, messages, api_base, custom_prompt_dict, model_response, *args, **kwargs):
            engine = await asyncio.to_thread(_engine, model)  # may load the model: off the loop
            # Queue on the event loop, not in a worker thread: a call cancelled (e.g. timed out)
            # while waiting for its turn then leaves nothing behind.
            async with engine.gate():
                dist = await asyncio.to_thread(engine.judge, _prompt_of(messages))
            _register_cost(model)
            return _fill_response(model_response, model, dist)

    return LocalJudge()


def _register_cost(model: str) -> None:
    """Declare ``local/<model>`` free, so ``litellm.completion_cost`` returns 0.0 for it."""
    import litellm

    key = f"local/{model}"
    # Written directly: litellm.register_model() logs a warning about cache pricing.
    litellm.model_cost.setdefault(
        key,
        {
            "input_cost_per_token": 0.0,
            "output_cost_per_token": 0.0,
            "litellm_provider": "local",
            "mode": "chat",
            "max_input_tokens": _N_CTX,
            "max_output_tokens": 1,
        },
    )


def register(model: str | None = None) -> None:
    """Register the litellm provider ``local`` (idempotent); check the 'local' extra is installed.

    After it, ``litellm.acompletion(model="local/gemma3-270m", ...)`` (or ``local/<file.gguf>``)
    runs offline in-process. With ``model`` (``local/...``) the model file is also resolved now,
    so a missing model package or a wrong path is reported before any judging starts; without it
    the bundled default model is checked. Raises :class:`~relgrade._errors.InputError` if
    ``llama-cpp-python`` or the model is missing.
    """
    global _handler
    _require_llama_cpp()
    name = (model or DEFAULT_MODEL).removeprefix("local/")
    _model_path(name)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    with _lock:
        if _handler is None:
            _handler = _make_handler()
        entries = [e for e in litellm.custom_provider_map if e.get("provider") != "local"]
        litellm.custom_provider_map = [*entries, {"provider": "local", "custom_handler": _handler}]
    _register_cost(name)
