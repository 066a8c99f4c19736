"""Seconds per judgment of the embedded local judge, with and without the prefix KV cache.

Usage: ``python benchmarks/local_judge.py [--rounds 3]`` (the model uses min(2, cores) threads)
       ``python benchmarks/local_judge.py --busy [--rounds 3]`` (threads beside a busy process)

Judges 10 (query, passage) pairs of our own writing with the built-in ``local`` prompt
(``prompts/local_fewshot.txt``, rendered by the judge core):

* ``no cache``   — every prompt evaluated from scratch in one batch (n_batch 512);
* ``cache/B``    — the KV cache of the longest common token prefix with the previous prompt
  (the few-shot block) is reused, in canonical blocks of B tokens (what ``_local`` ships, B=32).

Configurations are interleaved round by round (the machine is shared: interleaving spreads the
noise evenly) and the median over rounds of seconds per judgment is printed with the ratio to
``no cache``. Also prints the prompt token count and each pair's grade distribution.

``--busy``: the thread count (``_ThreadChoice``, the engine's default, which measures 1 and min(2, cores) threads
and keeps the faster) against 2 and 1 fixed threads, first on the machine as it is, then beside one busy process
(a Python loop taking a core, as a second test worker or a build does); ``--judgments`` (40) per engine and round,
interleaved; the medians of seconds per judgment and their ratios to the engine's choice.
"""

from __future__ import annotations

import argparse
import statistics
import time

from relgrade.judge import load_prompt
from relgrade.judge.local._model import _Engine, _model_path
from relgrade.judge.local._provider import _prompt_of

# (query, passage, the grade a careful human would give)
PAIRS = [
    ("what is the capital of france", "Paris is the capital and largest city of France.", 3),
    ("what is the capital of france", "Bananas are rich in potassium and grow in the tropics.", 0),
    ("how many legs does a spider have", "Nearly all spiders have eight legs.", 3),
    ("how many legs does a spider have", "Insects such as ants and beetles have six legs.", 1),
    ("symptoms of the common cold", "The stock market closed higher on Tuesday after earnings.", 0),
    ("symptoms of the common cold", "A cold usually brings a runny nose, sneezing and a sore throat.", 3),
    ("when was the printing press invented", "Books were copied by hand in monasteries for centuries.", 1),
    ("how to keep basil fresh", "Store basil stems in a glass of water; some people also cover it.", 2),
    ("boiling point of water in kelvin", "Water boils at 373.15 kelvin at standard pressure.", 3),
    ("boiling point of water in kelvin", "The Kelvin scale starts at absolute zero.", 1),
]


def threads(rounds: int, judgments: int) -> None:
    import subprocess
    import sys

    from relgrade.judge.local._model import _ThreadChoice

    prompt = load_prompt("local")
    prompts = ([_prompt_of(prompt.render(q, c)) for q, c, _ in PAIRS] * (judgments // len(PAIRS) + 1))[:judgments]
    path = _model_path("gemma3-270m")
    engines = {"choice": _Engine(path), "2 fixed": _Engine(path), "1 fixed": _Engine(path)}
    engines["2 fixed"].threads, engines["1 fixed"].threads = _ThreadChoice.held(2), _ThreadChoice.held(1)
    for engine in engines.values():
        engine.judge(prompts[-1])
    for busy in (False, True):
        loop = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
        try:
            engines["choice"].threads = _ThreadChoice(2)  # a fresh choice: it measures again
            times: dict[str, list[float]] = {name: [] for name in engines}
            for _ in range(rounds):
                for name, engine in engines.items():
                    start = time.perf_counter()
                    for p in prompts:
                        engine.judge(p)
                    times[name].append((time.perf_counter() - start) / len(prompts))
        finally:
            if loop:
                loop.kill()
        base = statistics.median(times["choice"])
        print(f"{'beside a busy process' if busy else 'as the machine is'}: s/judgment (ratio to the choice)")
        for name, t in times.items():
            print(f"  {name:<8} {statistics.median(t):6.3f} ({statistics.median(t) / base:.2f}x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--busy", action="store_true", help="thread counts beside a busy process (module docstring)")
    ap.add_argument("--judgments", type=int, default=40, help="--busy: judgments per engine and round")
    args = ap.parse_args()
    if args.busy:
        threads(args.rounds, args.judgments)
        return
    prompt = load_prompt("local")  # rendered exactly as the judge core sends it (delimited chunk)
    prompts = [_prompt_of(prompt.render(q, c)) for q, c, _ in PAIRS]
    template = prompt.user.split("{{query}}")[0]
    path = _model_path("gemma3-270m")
    configs = {
        "no cache": dict(prefix_cache=False, block=512),
        "cache/32": dict(prefix_cache=True, block=32),
        "cache/64": dict(prefix_cache=True, block=64),
    }
    engines = {name: _Engine(path, **kw) for name, kw in configs.items()}
    for engine in engines.values():  # warm-up: page the weights in, fill the prefix cache
        engine.judge(prompts[-1])
    times: dict[str, list[float]] = {name: [] for name in configs}
    dists = {}
    for _ in range(args.rounds):
        for name, engine in engines.items():
            start = time.perf_counter()
            dists[name] = [engine.judge(p) for p in prompts]
            times[name].append((time.perf_counter() - start) / len(prompts))
    base = statistics.median(times["no cache"])
    print(f"prompt tokens: {min(d.prompt_tokens for d in dists['no cache'])}"
          f"..{max(d.prompt_tokens for d in dists['no cache'])}"
          f" (shared few-shot prefix: {len(engines['no cache']._tokens(template, bos=True))})")
    print(f"{'config':<10} {'s/judgment':>11} {'vs no cache':>12}")
    for name in configs:
        med = statistics.median(times[name])
        print(f"{name:<10} {med:>11.3f} {med / base:>11.2f}x")
    print("\nquery | passage | human | p(0) p(1) p(2) p(3) | argmax")
    for (q, c, human), d in zip(PAIRS, dists["cache/32"]):
        probs = " ".join(f"{p:.2f}" for p in d.probs)
        print(f"{q[:30]:<30} | {c[:38]:<38} | {human} | {probs} | {d.grade}")


if __name__ == "__main__":
    main()
