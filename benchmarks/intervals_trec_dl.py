"""Coverage of relgrade's small-sample intervals on TREC DL 2020 passage (issue 14).

Data: ../shared/data/trec-dl-2020-passage/pairs.jsonl (54 queries, NIST grades 0-3 on each query's judged
pool). NIST grades are the full-label truth.

Means (PPI++ and human-only, ``relgrade estimate``'s intervals): three systems rank every judged pool by a
noisy score ``grade + N(0, sigma)`` (sigma 3, 6, 12: strong to weak). Three judges grade every pair from noisy
NIST grades: each grade is replaced by a uniformly random one with probability p (good 0.1, medium 0.3,
useless 1.0), redrawn ``--judges`` times. Each draw takes ``--n-human`` (10) random queries as human-labeled;
coverage is the share of draws whose 95% interval holds the metric's mean over all 54 queries under NIST
labels. "old" columns: the intervals relgrade used before (ppi-python's normal PPI++ interval, the CLT
human-only one with ddof 0), on the same draws. Metrics: recall@5 at grade >= 1 (mean near 1) and at
grade >= 2 (lower), nDCG@10, MRR (grade >= 2).

Agreement (``relgrade calibrate``'s intervals) by a double bootstrap: the 54 queries with a noisy-NIST judge
are the population (its kappa is the truth); each draw takes ``--n-kappa`` (12) of them at random and computes
the 95% CI of kappa and binary kappa (grade >= 2): studentized (what ``calibrate`` reports up to 100 queries)
and, for comparison, the percentile interval relgrade reported before.

    python benchmarks/intervals_trec_dl.py [--draws 2000] [--judges 3] [--kappa-draws 400] [--n-boot 400]

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
JUDGES = {"good": 0.1, "medium": 0.3, "useless": 1.0}
SIGMAS = (3.0, 6.0, 12.0)
METRICS = (("recall@5", 1, "recall@5 (>=1)"), ("recall@5", 2, "recall@5 (>=2)"), ("ndcg@10", 1, "nDCG@10"),
           ("mrr", 2, "MRR (>=2)"))


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
    ap.add_argument("--n-human", type=int, default=10)
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--judges", type=int, default=3)
    ap.add_argument("--n-kappa", type=int, default=12)
    ap.add_argument("--kappa-draws", type=int, default=400)
    ap.add_argument("--n-boot", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not (args.data / "pairs.jsonl").is_file():
        print(f"intervals_trec_dl: error: {args.data}/pairs.jsonl not found; pass --data DIR", file=sys.stderr)
        sys.exit(2)

    import warnings

    from relgrade.calibration import _stats as S
    from relgrade.hybrid._ppi import ppi_module

    ppi_py = ppi_module()
    from relgrade.hybrid import human_only_means, per_query_values, ppi_means
    from relgrade.io import Qrels, Run
    from relgrade.metrics import parse_metric
    from relgrade.stats import percentile_ci, query_weights, studentized_ci

    t0 = time.time()
    rng = np.random.default_rng(args.seed)
    nist = load(args.data)
    topics = sorted(nist)
    nq, n = len(topics), args.n_human
    runs = {s: Run.from_dict({q: {d: g + rng.normal(0, s) for d, g in nist[q].items()} for q in topics}, name=f"s{s}")
            for s in SIGMAS}

    def values(labels, run):
        return np.column_stack([per_query_values(Qrels(labels), run, [parse_metric(m)], topics, rel_threshold=t)[:, 0]
                                for m, t, _ in METRICS])

    truth = {s: values(nist, r) for s, r in runs.items()}
    print(f"TREC DL 2020 passage: {nq} queries, {sum(map(len, nist.values()))} NIST pairs; {len(SIGMAS)} systems "
          f"(pool ranked by grade + N(0, sigma), sigma {SIGMAS}); {n} human-labeled queries per draw, "
          f"{args.draws} draws x {args.judges} judge redraws per judge")
    for s in SIGMAS:
        print(f"full-label means (sigma {s:g}): " + ", ".join(f"{label} {truth[s][:, j].mean():.3f}"
                                                            for j, (_, _, label) in enumerate(METRICS)))
    header = (f"{'metric':<16}{'judge':<9}{'PPI cov':>9}{'human cov':>11}{'PPI width':>11}{'human width':>13}"
              f"{'min width':>11}{'old PPI':>9}{'old human':>11}")
    print("\n95% intervals for the mean over 54 queries at 10 labeled (coverage pooled over systems and judges)")
    print(header)
    rows = {}
    for jname, p in JUDGES.items():
        judged = [noisy(nist, p, rng) for _ in range(args.judges)]
        for j, (_, _, label) in enumerate(METRICS):
            hits_p = hits_h = total = old_p = old_h = 0
            wp, wh, wmin = [], [], np.inf
            for s, run in runs.items():
                for jl in judged:
                    J = values(jl, run)[:, j]
                    Y = truth[s][:, j]
                    order = np.argsort(rng.random((args.draws, nq)), axis=1)
                    lab, unl = order[:, :n].T, order[:, n:].T
                    e, h = ppi_means(Y[lab], J[lab], J[unl]), human_only_means(Y[lab])
                    theta = Y.mean()
                    hits_p += int(((e.lo <= theta) & (theta <= e.hi)).sum())
                    hits_h += int(((h.lo <= theta) & (theta <= h.hi)).sum())
                    total += args.draws
                    # before issue 14: ppi-python's normal intervals (ddof 0, no floor), clipped to [0, 1]
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        olo, ohi = ppi_py.ppi_mean_ci(Y[lab], J[lab], J[unl], alpha=0.05, lam_optim_mode="element")
                    half = 1.959964 * Y[lab].std(axis=0) / np.sqrt(n)
                    hm = Y[lab].mean(axis=0)
                    old_p += int(((np.clip(olo, 0, 1) <= theta) & (theta <= np.clip(ohi, 0, 1))).sum())
                    old_h += int(((hm - half <= theta) & (theta <= hm + half)).sum())
                    wp.append(e.width.mean())
                    wh.append(h.width.mean())
                    wmin = min(wmin, e.width.min(), h.width.min())
            rows[(label, jname)] = (hits_p / total, hits_h / total)
            print(f"{label:<16}{jname:<9}{hits_p / total:>9.3f}{hits_h / total:>11.3f}{np.mean(wp):>11.3f}"
                  f"{np.mean(wh):>13.3f}{wmin:>11.3f}{old_p / total:>9.3f}{old_h / total:>11.3f}")

    print(f"\nkappa CIs at {args.n_kappa} of {nq} queries (double bootstrap: population = the 54 queries, "
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
