"""What the TREC DL 2020 benchmarks share: where the data lives and the synthetic judges made from NIST grades."""

from __future__ import annotations

from pathlib import Path

# ../shared/data/trec-dl-2020-passage beside the checkout (benchmarks/fetch_trec_dl_2020.py writes it there)
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec-dl-2020-passage"


def noisy(labels, p: float, rng):
    """A judge: each NIST grade replaced by a uniform random grade 0-3 with probability ``p``."""
    return {q: {d: (int(rng.integers(0, 4)) if rng.random() < p else g) for d, g in docs.items()}
            for q, docs in labels.items()}
