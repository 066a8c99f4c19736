"""What the columnar evaluate computes equals its definitions written out one row at a time (issue 28): trec_eval's
order, the labels' content hash, the failed-query rows, and the JSON report."""

from __future__ import annotations

import hashlib
import json
import math
import random

import numpy as np
import pytest

from relgrade import evaluate
from relgrade.cli import main
from relgrade.io import Qrels, Run
from relgrade.metrics._json import dumps_report
from relgrade.metrics._settings import labels_fingerprint

ALPHABET = ["a", "b", "z", "A", "0", "é", "東", "ß", "~", "-", "\x7f", " "]


def _random_ids(rng: random.Random, n: int, low: bool = False) -> list[str]:
    letters = ALPHABET + (["\t", "\x01"] if low else [])
    return list(dict.fromkeys("".join(rng.choice(letters) for _ in range(rng.randint(1, 4))).strip() or "x"
                              for _ in range(n)))


def _random_world(seed: int, low: bool = False):
    rng = random.Random(seed)
    queries, docs = _random_ids(rng, 30, low), _random_ids(rng, 60, low)
    run = {q: {d: rng.choice([0.5, 1.0, 0.30000000000000004, 0.3, -0.0, 0.0, rng.random()])
               for d in rng.sample(docs, rng.randint(1, 25))} for q in queries}
    qrels = {q: {d: rng.randint(-1, 4) for d in rng.sample(docs, rng.randint(1, 12))} for q in queries if rng.random() < .9}
    return qrels, run


@pytest.mark.parametrize("seed", range(20))
def test_ranked_is_trec_evals_order_in_python(seed):
    _, run = _random_world(seed)
    items = list(run.items())
    random.Random(seed).shuffle(items)  # queries and docs in any order
    shuffled = {q: dict(random.Random(seed + 1).sample(list(docs.items()), len(docs))) for q, docs in items}
    expected = {q: [d for _, d in sorted(((float(np.float32(s) + np.float32(0)), d) for d, s in docs.items()),
                                         reverse=True)] for q, docs in shuffled.items()}
    assert Run.from_dict(shuffled).ranked() == expected
    assert Run.from_dict(shuffled).ranked(3) == {q: docs[:3] for q, docs in expected.items()}


@pytest.mark.parametrize("seed,low", [(s, s % 2 == 1) for s in range(12)])
def test_labels_fingerprint_is_the_hash_of_the_sorted_lines(seed, low):
    qrels, _ = _random_world(seed, low)
    made = Qrels(qrels, topics=["extra topic"], forbidden={"q": ["x", "y"]})
    lines = sorted([f"L\t{q}\t{d}\t{g}" for q, docs in made.labels.items() for d, g in docs.items()]
                   + ["F\tq\tx", "F\tq\ty"] + [f"T\t{q}" for q in made.topics])
    assert labels_fingerprint(made)["sha256"] == hashlib.sha256("".join(f"{x}\n" for x in lines).encode()).hexdigest()


@pytest.mark.parametrize("seed", range(10))
def test_failures_are_the_relevant_docs_by_grade_then_id_and_the_top_k(seed):
    qrels, run = _random_world(seed)
    report = evaluate(qrels, run, ["recall@3"], no_answer="zero", ci=False, failure_k=3)
    ranked = Run.from_dict(run).ranked()
    expected = []
    for q in Qrels(qrels).topics:
        relevant = sorted((d for d, g in qrels[q].items() if g >= 1), key=lambda d: (-qrels[q][d], d))
        top = ranked.get(q, [])[:3]
        if relevant and not set(top) & set(relevant):
            expected.append({"query_id": q, "query": None, "expected": relevant, "got": top})
    assert report.failures == expected


def test_report_json_equals_json_dumps():
    data = {"aggregate": {"ndcg@10": {"value": 0.5, "ci95": [0.25, 0.75], "n_queries": 2}},
            "per_query": {'q"{1}': {"a": 1.0, "b": 1e-07}, "déjà\n": {"a": 0.0, "b": 1 / 3}},
            "mixed": {"x": {"a": 1, "b": 2.5}, "y": {"a": 2}}, "nan": {"x": {"a": float("nan")}},
            "failures": [{"query_id": "q", "expected": ["d\u2028"], "got": []}], "empty": [], "none": None,
            "settings": {"labels": {"sha256": "ab", "path": None}}}
    text = dumps_report(data)
    assert text.endswith("}\n") and "\n    \"déjà\\n\": {\"a\": 0.0, \"b\": 0.3333333333333333}" in text
    back, reference = json.loads(text), json.loads(json.dumps(data))
    assert math.isnan(back.pop("nan")["x"]["a"]) and math.isnan(reference.pop("nan")["x"]["a"])
    assert back == reference


def test_cli_json_report_equals_the_report(tmp_path):
    qrels, run = _random_world(3)
    (tmp_path / "q.txt").write_text("".join(f"q{i} 0 d{j} {g}\n" for i, (q, docs) in enumerate(qrels.items())
                                            for j, g in enumerate(docs.values())))
    (tmp_path / "r.txt").write_text("".join(f"q{i} Q0 d{j} 1 {s!r} t\n" for i, (q, docs) in enumerate(run.items())
                                            for j, s in enumerate(docs.values())))
    out = tmp_path / "r.json"
    assert main(["evaluate", "--run", str(tmp_path / "r.txt"), "--qrels", str(tmp_path / "q.txt"), "--json", str(out)]) == 0
    from relgrade.io import read_qrels, read_run

    report = evaluate(read_qrels(tmp_path / "q.txt"), read_run(tmp_path / "r.txt"))
    written, expected = json.loads(out.read_text()), json.loads(json.dumps(report.to_dict()))
    assert {k: written[k] for k in expected} == expected  # the CLI adds notes (when, which commit) beside the report
