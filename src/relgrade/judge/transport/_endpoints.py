"""Many endpoints: one judge model served by several OpenAI-compatible servers (a vLLM or TGI fleet).

``--api-base`` repeated (``api_base=[...]`` in Python) spreads the calls over the servers with
``concurrency`` requests in flight *per endpoint*.

Lean transport (:class:`EndpointPool`): each request goes to the healthy endpoint with the fewest
requests in flight (ties in turn). An endpoint whose request fails with a connection error, a
timeout, a 5xx, 408 or 429 is taken out of rotation for a cool-down (``Retry-After`` when the server
sends one, else 1 s doubling per consecutive failure up to 30 s); after it, the endpoint gets
requests again and its first success clears the count. While another endpoint is healthy the failed
request is retried there at once (no backoff); when every endpoint is cooling down, the call layer's
backoff applies as for one server. A retry after a failed request is what a single server would
get too: no answer was received, so nothing is paid twice, and every answer is stored as it arrives.

litellm transport (:func:`make_router`): litellm's own ``Router`` with one deployment per base URL
(``least-busy`` routing, ``max_parallel_requests=concurrency`` per deployment, a deployment cooled
down after one failure for ``cooldown`` seconds, no retries of its own: every attempt is the call
layer's, as for one endpoint).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from relgrade.judge.transport._classify import retry_after
from relgrade.judge.transport._http import HTTPStatusError, HttpTransport

COOLDOWN_START = 1.0
COOLDOWN_MAX = 30.0


def _endpoint_fault(exc: BaseException) -> bool:
    """A failure of the server (not of the request): the endpoint goes out of rotation for a while."""
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status >= 500 or status in (408, 429))


@dataclass
class Endpoint:
    """One server: its transport, how many requests it has in flight, and when it may be used again."""

    base: str | None
    transport: HttpTransport
    in_flight: int = 0
    down_until: float = 0.0
    failures: int = 0
    served: int = 0
    events: list[tuple[str, float]] = field(default_factory=list)  # ("down" | "up", monotonic time)

    def healthy(self, now: float) -> bool:
        return self.down_until <= now


class EndpointPool:
    """Round-robin, least-busy over one or more :class:`HttpTransport`; a failing endpoint cools down."""

    def __init__(self, bases: list[str | None], api_key: str | None, *, concurrency: int):
        self.endpoints = [Endpoint(b, HttpTransport(b, api_key, concurrency=concurrency)) for b in bases]
        self.concurrency = concurrency
        self._turn = 0

    @property
    def url(self) -> str:
        return self.endpoints[0].transport.url

    def pick(self) -> Endpoint:
        now = time.monotonic()
        eps = self.endpoints
        if len(eps) == 1:
            return eps[0]
        healthy = [e for e in eps if e.healthy(now)] or [min(eps, key=lambda e: e.down_until)]
        n = len(eps)
        order = sorted(healthy, key=lambda e: (e.in_flight, (eps.index(e) - self._turn) % n))
        self._turn = (self._turn + 1) % n
        return order[0]

    async def post(self, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        """POST to one endpoint; on a server failure mark it down and flag ``exc.failover`` when another is up."""
        ep = self.pick()
        ep.in_flight += 1
        try:
            out = await ep.transport.post(body, timeout)
        except Exception as exc:
            if len(self.endpoints) > 1 and _endpoint_fault(exc):
                self._down(ep, exc)
                now = time.monotonic()
                exc.failover = any(e.healthy(now) for e in self.endpoints if e is not ep)  # type: ignore[attr-defined]
            raise
        finally:
            ep.in_flight -= 1
        if ep.failures:
            ep.events.append(("up", time.monotonic()))
        ep.failures = 0
        ep.served += 1
        return out

    def _down(self, ep: Endpoint, exc: BaseException) -> None:
        ep.failures += 1
        wait = retry_after(exc) if isinstance(exc, HTTPStatusError) else None
        if wait is None:
            wait = min(COOLDOWN_MAX, COOLDOWN_START * 2.0 ** (ep.failures - 1))
        ep.down_until = max(ep.down_until, time.monotonic() + wait)
        ep.events.append(("down", time.monotonic()))

    async def aclose(self) -> None:
        for ep in self.endpoints:
            await ep.transport.aclose()


def make_router(litellm: Any, model: str, bases: list[str], api_key: str | None, config: Any,
                cooldown: float = 5.0) -> Any:
    """A litellm ``Router`` with one deployment of ``model`` per base URL (see the module doc)."""
    from litellm import Router

    deployments = []
    for base in bases:
        params: dict[str, Any] = {"model": model, "api_base": base, "max_parallel_requests": config.concurrency,
                                  "timeout": config.timeout}
        if api_key:
            params["api_key"] = api_key
        deployments.append({"model_name": "relgrade-judge", "litellm_params": params})
    return Router(model_list=deployments, routing_strategy="least-busy", num_retries=0, allowed_fails=0,
                  cooldown_time=cooldown, retry_after=0, set_verbose=False)


__all__ = ["COOLDOWN_MAX", "COOLDOWN_START", "Endpoint", "EndpointPool", "make_router"]
