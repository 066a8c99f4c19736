"""One model call through litellm (or the lean OpenAI-compatible transport of ``_http``): retries (tenacity), timeout, rate limits, cost, and clear failures.

Which errors are retried (408, 409, 429, 5xx, connection errors, timeouts; ``Retry-After`` honoured) and which
stop the whole run with one line (400, 401, 402, 403, 404, 422 and a missing key, e.g. ``authentication failed
for openai: set OPENAI_API_KEY``; a context-window or content-policy rejection concerns that pair only) is
decided in :mod:`relgrade.judge.transport._classify`. litellm's and the OpenAI client's own retries are turned off so
every attempt is ours and counted.

Transport (``JudgeConfig.transport``): ``litellm.acompletion`` for every provider, or, for an
``openai/`` model at an explicit ``api_base`` (``auto``) or when asked (``http``), the lean aiohttp
client of :mod:`relgrade.judge.transport._http`, whose errors carry the same ``status_code`` and response
headers so the classification below is the same; its cost is ``prompt_tokens * input price +
completion_tokens * output price`` from litellm's price table, read as JSON without importing
litellm (:mod:`relgrade.judge.transport._prices`): the lean path never imports litellm.

Only provider and transport errors (:func:`provider_errors`) are retried or classified; any other
exception raised in a call (a ``KeyError`` or ``TypeError`` in relgrade) is a bug and propagates.

API keys are never logged or stored (:mod:`relgrade.judge.transport._secrets`): every key a call may use is
registered before the first request, every error text that leaves this module goes through
:func:`redact`, and every answer is masked before it is parsed and stored.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from relgrade._errors import InputError
from relgrade.judge._config import JudgeConfig
from relgrade.judge.transport._classify import (
    fatal_message, is_fatal, is_retryable, key_env, pair_only, provider_errors, provider_of, retry_after, status_of,
    what_failed,
)
from relgrade.judge.transport._prices import count_tokens, price_per_token, usage_tokens
from relgrade.judge.transport._secrets import check_key_places, collect_secrets, install_log_filter, mask, redact

WINDOW_SECONDS = 60.0  # the rpm / tpm window (a module attribute so tests can shorten it)


class FatalCallError(Exception):
    """A failure that no retry fixes and that concerns every pair (auth, bad request, no model)."""


class PairCallError(Exception):
    """A failure of this pair only (no answer after the retries, context window exceeded)."""


class Halted(Exception):
    """The call was not sent: the run is stopping (see :meth:`Caller.halt`)."""


def import_litellm():
    """litellm, imported lazily with the local price table and without its banner."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


@dataclass(frozen=True)
class Answer:
    """What one paid call returned."""

    content: str
    logprobs: Any
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    latency_s: float
    attempts: int


class _Window:
    """A sliding window limit of ``per_minute`` requests or tokens per :data:`WINDOW_SECONDS`."""

    def __init__(self, per_minute: float):
        self.limit = float(per_minute)
        self.events: collections.deque[tuple[float, float]] = collections.deque()
        self.used = 0.0
        self.lock = asyncio.Lock()

    async def acquire(self, weight: float) -> None:
        weight = min(weight, self.limit)
        async with self.lock:
            while True:
                now, span = time.monotonic(), WINDOW_SECONDS
                while self.events and self.events[0][0] <= now - span:
                    self.used -= self.events.popleft()[1]
                if self.used + weight <= self.limit or not self.events:
                    self.events.append((now, weight))
                    self.used += weight
                    return
                await asyncio.sleep(self.events[0][0] + span - now + 0.001)


