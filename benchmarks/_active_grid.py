"""The design axis of ``benchmarks/ppi_trec_dl.py --grid-design uniform active`` (issue 35.3): the judge chooses.

For each judge (``--kappa``), relevance threshold, ``n`` labeled and ``N`` judged queries, every draw takes a pool of
``N`` queries with replacement from the 54 (the judge labels all of them) and

* **uniform**: ``n`` labeled queries with replacement from the 54, the PPI++ of ``relgrade estimate`` today
  (:func:`relgrade.hybrid.ppi_means`, unlabeled = the pool) beside its human-only interval, exactly the grid's;
* **active**: ``n`` draws from the pool with the probabilities of ``relgrade sample --design active``
  (:func:`relgrade.calibration.query_uncertainty` of the judge's grade distributions over every system's top 10,
  :func:`relgrade.stats._weighted.design_probabilities` with the default floor), estimated by the PPI++ active of
  ``estimate`` (:func:`relgrade.stats._weighted.weighted_means`) beside its human-only (Hájek) interval.

Both use the default soft prediction, cross-fitted on the draw's labeled queries, each labeled draw a query of its
own id, the pool predicted as unlabeled copies (as the grid). The truth is the mean over the 54 queries under NIST
labels. Printed per cell and design: coverage (misses above / below), the width ratio as shown (mean PPI width /
mean human-only width of the same design), the share of draws where PPI is the wider, and the RMSE ratio (PPI /
human-only); then the acceptance numbers: the mean PPI width of the active design over the uniform one's, and the
RMSE ratio between them. First, per judge: how far ``u`` predicts the judge's own error per query (the
correlation over the 54 queries), which bounds what the active design can buy.
"""

from __future__ import annotations

import numpy as np


class _Judge:
    def __init__(self, judge):
        self.labels = judge.grades
        self.distribution = {(q, d): dict(enumerate(p)) for q, docs in judge.dists.items() for d, p in docs.items()}


def uncertainty(judge, nist, topics, runs) -> np.ndarray:
    """``u`` of every topic, as ``relgrade sample --design active --run ...`` (every system) computes it."""
    from relgrade.calibration import query_uncertainty

    pool = {q: tuple(sorted(nist[q])) for q in topics}
    u = query_uncertainty([_Judge(judge)], pool, runs=runs)
    return np.array([u[q] for q in topics])


def _predict(picks, topics, runs, sets, metrics, thr, seed, drawn):
    from relgrade.hybrid import JudgeSet, predict
    from relgrade.io import Qrels, Run

    druns, dsets = drawn(picks, runs, sets)

    def add(d, orig):
        return {**d, **{f"{q}~u": v for q, v in orig.items()}}

    runs2 = [Run.from_dict(add(dr.to_dict(), r.to_dict()), name=r.name) for dr, r in zip(druns, runs)]
    sets2 = [JudgeSet(ds.name, Qrels(add(ds.grades.to_dict(), js.grades.to_dict())), add(dict(ds.raw), dict(js.raw)),
                      add(dict(ds.expected), dict(js.expected)), ds.scale) for ds, js in zip(dsets, sets)]
    return runs2, sets2


