"""Counted nouns for every message, table and report: ``1 query``, ``2 queries`` (never ``1 queries``)."""

from __future__ import annotations


def plural(n: int, one: str, many: str | None = None) -> str:
    """``"{n} {one}"`` when ``n == 1``, else ``"{n} {many}"`` (``many`` defaults to ``one + "s"``)."""
    word = one if n == 1 else (many if many is not None else one + "s")
    return f"{n} {word}"


__all__ = ["plural"]
