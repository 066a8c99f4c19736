"""Coverage of relgrade's agreement (kappa) intervals on TREC DL 2020 passage (issue 14).

Data: ../shared/data/trec-dl-2020-passage/pairs.jsonl (54 queries, NIST grades 0-3 on each query's judged
pool). NIST grades are the full-label truth. (The intervals for metric means, human-only and PPI++, are
measured by ``benchmarks/ppi_trec_dl.py``.)

Agreement (``relgrade calibrate``'s intervals) by a double bootstrap: the 54 queries with a noisy-NIST judge
are the population (its kappa is the truth); each draw takes ``--n-kappa`` (12) of them at random and computes
the 95% CI of kappa and binary kappa (grade >= 2): studentized (what ``calibrate`` reports up to 100 queries)
and, for comparison, the percentile interval relgrade reported before.

    python benchmarks/intervals_trec_dl.py [--kappa-draws 400] [--n-boot 400]

Exits 2 with one line when the data directory is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from _trec_dl import DATA, noisy  # noqa: E402 - benchmarks/ is the script folder, first on sys.path


def load(path: Path) -> dict[str, dict[str, int]]:
    labels: dict[str, dict[str, int]] = {}
    with open(path / "pairs.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            labels.setdefault(str(row["qid"]), {})[str(row["pid"])] = int(row["label"])
    return labels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--n-kappa", type=int, default=12)
    ap.add_argument("--kappa-draws", type=int, default=400)
    ap.add_argument("--n-boot", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not (args.data / "pairs.jsonl").is_file():
        print(f"intervals_trec_dl: error: {args.data}/pairs.jsonl not found; pass --data DIR", file=sys.stderr)
        sys.exit(2)

    from relgrade.calibration import _stats as S
    from relgrade.stats import percentile_ci, query_weights, studentized_ci

    t0 = time.time()
    rng = np.random.default_rng(args.seed)
    nist = load(args.data)
    topics = sorted(nist)
    nq = len(topics)
    print(f"kappa CIs at {args.n_kappa} of {nq} queries (double bootstrap: population = the 54 queries, "
          f"{args.kappa_draws} draws, {args.n_boot} resamples each)")
    print(f"{'statistic':<16}{'judge':<9}{'truth':>8}{'studentized':>13}{'percentile':>12}{'width':>8}")
    k = 4
    for jname, p in (("good", 0.1), ("medium", 0.3), ("weak", 0.6)):
        jl = noisy(nist, p, rng)
        C = np.zeros((nq, k, k))
        for qi, q in enumerate(topics):
            for d, g in nist[q].items():
                C[qi, g, jl[q][d]] += 1
        for name, stat in (("kappa", S.kappa), ("binary kappa", lambda c: S.kappa(S.binarise(c, 2)))):
            true = float(stat(C.sum(axis=0)))
            hs = hp = 0
            widths = []
            for _ in range(args.kappa_draws):
                sub = C[rng.choice(nq, args.n_kappa, replace=False)]
                w = query_weights(args.n_kappa, args.n_boot, rng)
                ci = studentized_ci(stat, sub, w, bounds=(-1.0, 1.0))
                pc = percentile_ci(stat(S.resample(sub, w)))
                hs += ci is not None and ci[0] <= true <= ci[1]
                hp += pc is not None and pc[0] <= true <= pc[1]
                widths.append(np.nan if ci is None else ci[1] - ci[0])
            print(f"{name:<16}{jname:<9}{true:>8.3f}{hs / args.kappa_draws:>13.3f}{hp / args.kappa_draws:>12.3f}"
                  f"{np.nanmean(widths):>8.3f}")
    print(f"\n{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
