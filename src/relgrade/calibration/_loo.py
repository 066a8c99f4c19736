"""Leave-one-query-out values of the weighted AUC, Kendall tau-b and Spearman rho in O(P log P) (issue 39.3).

The BCa acceleration of :mod:`relgrade.calibration._continuous` needs each statistic with one query left out. The
plain way (:func:`relgrade.calibration._intervals.pair_stat` over :class:`~relgrade.calibration._intervals.JackknifeRows`)
recomputes the statistic on Q weight rows of P pairs: O(Q P). Here each statistic is a sum over pairs of items
(concordance) or over items of their (mid)ranks, so the value without query g is the full sum minus the terms that
touch g's items plus the terms counted twice (g's pairs among themselves). Every term comes from cumulative sums in
score order, globally and within each query ("blocks"), so the whole jackknife costs a few sorts.

Notation: ``w`` the pair weights (inclusion weights, or 1), ``H(d)`` = 1 if d > 0, 1/2 if d = 0, else 0, and for a
value vector ``v`` the *H-sum* of item i, ``sum_j v_j H(x_i - x_j)`` over the items j of i's block (j = i counts 1/2).
The tests hold every function equal to the plain path (the weighted statistics of :mod:`._stats` on the jackknife
rows) to 1e-12 on hostile inputs (ties, an absent grade, one-pair queries, non-integer weights).
"""

from __future__ import annotations

import numpy as np


class _Blocks:
    """Items sorted by (block, x): runs of equal (block, x) and the H-sums of value vectors within each block."""

    def __init__(self, x: np.ndarray, block: np.ndarray | None) -> None:
        n = len(x)
        self.order = np.argsort(x, kind="mergesort") if block is None else np.lexsort((x, block))
        xs = x[self.order]
        if block is None:
            new_block = np.zeros(n, dtype=bool)
        else:
            bs = block[self.order]
            new_block = np.r_[True, bs[1:] != bs[:-1]] if n else np.zeros(0, dtype=bool)
        new_run = new_block | np.r_[True, xs[1:] != xs[:-1]] if n else new_block
        if n:
            new_block[0] = True
        self.run_start = np.flatnonzero(new_run)
        self.run_end = np.r_[self.run_start[1:], n]
        block_start_at = np.maximum.accumulate(np.where(new_block, np.arange(n), 0))
        self.run_block_start = block_start_at[self.run_start]
        self.run_block_index = np.searchsorted(self.run_start, self.run_block_start)  # first run of each run's block
        run_of_sorted = np.cumsum(new_run) - 1
        self.run_of = np.empty(n, dtype=np.int64)
        self.run_of[self.order] = run_of_sorted

    def run_sums(self, v: np.ndarray) -> np.ndarray:
        """Sum of ``v`` over each run of equal (block, x)."""
        if not len(self.run_start):
            return np.zeros(0)
        return np.add.reduceat(v[self.order], self.run_start)

    def hsum(self, v: np.ndarray) -> np.ndarray:
        """Per item: ``sum_j v_j H(x_i - x_j)`` over i's block (strictly below, plus half the tied, self included).

        The running sums over runs are kept in extended precision: a float64 running sum over many runs drifts by
        ~1e-9 at 200,000 pairs, which would show in the statistics' 13th digit."""
        tied = self.run_sums(v)
        c = np.r_[0.0, np.cumsum(tied, dtype=np.longdouble)]
        below = (c[:-1] - c[self.run_block_index]).astype(np.float64)
        return (below + 0.5 * tied)[self.run_of]


def _per_group(v: np.ndarray, group: np.ndarray, nq: int) -> np.ndarray:
    return np.bincount(group, weights=v, minlength=nq)


