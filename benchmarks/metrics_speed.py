"""Metrics speed: relgrade vs ranx vs ir_measures (pytrec_eval) on the same in-memory data, one run.

100k queries x 100 retrieved docs (10M rows), 10 judged docs per query, four metrics:
recall@5 (success), precision@10, MRR, nDCG@10. Each library runs in its own subprocess (so peak
memory is its own), starting from the same dict-of-dicts ``{qid: {doc: score}}`` that all three
accept; ranx is warmed up first (numba compiled on a small input) and also timed from its
prebuilt Qrels/Run objects. Values are cross-checked between libraries (scores are unique, so
tie-breaking cannot differ).

    python benchmarks/metrics_speed.py [--queries 100000] [--depth 100]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def make_data(n_queries: int, depth: int, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    scores = rng.random((n_queries, depth))
    docs = rng.integers(0, 10 * depth, size=(n_queries, depth))
    run, qrels = {}, {}
    for q in range(n_queries):
        row_docs = [f"d{d}" for d in dict.fromkeys(docs[q].tolist())]
        run[f"q{q}"] = dict(zip(row_docs, scores[q].tolist()))
        n_judged = min(10, len(row_docs))
        judged = rng.choice(len(row_docs), size=n_judged, replace=False)
        grades = rng.integers(0, 4, size=n_judged)
        qrels[f"q{q}"] = {row_docs[j]: int(g) for j, g in zip(judged, grades)}
    return qrels, run


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(lib: str, n_queries: int, depth: int) -> dict:
    qrels, run = make_data(n_queries, depth)
    base = rss_mb()
    out: dict = {"lib": lib}
    if lib == "relgrade":
        from relgrade import evaluate

        t = time.perf_counter()
        report = evaluate(qrels, run, ["recall@5", "precision@10", "mrr", "ndcg@10"], ci=False)
        out["seconds"] = time.perf_counter() - t
        out["values"] = {k: v.value for k, v in report.aggregate.items()}
    elif lib == "ranx":
        from ranx import Qrels, Run, evaluate

        small_q, small_r = make_data(50, 10, seed=1)
        evaluate(Qrels(small_q), Run(small_r), ["hit_rate@5", "precision@10", "mrr", "ndcg@10"])  # compile
        t = time.perf_counter()
        rq, rr = Qrels(qrels), Run(run)
        t_built = time.perf_counter()
        values = evaluate(rq, rr, ["hit_rate@5", "precision@10", "mrr", "ndcg@10"])
        t_end = time.perf_counter()
        out["seconds"] = t_end - t
        out["seconds_prebuilt"] = t_end - t_built
        out["values"] = {"recall@5": values["hit_rate@5"], "precision@10": values["precision@10"],
                         "mrr": values["mrr"], "ndcg@10": values["ndcg@10"]}
    elif lib == "ir_measures":
        import ir_measures
        from ir_measures import RR, P, Success, nDCG

        t = time.perf_counter()
        agg = ir_measures.calc_aggregate([Success @ 5, P @ 10, RR, nDCG @ 10], qrels, run)
        out["seconds"] = time.perf_counter() - t
        out["values"] = {"recall@5": agg[Success @ 5], "precision@10": agg[P @ 10], "mrr": agg[RR], "ndcg@10": agg[nDCG @ 10]}
    out["peak_mb_over_data"] = rss_mb() - base
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--worker")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.queries, args.depth)))
        return
    results = []
    for lib in ("relgrade", "ranx", "ir_measures"):
        proc = subprocess.run([sys.executable, __file__, "--worker", lib, "--queries", str(args.queries), "--depth", str(args.depth)],
                              capture_output=True, text=True, check=True)
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    ours = results[0]
    print(f"{args.queries} queries x {args.depth} docs, metrics recall@5 precision@10 mrr ndcg@10 (from dict-of-dicts)")
    print(f"{'library':<14}{'seconds':>9}{'relgrade speed-up':>19}{'peak MB over data':>19}")
    for r in results:
        print(f"{r['lib']:<14}{r['seconds']:>9.2f}{r['seconds'] / ours['seconds']:>18.2f}x{r['peak_mb_over_data']:>19.0f}")
        if "seconds_prebuilt" in r:
            print(f"{'  ranx prebuilt':<14}{r['seconds_prebuilt']:>9.2f}{r['seconds_prebuilt'] / ours['seconds']:>18.2f}x   (Qrels/Run objects already built, numba warm)")
    print("max |difference| vs relgrade per metric:")
    for r in results[1:]:
        diffs = {m: abs(r["values"][m] - ours["values"][m]) for m in ours["values"]}
        print(f"  {r['lib']:<12} " + "  ".join(f"{m} {d:.1e}" for m, d in diffs.items()))


if __name__ == "__main__":
    main()
