"""A lean transport for OpenAI-compatible ``/chat/completions`` endpoints (aiohttp, one shared session).

Why: on 2 cores ``litellm.acompletion`` costs about 4 ms of CPU per call (its request/response
transformation, logging object and cost bookkeeping), which caps 64 concurrent judgments at 400 ms
latency to about 0.7 of the ideal wall time; a bare aiohttp POST plus ``json.loads`` costs
about 0.3 ms and httpx 2.7 ms (``benchmarks/judge_throughput.py`` prints the side-by-side figures).
The session does not read the environment per request (aiohttp's ``trust_env`` looks up
``~/.netrc`` and the proxy variables on a worker thread for every request: two thread hops that cost
about 0.3 ms of CPU per request together on this machine); the proxy of ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``ALL_PROXY`` less
``NO_PROXY`` is looked up once, when the transport is made.

What it does: POST ``{api_base}/chat/completions`` with the same body litellm would send for an
``openai/`` model, parse the JSON, and hand back the message content, the OpenAI-shaped token
logprobs (as plain dicts) and the usage. Every failure becomes an exception that the
classification of :mod:`relgrade.judge.transport._call` reads exactly like a litellm one:

- a non-2xx answer: :class:`HTTPStatusError` with ``status_code``, ``message`` (the provider's
  ``error.message``) and ``litellm_response_headers`` (so ``Retry-After`` / ``retry-after-ms``
  are honoured); a context-window or content-policy rejection is raised as
  :class:`ContextWindowExceededError` / :class:`ContentPolicyViolationError` (that pair only);
- a dropped connection or an unreadable body: :class:`TransportConnectionError` (a
  ``ConnectionError``, retried);
- no answer within ``timeout``: ``TimeoutError`` (retried).

The session lives as long as the event loop: it is closed by :meth:`HttpTransport.aclose` or, at
the latest, by the loop's ``shutdown_asyncgens()`` (which ``asyncio.run`` calls), through a
suspended async generator that owns it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

_CONTEXT = ("context_length_exceeded", "maximum context length", "context window")
_POLICY = ("content_policy_violation", "content_filter", "content management policy")


class HTTPStatusError(Exception):
    """A non-2xx answer: ``status_code``, the provider's ``message`` and the response headers."""

    def __init__(self, status_code: int, message: str, headers: dict[str, str]):
        super().__init__(f"OpenAIException - {message}")
        self.status_code = status_code
        self.message = f"OpenAIException - {message}"
        self.litellm_response_headers = headers


class ContextWindowExceededError(HTTPStatusError):
    """The prompt is longer than the model's context window (concerns that pair only)."""


class ContentPolicyViolationError(HTTPStatusError):
    """The provider's content filter refused the prompt (concerns that pair only)."""


class TransportConnectionError(ConnectionError):
    """The connection dropped, or the server answered something that is not a chat completion."""


def _error(status: int, raw: bytes, headers: dict[str, str]) -> HTTPStatusError:
    message = raw.decode("utf-8", "replace").strip()[:500] or f"HTTP {status}"
    code = ""
    try:
        err = json.loads(raw).get("error")
        if isinstance(err, dict):
            message = str(err.get("message") or message)
            code = str(err.get("code") or err.get("type") or "")
        elif isinstance(err, str):
            message = err
    except (ValueError, AttributeError):
        pass
    text = f"{code} {message}".lower()
    if status == 400 and any(s in text for s in _CONTEXT):
        return ContextWindowExceededError(status, message, headers)
    if status == 400 and any(s in text for s in _POLICY):
        return ContentPolicyViolationError(status, message, headers)
    return HTTPStatusError(status, message, headers)


def _user_agent() -> str:
    import aiohttp

    from relgrade._version import __version__

    return f"relgrade/{__version__} aiohttp/{aiohttp.__version__}"


def _proxy_for(url: str) -> str | None:
    """The proxy that ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``ALL_PROXY`` (less ``NO_PROXY``) name for ``url``, or None."""
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    proxies = urllib.request.getproxies()
    if not proxies or urllib.request.proxy_bypass(host):
        return None
    return proxies.get(parts.scheme) or proxies.get("all")


class HttpTransport:
    """POSTs chat completions to one OpenAI-compatible ``api_base`` over a shared aiohttp session."""

    def __init__(self, api_base: str | None, api_key: str | None, *, concurrency: int):
        base = (api_base or "https://api.openai.com/v1").rstrip("/")
        self.url = base if base.endswith("/chat/completions") else base + "/chat/completions"
        self.headers = {"Content-Type": "application/json", "User-Agent": _user_agent()}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self.concurrency = concurrency
        self.proxy = _proxy_for(self.url)
        self._session: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._keeper: Any = None

    async def _get_session(self):
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            import aiohttp

            connector = aiohttp.TCPConnector(limit=max(self.concurrency, 1) * 2, ttl_dns_cache=300)
            # trust_env=False: aiohttp would read ~/.netrc and the proxy variables on a worker thread for every
            # request (two thread hops each); the proxy is looked up once in __init__ instead.
            session = aiohttp.ClientSession(connector=connector, trust_env=False)
            self._session, self._loop = session, loop

            async def keeper():
                try:
                    yield
                finally:
                    await session.close()

            self._keeper = keeper()
            await self._keeper.__anext__()  # now owned by this loop's shutdown_asyncgens()
        return self._session

    async def aclose(self) -> None:
        if self._keeper is not None:
            keeper, self._keeper, self._session = self._keeper, None, None
            await keeper.aclose()

    async def post(self, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        """The decoded chat completion, or one of the exceptions of this module."""
        import aiohttp

        session = await self._get_session()
        data = json.dumps(body).encode()
        try:
            async with session.post(self.url, data=data, headers=self.headers, proxy=self.proxy,
                                    timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
                raw = await resp.read()
                status = resp.status
                headers = {k.lower(): v for k, v in resp.headers.items()} if status >= 300 else {}
        except asyncio.TimeoutError as exc:
            raise TimeoutError(f"Request timed out after {timeout:g} s") from exc
        except aiohttp.ClientError as exc:
            raise TransportConnectionError(f"{type(exc).__name__}: {exc}") from exc
        if status >= 300:
            raise _error(status, raw, headers)
        try:
            out = json.loads(raw)
            out["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise TransportConnectionError(f"not a chat completion: {raw[:200]!r}") from exc
        return out


__all__ = ["ContentPolicyViolationError", "ContextWindowExceededError", "HTTPStatusError", "HttpTransport",
           "TransportConnectionError"]
