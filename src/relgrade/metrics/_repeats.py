"""Several runs of one configuration as repeats (the guide: "Approximate nearest neighbor search can return
slightly different results across runs. Run evals multiple times").

:func:`evaluate_repeats` scores each repeat with :func:`relgrade.evaluate` and reports, per metric, the mean over
queries of each query's mean over repeats, the between-repeat spread (the repeat means, their SD and range), an
interval that includes repeat-to-repeat variation (:func:`relgrade.stats.repeat_interval`), and per query the
stability of its top k: the mean pairwise Jaccard similarity of the repeats' top-k sets (1 = identical).

The result is an :class:`~relgrade.metrics.EvalReport` whose ``per_query`` holds the per-query means, so
:func:`relgrade.compare` pairs two configurations' repeats query by query, and whose JSON carries each metric's
repeat means (``aggregate[m]["repeats"]``), which ``relgrade gate`` turns into a noise allowance
(:func:`relgrade.stats.repeat_noise`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from relgrade._errors import InputError
from relgrade.io import Run
from relgrade.metrics._evaluate import EvalReport, evaluate
from relgrade.metrics._measures import Metric, parse_metrics
from relgrade.metrics._settings import DEFAULT_NO_ANSWER
from relgrade.metrics._stats import Estimate


@dataclass(frozen=True)
class RepeatReport(EvalReport):
    """An :class:`EvalReport` over per-query means of R repeats, plus ``repeats`` (module docstring)."""

    repeats: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        for name, spread in self.repeats["metrics"].items():
            data["aggregate"][name]["repeats"] = spread
        data["repeats"] = {k: v for k, v in self.repeats.items() if k != "metrics"}
        return data

    def table(self) -> str:
        r = self.repeats
        from relgrade._intervals import REPEATS

        lines = [f"{'metric':<16}{'mean':>8}   95% CI ({REPEATS.name})   between repeats: sd [min, max]"]
        width = len(f"95% CI ({REPEATS.name})   ")
        for name, est in self.aggregate.items():
            s = r["metrics"][name]
            ci = "" if est.ci95 is None else f"[{est.ci95[0]:.4f}, {est.ci95[1]:.4f}]"
            lines.append(f"{name:<16}{est.value:>8.4f}   {ci:<{width}}{s['sd']:.4f} [{s['min']:.4f}, {s['max']:.4f}]")
        st = r["stability"]
        lines.append(f"top-{st['k']} stability (mean pairwise Jaccard over {r['n']} repeats): {st['mean_jaccard']:.4f}; "
                     f"{st['n_unstable']} of {len(st['per_query'])} queries differ between repeats")
        return "\n".join(lines)


def _answered(run: Run, topics: set[str]) -> set[str]:
    return set(run.query_ids()) & topics


def check_same_queries(runs: Sequence[Run], topics: Iterable[str]) -> None:
    """InputError unless every repeat answers the same queries of the labels (repeats of one query set)."""
    topics = set(topics)
    first = _answered(runs[0], topics)
    for run in runs[1:]:
        here = _answered(run, topics)
        if here != first:
            lost, extra = sorted(first - here), sorted(here - first)
            what = (f"lacks {len(lost)} queries of the first repeat (e.g. {lost[0]!r})" if lost
                    else f"answers {len(extra)} queries the first repeat does not (e.g. {extra[0]!r})")
            raise InputError(f"repeat {run.source or run.name} {what}; repeats must be runs of one configuration over "
                             f"the same queries as {runs[0].source or runs[0].name}", path=None)


def _jaccard(sets: list[set[str]]) -> float:
    values = [len(a & b) / len(a | b) if a | b else 1.0 for a, b in combinations(sets, 2)]
    return float(np.mean(values))


def stability(runs: Sequence[Run], queries: Iterable[str], k: int) -> dict[str, float]:
    """``{query_id: mean pairwise Jaccard of the repeats' top-k sets}`` (1 when every repeat returned the same set)."""
    ranked = [run.ranked() for run in runs]
    return {q: _jaccard([set(r.get(q, [])[:k]) for r in ranked]) for q in queries}


def evaluate_repeats(qrels: Any, runs: Sequence[Run | Mapping[str, Any]], metrics: Iterable[str | Metric] | None = None,
                     *, k: Sequence[int] | None = None, stability_k: int | None = None, alpha: float = 0.05,
                     **kwargs: Any) -> RepeatReport:
    """Score ``runs`` (R >= 2 repeats of one configuration over the same queries) against ``qrels``.

    ``kwargs`` go to :func:`relgrade.evaluate` (``rel_threshold``, ``no_answer``, ``corpus``, ...). ``stability_k``
    defaults to the deepest cutoff of the metrics (10 without one). See the module docstring.
    """
    from relgrade.metrics._evaluate import _as_qrels
    from relgrade.stats import repeat_interval

    runs = [run if isinstance(run, Run) else Run.from_dict(run, name=f"repeat{i + 1}") for i, run in enumerate(runs)]
    if len(runs) < 2:
        raise InputError(f"repeats need at least 2 runs of one configuration, got {len(runs)}; pass --run twice or more")
    qrels = _as_qrels(qrels)
    chosen = parse_metrics(metrics, k)
    check_same_queries(runs, qrels.topics)
    kwargs.setdefault("no_answer", DEFAULT_NO_ANSWER)
    reports = [evaluate(qrels, run, chosen, **kwargs) for run in runs]
    first = reports[0]
    queries = list(first.per_query)
    names = list(first.aggregate)
    matrix = {m: np.array([[rep.per_query[q][m] for rep in reports] for q in queries]) for m in names}
    aggregate, spread = {}, {}
    for m in names:
        x = matrix[m]
        value, lo, hi = repeat_interval(x, alpha=alpha) if len(queries) >= 2 else (float(x.mean()), None, None)
        aggregate[m] = Estimate(value, None if lo is None else (lo, hi), len(queries))
        means = x.mean(axis=0)
        spread[m] = {"values": means.tolist(), "sd": float(means.std(ddof=1)), "min": float(means.min()),
                     "max": float(means.max())}
    per_query = {q: {m: float(matrix[m][i].mean()) for m in names} for i, q in enumerate(queries)}
    cutoffs = [mm.k for mm in chosen if mm.k is not None]
    depth = stability_k or (max(cutoffs) if cutoffs else 10)
    jac = stability(runs, queries, depth)
    unstable = sorted((q for q in jac if jac[q] < 1), key=lambda q: (jac[q], q))
    names_run = [rep.settings.get("run") for rep in reports]
    settings = {**first.settings, "run": names_run[0] if len(set(names_run)) == 1 else "+".join(map(str, names_run)),
                "repeats": len(runs), "runs": [r.source or r.name for r in runs]}
    failures = _merge([rep.failures for rep in reports], ("query_id",))
    leaks = _merge([rep.leaks for rep in reports], ("query_id", "doc_id"))
    repeats = {
        "n": len(runs), "runs": settings["runs"], "metrics": spread,
        "stability": {"k": depth, "mean_jaccard": float(np.mean(list(jac.values()))) if jac else 1.0,
                      "n_unstable": len(unstable), "least_stable": [{"query_id": q, "jaccard": jac[q]} for q in unstable[:10]],
                      "per_query": jac},
    }
    return RepeatReport(aggregate, per_query, failures, leaks, first.no_answer, first.missing_queries,
                        first.ignored_queries, settings, repeats)


def _merge(rows_per_repeat: list[list[dict]], key: tuple[str, ...]) -> list[dict]:
    """Rows of every repeat, once per ``key``, with ``repeats``: in how many repeats it happened."""
    out: dict[tuple, dict] = {}
    for rows in rows_per_repeat:
        for row in rows:
            k = tuple(row[x] for x in key)
            if k in out:
                out[k]["repeats"] += 1
            else:
                out[k] = {**row, "repeats": 1}
    return list(out.values())


__all__ = ["RepeatReport", "check_same_queries", "evaluate_repeats", "stability"]
