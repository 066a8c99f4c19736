"""Monotone tables and cut points: complete enumeration, best training kappa against sklearn, cut recovery."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from relgrade.calibration import _monotone as M

WEIGHTS = {"unweighted": None, "linear": "linear", "quadratic": "quadratic"}


def _sk(h, p, k, weight):
    return cohen_kappa_score(h, p, labels=list(range(k)), weights=WEIGHTS[weight])


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6, 7])
def test_enumeration_is_every_monotone_table_once(k):
    tables = M.monotone_tables(k)
    # stars and bars: non-decreasing maps from k grades to n = k grades, C(n + k - 1, k)
    assert len(tables) == M.n_tables(k) == math.comb(k + k - 1, k)
    assert {35: 4, 126: 5}.get(len(tables), k) == k
    assert (np.diff(tables, axis=1) >= 0).all() and tables.min() >= 0 and tables.max() <= k - 1
    assert len({tuple(t) for t in tables}) == len(tables)
    if k <= 5:  # brute force: every map, filtered
        brute = {t for t in itertools.product(range(k), repeat=k) if list(t) == sorted(t)}
        assert brute == {tuple(t) for t in tables}
    assert tuple(tables[0]) == tuple(range(k))  # the identity first, then by distance to it
    dist = np.abs(tables - np.arange(k)).sum(axis=1)
    assert (np.diff(dist) >= 0).all()


def test_too_many_tables_are_not_enumerated():
    assert M.n_tables(8) > M.MAX_TABLES
    with pytest.raises(ValueError, match="more than"):
        M.monotone_tables(8)


@pytest.mark.parametrize("weight", list(WEIGHTS))
def test_best_table_is_the_brute_force_best_by_sklearn_kappa(weight):
    rng = np.random.default_rng(7)
    for trial in range(6):
        k = 4
        h = rng.integers(0, k, 150)
        j = np.clip(h + rng.integers(-1, 3, 150), 0, k - 1)
        if trial % 2:
            j[j == 1] = 0  # a grade the judge never uses: its entry is a tie, closest to identity wins
        best = M.best_table(h, j, k, weight)
        scored = [(_sk(h, np.asarray(t)[j], k, weight), t) for t in
                  sorted(itertools.combinations_with_replacement(range(k), k),
                         key=lambda t: (sum(abs(v - i) for i, v in enumerate(t)), t))]
        top = max(v for v, _ in scored)
        expected = next(t for v, t in scored if v >= top - 1e-12)
        assert tuple(best) == expected
        kap = M.table_kappas(np.bincount(h * k + j, minlength=k * k).reshape(k, k).astype(float),
                             M.monotone_tables(k), weight)
        assert kap == pytest.approx([v for v, _ in scored])


def test_large_scale_falls_back_to_coordinate_ascent():
    rng = np.random.default_rng(3)
    k = 8
    h = rng.integers(0, k, 600)
    j = np.clip(h + 2, 0, k - 1)  # lenient by two grades
    table = M.best_table(h, j, k, "unweighted")
    assert (np.diff(table) >= 0).all()
    identity = _sk(h, j, k, "unweighted")
    assert _sk(h, table[j], k, "unweighted") > identity + 0.3
    assert list(table[2:7]) == [0, 1, 2, 3, 4]  # the shift down, where the judge's grades say it


def test_cut_points_recover_known_thresholds():
    rng = np.random.default_rng(11)
    truth = np.array([0.8, 1.7, 2.6])
    x = rng.uniform(0, 3, 3000)
    h = np.searchsorted(truth, x, side="right")
    noisy = h.copy()
    flip = rng.random(len(h)) < 0.05
    noisy[flip] = rng.integers(0, 4, flip.sum())
    for labels, tol in ((h, 0.01), (noisy, 0.06)):
        cuts = M.best_cuts(labels, x, (0, 1, 2, 3), "unweighted")
        assert cuts == pytest.approx(truth, abs=tol)
    exact = M.best_cuts(h, x, (0, 1, 2, 3), "unweighted")
    assert (M.predict_cuts(x, exact) == h).all()


def test_cut_points_are_coordinate_wise_optimal_by_sklearn():
    rng = np.random.default_rng(5)
    x = np.round(rng.uniform(0, 3, 80), 2)
    h = np.clip(np.round(x - 0.7 + rng.normal(0, 0.6, 80)), 0, 3).astype(int)
    for weight in WEIGHTS:
        cuts = M.best_cuts(h, x, (0, 1, 2, 3), weight, table=M.best_table(h, np.round(x).astype(int), 4, weight))
        value = _sk(h, M.predict_cuts(x, cuts), 4, weight)
        u = np.unique(x)
        lo, hi = M.cut_bounds(x, (0, 1, 2, 3))
        candidates = np.concatenate([[lo], (u[1:] + u[:-1]) / 2, [hi]])
        for i in range(3):
            for c in candidates:
                moved = cuts.copy()
                moved[i] = c
                if list(moved) == sorted(moved):
                    assert _sk(h, M.predict_cuts(x, moved), 4, weight) <= value + 1e-12
        # never worse than rounding the expected grade
        assert value >= _sk(h, M.predict_cuts(x, [0.5, 1.5, 2.5]), 4, weight) - 1e-12


def test_table_cuts_reproduce_the_table_on_grades():
    scale = (0, 1, 2, 3)
    for t in M.monotone_tables(4):
        cuts = M.table_cuts(t, scale, -0.5, 3.5)
        assert list(M.predict_cuts(np.arange(4.0), cuts)) == list(t)
