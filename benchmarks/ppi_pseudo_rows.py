"""Why recall@5 and MRR stay above their oracle bound (issue 35.2): the plus-two pseudo-rows carry no judge information.

Data: ../shared/data/trec-dl-2020-passage/qrels.txt (NIST grades, relevant = grade >= ``--rel-threshold``), the
systems and a kappa 0.3 LLM-like judge of ``benchmarks/ppi_trec_dl.py`` (its hard prediction: the metric on the
judge's grades). Per metric and (n labeled, N unlabeled), both drawn with replacement, 2000 draws per system:
coverage (misses above / below) and the width ratio (mean PPI width / mean human-only width) of today's interval,
whose plus-two pseudo-rows (Agresti & Coull; ``relgrade.stats._augmented.pseudo_rows``) sit in the four
(human, judge) cells {0, 1}^2 and so are uncorrelated with the judge, beside the same interval with the pseudo-rows
given the judge's fitted values (the sample's regression of the prediction on the human value at 0 and at 1): the
variance PPI cannot explain away. Printed with the bound sqrt(1 - r^2 N / (n + N)).

    python benchmarks/ppi_pseudo_rows.py [--data DIR] [--draws 2000]

Exits 2 with one line when the data directory is missing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from _llm_judges import llm_judge, surface, systems  # noqa: E402 - benchmarks/ is the script folder
from _trec_dl import DATA  # noqa: E402


def fitted_pseudo(Y, Yhat, A):
    """Today's pseudo-rows with the plus-two's judge values at the fitted ones (two rows at the bounds, each of
    the full share, instead of four cells of half a share)."""
    p = A.pseudo_rows(Y, Yhat.mean(axis=0), 0.0, 1.0)
    yb, hb = Y.mean(0), Yhat.mean(0)
    syy = ((Y - yb) ** 2).sum(0)
    slope = np.where(syy > 0, ((Y - yb) * (Yhat - hb)).sum(0) / np.where(syy > 0, syy, 1), 0.0)
    lo, hi = np.clip(hb - slope * yb, 0, 1), np.clip(hb + slope * (1 - yb), 0, 1)
    m, share = Y.shape[1], A.plus_two_weight(Y, 0.0, 1.0)
    return A.Pseudo(np.vstack([np.zeros(m), np.ones(m), p.y[4]]), np.vstack([lo, hi, p.yhat[4]]),
                    np.vstack([share, share, p.w[4]]), np.vstack([p.centre[0], p.centre[0], p.centre[4]]), p.kind)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--rel-threshold", type=int, default=2)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    if not (args.data / "qrels.txt").is_file():
        print(f"ppi_pseudo_rows: error: {args.data}/qrels.txt not found; pass --data DIR", file=sys.stderr)
        return 2
    from ppi_trec_dl import SIGMAS, hard  # noqa: E402

    from relgrade.hybrid import human_only_means, per_query_values, ppi_means
    from relgrade.io import Qrels, Run, read_qrels
    from relgrade.metrics import parse_metric
    from relgrade.stats import _augmented as A

    nist = read_qrels(args.data / "qrels.txt").to_dict()
    topics = sorted(nist)
    surf = surface(nist, np.random.default_rng(100))
    runs = [Run.from_dict(r, name=f"sigma {s:g}") for s, r in zip(SIGMAS, systems(nist, SIGMAS, surf=surf, seed=0))]
    judge = llm_judge(nist, 0.3, surf=surf, seed=0)
    rng, thr = np.random.default_rng(args.seed), args.rel_threshold
    print(f"relevant >= {thr}, kappa 0.3 judge (hard prediction), {args.draws} draws x {len(runs)} systems: "
          "coverage (misses above / below), width ratio; today's pseudo-rows | with the judge's fitted values")
    for name in ("recall@5", "mrr", "ndcg@10"):
        m = parse_metric(name)
        for n, N in ((10, 100), (10, 5000), (30, 5000)):
            res, human_w, bound = {"today": [], "fitted": []}, [], []
            for run in runs:
                y = per_query_values(Qrels(nist), run, [m], topics, rel_threshold=thr)[:, 0]
                f = hard(judge.grades, run, m, topics, thr)
                idx = rng.integers(0, len(topics), (n, args.draws))
                u = rng.integers(0, len(topics), (N, args.draws))
                Y, P, U, t = y[idx], f[idx], f[u], y.mean()
                for kind, pseudo in (("today", None), ("fitted", fitted_pseudo(Y, P, A))):
                    e = ppi_means(Y, P, U, pseudo=pseudo)
                    res[kind].append((np.mean((e.lo <= t) & (t <= e.hi)), e.width.mean(), np.mean(e.lo > t),
                                      np.mean(e.hi < t)))
                human_w.append(human_only_means(Y).width.mean())
                if np.ptp(y) > 0 and np.ptp(f) > 0:
                    r = np.corrcoef(y, f)[0, 1]
                    bound.append(np.sqrt(1 - r * r * N / (n + N)))
            cells = []
            for kind, v in res.items():
                v = np.array(v)
                cells.append(f"{v[:, 0].mean():.3f} ({v[:, 2].mean():.3f}/{v[:, 3].mean():.3f}) "
                             f"{v[:, 1].sum() / sum(human_w):.3f}")
            print(f"{name:<9} n = {n:<3} N = {N:<5} bound {np.mean(bound):.3f}   " + "  |  ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
