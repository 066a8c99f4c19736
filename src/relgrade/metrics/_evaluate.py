"""``evaluate``: metrics per query and overall, with failures, leaks and no-answer cases.

The guide's rules: recall@k is the primary metric; read the failed queries (each with what was
expected and the top 5 it got); queries without any relevant document (no-answer cases) are
reported apart and kept out of the means; any forbidden (other tenant's) document in the top k
is a leak.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from relgrade._defaults import RETRIEVER_TIMEOUT
from relgrade._errors import InputError
from relgrade.io import GoldenSet, Qrels, Run
from relgrade.io._columns import paused_gc
from relgrade.metrics._core import compute, join
from relgrade.metrics._measures import Metric, parse_metric, parse_metrics
from relgrade.metrics._settings import (
    DEFAULT_N_BOOT, DEFAULT_NO_ANSWER, check_n_boot, check_no_answer, check_rel_threshold, differences,
    labels_fingerprint, queries_fingerprint,
)
from relgrade.metrics._rows import failure_rows, leak_rows, no_answer_rows
from relgrade.metrics._stats import Difference, Estimate, estimates, paired_difference
from relgrade.stats._augmented import MEAN_INTERVAL

@dataclass(frozen=True)
class EvalReport:
    """What ``evaluate`` returns. Render it with :meth:`to_dict`, :meth:`to_frame` or :meth:`table`."""

    aggregate: dict[str, Estimate]
    per_query: dict[str, dict[str, float]]
    failures: list[dict[str, Any]]
    leaks: list[dict[str, Any]]
    no_answer: list[dict[str, Any]]
    missing_queries: list[str]
    ignored_queries: list[str]
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def n_queries(self) -> int:
        return len(self.per_query)

    def value(self, metric: str) -> float:
        return self.aggregate[parse_metric(metric).name].value

    def to_dict(self) -> dict[str, Any]:
        return {
            "aggregate": {name: est.to_dict() for name, est in self.aggregate.items()},
            "per_query": self.per_query,
            "failures": self.failures,
            "leaks": self.leaks,
            "no_answer": self.no_answer,
            "n_queries": self.n_queries,
            "missing_queries": self.missing_queries,
            "ignored_queries": self.ignored_queries,
            "settings": self.settings,
        }

    def to_frame(self):
        import pandas as pd

        frame = pd.DataFrame.from_dict(self.per_query, orient="index")
        frame.index.name = "query_id"
        return frame

    def table(self) -> str:
        from relgrade._words import plural

        head = ("metric", "value", f"95% CI over {plural(self.n_queries, 'query', 'queries')}", "interval")
        rows = [(name, f"{est.value:.4f}", "" if est.ci95 is None else f"[{est.ci95[0]:.4f}, {est.ci95[1]:.4f}]",
                 est.interval or "") for name, est in self.aggregate.items()]
        retriever = self.settings.get("retriever")  # which id a retriever's run was scored by, said with the table
        return text_table(head, rows, "<><<") + (f"\n{retriever['line']}" if isinstance(retriever, dict) else "")


def evaluate(
    qrels: Qrels | GoldenSet | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Any],
    metrics: Iterable[str | Metric] | None = None,
    *,
    k: Sequence[int] | None = None,
    rel_threshold: int = 1,
    no_answer: str = DEFAULT_NO_ANSWER,
    failure_k: int = 5,
    leak_k: int | None = None,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    ci: bool = True,
    corpus: Any = None,
) -> EvalReport:
    """Score ``run`` against ``qrels``.

    ``metrics`` are names such as ``"recall@5"`` (see :mod:`relgrade.metrics._measures`); by default
    recall, precision and nDCG at each ``k`` (default 5 and 10) plus MRR. ``no_answer="exclude"``
    reports queries with no relevant document apart and keeps them out of the means;
    ``"zero"`` counts them as 0 like trec_eval. Queries of the qrels missing from the run score 0
    (trec_eval ``-c``); run queries absent from the qrels are ignored and listed.
    """
    check_no_answer(no_answer)
    rel_threshold = check_rel_threshold(rel_threshold)
    if ci:
        check_n_boot(n_boot)
    qrels = _as_qrels(qrels)
    run = run if isinstance(run, Run) else Run.from_dict(run)
    chosen = parse_metrics(metrics, k)
    if not qrels.topics:
        raise InputError("the qrels hold no queries; nothing to evaluate", path=qrels.source)

    ranked = join(qrels, run, rel_threshold=rel_threshold)
    if not (ranked.counts > 0).any():
        raise no_shared_queries(run, qrels.topics, qrels.source)
    values = compute(ranked, chosen, rel_threshold=rel_threshold)
    topics = ranked.topics
    answerable = ranked.n_relevant > 0
    include = answerable if no_answer == "exclude" else np.ones(len(topics), bool)
    if not include.any():
        raise InputError(
            "no query has a relevant document at this threshold; lower --rel-threshold or use no_answer='zero'",
            path=qrels.source,
        )
    included = np.flatnonzero(include)
    aggregate = estimates({name: v[included] for name, v in values.items()}, n_boot=n_boot, seed=seed, ci=ci)
    names = list(values)
    rows = np.column_stack([values[name][included] for name in names]).tolist() if names else [[]] * len(included)
    with paused_gc():  # a dict per query, no cycle
        per_query = dict(zip([topics[t] for t in included.tolist()], (dict(zip(names, r)) for r in rows)))
    texts = {**qrels.queries, **run.queries}
    failures = failure_rows(ranked, texts, np.flatnonzero(include & answerable), failure_k, rel_threshold)
    cut = leak_k or max((m.k for m in chosen if m.k is not None), default=10)
    leaks = leak_rows(ranked, qrels, texts, cut)
    no_answers = no_answer_rows(ranked, run, texts, np.flatnonzero(~answerable))
    missing = [topics[t] for t in included[ranked.counts[included] == 0].tolist()]
    settings = {
        "kind": "evaluate", "metrics": [m.name for m in chosen], "rel_threshold": rel_threshold,
        "no_answer": no_answer, "labels": labels_fingerprint(qrels), "queries": queries_fingerprint(per_query),
        "failure_k": failure_k, "leak_k": cut, "forbidden": {"n_docs": sum(map(len, qrels.forbidden.values()))},
        "n_boot": n_boot if ci else None, "seed": seed, "run": run.name,
        "qrels": qrels.source, "interval": MEAN_INTERVAL if ci else None,
    }
    if corpus is not None:
        from relgrade.versioning import corpus_fingerprint

        settings["corpus"] = corpus_fingerprint(corpus)
    if run.retrieval is not None:  # a run of a retriever (relgrade.adapters): which id it was scored by
        settings["retriever"] = dict(run.retrieval)
    return EvalReport(aggregate, per_query, failures, leaks, no_answers, missing, list(ranked.ignored_queries), settings)


def no_shared_queries(run: Run, topics: Sequence[str], labels_path: str | None) -> InputError:
    """The one-line error when a run has no result for any query of the labels (all-zero metrics otherwise)."""
    run_ids = run.query_ids()[:3]
    which = run.source or run.name or ""
    return InputError(
        f"the run {which} has no result for any of the {len(topics)} queries of the labels "
        f"(run query ids e.g. {', '.join(map(repr, run_ids)) or 'none'}; label query ids e.g. "
        f"{', '.join(map(repr, list(topics)[:3]))}); check that the run and the labels use the same query ids",
        path=labels_path)


def find_leaks(qrels: Qrels, run: Run, k: int, *, rel_threshold: int = 1) -> list[dict[str, Any]]:
    """Forbidden documents (``qrels.forbidden``) the run retrieved in its top ``k``: ``{query_id, query, doc_id, rank}``."""
    ranked = join(qrels, run, rel_threshold=rel_threshold)
    return leak_rows(ranked, qrels, {**qrels.queries, **run.queries}, k)


def _as_qrels(qrels) -> Qrels:
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, GoldenSet):
        return qrels.to_qrels()
    if isinstance(qrels, Mapping):
        return Qrels.from_dict(qrels)
    raise InputError(f"qrels must be Qrels, GoldenSet or {{qid: {{doc_id: grade}}}}, got {type(qrels).__name__}")


def evaluate_retriever(retriever: Any, golden: GoldenSet, metrics: Iterable[str | Metric] | None = None, *,
                       k: Sequence[int] | None = None, top_k: int | None = None, id_key: Any = None,
                       concurrency: int = 1, timeout: float | None = RETRIEVER_TIMEOUT, **kwargs: Any) -> EvalReport:
    """Run ``retriever`` over a golden set and evaluate it (``kwargs`` go to :func:`evaluate`).

    ``retriever``: a LangChain retriever or vector store, a LlamaIndex retriever, an object with
    ``search(query, top_k)`` returning hits with ``.id``, or a callable ``query -> [(id, score)]`` (see
    :mod:`relgrade.adapters`). ``top_k`` defaults to the deepest cutoff of the metrics (at least 10);
    ``id_key`` names the metadata key holding the document id (default ``Document.id`` / ``node_id``, falling
    back to the parent document's id when those are not the golden set's: said in ``settings["retriever"]`` and
    under :meth:`EvalReport.table`); ``concurrency`` bounds the queries in flight (the library's async API when it
    has one); ``timeout`` the seconds one query may take (None: no limit).
    """
    from relgrade.adapters import retrieve

    chosen = parse_metrics(metrics, k)
    run = retrieve(retriever, golden, top_k=top_k or _depth(chosen), id_key=id_key, concurrency=concurrency,
                   timeout=timeout)
    return evaluate(golden, run, chosen, **kwargs)


async def aevaluate_retriever(retriever: Any, golden: GoldenSet, metrics: Iterable[str | Metric] | None = None, *,
                              k: Sequence[int] | None = None, top_k: int | None = None, id_key: Any = None,
                              concurrency: int = 8, timeout: float | None = RETRIEVER_TIMEOUT, **kwargs: Any) -> EvalReport:
    """:func:`evaluate_retriever` as a coroutine, at most ``concurrency`` queries in flight."""
    from relgrade.adapters import aretrieve

    chosen = parse_metrics(metrics, k)
    run = await aretrieve(retriever, golden, top_k=top_k or _depth(chosen), id_key=id_key, concurrency=concurrency,
                          timeout=timeout)
    return evaluate(golden, run, chosen, **kwargs)


def _depth(chosen: Sequence[Metric]) -> int:
    return max([m.k for m in chosen if m.k is not None] + [10])


@dataclass(frozen=True)
class Comparison:
    """Per-metric paired differences ``b - a`` over the queries both reports scored, and the settings used."""

    a: str
    b: str
    differences: dict[str, Difference]
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "metrics": {n: d.to_dict() for n, d in self.differences.items()},
                "settings": self.settings}

    def table(self) -> str:
        kinds = ", ".join(dict.fromkeys(d.interval for d in self.differences.values() if d.interval))
        head = ("metric", "A", "B", "B-A", "95% CI of B-A" + (f" ({kinds})" if kinds else ""), "p (paired randomisation)")
        rows = [(name, f"{d.a:.4f}", f"{d.b:.4f}", f"{d.diff:+.4f}",
                 "n/a" if d.ci95 is None else f"[{d.ci95[0]:+.4f}, {d.ci95[1]:+.4f}]", f"{d.p_value:.4f}")
                for name, d in self.differences.items()]
        return text_table(head, rows, align="<>>><<")


def text_table(head: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """Columns padded to their widest cell and separated by two spaces (``align``: one ``<``/``>`` per column)."""
    widths = [max(len(str(r[j])) for r in [head, *rows]) for j in range(len(head))]
    lines = ["  ".join(f"{str(cell):{a}{w}}" for cell, a, w in zip(r, align, widths)).rstrip() for r in [head, *rows]]
    return "\n".join(lines)


def compare(a: EvalReport, b: EvalReport, *, n_boot: int = DEFAULT_N_BOOT, n_perm: int = 10000,
            seed: int = 0) -> Comparison:
    """Paired test per metric between two reports of the same labels and settings (shared queries only).

    InputError when the reports were computed differently (labels, queries, relevance threshold or
    no-answer rule, see :func:`relgrade.metrics._settings.differences`) or share no query.
    """
    check_n_boot(n_boot)
    diffs_ = differences(a.settings, b.settings)
    if diffs_:
        raise InputError(f"the two reports were computed differently ({'; '.join(d for d, _ in diffs_)}); "
                         f"{'; '.join(dict.fromkeys(f for _, f in diffs_))}")
    shared = [q for q in a.per_query if q in b.per_query]
    if not shared:
        raise InputError("the two runs share no evaluated query; evaluate them against the same qrels")
    names = [n for n in a.aggregate if n in b.aggregate]
    diffs = {}
    for name in names:
        va = np.array([a.per_query[q][name] for q in shared])
        vb = np.array([b.per_query[q][name] for q in shared])
        diffs[name] = paired_difference(va, vb, n_boot=n_boot, n_perm=n_perm, seed=seed)
    settings = {k: a.settings.get(k) for k in ("labels", "rel_threshold", "no_answer")}
    settings.update({"kind": "compare", "metrics": names, "queries": queries_fingerprint(shared), "interval": MEAN_INTERVAL,
                     "n_boot": n_boot,
                     "n_perm": n_perm, "seed": seed, "runs": [a.settings.get("run"), b.settings.get("run")]})
    return Comparison(a.settings.get("run", "A"), b.settings.get("run", "B"), diffs, settings)
