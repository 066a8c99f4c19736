"""Issue 39.3: query_weights draws its multiplicities a block of rows at a time, the same numbers as drawing every
index at once (and leaves the generator where the whole draw leaves it)."""

from __future__ import annotations

import numpy as np
import pytest

from relgrade.stats import query_weights


def _whole(n_queries, n_boot, rng):
    idx = rng.integers(0, n_queries, size=(n_boot, n_queries))
    flat = idx + (np.arange(n_boot) * n_queries)[:, None]
    return np.bincount(flat.ravel(), minlength=n_boot * n_queries).reshape(n_boot, n_queries).astype(np.float64)


@pytest.mark.parametrize("n_queries,n_boot", [(1, 5), (7, 3), (3000, 1000), (10000, 250), (2, 0), (1_500_000, 2)])
def test_blocks_draw_the_whole_arrays(n_queries, n_boot):
    a, b = np.random.default_rng(n_queries), np.random.default_rng(n_queries)
    whole, blocks = _whole(n_queries, n_boot, a), query_weights(n_queries, n_boot, b)
    assert blocks.shape == whole.shape and blocks.dtype == np.float64 and (blocks == whole).all()
    assert a.integers(0, 1 << 40) == b.integers(0, 1 << 40)
