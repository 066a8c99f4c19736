"""One configuration object for how the judge calls its model (after inspect_ai's ``GenerateConfig``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from relgrade._defaults import MAX_CONCURRENCY, MAX_SAMPLES, check_limit
from relgrade._errors import InputError


TRANSPORTS = ("auto", "litellm", "http")


@dataclass(frozen=True)
class JudgeConfig:
    """How to call the judge model. Only ``temperature``, ``max_tokens`` and ``samples`` change answers
    (they are in the store key); the rest (retries, timeout, concurrency, limits, budget) never are.

    - ``concurrency``: requests in flight at once, per endpoint when several ``api_base`` are given. A request holds its slot only while it is on the
      wire: not while it waits out a backoff or a ``Retry-After`` (another pair's request goes
      meanwhile), not while its answer is parsed and stored.
    - ``timeout``: seconds per request; a request past it is retried.
    - ``max_attempts``: attempts per call on 408/409/429/5xx, connection errors and timeouts,
      waiting ``Retry-After`` when the server sends it (capped at ``max_retry_after``), else an
      exponential backoff ``min(backoff_max, backoff_initial * 2**n)`` plus up to ``backoff_jitter``
      seconds of uniform jitter.
    - ``rpm`` / ``tpm``: optional requests / tokens per minute limits (sliding 60 s window).
    - ``max_cost``: stop launching calls before the spend (plus the worst case of the calls in
      flight) would pass this many US dollars.
    - ``samples``: answers per pair; the majority grade is recorded with the mean and the spread.
    - ``logprobs`` / ``top_logprobs``: ask for token logprobs to record the grade distribution.
    - ``retry_unjudged``: ask again for pairs stored as unjudged (their answer was unreadable).
    - ``transport``: how calls reach the model. ``"litellm"``: ``litellm.acompletion``, for every
      provider. ``"http"``: relgrade's lean aiohttp client (:mod:`relgrade.judge._http`), OpenAI-
      compatible ``/chat/completions`` only (``openai/`` models: vLLM, llama.cpp server, Ollama,
      OpenAI itself), same retries, errors, logprobs and price table. ``"auto"`` (default): ``http``
      for an ``openai/`` model with an explicit ``api_base``, else ``litellm``. Measured by
      ``benchmarks/judge_throughput.py`` (64 concurrent, 400 ms, 2 shared cores): litellm costs
      about 4 ms CPU per call and reaches about 0.7 of the ideal wall time; the lean path costs
      under 1 ms and reaches 0.92-0.97. Never part of the store key.
    """

    concurrency: int = 16
    timeout: float = 60.0
    max_attempts: int = 6
    backoff_initial: float = 1.0
    backoff_max: float = 60.0
    backoff_jitter: float = 1.0
    max_retry_after: float = 120.0
    temperature: float = 0.0
    max_tokens: int = 256
    samples: int = 1
    rpm: float | None = None
    tpm: float | None = None
    max_cost: float | None = None
    logprobs: bool = True
    top_logprobs: int = 5
    retry_unjudged: bool = False
    transport: str = "auto"

    def __post_init__(self) -> None:
        def positive_int(name: str, value, low: int = 1) -> None:
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InputError(f"{_flag(name)} must be an integer >= {low}, got {value!r}")

        def positive(name: str, value, allow_zero: bool = False) -> None:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            if not ok or value < 0 or (value == 0 and not allow_zero):
                raise InputError(f"{_flag(name)} must be a finite {'non-negative' if allow_zero else 'positive'} number, "
                                 f"got {value!r}")

        positive_int("concurrency", self.concurrency)
        positive_int("max_attempts", self.max_attempts)
        positive_int("max_tokens", self.max_tokens)
        positive_int("samples", self.samples)
        check_limit("--concurrency", self.concurrency, MAX_CONCURRENCY, "requests in flight per endpoint")
        check_limit("--samples", self.samples, MAX_SAMPLES, "answers per pair")
        positive_int("top_logprobs", self.top_logprobs)
        positive("timeout", self.timeout)
        for name in ("backoff_initial", "backoff_max", "backoff_jitter", "max_retry_after", "temperature"):
            positive(name, getattr(self, name), allow_zero=True)
        for name in ("rpm", "tpm"):
            if getattr(self, name) is not None:
                positive(name, getattr(self, name))
        if self.max_cost is not None:
            positive("max_cost", self.max_cost, allow_zero=True)
        if self.transport not in TRANSPORTS:
            raise InputError(f"--transport must be one of {', '.join(TRANSPORTS)}, got {self.transport!r}")

    def sampling(self) -> dict[str, float | int]:
        """The parameters that change the answer (part of the store key)."""
        return {"temperature": float(self.temperature), "max_tokens": int(self.max_tokens)}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")
