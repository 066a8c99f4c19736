"""Soft and hard predictions on TREC DL 2020 (issue 29, items 2-3): how closely the judges' per-query prediction
tracks the human per-query metric, and what that buys PPI at 10 labeled queries.

Data: ../shared/data/trec-dl-2020-passage/pairs.jsonl; the NIST grades (54 queries, 11,386 pairs) are the
humans. Judges: ``_llm_judges.llm_judge`` (lenient on 1, strict on 3, a bias and a noise scale per query, errors
shared with the systems through a surface-match latent, grade distributions as logprobs give them), tuned to
each ``--kappas`` value; ``--judges`` of them per kappa, from different seeds. Two systems rank each judged pool
(``_llm_judges.systems``, sigma 3 and 6). Each draw labels ``--n-human`` random queries; the judges grade all.
``relgrade.hybrid.predict`` then gives, per draw and system:

  hard     the metric on one judge's grades
  soft     the cross-fitted calibration of that judge (its grades and expected grades)
  soft x2  the cross-fitted calibration of two judges together (the first two of that kappa)

Printed per kappa, prediction and metric, as the mean over draws and systems: ``r``, the Pearson correlation
across the 54 queries between the prediction and the human per-query metric (labeled queries out of fold);
``bound`` = sqrt(1 - r^2), the narrowest width ratio that correlation allows; ``width``, PPI++ width / human-only
width from ``relgrade.hybrid.ppi_means`` / ``human_only_means`` (``--no-answer zero``) on the labeled queries;
``cover``, how often the PPI++ interval holds the mean over all 54 queries. Metrics: nDCG@10 (raw grades), and
recall@5 and MRR with relevant = grade >= 2, as in issue 29.

    python benchmarks/predict_trec_dl.py [--draws 100] [--kappas 0.3] [--judges 2] [--n-human 10] [--data DIR]

Exits 2 with one line when the data directory is missing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from _llm_judges import llm_judge, surface, systems  # noqa: E402 - benchmarks/ is the script folder
from _trec_dl import DATA
from intervals_trec_dl import load  # the one reader of pairs.jsonl

METRICS = ("ndcg@10", "recall@5", "mrr")
THRESHOLD = 2
SIGMAS = (3.0, 6.0)
PREDICTIONS = ("hard", "soft", "soft x2")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--draws", type=int, default=100)
    ap.add_argument("--kappas", type=float, nargs="+", default=[0.3])
    ap.add_argument("--judges", type=int, default=2, help="judges per kappa (soft x2 uses the first two)")
    ap.add_argument("--n-human", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not (args.data / "pairs.jsonl").is_file():
        print(f"predict_trec_dl: error: {args.data}/pairs.jsonl not found; pass --data DIR", file=sys.stderr)
        sys.exit(2)

    from relgrade.hybrid import JudgeSet, human_only_means, per_query_values, ppi_means, predict
    from relgrade.io import Qrels, Run
    from relgrade.metrics import parse_metrics

    t0 = time.time()
    metrics = parse_metrics(list(METRICS))
    labels = load(args.data)
    topics = sorted(labels)
    surf = surface(labels, np.random.default_rng(args.seed))
    runs = [Run.from_dict(r, name=f"sigma{s:g}") for s, r in zip(SIGMAS, systems(labels, SIGMAS, surf=surf,
                                                                                  seed=args.seed + 1))]
    truth = np.stack([per_query_values(Qrels(labels), run, metrics, topics, rel_threshold=THRESHOLD) for run in runs])
    position = {q: i for i, q in enumerate(topics)}
    juries = {}
    for kappa in args.kappas:
        juries[kappa] = []
        for i in range(args.judges):
            j = llm_judge(labels, kappa, surf=surf, seed=args.seed + 100 * i + int(kappa * 1000))
            expected = {q: {d: float(np.dot(np.arange(len(p)), p)) for d, p in docs.items()} for q, docs in j.dists.items()}
            juries[kappa].append(JudgeSet(f"judge{i + 1} (kappa {j.kappa:.2f})", Qrels(j.grades), j.grades, expected))
    print(f"TREC DL 2020: {len(topics)} queries, {sum(map(len, labels.values()))} pairs; {args.n_human} labeled per "
          f"draw, {args.draws} draws x {len(runs)} systems; judges: "
          + "; ".join(js.name for jury in juries.values() for js in jury))

    rng = np.random.default_rng(args.seed + 2)
    n = args.n_human
    for kappa, jury in juries.items():
        cols = {p: {"Y": [], "H": [], "U": [], "r": [], "truth": []} for p in PREDICTIONS}
        for draw in range(args.draws):
            labeled = [topics[i] for i in rng.choice(len(topics), n, replace=False)]
            human = {q: labels[q] for q in labeled}
            for name, judges, kind in (("hard", jury[0], "hard"), ("soft", jury[0], "soft"), ("soft x2", jury[:2], "soft")):
                pred = predict(runs, human, judges, metrics, rel_threshold=THRESHOLD, prediction=kind, seed=draw)
                order = [position[q] for q in pred.queries]
                for s in range(len(runs)):
                    y, yhat = truth[s][order], pred.values[s]  # (queries x metrics)
                    c = cols[name]
                    c["Y"].append(y[:n]), c["H"].append(yhat[:n]), c["U"].append(yhat[n:])
                    c["truth"].append(y.mean(axis=0))
                    c["r"].append([np.corrcoef(y[:, j], yhat[:, j])[0, 1] for j in range(len(metrics))])
        print(f"\n== kappa {kappa}: mean over {args.draws} draws x {len(runs)} systems")
        print(f"{'prediction':<10}" + "".join(f"{m:>34}" for m in METRICS))
        print(f"{'':<10}" + "".join(f"{'r':>10}{'bound':>8}{'width':>8}{'cover':>8}" for _ in METRICS))
        for name, c in cols.items():
            Y, H, U = (np.hstack(c[k]) for k in ("Y", "H", "U"))
            ppi, human = ppi_means(Y, H, U), human_only_means(Y)
            t = np.concatenate(c["truth"])
            reps = len(c["r"])
            ratio = (ppi.width / np.where(human.width > 0, human.width, np.nan)).reshape(reps, len(metrics))
            cover = ((ppi.lo <= t) & (t <= ppi.hi)).reshape(reps, len(metrics))
            r = np.nanmean(np.array(c["r"]), axis=0)
            cells = "".join(f"{r[j]:>10.3f}{np.sqrt(1 - r[j] ** 2):>8.3f}{np.nanmean(ratio[:, j]):>8.3f}"
                            f"{cover[:, j].mean():>8.3f}" for j in range(len(metrics)))
            print(f"{name:<10}{cells}")
    print(f"\n{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
