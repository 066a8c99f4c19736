"""Bootstrap replicates of the weighted Spearman, Kendall tau-b and AUC from the (score run, grade) cells (issue 39.3).

On a query resample pair i weighs ``m_b[query(i)] * w_i``. The three statistics depend on the pairs only through
the weight of each *cell* (a run of equal scores x a human grade): the sums ``per_cat[c][t]`` that
:mod:`relgrade.calibration._stats` builds by sorting and ``reduceat`` on every call. Here the scores are sorted once
and each cell's weight on a block of resamples is one sparse product ``A @ m.T`` (A: cells x queries, P nonzeros),
so a block costs O(P + cells) per resample instead of a gather, a sort order and several passes over P pairs.
The statistics are then the same formulas as :mod:`._stats` over the cells (tests hold them equal to 1e-12).
"""

from __future__ import annotations

import numpy as np


class CellStats:
    """The cells of ``(score, grade index)`` with their per-query weights, and the three statistics on resamples."""

    def __init__(self, x: np.ndarray, y_idx: np.ndarray, k: int, cut: int, group: np.ndarray, nq: int,
                 w: np.ndarray | None = None) -> None:
        from scipy import sparse

        x = np.asarray(x, dtype=np.float64)
        values, run = np.unique(x, return_inverse=True)  # runs of equal scores, ascending
        self.t = len(values)
        self.k, self.cut = k, cut
        w = np.ones(len(x)) if w is None else np.asarray(w, dtype=np.float64)
        rows = np.asarray(y_idx, dtype=np.int64) * self.t + run.ravel()
        self.a = sparse.csr_matrix((w, (rows, np.asarray(group, dtype=np.int64))), shape=(k * self.t, nq))
        self.a.sum_duplicates()

    def cells(self, m: np.ndarray) -> np.ndarray:
        """Cell weights ``(k, T, B)`` on multiplicities ``m`` ``(B, Q)``."""
        return np.asarray(self.a @ np.ascontiguousarray(m.T)).reshape(self.k, self.t, m.shape[0])

    def stats(self, m: np.ndarray) -> dict[str, np.ndarray]:
        """``{"spearman", "kendall", "auc"}``: ``(B,)`` each, the :mod:`._stats` values on multiplicities ``m``."""
        c = self.cells(m)
        tot = c.sum(axis=0)  # (T, B)
        cat = c.sum(axis=1)  # (k, B)
        n = tot.sum(axis=0)
        # x or y constant on a resample: decided on the cells (weights are positive), not on a difference of float
        # sums, which can leave a rounding residue (the plain tau-b is then 0 / tiny = 0 instead of undefined)
        varied = ((tot > 0).sum(axis=0) > 1) & ((cat > 0).sum(axis=0) > 1)
        out = {}
        with np.errstate(invalid="ignore", divide="ignore"):
            # AUC (Mann-Whitney), as weighted_auc
            p, q = c[self.cut:].sum(axis=0), c[:self.cut].sum(axis=0)
            q_before = np.cumsum(q, axis=0) - q
            num = (p * (q_before + 0.5 * q)).sum(axis=0)
            den = p.sum(axis=0) * q.sum(axis=0)
            out["auc"] = np.where(den > 0, num / den, np.nan)
            # Kendall tau-b, as weighted_kendall
            s = np.zeros(m.shape[0])
            for a in range(self.k):
                cs = np.cumsum(c[a], axis=0)
                before = cs - c[a]
                after = cs[-1:] - cs
                for j in range(a + 1, self.k):
                    s += (c[j] * (before - after)).sum(axis=0)
            n0 = n * (n - 1) / 2
            n1 = (tot * (tot - 1) / 2).sum(axis=0)
            n2 = (cat * (cat - 1) / 2).sum(axis=0)
            den = (n0 - n1) * (n0 - n2)
            out["kendall"] = np.where(varied & (den > 0), s / np.sqrt(den), np.nan)
            # Spearman (Pearson on midranks), as weighted_spearman
            rx = np.cumsum(tot, axis=0) - tot + (tot + 1.0) / 2.0
            ry = np.cumsum(cat, axis=0) - cat + (cat + 1.0) / 2.0
            mx = (tot * rx).sum(axis=0) / n
            my = (cat * ry).sum(axis=0) / n
            dx, dy = rx - mx, ry - my
            cov = (dy * (c * dx[None]).sum(axis=1)).sum(axis=0)
            var = (tot * dx * dx).sum(axis=0) * (cat * dy * dy).sum(axis=0)
            out["spearman"] = np.where(varied & (var > 1e-12), cov / np.sqrt(var), np.nan)
        return out

    def block(self, n_boot: int, cells: int = 4_000_000) -> int:
        """Resamples a block so that the ``(k, T, B)`` cell array holds about ``cells`` numbers."""
        return max(1, min(n_boot, cells // max(1, self.k * self.t)))
