"""Ray engine scaling: ``judge --engine ray`` with 2 workers vs 1 worker, side by side in one run, same pairs.

The fake OpenAI server (tests/fakes/openai_server.py) runs in a separate process answering every call in
``--latency`` seconds (400 ms). Each round judges the same pairs into a fresh PostgreSQL schema (``RELGRADE_TEST_PG``
or ``--pg``) with :func:`relgrade.judge.cluster.judge_pairs_ray`, first with 1 worker then with 2 (alternated per
round), ``--concurrency`` calls in flight per worker, on the Ray cluster of ``$RAY_ADDRESS`` (else a local Ray with
2 CPUs started once for the whole benchmark).

Throughput = answers stored / (last answer's ``created`` - first answer's ``created`` + one latency) from the store:
the judging itself, without the few seconds Ray takes to start the actors (printed apart, as the end-to-end wall
time). Goal (issue 38): 2 workers x 32 in flight >= 1.8x one worker's throughput.

    RELGRADE_TEST_PG=postgresql://... python benchmarks/ray_judge.py [--pairs 1280] [--latency 0.4]
        [--concurrency 32] [--rounds 1]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _fakes import load_fakes  # noqa: E402

MODEL = "openai/gpt-4o-mini"
KEY = "sk-fake-benchmark-key"


def pairs_of(n: int):
    from relgrade.judge import Pair

    return [Pair(f"q{i // 10}", f"d{i}", f"question {i // 10}", f"passage {i} [[grade={i % 4}]]") for i in range(n)]


def one_run(pairs, *, workers: int, concurrency: int, base_url: str, pg: str, latency: float) -> dict:
    import psycopg

    from relgrade.judge import JudgeConfig
    from relgrade.judge.cluster import judge_pairs_ray

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")
    url = f"{pg}{'&' if '?' in pg else '?'}options=-csearch_path%3D{schema}"
    try:
        t0 = time.perf_counter()
        result = judge_pairs_ray(pairs, model=MODEL, store=url, api_base=base_url, workers=workers,
                                 config=JudgeConfig(concurrency=concurrency, transport="http", timeout=30))
        wall = time.perf_counter() - t0
        with psycopg.connect(url, autocommit=True) as db:
            times = sorted(t for (t,) in db.execute("SELECT created FROM judgments").fetchall())
        first, last, n = times[0], times[-1], len(times)
        lo, hi = times[n // 10], times[n - 1 - n // 10]  # the middle 80% of the answers: the steady state
    finally:
        with psycopg.connect(pg, autocommit=True) as db:
            db.execute(f"DROP SCHEMA {schema} CASCADE")
    assert result.counts()["judged"] == len(pairs) and n == len(pairs), result.counts()
    span = (last - first) + latency  # the first answer arrives one latency after the first call goes out
    return {"workers": workers, "wall": wall, "span": span, "throughput": n / span,
            "steady": (n - 2 * (n // 10)) / max(hi - lo, 1e-9)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1280)
    ap.add_argument("--latency", type=float, default=0.4)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--pg", default=os.environ.get("RELGRADE_TEST_PG"))
    args = ap.parse_args(argv)
    if not args.pg:
        sys.exit("ray_judge: give --pg postgresql://... (or set RELGRADE_TEST_PG): the Ray engine needs a shared store")
    import ray

    os.environ["OPENAI_API_KEY"] = KEY
    if not os.environ.get("RAY_ADDRESS"):
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    else:
        ray.init(log_to_driver=False, _node_ip_address="127.0.0.1")
    fakes = load_fakes()
    pairs = pairs_of(args.pairs)
    rows = []
    with fakes.spawn_server(latency=args.latency, lifetime=3600) as srv:
        for r in range(args.rounds):
            for workers in ((1, 2) if r % 2 == 0 else (2, 1)):
                srv.reset()
                row = one_run(pairs, workers=workers, concurrency=args.concurrency, base_url=srv.base_url,
                              pg=args.pg, latency=args.latency)
                paid = srv.stats()["paid"]
                assert paid == len(pairs), paid
                row["round"] = r
                rows.append(row)
                ideal = workers * args.concurrency / args.latency
                print(f"round {r}: {workers} worker(s) x {args.concurrency}: {row['throughput']:.1f} pairs/s judging "
                      f"({row['throughput'] / ideal:.2f} of the ideal {ideal:.0f}), {args.pairs} pairs in "
                      f"{row['span']:.1f} s (steady state, the middle 80% of the answers: {row['steady']:.1f} pairs/s); end to "
                      f"end with actor start {row['wall']:.1f} s", flush=True)
    ray.shutdown()
    one = sum(x["throughput"] for x in rows if x["workers"] == 1) / args.rounds
    two = sum(x["throughput"] for x in rows if x["workers"] == 2) / args.rounds
    steady1 = sum(x["steady"] for x in rows if x["workers"] == 1) / args.rounds
    steady2 = sum(x["steady"] for x in rows if x["workers"] == 2) / args.rounds
    wall1 = sum(x["wall"] for x in rows if x["workers"] == 1) / args.rounds
    wall2 = sum(x["wall"] for x in rows if x["workers"] == 2) / args.rounds
    print(f"2 workers / 1 worker, {args.concurrency} in flight each at {args.latency * 1000:.0f} ms: throughput "
          f"{two / one:.2f}x ({two:.1f} vs {one:.1f} pairs/s; goal >= 1.8x); steady state {steady2 / steady1:.2f}x; end to end {wall1 / wall2:.2f}x "
          f"({wall2:.1f} s vs {wall1:.1f} s, Ray's actor start included)")


if __name__ == "__main__":
    main()
