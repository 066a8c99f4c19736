"""Batch vs online cost of labeling 1M pairs, from ``relgrade judge --dry-run`` (the README table).

Generates a run of ``--pairs`` distinct (query, chunk) pairs (default 10,000: queries of 8-14
words, chunks of ``--chunk-words`` words, default 190, drawn from a fixed
vocabulary with a fixed seed), runs ``relgrade judge --run RUN --model M --dry-run`` on it for each
model, reads the online and the batch estimate it prints (prompt tokens counted by litellm's
tokenizer for the model, 30 completion tokens per call, litellm's price table; batch prices from
its ``*_batches`` entries or 50% of online), and scales them to ``--target`` pairs (cost is linear
in pairs: every pair is one call). No network: the dry run calls nothing.

Time columns are arithmetic, not measurements: online = target x latency / concurrency / 0.95
(the lean transport reached 0.92-0.97 of ideal in benchmarks/judge_throughput.py), for the given
``--latency`` and ``--concurrency``, *if* the account's tokens-per-minute limit allows it (the
column ``tokens/min needed`` says how many); batch = the providers' completion window (24 h per
batch; usually sooner), subject to the account's batch queue limits.

    python benchmarks/million_pairs_cost.py [--pairs 10000] [--target 1000000] [--latency 0.8] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("openai/gpt-4.1-nano", "openai/gpt-4o-mini", "openai/gpt-4.1-mini", "openai/gpt-4o",
          "anthropic/claude-haiku-4-5", "anthropic/claude-sonnet-4-5")


def write_run(path: Path, pairs: int, chunk_words: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    vocab = [f"{a}{b}" for a in ("re", "con", "pro", "in", "ex", "de", "tran", "sub", "com", "dis")
             for b in ("tain", "port", "ject", "form", "cess", "duct", "vert", "mit", "pose", "scribe",
                       "tend", "sist", "struct", "fer", "gress", "spect", "press", "clude", "sume", "late")]
    vocab += ["the", "of", "and", "to", "a", "in", "is", "for", "on", "that", "with", "as", "by", "this", "data"]
    per_query = 20
    with open(path, "w", encoding="utf-8") as fh:
        for q in range(pairs // per_query):
            query = " ".join(rng.choice(vocab) for _ in range(rng.randint(8, 14)))
            results = [{"doc_id": f"d{q}_{i}", "text": " ".join(rng.choice(vocab) for _ in range(chunk_words))}
                       for i in range(per_query)]
            fh.write(json.dumps({"query_id": f"q{q}", "query": query, "results": results}) + "\n")


def dry_run(run: Path, model: str, store: Path) -> dict[str, float]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run([sys.executable, "-m", "relgrade.cli", "judge", "--run", str(run), "--depth", "20",
                          "--model", model, "--dry-run", "--store", str(store)],
                         env=env, capture_output=True, text=True, check=True).stdout
    pairs = int(re.search(r"(\d+) pooled pairs", out).group(1))
    tokens = re.search(r"estimated tokens: (\d+) prompt \+ (\d+) completion", out)
    online = float(re.search(r"estimated cost \$([\d.]+)", out).group(1))
    batch = float(re.search(r"estimated cost with --batch: \$([\d.]+)", out).group(1))
    source = re.search(r"--batch: \$[\d.]+ \((.*?) batch prices", out).group(1)
    return {"pairs": pairs, "prompt": int(tokens.group(1)), "completion": int(tokens.group(2)), "online": online,
            "batch": batch, "source": source}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=10_000)
    ap.add_argument("--target", type=int, default=1_000_000)
    ap.add_argument("--chunk-words", type=int, default=190)
    ap.add_argument("--latency", type=float, default=0.8)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--models", nargs="*", default=list(MODELS))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run.jsonl"
        write_run(run, args.pairs, args.chunk_words)
        scale = None
        hours_online = args.target * args.latency / args.concurrency / 0.95 / 3600
        print(f"| model | prompt tokens / pair | online, {args.target:,} pairs | batch, {args.target:,} pairs | "
              f"batch price source | online time ({args.concurrency} concurrent, {args.latency:g} s) | "
              f"tokens/min needed | batch time |")
        print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
        for model in args.models:
            start = time.perf_counter()
            r = dry_run(run, model, Path(tmp) / "store.sqlite")
            scale = args.target / r["pairs"]
            per_pair = r["prompt"] / r["pairs"]
            tpm = (r["prompt"] + r["completion"]) / r["pairs"] * args.concurrency / args.latency * 60 * 0.95
            print(f"| `{model}` | {per_pair:.0f} | ${r['online'] * scale:,.0f} | ${r['batch'] * scale:,.0f} | "
                  f"{r['source']} | {hours_online:.1f} h | {tpm / 1e6:.1f}M | ≤ 24 h |", flush=True)
            print(f"  (dry run of {r['pairs']} pairs: {r['prompt']} + {r['completion']} tokens, online "
                  f"${r['online']:.4f}, batch ${r['batch']:.4f}; scaled x{scale:g}; "
                  f"{time.perf_counter() - start:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
