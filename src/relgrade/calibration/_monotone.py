"""Monotone maps onto the human scale fitted to maximise kappa: every table, and cut points on the expected grade.

Grades are handled as positions ``0..k-1`` of the scale. Two families of maps, both monotone
(a higher judge grade never gets a lower human grade):

* **Tables** ``t: {0..k-1} -> {0..k-1}`` with ``t(0) <= t(1) <= ... <= t(k-1)``. There are
  ``C(2k-1, k)`` of them (stars and bars: a non-decreasing sequence of length k over k values is
  a multiset of size k; 35 for 4 grades, 126 for 5, 1716 for 7). :func:`best_table` scores every one
  on the training confusion matrix at once (a table only moves whole judge columns, so its confusion
  matrix is ``C @ P_t`` with ``P_t`` the table's one-hot matrix) and keeps the best; ties go to the
  table closest to the identity (L1 distance in positions, then lexicographic order). Above
  :data:`MAX_TABLES` tables (scales of 8 or more grades) it falls back to a local search from the
  identity: set one entry to any grade (clamping the others so the table stays monotone), keep the
  best such move, repeat while kappa improves (a local optimum).
* **Cut points** ``c_1 <= ... <= c_{k-1}`` on a continuous judge score (the expected grade
  ``E[grade] = sum_g g p(g)`` from the judge's grade distribution): the mapped position is the
  number of cut points ``<= x``. :func:`best_cuts` places each cut point in turn at the best of the
  midpoints between consecutive distinct training scores (the only places where the training
  predictions change; plus one point below and one above all scores, which lets a grade go unused)
  while the others stay fixed, and sweeps until no cut point moves (coordinate ascent, each move
  evaluated for all candidates at once from cumulative counts). It starts from the rounding cuts
  (midpoints between grades, i.e. the rounded expected grade) and from the cuts the best table
  induces, and keeps the better end point (ties to the rounding start).

Kappa is Cohen's (1960) unweighted or weighted (Cohen 1968) kappa of :func:`relgrade.calibration._stats.kappa`;
a map that leaves kappa undefined (one grade throughout) scores below every defined one.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np

from relgrade.calibration import _stats as S

MAX_TABLES = 5000
TIE = 1e-12  # kappas closer than this are ties (float noise of equal confusion matrices)


def n_tables(k: int) -> int:
    """Number of non-decreasing maps from k grades to k grades: ``C(2k - 1, k)``."""
    return math.comb(2 * k - 1, k)


@lru_cache(maxsize=16)
def monotone_tables(k: int) -> np.ndarray:
    """Every non-decreasing table on k positions ``(C(2k-1, k), k)``, closest to the identity first.

    Raises ValueError above :data:`MAX_TABLES` tables (use :func:`best_table`, which falls back).
    """
    if n_tables(k) > MAX_TABLES:
        raise ValueError(f"{n_tables(k)} monotone tables for {k} grades: more than {MAX_TABLES} to enumerate")
    tables = sorted(itertools.combinations_with_replacement(range(k), k),
                    key=lambda t: (sum(abs(v - i) for i, v in enumerate(t)), t))
    out = np.asarray(tables, dtype=np.int64)
    out.setflags(write=False)
    return out


def _scores(values: np.ndarray) -> np.ndarray:
    return np.nan_to_num(np.asarray(values, dtype=np.float64), nan=-np.inf)


def first_best(values: np.ndarray) -> int:
    """Index of the first value within :data:`TIE` of the maximum (candidates come in preference order)."""
    v = _scores(values)
    return int(np.flatnonzero(v >= v.max() - TIE)[0])


def table_kappas(conf: np.ndarray, tables: np.ndarray, weight: str) -> np.ndarray:
    """Kappa of each table applied to the judge columns of ``conf`` ``[human, judge]``: ``(T,)``."""
    k = conf.shape[0]
    onehot = np.eye(k)[tables]  # (T, judge, mapped)
    return S.kappa(np.matmul(conf, onehot), weight)


def confusion(human_idx: np.ndarray, pred_idx: np.ndarray, k: int) -> np.ndarray:
    return np.bincount(human_idx * k + pred_idx, minlength=k * k).reshape(k, k).astype(np.float64)


def best_table(human_idx: np.ndarray, judge_idx: np.ndarray, k: int, weight: str) -> np.ndarray:
    """The monotone table with the highest training kappa (see the module docstring for ties and large scales)."""
    conf = confusion(human_idx, judge_idx, k)
    if n_tables(k) <= MAX_TABLES:
        tables = monotone_tables(k)
        return tables[first_best(table_kappas(conf, tables, weight))].copy()
    table = np.arange(k)
    best = _scores(table_kappas(conf, table[None], weight))[0]
    i_idx, v_idx = np.divmod(np.arange(k * k), k)
    pos = np.arange(k)
    while True:  # set one entry to any grade, clamping the others to stay monotone; keep the best move
        options = np.repeat(table[None], k * k, axis=0)
        options = np.where(pos[None] < i_idx[:, None], np.minimum(options, v_idx[:, None]), options)
        options = np.where(pos[None] > i_idx[:, None], np.maximum(options, v_idx[:, None]), options)
        options[np.arange(k * k), i_idx] = v_idx
        values = _scores(table_kappas(conf, options, weight))
        j = int(np.argmax(values))
        if values[j] <= best + TIE:
            return table
        table, best = options[j], values[j]


def predict_cuts(x: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """Scale position of each score: the number of cut points ``<= x``."""
    return np.searchsorted(np.asarray(cuts, dtype=np.float64), np.asarray(x, dtype=np.float64), side="right")


def table_cuts(table: np.ndarray, scale: tuple[int, ...], lo: float, hi: float) -> np.ndarray:
    """Cut points reproducing ``table`` on the scale grades: cut i between the last judge grade mapped below i+1 and the next."""
    grades = np.asarray(scale, dtype=np.float64)
    cuts = []
    for i in range(1, len(scale)):
        first = np.flatnonzero(table >= i)
        if not len(first):
            cuts.append(hi)
        elif first[0] == 0:
            cuts.append(lo)
        else:
            cuts.append((grades[first[0] - 1] + grades[first[0]]) / 2)
    return np.asarray(cuts)


def _ascend(human_idx: np.ndarray, x: np.ndarray, k: int, weight: str, cuts: np.ndarray,
            candidates: np.ndarray, max_sweeps: int = 100) -> tuple[np.ndarray, float]:
    """Coordinate ascent on the cut points from ``cuts``; returns the end point and its training kappa."""
    cuts = np.array(cuts, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    xs, hs = x[order], human_idx[order]
    cum = np.vstack([np.zeros(k), np.cumsum(np.eye(k)[hs], axis=0)])  # cum[j, h]: among the j lowest scores
    value = _scores(S.kappa(confusion(human_idx, predict_cuts(x, cuts), k), weight))
    for _ in range(max_sweeps):
        moved = False
        for i in range(k - 1):
            lower = cuts[i - 1] if i else -np.inf
            upper = cuts[i + 1] if i < k - 2 else np.inf
            cand = np.unique(np.append(candidates[(candidates >= lower) & (candidates <= upper)], cuts[i]))
            # pairs with lower <= x < upper sit at position i + [x >= c]; the others do not depend on c
            a, b = np.searchsorted(xs, [lower, upper], "left")
            out = np.r_[0:a, b:len(xs)]
            base = confusion(hs[out], predict_cuts(xs[out], cuts), k)
            at = np.searchsorted(xs, cand, "left")
            confs = np.repeat(base[None], len(cand), axis=0)
            confs[:, :, i] += cum[at] - cum[a]
            confs[:, :, i + 1] += cum[b] - cum[at]
            values = _scores(S.kappa(confs, weight))
            tied = np.flatnonzero(values >= values.max() - TIE)
            pick = tied[np.argmin(np.abs(cand[tied] - cuts[i]))]
            if cand[pick] != cuts[i]:  # the current cut is a candidate: a move is a strict improvement
                cuts[i], value, moved = cand[pick], values[pick], True
        if not moved:
            break
    return cuts, float(value)


def cut_bounds(x: np.ndarray, scale: tuple[int, ...]) -> tuple[float, float]:
    """A cut point below every score and one above every score (finite, so the JSON stays plain)."""
    return float(min(np.min(x), scale[0])) - 0.5, float(max(np.max(x), scale[-1])) + 0.5


def best_cuts(human_idx: np.ndarray, x: np.ndarray, scale: tuple[int, ...], weight: str,
              table: np.ndarray | None = None) -> np.ndarray:
    """Cut points on ``x`` with the highest training kappa found (see the module docstring)."""
    k = len(scale)
    x = np.asarray(x, dtype=np.float64)
    lo, hi = cut_bounds(x, scale)
    u = np.unique(x)
    candidates = np.concatenate([[lo], (u[1:] + u[:-1]) / 2, [hi]])
    grades = np.asarray(scale, dtype=np.float64)
    starts = [(grades[1:] + grades[:-1]) / 2]
    if table is not None:
        starts.append(table_cuts(np.asarray(table), scale, lo, hi))
    ends = [_ascend(human_idx, x, k, weight, s, candidates) for s in starts]
    return ends[first_best(np.array([v for _, v in ends]))][0]
