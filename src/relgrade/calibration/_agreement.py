"""Agreement of a judge with human labels, each statistic with a 95% query-bootstrap CI (studentized or BCa).

``agreement(judge, human)`` takes plain ``{query_id: {doc_id: grade}}`` mappings and returns a frozen
:class:`CalibrationReport`. The point estimates are computed by the reference implementations
(``sklearn.metrics.cohen_kappa_score`` with ``labels=scale``; ``krippendorff.alpha`` ordinal with
``value_domain=scale``); the bootstrap replicates by the vectorised equivalents in
:mod:`relgrade.calibration._stats`, proved equal in the tests.

Intervals: the bootstrap resamples *queries* (pairs of a query stay together; :mod:`relgrade.stats`) with
an explicit seed. Every statistic of the confusion matrix (kappas, binary kappa, alpha, accuracy, leniency,
per-grade precision/recall) gets a *studentized* (bootstrap-t) interval (BCa above
:data:`STUDENTIZED_MAX_QUERIES` queries, where it is as good and far cheaper): each replicate is standardised by
its own leave-one-query-out jackknife standard error, computed from per-query confusion matrices
(replicate = weighted sum, jackknife = replicate minus one query), a few array operations; the kappas and alpha
on Fisher's atanh scale, and no side narrower than Student's t with n - 1 df
(:func:`relgrade.stats.studentized_ci`, named by :data:`relgrade._intervals.STUDENTIZED` in the JSON and HTML).
Spearman, Kendall, AUC and the human-human ceiling get BCa intervals (jackknife acceleration). At 12 queries
drawn from TREC DL 2020 with LLM-like judges BCa held the population kappa in 89-90% of draws, plain
bootstrap-t in 94%, the interval used now in 95%; ``tests/stats/test_coverage.py`` and
``benchmarks/intervals_trec_dl.py`` measure the interval used now. With fewer than :data:`FEW_QUERIES` queries
the report says plainly that the CI is approximate.

Weights: ``weights={(query_id, doc_id): w}`` (inclusion weights ``1 / pi`` of a ``relgrade sample --design
strata`` sample) make every statistic a function of the weighted (Horvitz-Thompson) confusion matrix, so
kappa estimates the population's value instead of the sample's; the bootstrap still resamples queries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from relgrade._errors import InputError
from relgrade._intervals import BCA, calibration_ci
from relgrade.calibration import _stats as S
from relgrade.calibration._ceiling import human_agreement
from relgrade.calibration._continuous import continuous as _continuous
from relgrade.calibration._intervals import JackknifeRows, bca_agreement, with_width
from relgrade.calibration._pairs import Pairs, align, check_labels_in_scale, check_scale, check_threshold, pair_weights
from relgrade.calibration._results import (
    APPROX_NOTE, DEFAULT_SCALE, FEW_QUERIES, STUDENTIZED_MAX_QUERIES, Agreement, CalibrationReport,
    Labels, Scores,
)
from relgrade.calibration._verdict import LOCAL_NOTE, verdict
from relgrade.stats import leave_one_out, studentized_ci

__all__ = ["Agreement", "CalibrationReport", "Pairs", "agreement", "align", "check_scale"]


def agreement(
    judge: Labels,
    human: Labels,
    *,
    scale: Sequence[int] = DEFAULT_SCALE,
    binary_threshold: int = 2,
    expected: Scores | None = None,
    annotations: Mapping[tuple[str, str], Mapping[str, int]] | None = None,
    weights: Mapping[tuple[str, str], float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    name: str = "judge",
    model: str | None = None,
    n_unjudged: int = 0,
    judge_scale: Sequence[int] | None = None,
) -> CalibrationReport:
    """Agreement of ``judge`` with ``human`` on the pairs both labeled, with 95% query-bootstrap CIs (module docstring).

    ``judge_scale``: the judge's own scale when it differs from the human ``scale`` (a details file's
    ``"scale"``). A binary judge (e.g. ``[0, 1]``) is compared with the human grades binarized at
    ``binary_threshold`` (:func:`relgrade.io.on_judge_scale`), every statistic on the binary labels, with a note.

    Statistics: Cohen's kappa unweighted, linear and quadratic (Cohen 1960, 1968), binary kappa at
    ``grade >= binary_threshold``, Krippendorff's ordinal alpha (2011), accuracy, the confusion matrix
    (rows human, columns judge), per-grade precision/recall, leniency ``mean(judge - human)``; with
    ``expected`` (a continuous judge score such as the expected grade): Spearman's rho, Kendall's
    tau-b against the human grade and the ROC AUC for the binary task.

    ``weights``: ``{(query_id, doc_id): inclusion weight}`` of every labeled pair (default None: all 1).
    Each pair then counts its weight in every statistic (weighted confusion matrix; kappa as scikit-learn's
    ``sample_weight``), so the statistics estimate population values from a stratified sample. The shown
    confusion matrix and ``n`` stay sample counts.

    Degenerate cases: no overlapping pair raises :class:`InputError`; a single query gives no CI
    (``ci95`` None, with a note); a statistic that is undefined (kappa when both raters used a
    single grade, AUC with one class) is NaN (``null`` in JSON), with a note.
    """
    if judge_scale is not None and tuple(judge_scale) != tuple(scale):
        return _on_judge_scale(judge, human, judge_scale, scale=scale, binary_threshold=binary_threshold,
                               expected=expected, annotations=annotations, n_boot=n_boot, seed=seed, name=name,
                               model=model, n_unjudged=n_unjudged)
    scale = check_scale(scale)
    threshold = check_threshold(binary_threshold, scale)
    check_labels_in_scale(judge, scale, what="judge labels")
    check_labels_in_scale(human, scale, what="human labels")
    if n_boot < 0:
        raise InputError(f"n_boot must be >= 0, got {n_boot}")
    pairs = align(judge, human, scale, expected)
    n = len(pairs.keys)
    if n == 0:
        raise InputError(
            "no (query, doc) pair is labeled by both the judge and the humans; check that the query and doc ids "
            "match (same id scheme in both files)"
        )
    pw = pair_weights(pairs, weights)
    if pw is not None and bool((pw == pw[0]).all()):  # one weight for every pair (a queries sample): every statistic
        pw = None  # is the unweighted one, and a note on weighting would say nothing
    k = len(scale)
    scale_arr = np.asarray(scale)
    nq = len(pairs.queries)
    per_query = S.confusions(pairs.human, pairs.judge, pairs.group, nq, k, weights=pw)
    conf = per_query.sum(axis=0)
    counts = conf if pw is None else S.confusions(pairs.human, pairs.judge, pairs.group, nq, k).sum(axis=0)
    notes: list[str] = []
    boot_ok = n_boot > 0 and nq >= 2
    if nq < 2:
        notes.append("one query only: no bootstrap CI (the bootstrap resamples queries and needs at least 2)")
    elif boot_ok and nq < FEW_QUERIES:
        notes.append(APPROX_NOTE.format(nq=nq, few=FEW_QUERIES, method=calibration_ci(nq, STUDENTIZED_MAX_QUERIES)))
    if pw is not None:
        notes.append("weighted by the pairs' inclusion weights: every statistic estimates the population value "
                     "(weighted confusion matrix); the confusion matrix shown holds sample counts")
    rng = np.random.default_rng(seed)
    weights_q = S.query_weights(nq, n_boot, rng) if boot_ok else None
    jack_q = JackknifeRows(nq) if boot_ok else None  # leave-one-query-out rows, made a chunk at a time
    method = calibration_ci(nq, STUDENTIZED_MAX_QUERIES).name

    from sklearn.metrics import cohen_kappa_score

    h_grades, j_grades = scale_arr[pairs.human], scale_arr[pairs.judge]
    labels = list(scale)

    def sk_kappa(weights_name: str | None, a=h_grades, b=j_grades, lab=labels) -> float:
        """scikit-learn's kappa; NaN (documented) where it is undefined instead of sklearn's warning."""
        idx_a, idx_b = np.searchsorted(lab, a), np.searchsorted(lab, b)
        one = np.zeros(len(a), dtype=np.int64)
        if not np.isfinite(S.kappa(S.confusions(idx_a, idx_b, one, 1, len(lab), weights=pw)[0])):
            return float("nan")
        return float(cohen_kappa_score(a, b, labels=lab, weights=weights_name, sample_weight=pw))

    def studentized(value: float, fn, n_: int, bounds=(-1.0, 1.0), scale="atanh") -> Agreement:
        """``fn`` of confusion matrices ``(..., k, k)``: the bootstrap-t interval (relgrade.stats), on the atanh
        scale for the statistics in [-1, 1] (kappas, alpha)."""
        if weights_q is None:
            return Agreement(float(value), None, n_)
        if method == BCA.name:  # many queries: BCa is as good there and O(B Q) instead of O(B Q^2)
            return bca_agreement(value, fn(S.resample(per_query, weights_q)), n_, fn(leave_one_out(per_query)))
        return Agreement(float(value), with_width(studentized_ci(fn, per_query, weights_q, bounds=bounds, scale=scale)),
                         n_)

    stats: dict[str, Agreement] = {}
    for key, w in (("kappa", "unweighted"), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic")):
        value = sk_kappa(None if w == "unweighted" else w)
        stats[key] = studentized(value, lambda c, w=w: S.kappa(c, w), n)
    cut = scale.index(threshold)
    hb, jb = (h_grades >= threshold).astype(int), (j_grades >= threshold).astype(int)
    stats["binary_kappa"] = studentized(sk_kappa(None, hb, jb, [0, 1]), lambda c: S.kappa(S.binarise(c, cut)), n)
    alpha_value = _kripp(h_grades, j_grades, scale) if pw is None else float(S.ordinal_alpha(S.coincidences_two(conf)))
    # two raters' ordinal alpha lies in [-1, 1] but for a handful of pairs; an estimate outside falls back to raw
    stats["krippendorff_alpha"] = studentized(alpha_value, lambda c: S.ordinal_alpha(S.coincidences_two(c)), n)
    stats["accuracy"] = studentized(float(S.accuracy(conf)), S.accuracy, n, (0.0, 1.0), "raw")
    span = float(scale[-1] - scale[0])
    stats["leniency"] = studentized(float(S.leniency(conf, scale_arr)), lambda c: S.leniency(c, scale_arr), n,
                                    (-span, span), "raw")

    precision, recall = S.precision_recall(conf)
    per_grade = {
        g: {
            "precision": studentized(float(precision[i]), lambda c, i=i: S.precision_recall(c)[0][..., i],
                                     int(counts[:, i].sum()), (0.0, 1.0), "raw"),
            "recall": studentized(float(recall[i]), lambda c, i=i: S.precision_recall(c)[1][..., i],
                                  int(counts[i, :].sum()), (0.0, 1.0), "raw"),
        }
        for i, g in enumerate(scale)
    }

    continuous: dict[str, Agreement] = {}
    if pairs.score is not None:
        continuous, cont_notes = _continuous(pairs, h_grades, threshold, k, weights_q, jack_q, pw)
        notes.extend(cont_notes)

    for key in ("kappa", "kappa_quadratic", "binary_kappa", "krippendorff_alpha"):
        if not math.isfinite(stats[key].value):
            notes.append(f"{key} is undefined (null): both raters used a single value on these pairs")
    if len(set(pairs.human.tolist())) == 1:
        notes.append(f"the human labels use one grade only ({scale[pairs.human[0]]}): agreement statistics are "
                     "degenerate; label a sample that covers several grades")

    human_ceiling = None
    if annotations:
        human_ceiling = human_agreement(annotations, judge=judge, scale=scale, n_boot=n_boot, seed=seed)
        if human_ceiling is not None and human_ceiling.judge_kappa is not None:
            hk, jk_ = human_ceiling.pairwise_kappa.value, human_ceiling.judge_kappa.value
            if math.isfinite(hk) and math.isfinite(jk_) and hk > 0:
                notes.append(f"against the human ceiling (κ {hk:.2f} between annotators) the judge reaches "
                             f"κ {jk_:.2f} "
                             f"on the same items ({100 * jk_ / hk:.0f}% of the ceiling)")
    if model and model.startswith("local/"):
        notes.append(LOCAL_NOTE.format(model=model))

    judge_pairs = sum(len(d) for d in judge.values())
    unlabeled = [q for q in judge if q not in human and judge[q]]  # queries the judge graded and humans did not
    human_pairs = sum(len(d) for d in human.values())
    return CalibrationReport(
        judge=name,
        model=model,
        scale=scale,
        binary_threshold=threshold,
        n_pairs=n,
        n_queries=nq,
        kappa=stats["kappa"],
        kappa_linear=stats["kappa_linear"],
        kappa_quadratic=stats["kappa_quadratic"],
        binary_kappa=stats["binary_kappa"],
        krippendorff_alpha=stats["krippendorff_alpha"],
        accuracy=stats["accuracy"],
        leniency=stats["leniency"],
        confusion_matrix=tuple(tuple(int(c) for c in row) for row in counts),
        per_grade=per_grade,
        judge_distribution=tuple(int(c) for c in counts.sum(axis=0)),
        human_distribution=tuple(int(c) for c in counts.sum(axis=1)),
        continuous=continuous,
        verdict=verdict(stats["kappa"], n_pairs=n, n_queries=nq, model=model, method=method,
                        unlabeled_queries=len(unlabeled), unlabeled_pairs=sum(len(judge[q]) for q in unlabeled)),
        human_agreement=human_ceiling,
        n_unjudged=n_unjudged,
        n_judge_only=judge_pairs - n,
        n_human_only=human_pairs - n,
        notes=tuple(notes),
        n_boot=n_boot,
        seed=seed,
        weighted=pw is not None,
    )


def _kripp(a: np.ndarray, b: np.ndarray, scale: tuple[int, ...]) -> float:
    import krippendorff

    data = np.vstack([a, b]).astype(np.float64)
    if len(np.unique(data)) < 2:
        return float("nan")
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=list(scale)))


def _on_judge_scale(judge, human, judge_scale, *, scale, binary_threshold, annotations, **kwargs) -> CalibrationReport:
    """:func:`agreement` of a judge on its own scale (the labels entry point; statistics unchanged)."""
    from dataclasses import replace

    from relgrade.io import on_judge_scale

    scale = check_scale(scale)
    j_scale, human_on, binarized = on_judge_scale(human, judge_scale, scale, binary_threshold)
    if not binarized:
        return agreement(judge, human_on, scale=j_scale, binary_threshold=binary_threshold, annotations=annotations,
                         **kwargs)
    check_threshold(binary_threshold, scale)
    ann = on_judge_scale(annotations, judge_scale, scale, binary_threshold)[1] if annotations else None
    rep = agreement(judge, human_on, scale=j_scale, binary_threshold=j_scale[1], annotations=ann, **kwargs)
    span = f"{j_scale[0]}-{j_scale[1]}"
    note = (f"binary judge (scale {span}): compared with the human grades binarized at --threshold "
            f"{binary_threshold} (grade >= {binary_threshold} counts as {j_scale[1]}, below as {j_scale[0]}); every "
            "statistic here is on these binary labels")
    return replace(rep, notes=(note, *rep.notes))
