"""Expected metric values of one ranking when each document's human grade is random.

The soft prediction (:mod:`relgrade.hybrid._predict`) gives every document of a query's pool (the
documents the judges graded and those the run retrieved) a distribution over the human grades. Each
metric's prediction is its expectation, with the project's definitions (:mod:`relgrade.metrics._measures`:
relevant = grade >= the threshold, gain = max(grade, 0), the ideal DCG from every document of the pool).
With ``p_i`` the probability that the document at rank ``i`` (1-based) is relevant and ``k`` the cutoff,
documents independent given the judges:

* ``recall@k`` (success@k): ``1 - prod_{i<=k} (1 - p_i)``;
* ``precision@k``: ``sum_{i<=k} p_i / k`` (and DCG, linear in the expected gains, under any dependence);
* ``mrr`` / ``mrr@k``: ``sum_{i<=k} (1/i) p_i prod_{j<i} (1 - p_j)``;
* the answerability of ``--no-answer exclude``: ``1 - prod_{pool} (1 - p_j)``.

These are exact (``tests/hybrid/test_expect.py`` enumerates every grade assignment through the metrics core).

``ndcg@k`` (``ndcg``) is a ratio over the whole pool, and its prediction is the plug-in one: the expected gains
``E[gain_i]`` in the DCG of the ranking and in the ideal DCG (the pool's expected gains, sorted). ``frac_recall@k``
is the expectation when the documents of a query are *comonotone* given the judges, i.e. one uniform ``U`` per
query decides them all (document i is relevant exactly when ``U < p_i``), computed exactly by sweeping ``U``
from 1 to 0 over the sorted probabilities (O(n log n) per query).

Why the plug-in for nDCG (issue 29): real judges err by query, and what carries a query's nDCG is the *order*
of its expected gains, which the plug-in keeps; the comonotone expectation of the ratio multiplies it, in effect,
by the chance that any document is relevant, which is noise on large pools. With the synthetic LLM judges of
``benchmarks/_llm_judges.py`` on TREC DL 2020 (10 labeled queries, 40 draws x 4 systems), the PPI++ width ratio
of the calibrated expectation alone was 0.963 / 0.824 / 0.650 for judges of kappa 0.1 / 0.3 / 0.6 with the
plug-in against 0.986 / 0.856 / 0.665 comonotone. The plug-in's weak spot is a small pool where nothing is
likely relevant: a lone candidate ranked first scores 1 whatever its probability (the comonotone expectation
scores it by its probability); the prediction PPI corrects blends it with the metric on the judges' own
grades (:mod:`relgrade.hybrid._predict`), which scores such a query 0 unless a judge calls the document
relevant. The comonotone form stays for ``frac_recall`` (exact when at most one document is uncertain).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from relgrade.metrics import Metric


def expected_values(P: np.ndarray, order: np.ndarray, gains: np.ndarray, relevant: np.ndarray,
                    metrics: Sequence[Metric]) -> np.ndarray:
    """(S x len(metrics)) expectations of ``metrics`` for one query (module docstring).

    ``P``: (S, n, C) grade distributions of the n pool documents under S models (rows sum to 1);
    ``order``: pool indices of the run's ranking, best first; ``gains`` (C,): each class's gain;
    ``relevant`` (C,): whether each class is relevant.
    """
    S, n, _ = P.shape
    out = np.zeros((S, len(metrics)))
    r = len(order)
    if n == 0 or r == 0:
        return out
    p = P @ relevant.astype(np.float64)
    pr = p[:, order]
    survive = np.cumprod(1.0 - pr, axis=1)
    before = np.hstack([np.ones((S, 1)), survive[:, :-1]])  # P(no relevant document above rank i)
    ranks = np.arange(1, r + 1, dtype=np.float64)
    for j, metric in enumerate(metrics):
        k = metric.k if metric.k is not None else r
        kk = min(k, r)
        if metric.measure == "recall":
            out[:, j] = 1.0 - survive[:, kk - 1]
        elif metric.measure == "precision":
            out[:, j] = pr[:, :kk].sum(axis=1) / k
        elif metric.measure == "mrr":
            out[:, j] = (pr[:, :kk] * before[:, :kk] / ranks[:kk]).sum(axis=1)
        elif metric.measure == "frac_recall":
            out[:, j] = _comonotone(p[:, :, None], order[:kk], np.ones((kk, 1)), lambda hits, counts: hits / counts[..., 0])
        elif metric.measure == "ndcg":
            out[:, j] = _ndcg(P, order[:kk], gains, metric.k)
        else:  # pragma: no cover - Metric validates measures
            raise AssertionError(metric.measure)
    return out


def expected_answerable(P: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """(S,) probability that the pool holds a relevant document."""
    if P.shape[1] == 0:
        return np.zeros(P.shape[0])
    return 1.0 - np.prod(1.0 - P @ relevant.astype(np.float64), axis=1)


def discounts(n: int) -> np.ndarray:
    """``1 / log2(rank + 1)`` for ranks 1..n (trec_eval's nDCG discount)."""
    return 1.0 / np.log2(np.arange(n) + 2.0)


def _ndcg(P: np.ndarray, targets: np.ndarray, gains: np.ndarray, k: int | None) -> np.ndarray:
    """(S,) plug-in nDCG: expected gains in the DCG of ``targets`` (the ranking's top k) and in the ideal DCG."""
    g = P @ gains  # (S, n) expected gains
    cut = g.shape[1] if k is None else min(k, g.shape[1])
    dcg = (g[:, targets] * discounts(len(targets))).sum(axis=1)
    ideal = (-np.sort(-g, axis=1)[:, :cut] * discounts(cut)).sum(axis=1)
    return np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1.0), 0.0)


