"""What can *any* choice of queries buy? The active design's ceiling on TREC DL 2020 (issue 35.3).

With ``n`` draws with replacement, query ``i`` drawn with probability ``q_i``, the inverse-probability-weighted
PPI++ estimate has variance ``E_i[r_i^2 / (N q_i)] / n`` against ``E_i[r_i^2] / n`` under the uniform design, ``r_i``
the query's residual ``Y_i - lam f_i`` (human metric minus the scaled prediction, centred). So the width ratio
active / uniform of a design ``q`` is ``sqrt(mean(r^2 / (N q)) / mean(r^2))``, and no design does better than
``q ∝ |r|``, which knows every query's residual in hindsight: its ratio ``mean|r| / sqrt(mean r^2)`` is the ceiling
of what choosing queries can buy here, before any cost of estimating ``q`` or ``lam`` from ten labels.

For each synthetic LLM-like judge (``benchmarks/_llm_judges.llm_judge``: κ, and ``aware``, how far its grade
distribution's spread follows the query's own noise scale: 0, the judges of every other benchmark, logprobs that do
not know which queries the judge misreads; 1, logprobs that widen exactly with its noise), relevance threshold and
metric, over the 54 queries and the four systems of ``benchmarks/ppi_trec_dl.py`` (``r`` from the default soft
prediction fitted on all NIST labels, ``lam`` the per-system optimum; the ratio averaged over systems):

* ``hindsight``: ``q ∝ rms_s |r|`` with no floor, the ceiling;
* ``hindsight, floor``: the same through ``design_probabilities`` (floor 0.3, design effect ≤ 1.02), the ceiling of
  the shipped design's guard;
* ``shipped``: ``relgrade sample --design active``'s ``q`` (``query_uncertainty`` of the judge's grade
  distributions over every system's top 10, ``design_probabilities``);
* ``no cap``: the same ``u`` with the floor 0.3 and no design-effect cap;
* ``corr``: the correlation over the 54 queries of ``u`` with ``rms_s |r|``.

    python benchmarks/active_bound.py [--data DIR] [--kappa 0.3 0.02] [--aware 0 0.5 1] [--seeds 0 10 20]

Exits 2 with one line when the data directory is missing. About a minute.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _llm_judges import llm_judge, surface, systems  # noqa: E402
from _trec_dl import DATA  # noqa: E402

METRICS = ("recall@5", "mrr", "ndcg@10")
SIGMAS = (1.0, 2.0, 4.0, 8.0)


def ratio(R: np.ndarray, q: np.ndarray) -> float:
    """Width ratio active / uniform (module docstring), averaged over the systems (rows of ``R``)."""
    q = q / q.sum()
    N = q.size
    return float(np.mean([np.sqrt(np.mean(r * r / (N * q)) / np.mean(r * r)) for r in R if np.mean(r * r) > 0]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--kappa", type=float, nargs="+", default=[0.3, 0.02])
    ap.add_argument("--aware", type=float, nargs="+", default=[0.0, 0.5, 1.0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 10, 20])
    ap.add_argument("--thresholds", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    if not (args.data / "qrels.txt").is_file():
        print(f"active_bound: error: {args.data}/qrels.txt not found; pass --data DIR "
              "(benchmarks/fetch_trec_dl_2020.py writes it)", file=sys.stderr)
        return 2

    from _active_grid import uncertainty
    from ppi_trec_dl import copies, judge_sets

    from relgrade.hybrid import per_query_values, predict
    from relgrade.io import Qrels, Run, read_qrels
    from relgrade.metrics import parse_metric
    from relgrade.stats._weighted import design_probabilities

    nist = read_qrels(args.data / "qrels.txt").to_dict()
    topics = sorted(nist)
    surf = surface(nist, np.random.default_rng(100))
    runs = [Run.from_dict(r, name=f"sigma {s:g}") for s, r in zip(SIGMAS, systems(nist, SIGMAS, surf=surf, seed=0))]
    metrics = [parse_metric(m) for m in METRICS]
    print(f"TREC DL 2020: {len(topics)} queries, {len(runs)} systems; width ratio active / uniform of each design "
          f"(module docstring), mean over judge seeds {args.seeds}; corr: u with the judge's residual per query")
    head = f"{'judge':<22}{'rel':>4} {'metric':<9}{'hindsight':>10}{'h, floor':>9}{'shipped':>9}{'no cap':>8}{'corr':>7}"
    print(head)
    for kappa in args.kappa:
        for aware in (args.aware if kappa >= 0.1 else [0.0]):
            rows: dict[tuple[int, str], list[tuple[float, ...]]] = {}
            for seed in args.seeds:
                judge = llm_judge(nist, kappa, surf=surf, seed=seed, aware=aware)
                u = uncertainty(judge, nist, topics, runs)
                runs2, sets2, ucopies = copies(topics, runs, judge_sets("k", [judge]))
                for thr in args.thresholds:
                    H = np.stack([per_query_values(Qrels(nist), r, metrics, topics, rel_threshold=thr) for r in runs])
                    pred = predict(runs2, nist, sets2, metrics, rel_threshold=thr, prediction="soft", seed=seed)
                    at = {x: i for i, x in enumerate(pred.queries)}
                    F = pred.values[:, [at[c] for c in ucopies]]
                    for j, m in enumerate(metrics):
                        Y, f = H[:, :, j], F[:, :, j]
                        R = []
                        for s in range(len(runs)):
                            vf = np.var(f[s], ddof=1)
                            lam = np.cov(Y[s], f[s])[0, 1] / vf if vf > 0 else 0.0
                            R.append(Y[s] - lam * f[s] - np.mean(Y[s] - lam * f[s]))
                        R = np.array(R)
                        a = np.sqrt((R ** 2).mean(axis=0))
                        rows.setdefault((thr, m.name), []).append((
                            ratio(R, a), ratio(R, design_probabilities(a)), ratio(R, design_probabilities(u)),
                            ratio(R, design_probabilities(u, max_effect=None)),
                            float(np.corrcoef(u, a)[0, 1]) if np.ptp(u) > 0 and np.ptp(a) > 0 else 0.0))
            for (thr, name), vals in rows.items():
                if thr == max(args.thresholds) or name != "ndcg@10":  # nDCG@10 is graded: one threshold says it
                    v = np.mean(vals, axis=0)
                    print(f"{f'kappa {kappa:g}, aware {aware:g}':<22}{f'>={thr}':>4} {name:<9}{v[0]:>10.3f}{v[1]:>9.3f}"
                          f"{v[2]:>9.3f}{v[3]:>8.3f}{v[4]:>+7.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
