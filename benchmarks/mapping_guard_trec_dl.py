"""Does the mapping guard adopt only maps that gain on queries it never saw? TREC DL 2020, synthetic LLM judges.

``--judges`` (31) synthetic LLM judges (``_llm_judges.llm_judge``: lenient on 1, strict on 3, per-query bias and
noise scale; kappa 0.1-0.6 against the NIST grades) grade every judged pair. Each of ``--draws`` (50) draws per
judge shuffles the 54 queries, fits ``relgrade.calibration.fit_mapping`` on the first ``--n-fit`` (12) and scores
the map on the next 13 queries, and on all 42 other queries: the held-out gain is
``kappa(NIST, mapped judge) - kappa(NIST, judge)`` there. With ``--expected`` the fit also sees the judge's
expected grades (its grade distributions), so cut points compete with the tables.

Printed: fits, adoptions (rate), adoptions that lose kappa on the 13 and on the 42 other queries, the mean and
worst held-out gain of adoptions, and the mean held-out gain over all fits (a kept identity gains 0).
It uses only the public API, so the same command measures an older checkout (``PYTHONPATH=that/src``).

    python benchmarks/mapping_guard_trec_dl.py [--draws 50] [--judges 31] [--expected] [--data DIR]

Exits 2 with one line when the data directory is missing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from _llm_judges import kappa, llm_judge, surface  # noqa: E402 - benchmarks/ is the script folder, first on sys.path
from _trec_dl import DATA  # noqa: E402


def _kappa_on(queries, human, grades) -> float:
    h = np.concatenate([[human[q][d] for d in sorted(human[q])] for q in queries])
    j = np.concatenate([[grades[q][d] for d in sorted(human[q])] for q in queries])
    return kappa(h, j)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--judges", type=int, default=31)
    ap.add_argument("--draws", type=int, default=50, help="fits per judge")
    ap.add_argument("--n-fit", type=int, default=12, help="queries the map is fitted on")
    ap.add_argument("--n-score", type=int, default=13, help="other queries it is scored on (also: all others)")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--expected", action="store_true", help="give the fit the judge's expected grades")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not (args.data / "qrels.txt").is_file():
        print(f"mapping_guard_trec_dl: error: {args.data}/qrels.txt not found; pass --data DIR", file=sys.stderr)
        return 2
    from relgrade.calibration import fit_mapping
    from relgrade.io import read_qrels

    t0 = time.time()
    human = read_qrels(args.data / "qrels.txt").to_dict()
    topics = sorted(human)
    rng = np.random.default_rng(args.seed)
    surf = surface(human, np.random.default_rng(args.seed + 1))
    targets = np.linspace(0.1, 0.6, args.judges)
    rows = []  # (adopted, gain on n_score queries, gain on all other queries)
    for i, target in enumerate(targets):
        judge = llm_judge(human, float(target), surf=surf, seed=2000 + i)
        expected = ({q: {d: float(np.dot(p, np.arange(4))) for d, p in docs.items()} for q, docs in judge.dists.items()}
                    if args.expected else None)
        for _ in range(args.draws):
            order = [topics[k] for k in rng.permutation(len(topics))]
            fit_q, score_q, rest_q = order[:args.n_fit], order[args.n_fit:args.n_fit + args.n_score], order[args.n_fit:]
            m = fit_mapping({q: judge.grades[q] for q in fit_q}, {q: human[q] for q in fit_q},
                            expected=None if expected is None else {q: expected[q] for q in fit_q},
                            n_boot=args.n_boot, seed=int(rng.integers(1 << 31)))
            mapped = {q: {d: m.apply_to(g, None if expected is None else expected[q][d]) for d, g in docs.items()}
                      for q, docs in judge.grades.items() if q in set(rest_q)}
            gains = [_kappa_on(qs, human, mapped) - _kappa_on(qs, human, judge.grades) for qs in (score_q, rest_q)]
            rows.append((m.adopted, *gains))
        print(f"  judge {i + 1}/{len(targets)} (kappa {judge.kappa:.2f}) done, {time.time() - t0:.0f} s", flush=True)
    a = np.array(rows, dtype=float)
    adopted = a[:, 0] > 0
    n_ad = int(adopted.sum())
    print(f"\nmapping guard on TREC DL 2020: {len(targets)} LLM-like judges (kappa {targets[0]:.1f}-{targets[-1]:.1f}), "
          f"fitted on {args.n_fit} queries, scored on {args.n_score} others and on all {len(topics) - args.n_fit} others"
          f"{' (with expected grades)' if args.expected else ''}")
    print(f"fits {len(a)}, adopted {n_ad} ({n_ad / len(a):.1%})")
    for col, label in ((1, f"the next {args.n_score} queries"), (2, f"all {len(topics) - args.n_fit} other queries")):
        g = a[adopted, col]
        if n_ad:
            print(f"on {label}: adoptions losing kappa {int((g < 0).sum())} of {n_ad}, held-out gain of adoptions mean "
                  f"{g.mean():+.3f}, worst {g.min():+.3f}; over all fits {a[:, col].mean():+.4f}")
        else:
            print(f"on {label}: no adoption")
    print(f"{time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
