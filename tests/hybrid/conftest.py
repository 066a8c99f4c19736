"""A small synthetic world: 40 queries, 8 docs each, humans on 12 queries, a noisy judge on all."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

Q, D, N_HUMAN = 40, 8, 12


def _world(seed: int = 5):
    rng = np.random.default_rng(seed)
    truth, judge, texts, runs = {}, {}, {}, {"a": {}, "b": {}}
    for i in range(Q):
        q = f"q{i}"
        docs = [f"{q}d{j}" for j in range(D)]
        g = rng.choice(4, size=D, p=[0.5, 0.2, 0.2, 0.1])
        noisy = np.where(rng.random(D) < 0.7, g, rng.integers(0, 4, D))
        truth[q] = {d: int(x) for d, x in zip(docs, g)}
        judge[q] = {d: int(x) for d, x in zip(docs, noisy)}
        texts.update({d: f"passage {d} about topic {i}" for d in docs})
        runs["a"][q] = {d: float(x) + 0.5 * float(r) for d, x, r in zip(docs, g, rng.random(D))}  # good system
        runs["b"][q] = {d: float(x) for d, x in zip(docs, rng.random(D))}
    human = {q: truth[q] for q in list(truth)[:N_HUMAN]}
    return truth, human, judge, texts, runs


@pytest.fixture()
def world():
    return _world()


@pytest.fixture()
def files(tmp_path, world):
    truth, human, judge, texts, runs = world
    paths = {}
    with open(tmp_path / "human.csv", "w") as fh:
        # as the label page exports them: with the SHA-256 of the text the annotator saw (issue 16)
        fh.write("query_id,doc_id,grade,annotator,time,text_sha256\n")
        for q, docs in human.items():
            for d, g in docs.items():
                sha = hashlib.sha256(texts[d].encode("utf-8")).hexdigest()
                fh.write(f"{q},{d},{g},alice,2024-05-01T12:00:00+00:00,{sha}\n")
    paths["human"] = tmp_path / "human.csv"
    with open(tmp_path / "judge.tsv.details.jsonl", "w") as fh:
        for q, docs in judge.items():
            for d, g in docs.items():
                fh.write(json.dumps({"query_id": q, "doc_id": d, "query": f"query {q}", "text": texts[d], "grade": g,
                                     "expected_grade": float(g), "model": "fake/judge", "prompt_hash": "p123"}) + "\n")
        fh.write(json.dumps({"query_id": "q0", "doc_id": "extra", "query": "x", "text": "y", "grade": None,
                             "model": "fake/judge", "prompt_hash": "p123", "status": "unparsed"}) + "\n")
    paths["judge"] = tmp_path / "judge.tsv.details.jsonl"
    for name, run in runs.items():
        with open(tmp_path / f"run_{name}.jsonl", "w") as fh:
            for q, scored in run.items():
                ranked = sorted(scored.items(), key=lambda x: -x[1])  # a JSONL run's list order is its rank order
                results = [{"doc_id": d, "text": texts[d], "score": s} for d, s in ranked]
                fh.write(json.dumps({"query_id": q, "query": f"query {q}", "results": results}) + "\n")
        paths[f"run_{name}"] = tmp_path / f"run_{name}.jsonl"
    with open(tmp_path / "corpus.jsonl", "w") as fh:
        for d, t in texts.items():
            fh.write(json.dumps({"doc_id": d, "text": t}) + "\n")
    paths["corpus"] = tmp_path / "corpus.jsonl"
    paths["dir"] = tmp_path
    return paths