class Caller:
    """Calls one model with the retry, timeout and rate-limit policy of a :class:`JudgeConfig`.

    ``api_base`` is one base URL or several (a fleet of OpenAI-compatible servers): calls are spread
    over them, ``config.concurrency`` requests in flight per endpoint, and a failing endpoint is taken
    out of rotation for a while (:mod:`relgrade.judge.transport._endpoints`).
    """

    def __init__(self, model: str, config: JudgeConfig, *, api_base: "str | Sequence[str] | None" = None,
                 api_key: str | None = None, api_key_env: str | None = None):
        self.model = model
        self.config = config
        self.api_bases = _bases(api_base)
        self.api_base = self.api_bases[0] if self.api_bases else None
        self.api_key_env = api_key_env
        check_key_places(model=model, api_base=api_base, api_key_env=api_key_env, api_key=api_key)
        self.local = model.startswith("local/")
        self.logprobs = config.logprobs
        self.rpm = _Window(config.rpm) if config.rpm else None
        self.tpm = _Window(config.tpm) if config.tpm else None
        self.transport = choose_transport(model, config.transport, self.api_base)
        env = key_env(model, api_key_env)
        self.api_key = api_key if api_key is not None else (os.environ.get(api_key_env) if api_key_env else None)
        if self.api_key is None and self.transport == "http":  # what litellm would read for an openai/ model
            self.api_key = os.environ.get(env)
        # Every key this call may use, on every transport, registered before the first request (issue 15).
        self.secrets = collect_secrets(self.api_key, env_names=(api_key_env, env))
        self.sleeps: list[tuple[str, float]] = []  # (status or error type, seconds waited) per retry
        # A slot is held for the request itself only: not while waiting out a backoff or a Retry-After,
        # not while the answer is parsed and stored (so ``concurrency`` is requests in flight per endpoint).
        self.capacity = config.concurrency * max(1, len(self.api_bases))
        self.slots = asyncio.Semaphore(self.capacity)
        self.halted: str | None = None  # set by halt(): no new request goes out
        self.http = None
        self.router = None
        self.litellm = None
        if self.transport == "http":
            from relgrade.judge.transport._endpoints import EndpointPool

            self.http = EndpointPool(self.api_bases or [None], self.api_key, concurrency=config.concurrency)
        else:
            self.litellm = import_litellm()
            install_log_filter(self.secrets)
            if len(self.api_bases) > 1:
                from relgrade.judge.transport._endpoints import make_router

                self.router = make_router(self.litellm, model, self.api_bases, self.api_key, config)

    @functools.cached_property
    def prices(self) -> tuple[float, float] | None:
        """(input, output) USD per token, read when the first answer arrives (while the first requests are on the
        wire, not before them: the price table is a 1.5 MB JSON file)."""
        return price_per_token(self.model)

    def halt(self, why: str) -> None:
        """Send no further request (a fatal error or a stop): a call waiting for a slot raises :class:`Halted`."""
        self.halted = self.halted or why

    async def aclose(self) -> None:
        """Close the lean transport's connections (also done when the event loop shuts down)."""
        if self.http is not None:
            await self.http.aclose()

    def _kwargs(self, sample: int) -> dict[str, Any]:
        cfg = self.config
        kwargs: dict[str, Any] = {"model": self.model, "temperature": cfg.temperature,
                                  "max_tokens": cfg.max_tokens, "timeout": cfg.timeout}
        if self.local:
            if self.logprobs:
                kwargs.update(logprobs=True, top_logprobs=4)
            return kwargs
        kwargs.update(max_retries=0, num_retries=0, drop_params=True)
        if self.logprobs:
            kwargs.update(logprobs=True, top_logprobs=cfg.top_logprobs)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        if sample and cfg.temperature > 0:
            kwargs["seed"] = sample
        return kwargs

    async def complete(self, messages: list[dict[str, str]], *, sample: int = 0, est_tokens: int = 0) -> Answer:
        """One answer, retried per the policy; raises :class:`FatalCallError` or :class:`PairCallError`."""
        # The common case first, without tenacity's per-call bookkeeping; a failure of this first attempt is
        # replayed as tenacity's attempt 1 below, so the retry policy is the same.
        try:
            return await self._once(messages, sample, est_tokens, 1)
        except (FatalCallError, PairCallError, Halted):
            raise
        except Exception as exc:  # noqa: BLE001 - replayed below, classified there (a bug propagates there)
            first: BaseException | None = exc
        from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

        cfg = self.config

        def wait(state) -> float:
            exc = state.outcome.exception() if state.outcome else None
            if getattr(exc, "failover", False):  # another endpoint is healthy: go there now
                return 0.0
            after = retry_after(exc) if exc is not None else None
            if after is not None:
                return min(after, cfg.max_retry_after)
            exp = cfg.backoff_initial * 2.0 ** (state.attempt_number - 1)
            return min(cfg.backoff_max, exp) + random.uniform(0.0, cfg.backoff_jitter)

        def before_sleep(state) -> None:
            exc = state.outcome.exception() if state.outcome else None
            what = str(status_of(exc) or type(exc).__name__)
            self.sleeps.append((what, float(state.next_action.sleep if state.next_action else 0.0)))

        attempts = 0
        try:
            async for attempt in AsyncRetrying(stop=stop_after_attempt(cfg.max_attempts), wait=wait,
                                               retry=retry_if_exception(is_retryable), reraise=True,
                                               before_sleep=before_sleep):
                with attempt:
                    attempts += 1
                    if first is not None:
                        replay, first = first, None
                        raise replay
                    return await self._once(messages, sample, est_tokens, attempts)
        except (FatalCallError, PairCallError, Halted):
            raise
        except provider_errors() as exc:  # classified below; anything else is a bug and propagates
            status = status_of(exc)
            if pair_only(exc):
                raise PairCallError(redact(f"{type(exc).__name__}: {exc}", self.secrets)[:300]) from None
            if is_fatal(exc):
                if status == 400 and self.logprobs and "logprob" in str(exc).lower():
                    self.logprobs = False  # the server refuses logprobs: go on without them
                    return await self.complete(messages, sample=sample, est_tokens=est_tokens)
                raise FatalCallError(fatal_message(exc, self.model, self.api_key_env, self.secrets)) from None
            what = what_failed(exc, status)
            detail = redact(" ".join(str(exc).split()), self.secrets)[:200]
            raise PairCallError(f"no answer after {attempts} attempts ({what}: {detail})") from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def _once(self, messages, sample: int, est_tokens: int, attempt: int) -> Answer:
        async with self.slots:
            if self.halted is not None:
                raise Halted(self.halted)
            if self.rpm is not None:
                await self.rpm.acquire(1)
            if self.tpm is not None:
                await self.tpm.acquire(est_tokens + self.config.max_tokens)
            if self.halted is not None:
                raise Halted(self.halted)
            if self.http is not None:
                answer = await self._once_http(messages, sample, attempt)
            else:
                answer = await self._once_litellm(messages, sample, attempt)
            if self.secrets:  # a server that echoes the key in its answer: masked before parsing and storing
                answer = _masked(answer, self.secrets)
        # Yield once: a worker woken by the freed slot sends its request before this answer is parsed and
        # stored, so when answers arrive together the next requests do not queue behind that CPU work.
        await asyncio.sleep(0)
        return answer

    async def _once_litellm(self, messages, sample: int, attempt: int) -> Answer:
        start = time.perf_counter()
        guard = self.config.timeout * 1.5 + 1.0  # in case a provider ignores its timeout
        call = self.router.acompletion if self.router is not None else self.litellm.acompletion  # type: ignore[union-attr]
        kwargs = self._kwargs(sample)
        if self.router is not None:  # the Router holds the model, bases and key of every deployment
            for name in ("api_base", "api_key", "max_retries", "num_retries"):
                kwargs.pop(name, None)
            kwargs["model"] = "relgrade-judge"
        while True:
            try:
                response = await asyncio.wait_for(call(messages=messages, **kwargs), guard)
                break
            except Exception as exc:
                # litellm's Router refuses (429) a request when every deployment's max_parallel_requests slots are
                # taken: the request was never sent (nothing paid, not an attempt); wait for a slot.
                if self.router is None or "max_parallel_requests" not in str(exc):
                    raise
                await asyncio.sleep(0.02)
        latency = time.perf_counter() - start
        choice = response.choices[0]
        content = getattr(choice.message, "content", None) or ""
        usage = getattr(response, "usage", None)  # token counts not believable (None): the cost is unknown
        tokens = [usage_tokens(getattr(usage, name, 0) or 0) for name in ("prompt_tokens", "completion_tokens")]
        return Answer(content, getattr(choice, "logprobs", None), tokens[0] or 0, tokens[1] or 0,
                      None if None in tokens else self._cost(response), latency, attempt)

    async def _once_http(self, messages, sample: int, attempt: int) -> Answer:
        cfg = self.config
        body: dict[str, Any] = {"model": self.model.split("/", 1)[1] if "/" in self.model else self.model,
                                "messages": messages, "temperature": cfg.temperature, "max_tokens": cfg.max_tokens}
        if self.logprobs:
            body.update(logprobs=True, top_logprobs=cfg.top_logprobs)
        if sample and cfg.temperature > 0:
            body["seed"] = sample
        start = time.perf_counter()
        out = await self.http.post(body, cfg.timeout)  # type: ignore[union-attr]
        latency = time.perf_counter() - start
        choice = out["choices"][0]
        usage = out.get("usage") if isinstance(out.get("usage"), dict) else {}
        tokens = [usage_tokens(usage.get(name) or 0) for name in ("prompt_tokens", "completion_tokens")]
        cost = None if self.prices is None or None in tokens else tokens[0] * self.prices[0] + tokens[1] * self.prices[1]
        return Answer(choice["message"].get("content") or "", choice.get("logprobs"), tokens[0] or 0, tokens[1] or 0,
                      cost, latency, attempt)

    def _cost(self, response) -> float | None:
        hidden = getattr(response, "_hidden_params", None) or {}
        cost = hidden.get("response_cost")
        if isinstance(cost, (int, float)):
            return float(cost)
        usage = getattr(response, "usage", None)
        price = price_per_token(self.model)
        if price is None or usage is None:
            return None
        return (int(getattr(usage, "prompt_tokens", 0) or 0) * price[0]
                + int(getattr(usage, "completion_tokens", 0) or 0) * price[1])


