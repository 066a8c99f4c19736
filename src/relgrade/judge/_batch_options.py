"""The options of ``judge --batch``: defaults, limits and their one check (:func:`check_batch_options`), kept apart so
the CLI checks them before it reads anything."""

from __future__ import annotations

from relgrade._errors import InputError

BATCH_DISCOUNT = 0.5
"""The batch price as a fraction of the online price where litellm has no batch price (OpenAI and
Anthropic: 50%)."""
DEFAULT_POLL_INTERVAL = 60.0
DEFAULT_BATCH_SIZE = 50_000
"""OpenAI's limit per batch (Anthropic's is 100,000)."""
MAX_BATCH_SIZE = 100_000
"""The largest ``--batch-size`` (Anthropic's limit per batch)."""
MAX_POLL_INTERVAL = 86_400.0
DEFAULT_MAX_POLL_ERRORS = 10
"""Status polls of one batch that may fail in a row (each after the client's own retries) before the run stops."""
_STALE_SUBMIT = 120.0


def check_batch_options(*, poll_interval: float = DEFAULT_POLL_INTERVAL, batch_size: int = DEFAULT_BATCH_SIZE,
                        fallback: str = "batch", max_poll_errors: int = DEFAULT_MAX_POLL_ERRORS) -> None:
    """InputError unless the batch options are in range (checked by the CLI before it reads anything)."""
    if isinstance(poll_interval, bool) or not isinstance(poll_interval, (int, float)) \
            or not 0 < poll_interval <= MAX_POLL_INTERVAL:
        raise InputError(f"--poll-interval must be a positive number of seconds up to {MAX_POLL_INTERVAL:g}, "
                         f"got {poll_interval!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise InputError(f"--batch-size must be an integer from 1 to {MAX_BATCH_SIZE:,} (Anthropic's limit; "
                         f"OpenAI's is {DEFAULT_BATCH_SIZE:,}), got {batch_size!r}")
    if isinstance(max_poll_errors, bool) or not isinstance(max_poll_errors, int) or max_poll_errors < 1:
        raise InputError(f"max_poll_errors must be an integer >= 1, got {max_poll_errors!r}")
    if fallback not in {"batch", "direct"}:
        raise InputError(f"--batch-fallback must be batch or direct, got {fallback!r}")


__all__ = ["BATCH_DISCOUNT", "DEFAULT_BATCH_SIZE", "DEFAULT_MAX_POLL_ERRORS", "DEFAULT_POLL_INTERVAL", "MAX_BATCH_SIZE",
           "MAX_POLL_INTERVAL", "check_batch_options"]
