"""Reading a large TREC qrels file through the label readers, side by side with a bare split loop.

    python benchmarks/read_qrels.py [--rows 500000] [--repeat 3]

Prints the wall time (best of ``--repeat``) of a bare ``line.split()`` dict builder with no checks, of
``relgrade.io.read_qrels`` with every check on (fields, integer grades, repeated pairs, comment lines, the id rule)
*and* its ``labels`` dict built (the same dict of dicts the bare loop returns), and of ``read_labels`` (a
:class:`Label` per row, as ``calibrate`` and ``hybrid`` read labels), with their ratios to the bare loop.
Generated data, no download.
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


def best(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from relgrade.io import read_labels, read_qrels

    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.qrels"
        per_query = 100
        with open(path, "w", encoding="utf-8") as fh:
            for i in range(args.rows):
                fh.write(f"q{i // per_query} 0 d{i} {rng.randint(0, 3)}\n")
        read_qrels(path)  # imports (pyarrow) outside the timings
        t_bare, theirs = best(lambda: bare(path), args.repeat)
        t_qrels, ours = best(lambda: read_qrels(path).labels, args.repeat)
        t_labels, labels = best(lambda: read_labels(path), args.repeat)
    assert ours == theirs and labels.grades() == theirs
    print(f"rows {args.rows} (best of {args.repeat}): bare split loop {t_bare:.2f} s; "
          f"read_qrels + .labels {t_qrels:.2f} s ({t_qrels / t_bare:.2f}x); "
          f"read_labels {t_labels:.2f} s ({t_labels / t_bare:.2f}x)")


if __name__ == "__main__":
    main()
