"""Whole-process judge throughput: a ``relgrade judge`` process, start-up included, vs the ideal and a bare aiohttp loop.

The fake OpenAI server (tests/fakes/openai_server.py) runs in its own process with a fixed latency.
Each round, alternated:

- ``relgrade judge``: a fresh ``python -m relgrade.cli judge`` process (imports, reading the run,
  pooling, the store, every commit, writing qrels and details) on ``--pairs`` pairs (a RAG JSONL
  run of pairs/10 queries x 10 chunks) at ``--concurrency`` in flight, lean transport, fresh store;
- ``bare aiohttp``: a fresh ``python`` process that imports aiohttp and POSTs the same number of
  chat requests under an ``asyncio.Semaphore(concurrency)`` and ``json.loads`` each answer,
  nothing else.

Ideal wall time = pairs / concurrency x latency (1000 / 64 x 0.4 s = 6.25 s). Printed: wall time
of each, its ratio ideal / wall, and relgrade's ratio to the bare loop's. Goal (issue 16): >= 0.85
of ideal for the whole relgrade process.

    python benchmarks/judge_process.py [--pairs 1000] [--concurrency 64] [--latency 0.4] [--rounds 3] [--store postgresql://...]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _fakes import load_fakes  # noqa: E402

BARE = r"""
import asyncio, json, sys
import aiohttp

url, n, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

async def main():
    sem = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=2 * concurrency)) as session:
        async def one(i):
            body = {"model": "gpt-4o-mini", "temperature": 0.0, "max_tokens": 256, "logprobs": True, "top_logprobs": 5,
                    "messages": [{"role": "user", "content": f"bare query {i // 10} passage {i} [[grade={i % 4}]]" + " word" * 200}]}
            async with sem:
                async with session.post(url + "/chat/completions", data=json.dumps(body).encode(),
                                        headers={"Content-Type": "application/json", "Authorization": "Bearer sk-bench"}) as r:
                    out = json.loads(await r.read())
            assert out["choices"][0]["message"]["content"]
        await asyncio.gather(*(one(i) for i in range(n)))

asyncio.run(main())
"""


def write_run(path: Path, pairs: int, tag: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for q in range(pairs // 10):
            results = [{"doc_id": f"{tag}-q{q}d{d}", "text": f"passage {d} of query {q} round {tag}, some words to read "
                        f"[[grade={(q + d) % 4}]]"} for d in range(10)]
            fh.write(json.dumps({"query_id": f"q{q}", "query": f"benchmark question {q} {tag}", "results": results}) + "\n")


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--store", default=None, help="a postgresql:// URL to judge into (default: a fresh SQLite "
                        "file per round); every round's pairs are new, so a shared store pays each round")
    args = parser.parse_args()
    fakes = load_fakes()
    ideal = args.pairs / args.concurrency * args.latency
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(OPENAI_API_KEY="sk-bench-key-123456", PYTHONPATH=str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", ""))
    rows = []
    salt = os.urandom(4).hex()
    with fakes.spawn_server(latency=args.latency, lifetime=1800.0) as server, tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for r in range(args.rounds):
            server.reset()
            bare = timed([sys.executable, "-c", BARE, server.base_url, str(args.pairs), str(args.concurrency)], env, tmp)
            assert server.stats()["paid"] == args.pairs
            server.reset()
            run = tmp / f"run{r}.jsonl"
            write_run(run, args.pairs, f"r{r}-{salt}")  # new texts: a shared --store pays every round
            cmd = [sys.executable, "-m", "relgrade.cli", "judge", "--run", str(run), "--depth", "10",
                   "--model", "openai/gpt-4o-mini", "--api-base", server.base_url, "--concurrency", str(args.concurrency),
                   "--store", args.store or str(tmp / f"s{r}.sqlite"), "--out", str(tmp / f"o{r}.qrels")]
            judge = timed(cmd, env, tmp)
            assert server.stats()["paid"] == args.pairs, server.stats()["paid"]
            rows.append((r, bare, judge))
    print(f"{args.pairs} pairs, concurrency {args.concurrency}, server latency {args.latency * 1000:.0f} ms (server in "
          f"its own process); ideal wall = {ideal:.2f} s; whole processes, start-up included")
    print(f"{'round':>5}  {'bare aiohttp':>12}  {'of ideal':>8}  {'CPU':>6}  {'relgrade judge':>14}  {'of ideal':>8}  "
          f"{'CPU':>6}  {'of bare':>7}")
    for r, (bare, bcpu), (judge, jcpu) in rows:
        print(f"{r:>5}  {bare:>11.2f}s  {ideal / bare:>8.3f}  {bcpu:>5.2f}s  {judge:>13.2f}s  {ideal / judge:>8.3f}  "
              f"{jcpu:>5.2f}s  {bare / judge:>7.3f}")
    rows = [(r, b[0], j[0]) for r, b, j in rows]
    ratios = [ideal / j for _, _, j in rows]
    base = [ideal / b for _, b, _ in rows]
    print(f"relgrade judge: {min(ratios):.3f}-{max(ratios):.3f} of ideal (bare aiohttp {min(base):.3f}-{max(base):.3f}); "
          "goal >= 0.85")


if __name__ == "__main__":
    main()
