"""Metrics speed: relgrade vs ir_measures (pytrec_eval, C) vs ranx (numba), whole processes from files and in-process,
on the same data, in one run.

Data (generated, no download): ``--queries`` queries (100k) x ``--depth`` retrieved docs (100; 10M run lines),
20 judged docs per query (16 of them retrieved), grades 0-3; four metrics: recall@5 (Success@5, hit_rate@5),
precision@10, MRR, nDCG@10. Scores are distinct within a query even in float32, so no library's tie-breaking can
differ; values are cross-checked between the libraries.

Two modes, each measurement in its own process (so its peak RSS is its own), best of ``--repeat`` rounds in which
the libraries take turns:

* ``files``, the whole process a user runs, from TREC files (the run lists each query's docs best first, as
  retrievers write runs); start-up, imports and (for ranx) numba's compilation included:

      relgrade evaluate --run run.txt --qrels qrels.txt --metric recall@5,precision@10,mrr,ndcg@10 --no-answer zero --json r.json
      ir_measures qrels.txt run.txt "Success@5 P@10 RR nDCG@10"
      python -c "ranx: Qrels.from_file, Run.from_file, evaluate"

  plus relgrade on the same run with its lines shuffled (trec_eval's order then has to be computed);
* ``memory``, in-process from the dict-of-dicts ``{qid: {doc: score}}`` all three accept (docs in random order),
  the three libraries in one process on one copy of the data, taking turns; relgrade also from its own prebuilt
  ``Qrels``/``Run``, ranx from its prebuilt ``Qrels``/``Run`` with numba warm.
  relgrade computes no interval here (``ci=False``): the peers compute none. Each library is imported and run once
  on a small input before it is timed (numba compiles ranx's functions then).

    python benchmarks/metrics_speed.py [--queries 100000] [--depth 100] [--repeat 2] [--mode both|files|memory]
                                       [--libs relgrade,ir_measures,ranx]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

METRICS = ["recall@5", "precision@10", "mrr", "ndcg@10"]
IRM = "Success@5 P@10 RR nDCG@10"
IRM_NAMES = {"Success@5": "recall@5", "P@10": "precision@10", "RR": "mrr", "nDCG@10": "ndcg@10"}
RANX = ["hit_rate@5", "precision@10", "mrr", "ndcg@10"]


def make_data(n_queries: int, depth: int, seed: int = 0):
    """``(qrels, run, order)``: dicts, and per query its docs best first (scores distinct in float32)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    frac = np.round(rng.random((n_queries, depth)) * 0.5, 6)
    grades = rng.integers(0, 4, size=(n_queries, 20))
    qrels, run, order = {}, {}, {}
    for q in range(n_queries):
        ids = [f"d{d}" for d in rng.choice(10 * depth, size=depth, replace=False).tolist()]
        n = len(ids)
        scores = [n - i + f for i, f in enumerate(frac[q, :n].tolist())]  # distinct integer parts: no tie
        qid = f"q{q}"
        order[qid] = list(zip(ids, scores))
        shuffled = rng.permutation(n)
        run[qid] = {ids[i]: scores[i] for i in shuffled.tolist()}
        judged = [ids[i] for i in rng.choice(n, size=min(16, n), replace=False).tolist()]
        judged += [f"u{q}_{j}" for j in range(20 - len(judged))]  # judged, never retrieved
        qrels[qid] = dict(zip(judged, grades[q].tolist()))
    return qrels, run, order


