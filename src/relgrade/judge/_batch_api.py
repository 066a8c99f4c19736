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
    """One result line: an answer (``content`` set, usage) or a per-line ``error``."""

    custom_id: str
    content: str | None
    logprobs: Any = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None


class BatchAPIError(Exception):
    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status
        self.fatal = status in {400, 401, 402, 403, 404, 422}


class JsonClient:
    """An aiohttp session with retries for the batch endpoints (a handful of requests per batch)."""

    def __init__(self, headers: dict[str, str], *, timeout: float = 120.0, max_attempts: int = 6,
                 backoff: float = 1.0):
        self.headers = headers
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff = backoff
        self._session: Any = None

    async def _get(self):
        if self._session is None or self._session.closed:
            import aiohttp

            self._session = aiohttp.ClientSession(trust_env=True)
        return self._session

    async def request(self, method: str, url: str, *, json_body: Any = None, data: Any = None,
                      raw: bool = False) -> Any:
        """The decoded JSON (or bytes with ``raw``) of a 2xx answer; retries transient failures."""
        import aiohttp

        session = await self._get()
        last = ""
        for attempt in range(1, self.max_attempts + 1):
            wait = min(60.0, self.backoff * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)
            try:
                body = data() if callable(data) else data
                async with session.request(method, url, json=json_body, data=body, headers=self.headers,
                                           timeout=aiohttp.ClientTimeout(total=self.timeout)) as resp:
                    payload = await resp.read()
                    if resp.status < 300:
                        if raw:
                            return payload
                        import json

                        return json.loads(payload)
                    last = f"HTTP {resp.status}: {payload[:300].decode('utf-8', 'replace')}"
                    if resp.status in {408, 409, 429} or resp.status >= 500:
                        after = resp.headers.get("retry-after")
                        if after:
                            try:
                                wait = min(120.0, float(after))
                            except ValueError:
                                pass
                    else:
                        raise BatchAPIError(f"{method} {url}: {last}", resp.status)
            except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as exc:
                last = f"{type(exc).__name__}: {exc}"
            if attempt < self.max_attempts:
                await asyncio.sleep(wait)
        raise BatchAPIError(f"{method} {url}: no answer after {self.max_attempts} attempts ({last})")

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


__all__ = ["BatchAPIError", "BatchLine", "BatchRequest", "BatchState", "JsonClient", "TERMINAL"]
