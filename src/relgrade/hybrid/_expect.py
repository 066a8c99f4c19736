"""Expected metric values of one ranking when each document's human grade is random.

The soft prediction (:mod:`relgrade.hybrid._predict`) gives every document of a query's pool (the
documents the judges graded and those the run retrieved) a distribution over the human grades,
and treats the documents as independent given the judges. Each metric's prediction is its
expectation under those distributions, with the project's definitions (:mod:`relgrade.metrics._measures`:
relevant = grade >= the threshold, gain = max(grade, 0), the ideal DCG from every document of the pool).
With ``p_i`` the probability that the document at rank ``i`` (1-based) is relevant and ``k`` the cutoff:

* ``recall@k`` (success@k): ``1 - prod_{i<=k} (1 - p_i)``, exact;
* ``precision@k``: ``sum_{i<=k} p_i / k``, exact;
* ``mrr`` / ``mrr@k``: ``sum_{i<=k} (1/i) p_i prod_{j<i} (1 - p_j)``, exact;
* ``frac_recall@k``: ``sum_{i<=k} p_i E[1 / (1 + R_-i)]`` with ``R_-i`` the relevant documents of the pool
  other than i, exact: ``R_-i`` is Poisson-binomial and ``E[f(R_-i)]`` is read off its probability
  generating function at the M-th roots of unity, ``sum_m G_-i(w^m) fft(f)_m / M`` (no aliasing for M = pool size);
* ``ndcg@k`` (and ``ndcg``): ``sum_{i<=k} d_i sum_g P(g_i = g) g / E[IDCG | g_i = g]``, with ``d_i`` the discount
  and the ideal DCG's conditional expectation computed exactly (``IDCG = sum_l (h_l - h_{l-1}) D(C_l)`` over
  the positive gain levels ``h_l``, ``C_l`` the pool's documents with gain >= h_l, ``D(c)`` the sum of the
  first min(c, k) discounts; ``E[D(x + C_l,-i)]`` as above). This is an approximation: it replaces
  ``E[1 / IDCG | g_i]`` by ``1 / E[IDCG | g_i]`` (Jensen), exact when the other documents' grades are known
  and within 0.03 of the brute-force expectation on small random pools (``tests/hybrid/test_expect.py``
  measures it). Conditioning on ``g_i`` keeps a query whose only likely relevant document is retrieved at
  its due value, where plugging expected gains into both DCGs would not (one document with p = 0.5: 1.0
  instead of 0.5);
* the answerability of ``--no-answer exclude``: ``1 - prod_{pool} (1 - p_j)``, exact.

Documents with the same grade distribution (e.g. every retrieved document no judge graded, which gets
the fitted base rate) are multiplied in once with their count, so a deep run costs little more than
a shallow one.
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
            inverse = 1.0 / np.arange(1, n + 1)
            out[:, j] = (pr[:, :kk] * leave_one_out(p, inverse[None, :])[:, order[:kk], 0]).sum(axis=1)
        elif metric.measure == "ndcg":
            out[:, j] = _ndcg(P, order[:kk], gains, None if metric.k is None else metric.k)
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
    S, n, C = P.shape
    levels = np.unique(gains[gains > 0])
    if len(levels) == 0:
        return np.zeros(S)
    d = discounts(n)
    if k is not None:
        d[k:] = 0.0
    cum = np.concatenate([[0.0], np.cumsum(d)])  # D(c): the first min(c, k) discounts, c = 0..n
    steps = np.diff(np.concatenate([[0.0], levels]))
    above = (gains[None, :] >= levels[:, None]).astype(np.float64)  # (L, C): class reaches level l
    q = np.einsum("snc,lc->lsn", P, above).reshape(len(levels) * S, n)
    fs = np.vstack([cum[:n], d])  # D(c), d(c): E[D(C_-j)], E[d(C_-j)] per level
    if k is not None and k < n:  # both are constant from c = k on: the count capped at k is enough
        e = capped_leave_one_out(q, k) @ fs[:, :k + 1].T
    else:
        e = leave_one_out(q, fs)
    e = e.reshape(len(levels), S, n, 2)
    base = np.einsum("l,lsn->sn", steps, e[..., 0])  # E[IDCG | doc j has gain 0]
    slope = np.einsum("l,lsn,lc->snc", steps, e[..., 1], above)  # what doc j's class adds (expected discounts)
    mean = base[..., None] + slope  # (S, n, C): E[IDCG | g_j = c]
    own = (P * slope).sum(axis=2)
    var = (P * slope ** 2).sum(axis=2) - own ** 2  # what doc j's class adds to Var(IDCG), to first order
    spread = var.sum(axis=1, keepdims=True) - var  # the other documents' share, given doc j's class
    t_mean, t_var = mean[:, targets], spread[:, targets, None]
    safe = np.where(t_mean > 0, t_mean, 1.0)  # positive wherever the class has a gain
    inverse = 1.0 / safe + t_var / safe ** 3  # E[1/X] ~ 1/E[X] + Var(X)/E[X]^3 (second-order delta method)
    term = np.minimum(gains * inverse, 1.0)  # a document's share of nDCG never passes 1 (IDCG >= its own gain)
    per_doc = (P[:, targets] * np.where(gains > 0, term, 0.0)).sum(axis=2)
    return np.minimum((per_doc * discounts(len(targets))).sum(axis=1), 1.0)


def leave_one_out(q: np.ndarray, fs: np.ndarray) -> np.ndarray:
    """``E[f(C_-j)]`` for every document j and every row f of ``fs``: (S, n, F).

    ``q`` (S, n): independent Bernoulli probabilities of the n documents under S models; ``C_-j`` the number
    of successes among the documents other than j; ``fs`` (F, n): f(0), ..., f(n-1). Exact (module docstring):
    ``sum_m G_-j(w^m) fft(f)_m / n`` with ``G_-j(z) = prod_{i != j} (1 - q_i + q_i z)`` and ``w = exp(2 pi i / n)``.
    Documents with equal columns of ``q`` are one factor raised to their count.
    """
    S, n = q.shape
    w = np.exp(2j * np.pi * np.arange(n) / n)
    if n > 16 and len(np.unique(q[0])) < n:  # equal columns are one factor raised to their count
        cols, group, counts = np.unique(q.T, axis=0, return_inverse=True, return_counts=True)
    else:  # a small pool: the grouping costs more than it saves
        cols, group, counts = q.T, np.arange(n), np.ones(n, dtype=np.int64)
    z = 1.0 - cols[:, :, None] + cols[:, :, None] * w  # (groups, S, n)
    whole, rest = z.copy(), np.ones_like(z)  # each group's factor, and the factor of its other members
    many = counts > 1
    if many.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log(z[many])
        whole[many] = np.exp(counts[many, None, None] * logs)  # z ** count, zero-safe
        rest[many] = np.exp((counts[many, None, None] - 1) * logs)
    one = np.ones((1, S, n), dtype=complex)
    before = np.concatenate([one, np.cumprod(whole, axis=0)[:-1]], axis=0)
    after = np.concatenate([np.cumprod(whole[::-1], axis=0)[::-1][1:], one], axis=0)
    G = before * after * rest  # one member of each group left out
    F = np.fft.fft(np.asarray(fs, dtype=np.float64), axis=-1) / n
    per_group = np.real(G @ F.T)  # (groups, S, F)
    return per_group[group.ravel()].transpose(1, 0, 2)


def capped_leave_one_out(q: np.ndarray, k: int) -> np.ndarray:
    """The distribution of ``min(C_-j, k)`` for every document j: (S, n, k + 1), exact.

    ``C_-j`` as in :func:`leave_one_out`. Prefix and suffix distributions of the capped count (a dynamic
    program over the documents, O(n k)), then for each j the capped convolution of the documents before it
    with those after it.
    """
    S, n = q.shape
    both = np.zeros((n + 1, 2 * S, k + 1))  # prefixes (first S rows) and suffixes (read backwards), side by side
    both[0, :, 0] = 1.0
    ends = np.concatenate([q, q[:, ::-1]])
    for i in range(n):
        both[i + 1] = _add(both[i], ends[:, i])
    a, b = both[:n, :S], both[n - 1::-1, S:]  # the documents before j and after j
    tail = np.cumsum(b[..., ::-1], axis=-1)[..., ::-1]  # P(after >= c)
    out = np.zeros((n, S, k + 1))
    for i in range(k + 1):
        out[..., i:k] += a[..., i:i + 1] * b[..., :k - i]
        out[..., k] += a[..., i] * tail[..., k - i]
    return out.transpose(1, 0, 2)


def _add(pmf: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The capped count's distribution after one more Bernoulli(p) document (the top state absorbs)."""
    new = pmf * (1.0 - p)[:, None]
    new[:, 1:] += pmf[:, :-1] * p[:, None]
    new[:, -1] += pmf[:, -1] * p
    return new
