"""Before the first paid call: a key is there, the server answers, the model is known (issue 25).

Without it a missing ``OPENAI_API_KEY`` was retried as litellm's HTTP 500 "Missing credentials" six times per
pair for six minutes and ended in an empty qrels. :func:`preflight` runs when there is something to judge
(a re-run that finds every judgment in the store needs no key) and raises :class:`~relgrade.InputError`,
one line naming the variable, the URL or the model, before anything is sent:

1. **credentials** for the provider: ``api_key=``, else ``--api-key-env NAME``, else the variable litellm
   reads for the provider (:func:`litellm.validate_environment` on the litellm transport: ``OPENAI_API_KEY``,
   ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``...). Not required: a self-hosted server
   (``--api-base``) on the lean transport or for a non-OpenAI provider, and providers whose credentials come
   from the cloud environment (:data:`AMBIENT`: Bedrock, Vertex, Azure, Ollama...). litellm's OpenAI client
   wants a key even for a self-hosted server: the message says to set any value or use ``--transport http``;
2. **reachable**: one free request, ``GET {base}/models/{model}`` (OpenAI-compatible servers: ``--api-base``,
   else ``OPENAI_BASE_URL`` / ``OPENAI_API_BASE`` on the litellm transport, else OpenAI) or ``GET
   {base}/v1/models/{model}`` with ``x-api-key`` (Anthropic). No answer at all (refused, DNS, timeout)
   from every base is fatal; a fleet keeps going while one base answers (the others leave rotation);
3. **the key and the model**, from that answer: 401 / 403 are fatal as on a call
   (:func:`relgrade.judge.transport._classify.fatal_message`: ``authentication failed for openai: set OPENAI_API_KEY
   (...)``), and so is a 404 whose body says the *model* is unknown (OpenAI's ``model_not_found``,
   Anthropic's ``not_found_error``). Any other answer (a server without that route, e.g. vLLM or llama.cpp,
   which serves whatever name it is asked) leaves the model to the first call, whose 404 is fatal too.

Other providers get the credentials check only. The local judge needs none of this.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from relgrade._errors import InputError
from relgrade.judge.transport._call import choose_transport
from relgrade.judge.transport._classify import fatal_message, key_env, provider_of
from relgrade.judge.transport._secrets import check_key_places, collect_secrets, redact

PROBE_TIMEOUT = 5.0
OPENAI_BASE = "https://api.openai.com/v1"
ANTHROPIC_BASE = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
AMBIENT = frozenset({"azure", "azure_ai", "bedrock", "bedrock_converse", "sagemaker", "sagemaker_chat", "vertex_ai",
                     "vertex_ai_beta", "ollama", "ollama_chat", "hosted_vllm", "lm_studio", "llamafile", "watsonx"})
"""Providers whose credentials may come from the environment of the machine (roles, ADC, a local server)."""
_CREDENTIAL = re.compile(r"(_KEY|_TOKEN|_SECRET|_PASSWORD)$")
_UNKNOWN_MODEL = ("model_not_found", "not_found_error")
NOTHING_SENT = "nothing was sent"


class _Refusal(Exception):
    """A provider's answer to the probe, shaped as the call layer's errors (``status_code``, ``message``)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status_code, self.message = status, message


@dataclass(frozen=True)
class Preflight:
    """What the preflight found: the transport, where the key came from, the bases that answered and those that
    did not (a fleet keeps going with the others), and whether the provider confirmed the model."""

    transport: str
    key: str
    answered: tuple[str, ...] = ()
    unreachable: tuple[str, ...] = ()
    model_confirmed: bool = False


def _bases(api_base: "str | Sequence[str] | None") -> list[str]:
    if api_base is None:
        return []
    return [b.strip() for b in ([api_base] if isinstance(api_base, str) else api_base)]


def _no_key(provider: str, names: Sequence[str]) -> InputError:
    wanted = " or ".join(dict.fromkeys(names))
    return InputError(f"no API key for {provider}: set {wanted} (or name the variable that holds it with "
                      f"--api-key-env); {NOTHING_SENT}")


def credentials(model: str, transport: str, bases: Sequence[str], api_key: str | None,
                api_key_env: str | None) -> tuple[str, str | None]:
    """``(where the key comes from, the key or None)``; :class:`InputError` when the provider needs one and none
    is set (module docstring, step 1)."""
    provider = provider_of(model)
    check_key_places(model=model, api_base=bases, api_key_env=api_key_env, api_key=api_key)
    if api_key:
        return "api_key", api_key
    if api_key_env:
        value = os.environ.get(api_key_env)
        if not value:
            raise InputError(f"--api-key-env {api_key_env}: that environment variable is not set; {NOTHING_SENT}")
        return api_key_env, value
    env = key_env(model)
    if transport == "http":
        if os.environ.get(env):
            return env, os.environ[env]
        if bases and not any("api.openai.com" in b for b in bases):
            return "none (a self-hosted server)", None
        raise _no_key(provider, [env])
    if provider == "openai":
        if os.environ.get(env):
            return env, os.environ[env]
        if bases:
            raise InputError(f"no API key for openai/ at {bases[0]}: litellm's OpenAI client sends one even to a "
                             f"server that needs none; set {env} (any value for such a server) or use --transport "
                             f"http; {NOTHING_SENT}")
        raise _no_key(provider, [env])
    if provider in AMBIENT or bases:
        return "the provider's own configuration", None
    from relgrade.judge.transport._call import import_litellm

    found = import_litellm().validate_environment(model=model)
    missing = [name for name in found.get("missing_keys") or () if _CREDENTIAL.search(name)]
    if missing:
        raise _no_key(provider, missing)
    present = next((name for name in (env, f"{provider.upper()}_API_KEY") if os.environ.get(name)), None)
    return present or "the provider's environment", os.environ.get(present) if present else None