def loo_auc(score: np.ndarray, positive: np.ndarray, group: np.ndarray, nq: int,
            w: np.ndarray | None = None) -> np.ndarray:
    """``weighted_auc`` with each query left out in turn: ``(nq,)`` (NaN where one class is gone)."""
    x = np.asarray(score, dtype=np.float64)
    w = np.ones(len(x)) if w is None else np.asarray(w, dtype=np.float64)
    pos = np.asarray(positive, dtype=bool)
    wp, wn = np.where(pos, w, 0.0), np.where(pos, 0.0, w)
    whole, within = _Blocks(x, None), _Blocks(x, group)
    # a positive item's concordance against every negative, and a negative's against every positive
    conc = np.where(pos, wp * whole.hsum(wn), wn * (wp.sum() - whole.hsum(wp)))
    num = (wp * whole.hsum(wn)).sum()
    inside = _per_group(wp * within.hsum(wn), group, nq)  # the pairs of one query, removed twice above
    num_g = num - _per_group(conc, group, nq) + inside
    den_g = (wp.sum() - _per_group(wp, group, nq)) * (wn.sum() - _per_group(wn, group, nq))
    # one class gone: decided on counts, not on a difference of float sums that may leave a rounding residue
    both = (pos.sum() > _per_group(pos, group, nq)) & ((~pos).sum() > _per_group(~pos, group, nq))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(both & (den_g > 0), num_g / den_g, np.nan)


def _tie_pairs_loo(v_block: _Blocks, whole_tot: np.ndarray, w: np.ndarray, group: np.ndarray, nq: int):
    """``sum_t T_t (T_t - 1) / 2`` over tie classes, with each query left out: the (group, class) runs of
    ``v_block`` hold ``a``, ``whole_tot`` the class totals ``T`` of those runs."""
    a = v_block.run_sums(w)
    run_group = group[v_block.order[v_block.run_start]]
    drop = 0.5 * (a * (2.0 * whole_tot - 1.0) - a * a)
    return _per_group(drop, run_group, nq)


