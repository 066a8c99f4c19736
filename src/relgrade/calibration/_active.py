"""The active design: the judges choose which queries humans label (``relgrade sample --design active``).

Every query of the judged pool (the queries of ``--judge``, ``N`` of them) gets a per-draw probability from the
judges' uncertainty about its metric, mixed with uniform (:func:`relgrade.stats._weighted.design_probabilities`):

    q_i = (1 - a) u_i / sum(u) + a / N,    a = floor (default 0.3), raised until mean_i(1 / (N q_i)) <= 1.02

and ``n`` queries are drawn *with replacement* with these probabilities (Zrnic & Candès 2024, "Active statistical
inference"); each drawn query is listed once, with every pooled pair, in the order first drawn. Its rows record
``design`` = ``active``, ``weight`` = ``1 / (n q_i)`` (``N / n`` under the uniform design, as the ``queries`` design
records), ``draws`` (how many of the ``n`` draws chose it) and ``pool`` (``N``). ``relgrade estimate``, ``compare``,
``rank-systems`` (and the gate on their reports) read them back and use the inverse-probability-weighted PPI++
estimator of :mod:`relgrade.stats._weighted`; a query drawn twice counts twice.

**Uncertainty** ``u_i``: the standard deviation of the query's nDCG@:data:`ACTIVE_K` when each pair's grade is drawn
from the judges' mixture (each judge's grade distribution, or its hard grade when it gives none, the judges equally
weighted: the mixture's variance is the judges' mean variance plus their disagreement), the pairs independent:

    u_i^2 = sum_{r <= k} Var(g_{d_r}) / log2(r + 1)^2  /  IDCG_i^2

over the top ``k`` of each ``--run`` (the mean of ``u_i^2`` over runs), or without runs over the pool ranked by the
mixture's expected grade; ``IDCG_i`` the ideal DCG of the expected grades (at least 1: a query the judges call
irrelevant throughout has no metric to be unsure of). One judge with hard grades only has ``u = 0`` everywhere:
the uniform design. It is a proxy for the judge's error (the optimal ``q`` is proportional to ``sqrt(E[(Y_i -
f_i)^2])``); the floor bounds what a poor proxy costs: raised as far as needed, it keeps the variance factor of an
uninformative ``u`` at most 1.02, about 1% of width (:data:`relgrade.stats._weighted.MAX_DESIGN_EFFECT`; measured in
``benchmarks/ppi_trec_dl.py --grid-design``).

**Pilot then active batch** (``--pilot PILOT``): the queries a first, uniform batch (``--design queries``, ``n1``
queries) labeled are kept, graded, at the top of the new file, and ``n2 = --n`` more are drawn with the active
``q``. All ``n1 + n2`` draws then count as draws from the mixture ``m_i = (n1 / N + n2 q_i) / (n1 + n2)`` and are
weighted ``1 / ((n1 + n2) m_i)`` (the balance heuristic of multiple importance sampling, Veach & Guibas 1995): the
estimator stays unbiased, and its variance estimated as for iid draws from ``m`` is an upper bound of the truth
(the batches are strata of that mixture). The pilot must come from the same pool (its ``weight`` times ``n1`` is
``N``). Before drawing the second batch, ``relgrade estimate --target-width W`` on the labeled pilot projects how
many active draws a W-wide interval needs (:func:`relgrade.hybrid._active.active_factor`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from relgrade._errors import InputError
from relgrade.calibration._sample import Sample, SampleItem
from relgrade.stats._weighted import DEFAULT_FLOOR, design_floor, design_probabilities

ACTIVE_K = 10
"""The cutoff of the nDCG whose spread ranks the queries' uncertainty."""


def _pair_moments(judges: Sequence[Any], q: str, d: str) -> tuple[float, float]:
    """(mean, variance) of the pair's grade under the judges' equally weighted mixture; (0, 0) when none graded it."""
    means, seconds = [], []
    for j in judges:
        dist = (getattr(j, "distribution", None) or {}).get((q, d))
        if dist:
            total = sum(max(float(p), 0.0) for p in dist.values())
            if total > 0:
                m = sum(g * max(float(p), 0.0) for g, p in dist.items()) / total
                means.append(m)
                seconds.append(sum(g * g * max(float(p), 0.0) for g, p in dist.items()) / total)
                continue
        g = j.labels.get(q, {}).get(d)
        if g is not None:
            means.append(float(g))
            seconds.append(float(g) ** 2)
    if not means:
        return 0.0, 0.0
    mean = sum(means) / len(means)
    return mean, max(sum(seconds) / len(seconds) - mean * mean, 0.0)


