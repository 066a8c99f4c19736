"""Does the judge pay for itself? PPI++ against human labels alone on TREC DL 2020, with LLM-like judges.

Data: ../shared/data/trec-dl-2020-passage/qrels.txt (54 queries, NIST grades 0-3); NIST grades are the human
labels, relevant = grade >= 2 (every query has such a document, so ``--no-answer`` does not matter here).
Systems: ``benchmarks/_llm_judges.systems`` ranks each query's judged pool by ``grade + sigma * noise`` whose
noise shares the judges' surface-match latent (sigma 1, 2, 4, 8: nDCG@10 from about 0.8 down to 0.25).
Judges: ``benchmarks/_llm_judges.llm_judge`` (lenient on 1, strict on 3, per-query bias and noise scale,
errors shared with the systems) tuned to Cohen's kappa 0.1 / 0.3 / 0.6 against NIST, ``--judges`` redraws
each; ``--judge-qrels FILE`` adds any judge's grades (e.g. a real LLM's); ``--local CACHE`` adds the embedded
local judge (``local/gemma3-270m``) on every system's top 10 (its grades are cached in CACHE, a qrels file
outside the repository, and its store CACHE.sqlite resumes an interrupted run; about 2,000 pairs, half an hour
on two cores; pairs beyond the top 10 count as not relevant to it, so its MRR is MRR@10).

Each draw takes n labeled queries *with replacement* from the 54 and 54 - n unlabeled ones, also with
replacement, so the truth is the mean over the 54 queries under NIST labels. Printed per metric, n and judge,
pooled over systems, judge redraws and draws: coverage of the 95% PPI++ and human-only intervals
(:mod:`relgrade.stats._augmented`), the mean width ratio PPI / human-only (widths before clipping to [0, 1],
the definition ``estimate`` reports; by construction never above 1), the same ratio of the clipped widths
``estimate`` prints, and two oracle bounds with ``r`` the correlation over all 54 queries between the judge's prediction and the
human metric: ``sqrt(1 - r^2)``, what a judge used perfectly could give when the judge labels far more queries
than the humans (N >> n), and ``sqrt(1 - r^2 N / (n + N))``, the same at the design's N unlabeled queries: the
smallest ratio any estimator ``mean(Y) + lam (mean(Yu) - mean(Yhat))`` can reach, its variance
``lam^2 s_f^2 / N + s^2(Y - lam f) / n`` being least at ``lam = cov / ((1 + n / N) s_f^2)``. ``--unlabeled N``
draws N unlabeled queries (with replacement) instead of 54 - n: the judge's labels of a larger query log, as
when a team judges its whole log and labels 10 queries by hand. ``rmse``: the PPI estimate's root mean squared
error over the draws divided by the human-only mean's, the precision the judge actually bought (the width ratio is
what the intervals say it bought; the bounds are for this ratio too).

Then, through ``relgrade.hybrid.rank_systems`` at 10 labeled queries: how many pairs' PPI differences contradict
the PPI ranking (one joint ``lam``: none), the mean width ratio of its intervals, and Kendall's tau of the PPI
and human-only rankings with the ranking under all NIST labels.

The first table uses the hard prediction (the metric on the judge's grades). The last table is the acceptance
of issue 29 on what users get: the prediction kinds of ``relgrade.hybrid.predict`` (``PREDICTIONS``: the
default soft prediction, the hard one, soft with two judges of the same kappa) at ``--pred-n`` labeled queries
drawn without replacement (the soft prediction is cross-fitted on each draw's labeled queries): PPI coverage
(with its Monte Carlo standard error), the mean width ratio PPI / human-only, ``r`` over the 54 queries between
the prediction and the human metric (labeled queries out of fold) and its bounds ``sqrt(1 - r^2)`` and at the
design's N. ``--pred-unlabeled N``: the unlabeled queries are N draws with replacement from the 54, each with
the prediction ``estimate`` gives an unlabeled query (the fold models' mean: every query is predicted once more
under a copy of its id that has no human label). (This table replaces ``benchmarks/predict_trec_dl.py``, which
measured the same on two systems.) ``--pred-replace`` draws the labeled queries with replacement too, each draw a
query of its own id (:func:`drawn`): the sharp test of coverage, as the first table's; without it the labeled
queries are 10 of the 54 without replacement, which makes coverage conservative.

    python benchmarks/ppi_trec_dl.py [--draws 2000] [--judges 2] [--n 5 10 15 30] [--pred-draws 100] [--judge-qrels FILE]
    python benchmarks/ppi_trec_dl.py --n --skip-rank --pred-draws 200   # the prediction table alone
    python benchmarks/ppi_trec_dl.py --n --skip-rank --kappa 0.3 --pred-unlabeled 540   # N >> n: judge 10x the queries
    python benchmarks/ppi_trec_dl.py --n --skip-rank --pred-draws 200 --pred-replace   # the sharp coverage test
    python benchmarks/ppi_trec_dl.py --grid 100 --grid-design uniform active --kappa 0.3 0.02 --grid-n 10 \
        --grid-thresholds 2   # the active design beside the uniform one (benchmarks/_active_grid.py)

Exits 2 with one line when the data directory is missing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from _llm_judges import llm_judge, surface, systems  # noqa: E402 - benchmarks/ is the script folder
from _trec_dl import DATA  # noqa: E402

METRICS = ("recall@5", "mrr", "ndcg@10")
SIGMAS = (1.0, 2.0, 4.0, 8.0)


def hard(labels, run, metric, topics, rel_threshold):
    """The judge's prediction of each query's metric from its grades alone (``relgrade.hybrid.predict``, hard)."""
    from relgrade.hybrid import per_query_values
    from relgrade.io import Qrels

    return per_query_values(Qrels(labels), run, [metric], topics, rel_threshold=rel_threshold)[:, 0]


def bounds(r, n: int, N: int) -> tuple[float, float]:
    """The oracle bounds of the module docstring: ``sqrt(1 - r^2)`` (N >> n) and ``sqrt(1 - r^2 N / (n + N))``."""
    return float(np.sqrt(1 - r * r)), float(np.sqrt(1 - r * r * N / (n + N)))


def copies(topics, runs, sets):
    """Each query again under the id ``q~u`` with the same run scores and judge grades: ``predict`` gives these
    copies (no human label) the prediction of an unlabeled query, whichever queries are labeled."""
    from relgrade.hybrid import JudgeSet
    from relgrade.io import Qrels, Run

    def twice(d):
        return {**d, **{f"{q}~u": v for q, v in d.items()}}

    runs2 = [Run.from_dict(twice({q: dict(docs) for q, docs in r.to_dict().items()}), name=r.name) for r in runs]
    sets2 = [JudgeSet(js.name, Qrels(twice(js.grades.to_dict())), twice(dict(js.raw)), twice(dict(js.expected)),
                      js.scale) for js in sets]
    return runs2, sets2, [f"{q}~u" for q in topics]


def drawn(picks, runs, sets):
    """Runs and judges over the queries ``picks`` (indices into ``topics`` order, repeats allowed) under distinct
    ids ``q@k``: a draw with replacement is a sample of independent queries, two of which may be the same one."""
    from relgrade.hybrid import JudgeSet
    from relgrade.io import Qrels, Run

    def ids(d):
        return {f"{q}@{k}": d[q] for k, q in picks if q in d}

    runs2 = [Run.from_dict(ids(r.to_dict()), name=r.name) for r in runs]
    sets2 = [JudgeSet(js.name, Qrels(ids(js.grades.to_dict())), ids(js.raw), ids(js.expected), js.scale) for js in sets]
    return runs2, sets2


# the prediction kinds of the second table: name -> (relgrade.hybrid.predict's prediction, how many judges)
PREDICTIONS = {"soft (default)": ("soft", 1), "hard": ("hard", 1), "soft, 2 judges": ("soft", 2)}


def prediction_table(nist, topics, runs, H, juries, metrics, *, n: int, draws: int, thr: int, rng,
                     unlabeled: int | None = None, replace: bool = False) -> None:
    """Coverage, width ratio, r and bounds per prediction kind at n labeled queries (drawn without replacement:
    the soft prediction is fitted on each draw's labeled queries, so each draw costs a fit); ``unlabeled``: N
    unlabeled queries drawn with replacement from the 54 (:func:`copies`) instead of the 54 - n others;
    ``replace``: labeled and unlabeled queries all drawn with replacement (:func:`drawn`), r over the draw's."""
    if replace:
        return replaced_table(nist, topics, runs, H, juries, metrics, n=n, N=len(topics) - n if unlabeled is None
                              else unlabeled, draws=draws, thr=thr, rng=rng)
    from relgrade.hybrid import predict

    N = len(topics) - n if unlabeled is None else unlabeled
    position = {q: i for i, q in enumerate(topics)}
    print(f"\npredictions at {n} labeled queries (without replacement), N = {N} unlabeled "
          f"({'the others' if unlabeled is None else 'with replacement from the 54'}), {draws} draws x {len(runs)} "
          "systems: PPI coverage, width ratio before clipping, r over the 54 queries (labeled ones out of fold), "
          "sqrt(1 - r^2), sqrt(1 - r^2 N / (n + N))")
    columns(metrics)
    for name, jury in juries.items():
        sets = judge_sets(name, jury)
        pruns, psets, ids = (runs, sets, None) if unlabeled is None else copies(topics, runs, sets)
        cols = {kind: {"Y": [], "P": [], "U": [], "truth": [], "r": []} for kind in PREDICTIONS}
        for draw in range(draws):
            labeled = [topics[i] for i in rng.choice(len(topics), n, replace=False)]
            human = {q: nist[q] for q in labeled}
            pick = None if unlabeled is None else rng.integers(0, len(topics), unlabeled)
            for kind, (how, k) in PREDICTIONS.items():
                if k > len(sets):
                    continue
                pred = predict(pruns, human, psets[:k], metrics, rel_threshold=thr, prediction=how, seed=draw)
                at = {q: i for i, q in enumerate(pred.queries)}
                own = [at[q] for q in labeled] + [at[q] for q in topics if q not in human]  # the 54 originals
                order = [position[pred.queries[i]] for i in own]
                if unlabeled is not None:  # a copy is predicted as an unlabeled query: as its original when unlabeled
                    others = [q for q in topics if q not in human]
                    assert np.allclose(pred.values[:, [at[q] for q in others]],
                                       pred.values[:, [at[f"{q}~u"] for q in others]]), "copies predicted unlike originals"
                for s in range(len(runs)):
                    y = np.column_stack([H[m.name][:, s] for m in metrics])[order]
                    v = pred.values[s][own]
                    u = v[n:] if unlabeled is None else pred.values[s][[at[ids[i]] for i in pick]]
                    c = cols[kind]
                    c["Y"].append(y[:n]), c["P"].append(v[:n]), c["U"].append(u)
                    c["truth"].append(y.mean(axis=0))
                    c["r"].append([np.corrcoef(y[:, j], v[:, j])[0, 1] if np.ptp(v[:, j])
                                   else 0.0 for j in range(len(metrics))])
        summarise(name, cols, metrics, n, N)


def judge_sets(name, jury):
    """The jury's judges as ``relgrade.hybrid.JudgeSet`` (grades, and expected grades from their distributions)."""
    from relgrade.hybrid import JudgeSet
    from relgrade.io import Qrels

    return [JudgeSet(f"{name} #{i + 1}", Qrels(j.grades), j.grades,
                     {q: {d: float(np.dot(np.arange(len(p)), p)) for d, p in docs.items()} for q, docs in j.dists.items()})
            for i, j in enumerate(jury)]


def columns(metrics) -> None:
    """The prediction tables' column heads (:func:`summarise` prints their rows)."""
    print(f"{'judge':<12}{'prediction':<16}" + "".join(f"{m.name:>37}" for m in metrics))
    print(f"{'':<28}" + "".join(f"{'cover':>9}{'width':>7}{'r':>7}{'bound':>7}{'at N':>7}" for _ in metrics))


def summarise(name, cols, metrics, n, N) -> None:
    """One line per prediction kind: PPI coverage, mean width ratio, mean r and the bounds."""
    from relgrade.hybrid import human_only_means, ppi_means

    for kind, c in cols.items():
        if not c["Y"]:
            continue
        Y, P, U = (np.hstack(c[key]) for key in ("Y", "P", "U"))
        ppi, human_only = ppi_means(Y, P, U), human_only_means(Y)
        reps = len(c["r"])
        truth = np.concatenate(c["truth"])
        cover = ((ppi.lo <= truth) & (truth <= ppi.hi)).reshape(reps, len(metrics)).mean(axis=0)
        ratio = (ppi.half / human_only.half).reshape(reps, len(metrics)).mean(axis=0)
        r = np.nanmean(np.array(c["r"]), axis=0)
        se = np.sqrt(cover * (1 - cover) / reps)
        print(f"{name:<12}{kind:<16}" + "".join(f"{cover[j]:>9.3f}{ratio[j]:>7.3f}{r[j]:>7.2f}"
                                                + "".join(f"{b:>7.3f}" for b in bounds(r[j], n, N))
                                                for j in range(len(metrics)))
              + f"   (coverage SE <= {se.max():.3f})", flush=True)


def replaced_table(nist, topics, runs, H, juries, metrics, *, n: int, N: int, draws: int, thr: int, rng) -> None:
    """The prediction table with every query drawn with replacement (the sharp test of coverage: the truth is the
    mean over the 54, of which each draw is an independent sample)."""
    from relgrade.hybrid import predict

    print(f"\npredictions at {n} labeled queries and N = {N} unlabeled, all drawn with replacement, {draws} draws x "
          f"{len(runs)} systems: PPI coverage, width ratio before clipping, r over the draw's queries (labeled ones "
          "out of fold), sqrt(1 - r^2), sqrt(1 - r^2 N / (n + N))")
    columns(metrics)
    position = {q: i for i, q in enumerate(topics)}
    for name, jury in juries.items():
        sets = judge_sets(name, jury)
        cols = {kind: {"Y": [], "P": [], "U": [], "truth": [], "r": []} for kind in PREDICTIONS}
        for draw in range(draws):
            picks = [(k, topics[i]) for k, i in enumerate(rng.integers(0, len(topics), n + N))]
            druns, dsets = drawn(picks, runs, sets)
            human = {f"{q}@{k}": nist[q] for k, q in picks[:n]}
            names = [f"{q}@{k}" for k, q in picks]
            rows = [position[q] for _, q in picks]
            for kind, (how, k) in PREDICTIONS.items():
                if k > len(sets):
                    continue
                pred = predict(druns, human, dsets[:k], metrics, rel_threshold=thr, prediction=how, seed=draw)
                at = {q: i for i, q in enumerate(pred.queries)}
                v_all = pred.values[:, [at[q] for q in names]]
                for s in range(len(runs)):
                    y = np.column_stack([H[m.name][:, s] for m in metrics])[rows]
                    v = v_all[s]
                    c = cols[kind]
                    c["Y"].append(y[:n]), c["P"].append(v[:n]), c["U"].append(v[n:])
                    c["truth"].append(np.column_stack([H[m.name][:, s] for m in metrics]).mean(axis=0))
                    c["r"].append([np.corrcoef(y[:, j], v[:, j])[0, 1] if np.ptp(v[:, j]) and np.ptp(y[:, j])
                                   else 0.0 for j in range(len(metrics))])
        summarise(name, cols, metrics, n, N)


GRID_N = (5, 10, 30)


def grid_table(nist, topics, runs, juries, metrics, *, draws: int, rng, thresholds=(1, 2), ns=GRID_N,
               partner=None) -> None:
    """Issue 35's grid: n labeled queries (with replacement, each draw a query of its own id) and N = 10n, 50n and
    5,000 unlabeled ones (with replacement), at relevant >= 1 and >= 2, per prediction kind: PPI coverage with its
    misses by side (interval above / below the truth), the width ratio as shown (mean PPI width / mean human-only
    width: the ratio of expected widths, which the bound bounds; the mean of per-draw ratios is biased upward by
    Jensen's inequality at n = 10), the share of draws where PPI is the wider, the bound sqrt(1 - r^2 N / (n + N))
    with r over the draw's out-of-fold queries, and the RMSE ratio. Each draw fits the prediction once on its n
    labeled queries with every one of the 54 as an unlabeled copy (:func:`copies`), whose predictions the N
    unlabeled draws index. ``partner``: a second judge of another kappa, for "two judges add up" (item 4)."""
    from relgrade.hybrid import JudgeSet, human_only_means, per_query_values, ppi_means, predict
    from relgrade.io import Qrels, Run

    kinds = {"soft (default)": ("soft", 1), "hard": ("hard", 1), "soft, 2 judges": ("soft", 2)}
    for name, jury in juries.items():
        sets = judge_sets(name, jury)
        if partner is not None:
            sets = sets[:1] + judge_sets("partner", [partner])
            kinds = {"soft (default)": ("soft", 1), f"soft + kappa {partner.kappa:.2f}": ("soft", 2)}
        for thr in thresholds:
            H = np.stack([per_query_values(Qrels(nist), r, metrics, topics, rel_threshold=thr) for r in runs], axis=1)
            for n in ns:
                data = {kind: {"idx": [], "P": [], "F": []} for kind in kinds}
                for draw in range(draws):
                    idx = rng.integers(0, len(topics), n)
                    picks = [(k, topics[i]) for k, i in enumerate(idx)]
                    druns, dsets = drawn(picks, runs, sets)

                    def add(d, orig):
                        return {**d, **{f"{q}~u": v for q, v in orig.items()}}

                    runs2 = [Run.from_dict(add(dr.to_dict(), r.to_dict()), name=r.name) for dr, r in zip(druns, runs)]
                    sets2 = [JudgeSet(ds.name, Qrels(add(ds.grades.to_dict(), js.grades.to_dict())),
                                      add(dict(ds.raw), dict(js.raw)), add(dict(ds.expected), dict(js.expected)),
                                      ds.scale) for ds, js in zip(dsets, sets)]
                    human = {f"{q}@{k}": nist[q] for k, q in picks}
                    for kind, (how, k) in kinds.items():
                        pred = predict(runs2, human, sets2[:k], metrics, rel_threshold=thr, prediction=how, seed=draw)
                        at = {q: i for i, q in enumerate(pred.queries)}
                        data[kind]["idx"].append(idx)
                        data[kind]["P"].append(pred.values[:, [at[f"{q}@{k}"] for k, q in picks]].transpose(1, 0, 2))
                        data[kind]["F"].append(pred.values[:, [at[f"{q}~u"] for q in topics]].transpose(1, 0, 2))
                for N in (10 * n, 50 * n, 5000):
                    print(f"\n{name}, relevant >= {thr}, n = {n} labeled, N = {N} unlabeled, {draws} draws x "
                          f"{len(runs)} systems: PPI coverage (misses above / below), width ratio as shown, "
                          "bound at N, share wider, RMSE ratio", flush=True)
                    print(f"{'prediction':<24}" + "".join(f"{m.name:>44}" for m in metrics))
                    for kind in kinds:
                        cells = []
                        for j in range(len(metrics)):
                            cells.append(_grid_cell(H[:, :, j], data[kind], j, n, N, rng, human_only_means, ppi_means))
                        print(f"{kind:<24}" + "".join(f"{c:>44}" for c in cells), flush=True)


def _grid_cell(H, data, j: int, n: int, N: int, rng, human_only_means, ppi_means) -> str:
    """One metric's cell of :func:`grid_table` (H: queries x systems); systems whose metric is the same on every
    query (nothing to estimate) are left out of the bound."""
    Y, P, U, T, bound = [], [], [], [], []
    for idx, Pd, Fd in zip(data["idx"], data["P"], data["F"]):
        Pd, Fd = Pd[:, :, j], Fd[:, :, j]
        u = rng.integers(0, H.shape[0], N)
        out = np.setdiff1d(np.arange(H.shape[0]), idx)  # r over out-of-fold predictions only
        for s in range(H.shape[1]):
            Y.append(H[idx, s]), P.append(Pd[:, s]), U.append(Fd[u, s]), T.append(H[:, s].mean())
            h, f = np.r_[H[out, s], H[idx, s]], np.r_[Fd[out, s], Pd[:, s]]
            if np.ptp(H[:, s]) > 0:
                r = np.corrcoef(h, f)[0, 1] if np.ptp(f) > 0 else 0.0
                bound.append(np.sqrt(1 - r * r * N / (n + N)))
    Y, P, U, T = np.array(Y).T, np.array(P).T, np.array(U).T, np.array(T)
    ppi, hum = ppi_means(Y, P, U), human_only_means(Y)
    cover = np.mean((ppi.lo <= T) & (T <= ppi.hi))
    above, below = np.mean(ppi.lo > T), np.mean(ppi.hi < T)
    ratio = ppi.width.mean() / hum.width.mean()
    wider = np.mean(ppi.width > hum.width + 1e-12)
    rmse = np.sqrt(np.mean((ppi.value - T) ** 2) / np.mean((hum.value - T) ** 2))
    return f"{cover:.3f} ({above:.3f}/{below:.3f}) {ratio:.3f} {np.mean(bound):.3f} {wider:.2f} {rmse:.3f}"


def local_grades(cache: Path, data: Path, runs, depth: int) -> dict[str, dict[str, int]]:
    """The local judge's grades of every run's top ``depth`` pairs, judged once and cached in ``cache`` (qrels)."""
    if not cache.is_file():
        import json

        from relgrade.judge import DEFAULT_MODEL, judge_pairs
        from relgrade.judge._pool import Pair

        rows = {(str(r["qid"]), str(r["pid"])): r for r in map(json.loads, open(data / "pairs.jsonl", encoding="utf-8"))}
        wanted = sorted({(q, d) for run in runs for q, docs in run.ranked().items() for d in docs[:depth]})
        pairs = [Pair(q, d, rows[(q, d)]["query"], rows[(q, d)]["passage"]) for q, d in wanted]
        t0 = time.perf_counter()
        result = judge_pairs(pairs, model=DEFAULT_MODEL, store=cache.with_suffix(".sqlite"), handle_sigint=False)
        print(f"local judge: {len(pairs)} pairs in {time.perf_counter() - t0:.0f} s")
        cache.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in result.qrels().items() for d, g in docs.items()))
    from relgrade.io import read_qrels

    return read_qrels(cache).to_dict()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--judges", type=int, default=2, help="redraws of each synthetic judge")
    ap.add_argument("--kappa", type=float, nargs="+", default=[0.1, 0.3, 0.6])
    ap.add_argument("--n", type=int, nargs="*", default=[5, 10, 15, 30], help="labeled queries of the first table "
                    "(none: skip it)")
    ap.add_argument("--skip-rank", action="store_true", help="skip the rank-systems table")
    ap.add_argument("--judge-qrels", action="append", default=[], help="a judge's grades (qrels or judge details)")
    ap.add_argument("--local", type=Path, default=None, metavar="CACHE",
                    help="the local judge on every system's top 10, grades cached in CACHE (qrels)")
    ap.add_argument("--unlabeled", type=int, default=None, help="unlabeled queries of the first table (default: "
                    "54 - n), drawn with replacement")
    ap.add_argument("--pred-n", type=int, default=10, help="labeled queries of the prediction table")
    ap.add_argument("--pred-replace", action="store_true", help="the prediction table with every query drawn with "
                    "replacement (the sharp test of coverage)")
    ap.add_argument("--pred-unlabeled", type=int, default=None, help="unlabeled queries of the prediction table, "
                    "drawn with replacement from the 54 (default: the 54 - n others)")
    ap.add_argument("--pred-draws", type=int, default=100, help="draws of the prediction table (0: skip it)")
    ap.add_argument("--rel-threshold", type=int, default=2)
    ap.add_argument("--grid", type=int, default=0, metavar="DRAWS", help="issue 35's grid instead of the tables above: "
                    "n = 5, 10, 30 labeled and N = 10n, 50n, 5000 unlabeled queries (all with replacement), relevant "
                    ">= 1 and >= 2, DRAWS draws per n (each --kappa)")
    ap.add_argument("--grid-n", type=int, nargs="+", default=list(GRID_N), help="labeled queries of the grid")
    ap.add_argument("--grid-thresholds", type=int, nargs="+", default=[1, 2], help="relevance thresholds of the grid")
    ap.add_argument("--grid-partner", type=float, default=None, metavar="KAPPA", help="the grid compares the first "
                    "judge alone with it and a second judge of this kappa, calibrated jointly (judges that add up)")
    ap.add_argument("--grid-design", nargs="+", choices=("uniform", "active"), default=None,
                    help="the grid with a design axis (issue 35.3): uniform PPI++ beside the active design of relgrade "
                         "sample --design active, at --grid-n labeled and --grid-pool judged queries "
                         "(benchmarks/_active_grid.py)")
    ap.add_argument("--grid-pool", type=int, nargs="+", default=[100, 500], help="judged queries N of --grid-design")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not (args.data / "qrels.txt").is_file():
        print(f"ppi_trec_dl: error: {args.data}/qrels.txt not found; pass --data DIR "
              "(benchmarks/fetch_trec_dl_2020.py writes it)", file=sys.stderr)
        return 2

    from relgrade.hybrid import human_only_means, per_query_values, ppi_means, rank_systems
    from relgrade.io import Qrels, Run, read_qrels
    from relgrade.metrics import parse_metric

    t0 = time.perf_counter()
    nist = read_qrels(args.data / "qrels.txt").to_dict()
    topics = sorted(nist)
    Q = len(topics)
    surf = surface(nist, np.random.default_rng(args.seed + 100))
    runs = [Run.from_dict(r, name=f"sigma {s:g}") for s, r in zip(SIGMAS, systems(nist, SIGMAS, surf=surf,
                                                                                   seed=args.seed))]
    metrics = [parse_metric(m) for m in METRICS]
    thr = args.rel_threshold
    H = {m.name: np.column_stack([per_query_values(Qrels(nist), r, [m], topics, rel_threshold=thr)[:, 0]
                                  for r in runs]) for m in metrics}
    judges, juries = {}, {}
    for k in args.kappa:
        draws = [llm_judge(nist, k, surf=surf, seed=args.seed + 10 * j) for j in range(args.judges)]
        judges[f"kappa {k:g}"] = [d.grades for d in draws]
        juries[f"kappa {k:g}"] = draws
    for path in args.judge_qrels:
        from relgrade.hybrid import read_judge_labels

        labels = {}
        for lab in read_judge_labels(path).labels:
            labels.setdefault(lab.query_id, {})[lab.doc_id] = lab.grade
        judges[Path(path).name] = [labels]
    if args.local is not None:
        judges["local judge"] = [local_grades(args.local, args.data, runs, depth=10)]
    if args.grid and args.grid_design and "active" in args.grid_design:
        from _active_grid import design_grid

        design_grid(nist, topics, runs, juries, metrics, draws=args.grid, rng=np.random.default_rng(args.seed),
                    thresholds=args.grid_thresholds, ns=args.grid_n, Ns=args.grid_pool, judge_sets=judge_sets,
                    drawn=drawn)
        print(f"\n({time.perf_counter() - t0:.0f} s)")
        return 0
    if args.grid:
        rng = np.random.default_rng(args.seed)
        partner = None if args.grid_partner is None else llm_judge(nist, args.grid_partner, surf=surf, seed=args.seed + 7)
        grid_table(nist, topics, runs, juries, metrics, draws=args.grid, rng=rng, thresholds=args.grid_thresholds,
                   ns=args.grid_n, partner=partner)
        print(f"\n({time.perf_counter() - t0:.0f} s)")
        return 0
    print(f"TREC DL 2020 passage: {Q} queries, {sum(map(len, nist.values()))} NIST labels; relevant = grade >= {thr}; "
          f"{len(runs)} systems; {args.draws} draws of n labeled + "
          f"{f'{Q} - n' if args.unlabeled is None else args.unlabeled} unlabeled queries with replacement per "
          f"system and judge; prediction: hard (the metric on the judge's grades)")
    for m in metrics:
        print(f"  {m.name}: " + ", ".join(f"{r.name} {H[m.name][:, i].mean():.3f}" for i, r in enumerate(runs)))
    print(f"\n{'metric':<10}{'n':>4}  {'judge':<12}{'PPI cov':>8}{'human cov':>10}{'width':>7}{'clipped':>8}"
          f"{'oracle':>8}{'at N':>7}{'rmse':>7}")
    rng = np.random.default_rng(args.seed)
    for m in metrics:
        J = {name: [np.column_stack([hard(labels, r, m, topics, thr) for r in runs]) for labels in redraws]
             for name, redraws in judges.items()}
        for n in args.n:
            for name, preds in J.items():
                hits_p = hits_h = total = 0
                ratio, clipped, oracle, at_n, rmse = [], [], [], [], []
                N = Q - n if args.unlabeled is None else args.unlabeled
                for P in preds:
                    for s in range(len(runs)):
                        y, yh = H[m.name][:, s], P[:, s]
                        truth = y.mean()
                        r = np.corrcoef(y, yh)[0, 1] if np.ptp(yh) > 0 and np.ptp(y) > 0 else 0.0
                        b, b_n = bounds(r, n, N)
                        oracle.append(b), at_n.append(b_n)
                        lab, unl = rng.integers(0, Q, (n, args.draws)), rng.integers(0, Q, (N, args.draws))
                        ppi, human = ppi_means(y[lab], yh[lab], yh[unl]), human_only_means(y[lab])
                        hits_p += int(((ppi.lo <= truth) & (truth <= ppi.hi)).sum())
                        hits_h += int(((human.lo <= truth) & (truth <= human.hi)).sum())
                        total += args.draws
                        ratio.append(np.mean(ppi.half / human.half))
                        clipped.append(np.mean(ppi.width) / np.mean(human.width))
                        rmse.append(np.sqrt(np.mean((ppi.value - truth) ** 2) / np.mean((human.value - truth) ** 2)))
                print(f"{m.name:<10}{n:>4}  {name:<12}{hits_p / total:>8.3f}{hits_h / total:>10.3f}{np.mean(ratio):>7.3f}"
                      f"{np.mean(clipped):>8.3f}{np.mean(oracle):>8.3f}{np.mean(at_n):>7.3f}{np.mean(rmse):>7.3f}", flush=True)

    # rankings through the public API: pairs never contradict the PPI ranking (one joint lam); Kendall tau of the
    # PPI and the human-only rankings with the ranking under all NIST labels
    from scipy.stats import kendalltau

    full = H["ndcg@10"].mean(axis=0)
    if not args.skip_rank:
        print("\nrank-systems, 10 labeled queries (without replacement), nDCG@10, 100 draws per judge: pairs whose PPI "
              "difference contradicts the PPI ranking; mean width ratio of the means and pairs; Kendall tau with the "
              "all-NIST ranking")
    for name, redraws in ({} if args.skip_rank else judges).items():
        bad = pairs = 0
        widths, tau_ppi, tau_human = [], [], []
        for d in range(100):
            lab = sorted(rng.choice(Q, 10, replace=False))
            rep = rank_systems(runs, {topics[i]: nist[topics[i]] for i in lab}, redraws[d % len(redraws)],
                               "ndcg@10", rel_threshold=thr, no_answer="zero", n_boot=20, n_perm=0,
                               prediction="hard")
            order = {s: i for i, s in enumerate(rep.rankings["ppi"])}
            for p in rep.pairs:
                diff = p.by_source["ppi"].diff
                pairs += 1
                bad += abs(diff) > 1e-12 and (diff > 0) != (order[p.b] < order[p.a])
            widths.append(rep.settings["width_ratio"])
            for source, taus in (("ppi", tau_ppi), ("human", tau_human)):
                taus.append(kendalltau([rep.values[source][r.name] for r in runs], full).statistic)
        print(f"  {name:<12} contradicting pairs {bad}/{pairs}, width ratio {np.mean(widths):.3f}, tau PPI "
              f"{np.nanmean(tau_ppi):.3f}, human-only {np.nanmean(tau_human):.3f}")
    if args.pred_draws:
        prediction_table(nist, topics, runs, H, juries, metrics, n=args.pred_n, draws=args.pred_draws, thr=thr, rng=rng,
                         unlabeled=args.pred_unlabeled, replace=args.pred_replace)
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
