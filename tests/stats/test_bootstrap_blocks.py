"""Issue 39.4: resamples drawn in blocks are the resamples drawn at once (same seed, same numbers)."""

from __future__ import annotations

import numpy as np
import pytest

from relgrade.stats import index_blocks, query_indices


@pytest.mark.parametrize("sizes, n_boot, cells", [((7,), 100, 50), ((12, 300), 1000, 3000), ((5, 0), 64, 20),
                                                  ((3, 9, 40), 257, 400), ((2, 11), 10, 10**9)])
def test_blocks_give_the_whole_draws_and_leave_the_generator_where_they_do(sizes, n_boot, cells):
    rng = np.random.default_rng(11)
    whole = [query_indices(s, n_boot, rng) if s else np.zeros((n_boot, 0), np.int64) for s in sizes]
    after = rng.integers(0, 1000, 5)

    rng = np.random.default_rng(11)
    blocks = list(index_blocks(sizes, n_boot, rng, cells=cells))
    for k, s in enumerate(sizes):
        got = np.vstack([b[k] for b in blocks])
        assert got.shape == (n_boot, s) and (got == whole[k]).all()
    assert (rng.integers(0, 1000, 5) == after).all()
    if cells < n_boot * sum(sizes):
        assert len(blocks) > 1  # the case does test blocks
        assert max(len(b[0]) * max(1, sum(sizes)) for b in blocks) <= max(cells, sum(sizes))
