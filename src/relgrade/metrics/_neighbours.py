"""ANN against exact search of the same embeddings (the guide: "Exact vs ANN eval: ANN tuning uses recall vs exact
baseline"; "Tune efSearch/nprobe against recall@k"; "Gate compression on recall regression").

Neighbour recall@k of a query is ``|ANN top k ∩ exact top k| / |exact top k|`` (the exact run's top k has k
documents unless the exact search returned fewer: said in a note). A ``k`` deeper than every exact list is the
deepest list's length (said: the metric is named by the k used). It needs no labels: the exact run is the
reference. Its
mean over queries comes with the one interval every relgrade mean has (:func:`relgrade.stats.mean_intervals`:
Student t with a variance floor, plus-two for a 0/1 column). A query of the exact run that the ANN run lacks
scores 0 (and is listed); a query of the ANN run that the exact run lacks is ignored (listed, and said in a note
with how many of the ANN run's queries are scored); a query the exact search returned nothing for is left out. The top k of each run is in trec_eval's order (score, then doc
id), so a tie at the k-th place is cut the same way in both.

With labels, the metrics of both runs (:func:`relgrade.evaluate`) and their paired differences ANN - exact
(:func:`relgrade.compare`) say what the lost neighbours cost, and the ANN run's leaks are listed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from relgrade._errors import InputError
from relgrade.io import Run
from relgrade.metrics._evaluate import Comparison, compare, evaluate, text_table
from relgrade.metrics._measures import Metric
from relgrade.metrics._settings import DEFAULT_NO_ANSWER, queries_fingerprint
from relgrade.metrics._stats import Estimate, estimates


@dataclass(frozen=True)
class AnnReport:
    """What :func:`ann_recall` returns; ``to_dict`` is the JSON ``relgrade gate --min`` reads."""

    k: int
    aggregate: dict[str, Estimate]
    per_query: dict[str, float]
    worst: list[dict[str, Any]]
    missing_queries: list[str]
    ignored_queries: list[str]
    deltas: Comparison | None = None
    leaks: list[dict[str, Any]] | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"neighbour_recall@{self.k}"

    @property
    def value(self) -> float:
        return self.aggregate[self.name].value

    def to_dict(self) -> dict[str, Any]:
        return {"aggregate": {n: e.to_dict() for n, e in self.aggregate.items()},
                "per_query": {q: {self.name: v} for q, v in self.per_query.items()}, "worst": self.worst,
                "n_queries": len(self.per_query), "missing_queries": self.missing_queries,
                "ignored_queries": self.ignored_queries, "deltas": None if self.deltas is None else self.deltas.to_dict(),
                "leaks": self.leaks, "notes": list(self.notes), "settings": self.settings}

    def table(self, show: int = 10) -> str:
        est = self.aggregate[self.name]
        ci = "" if est.ci95 is None else f" [{est.ci95[0]:.4f}, {est.ci95[1]:.4f}]"
        lines = [f"neighbour recall@{self.k} (|ANN top {self.k} ∩ exact top {self.k}| / {self.k}) over "
                 f"{len(self.per_query)} queries: {est.value:.4f}{ci}"]
        losing = [w for w in self.worst if w["recall"] < 1][:show]
        if losing:
            lines.append(f"queries that lose most ({sum(v < 1 for v in self.per_query.values())} lose any):")
            rows = [(w["query_id"], f"{w['recall']:.3f}", ", ".join(w["lost"][:6]) + (" ..." if len(w["lost"]) > 6 else ""))
                    for w in losing]
            lines.append(text_table(("query", "recall", "lost (exact neighbours the ANN missed)"), rows, align="<><"))
        else:
            lines.append("no query loses a neighbour")
        if self.missing_queries:
            lines.append(f"{len(self.missing_queries)} exact queries missing from the ANN run scored 0: "
                         f"{', '.join(self.missing_queries[:5])}")
        if self.deltas is not None:
            lines.append("against the labels (A = exact, B = ANN):")
            lines.append(self.deltas.table())
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)


def _fingerprint(tops: dict[str, list[str]], source: str | None) -> dict[str, Any]:
    h = hashlib.sha256()
    for q in sorted(tops):
        h.update(f"{q}\t{','.join(tops[q])}\n".encode("utf-8"))
    return {"sha256": h.hexdigest(), "path": source, "n_queries": len(tops)}


def ann_recall(run: Run, exact: Run, k: int = 10, *, qrels: Any = None, metrics: Iterable[str | Metric] | None = None,
               corpus: Any = None, rel_threshold: int = 1, no_answer: str = DEFAULT_NO_ANSWER,
               n_worst: int = 20) -> AnnReport:
    """Neighbour recall@k of ``run`` (ANN) against ``exact`` (module docstring), per query and overall.

    ``qrels`` (optional) adds the metric deltas ANN - exact and the ANN run's leaks; ``corpus`` is recorded as
    ``settings["corpus"]``.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"--k must be a whole number >= 1 (e.g. 10), got {k!r}")
    run = run if isinstance(run, Run) else Run.from_dict(run, name="ann")
    exact = exact if isinstance(exact, Run) else Run.from_dict(exact, name="exact")
    notes: list[str] = []
    ranked = {q: docs for q, docs in exact.ranked().items() if docs}
    deepest = max(map(len, ranked.values()), default=0)
    if ranked and k > deepest:
        notes.append(f"k {k} is deeper than every exact list (the longest holds {deepest} documents): neighbour "
                     f"recall@{deepest} is reported")
        k = deepest
    short = [q for q, docs in ranked.items() if len(docs) < k]
    if short:
        notes.append(f"{len(short)} of {len(ranked)} exact lists hold fewer than {k} documents (e.g. {short[0]}): "
                     "those queries' recall is over their own list")
    exact_top = {q: docs[:k] for q, docs in ranked.items()}
    ann_top = {q: docs[:k] for q, docs in run.ranked().items()}
    shared = [q for q in exact_top if q in ann_top]
    if not shared:
        raise InputError(
            f"the ANN run {run.source or run.name} and the exact run {exact.source or exact.name} share no query (ANN "
            f"query ids e.g. {', '.join(map(repr, list(ann_top)[:3])) or 'none'}; exact e.g. "
            f"{', '.join(map(repr, list(exact_top)[:3]))}); run both searches over the same queries")
    per_query: dict[str, float] = {}
    worst = []
    for q, top in exact_top.items():
        got = set(ann_top.get(q, ()))
        lost = [d for d in top if d not in got]
        per_query[q] = 1 - len(lost) / len(top)
        worst.append({"query_id": q, "query": {**exact.queries, **run.queries}.get(q), "recall": per_query[q],
                      "lost": lost, "gained": [d for d in ann_top.get(q, ()) if d not in set(top)]})
    worst.sort(key=lambda w: (w["recall"], w["query_id"]))
    name = f"neighbour_recall@{k}"
    aggregate = estimates({name: np.array(list(per_query.values()))})
    settings: dict[str, Any] = {
        "kind": "ann-recall", "metrics": [name], "k": k, "run": run.name, "exact_run": exact.name,
        "exact": _fingerprint(exact_top, exact.source), "queries": queries_fingerprint(per_query),
    }
    deltas = leaks = None
    if qrels is not None:
        chosen = list(metrics) if metrics is not None else None
        ev_exact = evaluate(qrels, exact, chosen, rel_threshold=rel_threshold, no_answer=no_answer)
        ev_ann = evaluate(qrels, run, chosen, rel_threshold=rel_threshold, no_answer=no_answer)
        deltas, leaks = compare(ev_exact, ev_ann), ev_ann.leaks
        settings.update({"labels": ev_ann.settings["labels"], "rel_threshold": rel_threshold, "no_answer": no_answer})
    if corpus is not None:
        from relgrade.versioning import corpus_fingerprint

        settings["corpus"] = corpus_fingerprint(corpus)
    missing = [q for q in exact_top if q not in ann_top]
    ignored = [q for q in ann_top if q not in exact_top]
    if ignored:
        notes.append(f"{len(ignored)} of the ANN run's {len(ann_top)} queries have no exact search (e.g. "
                     f"{', '.join(ignored[:3])}) and are not scored: the value is over {len(per_query)} queries; "
                     "run the exact search over every query")
    return AnnReport(k, aggregate, per_query, worst[:n_worst], missing, ignored, deltas, leaks, settings, tuple(notes))


__all__ = ["AnnReport", "ann_recall"]