def _get(url: str, headers: dict[str, str], timeout: float) -> tuple[int | None, bytes, str | None]:
    """``(status, body, None)`` for any HTTP answer, ``(None, b"", why)`` when nothing answered."""
    request = urllib.request.Request(url, headers=headers, method="GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:  # proxies of the environment, as the calls
            return resp.status, resp.read(65536), None
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(65536) if exc.fp is not None else b"", None
    except urllib.error.URLError as exc:
        reason = exc.reason
        return None, b"", getattr(reason, "strerror", None) or str(reason)
    except (TimeoutError, OSError) as exc:
        return None, b"", "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)


def _message(raw: bytes, status: int) -> tuple[str, str]:
    """``(error code or type, message)`` of an OpenAI- or Anthropic-shaped error body."""
    try:
        err = json.loads(raw).get("error")
    except (ValueError, AttributeError):
        return "", raw.decode("utf-8", "replace").strip()[:300] or f"HTTP {status}"
    if isinstance(err, dict):
        return str(err.get("code") or err.get("type") or ""), str(err.get("message") or f"HTTP {status}")
    return "", str(err or f"HTTP {status}")


def _targets(model: str, transport: str, bases: list[str], key: str | None) -> list[tuple[str, str, dict[str, str]]]:
    """``[(base, probe URL, headers)]`` per base for the providers whose model endpoint is known, else ``[]``."""
    provider = provider_of(model)
    name = model.split("/", 1)[1] if "/" in model else model
    quoted = urllib.parse.quote(name, safe="/:@")
    if provider == "openai":
        if not bases:
            env_base = None if transport == "http" else (os.environ.get("OPENAI_BASE_URL")
                                                          or os.environ.get("OPENAI_API_BASE"))
            bases = [env_base or OPENAI_BASE]
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        out = []
        for base in bases:
            root = base.rstrip("/")
            root = root[: -len("/chat/completions")] if root.endswith("/chat/completions") else root
            out.append((base, f"{root}/models/{quoted}", headers))
        return out
    if provider == "anthropic" and transport == "litellm":
        root = (bases[0] if bases else ANTHROPIC_BASE).rstrip("/")
        root = root[: -len("/v1/messages")] if root.endswith("/v1/messages") else root
        headers = {"anthropic-version": ANTHROPIC_VERSION, **({"x-api-key": key} if key else {})}
        return [(root, f"{root}/v1/models/{quoted}", headers)]
    return []


def preflight(model: str, *, transport: str = "auto", api_base: "str | Sequence[str] | None" = None,
              api_key: str | None = None, api_key_env: str | None = None,
              timeout: float = PROBE_TIMEOUT) -> Preflight:
    """Check credentials, reachability and the model before the first paid call (module docstring); raise
    :class:`~relgrade.InputError` (one line) on the first thing that would make every call fail."""
    if model.startswith("local/"):
        return Preflight("local", "none (the local judge)")
    bases = _bases(api_base)
    transport = choose_transport(model, transport, bases[0] if bases else None)
    where, key = credentials(model, transport, bases, api_key, api_key_env)
    if key is None and provider_of(model) == "anthropic":
        key = os.environ.get("ANTHROPIC_API_KEY")
    targets = _targets(model, transport, bases, key)
    if not targets:
        return Preflight(transport, where)
    secrets = collect_secrets(key, env_names=(api_key_env, key_env(model)))
    with ThreadPoolExecutor(max_workers=min(8, len(targets))) as pool:
        answers = list(pool.map(lambda t: _get(t[1], t[2], timeout), targets))
    answered, unreachable, confirmed = [], [], False
    for (base, url, _), (status, raw, why) in zip(targets, answers):
        if status is None:
            unreachable.append(f"{base} ({redact(why or 'no answer', secrets)})")
            continue
        answered.append(base)
        code, message = _message(raw, status)
        if status == 401 and not key:  # a server that wants a key, and none was set
            raise InputError(f"no API key for {provider_of(model)}: set {key_env(model, api_key_env)} (or name the "
                             f"variable that holds it with --api-key-env): {base} answered 401 "
                             f"({redact(message, secrets)[:200]}); {NOTHING_SENT}")
        if status in (401, 402, 403) or (status == 404 and code in _UNKNOWN_MODEL):
            error = _Refusal(status, f"{message} [GET {url}]")
            raise InputError(f"{fatal_message(error, model, api_key_env, secrets)}; {NOTHING_SENT}")
        confirmed = confirmed or status == 200
    if not answered:
        fix = "start the server or fix --api-base" if bases else "check the network, the proxy (HTTPS_PROXY) or --api-base"
        raise InputError(f"cannot reach {unreachable[0]}" + (f" nor {len(unreachable) - 1} other base(s)"
                                                             if len(unreachable) > 1 else "")
                         + f": {fix}; {NOTHING_SENT}")
    return Preflight(transport, where, tuple(answered), tuple(unreachable), confirmed)


async def apreflight(model: str, **kwargs) -> Preflight:
    """:func:`preflight` on a worker thread (its probes block), for the async judge."""
    return await asyncio.get_running_loop().run_in_executor(None, lambda: preflight(model, **kwargs))


__all__ = ["AMBIENT", "PROBE_TIMEOUT", "Preflight", "apreflight", "credentials", "preflight"]
