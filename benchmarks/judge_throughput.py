"""Judge throughput: achieved vs ideal wall time, and relgrade's own CPU per judgment beyond its transport's.

The fake OpenAI server (tests/fakes/openai_server.py) runs in a separate process with a fixed
latency, so its CPU is not counted (it is started with a listen backlog of 1024: the stock
``ThreadingHTTPServer`` listens with a backlog of 5, which drops the SYNs of 64 simultaneous
connects and adds 1-s retransmits). In this process, measured in one run, alternated per round:

- ``litellm only``: the rendered messages sent with ``litellm.acompletion`` under an
  ``asyncio.Semaphore(concurrency)``, nothing else (no parsing, store, retries, progress);
- ``relgrade/litellm``: :func:`relgrade.judge.judge_pairs` with ``transport="litellm"`` and a
  fresh SQLite store (tenacity retries, budget, parsing, logprob distribution, a commit each);
- ``lean only``: the same messages POSTed by :class:`relgrade.judge.transport._http.HttpTransport` alone;
- ``relgrade/http``: ``judge_pairs`` with ``transport="http"``.

Ideal wall time = pairs / concurrency x latency. Own CPU per judgment = (process CPU of relgrade
- process CPU of the matching transport-only loop) / pairs. Goals: >= 0.9 of ideal at 64
concurrent and 400 ms; own overhead <= 1 ms per judgment.

    python benchmarks/judge_throughput.py [--pairs 640] [--concurrency 64] [--latency 0.4] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _fakes import load_fakes  # noqa: E402

MODEL = "openai/gpt-4o-mini"
KEY = "sk-fake-benchmark-key"


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


async def lean_only(pairs, base_url: str, concurrency: int) -> None:
    from relgrade.judge import load_prompt
    from relgrade.judge.transport._http import HttpTransport

    prompt = load_prompt("graded")
    transport = HttpTransport(base_url, KEY, concurrency=concurrency)
    sem = asyncio.Semaphore(concurrency)

    async def one(pair):
        async with sem:
            await transport.post({"model": MODEL.split("/", 1)[1], "messages": prompt.render(pair.query, pair.text),
                                  "temperature": 0.0, "max_tokens": 256, "logprobs": True, "top_logprobs": 5}, 60)

    try:
        await asyncio.gather(*(one(p) for p in pairs))
    finally:
        await transport.aclose()


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

    from relgrade.judge import JudgeConfig, judge_pairs
    from relgrade.judge.transport._call import import_litellm

    import_litellm()
    fakes = load_fakes()
    ideal = args.pairs / args.concurrency * args.latency
    baselines = {"litellm": litellm_only, "http": lean_only}
    with fakes.spawn_server(latency=args.latency, lifetime=900.0) as server, tempfile.TemporaryDirectory() as tmp:

        def judge(pairs, transport: str, store: Path):
            result = judge_pairs(pairs, model=MODEL, api_base=server.base_url, api_key=KEY, store=store,
                                 config=JudgeConfig(concurrency=args.concurrency, timeout=60, transport=transport),
                                 handle_sigint=False)
            assert result.counts()["judged"] == len(pairs), result.counts()
            assert all(j.distribution for j in result.judgments) and result.cost_unknown == 0
            return result

        for transport, loop in baselines.items():  # warm up: imports, price table, first connections
            asyncio.run(loop(make_pairs(args.concurrency, f"warm-{transport}"), server.base_url, args.concurrency))
            judge(make_pairs(args.concurrency, f"warm2-{transport}"), transport, Path(tmp) / f"warm-{transport}.sqlite")
        rows = []
        for r in range(args.rounds):
            for transport, loop in baselines.items():
                server.reset()
                pairs = make_pairs(args.pairs, f"base-{transport}{r}")
                bw, bc = measure(lambda: asyncio.run(loop(pairs, server.base_url, args.concurrency)))
                assert server.stats()["paid"] == args.pairs
                server.reset()
                pairs = make_pairs(args.pairs, f"judge-{transport}{r}")
                jw, jc = measure(lambda: judge(pairs, transport, Path(tmp) / f"round{r}-{transport}.sqlite"))
                assert server.stats()["paid"] == args.pairs
                rows.append((r, transport, bw, bc, jw, jc))
    n = args.pairs
    print(f"{n} pairs, concurrency {args.concurrency}, server latency {args.latency * 1000:.0f} ms "
          f"(server in its own process); ideal wall = {ideal:.2f} s")
    print(f"{'round':>5}  {'transport':>9}  {'baseline wall':>13}  {'of ideal':>8}  {'relgrade wall':>13}  "
          f"{'of ideal':>8}  {'baseline CPU ms/call':>20}  {'relgrade CPU ms/pair':>20}  {'own CPU ms/pair':>15}")
    for r, t, bw, bc, jw, jc in rows:
        print(f"{r:>5}  {t:>9}  {bw:>12.2f}s  {ideal / bw:>8.3f}  {jw:>12.2f}s  {ideal / jw:>8.3f}  "
              f"{bc / n * 1000:>20.2f}  {jc / n * 1000:>20.2f}  {(jc - bc) / n * 1000:>15.2f}")
    for t in baselines:
        mine = [row for row in rows if row[1] == t]
        ratios = [ideal / row[4] for row in mine]
        base = [ideal / row[2] for row in mine]
        own = [(row[5] - row[3]) / n * 1000 for row in mine]
        print(f"{t:>7}: relgrade {min(ratios):.3f}-{max(ratios):.3f} of ideal (baseline alone "
              f"{min(base):.3f}-{max(base):.3f}; goal >= 0.9), own CPU {min(own):.2f}-{max(own):.2f} ms per "
              f"judgment beyond the transport (goal <= 1 ms)")


if __name__ == "__main__":
    main()
