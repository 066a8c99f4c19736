"""What an audit returns: :class:`AuditReport` (the ``--json`` shape and the terminal table) and :class:`AuditPlan`
(the dry run)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from relgrade._intervals import CLUSTERED
from relgrade._words import plural
from relgrade.audit._family import Circularity
from relgrade.audit._probes import PROBE
from relgrade.audit._stats import ProbeResult

__all__ = ["AuditPlan", "AuditReport", "KINDS"]

KINDS = ("original", "identity", "length", "keywords", "truncation", "duplication", "position")
"""The answers an audit reads, in order: the stored original, its re-ask, and each probe's perturbed passage."""


def _pct(x: float | None) -> str:
    return "" if x is None else f"{100 * x:.0f}%"


@dataclass(frozen=True)
class AuditReport:
    """An audit's outcome. ``answers``: per kind of answer (:data:`KINDS`), how many the audit read, the calls they
    took when they were paid (1 each, 2 with a repair) and their cost; ``n_calls`` and ``cost_usd``: what this run
    paid (the rest came from the store). ``pairs``: each sampled pair's ids and grades per kind."""

    model: str
    prompt_name: str
    prompt_hash: str
    probes: tuple[ProbeResult, ...]
    n_pairs: int
    n_queries: int
    population: int
    seed: int
    min_shift: float
    alpha: float
    added: tuple[str, ...] = ()
    circularity: tuple[Circularity, ...] = ()
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    n_calls: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = 0
    stopped: str | None = None
    failed: int = 0
    store: str | None = None
    pairs: tuple[dict[str, Any], ...] = ()

    @property
    def biases(self) -> tuple[str, ...]:
        return tuple(p.probe for p in self.probes if p.bias)

    @property
    def missing(self) -> int:
        """Answers the audit lacks (failed, unjudged, or not asked because the run stopped)."""
        return sum(a.get("missing", 0) for a in self.answers.values())

    @property
    def complete(self) -> bool:
        return self.stopped is None and not self.failed

    @property
    def exit_code(self) -> int:
        """1 when a probe shows a bias or some calls failed (re-run to finish), else 0."""
        return 1 if self.biases or self.failed else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "audit", "model": self.model, "prompt": {"name": self.prompt_name, "hash": self.prompt_hash},
            "n_pairs": self.n_pairs, "n_queries": self.n_queries, "population": self.population,
            "settings": {"seed": self.seed, "min_shift": self.min_shift, "alpha": self.alpha,
                         "probes": [p.probe for p in self.probes], "added": list(self.added),
                         "family_size": len(self.probes), "interval": CLUSTERED.name,
                         "method": CLUSTERED.described},
            "probes": {p.probe: p.to_dict() for p in self.probes},
            "biases": list(self.biases),
            "circularity": [c.to_dict() for c in self.circularity],
            "answers": self.answers,
            "this_run": {"calls": self.n_calls, "cost_usd": self.cost_usd, "calls_of_unknown_price": self.cost_unknown,
                         "stopped": self.stopped, "failed": self.failed, "store": self.store},
            "complete": self.complete,
            "pairs": [dict(p) for p in self.pairs],
        }

    def table(self) -> str:
        """The terminal table: one row per probe, then how the intervals and verdicts are read."""
        from relgrade.metrics._evaluate import text_table

        head = ("probe", "vs", "pairs", "shift", "95% CI", "changed", "verdict")
        rows = []
        for p in self.probes:
            shift = "" if p.shift is None else f"{p.shift:+.2f}"
            ci = "" if p.ci95 is None else f"[{p.ci95[0]:+.2f}, {p.ci95[1]:+.2f}]"
            base = "stored" if p.baseline == "original" else p.baseline
            rows.append((p.probe, base, str(p.n_pairs), shift, ci, _pct(p.changed), p.verdict))
        lines = [f"audit of {self.model} (prompt {self.prompt_name} {self.prompt_hash}): "
                 f"{plural(self.n_pairs, 'pair')} of {plural(self.n_queries, 'query', 'queries')}, sampled from "
                 f"{self.population:,} (seed {self.seed})", text_table(head, rows, "<<>>><<")]
        if self.added:
            lines.append(f"{', '.join(self.added)} ran as the baseline of the probes asked for")
        lines.append(f"shift: mean grade change of each pair against its 'vs' answer (identity: the same pair re-asked "
                     f"past the store); 95% CI: {CLUSTERED.name} over {plural(len(self.probes), 'probe')} "
                     f"(pairs clustered by query, Bonferroni); a bias: the CI excludes 0 and the shift is at least "
                     f"{self.min_shift:g} grade; changed: pairs whose grade moved (identity's is the judge's own noise)")
        return "\n".join(lines)


@dataclass(frozen=True)
class AuditPlan:
    """What an audit would do, paying nothing: per kind of answer (``kinds``), the pairs, the calls still to pay,
    their prompt tokens and dollars; the totals (dollars None when the model is not in litellm's price table) and the
    median latency of stored judgments."""

    model: str
    n_pairs: int
    n_queries: int
    population: int
    kinds: dict[str, dict[str, Any]]
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    latency_s: float | None = None
    latency_n: int = 0

    @property
    def calls(self) -> int:
        return sum(k["calls"] for k in self.kinds.values())

    def lines(self) -> list[str]:
        rows = ", ".join(f"{kind} {v['calls']}" + (f" of {v['pairs']}" if v["calls"] != v["pairs"] else "")
                         for kind, v in self.kinds.items())
        return [f"dry run of an audit of {self.model}: {plural(self.n_pairs, 'pair')} of "
                f"{plural(self.n_queries, 'query', 'queries')} (sampled from {self.population:,}); "
                f"{plural(self.calls, 'call')} to pay",
                f"calls per answer kind (the rest are in the store): {rows}",
                f"estimated tokens: {self.prompt_tokens} prompt + {self.completion_tokens} completion; estimated cost "
                + ("unknown (model not in litellm's price table)" if self.cost_usd is None else f"${self.cost_usd:.4f}")]


def probe_what() -> str:
    """One line per probe: its name and what it changes (the command's help)."""
    return "; ".join(f"{p.name}: {p.what}" for p in PROBE.values())
