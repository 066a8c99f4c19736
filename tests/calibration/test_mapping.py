"""fit_mapping adopts a monotone remap only when it beats the noise held out; combine_judges likewise."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import cohen_kappa_score

from relgrade.calibration import GradeMapping, combine_judges, fit_mapping


def _labels(rng, n_queries=30, per_query=12, shift=0, p_correct=0.7):
    human, judge = {}, {}
    for q in range(n_queries):
        for d in range(per_query):
            h = int(rng.integers(0, 4))
            j = h if rng.random() < p_correct else int(np.clip(h + rng.choice([-1, 1]), 0, 3))
            human.setdefault(str(q), {})[str(d)] = h
            judge.setdefault(str(q), {})[str(d)] = int(np.clip(j + shift, 0, 3))
    return judge, human


def test_a_lenient_judge_gets_a_mapping_that_helps_held_out():
    rng = np.random.default_rng(0)
    judge, human = _labels(rng, shift=1)
    m = fit_mapping(judge, human, n_boot=300, seed=0)
    assert m.adopted, m.message
    assert m.gain.ci95[0] > 0
    assert m.kappa_after.value > m.kappa_before.value
    # the kappa before is the judge's own kappa on the same pairs
    keys = [(q, d) for q in human for d in human[q]]
    h = [human[q][d] for q, d in keys]
    j = [judge[q][d] for q, d in keys]
    assert m.kappa_before.value == pytest.approx(cohen_kappa_score(h, j, labels=[0, 1, 2, 3]))
    # the final mapping is sklearn's isotonic fit on all pairs, rounded to the scale
    iso = IsotonicRegression(y_min=0, y_max=3, out_of_bounds="clip").fit(j, h)
    for g in range(4):
        assert m.apply(g) == int(np.floor(iso.predict([g])[0] + 0.5))
    assert m.table()[1] == 0  # a lenient grade 1 is pulled down to 0


def test_a_calibrated_judge_keeps_identity_and_says_so():
    rng = np.random.default_rng(1)
    judge, human = _labels(rng, shift=0)
    m = fit_mapping(judge, human, n_boot=300, seed=0)
    assert not m.adopted
    assert m.message.startswith("kept identity because")
    assert m.table() == {0: 0, 1: 1, 2: 2, 3: 3}
    assert m.apply(2.4) == 2 and m.apply(2.5) == 3


def test_mapping_from_expected_grade_and_json_round_trip():
    rng = np.random.default_rng(2)
    judge, human = _labels(rng, shift=1)
    expected = {q: {d: g + float(rng.normal(0, 0.2)) for d, g in docs.items()} for q, docs in judge.items()}
    m = fit_mapping(judge, human, expected=expected, n_boot=200, seed=0)
    assert m.input == ("expected_grade" if m.adopted else "grade")
    again = GradeMapping.from_dict(json.loads(json.dumps(m.to_dict())))
    for x in (0.0, 0.7, 1.5, 2.2, 3.0):
        assert again.apply(x) == m.apply(x)
    assert again.adopted == m.adopted


def test_one_query_keeps_identity():
    m = fit_mapping({"q": {"a": 3, "b": 2}}, {"q": {"a": 1, "b": 0}}, n_boot=50)
    assert not m.adopted and "at least 2 queries" in m.message


def test_combine_judges_median_and_majority():
    rng = np.random.default_rng(3)
    human = {}
    judges = {"a": {}, "b": {}, "c": {}}
    for q in range(20):
        for d in range(10):
            h = int(rng.integers(0, 4))
            human.setdefault(str(q), {})[str(d)] = h
            for name in judges:
                g = h if rng.random() < 0.5 else int(rng.integers(0, 4))
                judges[name].setdefault(str(q), {})[str(d)] = g
    rep = combine_judges(judges, human, n_boot=200, seed=0)
    keys = sorted((q, d) for q in human for d in human[q])
    grid = np.array([[judges[n][q][d] for n in "abc"] for q, d in keys])
    h = np.array([human[q][d] for q, d in keys])
    median = np.sort(grid, axis=1)[:, 1]
    by_name = {c.name: c for c in rep.combinations}
    assert by_name["median"].kappa.value == pytest.approx(cohen_kappa_score(h, median, labels=[0, 1, 2, 3]))
    assert rep.best_judge in judges
    # three independent noisy judges: the median beats the best one beyond the noise
    assert by_name["median"].adopted
    assert rep.n_pairs == 200