def loo_kendall(x: np.ndarray, y_idx: np.ndarray, k: int, group: np.ndarray, nq: int,
                w: np.ndarray | None = None) -> np.ndarray:
    """``weighted_kendall`` (tau-b) with each query left out in turn: ``(nq,)`` (NaN where undefined)."""
    x = np.asarray(x, dtype=np.float64)
    y_idx = np.asarray(y_idx)
    w = np.ones(len(x)) if w is None else np.asarray(w, dtype=np.float64)
    whole, within = _Blocks(x, None), _Blocks(x, group)
    s_item, s_in = np.zeros(len(x)), np.zeros(len(x))
    for c in range(k):
        wc = np.where(y_idx == c, w, 0.0)
        sgn = np.sign(y_idx - c).astype(np.float64)
        s_item += sgn * (2.0 * whole.hsum(wc) - wc.sum())
        s_in += sgn * (2.0 * within.hsum(wc) - _per_group(wc, group, nq)[group])
    s = 0.5 * (w * s_item).sum()
    s_g = s - _per_group(w * s_item, group, nq) + 0.5 * _per_group(w * s_in, group, nq)
    n = w.sum()
    n_g = n - _per_group(w, group, nq)
    n0 = n_g * (n_g - 1.0) / 2.0
    # ties in x: the runs of (query, x) against the runs of x
    t = whole.run_sums(w)
    n1 = (t * (t - 1.0) / 2.0).sum() - _tie_pairs_loo(within, t[whole.run_of[within.order[within.run_start]]], w,
                                                      group, nq)
    # ties in y: the (query, grade) cells against the grade totals
    cat = np.bincount(y_idx, weights=w, minlength=k).astype(np.float64)
    cell = np.bincount(group * k + y_idx, weights=w, minlength=nq * k).reshape(nq, k)
    n2 = (cat * (cat - 1.0) / 2.0).sum() - (0.5 * (cell * (2.0 * cat[None, :] - 1.0) - cell * cell)).sum(axis=1)
    den = (n0 - n1) * (n0 - n2)
    # x or y constant on what is left: decided on counts (a difference of float sums may leave a residue)
    varied = (_distinct_left(whole, within, group, nq) > 1) & (_distinct_left_cells(y_idx, k, group, nq) > 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(varied & (den > 0), s_g / np.sqrt(den), np.nan)


def _distinct_left(whole: _Blocks, within: _Blocks, group: np.ndarray, nq: int) -> np.ndarray:
    """How many distinct x values remain with each query left out."""
    ones = np.ones(len(group))
    full = within.run_sums(ones) == whole.run_sums(ones)[whole.run_of[within.order[within.run_start]]]
    run_group = group[within.order[within.run_start]]
    return len(whole.run_start) - np.bincount(run_group, weights=full.astype(np.float64), minlength=nq)


def _distinct_left_cells(y_idx: np.ndarray, k: int, group: np.ndarray, nq: int) -> np.ndarray:
    """How many distinct grades remain with each query left out."""
    cat = np.bincount(y_idx, minlength=k)
    cell = np.bincount(group * k + y_idx, minlength=nq * k).reshape(nq, k)
    return ((cat[None, :] - cell) > 0).sum(axis=1)


def _cubes_loo(whole: _Blocks, within: _Blocks, w: np.ndarray, group: np.ndarray, nq: int) -> np.ndarray:
    """``sum_t T_t^3`` over the tie classes of what is left with each query left out."""
    t = whole.run_sums(w)
    a = within.run_sums(w)
    t_of = t[whole.run_of[within.order[within.run_start]]]
    run_group = group[within.order[within.run_start]]
    return (t ** 3).sum() - _per_group(t_of ** 3 - (t_of - a) ** 3, run_group, nq)


def loo_spearman(x: np.ndarray, y_idx: np.ndarray, k: int, group: np.ndarray, nq: int,
                 w: np.ndarray | None = None) -> np.ndarray:
    """``weighted_spearman`` (Pearson on weighted midranks) with each query left out in turn: ``(nq,)``.

    Without query g an item's midrank drops by ``D_i = sum_{j in g} w_j H(x_i - x_j)``; the midranks' mean is
    ``(n + 1) / 2`` and their weighted sum of squares about it ``(n^3 - sum_t T_t^3) / 12`` (T_t the tie classes'
    weights), so only the cross sum ``sum w rx' ry'`` needs the D terms: ``sum w rx D_y`` and ``sum w D_x D_y``, the
    latter factorised over the k grades of y.
    """
    x = np.asarray(x, dtype=np.float64)
    y_idx = np.asarray(y_idx)
    yf = y_idx.astype(np.float64)
    w = np.ones(len(x)) if w is None else np.asarray(w, dtype=np.float64)
    wx, gx = _Blocks(x, None), _Blocks(x, group)
    wy, gy = _Blocks(yf, None), _Blocks(yf, group)
    rx, ry = wx.hsum(w) + 0.5, wy.hsum(w) + 0.5
    pg = lambda v: _per_group(v, group, nq)  # noqa: E731
    sxy = (w * rx * ry).sum() - pg(w * rx * ry)
    # sum over i outside g of w_i rx_i D^y_i(g) = sum_{j in g} w_j sum_{i outside g} w_i rx_i H(y_i - y_j)
    for r, whole, inner in ((rx, wy, gy), (ry, wx, gx)):
        v = w * r
        above = (v.sum() - whole.hsum(v)) - (pg(v)[group] - inner.hsum(v))
        sxy -= pg(w * above)
    # sum over i outside g of w_i D^x_i D^y_i = sum_c [sum_{j in g} w_j G_c(j)] [sum_{l in g} w_l H(c - y_l)]
    cells = np.bincount(group * k + y_idx, weights=w, minlength=nq * k).reshape(nq, k)
    below_c = np.cumsum(cells, axis=1) - 0.5 * cells  # sum_{l in g} w_l H(c - y_l)
    for c in range(k):
        wc = np.where(y_idx == c, w, 0.0)
        g_c = (wc.sum() - wx.hsum(wc)) - (pg(wc)[group] - gx.hsum(wc))
        sxy += pg(w * g_c) * below_c[:, c]
    n = w.sum() - pg(w)
    cov = sxy - n * (n + 1.0) ** 2 / 4.0
    var_x = (n ** 3 - _cubes_loo(wx, gx, w, group, nq)) / 12.0
    var_y = (n ** 3 - _cubes_loo(wy, gy, w, group, nq)) / 12.0
    varied = (_distinct_left(wx, gx, group, nq) > 1) & (_distinct_left_cells(y_idx, k, group, nq) > 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(varied, cov / np.sqrt(var_x * var_y), np.nan)
