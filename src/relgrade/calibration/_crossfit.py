"""Cross-fitting the judge-to-human mapping, so prediction-powered estimates may reuse the labels it was fitted on.

PPI (Angelopoulos et al., Science 2023) needs the predictions on the human-labeled units to be
independent of those units' labels. A mapping fitted on the same labels breaks that: it pulls the
mapped judge grades of the labeled queries towards their human grades, the rectifier
``mean(Y - Yhat)`` shrinks, and the interval becomes too narrow and off centre. Cross-prediction
(Zrnic & Candès, "Cross-prediction-powered inference", PNAS 2024; ``ppi_py.crossppi_mean_ci``) repairs
it with K-fold cross-fitting:

* the human-labeled queries are split at random (``seed``) into ``K = min(n_splits, n)`` folds;
* for each fold k the whole procedure of :func:`relgrade.calibration.fit_mapping` (the fit *and* its
  adoption guard) runs on the labeled queries of the other folds, giving ``f_k``;
* a labeled query of fold k gets its judge grades mapped by ``f_k`` (out of fold);
* an unlabeled query gets its judge grades mapped by *every* ``f_k``: the K label sets of
  :attr:`CrossFit.unlabeled`. The per-query metric values under them are averaged over k, as
  cross-prediction averages the K models' predictions on the unlabeled data (``Yhat_unlabeled.mean(axis=1)``):
  the imputed term then has the same expectation as the out-of-fold predictions the rectifier
  corrects, which a single mapping fitted on all labeled queries would not.

The estimate and interval are then the PPI ones on ``Y``, the out-of-fold ``Yhat`` and the
fold-averaged ``Yhat_unlabeled`` (``ppi_py.crossppi_mean_ci`` is exactly ``ppi_mean_ci`` with ``lam = 1``
on these; :func:`relgrade.hybrid.estimate` with ``crossfit=`` uses them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from relgrade._errors import InputError
from relgrade.calibration._mapping import GradeMapping, fit_mapping, identity_mapping
from relgrade.calibration._pairs import check_scale
from relgrade.calibration._results import DEFAULT_SCALE, Labels, Scores

Grades = Mapping[str, Mapping[str, int]]


@dataclass(frozen=True)
class CrossFit:
    """Judge grades mapped by cross-fitting (see the module docstring).

    ``labeled``: ``{query_id: {doc_id: grade}}`` for every human-labeled query the judge graded, each
    mapped by the mapping fitted without its fold. ``unlabeled``: one such label set per fold mapping,
    for the queries without human labels. ``folds[k]`` are the labeled queries of fold k and
    ``mappings[k]`` the mapping fitted on the other folds (adopted or identity, as its guard decided).
    """

    labeled: Grades
    unlabeled: tuple[Grades, ...]
    folds: tuple[tuple[str, ...], ...]
    mappings: tuple[GradeMapping, ...]

    @property
    def n_adopted(self) -> int:
        """Fold mappings that were adopted (the others are the identity)."""
        return sum(m.adopted for m in self.mappings)


def _mapped(judge: Labels, expected: Scores | None, queries, mapping: GradeMapping) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    table = mapping.table() if mapping.input == "grade" else {}  # the same values as apply_to, looked up
    for q in queries:
        exp = expected.get(q, {}) if expected is not None else {}
        out[q] = {d: table[g] if g in table else mapping.apply_to(g, exp.get(d)) for d, g in judge[q].items()}
    return out


def query_folds(queries: Sequence[str], n_splits: int, seed: int = 0) -> tuple[tuple[str, ...], ...]:
    """``min(n_splits, len(queries))`` folds of ``queries`` (sorted, shuffled by ``seed``, split as evenly as possible);
    each fold's queries sorted. The one fold assignment of every cross-fit in relgrade."""
    labeled = sorted(queries)
    order = [labeled[i] for i in np.random.default_rng(seed).permutation(len(labeled))]
    return tuple(tuple(sorted(part)) for part in np.array_split(np.array(order, dtype=object), min(n_splits, len(order))))


def crossfit_mapping(
    judge: Labels,
    human: Labels,
    *,
    expected: Scores | None = None,
    scale: Sequence[int] = DEFAULT_SCALE,
    statistic: str = "kappa",
    n_splits: int = 5,
    n_boot: int = 1000,
    seed: int = 0,
) -> CrossFit:
    """Map ``judge`` (every query it graded) with mappings cross-fitted on ``human`` (see the module docstring).

    ``judge``, ``human``: ``{query_id: {doc_id: grade}}``; ``expected``: the judge's expected grades
    (used as by :func:`~relgrade.calibration.fit_mapping`). ``statistic``, ``scale``, ``n_boot`` and
    the inner ``n_splits`` are passed to each fold's ``fit_mapping``; ``n_splits`` is also the number
    of outer folds (at most one per labeled query). ``seed`` draws the folds and seeds each fit.
    """
    scale = check_scale(scale)
    labeled = sorted(q for q, docs in human.items() if docs)
    if len(labeled) < 2:
        raise InputError(f"cross-fitting needs at least 2 human-labeled queries, got {len(labeled)}; label more queries")
    if n_splits < 2:
        raise InputError(f"n_splits must be at least 2 for cross-fitting, got {n_splits}")
    folds = query_folds(labeled, n_splits, seed)
    seen = set(labeled)
    others = [q for q in sorted(judge) if q not in seen]
    mapped_labeled: dict[str, dict[str, int]] = {}
    unlabeled, mappings = [], []
    for k, fold in enumerate(folds):
        held = set(fold)
        train = {q: docs for q, docs in human.items() if q not in held}
        try:
            m = fit_mapping(judge, train, expected=expected, scale=scale, statistic=statistic, n_splits=n_splits,
                            n_boot=n_boot, seed=seed + k)
        except InputError:  # no training pair graded by the judge: nothing to learn, keep the grades
            m = identity_mapping(scale, "kept identity because no training pair is graded by the judge")
        mappings.append(m)
        mapped_labeled.update(_mapped(judge, expected, [q for q in fold if q in judge], m))
        unlabeled.append(_mapped(judge, expected, others, m))
    return CrossFit(mapped_labeled, tuple(unlabeled), folds, tuple(mappings))
