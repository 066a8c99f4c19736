"""P(human grade | the judges' grades): a small multinomial logistic regression with a normal prior.

Built for a few hundred labeled (query, doc) pairs, where a free table of conditional frequencies is
noisy in its rare cells. For a pair with features ``x`` (see :func:`relgrade.hybrid.predict`: one-hot
of each judge's grade, a column per judge for "not graded", the judge's expected grade where its
details give one),

    P(human grade = c | x) = exp(b_c + x . w_c) / sum_c' exp(b_c' + x . w_c')

fitted by maximum a posteriori with independent normal priors ``w ~ N(0, prior_sd^2)`` and
``b ~ N(0, intercept_sd^2)`` (ridge-penalised multinomial logistic regression; Newton's method with
step halving on a strictly convex objective, to a step below 1e-9). With one judge and one-hot
grades this is a smoothed table of conditional frequencies: a judge grade seen on many pairs gets
close to its observed human-grade frequencies, a rare one is pulled toward the overall
frequencies, and every class keeps a probability above 0 (a class never seen in training gets a
small one from the intercept's prior, not a hard 0).

Rows with the same features are merged (with their class counts) before fitting, so one judge on
a 0-3 scale is a problem of 5 rows whatever the number of pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from relgrade._errors import InputError

PRIOR_SD = 1.0
"""Prior standard deviation of the feature weights (on the logit scale)."""
INTERCEPT_SD = 5.0
"""Prior standard deviation of the intercepts: weak, so the base rates come from the data."""


@dataclass(frozen=True)
class GradeModel:
    """A fitted model: ``classes`` (the human grades), ``coef`` ((1 + features) x classes, intercepts first)."""

    classes: tuple[int, ...]
    coef: np.ndarray
    n_pairs: int

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """(rows x classes) probabilities for the feature rows ``X``."""
        X = np.asarray(X, dtype=np.float64)
        return _softmax(self.coef[0] + X @ self.coef[1:])


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def fit_grade_model(X, grades: Sequence[int], classes: Sequence[int], *, prior_sd: float = PRIOR_SD,
                    intercept_sd: float = INTERCEPT_SD) -> GradeModel:
    """Fit P(grade | features) on rows ``X`` (pairs x features) with their human ``grades`` (see module docstring).

    ``classes``: every grade the model can give (the human scale); a grade of ``grades`` outside it is an
    :class:`~relgrade.InputError`.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or len(X) != len(grades):
        raise InputError(f"the features must be a (pairs x features) matrix with one row per grade, got {X.shape} "
                         f"for {len(grades)} grades")
    classes = tuple(int(c) for c in classes)
    index = {c: i for i, c in enumerate(classes)}
    outside = sorted({int(g) for g in grades} - set(index))
    if outside:
        raise InputError(f"human grade(s) {outside} are not among the model's classes {list(classes)}")
    if len(X) == 0:
        raise InputError("no labeled pair to fit the judge's calibration on; label some of the pairs the judge graded")
    rows, inverse = np.unique(X, axis=0, return_inverse=True)
    cls = np.array([index[int(g)] for g in grades], dtype=np.int64)
    counts = np.bincount(inverse.ravel() * len(classes) + cls, minlength=len(rows) * len(classes))
    counts = counts.reshape(len(rows), len(classes)).astype(np.float64)
    Xa = np.hstack([np.ones((len(rows), 1)), rows])
    d, k = Xa.shape[1], len(classes)
    precision = np.full((d, 1), 1.0 / prior_sd ** 2)
    precision[0] = 1.0 / intercept_sd ** 2
    weight = counts.sum(axis=1)
    coef = np.zeros((d, k))
    coef[0] = np.log((counts.sum(axis=0) + 0.5) / (weight.sum() + 0.5 * k))  # start from the smoothed base rates

    def objective(c: np.ndarray) -> float:
        z = Xa @ c
        log_p = z - z.max(axis=1, keepdims=True)
        log_p -= np.log(np.exp(log_p).sum(axis=1, keepdims=True))
        return float(-(counts * log_p).sum() + 0.5 * (precision * c * c).sum())

    value = objective(coef)
    for _ in range(100):
        p = _softmax(Xa @ coef)
        grad = Xa.T @ (weight[:, None] * p - counts) + precision * coef
        hess = np.empty((d, k, d, k))
        for a in range(k):  # block (a, b): sum_r x_r x_r' w_r (p_ra [a = b] - p_ra p_rb)
            for b in range(a, k):
                block = Xa.T @ (Xa * (weight * (p[:, a] * (a == b) - p[:, a] * p[:, b]))[:, None])
                hess[:, a, :, b] = hess[:, b, :, a] = block
        hess = hess.reshape(d * k, d * k)
        hess[np.diag_indices(d * k)] += np.repeat(precision[:, 0], k)
        step = np.linalg.solve(hess, grad.ravel()).reshape(d, k)
        t = 1.0
        while t > 1e-6:
            trial = coef - t * step
            new = objective(trial)
            if new <= value + 1e-12:
                break
            t /= 2
        coef, value = trial, new
        if np.abs(t * step).max() < 1e-9:
            break
    return GradeModel(classes, coef, int(weight.sum()))
