"""Agreement of a continuous judge score (e.g. the expected grade) with the human grade: Spearman, Kendall, AUC.

Each with a BCa interval over queries (per-pair bootstrap weights from the query multiplicities), the
point estimates by scipy / scikit-learn, the replicates by the weighted equivalents in
:mod:`relgrade.calibration._stats`, the leave-one-query-out values for the BCa acceleration by the exact
O(P log P) formulas of :mod:`relgrade.calibration._loo` (:func:`plain_jackknife` is the O(Q P) path they equal).
"""

from __future__ import annotations

import numpy as np

from relgrade._words import plural
from relgrade.calibration import _stats as S
from relgrade.calibration import _loo
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
    nq = None if weights is None else weights.shape[1]
    reps = None if weights is None else replicates(fns, x, yi, k, positive, grp, nq, w_pair, weights)
    for key, fn in fns.items():
        jk = None
        if weights is not None and jack is not None:
            scaled = fn if w_pair is None else (lambda w, fn=fn: fn(w * w_pair[None]))
            jk = jackknife(key, x, yi, k, positive, grp, nq, w_pair,
                           lambda rows, scaled=scaled: pair_stat(scaled, rows, grp))
        out[key] = bca_agreement(values[key], None if reps is None else reps[key], m, jk)
    return out, notes


def replicates(fns, x, yi, k: int, positive, grp, nq: int, w_pair, weights: np.ndarray) -> dict[str, np.ndarray]:
    """The three statistics on each bootstrap resample (multiplicities ``weights`` (B, Q)), a block of resamples at
    a time from the (score run, grade) cells (:class:`relgrade.calibration._rankboot.CellStats`)."""
    from relgrade.calibration._rankboot import CellStats

    yi = np.asarray(yi, dtype=np.int64)
    cut = int(yi[positive].min()) if positive.any() else k
    if not (positive == (yi >= cut)).all():  # not a cut of the grade scale: the plain path
        return plain_replicates(fns, x, yi, k, positive, grp, nq, w_pair, weights)
    cells = CellStats(x, yi, k, cut, grp, nq, w_pair)
    step = cells.block(weights.shape[0])
    blocks = [cells.stats(weights[start:start + step]) for start in range(0, weights.shape[0], step)]
    return {key: np.concatenate([b[key] for b in blocks]) if blocks else np.empty(0) for key in fns}


def plain_replicates(fns, x, yi, k, positive, grp, nq, w_pair, weights) -> dict[str, np.ndarray]:
    """The path :func:`replicates` equals: each weighted statistic of :mod:`._stats` on the per-pair weights."""
    out = {}
    for key, fn in fns.items():
        scaled = fn if w_pair is None else (lambda w, fn=fn: fn(w * w_pair[None]))
        out[key] = pair_stat(scaled, weights, grp)
    return out


def jackknife(key: str, x, yi, k: int, positive, grp, nq: int, w_pair, plain) -> np.ndarray:
    """Leave-one-query-out values of statistic ``key`` (``(nq,)``), by :mod:`relgrade.calibration._loo`."""
    if key == "auc":
        return _loo.loo_auc(x, positive, grp, nq, w_pair)
    if key == "kendall":
        return _loo.loo_kendall(x, yi, k, grp, nq, w_pair)
    return _loo.loo_spearman(x, yi, k, grp, nq, w_pair)


def plain_jackknife(key, x, yi, k, positive, grp, nq, w_pair, plain) -> np.ndarray:
    """The O(Q P) path :func:`jackknife` equals: the weighted statistic on each leave-one-out weight row."""
    from relgrade.calibration._intervals import JackknifeRows

    return plain(JackknifeRows(nq))
