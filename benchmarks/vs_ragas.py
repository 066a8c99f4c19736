"""relgrade vs ragas on the same (query, chunk) pairs, the same server and the same concurrency.

The fake OpenAI server (tests/fakes/openai_server.py) runs in its own process with a fixed latency
(its CPU is not counted) and answers ragas' context-precision prompt with ``{"reason", "verdict"}``
steered by ``[[grade=N]]`` markers (verdict = min(N, 1)). Both tools send ragas' own prompt text:

- ``ragas``: ``ragas.evaluate`` with ``LLMContextPrecisionWithoutReference`` (``response`` = the
  query, as relgrade's ``ragas:context_precision`` judge does), ``LangchainLLMWrapper(ChatOpenAI)``
  (ragas' output parser and its ``FixOutputFormat`` retries, the openai client's retries, ragas'
  tenacity retries on RateLimitError), ``RunConfig(max_workers=C)``: at most C rows at once, each
  row's contexts one after the other;
- ``relgrade``: :func:`relgrade.judge.judge_pairs` with ``prompt=ragas_prompt("ragas:context_precision")``,
  ``JudgeConfig(concurrency=C)``: at most C calls at once, a fresh SQLite store, the per-row score
  being the same average precision (of the judged contexts).

So both have at most C calls in flight. Each latency gets its own server: 300 ms (a hosted model:
the wall is latency-bound, and ragas' one-context-after-another rows cap the ratio) and 20 ms (a
fast local endpoint such as vLLM: the wall is bound by each client's CPU per judgment). Scenarios: ``clean``, and ``faults``: 10% of the pairs
get one 429 (Retry-After 0.2 s), 5% one unparseable answer, 5% unparseable answers on every attempt.
Printed per tool: wall time, CPU ms per judgment (this process), calls the server saw (and 200s
paid), pairs without a verdict, rows scored, rows NaN (ragas) / lost (relgrade: no judged context),
verdicts kept per second (ragas discards the verdicts of a NaN row), and the throughput ratios
(ragas wall / relgrade wall, and relgrade / ragas verdicts kept per second). Goals: ratio >= 1.5 at equal concurrency; no
row lost where ragas gives NaN.

    python benchmarks/vs_ragas.py [--queries 20] [--per-query 10] [--concurrency 16] [--latency 0.3 0.02]
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _fakes import load_fakes  # noqa: E402

MODEL = "gpt-4o-mini"
KEY = "sk-fake-benchmark-key"


def fault_of(i: int, faults: bool) -> str:
    if not faults:
        return ""
    slot = i % 20
    if slot in (3, 9):
        return " [[faults=429:0.2]]"
    if slot == 7:
        return " [[faults=garbage]]"
    if slot == 13:
        return " [[faults=" + ";".join(["garbage"] * 8) + "]]"
    return ""


def make_rows(n_queries: int, per_query: int, tag: str, faults: bool) -> list[tuple[str, list[str]]]:
    rows = []
    for q in range(n_queries):
        contexts = [f"passage {d} for query {q} ({tag}): some words about the topic to read [[grade={(q + d) % 3}]]"
                    + fault_of(q * per_query + d, faults) for d in range(per_query)]
        rows.append((f"benchmark question {q} about topic {tag}?", contexts))
    return rows


def run_ragas(rows, base_url: str, concurrency: int) -> dict:
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, RunConfig, evaluate
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics._context_precision import LLMContextPrecisionWithoutReference

    dataset = EvaluationDataset.from_list([{"user_input": q, "response": q, "retrieved_contexts": c} for q, c in rows])
    import httpx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # a fresh HTTP client per evaluate: langchain-openai's shared default client keeps connections of
        # the previous evaluate's (closed) event loop, which made the openai client re-send 2 requests
        client = httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency * 2))
        llm = LangchainLLMWrapper(ChatOpenAI(model=MODEL, base_url=base_url, api_key=KEY, temperature=0.0,
                                             http_async_client=client))
        wall, cpu = time.perf_counter(), time.process_time()
        result = evaluate(dataset, metrics=[LLMContextPrecisionWithoutReference()], llm=llm,
                          run_config=RunConfig(max_workers=concurrency, timeout=600), show_progress=False,
                          raise_exceptions=False)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    scores = [s["llm_context_precision_without_reference"] for s in result.scores]
    nan = sum(1 for s in scores if s is None or (isinstance(s, float) and math.isnan(s)))
    kept = sum(len(c) for (_, c), s in zip(rows, scores) if not (s is None or math.isnan(s)))
    return {"wall": wall, "cpu": cpu, "scores": scores, "rows_bad": nan, "pairs_missing": None, "kept": kept}


def run_relgrade(rows, base_url: str, concurrency: int, store: Path) -> dict:
    from relgrade.io import query_id_for
    from relgrade.judge import JudgeConfig, Pair, judge_pairs
    from relgrade.ragas import average_precision, ragas_prompt

    pairs = [Pair(query_id_for(q), f"c{d}", q, text) for q, contexts in rows for d, text in enumerate(contexts)]
    prompt = ragas_prompt("ragas:context_precision")
    wall, cpu = time.perf_counter(), time.process_time()
    result = judge_pairs(pairs, model=f"openai/{MODEL}", prompt=prompt, store=store, api_base=base_url, api_key=KEY,
                         config=JudgeConfig(concurrency=concurrency, timeout=60), handle_sigint=False)
    grades = {(j.query_id, j.doc_id): j.grade for j in result.judgments}
    scores = []
    for q, contexts in rows:
        judged = [g for d in range(len(contexts)) if (g := grades.get((query_id_for(q), f"c{d}"))) is not None]
        scores.append(average_precision([int(g >= 1) for g in judged]) if judged else math.nan)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    counts = result.counts()
    return {"wall": wall, "cpu": cpu, "scores": scores, "rows_bad": sum(math.isnan(s) for s in scores),
            "pairs_missing": counts["unjudged"] + counts["failed"] + counts["remaining"],
            "retries": len(result.retries), "kept": counts["judged"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--per-query", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, nargs="+", default=[0.3, 0.02],
                        help="server latencies in seconds, one fake server each (default: a slow hosted "
                             "model, 0.3, and a fast local endpoint, 0.02)")
    args = parser.parse_args()

    from relgrade.judge.transport._call import import_litellm

    import_litellm()
    logging.getLogger("ragas").setLevel(logging.CRITICAL)  # ragas logs every parse failure; we count them
    n_pairs = args.queries * args.per_query
    fakes = load_fakes()
    table = []
    for latency in args.latency:
        table += measure(fakes, latency, args)
    report(table, args, n_pairs)


def measure(fakes, latency: float, args) -> list:
    table = []
    with fakes.spawn_server(latency=latency, lifetime=1800) as server, tempfile.TemporaryDirectory() as tmp:
        # warm both paths (imports, connection pools) outside the measurement
        run_ragas(make_rows(2, 2, "warm-r", False), server.base_url, args.concurrency)
        run_relgrade(make_rows(2, 2, "warm-g", False), server.base_url, args.concurrency, Path(tmp) / "warm.sqlite")
        for scenario in ("clean", "faults"):
            faults = scenario == "faults"
            measured = {}
            for tool in ("ragas", "relgrade"):
                server.reset()
                rows = make_rows(args.queries, args.per_query, f"{scenario}-{tool}", faults)
                if tool == "ragas":
                    out = run_ragas(rows, server.base_url, args.concurrency)
                else:
                    out = run_relgrade(rows, server.base_url, args.concurrency, Path(tmp) / f"{scenario}.sqlite")
                out["latency"] = latency
                stats = server.stats()
                out.update(calls=stats["requests"], paid=stats["paid"],
                           repeats={k: v for k, v in stats["by_pair"].items() if v["paid"] > 1})
                measured[tool] = out
                table.append((scenario, tool, out))
            same = sum(1 for a, b in zip(measured["ragas"]["scores"], measured["relgrade"]["scores"])
                       if not (math.isnan(a) or math.isnan(b)) and abs(a - b) < 1e-6)
            measured["relgrade"]["same"] = same
            measured["relgrade"]["ratio"] = measured["ragas"]["wall"] / measured["relgrade"]["wall"]
            rate = {tool: m["kept"] / m["wall"] for tool, m in measured.items()}
            measured["relgrade"]["kept_ratio"] = rate["relgrade"] / rate["ragas"]
            measured["relgrade"]["recovered"] = sum(
                1 for a, b in zip(measured["ragas"]["scores"], measured["relgrade"]["scores"])
                if math.isnan(a) and not math.isnan(b))
    return table


def report(table: list, args, n_pairs: int) -> None:
    lat = ", ".join(f"{x * 1000:.0f} ms" for x in args.latency)
    ideal = ", ".join(f"{math.ceil(n_pairs / args.concurrency) * x:.2f} s" for x in args.latency)
    print(f"{n_pairs} pairs ({args.queries} rows x {args.per_query} contexts), at most {args.concurrency} calls in "
          f"flight for both, server latency {lat} in its own process (one server per latency); ideal wall {ideal}")
    print("faults scenario: 10% of pairs one 429 (Retry-After 0.2 s), 5% one unparseable answer, "
          "5% unparseable on every attempt")
    print(f"{'latency':>7} {'scenario':<8} {'tool':<8} {'wall s':>7} {'CPU ms/judgment':>15} {'calls':>6} {'paid':>5} "
          f"{'pairs w/o verdict':>17} {'rows scored':>11} {'rows NaN/lost':>13} {'verdicts kept/s':>15} "
          f"{'wall ratio':>10} {'kept/s ratio':>12}")
    for scenario, tool, out in table:
        missing = "n/a" if out["pairs_missing"] is None else str(out["pairs_missing"])
        ratio = f"{out['ratio']:.2f}" if "ratio" in out else ""
        kept_ratio = f"{out['kept_ratio']:.2f}" if "kept_ratio" in out else ""
        print(f"{out['latency'] * 1000:>5.0f}ms {scenario:<8} {tool:<8} {out['wall']:>7.2f} {out['cpu'] / n_pairs * 1000:>15.2f} {out['calls']:>6} "
              f"{out['paid']:>5} {missing:>17} {args.queries - out['rows_bad']:>11} {out['rows_bad']:>13} "
              f"{out['kept'] / out['wall']:>15.1f} {ratio:>10} {kept_ratio:>12}")
    for scenario, tool, out in table:
        if tool == "relgrade":
            print(f"{out['latency'] * 1000:.0f} ms {scenario}: relgrade/ragas throughput {out['ratio']:.2f}x by wall time, {out['kept_ratio']:.2f}x by "
                  f"verdicts kept per second (goal >= 1.5); rows with the same score "
                  f"in both: {out['same']}; rows ragas gave NaN that relgrade scored: {out['recovered']}")
    print(f"ragas runs a row's {args.per_query} contexts one after the other, so with {args.queries} rows and "
          f"{args.concurrency} workers its ideal is {math.ceil(args.queries / args.concurrency) * args.per_query} "
          f"latencies against relgrade's {math.ceil(n_pairs / args.concurrency)}: the wall ratio cannot exceed "
          f"{math.ceil(args.queries / args.concurrency) * args.per_query / math.ceil(n_pairs / args.concurrency):.2f} "
          "here (slow server), and nears 1 when rows are many more than workers; against a fast server the "
          "client's own CPU per judgment bounds the wall instead (one event loop, one core): wall >= pairs x "
          "CPU ms/judgment")
    print("ragas: a row whose one context stays unparseable after ragas' output fixer is NaN as a whole (its other "
          "verdicts are thrown away); relgrade: that context is 'unjudged' (raw answer kept, asked again with "
          "--retry-unjudged) and the row is the AP of its judged contexts. 'pairs w/o verdict' is not reported by "
          "ragas (n/a).")


if __name__ == "__main__":
    main()
