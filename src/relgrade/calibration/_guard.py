"""The guard that decides whether a change to the judge's grades (a mapping, a combination of judges) pays.

A candidate is judged on predictions it never fitted: the caller runs the *whole* choice (for a mapping, the fit
of each family and the choice between families) on the training queries of each outer fold (:func:`folds`,
grouped by query) and predicts the held-out queries with what it chose. :func:`gain_guard` then compares those
predictions with the baseline's on the same pairs: the kappa before and after, each with calibrate's interval,
and the gain ``kappa(candidate) - kappa(baseline)`` with a paired studentized interval
(:func:`relgrade.stats.studentized_ci` on the per-query confusion matrices of both, resampled together). A
candidate is adopted only when the gain's lower bound is above 0 (:func:`gains`).

Why nested: choosing the family (table or cut points) by the held-out kappa of the same folds that then judge it
is a selection on the test set. Why studentized: the percentile interval the guard used before is too narrow
with a dozen queries (percentile and BCa intervals of kappa held the population value in 89-90% of draws at 12
queries in ``benchmarks/intervals_trec_dl.py``). ``benchmarks/mapping_guard_trec_dl.py`` measures adoption and
the held-out gain of adoptions on queries the fit never saw.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from relgrade.calibration import _stats as S
from relgrade.calibration._results import Agreement
from relgrade.stats import percentile_ci, query_weights, resample, studentized_ci


def folds(groups: np.ndarray, n_splits: int):
    """``(k, [(train, test), ...])``: GroupKFold by query, ``k = min(n_splits, number of queries)`` (at least 2)."""
    from sklearn.model_selection import GroupKFold

    n_groups = len(np.unique(groups))
    k = max(2, min(n_splits, n_groups))
    return k, list(GroupKFold(n_splits=k).split(np.zeros(len(groups)), groups=groups))


def gain_guard(per_base: np.ndarray, per_new: np.ndarray, weight: str, n_boot: int, seed: int, n: int,
               interval: str = "studentized") -> tuple[Agreement, Agreement, Agreement]:
    """Kappa of the baseline and the candidate from per-query confusion matrices ``(Q, k, k)``, and their gain,
    each with a 95% interval over the same resampled queries (None below 2 queries or ``n_boot`` 0).

    ``interval``: ``"studentized"`` (:func:`relgrade.stats.studentized_ci`; the mapping guard) or ``"percentile"``
    (the percentile interval :func:`relgrade.calibration.combine_judges` still uses; see its docstring)."""
    nq = per_base.shape[0]
    both = np.stack([per_base, per_new], axis=1)  # (Q, 2, k, k): one query's two tables resampled together
    fns = [lambda c: S.kappa(c[..., 0, :, :], weight), lambda c: S.kappa(c[..., 1, :, :], weight)]
    fns.append(lambda c: fns[1](c) - fns[0](c))
    values = [float(f(both.sum(axis=0))) for f in fns]
    if n_boot <= 0 or nq < 2:
        return tuple(Agreement(v, None, n) for v in values)
    w = query_weights(nq, n_boot, np.random.default_rng(seed))
    if interval == "percentile":
        cis = [percentile_ci(f(resample(both, w))) for f in fns]
    else:
        cis = [studentized_ci(f, both, w, bounds=b, scale=sc)
               for f, b, sc in zip(fns, ((-1.0, 1.0), (-1.0, 1.0), (-2.0, 2.0)), ("atanh", "atanh", "raw"))]
    return tuple(Agreement(v, ci, n) for v, ci in zip(values, cis))


def gains(ci: Sequence[float] | None) -> bool:
    """The adoption rule: a gain interval whose lower bound is above 0."""
    return ci is not None and ci[0] > 0
