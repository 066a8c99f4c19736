"""crossfit_mapping: every labeled query mapped by a mapping that never saw its labels; PPI covers with it."""

from __future__ import annotations

import numpy as np
import pytest

from relgrade._errors import InputError
from relgrade.calibration import crossfit_mapping


def _lenient(seed=0, n_queries=30, per_query=8, n_labeled=15):
    rng = np.random.default_rng(seed)
    truth, judge, expected = {}, {}, {}
    for q in range(n_queries):
        for d in range(per_query):
            h = int(rng.integers(0, 4))
            x = float(np.clip(h + 0.8 + rng.normal(0, 0.3), 0, 3))
            qid, did = ("NA" if q == 0 else f"q{q}"), f"d{d}"
            truth.setdefault(qid, {})[did] = h
            expected.setdefault(qid, {})[did] = x
            judge.setdefault(qid, {})[did] = int(np.floor(x + 0.5))
    human = {q: truth[q] for q in list(truth)[:n_labeled]}
    return truth, human, judge, expected


def test_each_labeled_query_is_mapped_by_a_mapping_that_never_saw_it():
    _, human, judge, expected = _lenient()
    cf = crossfit_mapping(judge, human, expected=expected, n_splits=5, n_boot=200, seed=3)
    labeled = sorted(human)
    assert sorted(q for fold in cf.folds for q in fold) == labeled and [len(f) for f in cf.folds] == [3] * 5
    others = sorted(q for q in judge if q not in human)
    assert len(cf.unlabeled) == len(cf.mappings) == 5 and cf.n_adopted == 5
    for fold, m, unl in zip(cf.folds, cf.mappings, cf.unlabeled):
        assert m.fingerprint.overlap(fold) == ()
        assert set(m.fingerprint.overlap(labeled)) == set(labeled) - set(fold)
        for q in fold:
            assert cf.labeled[q] == {d: m.apply_to(g, expected[q][d]) for d, g in judge[q].items()}
        assert sorted(unl) == others
        for q in others:
            assert unl[q] == {d: m.apply_to(g, expected[q][d]) for d, g in judge[q].items()}
    assert cf.labeled != {q: judge[q] for q in labeled}  # the lenient judge is mapped down

    # the out-of-fold grades of a fold do not move when that fold's human labels change
    changed = {q: ({d: 3 for d in docs} if q in cf.folds[0] else docs) for q, docs in human.items()}
    again = crossfit_mapping(judge, changed, expected=expected, n_splits=5, n_boot=200, seed=3)
    assert again.folds == cf.folds
    assert all(again.labeled[q] == cf.labeled[q] for q in cf.folds[0])
    assert any(again.labeled[q] != cf.labeled[q] for q in cf.folds[1])


def test_crossfit_needs_two_labeled_queries_and_two_folds():
    _, human, judge, _ = _lenient(n_labeled=1)
    with pytest.raises(InputError, match="at least 2 human-labeled queries"):
        crossfit_mapping(judge, human)
    _, human, judge, _ = _lenient(n_labeled=4)
    with pytest.raises(InputError, match="n_splits"):
        crossfit_mapping(judge, human, n_splits=1)
    cf = crossfit_mapping(judge, human, n_splits=10, n_boot=50)  # at most one fold per labeled query
    assert len(cf.folds) == 4
