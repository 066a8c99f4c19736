"""Calibration on TREC DL 2020 passage (real human labels, 0-3): agreement with CIs, mapping before/after.

Judges:
- synthetic judges of known noise derived from the human labels (always; so this runs anywhere the
  data is): ``lenient`` (+1 grade half the time), ``noisy`` (right 50%, else uniform), ``off-by-one``
  (±1 40% of the time), ``pure-noise`` (uniform, true kappa 0);
- ``--judge-qrels PATH`` (repeatable): any judge's labels (qrels or relgrade judge details JSONL);
- ``--local N``: the embedded local judge (``relgrade.judge.judge_pairs``, ``local/...`` model) on a
  stratified sample of N pairs (needs the 'local' extra; slow on CPU).

For each judge it prints the agreement statistics with 95% query-bootstrap CIs, the guarded mapping
(held-out kappa before/after, 5-fold by query), and the mapping experiment of the issue: a naive
isotonic remap fitted on 200 labeled pairs, applied to every other pair, against the guarded choice.
It also times the vectorised bootstrap against calling scikit-learn once per replicate.

    python benchmarks/calibration_trec_dl.py [--data ../shared/data/trec-dl-2020-passage]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from relgrade.calibration import agreement, fit_mapping, read_judge
from relgrade.calibration._mapping import _nearest
from relgrade.io import read_qrels

ROOT = Path(__file__).resolve().parents[1]


def synthetic(human, seed=0):
    rng = np.random.default_rng(seed)
    out = {"lenient": {}, "noisy": {}, "off-by-one": {}, "pure-noise": {}}
    for q, docs in human.items():
        for d, h in docs.items():
            out["lenient"].setdefault(q, {})[d] = int(min(3, h + (rng.random() < 0.5)))
            out["noisy"].setdefault(q, {})[d] = int(h if rng.random() < 0.5 else rng.integers(0, 4))
            step = rng.choice([-1, 1]) if rng.random() < 0.4 else 0
            out["off-by-one"].setdefault(q, {})[d] = int(np.clip(h + step, 0, 3))
            out["pure-noise"].setdefault(q, {})[d] = int(rng.integers(0, 4))
    return out


def fmt(a):
    if a is None or not np.isfinite(a.value):
        return "undefined"
    return f"{a.value:6.3f} [{a.ci95[0]:6.3f}, {a.ci95[1]:6.3f}]" if a.ci95 else f"{a.value:6.3f} [no CI]"


def small_sample_remap(judge, human, n_labeled=200, reps=20, seed=0):
    """Fit on ``n_labeled`` random pairs, evaluate on all other pairs: naive remap vs guarded choice."""
    from sklearn.isotonic import IsotonicRegression
    from sklearn.metrics import cohen_kappa_score

    keys = [(q, d) for q in sorted(human) for d in sorted(human[q]) if d in judge.get(q, {})]
    h = np.array([human[q][d] for q, d in keys])
    j = np.array([judge[q][d] for q, d in keys])
    rng = np.random.default_rng(seed)
    naive, guarded, adopted = [], [], 0
    for _ in range(reps):
        idx = rng.choice(len(keys), n_labeled, replace=False)
        rest = np.setdiff1d(np.arange(len(keys)), idx)
        base = cohen_kappa_score(h[rest], j[rest], labels=[0, 1, 2, 3])
        iso = IsotonicRegression(y_min=0, y_max=3, out_of_bounds="clip").fit(j[idx], h[idx])
        mapped = _nearest(iso.predict(j[rest]), (0, 1, 2, 3))
        naive.append(cohen_kappa_score(h[rest], mapped, labels=[0, 1, 2, 3]) - base)
        sub_j, sub_h = {}, {}
        for i in idx:
            q, d = keys[i]
            sub_j.setdefault(q, {})[d] = int(j[i])
            sub_h.setdefault(q, {})[d] = int(h[i])
        m = fit_mapping(sub_j, sub_h, n_boot=300, seed=int(rng.integers(1 << 31)))
        adopted += m.adopted
        chosen = np.array([m.apply(g) for g in j[rest]])
        guarded.append(cohen_kappa_score(h[rest], chosen, labels=[0, 1, 2, 3]) - base)
    return float(np.mean(naive)), float(np.mean(guarded)), adopted, reps


def timing(judge, human, n_boot=200):
    """Vectorised bootstrap kappa vs one sklearn call per replicate, same resamples."""
    from sklearn.metrics import cohen_kappa_score

    from relgrade.calibration import _stats as S
    from relgrade.calibration._pairs import align

    pairs = align(judge, human, (0, 1, 2, 3))
    nq = len(pairs.queries)
    w = S.query_weights(nq, n_boot, np.random.default_rng(0))
    t0 = time.perf_counter()
    per_q = S.confusions(pairs.human, pairs.judge, pairs.group, nq, 4)
    fast = S.kappa(S.resample(per_q, w))
    t1 = time.perf_counter()
    members = [np.flatnonzero(pairs.group == g) for g in range(nq)]
    slow = []
    for b in range(n_boot):
        take = np.concatenate([members[g] for g in range(nq) for _ in range(int(w[b, g]))])
        slow.append(cohen_kappa_score(pairs.human[take], pairs.judge[take], labels=[0, 1, 2, 3]))
    t2 = time.perf_counter()
    assert np.allclose(fast, slow)
    return t1 - t0, t2 - t1


def local_judge(data: Path, human, n: int, seed: int):
    from relgrade.judge import DEFAULT_MODEL, judge_pairs
    from relgrade.judge._pool import Pair

    rows = [json.loads(line) for line in (data / "pairs.jsonl").read_text().splitlines() if line.strip()]
    rng = np.random.default_rng(seed)
    by_grade = {}
    for r in rows:
        by_grade.setdefault(int(r["label"]), []).append(r)
    chosen = []
    for g in sorted(by_grade):
        pool = by_grade[g]
        chosen += [pool[i] for i in rng.choice(len(pool), min(len(pool), n // 4), replace=False)]
    pairs = [Pair(str(r["qid"]), str(r["pid"]), r["query"], r["passage"]) for r in chosen]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        result = judge_pairs(pairs, model=DEFAULT_MODEL, store=Path(tmp) / "j.sqlite", handle_sigint=False)
        elapsed = time.perf_counter() - t0
    labels = result.qrels()
    expected = {}
    for jd in result.judgments if hasattr(result, "judgments") else []:
        if jd.expected_grade is not None:
            expected.setdefault(jd.query_id, {})[jd.doc_id] = float(jd.expected_grade)
    return DEFAULT_MODEL, labels, expected or None, elapsed, len(pairs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "trec-dl-2020-passage"))
    ap.add_argument("--judge-qrels", action="append", default=[], help="judge labels file (repeatable)")
    ap.add_argument("--local", type=int, default=0, help="judge N stratified pairs with the embedded local model")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    data = Path(args.data)
    if not (data / "qrels.txt").exists():
        print(f"no TREC DL data at {data}; pass --data", file=sys.stderr)
        return 2
    human = read_qrels(data / "qrels.txt").to_dict()
    n = sum(len(d) for d in human.values())
    print(f"TREC DL 2020 passage: {n} human-labeled pairs, {len(human)} queries; n_boot={args.n_boot}, seed={args.seed}")
    judges = [(name, labels, None, None) for name, labels in synthetic(human, args.seed).items()]
    for path in args.judge_qrels:
        jl = read_judge(path)
        judges.append((jl.name, jl.labels, jl.expected, jl.model))
    if args.local:
        model, labels, expected, elapsed, n_pairs = local_judge(data, human, args.local, args.seed)
        print(f"local judge {model}: {n_pairs} pairs judged in {elapsed:.1f}s")
        judges.append((model, labels, expected, model))

    for name, labels, expected, model in judges:
        t0 = time.perf_counter()
        r = agreement(labels, human, expected=expected, n_boot=args.n_boot, seed=args.seed, name=name, model=model)
        m = fit_mapping(labels, human, expected=expected, n_boot=args.n_boot, seed=args.seed)
        dt = time.perf_counter() - t0
        print(f"\n== {name}: {r.n_pairs} pairs, {r.n_queries} queries ({dt:.2f}s for statistics + mapping)")
        print(f"  verdict: {r.verdict.text}")
        for label in ("kappa", "kappa_linear", "kappa_quadratic", "binary_kappa", "krippendorff_alpha", "accuracy",
                      "leniency"):
            print(f"  {label:<20} {fmt(getattr(r, label))}")
        for label, value in r.continuous.items():
            print(f"  {label:<20} {fmt(value)}")
        print(f"  held-out kappa before {fmt(m.kappa_before)}  after {fmt(m.kappa_after)}  -> "
              f"{'adopted' if m.adopted else 'identity kept'}")
        if r.n_pairs >= 400:
            naive, guarded, adopted, reps = small_sample_remap(labels, human, seed=args.seed)
            print(f"  fitted on 200 labels, kappa change on the other pairs (mean of {reps}): naive remap "
                  f"{naive:+.4f}, guarded {guarded:+.4f} (mapping adopted {adopted}/{reps})")

    fast, slow = timing(judges[1][1], human)
    print(f"\nbootstrap of kappa, 200 resamples of {len(human)} queries ({n} pairs): vectorised {fast * 1000:.1f} ms, "
          f"sklearn per replicate {slow * 1000:.0f} ms, ratio {slow / fast:.0f}x (same values)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
