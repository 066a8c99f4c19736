"""The active design's sampling (relgrade.calibration._active): uncertainty from the judges, draws, the file."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from relgrade._errors import InputError
from relgrade.calibration import JudgeLabels, query_uncertainty, sample_active, write_sample
from relgrade.io import read_labels
from relgrade.stats._weighted import design_probabilities


def _judge(dists):
    labels = {}
    for (q, d), dist in dists.items():
        labels.setdefault(q, {})[d] = max(dist, key=dist.get)
    return JudgeLabels("j", labels, distribution=dists)


def test_uncertainty_is_the_ndcg_spread_under_the_judges_mixture():
    sure = {("q1", "a"): {3: 1.0}, ("q1", "b"): {0: 1.0}}
    unsure = {("q2", "a"): {0: 0.5, 3: 0.5}, ("q2", "b"): {0: 1.0}}
    j = _judge({**sure, **unsure})
    pool = {"q1": ("a", "b"), "q2": ("a", "b")}
    u = query_uncertainty([j], pool)
    assert u["q1"] == 0.0
    # q2: pair a has mean 1.5 and variance 2.25 at rank 1 (discount 1); IDCG = 1.5
    assert u["q2"] == pytest.approx(np.sqrt(2.25) / 1.5)
    # two judges with hard grades that disagree on q1's pair a: their disagreement is the spread
    hard1 = JudgeLabels("h1", {"q1": {"a": 3, "b": 0}, "q2": {"a": 1, "b": 0}})
    hard2 = JudgeLabels("h2", {"q1": {"a": 1, "b": 0}, "q2": {"a": 1, "b": 0}})
    u2 = query_uncertainty([hard1, hard2], pool)
    assert u2["q1"] == pytest.approx(1.0 / 2.0) and u2["q2"] == 0.0  # var 1 at rank 1, IDCG 2
    assert set(query_uncertainty([hard1], pool).values()) == {0.0}  # one hard judge: no spread, uniform design


def test_draws_follow_the_probabilities_and_the_file_records_them(tmp_path):
    pool = {f"q{i}": ("a", "b") for i in range(8)}
    u = {q: (1.0 if q == "q0" else 0.0) for q in pool}
    judge = {q: {"a": 1, "b": 0} for q in pool}
    counts = np.zeros(8)
    for seed in range(300):
        s = sample_active(judge, pool, u, n=4, floor=0.3, seed=seed)
        for it in s.items:
            if it.doc_id == "a":
                counts[int(it.query_id[1:])] += it.draws
    q = design_probabilities([u[f"q{i}"] for i in range(8)], 0.3)
    np.testing.assert_allclose(counts / counts.sum(), q, atol=0.02)  # q0: 0.7375, the others 0.0375
    s = sample_active(judge, pool, u, n=5, seed=1)
    assert sum(it.draws for it in s.items if it.doc_id == "a") == 5
    out = write_sample(s, tmp_path / "items.csv")
    with open(out) as fh:
        header = next(csv.reader(fh))
    assert header[-4:] == ["design", "weight", "draws", "pool"]
    back = read_labels(out, source="human")
    assert back.n_empty == len(s.items)
    for it in s.items:
        assert it.weight == pytest.approx(1 / (5 * q[int(it.query_id[1:])]))
        assert it.pool == 8


def test_a_pilot_is_kept_and_weighted_by_the_mixture():
    pool = {f"q{i}": ("a",) for i in range(10)}
    u = {q: float(i) for i, q in enumerate(pool)}
    judge = {q: {"a": 1} for q in pool}
    pilot = {"queries": {"q1": {"a": 2}, "q2": {"a": 0}}, "weight": 5.0}
    s = sample_active(judge, pool, u, n=3, floor=0.5, seed=2, pilot=pilot)
    assert [it.query_id for it in s.items[:2]] == ["q1", "q2"] and s.items[0].grade == 2
    q = design_probabilities([u[f"q{i}"] for i in range(10)], 0.5)
    mix = (2 / 10 + 3 * q) / 5
    for it in s.items:
        assert it.weight == pytest.approx(1 / (5 * mix[int(it.query_id[1:])]))
    assert sum(it.draws for it in s.items) == 5
    with pytest.raises(InputError, match="same pool"):
        sample_active(judge, pool, u, n=3, pilot={"queries": {"q1": {"a": 2}}, "weight": 7.0})
    with pytest.raises(InputError, match="not in the judged pool"):
        sample_active(judge, pool, u, n=3, pilot={"queries": {"zz": {"a": 2}}, "weight": 10.0})


def test_calibrate_reads_an_active_file_with_its_draws_in_the_weights(tmp_path):
    pool = {f"q{i}": ("a", "b") for i in range(6)}
    u = {q: float(i) for i, q in enumerate(pool)}
    judge = {q: {"a": 1, "b": 0} for q in pool}
    s = sample_active(judge, pool, u, n=12, seed=5)
    out = write_sample(s, tmp_path / "items.csv")
    rows = list(csv.DictReader(open(out)))
    for r in rows:
        r["grade"] = "1"
    with open(tmp_path / "filled.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    weights = read_labels(tmp_path / "filled.csv", source="human").weights()
    for it in s.items:
        assert weights[(it.query_id, it.doc_id)] == pytest.approx(it.weight * it.draws)
    assert any(it.draws > 1 for it in s.items)  # the case the draws matter in
