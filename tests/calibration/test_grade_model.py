"""The soft prediction's grade model against scikit-learn's L2-penalised multinomial logistic regression."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from relgrade._errors import InputError
from relgrade.calibration._grade_model import fit_grade_model


def _pairs(rng, n=300):
    judge = rng.integers(0, 4, n)
    human = np.clip(judge + rng.integers(-1, 2, n), 0, 3)
    X = np.hstack([np.eye(5)[judge], rng.normal(size=(n, 1))])  # one-hot grade, 'not graded', a numeric feature
    return X, human


def test_equals_sklearn_with_a_flat_intercept_prior():
    # sklearn: sum of log losses + ||w||^2 / (2C), intercepts unpenalised = our prior sd sqrt(C), intercept sd -> inf
    X, human = _pairs(np.random.default_rng(0))
    ours = fit_grade_model(X, human, (0, 1, 2, 3), prior_sd=1.0, intercept_sd=1e4)
    ref = LogisticRegression(C=1.0, tol=1e-12, max_iter=10000).fit(X, human)
    assert ours.predict_proba(X) == pytest.approx(ref.predict_proba(X), abs=1e-5)
    assert ours.n_pairs == len(human)


def test_rows_with_equal_features_are_merged_without_changing_the_fit():
    rng = np.random.default_rng(1)
    X, human = _pairs(rng)
    X = X[:, :5]  # one-hot only: 5 distinct rows
    fit = fit_grade_model(X, human, (0, 1, 2, 3))
    shuffled = rng.permutation(len(human))
    again = fit_grade_model(X[shuffled], human[shuffled], (0, 1, 2, 3))
    assert fit.predict_proba(np.eye(5)) == pytest.approx(again.predict_proba(np.eye(5)), abs=1e-9)


def test_a_smoothed_conditional_frequency_table_for_one_judge():
    X, human = _pairs(np.random.default_rng(2))
    judge = X[:, :5].argmax(axis=1)
    P = fit_grade_model(X[:, :5], human, (0, 1, 2, 3)).predict_proba(np.eye(5))
    for g in range(4):  # a grade seen ~75 times: close to its observed human-grade frequencies
        freq = np.bincount(human[judge == g], minlength=4) / (judge == g).sum()
        assert np.abs(P[g] - freq).max() < 0.05
    assert (P > 0).all() and P.sum(axis=1) == pytest.approx(1.0)  # never a hard 0, not even unseen classes
    overall = np.bincount(human, minlength=4) / len(human)
    assert np.abs(P[4] - overall).max() < 0.1  # 'not graded', never seen in training: about the base rates


def test_bad_input():
    with pytest.raises(InputError, match="not among the model's classes"):
        fit_grade_model(np.eye(2), [0, 5], (0, 1, 2, 3))
    with pytest.raises(InputError, match="no labeled pair"):
        fit_grade_model(np.zeros((0, 2)), [], (0, 1))
