"""Judge throughput: achieved vs ideal wall time, and relgrade's own CPU per judgment beyond litellm's.

The fake OpenAI server (tests/fakes/openai_server.py) runs in a separate process with a fixed
latency, so its CPU is not counted. In this process, measured in one run and alternated:

- ``litellm only``: the same rendered messages sent with ``litellm.acompletion`` under an
  ``asyncio.Semaphore(concurrency)``, nothing else (no parsing, store, retries, progress);
- ``relgrade``: :func:`relgrade.judge.judge_pairs` on the same pairs with a fresh SQLite store
  (tenacity retries, budget, parsing, logprob distribution, a commit per judgment).

Ideal wall time = pairs / concurrency x latency. Own CPU per judgment = (process CPU of relgrade
- process CPU of the litellm-only loop) / pairs. Goals: >= 0.9 of ideal at 64 concurrent and
400 ms; own overhead <= 1 ms per judgment.

    python benchmarks/judge_throughput.py [--pairs 640] [--concurrency 64] [--latency 0.4] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]
MODEL = "openai/gpt-4o-mini"
KEY = "sk-fake-benchmark-key"


def load_fakes():
    spec = importlib.util.spec_from_file_location("relgrade_fake_openai_server", ROOT / "tests" / "fakes" / "openai_server.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def make_pairs(n: int, tag: str):
    from relgrade.judge import Pair

    return [Pair(f"q{i // 10}", f"d{i}", f"benchmark query {i // 10} {tag}",
                 f"passage number {i} of round {tag}, with some words to read [[grade={i % 4}]]") for i in range(n)]


async def litellm_only(pairs, base_url: str, concurrency: int) -> None:
    import litellm

    from relgrade.judge import load_prompt

    prompt = load_prompt("graded")
    sem = asyncio.Semaphore(concurrency)

    async def one(pair):
        async with sem:
            await litellm.acompletion(model=MODEL, messages=prompt.render(pair.query, pair.text), api_base=base_url,
                                      api_key=KEY, temperature=0.0, max_tokens=256, timeout=60, max_retries=0,
                                      num_retries=0, drop_params=True, logprobs=True, top_logprobs=5)

    await asyncio.gather(*(one(p) for p in pairs))


def measure(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=640)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.4)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    import litellm

    litellm.suppress_debug_info = True
    from relgrade.judge import JudgeConfig, judge_pairs

    fakes = load_fakes()
    ideal = args.pairs / args.concurrency * args.latency
    with fakes.spawn_server(latency=args.latency, lifetime=1800) as server, tempfile.TemporaryDirectory() as tmp:
        # Warm up both paths (imports, connection pool, price table) outside the measurement.
        asyncio.run(litellm_only(make_pairs(args.concurrency, "warm"), server.base_url, args.concurrency))
        judge_pairs(make_pairs(args.concurrency, "warm2"), model=MODEL, api_base=server.base_url, api_key=KEY,
                    store=Path(tmp) / "warm.sqlite", config=JudgeConfig(concurrency=args.concurrency),
                    handle_sigint=False)
        rows = []
        for r in range(args.rounds):
            server.reset()
            pairs = make_pairs(args.pairs, f"base{r}")
            base_wall, base_cpu = measure(lambda: asyncio.run(litellm_only(pairs, server.base_url, args.concurrency)))
            base_paid = server.stats()["paid"]
            server.reset()
            pairs = make_pairs(args.pairs, f"judge{r}")
            store = Path(tmp) / f"round{r}.sqlite"
            result = {}

            def run_judge():
                result["r"] = judge_pairs(pairs, model=MODEL, api_base=server.base_url, api_key=KEY, store=store,
                                          config=JudgeConfig(concurrency=args.concurrency, timeout=60),
                                          handle_sigint=False)

            judge_wall, judge_cpu = measure(run_judge)
            res = result["r"]
            judged = res.counts()["judged"]
            assert judged == args.pairs and server.stats()["paid"] == args.pairs == base_paid, res.counts()
            rows.append((r, base_wall, base_cpu, judge_wall, judge_cpu))
    print(f"{args.pairs} pairs, concurrency {args.concurrency}, server latency {args.latency * 1000:.0f} ms "
          f"(server in its own process); ideal wall = {ideal:.2f} s")
    print(f"{'round':>5}  {'litellm-only wall':>17}  {'of ideal':>8}  {'relgrade wall':>13}  {'of ideal':>8}  "
          f"{'litellm CPU ms/call':>19}  {'relgrade CPU ms/pair':>20}  {'own CPU ms/pair':>15}")
    for r, bw, bc, jw, jc in rows:
        print(f"{r:>5}  {bw:>16.2f}s  {ideal / bw:>8.3f}  {jw:>12.2f}s  {ideal / jw:>8.3f}  "
              f"{bc / args.pairs * 1000:>19.2f}  {jc / args.pairs * 1000:>20.2f}  {(jc - bc) / args.pairs * 1000:>15.2f}")
    best = min(rows, key=lambda row: row[3])
    print(f"best relgrade round: {ideal / best[3]:.3f} of ideal (goal >= 0.9); own CPU "
          f"{(best[4] - best[2]) / args.pairs * 1000:.2f} ms per judgment beyond litellm (goal <= 1 ms)")


if __name__ == "__main__":
    main()
