"""Defaults shared by the library and every command, in a module with no heavy imports (``--help`` stays fast),
and the resource limits of user-supplied sizes (one definition each, one message template: :func:`check_limit`)."""

from __future__ import annotations

DEFAULT_N_BOOT = 1000
"""Bootstrap resamples wherever relgrade bootstraps (calibrate, rank-systems)."""

PREDICTIONS = ("soft", "hard")
"""How the judges predict each query's metric for PPI (relgrade.hybrid.predict): calibrated soft, or hard grades."""
DEFAULT_PREDICTION = "soft"
"""The prediction of estimate, compare with labels and rank-systems."""
DEFAULT_FOLDS = 5
"""Folds of the soft prediction's cross-fit over the human-labeled queries (fewer when fewer queries are labeled)."""

MAX_N_BOOT = 100_000
"""Most bootstrap resamples (``--n-boot``): each holds a resample of every query in memory."""
MAX_SCALE_GRADES = 51
"""Most grades in a scale (``--scale 0-50``, a details file's ``"scale"``): the grade mapping's fit grows with the cube of
the grades (0-50: 11 s and 0.45 GB on 30 pairs; 0-100 did not finish in 10 minutes)."""
MAX_CONCURRENCY = 4096
"""Most judge requests in flight per endpoint (``--concurrency``)."""
MAX_SAMPLES = 100
"""Most answers per pair (``--samples``)."""
RETRIEVER_TIMEOUT = 120.0
"""Seconds one query may take a retriever (relgrade.adapters) before it is taken to hang: a retrieval takes
milliseconds to seconds."""


def check_limit(option: str, value: int, limit: int, unit: str) -> int:
    """``value`` when it is at most ``limit``, else the one-line :class:`~relgrade.InputError` of every limit:
    ``--n-boot: 10,000,000 resamples, over the limit of 100,000; give at most 100,000``."""
    if value > limit:
        from relgrade._errors import InputError

        raise InputError(f"{option}: {value:,} {unit}, over the limit of {limit:,}; give at most {limit:,}")
    return value


__all__ = ["DEFAULT_FOLDS", "DEFAULT_N_BOOT", "DEFAULT_PREDICTION", "MAX_CONCURRENCY", "MAX_N_BOOT", "MAX_SAMPLES",
           "MAX_SCALE_GRADES", "PREDICTIONS", "RETRIEVER_TIMEOUT", "check_limit"]