def write_files(folder: Path, n_queries: int, depth: int) -> None:
    import random

    qrels, _, order = make_data(n_queries, depth)
    paths = {"qrels": folder / "qrels.txt", "run": folder / "run.txt", "shuffled": folder / "run_shuffled.txt"}
    with open(paths["qrels"], "w") as fh:
        for q, docs in qrels.items():
            fh.write("".join(f"{q} 0 {d} {g}\n" for d, g in docs.items()))
    lines = []
    with open(paths["run"], "w") as fh:
        for q, docs in order.items():
            block = [f"{q} Q0 {d} {i + 1} {s:.6f} sys\n" for i, (d, s) in enumerate(docs)]
            lines += block
            fh.write("".join(block))
    random.Random(0).shuffle(lines)
    paths["shuffled"].write_text("".join(lines))


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    """``(seconds, peak RSS in MB, stdout)`` of one process."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        err = proc.stderr.read().decode()
        proc.stderr.close()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise SystemExit(f"{cmd[:3]} failed ({proc.returncode}): {err[-2000:]}")
        out.seek(0)
        return seconds, usage.ru_maxrss / 1024, out.read().decode()


RANX_SCRIPT = """
import json, sys
from ranx import Qrels, Run, evaluate
values = evaluate(Qrels.from_file(sys.argv[1], kind="trec"), Run.from_file(sys.argv[2], kind="trec"), {metrics})
print(json.dumps(values))
"""


def files_mode(folder: Path, repeat: int) -> list[dict]:
    # the files are written by a child process: a process started by this one inherits its peak RSS (Linux keeps
    # ru_maxrss across fork and exec), so this one stays small
    subprocess.run([sys.executable, __file__, "--write", str(folder), "--queries", str(ARGS.queries),
                    "--depth", str(ARGS.depth)], check=True)
    paths = {name: str(folder / f"{name}.txt") for name in ("qrels", "run", "run_shuffled")}
    ours = [sys.executable, "-m", "relgrade.cli", "evaluate", "--qrels", paths["qrels"], "--metric", ",".join(METRICS),
            "--no-answer", "zero", "--json"]
    commands = {
        "relgrade": ours[:4] + ["--run", paths["run"]] + ours[4:] + [str(folder / "r.json")],
        "relgrade, shuffled run": ours[:4] + ["--run", paths["run_shuffled"]] + ours[4:] + [str(folder / "rs.json")],
        "ir_measures": [sys.executable, "-m", "ir_measures", paths["qrels"], paths["run"], IRM],
        "ranx": [sys.executable, "-c", RANX_SCRIPT.format(metrics=RANX), paths["qrels"], paths["run"]],
    }
    commands = {name: cmd for name, cmd in commands.items() if name.split(",")[0] in ARGS.libs}
    best: dict[str, tuple[float, float, str]] = {}
    for _ in range(repeat):  # the libraries take turns, so a busy minute on the shared machine hits them alike
        for name, cmd in commands.items():
            seconds, rss, out = timed(cmd, folder)
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, rss, out)
    results = []
    for name in commands:
        seconds, rss, out = best[name]
        if name.startswith("relgrade"):
            report = json.loads((folder / ("r.json" if name == "relgrade" else "rs.json")).read_text())
            values = {m: report["aggregate"][m]["value"] for m in METRICS}
        elif name == "ir_measures":
            values = {IRM_NAMES[k]: float(v) for k, v in (line.split("\t") for line in out.strip().splitlines())}
            # (ir_measures prints 4 decimals: its values agree to 5e-5 here, to 1e-15 in the in-process mode)
        else:
            values = dict(zip(METRICS, json.loads(out.strip().splitlines()[-1]).values()))
        results.append({"lib": name, "seconds": seconds, "peak_mb": rss, "values": values})
    return results


def _timers(lib: str, qrels: dict, run: dict):
    """``(timed call from the dicts, timed call from prebuilt objects or None)`` of ``lib``, warmed up: each
    returns ``(seconds, values)`` and builds its prebuilt objects outside the timing."""
    small_q, small_r, _ = make_data(50, 10, seed=1)
    if lib == "relgrade":
        from relgrade import Qrels, Run, evaluate

        evaluate(small_q, small_r, METRICS, ci=False)

        def prebuilt():
            own_q, own_r = Qrels(qrels), Run.from_dict(run)
            return _time(lambda: evaluate(own_q, own_r, METRICS, ci=False))[0], None

        def from_dicts():
            seconds, report = _time(lambda: evaluate(qrels, run, METRICS, ci=False))
            return seconds, {k: v.value for k, v in report.aggregate.items()}

        return from_dicts, prebuilt
    if lib == "ranx":
        from ranx import Qrels, Run, evaluate

        evaluate(Qrels(small_q), Run(small_r), RANX)  # numba compiles

        def prebuilt():
            rq, rr = Qrels(qrels), Run(run)
            return _time(lambda: evaluate(rq, rr, RANX))[0], None

        def from_dicts_ranx():
            seconds, values = _time(lambda: evaluate(Qrels(qrels), Run(run), RANX))
            return seconds, dict(zip(METRICS, values.values()))

        return from_dicts_ranx, prebuilt
    import ir_measures

    measures = [ir_measures.parse_measure(m) for m in IRM.split()]
    ir_measures.calc_aggregate(measures, small_q, small_r)

    def from_dicts():
        seconds, agg = _time(lambda: ir_measures.calc_aggregate(measures, qrels, run))
        return seconds, {IRM_NAMES[str(m)]: agg[m] for m in measures}

    return from_dicts, None


def _time(call):
    t = time.perf_counter()
    value = call()
    return time.perf_counter() - t, value


def worker(libs: list[str], n_queries: int, depth: int, repeat: int) -> list[dict]:
    """Every library in one process on one copy of the data, in turns, best of ``repeat``: a busy minute on the
    shared machine cannot favour one of them."""
    qrels, run, _ = make_data(n_queries, depth)
    timers = {lib: _timers(lib, qrels, run) for lib in libs}
    best: dict[str, dict] = {lib: {"lib": lib} for lib in libs}
    for _ in range(repeat):
        for lib, (from_dicts, prebuilt) in timers.items():
            seconds, values = from_dicts()
            out = best[lib]
            out["seconds"], out["values"] = min(seconds, out.get("seconds", seconds)), values
            if prebuilt is not None:
                seconds = prebuilt()[0]
                out["seconds_prebuilt"] = min(seconds, out.get("seconds_prebuilt", seconds))
    return [best[lib] for lib in libs]


def memory_mode() -> list[dict]:
    libs = [lib for lib in ("relgrade", "ir_measures", "ranx") if lib in ARGS.libs]
    proc = subprocess.run([sys.executable, __file__, "--worker", ",".join(libs), "--queries", str(ARGS.queries),
                           "--depth", str(ARGS.depth), "--repeat", str(ARGS.repeat)],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def show(title: str, results: list[dict], base: str = "relgrade") -> None:
    ours = next(r for r in results if r["lib"] == base)
    print(title)
    print(f"  {'':<24}{'seconds':>9}{'relgrade / this':>17}" + (f"{'peak RSS MB':>13}" if "peak_mb" in ours else ""))
    for r in results:
        rss = f"{r['peak_mb']:>13.0f}" if "peak_mb" in r else ""
        print(f"  {r['lib']:<24}{r['seconds']:>9.2f}{ours['seconds'] / r['seconds']:>16.2f}x{rss}")
        if "seconds_prebuilt" in r:
            what = "own Qrels/Run objects" if r["lib"] == "relgrade" else "prebuilt Qrels/Run, numba warm"
            print(f"  {'  ' + r['lib'] + ' prebuilt':<24}{r['seconds_prebuilt']:>9.2f}"
                  f"{ours.get('seconds_prebuilt', ours['seconds']) / r['seconds_prebuilt']:>16.2f}x   ({what})")
    diffs = {r["lib"]: max(abs(r["values"][m] - ours["values"][m]) for m in METRICS) for r in results if r is not ours}
    print("  max |value - relgrade's| over the four metrics: " + ", ".join(f"{k} {v:.1e}" for k, v in diffs.items()))


def main() -> None:
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--mode", choices=("both", "files", "memory"), default="both")
    parser.add_argument("--libs", default="relgrade,ir_measures,ranx", type=lambda text: text.split(","),
                        help="the libraries to run (comma-separated; relgrade always)")
    parser.add_argument("--worker")
    parser.add_argument("--write")
    ARGS = parser.parse_args()
    ARGS.libs = ["relgrade", *ARGS.libs]
    if ARGS.write:
        write_files(Path(ARGS.write), ARGS.queries, ARGS.depth)
        return
    if ARGS.worker:
        print(json.dumps(worker(ARGS.worker.split(","), ARGS.queries, ARGS.depth, ARGS.repeat)))
        return
    print(f"{ARGS.queries} queries x {ARGS.depth} retrieved docs, 20 judged per query; metrics "
          f"{' '.join(METRICS)}; best of {ARGS.repeat}")
    if ARGS.mode in ("both", "files"):
        with tempfile.TemporaryDirectory() as tmp:
            show("whole process from TREC files:", files_mode(Path(tmp), ARGS.repeat))
    if ARGS.mode in ("both", "memory"):
        show("in-process from a dict-of-dicts (relgrade: ci=False):", memory_mode())


ARGS: argparse.Namespace

if __name__ == "__main__":
    main()
