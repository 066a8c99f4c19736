"""What ``estimate`` returns: one :class:`MetricEstimate` per metric in an :class:`EstimateReport`.

``width`` is the PPI interval's width over the human-only one, both as shown (intersected with the metric's
range); "judge worth" is the number of human-labeled queries the human-only interval would need to be as narrow as
the PPI one shown (:mod:`relgrade.hybrid._plan`), none when the PPI interval shown is not the narrower: every
printed ratio is one the user can check on the two intervals printed beside it. The PPI interval may be the wider
on a sample (the construction is narrower on average, not on every sample: :mod:`relgrade.stats._augmented`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from relgrade._intervals import described
from relgrade._verdict import WORTH_WITHHELD, worth_withheld
from relgrade._words import plural
from relgrade.hybrid._plan import Plan

WIDTH_HELP = ("width = PPI++ / human-only interval width, as shown; judge worth = human-labeled queries the "
              "human-only interval would need to be as narrow as the PPI++ one (none when the PPI++ interval is not "
              "the narrower)")


def shown_ratio(ppi_ci: tuple[float, float], human_ci: tuple[float, float]) -> float | None:
    """PPI width / human-only width of two intervals as shown; None when the human-only one has no width."""
    human = human_ci[1] - human_ci[0]
    return (ppi_ci[1] - ppi_ci[0]) / human if human > 0 else None


def worth_cell(effective_n: float | None, n_labeled: int, lam: float, ratio: float | None, withheld: bool = False) -> str:
    """The tables' "judge worth" cell: queries (and the factor over the labeled ones), or why there is none."""
    if withheld:
        return "withheld"
    if effective_n is not None:
        return f"{effective_n:.0f} queries (x{effective_n / n_labeled:.2f})"
    if lam == 0:
        return "none (lam = 0)"
    return "none (not narrower)" if ratio is not None else "n/a"


@dataclass(frozen=True)
class MetricEstimate:
    """One metric: the PPI++ estimate, the human-only and judge-only values, and what the judge was worth."""

    metric: str
    ppi: float
    ppi_ci95: tuple[float, float]
    human_only: float
    human_ci95: tuple[float, float]
    n_labeled: int
    judge_only: float | None  # None: the judge labeled no (answerable) query
    n_queries: int
    effective_n: float | None  # labeled queries the human-only interval would need to be as narrow
    labels_per_query: float  # human labels per labeled query (to express effective_n in labels)
    note: str | None = None
    lam: float = 0.0
    half_widths: tuple[float, float] | None = None  # (PPI, human-only) half-widths before clipping
    interval: str = ""  # the PPI interval's construction (a name constant of the module that computes it)
    human_interval: str = ""
    plan: Plan | None = None

    @property
    def width_ratio(self) -> float | None:
        """PPI width / human-only width, both as shown (< 1: the judge helped on this sample)."""
        return shown_ratio(self.ppi_ci95, self.human_ci95)

    @property
    def effective_labels(self) -> float | None:
        return None if self.effective_n is None else self.effective_n * self.labels_per_query

    def to_dict(self) -> dict[str, Any]:
        return {
            "ppi": {"value": self.ppi, "ci95": list(self.ppi_ci95), "lam": self.lam, "interval": self.interval,
                    "method": described(self.interval)},
            "human_only": {"value": self.human_only, "ci95": list(self.human_ci95), "n_queries": self.n_labeled,
                           "interval": self.human_interval, "method": described(self.human_interval)},
            "judge_only": {"value": self.judge_only, "n_queries": self.n_queries},
            "width_ratio": self.width_ratio,
            "effective_human_queries": self.effective_n,
            "effective_human_labels": self.effective_labels,
            "plan": None if self.plan is None else self.plan.to_dict(),
            "note": self.note,
        }

    def worth(self) -> str:
        """The table's "judge worth" cell."""
        return worth_cell(self.effective_n, self.n_labeled, self.lam, self.width_ratio)


@dataclass(frozen=True)
class EstimateReport:
    """What :func:`relgrade.hybrid.estimate` returns. ``to_dict`` is the ``--json`` shape; ``table`` the terminal one."""

    estimates: dict[str, MetricEstimate]
    labeled: tuple[str, ...]
    unlabeled: tuple[str, ...]
    human_coverage: dict[str, float]
    judge_coverage: dict[str, float]
    notes: tuple[str, ...] = ()
    per_query: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    leaks: tuple[dict[str, Any], ...] | None = None  # None: no forbidden documents were given
    judge: dict[str, Any] | None = None  # judge labels and the judge's calibration (relgrade._verdict.judge_block)

    @property
    def worth_withheld(self) -> bool:
        """The judge's verdict says "do not use": "judge worth" is left out (:func:`relgrade._verdict.worth_withheld`)."""
        return worth_withheld(self.judge)

    def to_dict(self) -> dict[str, Any]:
        aggregate = {name: est.to_dict() for name, est in self.estimates.items()}
        if self.worth_withheld:
            for entry in aggregate.values():
                entry["effective_human_queries"] = entry["effective_human_labels"] = None
                entry["judge_worth"] = "withheld"
        return {
            "aggregate": aggregate,
            "n_labeled": len(self.labeled), "n_unlabeled": len(self.unlabeled),
            "labeled_queries": list(self.labeled),
            "coverage": {"human_on_labeled": self.human_coverage, "judge_on_all": self.judge_coverage},
            "leaks": None if self.leaks is None else [dict(x) for x in self.leaks],
            "notes": list(self.notes), "per_query": self.per_query, "settings": self.settings, "judge": self.judge,
        }

    def table(self) -> str:
        from relgrade.metrics._evaluate import text_table

        n, N = len(self.labeled), len(self.labeled) + len(self.unlabeled)
        rule = self.settings.get("no_answer")
        scope = ("; means over the queries with a relevant document (--no-answer exclude)" if rule == "exclude"
                 else "; every query counts (--no-answer zero)" if rule == "zero" else "")
        head = ("metric", "PPI++", "95% CI", "human-only", "95% CI", "judge-only", "width", "judge worth")
        rows = []
        for name, e in self.estimates.items():
            ratio = "" if e.width_ratio is None else f"{e.width_ratio:.2f}"
            judge = "n/a" if e.judge_only is None else f"{e.judge_only:.4f}"
            rows.append((name, f"{e.ppi:.4f}", f"[{e.ppi_ci95[0]:.4f}, {e.ppi_ci95[1]:.4f}]", f"{e.human_only:.4f}",
                         f"[{e.human_ci95[0]:.4f}, {e.human_ci95[1]:.4f}]", judge, ratio,
                         worth_cell(e.effective_n, e.n_labeled, e.lam, e.width_ratio, self.worth_withheld)))
        kinds = ", ".join(dict.fromkeys(e.interval for e in self.estimates.values()))
        humans = ", ".join(dict.fromkeys(e.human_interval for e in self.estimates.values()))
        return "\n".join([f"{plural(n, 'human-labeled query', 'human-labeled queries')} of {N}; 95% intervals{scope} "
                           f"({kinds}; human-only: {humans})", text_table(head, rows, "<><><>><"),
                          WIDTH_HELP] + ([WORTH_WITHHELD] if self.worth_withheld else []))
