"""The unlabeled judge values of the no-answer ratio's ``Z_r = Yhat - r Ahat`` for many ``r``, without the array.

The ratio's test inversion (:mod:`relgrade.hybrid._ratio`) asks for the interval of ``Z_r`` at some 110 candidate
ratios; each interval reads the N unlabeled values of ``Z_r`` only through their mean, variance, third central
moment and whether they are all equal (:func:`relgrade.stats._augmented.moments`). Building the (N x columns)
array for each candidate cost O(N) passes a step, most of ``estimate``'s time at 20,000 queries (issue 39).
Here Yu's and Au's centred sums (``S_yy``, ``S_ya``, ``S_aa`` and the cubes) are taken once, and for column ``j``
with ratio ``r``:

    mean = mean(y) - r mean(a),   var = (S_yy - 2 r S_ya + r^2 S_aa) / (N - 1),
    m3 = (S_yyy - 3 r S_yya + 3 r^2 S_yaa - r^3 S_aaa) / N

(``y - r a`` centred is ``dy - r da``). A column whose values may all be equal (checked exactly: with ``a``
constant the values are monotone in ``y``, so its two extremes decide; otherwise two rows of different ``a``
that already differ prove it is not) or whose variance cancels more than :data:`CANCEL` -fold is computed from
the array, as before. The rest agree with the array's moments to rounding (``tests/stats/test_shifted.py``;
``tests/hybrid/test_soft_oracle.py``: the same intervals to 1e-12).
"""

from __future__ import annotations

import numpy as np

CANCEL = 1e4  # S_yy + r^2 S_aa over the variance's sum beyond which a column is computed from the array


class Shifted:
    """``Yu`` (N x m) and ``Au`` (N,) of the ratio: :meth:`at` gives the columns ``Yu[:, j % m] - r_j Au``."""

    def __init__(self, Yu: np.ndarray, Au: np.ndarray) -> None:
        self.Yu, self.Au = Yu, Au
        N = Yu.shape[0]
        self.ybar, self.abar = Yu.mean(axis=0), Au.mean()
        dy, da = Yu - self.ybar, (Au - self.abar)[:, None]
        self.S = {"yy": (dy * dy).sum(axis=0), "ya": (dy * da).sum(axis=0), "aa": float((da * da).sum()),
                  "yyy": (dy ** 3).sum(axis=0), "yya": (dy * dy * da).sum(axis=0), "yaa": (dy * da * da).sum(axis=0),
                  "aaa": float((da ** 3).sum())}
        self.a_const = N == 0 or bool(Au.min() == Au.max())
        self.ymin, self.ymax = (Yu.min(axis=0), Yu.max(axis=0)) if N else (np.zeros(Yu.shape[1]),) * 2
        self.i0, self.i1 = (int(np.argmin(Au)), int(np.argmax(Au))) if N else (0, 0)

    def at(self, r: np.ndarray, copies: int = 1) -> "ShiftedAt":
        """The columns of ``np.tile(Yu, copies) - r * Au[:, None]`` (``r``: one ratio per column)."""
        return ShiftedAt(self, np.asarray(r, dtype=np.float64), copies)


class ShiftedAt:
    """Shifted columns at given ratios: ``shape`` like the array, :meth:`stats` the moments, :meth:`dense` the
    array's columns (the exact fallback)."""

    def __init__(self, base: Shifted, r: np.ndarray, copies: int) -> None:
        self.base, self.r, self.copies = base, np.broadcast_to(r, (base.Yu.shape[1] * copies,)), copies
        self.shape = (base.Yu.shape[0], base.Yu.shape[1] * copies)

    def dense(self, cols: np.ndarray | None = None) -> np.ndarray:
        """The array (or its columns ``cols``), computed as ``np.tile(Yu, copies) - r * Au[:, None]``."""
        b = self.base
        m = b.Yu.shape[1]
        cols = np.arange(self.shape[1]) if cols is None else np.asarray(cols)
        return b.Yu[:, cols % m] - self.r[cols] * b.Au[:, None]

    def _maybe_constant(self) -> np.ndarray:
        """Columns whose values may all be equal (exact: the others are certainly not)."""
        b, r = self.base, self.r
        m = b.Yu.shape[1]
        j = np.arange(self.shape[1]) % m
        if b.a_const:  # y - r a with one a: monotone in y
            ra = r * b.Au[0] if len(b.Au) else r * 0.0
            return (b.ymax[j] - ra) == (b.ymin[j] - ra)
        z0 = b.Yu[b.i0, j] - r * b.Au[b.i0]
        z1 = b.Yu[b.i1, j] - r * b.Au[b.i1]
        return z0 == z1

    def stats(self):
        """``(mean, var (ddof 1), third central moment, dense)`` per column; ``dense`` (bool) marks the columns
        whose figures come from the array (possibly constant, or cancelling): the caller computes those."""
        b, r = self.base, self.r
        N = self.shape[0]
        j = np.arange(self.shape[1]) % b.Yu.shape[1]
        S = b.S
        mean = b.ybar[j] - r * b.abar
        ss = S["yy"][j] - 2 * r * S["ya"][j] + r * r * S["aa"]
        var = ss / (N - 1)
        m3 = (S["yyy"][j] - 3 * r * S["yya"][j] + 3 * r * r * S["yaa"][j] - r ** 3 * S["aaa"]) / N
        with np.errstate(divide="ignore", invalid="ignore"):
            cancel = ~(ss * CANCEL > S["yy"][j] + r * r * S["aa"])
        return mean, var, m3, self._maybe_constant() | cancel