def _bases(api_base: "str | Sequence[str] | None") -> list[str]:
    if api_base is None:
        return []
    bases = [api_base] if isinstance(api_base, str) else list(api_base)
    for base in bases:
        if not isinstance(base, str) or not base.strip():
            raise InputError(f"--api-base must be a URL such as http://127.0.0.1:8000/v1, got {base!r}")
    return [b.strip() for b in bases]


def _masked(answer: "Answer", secrets: tuple[str, ...]) -> "Answer":
    from dataclasses import replace

    content = mask(answer.content, secrets)
    return answer if content == answer.content else replace(answer, content=content)


def choose_transport(model: str, transport: str, api_base: str | None) -> str:
    """``"http"`` or ``"litellm"`` for a model, a ``JudgeConfig.transport`` and an ``api_base``."""
    openai_like = provider_of(model) == "openai" and not model.startswith("local/")
    if transport == "http":
        if not openai_like:
            raise InputError(f"--transport http speaks the OpenAI chat API only: use an openai/ model "
                             f"(got {model}) or --transport litellm")
        return "http"
    if transport == "auto" and openai_like and api_base:
        return "http"
    return "litellm"


def check_local(model: str) -> None:
    """Register the embedded ``local`` provider when the model asks for it (InputError if missing)."""
    if model.startswith("local/"):
        try:
            from relgrade.judge.local._provider import register
        except ImportError:
            raise InputError("the local judge needs the 'local' extra: pip install 'relgrade[local]'") from None
        register(model)


__all__ = ["Answer", "Caller", "FatalCallError", "Halted", "PairCallError", "WINDOW_SECONDS", "check_local", "choose_transport",
           "count_tokens",
           "import_litellm", "is_retryable", "key_env", "price_per_token", "redact", "retry_after"]
