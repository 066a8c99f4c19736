"""What a human sample costs in annotators' time (issue 36: "you grade 15 random queries" meant 204 pairs).

PPI needs whole random queries, every pooled pair of each: the pairs, not the queries, are what people grade. The
rate is measured where label times are recorded (``relgrade label`` stamps each label; its export has a ``time``
column): the median gap between one annotator's successive labels, breaks left out. Without recorded times it is
:data:`ASSUMED_SECONDS_PER_PAIR`, and the text says it is an assumption.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from relgrade._words import duration, plural

ASSUMED_SECONDS_PER_PAIR = 30.0
"""An annotator's seconds per (query, chunk) pair when no label times are recorded: read the query and a passage of
a few hundred words, grade it 0-3. An assumption, named wherever it is used."""
MAX_GAP_S = 600.0
"""A gap of more than 10 minutes between two labels of one annotator is a break, not labeling time."""
MIN_INTERVALS = 3
"""Recorded intervals needed before the measured rate replaces the assumption."""
SUGGESTED_QUERIES = 15
"""The human-labeled queries a first calibration asks for (the README's walkthrough; PPI++ intervals cover as
promised from about 15 labeled queries, README Limits)."""


@dataclass(frozen=True)
class Effort:
    """``pairs`` to grade at ``seconds_per_pair``, measured from ``recorded`` label intervals (0: assumed)."""

    pairs: int
    seconds_per_pair: float
    recorded: int = 0

    @property
    def seconds(self) -> float:
        return self.pairs * self.seconds_per_pair

    def text(self) -> str:
        """``labeling them takes about 1.6 h at an assumed 30 s per pair (...)``."""
        if self.recorded:
            rate = (f"{self.seconds_per_pair:.0f} s per pair (the median of "
                    f"{plural(self.recorded, 'recorded interval')} between one annotator's labels)")
        else:
            rate = (f"an assumed {self.seconds_per_pair:.0f} s per pair (no label times recorded; relgrade label "
                    "records them)")
        return f"labeling them takes about {duration(self.seconds)} at {rate}"

    def to_dict(self) -> dict:
        return {"pairs": self.pairs, "seconds_per_pair": self.seconds_per_pair, "seconds": self.seconds,
                "rate": "recorded" if self.recorded else "assumed", "recorded_intervals": self.recorded}


def _when(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def recorded_rate(labels: Iterable) -> tuple[float | None, int]:
    """``(median seconds between successive labels of one annotator, intervals)`` from labels with a ``time`` and an
    ``annotator`` (:class:`relgrade.io.Label` or the label page's rows); ``(None, n)`` below :data:`MIN_INTERVALS`."""
    times: dict[str, list[float]] = {}
    for lab in labels:
        t = _when(getattr(lab, "time", None))
        if t is not None:
            times.setdefault(str(getattr(lab, "annotator", None) or ""), []).append(t)
    gaps = []
    for stamps in times.values():
        stamps.sort()
        gaps += [b - a for a, b in zip(stamps, stamps[1:]) if 0 < b - a <= MAX_GAP_S]
    if len(gaps) < MIN_INTERVALS:
        return None, len(gaps)
    return float(statistics.median(gaps)), len(gaps)


def effort(pairs: int, labels: Iterable = ()) -> Effort:
    """The time ``pairs`` take to label: at the rate recorded in ``labels`` (:func:`recorded_rate`), else assumed."""
    rate, n = recorded_rate(labels)
    if rate is None:
        return Effort(int(pairs), ASSUMED_SECONDS_PER_PAIR, 0)
    return Effort(int(pairs), rate, n)


def sample_plan(pair_counts: Iterable[int], n_queries: int = SUGGESTED_QUERIES) -> tuple[int, int, float]:
    """``(queries, pairs, pairs per query)`` that ``n_queries`` random queries of a pool hold, from the pooled pairs
    of each query: the mean times the queries drawn (all of them when the pool has fewer)."""
    counts = list(pair_counts)
    if not counts:
        return 0, 0, 0.0
    per = sum(counts) / len(counts)
    n = min(n_queries, len(counts))
    return n, sum(counts) if n == len(counts) else round(per * n), per


def first_sample_line(pairs: Iterable) -> str:
    """What the first human sample of a judge's pool asks of people (``judge --dry-run``): :data:`SUGGESTED_QUERIES`
    random queries with every pooled pair, counted in pairs and in time. ``pairs``: the pool (``.query_id`` and
    ``.doc_id`` of each pooled pair)."""
    per_query: dict[str, set[str]] = {}
    for p in pairs:
        per_query.setdefault(p.query_id, set()).add(p.doc_id)
    n, n_pairs, per = sample_plan(len(docs) for docs in per_query.values())
    return (f"human labels: {plural(n, 'random query', 'random queries')} of {len(per_query)} (relgrade sample --n "
            f"{n}) hold about {plural(n_pairs, 'pair')} ({per:.1f} pooled pairs per query); "
            f"{effort(n_pairs).text()}")


__all__ = ["ASSUMED_SECONDS_PER_PAIR", "Effort", "MAX_GAP_S", "SUGGESTED_QUERIES", "effort", "first_sample_line",
           "recorded_rate", "sample_plan"]
