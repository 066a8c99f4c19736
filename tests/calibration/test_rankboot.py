"""Issue 39.3: the bootstrap replicates of Spearman, Kendall and AUC from the (score run, grade) cells equal the
weighted statistics on the per-pair weights to 1e-12, block by block, and calibrate's intervals with them."""

from __future__ import annotations

import numpy as np
import pytest

import relgrade.calibration._continuous as continuous_module
from relgrade.calibration import _stats as S
from relgrade.calibration._agreement import agreement
from relgrade.calibration._rankboot import CellStats
from relgrade.stats import query_weights


@pytest.mark.parametrize("seed", range(3))
def test_cell_replicates_equal_the_weighted_statistics(seed):
    rng = np.random.default_rng(seed)
    grades = np.array([0.0, 1.0, 2.0, 3.0])
    for trial in range(60):
        nq = int(rng.integers(2, 14))
        group = np.repeat(np.arange(nq), rng.integers(1, 7, nq) if trial % 5 else np.ones(nq, dtype=int))
        p = len(group)
        x = rng.integers(0, 4, p) / 2.0 if trial % 4 else rng.normal(size=p)
        y = rng.choice([0, 1, 3], p) if trial % 2 else rng.integers(0, 4, p)
        w = None if trial % 3 == 0 else rng.choice([1.0, 2.5, 0.3, 7.0 / 3.0], p)
        cut = int(rng.integers(1, 4))
        m = query_weights(nq, 40, rng)
        big = m[:, group] * (1.0 if w is None else w[None])
        plain = {"spearman": S.weighted_spearman(x, grades[y], big), "kendall": S.weighted_kendall(x, y, 4, big),
                 "auc": S.weighted_auc(x, y >= cut, big)}
        cells = CellStats(x, y, 4, cut, group, nq, w)
        fast = {key: np.concatenate([cells.stats(m[s:s + 7])[key] for s in range(0, 40, 7)]) for key in plain}
        # the plain tau-b decides "x (or y) constant" on float sums, whose rounding residue can give 0 / tiny = 0;
        # the cells decide on counts: NaN, as tau-b is undefined there
        present = m[:, group] > 0
        constant = np.array([min(len(np.unique(x[r])), len(np.unique(y[r]))) < 2 for r in present])
        for key in ("kendall", "spearman"):
            plain[key][constant & np.isnan(fast[key]) & (plain[key] == 0.0)] = np.nan
        for key in plain:
            assert (np.isnan(fast[key]) == np.isnan(plain[key])).all(), (trial, key)
            assert np.allclose(fast[key], plain[key], atol=1e-12, rtol=0, equal_nan=True), (trial, key)


def test_blocks_bound_the_cell_array():
    cells = CellStats(np.arange(1000.0), np.zeros(1000, dtype=int), 4, 2, np.zeros(1000, dtype=int), 1)
    assert cells.block(1000, cells=400_000) == 100 and cells.block(50, cells=400_000) == 50
    assert cells.block(1000, cells=10) == 1


def _world(seed: int, n_queries: int = 90):
    rng = np.random.default_rng(seed)
    human, judge, expected, weights = {}, {}, {}, {}
    for i in range(n_queries):
        q = f"q{i}"
        g = rng.choice(4, size=int(rng.integers(1, 9)), p=[0.4, 0.3, 0.2, 0.1])
        j = np.where(rng.random(len(g)) < 0.6, g, rng.integers(0, 4, len(g)))
        human[q] = {f"d{k}": int(x) for k, x in enumerate(g)}
        judge[q] = {f"d{k}": int(x) for k, x in enumerate(j)}
        expected[q] = {f"d{k}": float(np.clip(x + rng.normal(0, 0.6), 0, 3).round(1)) for k, x in enumerate(j)}
        weights.update({(q, f"d{k}"): float(rng.choice([1.0, 2.5, 4.0])) for k in range(len(g))})
    return human, judge, expected, weights


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("plain, world, seed", [(("jackknife",), 4, 2), (("replicates", "jackknife"), 6, 3)])
def test_calibrate_continuous_intervals_are_the_plain_ones(monkeypatch, weighted, plain, world, seed):
    """calibrate's Spearman/Kendall/AUC intervals with the fast jackknife (calibration/_loo.py) alone, and with the
    fast replicates too, against the plain weighted statistics on every row."""
    human, judge, expected, weights = _world(world)
    kwargs = dict(expected=expected, weights=weights if weighted else None, n_boot=300, seed=seed)
    fast = agreement(judge, human, **kwargs).continuous
    for name in plain:
        monkeypatch.setattr(continuous_module, name, getattr(continuous_module, f"plain_{name}"))
    plain = agreement(judge, human, **kwargs).continuous
    assert fast.keys() == plain.keys() == {"spearman", "kendall", "auc"}
    for name, a in fast.items():
        b = plain[name]
        assert a.value == b.value, name
        assert a.ci95 is not None and b.ci95 is not None, name
        assert abs(a.ci95[0] - b.ci95[0]) <= 1e-12 and abs(a.ci95[1] - b.ci95[1]) <= 1e-12, name
