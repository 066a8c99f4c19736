"""``rank_systems``: do human, judge and hybrid (PPI++) labels order the systems the same way?

For one metric and several runs (systems):

* three rankings, by the mean under **human** labels on the labeled queries, under **judge** labels on
  all queries, and the **ppi** (PPI++) estimate (see :mod:`relgrade.hybrid._estimate`). One ``lam`` serves
  every system and every pair (:func:`relgrade.stats._augmented.joint_lambda`, tuned so that the intervals
  are on average no wider than the human-only ones): each pair's PPI difference is then exactly the
  difference of the two systems' PPI means, so no pair contradicts the PPI ranking;
* Kendall's tau-b (``scipy.stats.kendalltau``) between each two rankings, with a 95% percentile CI from
  a bootstrap over queries (:mod:`relgrade.stats`): each replicate resamples the labeled and the unlabeled queries with
  replacement (stratified, so the labeled share stays fixed), recomputes the three sets of system
  means and their taus; replicates where a tau is undefined (all systems tie) are dropped and counted.
  This interval is descriptive, not a tested 95% claim: tau is a step function of the means, and with
  close systems the replicate taus all sit below a true tau of 1 (coverage 0.505 at 15 labeled queries
  and a gap of 0.02 between six systems, 0.985 at 0.05; ``benchmarks/tau_ci_coverage.py``);
* every pair of systems with ``b - a`` under each source: human and judge with the paired t interval
  and randomisation p-value of :func:`relgrade.metrics.paired_difference`, ppi with the PPI++ interval
  (:mod:`relgrade.hybrid._ppi`, on [-1, 1]) and the p-value of the same construction for the per-query
  difference (``Y = human_b - human_a``, ``Yhat = judge_b - judge_a``), both at the joint ``lam``;
  a pair *flips* when two sources order it in opposite directions (a tie under one source is no flip).

``no_answer`` is the rule of every command: with ``"exclude"`` (default) the values and differences are
means over the queries with a relevant document (human: labeled queries with one under human labels;
judge: queries with one under judge labels; ppi: the ratio estimate of
:func:`relgrade.hybrid._ratio.ratio_means`); with ``"zero"`` over all queries. A source without any
value (a judge that finds no query answerable) has ``None`` values and no ranking, never NaN. A query without a
relevant document scores 0 for every system, so the paired p-values do not depend on the rule, nor do
the bootstrap replicates of the taus, which are computed over all queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from relgrade._errors import InputError
from relgrade._intervals import PERCENTILE, PPI_JOINT
from relgrade._words import plural
from relgrade.io import Run
from relgrade.metrics import Metric, parse_metric
from relgrade.metrics._stats import paired_differences
from relgrade.metrics._evaluate import no_shared_queries
from relgrade.metrics._settings import DEFAULT_NO_ANSWER, check_n_boot, check_no_answer, check_rel_threshold
from relgrade.hybrid._active import active_intervals, active_pvalues, check_pool
from relgrade.hybrid._estimate import estimate, too_few_answerable
from relgrade.stats._weighted import ACTIVE_INTERVAL, ACTIVE_RATIO_INTERVAL
from relgrade.hybrid._predict import DEFAULT_PREDICTION, judge_sets, predict, union_qrels
from relgrade.hybrid._values import answerable, per_query_values, split_queries
from relgrade.hybrid._values import as_qrels as _as_qrels
from relgrade.hybrid._ppi import ppi_means, ppi_point, ppi_pvalues
from relgrade.hybrid._ratio import RATIO_INTERVAL, ratio_means
from relgrade.stats._augmented import joint_lambda, prepare

JOINT_INTERVAL = PPI_JOINT.name  # rank-systems: one lam for every system and pair

SOURCES = ("human", "judge", "ppi")
SHOWN = {"human": "human-only", "judge": "judge-only", "ppi": "PPI++"}  # the words every table prints for them


def _shown(text: str) -> str:
    """A source key or a ``"human vs judge"`` flip (JSON keys, kept) in the printed words."""
    return " vs ".join(SHOWN.get(part, part) for part in text.split(" vs "))


@dataclass(frozen=True)
class SourceDifference:
    """``b - a`` under one label source: value, 95% CI, two-sided p-value, and the test used."""

    diff: float
    ci95: tuple[float, float] | None
    p_value: float
    test: str

    def to_dict(self) -> dict[str, Any]:
        return {"diff": _finite(self.diff), "ci95": None if self.ci95 is None else [_finite(v) for v in self.ci95],
                "p_value": _finite(self.p_value), "test": self.test}


def _finite(v) -> float | None:
    """A number for JSON: None where it is not finite (NaN never reaches a report)."""
    return None if v is None or not np.isfinite(v) else float(v)


@dataclass(frozen=True)
class PairResult:
    a: str
    b: str
    by_source: dict[str, SourceDifference]
    flips: tuple[str, ...]  # e.g. ("human vs judge",)

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, **{s: d.to_dict() for s, d in self.by_source.items()},
                "flips": list(self.flips)}


@dataclass(frozen=True)
class TauResult:
    x: str
    y: str
    tau: float | None
    ci95: tuple[float, float] | None
    n_boot: int  # replicates with a defined tau

    def to_dict(self) -> dict[str, Any]:
        return {"tau": self.tau, "ci95": None if self.ci95 is None else list(self.ci95), "n_boot": self.n_boot,
                "interval": TAU_CI_NOTE}


OWN_NOTE = ("the ppi column is estimated with one lam for every system and pair and one prediction model over "
            "every run's pool, so that no pair's difference contradicts the ranking; it can differ from a system's own "
            "estimate")
TAU_CI_NOTE = (f"descriptive: {PERCENTILE.name} over queries; tau is a step function of the means and, with close "
               "systems, misses a true tau of 1 in about half of the draws at 15 labeled queries "
               "(benchmarks/tau_ci_coverage.py); decide on the pairwise differences")


@dataclass(frozen=True)
class RankingReport:
    metric: str
    systems: tuple[str, ...]
    values: dict[str, dict[str, float | None]]  # source -> system -> value (None: the source has none)
    rankings: dict[str, tuple[str, ...]]  # source -> systems best first
    taus: tuple[TauResult, ...]
    pairs: tuple[PairResult, ...]
    n_labeled: int
    n_queries: int
    settings: dict[str, Any] = field(default_factory=dict)
    own: dict[str, float] = field(default_factory=dict)  # each system's own estimate, as relgrade estimate gives it

    @property
    def flipped(self) -> tuple[PairResult, ...]:
        return tuple(p for p in self.pairs if p.flips)

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "systems": list(self.systems), "values": self.values,
                "rankings": {s: list(r) for s, r in self.rankings.items()},
                "kendall_tau": {f"{t.x} vs {t.y}": t.to_dict() for t in self.taus},
                "pairs": [p.to_dict() for p in self.pairs], "flipped_pairs": [f"{p.a} / {p.b}" for p in self.flipped],
                "n_labeled": self.n_labeled, "n_queries": self.n_queries, "settings": self.settings,
                "own_estimates": self.own, "why_ppi_differs_from_own": OWN_NOTE}

    def table(self) -> str:
        lines = [f"== {self.metric}: {plural(len(self.systems), 'system')}, {self.n_labeled} human-labeled of "
                 f"{plural(self.n_queries, 'query', 'queries')}",
                 f"{'system':<24}" + "".join(f"{SHOWN[s]:>11}" for s in SOURCES)]
        for name in self.rankings["ppi"]:
            lines.append(f"{name:<24}" + "".join(f"{'n/a':>11}" if self.values[s][name] is None
                                                 else f"{self.values[s][name]:>11.4f}" for s in SOURCES))
        if self.own:
            lines.append(f"each system's own estimate (relgrade estimate): "
                         + ", ".join(f"{name} {v:.4f}" for name, v in self.own.items()) + f"; {OWN_NOTE}")
        for t in self.taus:
            ci = "" if t.ci95 is None else f"  95% CI [{t.ci95[0]:+.2f}, {t.ci95[1]:+.2f}]"
            tau = "undefined" if t.tau is None else f"{t.tau:+.3f}"
            lines.append(f"Kendall tau {_shown(t.x)} vs {_shown(t.y)}: {tau}{ci}")
        if self.taus:
            lines.append("(tau CIs are " + TAU_CI_NOTE + ")")
        if self.flipped:
            lines.append(f"{plural(len(self.flipped), 'pair')} ordered differently by the label sources:")
        else:
            lines.append("no pair of systems is ordered differently by the label sources")
        for p in self.flipped:
            cells = "  ".join(f"{_shown(s)} {d.diff:+.4f} (p {d.p_value:.3f})" for s, d in p.by_source.items()
                              if np.isfinite(d.diff))
            lines.append(f"  {p.b} - {p.a}: {cells}  [{', '.join(map(_shown, p.flips))}]")
        return "\n".join(lines)


def _ranking(values: Mapping[str, float | None]) -> tuple[str, ...]:
    if any(v is None for v in values.values()):
        return ()
    return tuple(sorted(values, key=lambda s: (-values[s], s)))


def _tau(x: np.ndarray | None, y: np.ndarray | None) -> float | None:
    """Kendall's tau-b of two rankings' values (:func:`kendall_taus` of one pair: scipy's ``kendalltau`` statistic,
    without importing ``scipy.stats``, most of a second of the command), None when either is constant."""
    if x is None or y is None or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    tau = kendall_taus(np.asarray(x, dtype=np.float64)[None], np.asarray(y, dtype=np.float64)[None])[0]
    return None if not np.isfinite(tau) else float(tau)


def kendall_taus(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row pair of ``x`` and ``y`` (replicates x systems), NaN where either row is constant:
    scipy's ``kendalltau(x[b], y[b]).statistic`` (``con - dis`` over ``sqrt(tot - x ties) sqrt(tot - y ties)``, the
    same operations), for every replicate at once."""
    m = x.shape[1]
    i, j = np.triu_indices(m, 1)
    dx, dy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
    tot = m * (m - 1) // 2
    xtie, ytie = (dx == 0).sum(axis=1), (dy == 0).sum(axis=1)
    s = (dx * dy).sum(axis=1).astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = s / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    return np.where((xtie == tot) | (ytie == tot), np.nan, np.clip(tau, -1.0, 1.0))