def _comonotone(q: np.ndarray, targets: np.ndarray, gain: np.ndarray, ratio) -> np.ndarray:
    """``E[ratio]`` when one uniform U decides every document: document i reaches level l when U < q[s, i, l].

    Sweeping U from 1 to 0, the events (i, l) happen in the order of decreasing q; after each event the
    numerator is the sum of ``gain[rank of i, l]`` over the events of retrieved documents (``targets``, in rank
    order), ``counts`` the events per level so far, and the state holds until the next event's q. ``ratio``
    maps (numerator, counts) to the metric (0 before any event).
    """
    S, n, L = q.shape
    value = np.zeros((S, n, L))
    value[:, targets] = gain  # (len(targets), L): what each retrieved document adds at each level
    flat = q.reshape(S, n * L)
    order = np.argsort(-flat, axis=1, kind="stable")
    u = np.take_along_axis(flat, order, axis=1)
    numerator = np.cumsum(np.take_along_axis(value.reshape(S, n * L), order, axis=1), axis=1)
    counts = np.cumsum(np.eye(L, dtype=np.int64)[order % L], axis=1)  # (S, events, L)
    width = u - np.concatenate([u[:, 1:], np.zeros((S, 1))], axis=1)  # U in (next q, this q]
    return (ratio(numerator, counts) * width).sum(axis=1)


def expected_block(pr: np.ndarray, gr: np.ndarray, depth: np.ndarray, gpool: np.ndarray,
                   metrics: Sequence[Metric]) -> np.ndarray:
    """(S, Q, len(metrics)) expectations for Q queries at once: :func:`expected_values`' column-wise form (the
    same arithmetic, tested against it query by query), for every measure but ``frac_recall`` (its column is left
    0 here; :func:`expected_values` computes it).

    ``pr``, ``gr`` (S, Q, R): probability of relevance and expected gain of each query's ranking, best first,
    0 beyond its ``depth`` (Q,) retrieved documents; ``gpool`` (S, Q, W): expected gains of each query's pool, 0
    beyond its size. The zeros of the padding leave every sum, product and the sorted ideal gains unchanged.
    """
    S, Q, R = pr.shape
    out = np.zeros((S, Q, len(metrics)))
    if Q == 0 or R == 0:
        return out
    survive = np.cumprod(1.0 - pr, axis=2)
    before = np.concatenate([np.ones((S, Q, 1)), survive[:, :, :-1]], axis=2)
    ranks = np.arange(1, R + 1, dtype=np.float64)
    reciprocal = None
    ideal = {}
    for j, metric in enumerate(metrics):
        kk = R if metric.k is None else min(metric.k, R)
        if metric.measure == "recall":
            out[:, :, j] = 1.0 - survive[:, :, kk - 1]
        elif metric.measure == "precision":
            out[:, :, j] = pr[:, :, :kk].sum(axis=2) / metric.k
        elif metric.measure == "mrr":
            if reciprocal is None:
                reciprocal = pr * before / ranks
            out[:, :, j] = reciprocal[:, :, :kk].sum(axis=2)
        elif metric.measure == "ndcg":
            W = gpool.shape[2]
            cut = W if metric.k is None else min(metric.k, W)
            if cut not in ideal:
                ideal[cut] = (-np.sort(-gpool, axis=2)[:, :, :cut] * discounts(cut)).sum(axis=2)
            dcg = (gr[:, :, :kk] * discounts(kk)).sum(axis=2)
            idcg = ideal[cut]
            out[:, :, j] = np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), 0.0)
    out[:, depth == 0] = 0.0
    return out
