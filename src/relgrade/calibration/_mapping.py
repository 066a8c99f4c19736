"""Mapping the judge's grades onto the human scale, adopted only when it beats the noise held out.

:func:`fit_mapping` chooses a monotone map by cross-validated kappa (grouped by query,
``GroupKFold``): inside each training fold it takes the map with the best training kappa among

* every monotone table from the judge's grades to the human grades (35 for a 0-3 scale; see
  :mod:`relgrade.calibration._monotone`), and
* when the judge gave an expected grade for every pair, cut points on the expected grade,

and predicts the held-out fold with it. The out-of-fold predictions of each family give its held-out
kappa. The choice between the families is *nested*: inside each outer training part an inner
cross-validation over its queries picks the family (ties to the table), so the predictions that judge the
procedure never came from a fit or a choice that saw their queries. The guard
(:mod:`relgrade.calibration._guard`) compares these nested predictions with the judge's own grades (the
held-out gain) and re-runs the whole cross-validated fit on up to 400 bootstrap resamples of the queries; the
map is adopted only when its held-out gain is above 0 on at least 97.5% of them; otherwise the identity is
kept and the message says why. The map returned is the one the same search chooses on all pairs.

The earlier fitter (isotonic regression on the judge's grade, rounded to the scale) often merged
grades and was never adopted on real judges; ``benchmarks/calibration_trec_dl.py`` compares the two
on judges simulated from NIST grades (adoption rate and gain on queries not used for the fit).

A mapping fitted on some human labels makes the judge's mapped grades depend on those labels;
prediction-powered estimates that reuse them need :func:`relgrade.calibration.crossfit_mapping`. The
``fingerprint`` (:class:`relgrade.calibration.LabelFingerprint`) records which labels a mapping saw.

:func:`combine_judges` does the same for several judges: each judge alone, their median and majority
grade, and a fitted model (multinomial logistic regression on the judges' grades) under the same guard.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from relgrade._errors import InputError
from relgrade.calibration import _monotone as M
from relgrade.calibration import _stats as S
from relgrade.calibration._fingerprint import LabelFingerprint
from relgrade.calibration._guard import ADOPT_SHARE, REFIT_MAX, folds, gain_guard, gains, refit_adopts, refit_gains
from relgrade.calibration._pairs import Pairs, align, check_scale
from relgrade.calibration._results import DEFAULT_SCALE, Agreement, Labels, Scores
from relgrade.stats import percentile_ci

STATISTICS = {"kappa": "unweighted", "kappa_linear": "linear", "kappa_quadratic": "quadratic"}
KINDS = ("table", "cuts")


def _interp(x: float, points: Sequence[tuple[float, float]]) -> float:
    """``numpy.interp(x, xs, ys)`` for one value: linear between knots, constant beyond the ends."""
    if x <= points[0][0]:
        return points[0][1]
    if x >= points[-1][0]:
        return points[-1][1]
    i = bisect.bisect_right([p[0] for p in points], x)
    (x0, y0), (x1, y1) = points[i - 1], points[i]
    return y0 if x1 == x0 else y0 + (x - x0) * (y1 - y0) / (x1 - x0)


def _nearest(values: np.ndarray, scale: tuple[int, ...]) -> np.ndarray:
    """Index of the nearest scale grade (ties to the higher grade, i.e. round half up)."""
    arr = np.asarray(scale, dtype=np.float64)
    dist = np.abs(np.asarray(values, dtype=np.float64)[..., None] - arr) - 1e-9 * np.arange(len(arr))
    return np.argmin(dist, axis=-1)


@dataclass(frozen=True)
class GradeMapping:
    """A monotone map from judge grade (or expected grade) to the human scale, as plain data.

    ``kind`` says how :meth:`apply` maps a value ``x``:

    * ``"table"``: ``points`` are knots ``(x, y)``; ``x`` is interpolated between them and rounded to
      the nearest grade of ``scale``. A fitted table has one knot per grade, so on a judge grade it is
      the table itself (:meth:`table`). Knots of the earlier isotonic fitter read the same way.
    * ``"cuts"``: ``cuts`` are cut points ``c_1 <= ... <= c_{k-1}`` on the expected grade; ``x`` gets
      the grade at position ``#{i: c_i <= x}`` of ``scale``.

    ``input`` is ``"grade"`` or ``"expected_grade"`` (what the map reads; see :meth:`apply_to`).
    When ``adopted`` is False, :meth:`apply` is the identity (the judge's grade, rounded to the scale)
    and ``message`` says why the fit was not kept. ``fingerprint`` identifies the human labels the map
    was fitted on; ``heldout`` holds the held-out kappa of each family tried.
    """

    adopted: bool
    input: str
    scale: tuple[int, ...]
    points: tuple[tuple[float, float], ...]
    statistic: str
    kappa_before: Agreement | None
    kappa_after: Agreement | None
    gain: Agreement | None
    n_folds: int
    message: str
    kind: str = "table"
    cuts: tuple[float, ...] = ()
    fingerprint: LabelFingerprint | None = None
    heldout: tuple[tuple[str, float], ...] = ()

    def apply(self, value: float) -> int:
        """Human-scale grade for a judge grade or expected grade."""
        x = float(value)
        if self.adopted and self.kind == "cuts":
            return self.scale[bisect.bisect_right(self.cuts, x)]
        if self.adopted and self.points:
            x = _interp(x, self.points)
        # nearest grade of the scale, ties to the higher one (round half up), as _nearest
        return self.scale[min(range(len(self.scale)), key=lambda i: abs(x - self.scale[i]) - 1e-9 * i)]

    def apply_to(self, grade: int, expected: float | None = None) -> int:
        """Map one judgment: its expected grade when the map reads expected grades and it has one, else its grade."""
        use_expected = self.input == "expected_grade" and expected is not None
        return self.apply(expected if use_expected else grade)

    def table(self) -> dict[int, int]:
        """``{judge_grade: human_grade}`` over the scale (what :meth:`apply` gives each grade)."""
        return {g: self.apply(g) for g in self.scale}

    def to_dict(self) -> dict[str, Any]:
        return {
            "adopted": self.adopted,
            "input": self.input,
            "kind": self.kind,
            "scale": list(self.scale),
            "points": [[round(x, 6), round(y, 6)] for x, y in self.points],
            "cuts": list(self.cuts),  # exact: a cut lies between two scores that may differ in the 7th digit
            "table": {str(k): v for k, v in self.table().items()},
            "statistic": self.statistic,
            "heldout_before": None if self.kappa_before is None else self.kappa_before.to_dict(),
            "heldout_after": None if self.kappa_after is None else self.kappa_after.to_dict(),
            "gain": None if self.gain is None else self.gain.to_dict(),
            "heldout_by_kind": {k: (round(v, 6) if np.isfinite(v) else None) for k, v in self.heldout},
            "n_folds": self.n_folds,
            "fingerprint": None if self.fingerprint is None else self.fingerprint.to_dict(),
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "GradeMapping":
        """Rebuild from :meth:`to_dict` output (e.g. ``calibrate --json``'s ``"mapping"``); ValueError if malformed."""
        def agreement(d):
            if not d:
                return None
            return Agreement(float("nan") if d["value"] is None else d["value"],
                             None if d["ci95"] is None else tuple(d["ci95"]), d["n"])

        scale = tuple(int(g) for g in data["scale"])
        kind = data.get("kind", "table")
        cuts = tuple(float(c) for c in data.get("cuts") or ())
        if kind not in KINDS:
            raise ValueError(f"'kind' must be one of {list(KINDS)}, got {kind!r}")
        if kind == "cuts" and bool(data["adopted"]) and (len(cuts) != len(scale) - 1 or list(cuts) != sorted(cuts)):
            raise ValueError(f"'cuts' must be {len(scale) - 1} non-decreasing numbers for the scale {list(scale)}")
        fp = data.get("fingerprint")
        heldout = tuple((str(k), float("nan") if v is None else float(v))
                        for k, v in (data.get("heldout_by_kind") or {}).items())
        return cls(bool(data["adopted"]), str(data["input"]), scale,
                   tuple((float(x), float(y)) for x, y in data["points"]), data.get("statistic", "kappa"),
                   agreement(data.get("heldout_before")), agreement(data.get("heldout_after")),
                   agreement(data.get("gain")), int(data.get("n_folds", 0)), data.get("message", ""),
                   kind, cuts, None if fp is None else LabelFingerprint.from_dict(fp), heldout)


def identity_mapping(scale: Sequence[int] = DEFAULT_SCALE, message: str = "identity") -> GradeMapping:
    return GradeMapping(False, "grade", tuple(scale), (), "kappa", None, None, None, 0, message)


def _fit(pairs: Pairs, idx: np.ndarray, scale: tuple[int, ...], weight: str, kinds: Sequence[str]) -> dict[str, np.ndarray]:
    """The best table (and cut points) on the pairs ``idx``: ``{kind: table or cuts}``."""
    table = M.best_table(pairs.human[idx], pairs.judge[idx], len(scale), weight)
    out = {"table": table}
    if "cuts" in kinds:
        out["cuts"] = M.best_cuts(pairs.human[idx], pairs.score[idx], scale, weight, table=table)
    return out


def _predict(kind: str, params: np.ndarray, pairs: Pairs, idx: np.ndarray) -> np.ndarray:
    return params[pairs.judge[idx]] if kind == "table" else M.predict_cuts(pairs.score[idx], params)


def _choose(pairs: Pairs, idx: np.ndarray, scale: tuple[int, ...], weight: str, kinds: Sequence[str],
            n_splits: int) -> tuple[str, dict[str, np.ndarray]]:
    """What :func:`fit_mapping` picks on the pairs ``idx`` alone: every family fitted on ``idx`` and, with several
    families, the one with the best held-out statistic in a cross-validation over the queries of ``idx`` (ties to
    the table). Returns ``(chosen kind, {kind: params})``."""
    chosen = kinds[0]
    if len(kinds) > 1 and len(np.unique(pairs.group[idx])) >= 2:
        _, inner = folds(pairs.group[idx], n_splits)
        oof = {kind: np.empty(len(idx), dtype=np.int64) for kind in kinds}
        for train, test in inner:
            for kind, params in _fit(pairs, idx[train], scale, weight, kinds).items():
                oof[kind][test] = _predict(kind, params, pairs, idx[test])
        inner_kappa = [S.kappa(M.confusion(pairs.human[idx], oof[kind], len(scale)), weight) for kind in kinds]
        chosen = kinds[M.first_best(np.array(inner_kappa))]
    return chosen, _fit(pairs, idx, scale, weight, kinds)


def _describe(kind: str, params: np.ndarray, scale: tuple[int, ...]) -> str:
    if kind == "table":
        table = {g: scale[int(t)] for g, t in zip(scale, params)}
        how = (f"best of {M.n_tables(len(scale))} by kappa" if M.n_tables(len(scale)) <= M.MAX_TABLES
               else "found by local search")
        return f"the monotone table {table} ({how})"
    return "the cut points " + ", ".join(f"{c:.3f}" for c in params) + " on the judge's expected grade"


def fit_mapping(
    judge: Labels,
    human: Labels,
    *,
    expected: Scores | None = None,
    scale: Sequence[int] = DEFAULT_SCALE,
    statistic: str = "kappa",
    n_splits: int = 5,
    n_boot: int = 1000,
    seed: int = 0,
) -> GradeMapping:
    """Fit the monotone judge-to-human map by cross-validated ``statistic`` and adopt it only if it beats identity beyond noise.

    Candidates, chosen inside each of ``n_splits`` folds grouped by query by training ``statistic``
    (``kappa``, ``kappa_linear`` or ``kappa_quadratic``): every monotone table on ``scale``, and, when
    ``expected`` holds a finite expected grade for every aligned pair, cut points on it (the family chosen
    by a nested cross-validation). Adoption rule: the held-out gain ``kappa(mapped grades) - kappa(judge
    grades)`` of the cross-validated fit, re-run on ``min(n_boot, 400)`` bootstrap resamples of the queries,
    is above 0 on at least 97.5% of them (the resampling stops once that is out of reach; ``gain.ci95`` holds
    the 2.5 and 97.5 percentiles of the gains on the resamples run). ``gain.value`` is the held-out gain on the
    sample itself.
    """
    scale = check_scale(scale)
    if statistic not in STATISTICS:
        raise InputError(f"statistic must be one of {sorted(STATISTICS)}, got {statistic!r}")
    weight = STATISTICS[statistic]
    pairs = align(judge, human, scale, expected)
    n, nq, k = len(pairs.keys), len(pairs.queries), len(scale)
    if n == 0:
        raise InputError("no (query, doc) pair is labeled by both the judge and the humans; nothing to fit a mapping on")
    fingerprint = LabelFingerprint.of(pairs.keys)
    if nq < 2:
        return GradeMapping(False, "grade", scale, (), statistic, None, None, None, 0,
                            "kept identity because a cross-validation grouped by query needs at least 2 queries",
                            fingerprint=fingerprint)
    use_cuts = pairs.score is not None and bool(np.isfinite(pairs.score).all())
    kinds = KINDS if use_cuts else KINDS[:1]
    n_folds, outer = folds(pairs.group, n_splits)
    oof = {kind: np.empty(n, dtype=np.int64) for kind in kinds}
    nested = np.empty(n, dtype=np.int64)  # each held-out fold predicted by what the procedure chose without it
    for train, test in outer:
        picked, params = _choose(pairs, train, scale, weight, kinds, n_splits)
        for kind in kinds:
            oof[kind][test] = _predict(kind, params[kind], pairs, test)
        nested[test] = oof[picked][test]
    heldout = tuple((kind, float(S.kappa(M.confusion(pairs.human, oof[kind], k), weight))) for kind in kinds)
    per_id = S.confusions(pairs.human, pairs.judge, pairs.group, nq, k)
    per_new = S.confusions(pairs.human, nested, pairs.group, nq, k)
    before, after, _ = gain_guard(per_id, per_new, weight, n_boot, seed, n)
    chosen, params = _choose(pairs, np.arange(n), scale, weight, kinds, n_splits)
    final = params[chosen]
    identity = chosen == "table" and bool((final == np.arange(k)).all())
    n_refit = 0 if identity else min(n_boot, REFIT_MAX)
    reps = refit_gains(pairs.group, pairs.human, pairs.judge, k, weight, n_splits,
                       lambda train: _fit(pairs, train, scale, weight, (chosen,))[chosen],
                       lambda fitted, test: _predict(chosen, fitted, pairs, test), n_refit,
                       np.random.default_rng(seed)) if n_refit > 0 else None
    gain = Agreement(after.value - before.value, None if reps is None else percentile_ci(reps), n)
    what = _describe(chosen, final, scale)
    ci = gain.ci95
    detail = (f"held-out {statistic} {before.value:.3f} -> {after.value:.3f}, gain {gain.value:+.3f} ({n_folds}-fold "
              f"by query, nested)")
    if reps is not None:
        lost = int(np.sum(~(reps > 0)))
        detail += (f"; re-fitted on resamples of the queries it failed to gain on {lost} of "
                   + (f"{n_refit}" if len(reps) == n_refit else f"the first {len(reps)}, so it cannot gain on "
                      f"{ADOPT_SHARE:.1%} of {n_refit}")
                   + ("" if ci is None else f" (95% of gains {ci[0]:+.3f} to {ci[1]:+.3f})"))
    if use_cuts:
        detail += "; held-out " + ", ".join(f"{kd} {v:.3f}" for kd, v in heldout)
    adopted = reps is not None and refit_adopts(reps, n_refit) and not identity
    if adopted:
        message = f"adopted {what}: {detail}"
    else:
        why = ("the best monotone table is the identity" if identity else
               f"the held-out {statistic} falls with {what}" if gain.value < 0 else
               f"the held-out {statistic} gain of {what} is not above the noise")
        message = f"kept identity because {why} ({detail})"
    points, cuts = (), ()
    if adopted and chosen == "table":
        points = tuple((float(g), float(scale[int(t)])) for g, t in zip(scale, final))
    elif adopted:
        cuts = tuple(float(c) for c in final)
    source = "expected_grade" if adopted and chosen == "cuts" else "grade"
    return GradeMapping(adopted, source, scale, points, statistic, before, after, gain, n_folds, message,
                        chosen if adopted else "table", cuts, fingerprint, heldout)


@dataclass(frozen=True)
class Combination:
    """One way to use several judges: its kappa and, against the best single judge, the gain (paired CI)."""

    name: str
    kappa: Agreement
    gain: Agreement | None
    adopted: bool | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kappa": self.kappa.to_dict(),
                "gain_vs_best": None if self.gain is None else self.gain.to_dict(),
                "adopted": self.adopted, "message": self.message}


@dataclass(frozen=True)
class CombinationReport:
    n_pairs: int
    n_queries: int
    best_judge: str
    combinations: tuple[Combination, ...]
    recommendation: str

    def to_dict(self) -> dict[str, Any]:
        return {"n_pairs": self.n_pairs, "n_queries": self.n_queries, "best_judge": self.best_judge,
                "combinations": [c.to_dict() for c in self.combinations], "recommendation": self.recommendation}


def combine_judges(
    judges: Mapping[str, Labels],
    human: Labels,
    *,
    scale: Sequence[int] = DEFAULT_SCALE,
    n_splits: int = 5,
    n_boot: int = 1000,
    seed: int = 0,
) -> CombinationReport:
    """Each judge, the median and majority of the judges, and a fitted model, on pairs every judge graded.

    The median is the lower median of the judges' grades; the majority is the most frequent grade
    (ties broken by the lower median of the tied grades). The fitted model (multinomial logistic
    regression on the judges' grades) is evaluated out of fold by query. Every combination is adopted
    only when the lower bound of its kappa gain over the best single judge (paired query bootstrap)
    is above 0. That interval is still the percentile one (``gain_guard(..., interval="percentile")``), which
    runs narrow with few queries; the mapping guard moved to the studentized interval (issue 29), this one has
    not been measured yet.
    """
    scale = check_scale(scale)
    names = list(judges)
    if len(names) < 2:
        raise InputError("combining judges needs at least two --judge files")
    pos = {g: i for i, g in enumerate(scale)}
    k = len(scale)
    common = {q: {d: g for d, g in docs.items() if all(d in judges[j].get(q, {}) for j in names)}
              for q, docs in human.items()}
    base = align(judges[names[0]], common, scale)
    if not base.keys:
        raise InputError("no pair is graded by every judge and by the humans; nothing to combine")
    grid = np.array([[pos[judges[j][q][d]] for j in names] for q, d in base.keys])
    nq = len(base.queries)
    singles = {}
    for i, name in enumerate(names):
        per = S.confusions(base.human, grid[:, i], base.group, nq, k)
        singles[name] = per
    best = max(names, key=lambda nm: np.nan_to_num(S.kappa(singles[nm].sum(axis=0)), nan=-2))
    per_best = singles[best]
    srt = np.sort(grid, axis=1)
    median = srt[:, (len(names) - 1) // 2]
    majority = np.empty(len(grid), dtype=np.int64)
    for r, row in enumerate(grid):
        counts = np.bincount(row, minlength=k)
        tied = np.flatnonzero(counts == counts.max())
        majority[r] = tied[(len(tied) - 1) // 2]
    from sklearn.linear_model import LogisticRegression

    fitted = np.empty(len(grid), dtype=np.int64)
    for train, test in folds(base.group, n_splits)[1]:
        classes = np.unique(base.human[train])
        if len(classes) < 2:
            fitted[test] = classes[0]
            continue
        model = LogisticRegression(max_iter=1000).fit(grid[train], base.human[train])
        fitted[test] = model.predict(grid[test])
    combos = []
    for name in names:
        v = S.kappa(singles[name].sum(axis=0))
        b, _, _ = gain_guard(singles[name], singles[name], "unweighted", n_boot, seed, len(grid), "percentile")
        combos.append(Combination(name, Agreement(float(v), b.ci95, len(grid)), None, None,
                                  "best single judge" if name == best else "single judge"))
    adopted_names = []
    for cname, pred in (("median", median), ("majority", majority), ("fitted model (out of fold)", fitted)):
        per = S.confusions(base.human, pred, base.group, nq, k)
        _, after, gain = gain_guard(per_best, per, "unweighted", n_boot, seed, len(grid), "percentile")
        ok = gains(gain.ci95)
        ci = gain.ci95
        ci_text = f"95% CI {ci[0]:+.3f} to {ci[1]:+.3f}" if ci else "no CI"
        msg = (f"{'adopt' if ok else 'not adopted'}: gain over {best} {gain.value:+.3f} ({ci_text})")
        if ok:
            adopted_names.append((gain.value, cname))
        combos.append(Combination(cname, after, gain, ok, msg))
    if adopted_names:
        rec = f"use the {max(adopted_names)[1]}: it beats the best single judge ({best}) beyond the noise"
    else:
        rec = f"use {best} alone: no combination beats it beyond the noise"
    return CombinationReport(len(grid), nq, best, tuple(combos), rec)
