"""Running an audit through the judge: :func:`run_audit` (pays for what the store lacks) and :func:`price_audit`
(the dry run).

Every answer goes through :func:`relgrade.judge.judge_pairs`, the path of ``relgrade judge``: same transport,
retries, store, claims, budget and cost accounting. Two calls share one budget (``config.max_cost`` over both):

1. the sampled pairs with two samples each: sample 0 is the pair's ordinary store key (the answer ``relgrade
   judge`` stored, or pays for now), sample 1 the key of a second answer (``judge --samples 2``'s), asked past
   the first: the identity probe's re-ask, stored like any answer, so a re-run of the audit reuses it (a second
   sample ``judge --samples 2`` stored already serves as it is: an answer asked beside the first, so it shows the
   judge's noise but not a drift since);
2. every perturbed passage, each a (query, text) pair of its own and so a store key of its own.

The grades are then read back from the store by those keys (a pair another process answered meanwhile counts
too), checked against the prompt's scale like every stored row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade.audit._family import circularity
from relgrade.audit._probes import Design
from relgrade.audit._report import AuditPlan, AuditReport
from relgrade.audit._stats import DEFAULT_MIN_SHIFT, analyse
from relgrade.judge import JudgeConfig, JudgmentStore, Pair, Prompt, estimate, judge_pairs
from relgrade.judge._prompt import resolve
from relgrade.judge.engine._engine import check_grades, make_units
from relgrade.judge.store._open import open_store

__all__ = ["price_audit", "run_audit"]


def _check(config: JudgeConfig | None, min_shift: float, alpha: float) -> JudgeConfig:
    config = config or JudgeConfig()
    if config.samples != 1:
        raise InputError(f"an audit compares single answers: samples must be 1, got {config.samples} (the identity "
                         "probe asks every pair a second time itself)")
    ok = isinstance(min_shift, (int, float)) and not isinstance(min_shift, bool) and math.isfinite(min_shift)
    if not ok or min_shift < 0:
        raise InputError(f"--min-shift must be a finite number of grades >= 0 (e.g. {DEFAULT_MIN_SHIFT}), got "
                         f"{min_shift!r}")
    if not (isinstance(alpha, float) and 0 < alpha < 1):
        raise InputError(f"alpha must be a number in (0, 1), got {alpha!r}")
    return config


def _kinds(design: Design) -> dict[str, list[Pair | None]]:
    """Per kind of answer, the pair judged for each sampled pair (None where the probe does not apply)."""
    out: dict[str, list[Pair | None]] = {"original": list(design.pairs)}
    for name in design.probes:
        out[name] = [None if t is None else Pair(p.query_id, p.doc_id, p.query, t)
                     for p, t in zip(design.pairs, design.texts[name])]
    return out


def _keys(kinds: dict[str, list[Pair | None]], model: str, prompt: Prompt, config: JudgeConfig) -> dict[str, list]:
    """The store key of every answer (the key ``judge_pairs`` writes it under: sample 1 for the identity re-ask)."""
    pairs = [p for ps in kinds.values() for p in ps if p is not None]
    units = {(u.query, u.text): u.keys for u in make_units(pairs, model, prompt, replace(config, samples=2))}
    return {kind: [None if p is None else units[(p.query, p.text)][1 if kind == "identity" else 0] for p in ps]
            for kind, ps in kinds.items()}


class _Progress:
    """One progress count over the audit's two judge calls."""

    def __init__(self, on_progress: Callable[[dict[str, Any]], None] | None):
        self.on_progress, self.base, self.last = on_progress, {}, {}

    def __call__(self, stats: dict[str, Any]) -> None:
        self.last = stats
        if self.on_progress is not None:
            self.on_progress({k: v + self.base.get(k, 0) for k, v in stats.items()})

    def next_call(self) -> None:
        self.base = {k: v + self.base.get(k, 0) for k, v in self.last.items()}
        self.last = {}


