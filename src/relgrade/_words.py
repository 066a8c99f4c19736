"""Counted nouns and durations for every message, table and report: ``1 query``, ``2 queries`` (never ``1 queries``),
``4 min 10 s``."""

from __future__ import annotations


def plural(n: int, one: str, many: str | None = None) -> str:
    """``"{n} {one}"`` when ``n == 1``, else ``"{n} {many}"`` (``many`` defaults to ``one + "s"``)."""
    word = one if n == 1 else (many if many is not None else one + "s")
    return f"{n} {word}"


def duration(seconds: float) -> str:
    """``42 s``, ``4 min 10 s``, ``3.7 h``."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60)} s"
    return f"{seconds / 3600:.1f} h"


__all__ = ["duration", "plural"]