def _boot_taus(H, J, n: int, N: int, lam: float, n_boot: int, rng, source_pairs) -> dict:
    """Each pair of sources' bootstrap replicates of tau (the defined ones, in draw order): labeled and unlabeled
    queries resampled apart (``query_indices(n)``, then ``query_indices(N)``), in blocks of replicates
    (:func:`relgrade.stats.index_blocks`: the same draws, memory by the block)."""
    from relgrade.stats import index_blocks

    boot: dict = {sp: [] for sp in source_pairs}
    for draws in index_blocks((n, N) if N else (n,), n_boot, rng, cells=4_000_000 // max(1, H.shape[1])):
        il = draws[0]
        iu = draws[1] + n if N else np.zeros((len(il), 0), np.int64)
        Hb, Jl, Ju = H[il], J[il], J[iu]
        m = {"human": Hb.mean(axis=1), "judge": np.concatenate([Jl, Ju], axis=1).mean(axis=1)}
        m["ppi"] = Hb.mean(axis=1) + lam * (Ju.mean(axis=1) - Jl.mean(axis=1)) if N else m["human"]
        for x, y in source_pairs:
            t = kendall_taus(m[x], m[y])
            boot[(x, y)].append(t[np.isfinite(t)])
    return {sp: np.concatenate(v) if v else np.zeros(0) for sp, v in boot.items()}


def _sign(v: float) -> int:
    return 0 if not np.isfinite(v) or abs(v) < 1e-12 else (1 if v > 0 else -1)


def rank_systems(
    runs: Mapping[str, Run] | Sequence[Run],
    human,
    judge,
    metric: str | Metric = "ndcg@10",
    *,
    rel_threshold: int = 1,
    no_answer: str = DEFAULT_NO_ANSWER,
    n_boot: int = 1000,
    n_perm: int = 10000,
    seed: int = 0,
    prediction: str = DEFAULT_PREDICTION,
    folds: int | None = None,
    design: Any = None,
) -> RankingReport:
    """Rank ``runs`` under human, judge and PPI++ labels; taus with bootstrap CIs; flips; paired tests.

    ``judge``: one judge's labels or a list; the "judge" values are the judges' prediction
    (:func:`relgrade.hybrid.predict`, ``prediction`` and ``folds``; one model and one pool per query for all
    runs; ``seed`` also draws the folds). ``design``: an active sample's (:func:`relgrade.hybrid.read_design`): the
    PPI++ values and pairs by the inverse-probability-weighted PPI++ at one joint ``lam`` (the taus' bootstrap
    still resamples the labeled queries uniformly: descriptive, as the module docstring says).
    """
    if not isinstance(runs, Mapping):
        runs = list(runs)
        names = [r.name for r in runs]
        if len(names) != len(set(names)):  # checked before the dict, which would drop one silently
            raise InputError(f"two runs share a name ({sorted({n for n in names if names.count(n) > 1})}); "
                             "give them distinct names (read_run(path, name=...))")
        runs = {r.name: r for r in runs}
    if len(runs) < 2:
        raise InputError(f"ranking systems needs at least 2 runs, got {len(runs)}")
    metric = parse_metric(metric)
    check_no_answer(no_answer)
    check_n_boot(n_boot)
    rel_threshold = check_rel_threshold(rel_threshold)
    human_q, sets = _as_qrels(human, "human"), judge_sets(judge)
    judge_q = union_qrels(sets)
    labeled, unlabeled = split_queries(human_q, judge_q)
    n, N = len(labeled), len(unlabeled)
    if n < 2:
        raise InputError(f"the human labels cover {n} queries; ranking with intervals needs at least 2 human-labeled queries")
    names = tuple(runs)
    population = labeled + unlabeled
    for r in runs.values():
        if not set(r.query_ids()).intersection(population):
            raise no_shared_queries(r, population, human_q.source)
    H = np.column_stack([per_query_values(human_q, r, [metric], labeled, rel_threshold=rel_threshold)[:, 0]
                         for r in runs.values()])
    pred = predict(list(runs.values()), human_q, sets, [metric], rel_threshold=rel_threshold, prediction=prediction,
                   folds=folds, seed=seed)
    J = pred.values[:, :, 0].T
    Ahat = pred.answerable
    A = answerable(human_q, labeled, rel_threshold)
    exclude = no_answer == "exclude"
    if exclude and (A > 0).sum() < 2:
        raise too_few_answerable(int((A > 0).sum()), n, human_q.source)
    pairs_ij = list(combinations(range(len(names)), 2))
    D = np.column_stack([H[:, j] - H[:, i] for i, j in pairs_ij]) if pairs_ij else np.zeros((n, 0))
    Dj = np.column_stack([J[:, j] - J[:, i] for i, j in pairs_ij]) if pairs_ij else np.zeros((n + N, 0))
    # one lam for every system and pair, tuned on the per-query values (every query counts) for both rules
    if design is not None:
        check_pool(design, labeled, unlabeled, human_q.source)
        joint = active_intervals(H, A, J, Ahat, n, "zero", 0.05, design, labeled, lam=None, joint=True)[2]
        lam, share = float(joint.lam[0]), float(joint.share[0])
    else:
        lam, share = joint_lambda([prepare(H, J[:n], J[n:], lower=0.0, upper=1.0)]) if N else (0.0, 0.0)
    hq = A > 0 if exclude else np.ones(n, bool)
    jq = Ahat > 0.5 if exclude else np.ones(n + N, bool)  # hard: the judge has a relevant document; soft: likely

    def at(lam_: float, share_: float):
        if design is not None:
            rule = "exclude" if exclude else "zero"
            return (active_intervals(H, A, J, Ahat, n, rule, 0.05, design, labeled, lam=lam_, share=share_)[0],
                    active_intervals(D, A, Dj, Ahat, n, rule, 0.05, design, labeled, (-1.0, 1.0), lam=lam_,
                                     share=share_)[0])
        if exclude:
            return (ratio_means(H, A, J[:n], Ahat[:n], J[n:], Ahat[n:], lam=lam_, share=share_),
                    ratio_means(D, A, Dj[:n], Ahat[:n], Dj[n:], Ahat[n:], bounds=(-1.0, 1.0), lam=lam_, share=share_))
        return (ppi_means(H, J[:n], J[n:], lam=lam_, share=share_),
                ppi_means(D, Dj[:n], Dj[n:], lower=-1.0, upper=1.0, lam=lam_, share=share_))

    sys_ppi, pair_ppi = at(lam, share)
    sys_h, pair_h = at(0.0, 0.0) if lam > 0 else (sys_ppi, pair_ppi)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.concatenate([sys_ppi.width / sys_h.width, pair_ppi.width / pair_h.width])
    width_ratio = float(np.mean(np.where(np.isfinite(ratios), ratios, 1.0)))
    means = {"human": H[hq].mean(axis=0), "judge": J[jq].mean(axis=0) if jq.any() else None, "ppi": sys_ppi.value}
    values = {s: {name: None if means[s] is None else float(means[s][i]) for i, name in enumerate(names)}
              for s in SOURCES}
    rankings = {s: _ranking(values[s]) for s in SOURCES}

    from relgrade.stats import percentile_ci

    source_pairs = list(combinations(SOURCES, 2))
    boot = _boot_taus(H, J, n, N, lam, n_boot, np.random.default_rng(seed), source_pairs)
    taus = []
    for x, y in source_pairs:
        reps = np.asarray(boot[(x, y)])
        ci = percentile_ci(reps)
        taus.append(TauResult(x, y, _tau(means[x], means[y]), ci, len(reps)))

    pairs = []
    if design is not None:
        p_ppi = active_pvalues(D, Dj, n, design, labeled, lam, share) if pairs_ij else np.zeros(0)
    else:
        p_ppi = ppi_pvalues(D, Dj[:n], Dj[n:], lower=-1.0, upper=1.0, lam=lam, share=share) if pairs_ij else np.zeros(0)
    first, second = [i for i, _ in pairs_ij], [j for _, j in pairs_ij]
    dhs = paired_differences(H[hq][:, first], H[hq][:, second], n_boot=n_boot, n_perm=n_perm, seed=seed)
    djs = paired_differences(J[jq][:, first], J[jq][:, second], n_boot=n_boot, n_perm=n_perm, seed=seed)
    for k, (i, j) in enumerate(pairs_ij):
        dh, dj = dhs[k], djs[k]
        by = {
            "human": SourceDifference(dh.diff, dh.ci95, dh.p_value,
                                      f"{dh.interval} interval; p-value: paired randomisation (labeled queries)"),
            "judge": SourceDifference(dj.diff, dj.ci95, dj.p_value,
                                      f"{dj.interval} interval; p-value: paired randomisation (all queries)"),
            "ppi": SourceDifference(float(sys_ppi.value[j] - sys_ppi.value[i]),
                                    (float(pair_ppi.lo[k]), float(pair_ppi.hi[k])), float(p_ppi[k]),
                                    f"{PPI_JOINT.name if design is None else ACTIVE_INTERVAL} interval; p-value: the "
                                    "same construction's t test"),
        }
        flips = tuple(f"{x} vs {y}" for x, y in source_pairs if _sign(by[x].diff) * _sign(by[y].diff) < 0)
        pairs.append(PairResult(names[i], names[j], by, flips))
    settings = {"kind": "rank-systems", "metric": metric.name, "rel_threshold": rel_threshold, "no_answer": no_answer,
                "n_boot": n_boot, "n_perm": n_perm, "seed": seed, "lam": lam, "width_ratio": width_ratio,
                "prediction": pred.description,
                "interval": RATIO_INTERVAL if exclude else JOINT_INTERVAL}
    if design is not None:
        settings["interval"] = ACTIVE_RATIO_INTERVAL if exclude else ACTIVE_INTERVAL
        settings["design"] = {"name": "active", "draws": design.n, "pool": design.pool}
    own = {name: estimate(run, human_q, sets, [metric], rel_threshold=rel_threshold, no_answer=no_answer,
                          prediction=prediction, folds=folds, seed=seed, design=design).estimates[metric.name].ppi
           for name, run in runs.items()}
    return RankingReport(metric.name, names, values, rankings, tuple(taus), tuple(pairs), n, n + N, settings, own)
