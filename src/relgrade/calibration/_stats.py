"""Vectorised agreement statistics for the query (cluster) bootstrap (:mod:`relgrade.stats`) and its jackknife.

Every statistic here is a function of per-query confusion or coincidence matrices, or of per-pair
values with bootstrap weights, so that ``n_boot`` replicates are computed with a handful of array
operations instead of ``n_boot`` calls to scikit-learn. The test suite proves each one equal to its
oracle (``sklearn.metrics.cohen_kappa_score``, ``krippendorff.alpha``, ``scipy.stats.spearmanr`` /
``kendalltau``, ``sklearn.metrics.roc_auc_score``) on the expanded (duplicated) sample.

Conventions: confusion matrices are indexed ``[human, judge]`` (rows = reference, columns = the
rater under test), over the positions of the declared scale, so weights use scale positions exactly as
scikit-learn does when given ``labels=scale``.
"""

from __future__ import annotations

import numpy as np

from relgrade.stats import percentile_ci, query_weights, resample  # noqa: F401 - the one bootstrap, re-exported

WEIGHTS = ("unweighted", "linear", "quadratic")


def confusions(human_idx: np.ndarray, judge_idx: np.ndarray, group: np.ndarray, n_groups: int, k: int,
               weights: np.ndarray | None = None) -> np.ndarray:
    """Per-group confusion matrices ``(n_groups, k, k)`` indexed ``[group, human, judge]``.

    With ``weights`` (one per pair, e.g. inclusion weights ``1 / pi``) each pair counts its weight: the
    Horvitz-Thompson estimate of the population's confusion matrix (Horvitz & Thompson 1952).
    """
    flat = (group * k + human_idx) * k + judge_idx
    return np.bincount(flat, weights=weights, minlength=n_groups * k * k).reshape(n_groups, k, k).astype(np.float64)


def weight_matrix(k: int, weights: str) -> np.ndarray:
    """Disagreement weights over scale positions: 1 - I, |i - j| or (i - j)^2 (as scikit-learn)."""
    i = np.arange(k)
    if weights == "unweighted":
        return 1.0 - np.eye(k)
    if weights == "linear":
        return np.abs(i[:, None] - i[None, :]).astype(np.float64)
    if weights == "quadratic":
        return ((i[:, None] - i[None, :]) ** 2).astype(np.float64)
    raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")


def kappa(conf: np.ndarray, weights: str = "unweighted") -> np.ndarray:
    """Cohen's kappa of confusion matrices ``(..., k, k)``; NaN where undefined.

    ``kappa = 1 - sum(w * O) / sum(w * E)`` with ``O`` the observed proportions, ``E`` the outer
    product of the marginals (Cohen 1960; weighted: Cohen 1968). Undefined (NaN) when the expected
    disagreement is 0, i.e. both raters used one and the same grade throughout.
    """
    conf = np.asarray(conf, dtype=np.float64)
    k = conf.shape[-1]
    w = weight_matrix(k, weights)
    total = conf.sum(axis=(-2, -1))
    rows = conf.sum(axis=-1)
    cols = conf.sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = rows[..., :, None] * cols[..., None, :] / total[..., None, None]
        observed = (conf * w).sum(axis=(-2, -1))
        chance = (expected * w).sum(axis=(-2, -1))
        out = 1.0 - observed / chance
    return np.where(chance > 0, out, np.nan)


def kappa_loo(totals: np.ndarray, per_query: np.ndarray, weights: str = "unweighted") -> np.ndarray:
    """:func:`kappa` of every ``totals[b] - per_query[q]``: ``(B, Q)``, from the tables' margins.

    The observed disagreement and the total are linear in the table; the chance term
    ``rows^T W cols / total`` expands into four products of margins, so no ``(B, Q, k, k)`` array is built.
    """
    w = weight_matrix(totals.shape[-1], weights)
    obs_t, obs_q = (totals * w).sum(axis=(-2, -1)), (per_query * w).sum(axis=(-2, -1))
    r_t, c_t = totals.sum(axis=-1), totals.sum(axis=-2)
    r_q, c_q = per_query.sum(axis=-1), per_query.sum(axis=-2)
    # rows^T W cols of (T - C) = r_t W c_t - [r_t W | c_t W^T] [c_q | r_q]^T + r_q W c_q: one matrix product
    chance = np.hstack([r_t @ w, c_t @ w.T]) @ np.hstack([c_q, r_q]).T
    np.negative(chance, out=chance)
    chance += np.einsum("bi,ij,bj->b", r_t, w, c_t)[:, None]
    chance += np.einsum("qi,ij,qj->q", r_q, w, c_q)[None]
    out = totals.sum(axis=(-2, -1))[:, None] - per_query.sum(axis=(-2, -1))[None]  # the tables' totals
    with np.errstate(invalid="ignore", divide="ignore"):
        chance /= out
        np.subtract(obs_t[:, None], obs_q[None], out=out)
        out /= chance
    np.subtract(1.0, out, out=out)
    out[~(chance > 0)] = np.nan
    return out