def design_grid(nist, topics, runs, juries, metrics, *, draws: int, rng, thresholds=(2,), ns=(10,), Ns=(100, 500),
                judge_sets, drawn) -> dict:
    """Print the design table (module docstring); return ``{(judge, thr, n, N, metric): (width ratio active /
    uniform, coverage uniform, coverage active)}``."""
    from relgrade.hybrid import JudgeSet, human_only_means, per_query_values, ppi_means, predict  # noqa: F401
    from relgrade.io import Qrels
    from relgrade.stats._weighted import design_probabilities, weighted_means

    out = {}
    Q = len(topics)
    for name, jury in juries.items():
        sets = judge_sets(name, jury)[:1]
        u = uncertainty(jury[0], nist, topics, runs)
        for thr in thresholds:
            H = np.stack([per_query_values(Qrels(nist), r, metrics, topics, rel_threshold=thr) for r in runs], axis=1)
            Jh = np.stack([per_query_values(Qrels(jury[0].grades), r, metrics, topics, rel_threshold=thr)
                           for r in runs], axis=1)
            err = np.sqrt(((H - Jh) ** 2).mean(axis=1))  # queries x metrics: the judge's own error per query
            print(f"\n{name}, relevant >= {thr}: u from the judge's grade distributions, its correlation over the "
                  f"{Q} queries with the judge's error |metric on its grades - under NIST's| (rms over systems): "
                  + ", ".join(f"{m.name} {np.corrcoef(u, err[:, j])[0, 1]:.2f}" for j, m in enumerate(metrics))
                  + f"; u spans {u.max() / max(u.min(), 1e-12):.1f}x (max/min)")
            for n in ns:
                for N in Ns:
                    cells = {d: {j: [] for j in range(len(metrics))} for d in ("uniform", "active")}
                    for draw in range(draws):
                        pool = rng.integers(0, Q, N)
                        q = design_probabilities(u[pool])
                        for design in ("uniform", "active"):
                            d = rng.integers(0, Q, n) if design == "uniform" else rng.choice(N, n, p=q)
                            idx = d if design == "uniform" else pool[d]
                            picks = [(k, topics[i]) for k, i in enumerate(idx)]
                            runs2, sets2 = _predict(picks, topics, runs, sets, metrics, thr, draw, drawn)
                            human = {f"{x}@{k}": nist[x] for k, x in picks}
                            pred = predict(runs2, human, sets2, metrics, rel_threshold=thr, prediction="soft",
                                           seed=draw)
                            at = {x: i for i, x in enumerate(pred.queries)}
                            P = pred.values[:, [at[f"{x}@{k}"] for k, x in picks]]  # systems x n x metrics
                            F = pred.values[:, [at[f"{x}~u"] for x in topics]]  # systems x Q x metrics
                            for s in range(len(runs)):
                                for j in range(len(metrics)):
                                    Y, Yh, Fp = H[idx, s, j], P[s, :, j], F[s, pool, j]
                                    T = H[:, s, j].mean()
                                    if design == "uniform":
                                        ppi, hum = ppi_means(Y, Yh, Fp), human_only_means(Y)
                                    else:
                                        ppi = weighted_means(Y, Yh, Fp, q[d])
                                        hum = weighted_means(Y, Yh, Fp, q[d], lam=0.0)
                                    cells[design][j].append((float(ppi.lo[0]), float(ppi.hi[0]), float(ppi.value[0]),
                                                             float(hum.hi[0] - hum.lo[0]), float(hum.value[0]), T))
                    print(f"\n{name}, relevant >= {thr}, n = {n} labeled, N = {N} judged, {draws} draws x {len(runs)} "
                          "systems: coverage (misses above / below), width ratio as shown, share wider, RMSE ratio "
                          "(PPI / human-only of the same design)", flush=True)
                    print(f"{'design':<12}" + "".join(f" {m.name:>39}" for m in metrics))
                    widths = {}
                    for design in ("uniform", "active"):
                        row = []
                        for j in range(len(metrics)):
                            lo, hi, v, hw, hv, T = (np.array(c) for c in zip(*cells[design][j]))
                            cov = np.mean((lo <= T) & (T <= hi))
                            above, below = np.mean(lo > T), np.mean(hi < T)
                            widths[(design, j)] = (hi - lo, v, T, cov)
                            ratio = np.mean(hi - lo) / np.mean(hw)
                            wider = np.mean(hi - lo > hw + 1e-12)
                            rmse = np.sqrt(np.mean((v - T) ** 2) / np.mean((hv - T) ** 2))
                            row.append(f"{cov:.3f} ({above:.3f}/{below:.3f}) {ratio:.3f} {wider:.2f} {rmse:.3f}")
                        print(f"{design:<12}" + "".join(f" {c:>39}" for c in row), flush=True)
                    row = []
                    for j, m in enumerate(metrics):
                        wu, vu, T, cu = widths[("uniform", j)]
                        wa, va, _, ca = widths[("active", j)]
                        ratio = float(np.mean(wa) / np.mean(wu))
                        rmse = float(np.sqrt(np.mean((va - T) ** 2) / np.mean((vu - T) ** 2)))
                        out[(name, thr, n, N, m.name)] = (ratio, float(cu), float(ca))
                        row.append(f"width {ratio:.3f}, RMSE {rmse:.3f}")
                    print(f"{'active/unif':<12}" + "".join(f" {c:>39}" for c in row), flush=True)
    return out
