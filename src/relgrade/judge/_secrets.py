"""API keys never leave the process: every key a call may use is registered and masked everywhere.

What is registered (:func:`collect_secrets`), before the first call, on every transport: the key
passed in (``api_key=``), the value of ``--api-key-env``, the value of the provider's own variable
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ...), and the value of every other environment variable
whose name says it holds a credential (``*_API_KEY``, ``*_KEY``, ``*_TOKEN``, ``*_SECRET``,
``*_PASSWORD``: litellm reads many of them, e.g. ``AZURE_AD_TOKEN``, ``AWS_SECRET_ACCESS_KEY``), when
at least 6 characters long (shorter values would mask ordinary words).

Where it is masked (:func:`redact`): every error text that leaves the call layer (one-line fatal
errors, the reason of a failed pair), every answer before it is parsed and stored (a server that
echoes the key in a 200 answer), and, on the litellm transport, every record of litellm's, openai's
and httpx's loggers (:func:`install_log_filter`; ``LITELLM_LOG=DEBUG`` prints request headers).
Besides the registered values, anything after ``Bearer`` and anything shaped like a provider key
(``sk-...``, ``AIza...``) is masked in error texts.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable

_KEYLIKE = re.compile(r"\b(sk|pk|key|api|xai|gsk|AIza)[-_A-Za-z0-9]*[-_][A-Za-z0-9*_\-]{6,}|\bAIza[0-9A-Za-z_\-]{20,}")
_BEARER = re.compile(r"(Bearer\s+)\S+", re.IGNORECASE)
_CREDENTIAL_VAR = re.compile(r"(API_KEY|_KEY|_TOKEN|_SECRET|_PASSWORD|_SECRET_ACCESS_KEY)$", re.IGNORECASE)
MIN_SECRET = 6
MASK = "***"
_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "openai", "openai._base_client", "httpx",
            "httpcore", "aiohttp.client")


def collect_secrets(*keys: str | None, env_names: Iterable[str | None] = ()) -> tuple[str, ...]:
    """The secrets to mask: ``keys``, the values of ``env_names`` and of every credential-named variable."""
    found: list[str] = [k for k in keys if k]
    for name in env_names:
        if name and os.environ.get(name):
            found.append(os.environ[name])
    for name, value in os.environ.items():
        if _CREDENTIAL_VAR.search(name) and value:
            found.append(value)
    out = {s.strip() for s in found if s and len(s.strip()) >= MIN_SECRET}
    out |= {form for s in out for form in _echoed_forms(s)}
    return tuple(sorted(out, key=len, reverse=True))  # longest first: a key containing another is masked whole


def _echoed_forms(secret: str) -> set[str]:
    """How a server may echo a key: inside a JSON string (a key with " or \\ in it, or non-ASCII), in HTML (``&amp;``,
    ``&quot;``...) and percent-encoded in a URL."""
    from html import escape
    from urllib.parse import quote, quote_plus

    in_json = json.dumps(secret)[1:-1]
    return {in_json, in_json.replace("/", "\\/"), json.dumps(secret, ensure_ascii=False)[1:-1], escape(secret),
            escape(secret, quote=False), quote(secret, safe=""), quote_plus(secret)} - {secret}


def mask_bytes(data: bytes, secrets: tuple[str, ...]) -> bytes:
    """``data`` with every registered secret (as UTF-8 bytes) replaced by ``***``."""
    for secret in secrets:
        raw = secret.encode("utf-8", "surrogatepass")
        if raw in data:
            data = data.replace(raw, MASK.encode())
    return data


def mask_strings(obj, secrets: tuple[str, ...]):
    """A decoded JSON value with every string in it (keys too) masked (a key hidden by ``\\u`` escapes is masked
    after decoding)."""
    if not secrets:
        return obj
    if isinstance(obj, str):
        return mask(obj, secrets)
    if isinstance(obj, dict):
        return {mask(k, secrets) if isinstance(k, str) else k: mask_strings(v, secrets) for k, v in obj.items()}
    if isinstance(obj, list):
        return [mask_strings(v, secrets) for v in obj]
    return obj


def mask(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every registered secret replaced by ``***`` (exact values only)."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every given secret and anything shaped like an API key or bearer token masked."""
    text = mask(text, tuple(s for s in secrets if s and len(s) >= 4))
    text = _BEARER.sub(r"\1" + MASK, text)
    return _KEYLIKE.sub(MASK, text)


def _redact_filter(secrets: tuple[str, ...]):
    """A ``logging.Filter`` that masks ``secrets`` in a record's message (logging imported only here)."""
    import logging

    class RedactFilter(logging.Filter):
        relgrade_secrets = secrets

        def filter(self, record: logging.LogRecord) -> bool:
            try:
                message = record.getMessage()
            except Exception:  # noqa: BLE001 - a malformed record: leave it to logging's own error path
                return True
            cleaned = redact(message, secrets)
            if cleaned != message:
                record.msg, record.args = cleaned, None
            return True

    return RedactFilter("relgrade-redact")


def install_log_filter(secrets: tuple[str, ...]) -> None:
    """Mask ``secrets`` in the records of litellm's, openai's and httpx's loggers and their handlers."""
    import logging

    for name in _LOGGERS:
        logger = logging.getLogger(name)
        for target in (logger, *logger.handlers):
            old = [f for f in target.filters if hasattr(f, "relgrade_secrets")]
            for f in old:
                target.removeFilter(f)
            merged = {*secrets, *(s for f in old for s in f.relgrade_secrets)}
            target.addFilter(_redact_filter(tuple(sorted(merged, key=len, reverse=True))))


__all__ = ["MASK", "collect_secrets", "install_log_filter", "mask", "mask_bytes", "mask_strings", "redact"]