def run_audit(design: Design, *, model: str | None = None, prompt: "str | Path | Prompt | None" = None,
              store: "str | Path | JudgmentStore | None" = None, config: JudgeConfig | None = None,
              api_base: "str | Sequence[str] | None" = None, api_key: str | None = None,
              api_key_env: str | None = None, max_grade: int | None = None, min_shift: float = DEFAULT_MIN_SHIFT,
              alpha: float = 0.05, system_models: Sequence[str] = (),
              on_progress: Callable[[dict[str, Any]], None] | None = None) -> AuditReport:
    """Judge the audit of ``design`` (:func:`relgrade.audit.design_audit`) and analyse it (module docstring).

    ``model``, ``prompt``, ``store``, ``config``, ``api_*``, ``max_grade``, ``on_progress``: as for
    :func:`relgrade.judge.judge_pairs` (``config.samples`` must be 1; ``config.max_cost`` bounds the whole audit).
    ``min_shift`` and ``alpha``: :func:`relgrade.audit.analyse`. ``system_models``: the models behind the system's
    reranker or generator, checked for a family shared with the judge (:mod:`relgrade.audit._family`).
    """
    config = _check(config, min_shift, alpha)
    model, prompt_obj = resolve(model, prompt, max_grade)
    circular = circularity(model, system_models)
    kinds = _kinds(design)
    perturbed = [p for kind, ps in kinds.items() if kind not in ("original", "identity") for p in ps if p is not None]
    db, owned = open_store(store)
    progress = _Progress(on_progress)
    call = dict(model=model, prompt=prompt_obj, store=db, api_base=api_base, api_key=api_key, api_key_env=api_key_env)
    try:
        results = [judge_pairs(kinds["original"], config=replace(config, samples=2), on_progress=progress, **call)]
        if results[0].stopped is None and perturbed:
            spent = results[0].cost_usd
            left = None if config.max_cost is None else max(0.0, config.max_cost - spent)
            progress.next_call()
            results.append(judge_pairs(perturbed, config=replace(config, max_cost=left), on_progress=progress, **call))
        keys = _keys(kinds, model, prompt_obj, config)
        records = db.get_many([k for ks in keys.values() for k in ks if k is not None])
        check_grades(records, prompt_obj, str(db.path))
        where = str(db.path)
    finally:
        if owned:
            db.close()
    grades: dict[str, list[int | None]] = {}
    answers: dict[str, dict[str, Any]] = {}
    for kind, ks in keys.items():
        rows = [None if k is None else records.get(k) for k in ks]
        grades[kind] = [r["grade"] if r is not None and r["status"] == "judged" else None for r in rows]
        paid = [r for r in rows if r is not None and r["status"] in ("judged", "unjudged")]
        costs = [r.get("cost_usd") for r in paid]
        answers[kind] = {"answers": len(paid), "graded": sum(g is not None for g in grades[kind]),
                         "missing": sum(k is not None for k in ks) - len(paid),
                         "calls": sum(int(r.get("calls", 1)) for r in paid),
                         "cost_usd": None if None in costs else float(sum(costs))}
    na = {name: sum(t is None for t in design.texts[name]) for name in design.probes}
    probes = analyse(grades, [p.query_id for p in design.pairs], probes=design.probes, min_shift=min_shift,
                     alpha=alpha, max_grade=prompt_obj.max_grade, not_applicable=na)
    pairs = tuple({"query_id": p.query_id, "doc_id": p.doc_id, "grades": {k: grades[k][i] for k in grades}}
                  for i, p in enumerate(design.pairs))
    stopped = next((r.stopped for r in results if r.stopped), None)
    return AuditReport(model, prompt_obj.name, prompt_obj.hash, probes, len(design.pairs), design.n_queries,
                       design.population, design.seed, float(min_shift), alpha, design.added, circular, answers,
                       sum(r.n_calls for r in results), float(sum(r.cost_usd for r in results)),
                       sum(r.cost_unknown for r in results), stopped, sum(r.counts()["failed"] for r in results),
                       where, pairs)


def price_audit(design: Design, *, model: str | None = None, prompt: "str | Path | Prompt | None" = None,
                store: "str | Path | JudgmentStore | None" = None, config: JudgeConfig | None = None,
                max_grade: int | None = None) -> AuditPlan:
    """What :func:`run_audit` would pay, per kind of answer, as :func:`relgrade.judge.estimate` prices a judge run
    (the store read, nothing written or called)."""
    config = _check(config, DEFAULT_MIN_SHIFT, 0.05)
    model, prompt_obj = resolve(model, prompt, max_grade)
    kinds = _kinds(design)
    est = dict(model=model, prompt=prompt_obj, store=store, max_grade=max_grade)
    plans = {"original": estimate(kinds["original"], config=config, **est)}
    both = estimate(kinds["original"], config=replace(config, samples=2), **est)
    for name in design.probes:
        if name != "identity":
            plans[name] = estimate([p for p in kinds[name] if p is not None], config=config, **est)
    out: dict[str, dict[str, int]] = {}
    tokens = completion = 0
    costs: list[float | None] = []
    for kind in ("original", *design.probes):
        if kind == "identity":
            calls, t, c, cost = (both.calls - plans["original"].calls, both.prompt_tokens - plans["original"].prompt_tokens,
                                 both.completion_tokens - plans["original"].completion_tokens,
                                 None if both.cost_usd is None else both.cost_usd - plans["original"].cost_usd)
            n = len(design.pairs)
        else:
            p = plans[kind]
            calls, t, c, cost, n = p.calls, p.prompt_tokens, p.completion_tokens, p.cost_usd, p.pairs
        out[kind] = {"pairs": n, "calls": calls, "prompt_tokens": t, "cost_usd": cost}
        tokens, completion = tokens + t, completion + c
        costs.append(cost)
    return AuditPlan(model, len(design.pairs), design.n_queries, design.population, out, tokens, completion,
                     None if None in costs else float(sum(costs)), both.latency_s, both.latency_n)

