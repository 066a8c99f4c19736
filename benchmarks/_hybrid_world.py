"""A generated PPI world at a big team's scale, for ``benchmarks/estimate_speed.py`` (no download).

``queries`` judged queries, each with ``depth`` retrieved documents per system (``systems`` runs over one shared
candidate list of ``depth + 5`` documents, each ranking them by its own noisy score), every retrieved pair graded
0-3 by one LLM-like judge (right 70% of the time, else a random grade; an expected grade near it, as the judge's
details give one) and, on ``labeled`` queries (the first ones), by humans. Scores carry ties on purpose (rounded
to 0.1), so trec_eval's tie-break is exercised.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def make_world(queries: int, depth: int = 20, labeled: int = 500, systems: int = 1, seed: int = 0):
    """``(human, judge, expected, runs)``: ``{q: {d: grade}}`` dicts, expected grades, ``[{q: {d: score}}]``."""
    rng = np.random.default_rng(seed)
    pool = depth + 5
    truth = rng.choice(4, size=(queries, pool), p=[0.5, 0.2, 0.2, 0.1])
    wrong = rng.random((queries, pool)) >= 0.7
    graded = np.where(wrong, rng.integers(0, 4, (queries, pool)), truth)
    expected = np.clip(graded + rng.normal(0, 0.4, (queries, pool)), 0, 3).round(3)
    noise = [rng.normal(0, 1.0 + s, (queries, pool)) for s in range(systems)]
    human, judge, exp, runs = {}, {}, {}, [{} for _ in range(systems)]
    docs = [f"d{j}" for j in range(pool)]
    for i in range(queries):
        q = f"q{i}"
        retrieved = set()
        for s in range(systems):
            score = np.round(truth[i] + noise[s][i], 1)
            top = np.argsort(-score, kind="stable")[:depth]
            runs[s][q] = {f"{q}{docs[j]}": float(score[j]) for j in top}
            retrieved.update(int(j) for j in top)
        keep = sorted(retrieved)
        judge[q] = {f"{q}{docs[j]}": int(graded[i, j]) for j in keep}
        exp[q] = {f"{q}{docs[j]}": float(expected[i, j]) for j in keep}
        if i < labeled:
            human[q] = {f"{q}{docs[j]}": int(truth[i, j]) for j in keep}
    return human, judge, exp, runs


def write_world(folder: Path, queries: int, depth: int = 20, labeled: int = 500, systems: int = 1,
                seed: int = 0) -> dict[str, Path]:
    """The world as the files ``relgrade estimate`` / ``rank-systems`` read: human CSV, judge details JSONL (with
    expected grades) and the same grades as TREC qrels, TREC runs."""
    human, judge, exp, runs = make_world(queries, depth, labeled, systems, seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"human": folder / "human.csv", "judge": folder / "judge.details.jsonl", "qrels": folder / "judge.qrels"}
    with open(paths["human"], "w") as fh:
        fh.write("query_id,doc_id,grade\n")
        for q, ds in human.items():
            fh.writelines(f"{q},{d},{g}\n" for d, g in ds.items())
    with open(paths["judge"], "w") as fh:
        for q, ds in judge.items():
            fh.writelines(json.dumps({"query_id": q, "doc_id": d, "grade": g, "expected_grade": exp[q][d],
                                      "model": "fake/judge", "prompt_hash": "p1"}) + "\n" for d, g in ds.items())
    with open(paths["qrels"], "w") as fh:  # the same grades as TREC qrels (no expected grades)
        for q, ds in judge.items():
            fh.writelines(f"{q} 0 {d} {g}\n" for d, g in ds.items())
    for s, run in enumerate(runs):
        paths[f"run{s}"] = folder / f"run{s}.txt"
        with open(paths[f"run{s}"], "w") as fh:
            for q, scored in run.items():
                ranked = sorted(scored.items(), key=lambda x: -x[1])
                fh.writelines(f"{q} Q0 {d} {r + 1} {sc} sys{s}\n" for r, (d, sc) in enumerate(ranked))
    return paths
