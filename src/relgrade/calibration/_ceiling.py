"""The human ceiling: human-human agreement on pairs labeled by two or more annotators, and the judge on the same items."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from relgrade._errors import InputError
from relgrade.calibration import _stats as S
from relgrade.calibration._intervals import bca_agreement, jackknife_weights
from relgrade.calibration._pairs import check_scale
from relgrade.calibration._results import DEFAULT_SCALE, Agreement, HumanAgreement, Labels


def human_agreement(
    annotations: Mapping[tuple[str, str], Mapping[str, int]],
    *,
    judge: Labels | None = None,
    scale: Sequence[int] = DEFAULT_SCALE,
    n_boot: int = 1000,
    seed: int = 0,
) -> HumanAgreement | None:
    """Human-human agreement on items with >= 2 annotators, and the judge on the same items.

    Returns None when no item has two annotators. CIs resample the queries of those items.
    """
    scale = check_scale(scale)
    pos = {g: i for i, g in enumerate(scale)}
    items = sorted((key, grades) for key, grades in annotations.items() if len(grades) >= 2)
    if not items:
        return None
    for (q, d), grades in items:
        bad = [g for g in grades.values() if g not in pos]
        if bad:
            raise InputError(f"human labels: grade {bad[0]} of query {q!r} doc {d!r} is outside the scale {list(scale)}")
    k = len(scale)
    queries = sorted({q for (q, _), _ in items})
    qidx = {q: i for i, q in enumerate(queries)}
    nq = len(queries)
    annotators = sorted({a for _, grades in items for a in grades})
    rng = np.random.default_rng(seed)
    boot_ok = n_boot > 0 and nq >= 2
    # bootstrap rows, then the nq leave-one-query-out rows (for the BCa acceleration)
    weights = np.vstack([S.query_weights(nq, n_boot, rng), jackknife_weights(nq)]) if boot_ok else None

    def agg(value: float, reps: np.ndarray | None, n: int) -> Agreement:
        return bca_agreement(value, None, n) if reps is None else bca_agreement(value, reps[:n_boot], n, reps[n_boot:])

    def mean_kappa(row_sets):
        """Kappa of each set of ``(query index, grade position, grade position)`` rows (>= 2 rows), and the
        mean over the sets with its bootstrap replicates: ``(mean, replicates or None, number of sets)``."""
        values, reps = [], []
        for rows in row_sets:
            if len(rows) < 2:
                continue
            arr = np.asarray(rows)
            pq = S.confusions(arr[:, 1], arr[:, 2], arr[:, 0], nq, k)
            values.append(float(S.kappa(pq.sum(axis=0))))
            reps.append(S.kappa(S.resample(pq, weights)) if boot_ok else None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a set whose kappa is undefined on some resample
            mean = float(np.nanmean(values)) if values else float("nan")
            mean_reps = np.nanmean(np.stack(reps), axis=0) if (boot_ok and reps) else None
        return mean, mean_reps, len(values)

    # pairwise kappa, averaged over annotator pairs
    pk, pk_reps, _ = mean_kappa([[(qidx[q], pos[g[a]], pos[g[b]]) for (q, _), g in items if a in g and b in g]
                                 for i, a in enumerate(annotators) for b in annotators[i + 1:]])
    # Krippendorff alpha across annotators
    per_q = np.zeros((nq, k, k))
    for (q, _), grades in items:
        counts = np.zeros((1, k))
        for g in grades.values():
            counts[0, pos[g]] += 1
        per_q[qidx[q]] += S.value_count_coincidences(counts)
    alpha_value = float(S.ordinal_alpha(per_q.sum(axis=0)))
    alpha = agg(alpha_value, S.ordinal_alpha(S.resample(per_q, weights)) if boot_ok else None, len(items))
    pairwise = agg(pk, pk_reps, len(items))

    judge_kappa = gap = None
    if judge is not None:
        jk, jk_reps, n_sets = mean_kappa([[(qidx[q], pos[g[a]], pos[judge[q][d]]) for (q, d), g in items
                                           if a in g and d in judge.get(q, {}) and judge[q][d] in pos]
                                          for a in annotators])
        if n_sets:
            judge_kappa = agg(jk, jk_reps, len(items))
            gap = agg(pk - jk, None if (jk_reps is None or pk_reps is None) else pk_reps - jk_reps, len(items))
    return HumanAgreement(len(annotators), len(items), nq, pairwise, alpha, judge_kappa, gap)
