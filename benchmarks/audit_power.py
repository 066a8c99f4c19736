"""What a judge audit costs and what it finds: calls per probe, dollars, and power against planted biases.

    python benchmarks/audit_power.py [--data ../shared/data/trec-dl-2020-passage] [--sims 500]

**Cost.** A RAG JSONL run made of the TREC DL 2020 judged passages (54 queries, 11,386 pairs; written to a
temporary folder, never into the repository) is audited at 100, 200 and 400 pairs: the dry run's calls and dollars
per probe for ``openai/gpt-4o-mini`` at litellm's prices (the length, duplication and position probes send twice the
passage), then the audit itself against the fake OpenAI-compatible server (tests/fakes/openai_server.py, in this
process), counting the requests the server answered per kind of answer, and a re-run, which the store serves.

**Power.** Simulated audits on the NIST grades: an LLM-like judge of ``benchmarks/_llm_judges.py`` (kappa 0.4 against
NIST: lenient on 1, strict on 3, per-query bias and noise) gives each pair its latent; each answer adds its own call
noise (two levels: a re-ask changes about 10% or 30% of the grades) and one probe (keywords) adds a bias that
varies by query (``delta_q = delta * (1 + 0.5 z_q)``), ``delta`` tuned so that the mean grade shift over all pairs is
0.25 or 0.5 grade. Each audit samples n pairs at random and runs :func:`relgrade.audit.analyse` on all six probes:
power = the share of audits that flag the planted probe; false alarms = the share that flag any other probe (and,
with no planted bias, any probe at all). With the default ``--min-shift 0.25`` a true shift of 0.25 is flagged only
when its estimate reaches 0.25, about half the time whatever n; the table shows ``--min-shift 0.1`` beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _llm_judges import THRESHOLDS, _latent, llm_judge, surface  # noqa: E402
from _trec_dl import DATA  # noqa: E402

from relgrade.audit import PROBES, analyse  # noqa: E402

NAMES = [p.name for p in PROBES]
SIZES = (100, 200, 400)
PLANTED = "keywords"


def load(data: Path):
    rows = [json.loads(line) for line in (data / "pairs.jsonl").read_text().splitlines() if line.strip()]
    labels: dict[str, dict[str, int]] = {}
    for r in rows:
        labels.setdefault(r["qid"], {})[r["pid"]] = int(r["label"])
    return rows, labels


def cost(rows, sizes, fakes) -> None:
    from relgrade.audit import design_audit, price_audit, run_audit
    from relgrade.io import read_run
    from relgrade.judge import JudgeConfig, pool

    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run.jsonl"
        by_query: dict[str, list] = {}
        for r in rows:
            by_query.setdefault(r["qid"], [r["query"]]).append({"doc_id": r["pid"], "text": r["passage"]})
        with open(run, "w") as fh:
            for qid, (query, *results) in by_query.items():
                fh.write(json.dumps({"query_id": qid, "query": query, "results": results}) + "\n")
        pairs = pool([read_run(run)], depth=1000)
        print(f"cost: {len(pairs):,} pairs of {len(by_query)} queries; openai/gpt-4o-mini at litellm's prices")
        print(f"{'n':>4}  {'calls per probe':>15}  {'calls':>6}  {'after judge':>11}  {'dollars':>7}  "
              f"{'dollars per probe (identity, length, keywords, truncation, duplication, position)':<82}  "
              f"{'served':>6}  {'re-run':>6}  {'seconds':>7}")
        os.environ.setdefault("OPENAI_API_KEY", "sk-fake-audit-benchmark-000")
        for n in sizes:
            design = design_audit(pairs, n=n, seed=0)
            store = Path(tmp) / f"store{n}.sqlite"
            plan = price_audit(design, model="openai/gpt-4o-mini", store=store)
            with fakes.FakeOpenAIServer(grade_by="query") as server:
                config = JudgeConfig(concurrency=32, logprobs=False)
                t = time.perf_counter()
                report = run_audit(design, model="openai/gpt-4o-mini", store=store, api_base=server.base_url,
                                   config=config)
                took = time.perf_counter() - t
                asked = server.stats()["requests"]
                server.reset()
                run_audit(design, model="openai/gpt-4o-mini", store=store, api_base=server.base_url, config=config)
                again = server.stats()["requests"]
            calls = {a["calls"] for k, a in report.answers.items() if k != "original"}
            per = f"{calls.pop()} each" if len(calls) == 1 else "varies"
            dollars = " ".join(f"{v['cost_usd']:.4f}" for k, v in plan.kinds.items() if k != "original")
            print(f"{n:>4}  {per:>15}  {plan.calls:>6}  {plan.calls - plan.kinds['original']['calls']:>11}  "
                  f"{plan.cost_usd:>7.4f}  {dollars:<82}  {asked:>6}  {again:>6}  {took:>7.1f}")


def _grades(latent: np.ndarray) -> np.ndarray:
    return (latent[:, None] > THRESHOLDS[None, :]).sum(axis=1)


def tune(base, f, target, lo=0.0, hi=4.0):
    """The x in [lo, hi] where f(x) (increasing) reaches target, by bisection."""
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return (lo + hi) / 2


def power(labels, sims: int, sizes, seed: int = 0) -> None:
    judge = llm_judge(labels, 0.4, seed=seed)
    surf = surface(labels, np.random.default_rng(seed + 1))
    lat = _latent(labels, surf, judge.noise, 0.5, 0.35, 0.5, seed)
    qids = np.concatenate([[q] * len(docs) for q, (docs, _, _, _) in lat.items()])
    latent = np.concatenate([x for _, _, x, _ in lat.values()])
    queries = sorted(lat)
    qindex = np.searchsorted(queries, qids)
    rng = np.random.default_rng(seed + 2)
    big = rng.standard_normal((4, len(latent)))
    zq = rng.standard_normal(len(queries))

    def reask(sigma):
        return float((_grades(latent + sigma * big[0]) != _grades(latent + sigma * big[1])).mean())

    def shift(sigma, delta):
        moved = latent + sigma * big[2] + delta * (1 + 0.5 * zq[qindex])
        return float((_grades(moved) - _grades(latent + sigma * big[3])).mean())

    print(f"\npower: {len(latent):,} TREC DL 2020 pairs of {len(queries)} queries, an LLM-like judge of kappa "
          f"{judge.kappa:.2f}; {sims} simulated audits per row; a bias planted in the {PLANTED} probe")
    print(f"{'re-ask changes':>14} {'n':>4} {'shift':>6}  {'power':>6}  {'false alarms':>12}  {'power @0.1':>10}  "
          f"{'false alarms @0.1':>17}  {'CI half-width':>13}")
    for target_change in (0.10, 0.30):
        sigma = tune(0, reask, target_change, 0.0, 3.0)
        for n in sizes:
            for target in (0.0, 0.25, 0.5):
                delta = tune(0, lambda d: shift(sigma, d), target, 0.0, 3.0) if target else 0.0
                found = np.zeros(2)
                other = np.zeros(2)
                half = []
                for _ in range(sims):
                    pick = rng.choice(len(latent), n, replace=False)
                    grades = {}
                    for kind in ["original", *NAMES]:
                        x = latent[pick] + sigma * rng.standard_normal(n)
                        if kind == PLANTED and delta:
                            x = x + delta * (1 + 0.5 * zq[qindex[pick]])
                        grades[kind] = _grades(x).tolist()
                    for i, min_shift in enumerate((0.25, 0.1)):
                        results = analyse(grades, list(qids[pick]), probes=NAMES, min_shift=min_shift)
                        planted = next(r for r in results if r.probe == PLANTED)
                        found[i] += planted.bias
                        other[i] += any(r.bias for r in results if r.probe != PLANTED or not delta)
                    half.append((planted.ci95[1] - planted.ci95[0]) / 2)
                label, p = ("none", ["", ""]) if not target else (f"{target:.2f}", [f"{x / sims:.3f}" for x in found])
                print(f"{reask(sigma):>14.2f} {n:>4} {label:>6}  {p[0]:>6}  {other[0] / sims:>12.3f}  {p[1]:>10}  "
                      f"{other[1] / sims:>17.3f}  {np.mean(half):>13.3f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--sims", type=int, default=500)
    parser.add_argument("--skip-cost", action="store_true")
    args = parser.parse_args(argv)
    if not (args.data / "pairs.jsonl").is_file():
        print(f"no TREC DL data in {args.data}: run benchmarks/fetch_trec_dl_2020.py or pass --data DIR")
        return 2
    rows, labels = load(args.data)
    t = time.perf_counter()
    if not args.skip_cost:
        from _fakes import load_fakes

        cost(rows, SIZES, load_fakes())
    power(labels, args.sims, SIZES)
    print(f"\n{time.perf_counter() - t:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
