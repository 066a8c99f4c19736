"""Reading a large TREC qrels file through the one label reader, side by side with a bare split loop.

    python benchmarks/read_qrels.py [--rows 500000]

Prints the wall time of ``relgrade.io.read_qrels`` (every check: grade parser, duplicate pairs, the label model)
and of a bare ``line.split()`` dict builder with no checks, and their ratio. Generated data, no download.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path


def bare(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            q, _, d, g = line.split()
            out.setdefault(q, {})[d] = int(g)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=500_000)
    args = parser.parse_args()
    from relgrade.io import read_qrels

    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.qrels"
        per_query = 100
        with open(path, "w", encoding="utf-8") as fh:
            for i in range(args.rows):
                q = i // per_query
                fh.write(f"q{q} 0 d{i} {rng.randint(0, 3)}\n")
        t0 = time.perf_counter()
        ours = read_qrels(path)
        t1 = time.perf_counter()
        theirs = bare(path)
        t2 = time.perf_counter()
    assert ours.labels == theirs
    print(f"rows {args.rows}: read_qrels {t1 - t0:.2f} s, bare split loop {t2 - t1:.2f} s, "
          f"ratio {(t1 - t0) / (t2 - t1):.1f}x")


if __name__ == "__main__":
    main()
