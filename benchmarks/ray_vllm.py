"""vLLM in the cluster vs the online path, same model, same pairs: throughput and agreement (for a GPU machine).

Not run here (these machines have no GPU; the engine's path is tested with vLLM stubbed in
tests/judge/cluster/test_ray_engine.py). On a Ray cluster with GPUs and vLLM installed
(``pip install 'relgrade[ray]' 'ray[data,llm]' vllm``), serve the model once for the online path and run::

    vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000 &
    RAY_ADDRESS=HEAD:6379 python benchmarks/ray_vllm.py --run run.jsonl --depth 10 \\
        --model Qwen/Qwen2.5-7B-Instruct --api-base http://127.0.0.1:8000/v1 --store postgresql://USER@HOST/DB \\
        [--workers 1] [--concurrency 64]

It judges the pooled pairs twice into the same store, side by side:

- **online**: :func:`relgrade.judge.judge_pairs` with ``openai/<model>`` at ``--api-base`` (``--concurrency`` calls
  in flight; the vLLM server batches them on its GPU);
- **ray-vllm**: :func:`relgrade.judge.cluster.judge_pairs_vllm` with ``vllm/<model>`` (``--workers`` vLLM replicas
  inside the Ray cluster, fed through ``ray.data.llm``).

and prints for each the pairs per second (wall time of the judging call; the ray-vllm time includes loading the model
into its replicas, printed apart when the store already holds the online answers), and the agreement of the two
paths' grades on the pairs both judged: Cohen's kappa unweighted and quadratic with 95% query-bootstrap intervals
(:func:`relgrade.calibration.agreement`, the online grades in the place of the humans). The two paths use the same
prompt; differences come from sampling (temperature 0 on both), chat templates and batch numerics. Keys differ by model
name (``openai/`` vs ``vllm/``), so neither path reads the other's answers: re-running pays nothing on either.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", required=True, action="append", help="Run file(s) to pool (TREC needs --corpus).")
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--model", required=True, help="Hugging Face id or path, served at --api-base too.")
    ap.add_argument("--api-base", required=True, help="The OpenAI-compatible server of the online path.")
    ap.add_argument("--store", required=True, help="postgresql://... (the Ray engines need a shared store).")
    ap.add_argument("--workers", type=int, default=1, help="vLLM replicas (GPUs) for the ray-vllm path.")
    ap.add_argument("--concurrency", type=int, default=64, help="Calls in flight on the online path.")
    args = ap.parse_args(argv)
    os.environ.setdefault("OPENAI_API_KEY", "unused-by-a-local-vllm-server")

    from relgrade.calibration import agreement
    from relgrade.io import read_run
    from relgrade.judge import JudgeConfig, judge_pairs, pool
    from relgrade.judge.cluster import judge_pairs_vllm

    pairs = pool([read_run(p) for p in args.run], args.depth)
    print(f"{len(pairs)} pooled pairs, model {args.model}", flush=True)
    t0 = time.perf_counter()
    online = judge_pairs(pairs, model=f"openai/{args.model}", api_base=args.api_base, store=args.store,
                         config=JudgeConfig(concurrency=args.concurrency, transport="http"))
    t_online = time.perf_counter() - t0
    t0 = time.perf_counter()
    offline = judge_pairs_vllm(pairs, model=f"vllm/{args.model}", store=args.store, workers=args.workers)
    t_vllm = time.perf_counter() - t0
    for name, result, seconds in (("online", online, t_online), ("ray-vllm", offline, t_vllm)):
        c = result.counts()
        print(f"{name}: {c['judged']} judged, {c['unjudged']} unjudged, {result.n_calls} calls this run in {seconds:.1f} s"
              f" ({result.n_calls / seconds:.1f} pairs/s{'' if result.n_calls else ': all from the store'})")
    if online.n_calls and offline.n_calls:
        print(f"throughput ray-vllm / online: {(offline.n_calls / t_vllm) / (online.n_calls / t_online):.2f}x "
              f"(ray-vllm's time includes loading the model into {args.workers} replica(s))")
    report = agreement(offline.qrels(), online.qrels(), n_boot=1000, seed=0, name="ray-vllm")
    for label, a in (("kappa", report.kappa), ("quadratic kappa", report.kappa_quadratic)):
        ci = f"[{a.ci95[0]:.3f}, {a.ci95[1]:.3f}]" if a.ci95 else "(no interval: one query)"
        print(f"{label} ray-vllm vs online on {a.n} pairs: {a.value:.3f} {ci}")


if __name__ == "__main__":
    main()
