"""The guard that decides whether a change to the judge's grades (a mapping, a combination of judges) pays.

A mapping is judged on predictions it never fitted, and the judgement carries the noise of the fit itself:

* **nested**: the caller runs the *whole* choice (the fit of each family and the choice between families) on
  the training queries of each outer fold (:func:`folds`, grouped by query) and predicts the held-out queries
  with what it chose; the held-out gain is ``kappa(those predictions) - kappa(judge grades)`` on all pairs;
* **re-fitted on resamples** (:func:`refit_gains`): on each of up to :data:`REFIT_MAX` bootstrap resamples of
  the queries the same cross-validated fit runs again from scratch (new folds over the resampled queries, new
  fits; the family is the one chosen on the sample) and gives its own held-out gain. The map is adopted only
  when the gain is above 0 on at least 97.5% of the resamples (:func:`refit_adopts`); the resampling stops as
  soon as that is out of reach.

Why: the guard before judged fixed out-of-fold predictions with a percentile interval over queries, so the
interval held none of the fit's own variability (which table the search lands on with a dozen queries), and it
chose between tables and cut points on the same folds that then judged the choice. On TREC DL 2020 with LLM-like
judges, fitted on 12 queries (``benchmarks/mapping_guard_trec_dl.py``), it adopted 6% of fits and the adopted
maps lost kappa on the other queries on average; no monotone map gains there, so a guard should adopt almost
never. :func:`gain_guard` gives the kappa before and after (calibrate's interval) and, for
:func:`relgrade.calibration.combine_judges`, the paired gain of fixed predictions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from relgrade.calibration import _monotone as M
from relgrade.calibration import _stats as S
from relgrade.calibration._results import Agreement
from relgrade.stats import percentile_ci, query_weights, resample, studentized_ci


REFIT_MAX = 400  # resamples on which the whole cross-validated fit runs again (fewer when n_boot is smaller)
ADOPT_SHARE = 0.975  # a map is adopted when its re-fitted held-out gain is above 0 on this share of them


def folds(groups: np.ndarray, n_splits: int):
    """``(k, [(train, test), ...])``: GroupKFold by query, ``k = min(n_splits, number of queries)`` (at least 2)."""
    from sklearn.model_selection import GroupKFold

    n_groups = len(np.unique(groups))
    k = max(2, min(n_splits, n_groups))
    return k, list(GroupKFold(n_splits=k).split(np.zeros(len(groups)), groups=groups))


FAST_LOO = True  # the tests set it False for the plain path (every leave-one-out table built) that it equals


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
        # each replicate's jackknife from the tables' margins (S.kappa_loo): O(B Q k) instead of B Q tables
        loos = [lambda t, pq: S.kappa_loo(t[:, 0], pq[:, 0], weight), lambda t, pq: S.kappa_loo(t[:, 1], pq[:, 1], weight)]
        loos.append(lambda t, pq: loos[1](t, pq) - loos[0](t, pq))
        cis = [studentized_ci(f, both, w, bounds=b, scale=sc, loo=loo if FAST_LOO else None)
               for f, loo, b, sc in zip(fns, loos, ((-1.0, 1.0), (-1.0, 1.0), (-2.0, 2.0)), ("atanh", "atanh", "raw"))]
    return tuple(Agreement(v, ci, n) for v, ci in zip(values, cis))


def refit_gains(group: np.ndarray, human: np.ndarray, judge: np.ndarray, k: int, weight: str, n_splits: int,
                fit: Callable[[np.ndarray], object], predict: Callable[[object, np.ndarray], np.ndarray],
                n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Held-out gains of a cross-validated fit on bootstrap resamples of the queries, at most ``n_boot`` of them.

    ``group``, ``human``, ``judge``: per pair, the query index and the scale positions. On each resample the drawn
    queries (a query drawn twice brings its pairs twice and stays in one fold) are split at random into
    ``min(n_splits, distinct queries)`` folds; ``fit(train_pairs)`` is fitted on the other folds' pairs and
    ``predict(fit, test_pairs)`` predicts each fold; the gain is ``kappa(predicted) - kappa(judge)`` over the
    resample's pairs (NaN, counted as no gain, when a resample has a single distinct query). Stops as soon as
    more resamples failed to gain than :func:`refit_adopts` allows: adoption is then impossible, and the rest
    would cost a fit per fold for nothing.
    """
    nq = int(group.max()) + 1
    members = [np.flatnonzero(group == g) for g in range(nq)]
    allowed = int(np.floor((1 - ADOPT_SHARE) * n_boot + 1e-9))
    out: list[float] = []
    for _ in range(n_boot):
        drawn = rng.integers(0, nq, nq)
        distinct = np.unique(drawn)
        gain = np.nan
        if len(distinct) >= 2:
            fold_of = np.empty(nq, dtype=np.int64)
            fold_of[rng.permutation(distinct)] = np.arange(len(distinct)) % max(2, min(n_splits, len(distinct)))
            idx = np.concatenate([members[q] for q in drawn])
            fold = np.repeat(fold_of[drawn], [len(members[q]) for q in drawn])
            pred = np.empty(len(idx), dtype=np.int64)
            for f in np.unique(fold):
                test = fold == f
                pred[test] = predict(fit(idx[~test]), idx[test])
            gain = float(S.kappa(M.confusion(human[idx], pred, k), weight)
                         - S.kappa(M.confusion(human[idx], judge[idx], k), weight))
        out.append(gain)
        if sum(not g > 0 for g in out) > allowed:
            break
    return np.asarray(out)


def refit_adopts(reps: np.ndarray, n_boot: int) -> bool:
    """The mapping guard's rule: all ``n_boot`` resamples were run and at least :data:`ADOPT_SHARE` of them gained."""
    return n_boot > 0 and len(reps) == n_boot and int(np.sum(reps > 0)) >= ADOPT_SHARE * n_boot - 1e-9


def gains(ci: Sequence[float] | None) -> bool:
    """The adoption rule: a gain interval whose lower bound is above 0."""
    return ci is not None and ci[0] > 0
