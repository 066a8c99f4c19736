"""``estimate`` and ``rank-systems`` at a big team's scale (issue 39.2): today's code against the code before
issue 39, whole processes from files, side by side in one run.

Data: :mod:`_hybrid_world` (generated, no download): ``--queries`` judged queries x 20 retrieved pairs, one judge
with expected grades (its details JSONL), humans on ``--labeled`` of them (default 500); ``rank-systems`` over
``--systems`` runs (default 5) of ``--rank-queries`` queries (default 5,000). Each command runs once per round, the
two code versions taking turns (``--rounds``, default 2; the round of least CPU time is kept), every process
niced:

    relgrade estimate --run run0.txt --human human.csv --judge judge.details.jsonl --json out.json
    relgrade rank-systems --run run0.txt ... --run run4.txt --human human.csv --judge judge.details.jsonl --json out.json

The baseline is the source tree of ``--baseline`` (a git revision, default d3fdccc, main before issue 39),
extracted with ``git archive`` and put first on PYTHONPATH; the new code is this checkout's ``src``. Both write
JSON, and the script checks that their intervals agree to 1e-9 (the oracle tests hold them to 1e-12 in-process).

    python benchmarks/estimate_speed.py [--queries 1000,5000,20000,100000] [--rank-queries 5000] [--rounds 2]
                                        [--baseline d3fdccc] [--skip-baseline-above 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _hybrid_world import write_world  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def baseline_src(rev: str, into: Path) -> Path:
    """The ``src`` tree of ``rev``, extracted under ``into``."""
    archive = into / "base.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), rev, "src"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "base", filter="data")
    return into / "base" / "src"


def timed(cmd: list[str], src: Path, cwd: Path, timeout: float | None = None) -> dict | None:
    """Wall, CPU seconds and peak RSS (MiB) of one niced ``relgrade`` process with ``src`` first on PYTHONPATH;
    None when it outlives ``timeout`` seconds (it is then stopped)."""
    env = dict(os.environ, PYTHONPATH=str(src))
    start = time.perf_counter()
    proc = subprocess.Popen(["nice", "-n", "10", sys.executable, "-c",
                             "import sys; from relgrade.cli import main; sys.exit(main())", *cmd],
                            cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if timeout is not None and time.perf_counter() - start > timeout:
            proc.kill()
            os.wait4(proc.pid, 0)
            return None
        time.sleep(0.05)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"relgrade {cmd[0]} failed under {src} (exit {os.waitstatus_to_exitcode(status)})")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024}


def intervals(path: Path) -> list[float]:
    """Every estimate and interval end of an ``estimate`` or ``rank-systems`` JSON, in a fixed order."""
    data = json.loads(path.read_text())
    out: list[float] = []
    if "aggregate" in data:
        for name in sorted(data["aggregate"]):
            e = data["aggregate"][name]
            out += [e["ppi"]["value"], *e["ppi"]["ci95"], e["human_only"]["value"], *e["human_only"]["ci95"]]
    else:
        for name in sorted(data["metrics"]):  # rank-systems: one ranking per metric
            m = data["metrics"][name]
            out += [v for s in ("human", "judge", "ppi") for v in m["values"][s].values() if v is not None]
            out += [x for p in m["pairs"] for s in ("human", "judge", "ppi") for x in (p[s]["ci95"] or [])]
            out += [p[s]["p_value"] for p in m["pairs"] for s in ("human", "judge", "ppi") if p[s]["p_value"] is not None]
            out += [x for t in m["kendall_tau"].values() for x in [t["tau"], *(t["ci95"] or [])] if x is not None]
            out += list(m["own_estimates"].values())
    return [float(x) for x in out]


def race(name: str, cmd: list[str], folder: Path, base: Path | None, rounds: int) -> dict:
    best: dict[str, dict] = {}  # the round of least CPU time (wall time follows the machine's other load)
    for _ in range(rounds):
        for label, src in (("new", ROOT / "src"), ("today", base)):
            if src is None:
                continue
            out = folder / f"{name}.{label}.json"
            got = timed([*cmd, "--json", str(out)], src, folder)
            if label not in best or got["cpu"] < best[label]["cpu"]:
                best[label] = got
    if "today" in best:
        a, b = intervals(folder / f"{name}.new.json"), intervals(folder / f"{name}.today.json")
        gap = max(abs(x - y) for x, y in zip(a, b)) if a else 0.0
        if len(a) != len(b) or gap > 1e-9:
            raise SystemExit(f"{name}: the two versions disagree (largest gap {gap:g})")
        best["gap"] = gap
    return best


def show(name: str, best: dict) -> None:
    new, today = best["new"], best.get("today")
    line = f"{name:<34} new {new['wall']:6.2f} s wall {new['cpu']:6.2f} s cpu {new['rss']:6.0f} MiB"
    if today:
        line += (f" | before {today['wall']:6.2f} s wall {today['cpu']:6.2f} s cpu {today['rss']:6.0f} MiB | new/before "
                 f"wall {new['wall'] / today['wall']:.2f}x, cpu {new['cpu'] / today['cpu']:.2f}x, peak "
                 f"{new['rss'] / today['rss']:.2f}x; largest interval gap {best['gap']:.1e}")
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", default="1000,5000,20000,100000")
    parser.add_argument("--labeled", type=int, default=500)
    parser.add_argument("--rank-queries", type=int, default=5000)
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline", default="d3fdccc")
    parser.add_argument("--skip-baseline-above", type=int, default=20000,
                        help="time only the new code above this many queries (the old code takes minutes there)")
    parser.add_argument("--what", default="estimate,rank", help="estimate, rank or both")
    parser.add_argument("--judge-format", choices=("details", "qrels"), default="details",
                        help="the judge's labels as its details JSONL (expected grades: a feature) or TREC qrels")
    args = parser.parse_args()
    judge = "judge" if args.judge_format == "details" else "qrels"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base = baseline_src(args.baseline, tmp) if args.baseline else None
        print(f"python {sys.version.split()[0]}, baseline {args.baseline}, judge as {args.judge_format}, {args.rounds} "
              f"rounds (least CPU kept), niced; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
              flush=True)
        if "estimate" in args.what:
            for q in (int(x) for x in args.queries.split(",")):
                folder = tmp / f"est{q}"
                paths = write_world(folder, q, labeled=min(args.labeled, q // 2))
                cmd = ["estimate", "--run", str(paths["run0"]), "--human", str(paths["human"]),
                       "--judge", str(paths[judge])]
                use = base if q <= args.skip_baseline_above else None
                show(f"estimate {q:,} queries x 20 pairs", race(f"est{q}", cmd, folder, use, args.rounds))
        if "rank" in args.what:
            q = args.rank_queries
            folder = tmp / "rank"
            paths = write_world(folder, q, labeled=min(args.labeled, q // 2), systems=args.systems)
            cmd = ["rank-systems", *[x for s in range(args.systems) for x in ("--run", str(paths[f"run{s}"]))],
                   "--human", str(paths["human"]), "--judge", str(paths[judge])]
            show(f"rank-systems {args.systems} x {q:,} queries", race("rank", cmd, folder, base, args.rounds))


if __name__ == "__main__":
    main()
