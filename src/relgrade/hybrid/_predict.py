"""The judges' prediction of each query's metric, which PPI corrects with the human labels.

:func:`predict` is the one place ``estimate`` and ``rank_systems`` get their ``Yhat`` from. Two kinds:

* ``"hard"``: the metric computed on one judge's grades (by the metrics core, as on human grades);
  with an adopted grade mapping fitted on these human labels, on its cross-fitted mapped grades.
* ``"soft"`` (default): for every document of a query's pool (the documents any judge graded and
  those the runs retrieved), the probability of each human grade given the judges' grades, from a
  small regularised model (:mod:`relgrade.calibration._grade_model`: one-hot of each judge's grade, a
  column per judge for "did not grade it", and the judge's expected grade where its details give one,
  as a residual from its grade). Training pairs are the pool pairs of human-labeled queries, with
  their human grade, 0 where the humans did not label the pair (the metric's own rule for an
  unlabeled document), so a pair no judge graded gets the fitted base rate of such pairs, never a
  silent 0. Each query's prediction is the metric's expectation under those probabilities
  (:mod:`relgrade.hybrid._expect`: recall@k, precision@k, mrr and the answerability with the documents
  independent given the judges, exact; nDCG the plug-in of the expected gains, frac_recall with a query's
  documents comonotone, the documented approximations). Several judges are one model over all their grades:
  a jury of cheap judges is calibrated jointly. That expectation is then **blended** half and half with the
  metric on each judge's own (raw) grades, averaged over the judges (``description["blend"]``): a fixed
  combination of two control variates, so no weight is fitted on the labels and no degree of freedom spent.
  Why: these judges err by query (a misread intent shifts every grade of that query), which a pair-level model
  P(human grade | judge grade) cannot see, while the metric on the judge's own grades carries it through the
  metric's within-query structure; the two err differently. On ``benchmarks/ppi_trec_dl.py``'s prediction table
  (10 labeled queries) the blend's PPI width ratio is within 0.004 of the hard prediction's at kappa 0.3, well
  below it at 0.6 and up to 0.008 above at 0.1 (the README's table); the calibrated expectation alone was up to
  0.014 above hard at 0.3 (nDCG@10, MRR). A vector ``lam`` over both, its weights fitted in-sample (optimistic)
  with one degree of freedom charged, gained 0.01-0.02 over hard on nDCG@10 and MRR and lost 0.02 on recall@5
  (an ad-hoc run of 40 draws): the two predictions are highly correlated, so a fitted weight promises little
  beyond its optimistic in-sample gain.

The labels a fit uses never rectify it (Zrnic & Candès, "Cross-prediction-powered inference", PNAS
2024): the labeled queries are split into ``folds`` (:func:`relgrade.calibration.query_folds`, the split of
``crossfit_mapping``); a labeled query's prediction comes from the model fitted on the other folds,
an unlabeled query's is the mean of the fold models' predictions. The human labels of a labeled
query therefore never move its own prediction (tested).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from relgrade._defaults import DEFAULT_FOLDS, DEFAULT_PREDICTION, PREDICTIONS
from relgrade._errors import InputError
from relgrade.io import Qrels, Run
from relgrade.io._labels import DEFAULT_SCALE, span
from relgrade.metrics import Metric
from relgrade.hybrid._soft import soft_values
from relgrade.hybrid._values import answerable, as_qrels, per_query_values, split_queries



@dataclass(frozen=True)
class JudgeSet:
    """One judge's labels: ``grades`` in use (mapped when adopted: the hard prediction's), ``raw`` (its own: the
    soft prediction's features), ``expected`` grades where its details give them, its declared ``scale``."""

    name: str
    grades: Qrels
    raw: Mapping[str, Mapping[str, int]]
    expected: Mapping[str, Mapping[str, float]]
    scale: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Prediction:
    """``values`` (runs x queries x metrics): labeled queries first (out of fold), then the others (fold mean);
    ``answerable`` (queries): the predicted probability that a query has a relevant document; ``description``:
    what the JSON of every command records."""

    values: np.ndarray
    answerable: np.ndarray
    queries: tuple[str, ...]
    n_labeled: int
    description: dict[str, Any]


def judge_sets(judges: Any) -> tuple[JudgeSet, ...]:
    """One or several judges (a list or tuple of them) as :class:`JudgeSet`: Qrels, ``{qid: {doc_id: grade}}``,
    a :class:`~relgrade.hybrid.JudgeInput` (keeps expected grades and raw grades), or a JudgeSet."""
    many = judges if isinstance(judges, (list, tuple)) else [judges]
    if not many:
        raise InputError("give at least one judge's labels (--judge)")
    out, names = [], set()
    for i, judge in enumerate(many):
        if isinstance(judge, JudgeSet):
            js = judge
        elif hasattr(judge, "labels") and hasattr(judge.labels, "expected"):  # a JudgeInput read as columns
            grades = judge.to_qrels()  # no mapping adopted: the grades in use are the raw ones
            js = JudgeSet(judge.source or judge.model or "judge", grades, grades.labels, judge.labels.expected(),
                          judge.scale)
        elif hasattr(judge, "labels") and hasattr(judge, "n_unjudged"):  # a JudgeInput
            raw: dict[str, dict[str, int]] = {}
            expected: dict[str, dict[str, float]] = {}
            for lab in judge.labels:
                raw.setdefault(lab.query_id, {})[lab.doc_id] = lab.judge_grade if lab.mapped else lab.grade
                e = lab.expected_grade
                if e is None and lab.distribution:
                    e = sum(g * p for g, p in lab.distribution.items()) / max(sum(lab.distribution.values()), 1e-12)
                if e is not None:
                    expected.setdefault(lab.query_id, {})[lab.doc_id] = float(e)
            js = JudgeSet(judge.source or judge.model or "judge", judge.to_qrels(), raw, expected, judge.scale)
        else:
            q = as_qrels(judge, "judge")
            js = JudgeSet(q.source or "judge", q, q.labels, {})
        name = js.name if js.name not in names else f"{js.name} ({i + 1})"
        names.add(name)
        out.append(js if name == js.name else JudgeSet(name, js.grades, js.raw, js.expected, js.scale))
    return tuple(out)


def union_qrels(sets: Sequence[JudgeSet]) -> Qrels:
    """Every pair some judge graded (the first judge's grade) and every judge's topics: for splits and coverage."""
    if len(sets) == 1:
        return sets[0].grades
    labels: dict[str, dict[str, int]] = {}
    topics: dict[str, None] = {}
    for js in sets:
        topics.update(dict.fromkeys(js.grades.topics))
        for q, docs in js.grades.labels.items():
            for d, g in docs.items():
                labels.setdefault(q, {}).setdefault(d, g)
    return Qrels(labels, topics=topics, source=" + ".join(js.name for js in sets))


def check_judges(sets: Sequence[JudgeSet], labeled: Sequence[str], prediction: str) -> None:
    """The bad inputs :func:`predict` refuses, each with one line naming the judge and the fix."""
    if prediction not in PREDICTIONS:
        raise InputError(f"--prediction must be one of {', '.join(PREDICTIONS)}, got {prediction!r}")
    if prediction == "hard" and len(sets) > 1:
        raise InputError(f"--prediction hard computes the metric on one judge's grades, got {len(sets)} --judge; "
                         "use --prediction soft to combine judges")
    first = sets[0].scale or DEFAULT_SCALE
    for js in sets:
        if (js.scale or DEFAULT_SCALE) != first:
            raise InputError(f"judge {js.name} grades on {span(js.scale or DEFAULT_SCALE)} but {sets[0].name} on "
                             f"{span(first)}: give judges on one scale")
        if not set(labeled).intersection(js.grades.labels):
            raise InputError(f"judge {js.name} grades none of the {len(labeled)} human-labeled queries, so its "
                             "errors cannot be measured: judge the human-labeled queries too, or leave it out")
    pairs = [{(q, d) for q, docs in js.raw.items() for d in docs} for js in sets] if len(sets) > 1 else []
    for i in range(len(sets)):
        for j in range(i + 1, len(sets)):
            if not pairs[i] & pairs[j]:
                raise InputError(f"judges {sets[i].name} and {sets[j].name} have no (query, doc) pair in common, so "
                                 "they cannot be combined: judge the same pairs with both")


def check_folds(folds: int | None, n_labeled: int) -> int:
    """The number of folds: ``folds`` (2..labeled queries), default :data:`DEFAULT_FOLDS` or fewer."""
    if folds is None:
        return min(DEFAULT_FOLDS, n_labeled)
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise InputError(f"--folds must be an integer >= 2, got {folds!r}")
    if folds > n_labeled:
        raise InputError(f"--folds {folds} is more than the {n_labeled} human-labeled queries; use at most "
                         f"{n_labeled} (one query per fold)")
    return folds


def predict(runs: Run | Sequence[Run], human, judges, metrics: Sequence[Metric], *, rel_threshold: int = 1,
            prediction: str = DEFAULT_PREDICTION, folds: int | None = None, seed: int = 0,
            crossfit: Any = None) -> Prediction:
    """Each query's predicted metric values for each run, and its predicted answerability (module docstring).

    ``runs``: one run or several (``rank_systems``: one model and one pool per query for all of them);
    ``human``: the human labels (Qrels or ``{qid: {doc_id: grade}}``); ``judges``: one judge or a list
    (:func:`judge_sets`); ``crossfit``: a :class:`relgrade.calibration.CrossFit` for ``prediction="hard"``
    with an adopted mapping fitted on these human labels. Queries: the human-labeled ones, then the
    judges' other ones (:func:`relgrade.hybrid._values.split_queries`).
    """
    runs = [runs] if isinstance(runs, Run) else list(runs)
    human_q = as_qrels(human, "human")
    sets = judge_sets(judges)
    labeled, unlabeled = split_queries(human_q, union_qrels(sets))
    check_judges(sets, labeled, prediction)
    k = check_folds(folds, len(labeled))
    population = labeled + unlabeled
    if prediction == "hard":
        values, ans, desc = _hard(runs, sets[0], metrics, labeled, unlabeled, rel_threshold, crossfit)
    else:
        if crossfit is not None:
            raise InputError("crossfit= maps a judge's grades for prediction='hard'; the soft prediction cross-fits its "
                             "own model on the judge's raw grades (pass prediction='hard' to use the mapping)")
        values, ans, desc = soft_values(runs, human_q, sets, metrics, labeled, unlabeled, rel_threshold, k, seed)
    description = {"kind": prediction, "judges": [js.name for js in sets], **desc}
    return Prediction(values, ans, population, len(labeled), description)


def _hard(runs, js: JudgeSet, metrics, labeled, unlabeled, t, crossfit):
    population = labeled + unlabeled
    judge_q = js.grades
    if crossfit is None:
        values = np.stack([per_query_values(judge_q, run, metrics, population, rel_threshold=t) for run in runs])
        return values, answerable(judge_q, population, t), {"folds": None, "model": "the metric on the judge's grades"}
    folds = [Qrels(u) for u in crossfit.unlabeled]
    values = np.stack([np.vstack([
        per_query_values(Qrels(crossfit.labeled), run, metrics, labeled, rel_threshold=t),
        np.mean([per_query_values(u, run, metrics, unlabeled, rel_threshold=t) for u in folds], axis=0)])
        for run in runs])
    ans = np.concatenate([answerable(Qrels(crossfit.labeled), labeled, t),
                          np.mean([answerable(u, unlabeled, t) for u in folds], axis=0)
                          if folds and unlabeled else np.zeros(len(unlabeled))])
    return values, ans, {"folds": len(crossfit.folds),
                         "model": "the metric on the judge's grades mapped by a cross-fitted grade mapping"}
