"""Agreement of a continuous judge score (e.g. the expected grade) with the human grade: Spearman, Kendall, AUC.

Each with a BCa interval over queries (per-pair bootstrap weights from the query multiplicities), the
point estimates by scipy / scikit-learn, the replicates by the weighted equivalents in
:mod:`relgrade.calibration._stats`.
"""

from __future__ import annotations

import numpy as np

from relgrade._words import plural
from relgrade.calibration import _stats as S
from relgrade.calibration._intervals import bca_agreement, pair_stat
from relgrade.calibration._pairs import Pairs
from relgrade.calibration._results import Agreement


def continuous(pairs: Pairs, h_grades: np.ndarray, threshold: int, k: int, weights: np.ndarray | None,
               jack: np.ndarray | None = None, pw: np.ndarray | None = None):
    from scipy import stats as sps

    notes = []
    have = np.isfinite(pairs.score)
    if not have.all():
        notes.append(f"continuous score missing for {plural(int((~have).sum()), 'pair')}; Spearman/Kendall/AUC use the rest")
    x, y, yi, grp = pairs.score[have], h_grades[have], pairs.human[have], pairs.group[have]
    w_pair = None if pw is None else pw[have]
    m = len(x)
    out: dict[str, Agreement] = {}
    positive = y >= threshold
    fns = {
        "spearman": lambda w: S.weighted_spearman(x, y, w),
        "kendall": lambda w: S.weighted_kendall(x, yi, k, w),
        "auc": lambda w: S.weighted_auc(x, positive, w),
    }
    if m < 3 or len(np.unique(x)) < 2 or len(np.unique(y)) < 2:
        notes.append("Spearman/Kendall undefined: the score or the human grade is constant (or < 3 pairs)")
        rho = tau = float("nan")
    elif w_pair is None:
        rho = float(sps.spearmanr(x, y).statistic)
        tau = float(sps.kendalltau(x, y).statistic)
    else:
        rho, tau = float(fns["spearman"](w_pair[None])[0]), float(fns["kendall"](w_pair[None])[0])
    if positive.all() or not positive.any():
        notes.append("AUC undefined: the human labels have one binary class only")
        auc = float("nan")
    elif w_pair is None:
        from sklearn.metrics import roc_auc_score

        auc = float(roc_auc_score(positive, x))
    else:
        auc = float(fns["auc"](w_pair[None])[0])
    values = {"spearman": rho, "kendall": tau, "auc": auc}
    for key, fn in fns.items():
        reps = jk = None
        if weights is not None:
            scaled = fn if w_pair is None else (lambda w, fn=fn: fn(w * w_pair[None]))
            reps = pair_stat(scaled, weights, grp)
            jk = None if jack is None else pair_stat(scaled, jack, grp)
        out[key] = bca_agreement(values[key], reps, m, jk)
    return out, notes
