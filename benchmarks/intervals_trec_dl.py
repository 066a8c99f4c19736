"""Coverage of relgrade's agreement (kappa) intervals on TREC DL 2020 passage (issue 14).

Data: ../shared/data/trec-dl-2020-passage/pairs.jsonl (54 queries, NIST grades 0-3 on each query's judged
pool). NIST grades are the full-label truth. (The intervals for metric means, human-only and PPI++, are
measured by ``benchmarks/ppi_trec_dl.py``.)

Agreement (``relgrade calibrate``'s intervals), queries drawn with replacement so the truth is the population
value: ``--kappa-judges`` (31) synthetic LLM judges (``_llm_judges.llm_judge``: lenient on 1, strict on 3,
per-query bias and noise scale) with kappa 0.1-0.6 against the NIST grades over all 54 queries; each draw takes
``--n-kappa`` (12) queries with replacement and computes the 95% CI of kappa (unweighted, linear, quadratic),
binary kappa (grade >= 2) and Krippendorff's alpha with ``--n-boot`` (1000, calibrate's default) resamples:
``now`` is ``relgrade.stats.studentized_ci`` as ``calibrate`` calls it, ``before`` the plain bootstrap-t on the raw
scale that ``calibrate`` reported before issue 29, on the same draws and resamples. Printed per statistic, pooled
over judges: coverage, the share of intervals lying wholly above / below the truth, mean and largest width; then
coverage by kappa band.

    python benchmarks/intervals_trec_dl.py [--kappa-judges 31] [--kappa-draws 200] [--n-boot 1000]

Exits 2 with one line when the data directory is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from _trec_dl import DATA  # noqa: E402 - benchmarks/ is the script folder, first on sys.path


def load(path: Path) -> dict[str, dict[str, int]]:
    labels: dict[str, dict[str, int]] = {}
    with open(path / "pairs.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            labels.setdefault(str(row["qid"]), {})[str(row["pid"])] = int(row["label"])
    return labels


KAPPA_STATS = ("kappa", "kappa linear", "kappa quadratic", "binary kappa", "alpha")


def _before(stat, per_query, weights):
    """The interval ``calibrate`` reported before issue 29: bootstrap-t on the raw scale, no floor, clipped to [-1, 1]."""
    from relgrade.stats import jackknife_se, resample

    q = per_query.shape[0]
    total = per_query.sum(axis=0)
    theta = float(stat(total))
    se = float(jackknife_se(stat, total[None], per_query, np.ones((1, q)))[0])
    totals = resample(per_query, weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (stat(totals) - theta) / jackknife_se(stat, totals, per_query, weights)
    t_hi, t_lo = np.percentile(t[np.isfinite(t)], [97.5, 2.5])
    return float(np.clip(theta - t_hi * se, -1, 1)), float(np.clip(theta - t_lo * se, -1, 1))


def kappa_intervals(nist, topics, args) -> None:
    """Coverage of calibrate's kappa CIs at ``args.n_kappa`` queries drawn with replacement (module docstring)."""
    from _llm_judges import llm_judge, surface

    from relgrade.calibration import _stats as S
    from relgrade.stats import query_weights, studentized_ci

    stats = dict(zip(KAPPA_STATS, (S.kappa, lambda c: S.kappa(c, "linear"), lambda c: S.kappa(c, "quadratic"),
                                   lambda c: S.kappa(S.binarise(c, 2)), lambda c: S.ordinal_alpha(S.coincidences_two(c)))))
    rng = np.random.default_rng(args.seed + 29)
    surf = surface(nist, np.random.default_rng(args.seed + 1))
    nq, n = len(topics), args.n_kappa
    targets = np.linspace(0.1, 0.6, args.kappa_judges)
    print(f"\nkappa CIs at {n} of {nq} queries drawn with replacement: {len(targets)} synthetic LLM judges "
          f"(kappa {targets[0]:.1f}-{targets[-1]:.1f}), {args.kappa_draws} draws each, {args.n_boot} resamples per CI")
    rows = []  # (target, statistic, method, lo > truth, hi < truth, width)
    for i, target in enumerate(targets):
        judge = llm_judge(nist, float(target), surf=surf, seed=1000 + i).grades
        C = np.zeros((nq, 4, 4))
        for qi, q in enumerate(topics):
            for d, g in nist[q].items():
                C[qi, g, judge[q][d]] += 1
        truth = {name: float(stat(C.sum(axis=0))) for name, stat in stats.items()}
        for _ in range(args.kappa_draws):
            sub = C[rng.integers(0, nq, n)]
            w = query_weights(n, args.n_boot, rng)
            for name, stat in stats.items():
                for method, ci in (("before", _before(stat, sub, w)),
                                   ("now", studentized_ci(stat, sub, w, bounds=(-1.0, 1.0), scale="atanh"))):
                    rows.append((target, name, method, ci[0] > truth[name], ci[1] < truth[name], ci[1] - ci[0]))
    target, name, method = (np.array([r[j] for r in rows]) for j in range(3))
    above, below, width = (np.array([r[j] for r in rows], dtype=float) for j in range(3, 6))
    print(f"{'statistic':<17}{'interval':<8}{'coverage':>9}{'above':>7}{'below':>7}{'mean width':>12}{'max width':>11}")
    for stat_name in KAPPA_STATS:
        for m in ("before", "now"):
            k = (name == stat_name) & (method == m)
            print(f"{stat_name:<17}{m:<8}{1 - above[k].mean() - below[k].mean():>9.3f}{above[k].mean():>7.3f}"
                  f"{below[k].mean():>7.3f}{width[k].mean():>12.3f}{width[k].max():>11.2f}")
    bands = ((0.1, 0.25), (0.25, 0.45), (0.45, 0.6))
    print("coverage by judge kappa (before / now), all five statistics pooled: " + ", ".join(
        f"{lo:.2f}-{hi:.2f} " + " / ".join(
            f"{1 - above[k].mean() - below[k].mean():.3f}"
            for k in [(target >= lo) & (target <= hi + 1e-9) & (method == m) for m in ("before", "now")])
        for lo, hi in bands))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--n-kappa", type=int, default=12)
    ap.add_argument("--kappa-draws", type=int, default=200, help="draws per judge")
    ap.add_argument("--kappa-judges", type=int, default=31)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not (args.data / "pairs.jsonl").is_file():
        print(f"intervals_trec_dl: error: {args.data}/pairs.jsonl not found; pass --data DIR", file=sys.stderr)
        sys.exit(2)
    t0 = time.time()
    nist = load(args.data)
    kappa_intervals(nist, sorted(nist), args)
    print(f"\n{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
