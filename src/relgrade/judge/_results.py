"""What a judge run returns: one :class:`Judgment` per pair, the :class:`JudgeResult` of a run,
and the :class:`DryRun` estimate."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from relgrade.io._labels import text_sha256
from relgrade.judge._pool import Pair

__all__ = ["DryRun", "JudgeResult", "Judgment"]


@dataclass(frozen=True)
class Judgment:
    """The judgment of one pooled pair.

    ``status``: ``judged`` (``grade`` set), ``unjudged`` (the answer had no grade on the scale,
    even after one repair; ``raw_answer`` and ``error`` say why) or ``failed`` (no answer after the
    retries; not stored, asked again next run). ``cached`` is True when this run paid nothing for
    the row (it came from the store, or from an identical pair judged earlier in the run); tokens
    and cost are those of the answer when it was paid for. With ``samples > 1``: ``grade`` is the
    majority of the judged samples (ties to the lower grade), ``mean_grade`` their mean and
    ``spread`` their population standard deviation.
    """

    query_id: str
    doc_id: str
    query: str
    text: str
    grade: int | None
    status: str
    distribution: Mapping[str, float] | None
    expected_grade: float | None
    reason: str | None
    model: str
    prompt_hash: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    latency_s: float | None
    cached: bool
    raw_answer: str | None = None
    error: str | None = None
    samples: tuple[int | None, ...] | None = None
    mean_grade: float | None = None
    spread: float | None = None
    scale: tuple[int, ...] | None = None
    """The grades the prompt allows (``(0, 1, 2, 3)``, ``(0, 1)`` for a binary judge); in the details
    JSONL so that ``relgrade calibrate`` compares a binary judge with graded human labels correctly."""
    runs: tuple[int, ...] = ()
    """The runs (indices in pooling order) that showed this text for this (query id, doc id)."""

    def to_dict(self) -> dict[str, Any]:
        """The details-JSONL object (``raw_answer`` only when not judged; sample fields only with samples)."""
        out: dict[str, Any] = {
            "query_id": self.query_id, "doc_id": self.doc_id, "query": self.query, "text": self.text,
            "grade": self.grade, "status": self.status,
            "distribution": dict(self.distribution) if self.distribution is not None else None,
            "expected_grade": self.expected_grade, "reason": self.reason, "model": self.model,
            "prompt_hash": self.prompt_hash, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens, "cost_usd": self.cost_usd,
            "latency_s": self.latency_s, "cached": self.cached, "text_sha256": text_sha256(self.text),
        }
        if self.runs:
            out["runs"] = list(self.runs)
        if self.scale is not None:
            out["scale"] = list(self.scale)
        if self.status != "judged":
            out["raw_answer"] = self.raw_answer
            out["error"] = self.error
        if self.samples is not None:
            out["samples"] = list(self.samples)
            out["mean_grade"] = self.mean_grade
            out["spread"] = self.spread
        return out


@dataclass(frozen=True)
class JudgeResult:
    """All judgments of a run, what remains undone, and what this run spent.

    ``stopped`` is None when every pair was attempted, ``"max_cost"`` when the budget stopped it,
    ``"interrupted"`` on Ctrl-C. ``cost_usd`` and ``n_calls`` count this run's paid calls only;
    ``cost_unknown`` counts paid calls whose price litellm does not know.
    """

    judgments: tuple[Judgment, ...]
    remaining: tuple[Pair, ...]
    model: str
    prompt_hash: str
    stopped: str | None = None
    cost_usd: float = 0.0
    n_calls: int = 0
    cost_unknown: int = 0
    store: str | None = None
    retries: tuple[tuple[str, float], ...] = ()
    """One ``(cause, seconds waited)`` per retry: the HTTP status (``"429"``) or the error type."""
    in_batches: int = 0
    """Of ``remaining``, the pairs left to a provider batch still pending in the store (``judge --batch`` collects
    them; an online judge never pays for them, see :mod:`relgrade.judge.store._claims`)."""

    def qrels(self) -> dict[str, dict[str, int]]:
        """``{query_id: {doc_id: grade}}`` of the judged pairs (unjudged and failed left out).

        A qrels file holds one grade per (query id, doc id). When runs showed one doc id with
        different texts (:meth:`conflicts`), each text is judged and kept in the details with its
        ``text_sha256`` and ``runs``; the qrels hold the grade of the text of the *first* run in
        pooling order that showed the doc (left out if that text got no grade), never the other
        text's grade in its place. Evaluate the other runs with the details, or give their chunks
        their own ids.
        """
        out: dict[str, dict[str, int]] = {}
        first: set[tuple[str, str]] = set()
        for j in self.judgments:
            if (j.query_id, j.doc_id) in first:
                continue
            first.add((j.query_id, j.doc_id))
            if j.grade is not None:
                out.setdefault(j.query_id, {})[j.doc_id] = j.grade
        return out

    def conflicts(self) -> dict[tuple[str, str], tuple[Judgment, ...]]:
        """(query id, doc id) pairs judged on more than one text (runs that showed different texts)."""
        by_ids: dict[tuple[str, str], list[Judgment]] = {}
        for j in self.judgments:
            by_ids.setdefault((j.query_id, j.doc_id), []).append(j)
        return {k: tuple(v) for k, v in by_ids.items() if len({j.text for j in v}) > 1}

    @property
    def unjudged(self) -> tuple[Judgment, ...]:
        return tuple(j for j in self.judgments if j.grade is None)

    def counts(self) -> dict[str, int]:
        """Pairs by status, and where the answers of the answered ones came from: ``paid`` this run, ``stored``
        (the store had them), ``duplicates`` (the same query and chunk text under another id: judged once and
        the grade shared); ``cached = stored + duplicates`` (paid nothing this run)."""
        c = Counter(j.status for j in self.judgments)
        groups: dict[tuple[str, str], list[bool]] = {}
        for j in self.judgments:
            if j.status != "failed":
                groups.setdefault((j.query, j.text), []).append(j.cached)
        duplicates = sum(len(g) - 1 for g in groups.values())
        stored = sum(all(g) for g in groups.values())
        return {"pairs": len(self.judgments) + len(self.remaining), "judged": c["judged"],
                "cached": sum(j.cached for j in self.judgments), "unjudged": c["unjudged"],
                "failed": c["failed"], "remaining": len(self.remaining),
                "paid": sum(not all(g) for g in groups.values()), "stored": stored,
                "duplicates": duplicates}


def in_pairs_order(pairs: "Iterable[Pair]", judgments: "Iterable[Judgment]",
                   remaining: "Iterable[Pair]") -> tuple[tuple[Judgment, ...], tuple[Pair, ...]]:
    """Judgments and remaining pairs in the order of ``pairs`` (query id, doc id *and* text: one doc id may
    have two texts)."""
    order = {(p.query_id, p.doc_id, p.text): n for n, p in enumerate(pairs)}
    return (tuple(sorted(judgments, key=lambda j: order.get((j.query_id, j.doc_id, j.text), 0))),
            tuple(sorted(remaining, key=lambda p: order.get((p.query_id, p.doc_id, p.text), 0))))


@dataclass(frozen=True)
class DryRun:
    """What a run would do: pairs, distinct judgments, those already stored, tokens and dollars."""

    pairs: int
    unique: int
    cached: int
    to_judge: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    latency_s: float | None = None  # median latency of the model's latest judgments in the store (a measurement)
    latency_n: int = 0  # how many stored judgments had one
