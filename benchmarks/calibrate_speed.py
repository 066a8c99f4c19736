"""``calibrate`` on many labeled pairs (issue 39.3): this checkout against the code before issue 39, whole
processes from files, side by side in one run.

Data: :mod:`_hybrid_world` with every query human-labeled: ``--pairs`` labeled pairs (20 a query; default 20,000 and
200,000), one judge with expected grades (its details JSONL, so Spearman, Kendall and AUC are computed too):

    relgrade calibrate --judge judge.details.jsonl --human human.csv --n-boot 1000 --json cal.json

Each size runs the new code, then the baseline (``--baseline``, a git revision, default d3fdccc), each niced and
stopped after ``--timeout`` seconds (default 300; then "> timeout" is printed). The two JSON files must agree on
every statistic and interval to 1e-9.

    python benchmarks/calibrate_speed.py [--pairs 20000,200000] [--n-boot 1000] [--timeout 300]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _hybrid_world import write_world  # noqa: E402
from estimate_speed import ROOT, baseline_src, timed  # noqa: E402


def numbers(value) -> list[float]:
    """Every number of a calibrate JSON, in a fixed order (keys sorted)."""
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in numbers(value[k])]
    if isinstance(value, list):
        return [x for v in value for x in numbers(v)]
    return [float(value)] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", default="20000,200000")
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--baseline", default="d3fdccc")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base = baseline_src(args.baseline, tmp)
        print(f"python {sys.version.split()[0]}, baseline {args.baseline}, n_boot {args.n_boot}, niced; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
        for pairs in (int(x) for x in args.pairs.split(",")):
            queries = pairs // 20
            folder = tmp / f"cal{pairs}"
            paths = write_world(folder, queries, labeled=queries)
            got = {}
            for label, src in (("new", ROOT / "src"), ("before", base)):
                cmd = ["calibrate", "--judge", str(paths["judge"]), "--human", str(paths["human"]),
                       "--n-boot", str(args.n_boot), "--json", str(folder / f"{label}.json")]
                got[label] = timed(cmd, src, folder, args.timeout)
            line = f"calibrate {pairs:,} pairs ({queries:,} queries), {args.n_boot} resamples:"
            for label, r in got.items():
                line += (f" {label} > {args.timeout:.0f} s (stopped);" if r is None else
                         f" {label} {r['wall']:.1f} s wall {r['cpu']:.1f} s cpu {r['rss']:.0f} MiB;")
            if all(got.values()):
                a, b = (numbers(json.loads((folder / f"{k}.json").read_text())) for k in ("new", "before"))
                gap = max((abs(x - y) for x, y in zip(a, b)), default=0.0)
                if len(a) != len(b) or gap > 1e-9:
                    raise SystemExit(f"the two versions disagree at {pairs} pairs (largest gap {gap:g})")
                line += (f" new/before cpu {got['new']['cpu'] / got['before']['cpu']:.2f}x, peak "
                         f"{got['new']['rss'] / got['before']['rss']:.2f}x; largest gap {gap:.1e}")
            print(line, flush=True)


if __name__ == "__main__":
    main()
