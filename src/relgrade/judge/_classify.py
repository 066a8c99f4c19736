"""Which provider and transport errors are retried, which stop the run, and the one line that says so.

Retried with exponential backoff and jitter (:func:`is_retryable`): HTTP 408, 409, 429 and 5xx, connection
errors and timeouts; a ``Retry-After`` (or ``retry-after-ms``) header sets the wait (:func:`retry_after`).
Fatal (they stop the whole run with one line, :func:`fatal_message`): 400, 401, 402, 403, 404 and 422, and a
missing API key whatever its status (litellm's OpenAI client reports it as an HTTP 500 "Missing credentials",
:func:`missing_key`), except a context-window or content-policy rejection, which concerns that pair only
(:func:`pair_only`). Only :func:`provider_errors` are classified; any other exception is a bug of relgrade's.
The same rules hold on both transports: the lean client's errors (:mod:`relgrade.judge._http`) carry the same
``status_code``, ``message`` and response headers as litellm's.
"""

from __future__ import annotations

import asyncio
import sys
import time

from relgrade.judge._secrets import redact

RETRY_STATUS = {408, 409, 429}
FATAL_STATUS = {400, 401, 402, 403, 404, 422}
# No key at all: litellm's OpenAI client raises it as an HTTP 500 ("Missing credentials"), which must never be
# retried as a server error (issue 25: six silent minutes); Anthropic's comes as a 401.
MISSING_KEY = ("missing credentials", "api_key client option must be set", "missing anthropic api key",
               "no api key provided", "you didn't provide an api key")
ENV_KEYS = {
    "openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "azure": "AZURE_API_KEY",
    "gemini": "GEMINI_API_KEY", "mistral": "MISTRAL_API_KEY", "groq": "GROQ_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY", "openrouter": "OPENROUTER_API_KEY", "cohere": "COHERE_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY", "fireworks_ai": "FIREWORKS_AI_API_KEY", "xai": "XAI_API_KEY",
}


def provider_of(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else "openai"


def key_env(model: str, api_key_env: str | None = None) -> str:
    return api_key_env or ENV_KEYS.get(provider_of(model), f"{provider_of(model).upper()}_API_KEY")


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def retry_after(exc: BaseException) -> float | None:
    """Seconds from a ``retry-after-ms`` or ``Retry-After`` header on the error's response, or None."""
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            from email.utils import parsedate_to_datetime

            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, AttributeError):
        return None


def missing_key(exc: BaseException) -> bool:
    """The provider (or litellm before sending anything) says no API key was given, whatever the status."""
    text = str(getattr(exc, "message", None) or exc).lower()
    return any(s in text for s in MISSING_KEY)


def is_retryable(exc: BaseException) -> bool:
    if missing_key(exc):
        return False
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError, ConnectionError)):
        return True
    openai = sys.modules.get("openai")  # only litellm's calls raise openai's errors: never import it here
    if openai is not None and isinstance(exc, (openai.APIConnectionError, openai.APITimeoutError)):
        return True
    if type(exc).__name__ == "RouterRateLimitError":  # litellm's Router: every deployment is cooling down
        return True
    status = status_of(exc)
    return status is not None and (status in RETRY_STATUS or status >= 500)


def pair_only(exc: BaseException) -> bool:
    name = type(exc).__name__
    return name in {"ContextWindowExceededError", "ContentPolicyViolationError"}


def provider_errors() -> tuple[type[BaseException], ...]:
    """The exceptions a provider or a transport raises; any other exception in a call is a bug of relgrade's
    and propagates (it is never reported as "no answer after N attempts")."""
    from relgrade.judge._http import HTTPStatusError

    errors: list[type[BaseException]] = [HTTPStatusError, ConnectionError, TimeoutError, asyncio.TimeoutError]
    openai = sys.modules.get("openai")
    if openai is not None:
        errors.append(openai.OpenAIError)  # every litellm exception derives from it
    router_types = sys.modules.get("litellm.types.router")  # "no deployment available" of litellm's Router
    cls = getattr(router_types, "RouterRateLimitError", None)
    if isinstance(cls, type) and issubclass(cls, BaseException):
        errors.append(cls)
    return tuple(errors)


def what_failed(exc: BaseException, status: int | None) -> str:
    openai = sys.modules.get("openai")
    timeouts = (asyncio.TimeoutError, TimeoutError) + ((openai.APITimeoutError,) if openai else ())
    if isinstance(exc, timeouts) or status == 408:
        return "timed out"
    if isinstance(exc, (ConnectionError,) + ((openai.APIConnectionError,) if openai else ())):
        return "connection error"
    return f"HTTP {status}" if status else type(exc).__name__


def fatal_message(exc: BaseException, model: str, api_key_env: str | None, secrets: tuple[str, ...]) -> str:
    provider = provider_of(model)
    env = key_env(model, api_key_env)
    status = status_of(exc)
    detail = redact(" ".join(str(getattr(exc, "message", exc)).split()), secrets)[:300]
    if missing_key(exc):
        return f"no API key for {provider}: set {env} (or name the variable that holds it with --api-key-env) ({detail})"
    if status == 401:
        return f"authentication failed for {provider}: set {env} ({detail})"
    if status == 403:
        return f"permission denied by {provider} for {model}: check that the key in {env} may use it ({detail})"
    if status == 402:
        return f"{provider} wants payment for {model}: check the account of the key in {env} ({detail})"
    if status == 404:
        return f"model {model} not found at {provider}: check --model and --api-base ({detail})"
    return f"{provider} rejected the request for {model} with HTTP {status}: {detail}"


def is_fatal(exc: BaseException) -> bool:
    """A failure no retry fixes and that concerns every pair: a fatal status, a missing key, auth refused."""
    return status_of(exc) in FATAL_STATUS or missing_key(exc) or \
        type(exc).__name__ in {"AuthenticationError", "PermissionDeniedError"}


__all__ = ["ENV_KEYS", "FATAL_STATUS", "RETRY_STATUS", "fatal_message", "is_fatal", "is_retryable", "key_env",
           "missing_key", "pair_only", "provider_errors", "provider_of", "retry_after", "status_of", "what_failed"]