def binarise(conf: np.ndarray, cut: int) -> np.ndarray:
    """Collapse ``(..., k, k)`` confusion matrices to 2 x 2 at scale position ``cut`` (>= cut is 1)."""
    lo, hi = slice(0, cut), slice(cut, None)
    out = np.empty(conf.shape[:-2] + (2, 2))
    out[..., 0, 0] = conf[..., lo, lo].sum(axis=(-2, -1))
    out[..., 0, 1] = conf[..., lo, hi].sum(axis=(-2, -1))
    out[..., 1, 0] = conf[..., hi, lo].sum(axis=(-2, -1))
    out[..., 1, 1] = conf[..., hi, hi].sum(axis=(-2, -1))
    return out


def accuracy(conf: np.ndarray) -> np.ndarray:
    """Share of pairs on the diagonal."""
    total = conf.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.trace(conf, axis1=-2, axis2=-1) / total


def leniency(conf: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Mean of (judge grade - human grade) in scale units."""
    diff = scale[None, :] - scale[:, None]  # [human, judge] -> judge - human
    total = conf.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (conf * diff).sum(axis=(-2, -1)) / total


def precision_recall(conf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-grade precision (diag / judge column sum) and recall (diag / human row sum): ``(..., k)`` each."""
    diag = np.diagonal(conf, axis1=-2, axis2=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = diag / conf.sum(axis=-2)
        recall = diag / conf.sum(axis=-1)
    return precision, recall


def ordinal_alpha(coinc: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha (ordinal) from coincidence matrices ``(..., k, k)``.

    ``alpha = 1 - (n - 1) * sum(o_ck d_ck) / sum(n_c n_k d_ck)`` with the ordinal distance
    ``d_ck = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2`` (Krippendorff 2011, "Computing Krippendorff's
    alpha-reliability"), as the ``krippendorff`` package computes it.
    """
    coinc = np.asarray(coinc, dtype=np.float64)
    n_v = coinc.sum(axis=-2)
    k = n_v.shape[-1]
    cum = np.cumsum(n_v, axis=-1)
    i = np.arange(k)
    lo = np.minimum(i[:, None], i[None, :])
    hi = np.maximum(i[:, None], i[None, :])
    before_lo = np.where(lo > 0, np.take(cum, np.maximum(lo - 1, 0), axis=-1), 0.0)
    between = np.take(cum, hi, axis=-1) - before_lo
    d = (between - (n_v[..., :, None] + n_v[..., None, :]) / 2.0) ** 2
    n = n_v.sum(axis=-1)
    observed = (coinc * d).sum(axis=(-2, -1))
    expected = (n_v[..., :, None] * n_v[..., None, :] * d).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = 1.0 - (n - 1.0) * observed / expected
    return np.where(expected > 0, out, np.nan)


def coincidences_two(conf: np.ndarray) -> np.ndarray:
    """Coincidence matrix of two raters with no missing values: ``C + C^T``."""
    return conf + np.swapaxes(conf, -1, -2)


def value_count_coincidences(counts: np.ndarray) -> np.ndarray:
    """Coincidence matrix of units ``(n_units, k)`` value counts (several raters, any missing).

    ``o_ck = sum_u (v_uc v_uk - [c = k] v_uc) / (m_u - 1)`` over units with ``m_u >= 2`` raters.
    """
    counts = np.asarray(counts, dtype=np.float64)
    m = counts.sum(axis=1)
    keep = m >= 2
    counts, m = counts[keep], m[keep]
    outer = counts[:, :, None] * counts[:, None, :]
    k = counts.shape[1]
    outer -= counts[:, :, None] * np.eye(k)[None]
    return (outer / (m - 1.0)[:, None, None]).sum(axis=0)


# -- continuous judge score vs human grade, with per-pair bootstrap weights ---------------------------


def _groups(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order sorting ``x`` and the start index of each run of equal values in sorted order."""
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    return order, starts


def _group_sums(w_sorted: np.ndarray, starts: np.ndarray) -> np.ndarray:
    return np.add.reduceat(w_sorted, starts, axis=1)


def weighted_auc(score: np.ndarray, positive: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """ROC AUC of ``score`` for ``positive`` with pair weights ``(B, n)``: ``(B,)``.

    ``AUC = P(s+ > s-) + P(s+ = s-) / 2`` (Mann-Whitney), the value ``roc_auc_score`` gives on the
    sample with pair ``i`` repeated ``w_i`` times. NaN when one class is absent.
    """
    order, starts = _groups(np.asarray(score, dtype=np.float64))
    pos = positive[order].astype(bool)
    w = weights[:, order]
    p = _group_sums(np.where(pos[None, :], w, 0.0), starts)
    q = _group_sums(np.where(pos[None, :], 0.0, w), starts)
    q_before = np.cumsum(q, axis=1) - q
    num = (p * (q_before + 0.5 * q)).sum(axis=1)
    den = p.sum(axis=1) * q.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def _midranks(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Midranks ``(B, n)`` of ``x`` in the sample with pair ``i`` repeated ``w_i`` times."""
    order, starts = _groups(x)
    w = weights[:, order]
    t = _group_sums(w, starts)
    before = np.cumsum(t, axis=1) - t
    mid = before + (t + 1.0) / 2.0
    group_of_sorted = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(x)]))
    ranks = np.empty_like(weights)
    ranks[:, order] = mid[:, group_of_sorted]
    return ranks


def weighted_spearman(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Spearman's rho (Pearson on midranks) of the weighted sample: ``(B,)``; NaN when constant."""
    rx = _midranks(np.asarray(x, dtype=np.float64), weights)
    ry = _midranks(np.asarray(y, dtype=np.float64), weights)
    n = weights.sum(axis=1, keepdims=True)
    mx = (weights * rx).sum(axis=1, keepdims=True) / n
    my = (weights * ry).sum(axis=1, keepdims=True) / n
    dx, dy = rx - mx, ry - my
    cov = (weights * dx * dy).sum(axis=1)
    var = (weights * dx * dx).sum(axis=1) * (weights * dy * dy).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 1e-12, cov / np.sqrt(var), np.nan)


def weighted_kendall(x: np.ndarray, y_idx: np.ndarray, k: int, weights: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between a continuous ``x`` and a grade index ``y_idx`` (k values): ``(B,)``.

    ``tau_b = (P - Q) / sqrt((n0 - n1)(n0 - n2))`` (Kendall 1945) with ``n0 = N(N-1)/2`` and
    ``n1``, ``n2`` the tied pairs in ``x`` and ``y``, on the sample with pair ``i`` repeated ``w_i`` times.
    """
    order, starts = _groups(np.asarray(x, dtype=np.float64))
    w = weights[:, order]
    yc = y_idx[order]
    per_cat = [_group_sums(np.where((yc == c)[None, :], w, 0.0), starts) for c in range(k)]
    s = np.zeros(weights.shape[0])
    for c in range(k):
        a = per_cat[c]
        before = np.cumsum(a, axis=1) - a
        after = a.sum(axis=1, keepdims=True) - np.cumsum(a, axis=1)
        for j in range(c + 1, k):
            s += (per_cat[j] * (before - after)).sum(axis=1)
    n = weights.sum(axis=1)
    n0 = n * (n - 1) / 2
    t = sum(per_cat)
    n1 = (t * (t - 1) / 2).sum(axis=1)
    cat_tot = np.stack([a.sum(axis=1) for a in per_cat], axis=1)
    n2 = (cat_tot * (cat_tot - 1) / 2).sum(axis=1)
    den = (n0 - n1) * (n0 - n2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, s / np.sqrt(den), np.nan)
