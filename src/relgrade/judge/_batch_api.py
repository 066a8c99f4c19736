"""What a provider batch adapter gives the batch engine, and the small aiohttp client they share.

An adapter (``_batch_openai.OpenAIBatches``, ``_batch_anthropic.AnthropicBatches``) has:

- ``submit(requests, local_id) -> batch_id``: upload and create one batch;
- ``find(local_id) -> batch_id | None``: the batch created under our local id, if any (recovers a
  crash between the provider's create and our ledger write; None when the provider cannot tell);
- ``status(batch_id) -> BatchState``;
- ``results(state) -> list[BatchLine]``: one line per answered or errored request;
- ``aclose()``.

Requests are retried on 408/409/429/5xx and connection errors (``Retry-After`` honoured); other
statuses raise :class:`BatchAPIError` (``fatal`` for 400-404/422, which no retry fixes).
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any

TERMINAL = ("completed", "failed", "expired", "cancelled")


@dataclass(frozen=True)
class BatchRequest:
    """One request line: our ``custom_id`` and the chat messages (``seed`` for samples > 0)."""

    custom_id: str
    messages: list[dict[str, str]]
    seed: int | None = None


@dataclass(frozen=True)
class BatchState:
    """A batch's state: ``running`` or one of :data:`TERMINAL`; ``counts`` as the provider reports them."""

    batch_id: str
    state: str
    counts: dict[str, int] = field(default_factory=dict)
    output_file_id: str | None = None
    error_file_id: str | None = None
    results_url: str | None = None
    detail: str | None = None
    created_at: float | None = None
    ended_at: float | None = None


@dataclass(frozen=True)
class BatchLine:
    """One result line: an answer (``content`` set, usage) or a per-line ``error``. Token counts are None when the
    provider's were missing or not believable (the line's cost is then unknown)."""

    custom_id: str
    content: str | None
    logprobs: Any = None
    prompt_tokens: int | None = 0
    completion_tokens: int | None = 0
    error: str | None = None


class BatchAPIError(Exception):
    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status
        self.fatal = status in {400, 401, 402, 403, 404, 422}


class JsonClient:
    """An aiohttp session with retries for the batch endpoints (a handful of requests per batch). Every answer is
    masked before it is returned or quoted in an error: each of ``secrets`` (the API keys, :mod:`relgrade.judge.
    _secrets`) in the bytes and, after decoding, in every JSON string."""

    def __init__(self, headers: dict[str, str], *, secrets: tuple[str, ...] = (), timeout: float = 120.0,
                 max_attempts: int = 6, backoff: float = 1.0, backoff_max: float = 60.0):
        self.headers = headers
        self.secrets = secrets
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.backoff_max = backoff_max
        self._session: Any = None

    async def _get(self):
        if self._session is None or self._session.closed:
            import aiohttp

            self._session = aiohttp.ClientSession(trust_env=True)
        return self._session

    async def request(self, method: str, url: str, *, json_body: Any = None, data: Any = None,
                      raw: bool = False) -> Any:
        """The decoded JSON (or bytes with ``raw``) of a 2xx answer, masked; retries transient failures (a 2xx that is
        not JSON, e.g. an HTML page from a proxy, included)."""
        import aiohttp

        from relgrade.judge._secrets import mask_bytes, mask_strings, redact

        session = await self._get()
        last = ""
        for attempt in range(1, self.max_attempts + 1):
            wait = min(self.backoff_max, self.backoff * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)
            try:
                body = data() if callable(data) else data
                async with session.request(method, url, json=json_body, data=body, headers=self.headers,
                                           timeout=aiohttp.ClientTimeout(total=self.timeout)) as resp:
                    payload = mask_bytes(await resp.read(), self.secrets)
                    if resp.status < 300:
                        if raw:
                            return payload
                        return mask_strings(_loads(payload), self.secrets)
                    last = f"HTTP {resp.status}: {payload[:300].decode('utf-8', 'replace')}"
                    if resp.status in {408, 409, 429} or resp.status >= 500:
                        wait = _retry_after(resp.headers.get("retry-after"), wait)
                    else:
                        raise BatchAPIError(redact(" ".join(f"{method} {url}: {last}".split()), self.secrets),
                                            resp.status)
            except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as exc:
                last = f"{type(exc).__name__}: {exc}"
            if attempt < self.max_attempts:
                await asyncio.sleep(wait)
        message = f"{method} {url}: no answer after {self.max_attempts} attempts ({last})"
        raise BatchAPIError(redact(" ".join(message.split()), self.secrets)[:500])

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _loads(payload: bytes) -> Any:
    import json

    try:
        return json.loads(payload)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _retry_after(header: str | None, default: float) -> float:
    try:
        after = float(header) if header else default
    except ValueError:
        return default
    return min(120.0, after) if after >= 0 else default  # NaN and negative: the backoff


__all__ = ["BatchAPIError", "BatchLine", "BatchRequest", "BatchState", "JsonClient", "TERMINAL"]
