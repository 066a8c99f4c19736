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

import re
from collections.abc import Iterable
from functools import lru_cache

from relgrade._redact import known_secrets, mask_pieces

_KEYLIKE = re.compile(r"\b(sk|pk|key|api|xai|gsk|AIza)[-_A-Za-z0-9]*[-_][A-Za-z0-9*_\-]{6,}|\bAIza[0-9A-Za-z_\-]{20,}")
_BEARER = re.compile(r"(Bearer\s+)\S+", re.IGNORECASE)
MASK = "***"
_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "openai", "openai._base_client", "httpx",
            "httpcore", "aiohttp.client")


def collect_secrets(*keys: str | None, env_names: Iterable[str | None] = ()) -> tuple[str, ...]:
    """The secrets to mask: ``keys``, the values of ``env_names`` and of every credential-named variable, with the
    forms a server may echo them in (:func:`relgrade._redact.known_secrets`)."""
    return known_secrets(*keys, env_names=env_names)


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_KEY_PREFIX = re.compile(r"(?:sk|rk|pk|gsk|xai|hf|ghp|gho|ghs|glpat|AIza|eyJ)[-_A-Za-z0-9.]{16,}")
_KEY_BLOB = re.compile(r"[A-Za-z0-9]{32,}")


def _key_shaped(value: str) -> bool:
    """A provider key's shape (after any ``provider/``): a known prefix and 16+ characters mixing upper case, lower case
    and digits (model names do not), or 32+ letters and digits without a separator (a hex key)."""
    value = value.rsplit("/", 1)[-1]  # openai/sk-...: the part after the provider
    if any(c.isspace() for c in value):
        return False
    if _KEY_BLOB.fullmatch(value):
        return True
    return bool(_KEY_PREFIX.fullmatch(value)) and any(c.isdigit() for c in value) and \
        any(c.isupper() for c in value) and any(c.islower() for c in value)


def looks_like_key(value: str, secrets: tuple[str, ...] = (), *, shape: bool = True) -> bool:
    """Whether ``value`` (a model name, a variable name) is a key: it holds a 12-character piece of a known secret
    (``secrets``, and every credential variable's value), or (with ``shape``) it has a provider key's shape
    (``sk-...``, ``AIza...``, 32 letters and digits without a separator)."""
    if not isinstance(value, str) or not value.strip():
        return False
    value = value.strip()
    if shape and _key_shaped(value):
        return True
    known = tuple(secrets) + collect_secrets()
    return mask(value, tuple(s for s in known if len(s) >= 12)) != value


def check_key_places(*, model: str | None = None, api_base=None, api_key_env: str | None = None,
                     api_key: str | None = None) -> None:
    """Raise :class:`InputError` (the key never shown) when a key was given where a name belongs: ``--model KEY``,
    ``--api-key-env KEY``, or ``--api-base`` holding a credential (``user:KEY@`` or ``?api-key=KEY``): each would be
    printed, and a model name is written into the store and the details."""
    from relgrade._errors import InputError

    secrets = collect_secrets(api_key)
    if api_key_env is not None and (not _ENV_NAME.fullmatch(api_key_env) or looks_like_key(api_key_env, secrets)):
        raise InputError("--api-key-env takes the NAME of an environment variable that holds the key (such as "
                         "OPENAI_API_KEY), and the value given is not a variable name (a key itself? it is not "
                         "shown): export the key in a variable and pass the variable's name")
    if model is not None and looks_like_key(model, secrets):
        raise InputError("--model looks like an API key, not a model name (it is not shown); pass a model such as "
                         "openai/gpt-4o-mini and the key in its environment variable (OPENAI_API_KEY, or "
                         "--api-key-env NAME)")
    for base in [api_base] if isinstance(api_base, str) else list(api_base or ()):
        if not isinstance(base, str):
            continue
        if "://" not in base and looks_like_key(base, secrets):
            raise InputError("--api-base looks like an API key, not a URL (it is not shown); pass the server's URL "
                             "such as http://127.0.0.1:8000/v1 and the key in its environment variable")
        rest = base.strip().partition("://")[2]
        if "@" in rest.split("/", 1)[0] or _CREDENTIAL_PARAM.search(rest.partition("?")[2]) or \
                looks_like_key(rest, secrets, shape=False):  # a known key in its path (an account id is no key)
            raise InputError("--api-base holds a credential (user:password@, or a key in its path or query string; "
                             "not shown): remove it from the URL and put the key in OPENAI_API_KEY (or "
                             "--api-key-env NAME)")


_CREDENTIAL_PARAM = re.compile(r"(?:^|&)[^=&]*(key|token|secret|password|passwd|auth|signature|sig)[^=&]*=",
                               re.IGNORECASE)


def mask_bytes(data: bytes, secrets: tuple[str, ...]) -> bytes:
    """``data`` (a provider's raw JSON) with every registered secret (as UTF-8 bytes) replaced whole by ``***``.
    Pieces are masked after decoding, string by string (:func:`mask_strings`): cutting a piece out of raw JSON could
    cut an escape sequence of a string nested in it (an answer's content is JSON inside JSON)."""
    for raw in _as_bytes(secrets):
        if raw in data:
            data = data.replace(raw, MASK.encode())
    return data


@lru_cache(maxsize=64)
def _as_bytes(secrets: tuple[str, ...]) -> tuple[bytes, ...]:
    return tuple(s.encode("utf-8", "surrogatepass") for s in secrets)


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
    """``text`` with every registered secret masked: every piece of 12 or more characters of one (a key cut short,
    its middle, its halves split by a line break; :func:`relgrade._redact.mask_pieces`), and a shorter one whole."""
    return mask_pieces(text, secrets)


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


__all__ = ["MASK", "check_key_places", "collect_secrets", "install_log_filter", "looks_like_key", "mask", "mask_bytes",
           "mask_strings", "redact"]