def query_uncertainty(judges: Sequence[Any], pool: Mapping[str, Sequence[str]], *, runs: Sequence[Any] = (),
                      k: int = ACTIVE_K) -> dict[str, float]:
    """``u_i`` of every query of ``pool`` (module docstring); ``judges``: objects with ``labels`` (``{q: {d: g}}``)
    and ``distribution`` (``{(q, d): {g: p}}``), e.g. :class:`relgrade.calibration.JudgeLabels`."""
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    rankings = [run.ranked(k) for run in runs]
    out: dict[str, float] = {}
    for q in pool:
        mom = {d: _pair_moments(judges, q, d) for d in pool[q]}
        ideal = sorted((m for m, _ in mom.values()), reverse=True)[:k]
        idcg = max(float(np.dot(ideal, discount[:len(ideal)])), 1.0)
        orders = [r.get(q, [])[:k] for r in rankings] or [sorted(mom, key=lambda d: (-mom[d][0], d))[:k]]
        spread = [sum(mom.get(d, (0.0, 0.0))[1] * discount[r] ** 2 for r, d in enumerate(order)) for order in orders]
        out[q] = math.sqrt(sum(spread) / len(spread)) / idcg
    return out


def sample_active(judge: Mapping[str, Mapping[str, int]], pool: Mapping[str, Sequence[str]],
                  uncertainty: Mapping[str, float], *, n: int, floor: float = DEFAULT_FLOOR, seed: int = 0,
                  pilot: Mapping[str, Any] | None = None) -> Sample:
    """``n`` draws with replacement over ``pool`` with the active probabilities (module docstring); ``pilot``
    (``{"queries": {q: {d: grade}}, "weight": N/n1}``): a uniform first batch kept and combined as the module
    docstring says."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"--n must be a positive integer, got {n!r}")
    queries = [q for q in sorted(pool) if pool[q]]
    if not queries:
        raise InputError("the pool is empty; nothing to sample from")
    N = len(queries)
    u = [uncertainty.get(q, 0.0) for q in queries]
    q_draw = design_probabilities(u, floor)
    rng = np.random.default_rng(seed)
    picks = rng.choice(N, size=n, p=q_draw / q_draw.sum())
    order = list(dict.fromkeys(int(i) for i in picks))
    counts = np.bincount(picks, minlength=N)
    done: dict[str, Mapping[str, int]] = {}
    n1 = 0
    if pilot:
        done = dict(pilot["queries"])
        n1 = len(done)
        unknown = sorted(set(done) - set(queries))
        if unknown:
            raise InputError(f"the pilot's query {unknown[0]!r} is not in the judged pool; the pilot and the active "
                             "batch must come from the same pool (the same --judge)")
        w = pilot.get("weight")
        if w is not None and abs(w * n1 - N) > 1e-6 * N:
            raise InputError(f"the pilot was drawn from {w * n1:.0f} queries but the judged pool holds {N}; the pilot "
                             "and the active batch must come from the same pool (the same --judge)")
    total = n1 + n
    mix = (n1 / N + n * q_draw) / total
    at = {q: i for i, q in enumerate(queries)}
    items: list[SampleItem] = []
    for q in list(done) + [queries[i] for i in order if queries[i] not in done]:
        i = at[q]
        m = int(counts[i]) + (1 if q in done else 0)
        weight = 1.0 / (total * mix[i])
        for d in pool[q]:
            items.append(SampleItem(query_id=q, doc_id=d, judge_grade=judge.get(q, {}).get(d), design="active",
                                    weight=weight, draws=m, pool=N,
                                    grade=done[q].get(d) if q in done else None))
    return Sample("active", tuple(items), N, sum(len(pool[q]) for q in queries), n,
                  floor=design_floor(u, floor))
