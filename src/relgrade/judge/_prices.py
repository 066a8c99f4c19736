"""Prices and token counts for budgeting, without importing litellm (whose import costs seconds).

Prices: litellm ships its price table as a JSON file inside the package
(``litellm/model_prices_and_context_window_backup.json``: ``input_cost_per_token`` and
``output_cost_per_token`` per model name). :func:`price_per_token` locates the installed package with
``importlib.util.find_spec`` (which does not import it), reads that file once (about 0.05 s) and looks
the model up as litellm does for a plain name: first the full name (``ollama/llama3``), then the
name after the provider prefix when the entry's ``litellm_provider`` is that provider
(``openai/gpt-4o-mini`` -> ``gpt-4o-mini``). A price registered at run time with
``litellm.register_model`` is honoured when litellm is already imported (the litellm transport).

Token counts (:func:`count_tokens`, used only for the ``--tpm`` window, the ``--max-cost``
reservation and the dry-run estimate, never for billing, which uses the provider's ``usage``):
OpenAI's BPE through ``tiktoken`` with the encoding files litellm ships offline
(``litellm/litellm_core_utils/tokenizers/<sha1 of the encoding URL>``, sha256-checked): ``o200k_base``
for the gpt-4o / gpt-4.1 / gpt-5 / o-series models, ``cl100k_base`` for every other model. For a
model of another family (Claude, Llama, Gemini) that is an approximation of its own tokenizer,
the same one litellm's ``token_counter`` falls back to. Chat framing as OpenAI documents it: 3
tokens per message plus 3 for the reply. Without tiktoken or the files: ``ceil(utf-8 bytes / 3)``
per message, an overestimate for English text (BPE averages about 4 bytes a token).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

_PRICE_FILE = "model_prices_and_context_window_backup.json"
_ENCODING_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")


def litellm_dir() -> Path | None:
    """The installed litellm package folder, found without importing litellm (None when absent)."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


@functools.lru_cache(maxsize=1)
def price_table() -> dict[str, Any]:
    """litellm's shipped price table (``{model: {input_cost_per_token, ...}}``), or {} without litellm."""
    folder = litellm_dir()
    path = None if folder is None else folder / _PRICE_FILE
    if path is None or not path.is_file():
        return {}
    with open(path, encoding="utf-8") as fh:
        table = json.load(fh)
    return table if isinstance(table, dict) else {}


def _entry(model: str) -> dict[str, Any] | None:
    tables = [price_table()]
    if "litellm" in sys.modules:  # prices registered at run time (litellm.register_model) come first
        tables.insert(0, getattr(sys.modules["litellm"], "model_cost", None) or {})
    provider, _, name = model.partition("/")
    for table in tables:
        entry = table.get(model)
        if isinstance(entry, dict):
            return entry
        if name:
            entry = table.get(name)
            if isinstance(entry, dict) and str(entry.get("litellm_provider", "")).split("_")[0] in (
                    provider.split("_")[0], "text-completion-openai" if provider == "openai" else provider):
                return entry
    return None


def price_per_token(model: str) -> tuple[float, float] | None:
    """(input, output) USD per token from litellm's price table, or None when the model is not in it."""
    if model.startswith("local/"):
        return (0.0, 0.0)
    entry = _entry(model)
    if entry is None:
        return None
    try:
        cin = float(entry.get("input_cost_per_token") or 0.0)
        cout = float(entry.get("output_cost_per_token") or 0.0)
    except (TypeError, ValueError):
        return None
    return (cin, cout)


def encoding_name(model: str) -> str:
    """The tiktoken encoding used to count the model's tokens (see the module doc)."""
    name = model.split("/", 1)[-1]
    return "o200k_base" if name.startswith(_O200K_PREFIXES) else "cl100k_base"


@functools.lru_cache(maxsize=4)
def _encoding(name: str):
    """A tiktoken Encoding built from litellm's offline copy of the BPE file, or None."""
    try:
        from tiktoken import Encoding
        from tiktoken_ext import openai_public
    except ImportError:
        return None
    folder = litellm_dir()
    if folder is None:
        return None

    def load(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        path = folder / "litellm_core_utils" / "tokenizers" / hashlib.sha1(url.encode()).hexdigest()
        data = path.read_bytes()
        if expected_hash and hashlib.sha256(data).hexdigest() != expected_hash:
            raise OSError(f"{path}: not the expected {url}")
        return {base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in data.splitlines() if line)}

    factory = getattr(openai_public, name)
    # tiktoken's own constructor (pattern, special tokens) with our loader: no download, no cache writes.
    offline = types.FunctionType(factory.__code__, {**factory.__globals__, "load_tiktoken_bpe": load})
    try:
        return Encoding(**offline())
    except (OSError, ValueError):
        return None


def count_tokens(model: str, messages: list[dict[str, str]]) -> int:
    """Prompt tokens of chat ``messages`` for budgeting (see the module doc)."""
    enc = None if model.startswith("local/") else _encoding(encoding_name(model))
    total = 3
    for message in messages:
        content = message.get("content") or ""
        if enc is not None:
            total += len(enc.encode(content, disallowed_special=())) + 3
        else:
            total += -(-len(content.encode("utf-8")) // 3) + 3
    return total


MAX_TOKENS = 10_000_000
"""Most tokens one request may report (beyond any context window); more is a provider error, not a cost."""


def usage_tokens(value: Any) -> int | None:
    """A provider's token count, or None when it is not a whole number in [0, :data:`MAX_TOKENS`] (negative, 1e30, a
    string, a boolean): the call's cost is then *unknown*, never negative or absurd."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        return None
    return value


__all__ = ["MAX_TOKENS", "count_tokens", "encoding_name", "litellm_dir", "price_per_token", "price_table",
           "usage_tokens"]
