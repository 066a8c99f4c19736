"""ANN against exact search on TREC DL 2020 passages: the recall-latency curve of faiss HNSW (efSearch) and IVF
(nprobe), measured with ``relgrade.ann_recall`` (issue 27; the guide: "Tune efSearch/nprobe against recall@k").

Vectors made offline at benchmark time: TF-IDF (sublinear tf, English stopwords, min_df 2) of the judged
passages of ../shared/data/trec-dl-2020-passage/pairs.jsonl (passage texts are read there, never copied),
reduced by truncated SVD to ``--dim`` dimensions and L2-normalised; queries projected alike. Exact search:
faiss ``IndexFlatIP`` (brute force). ANN: ``IndexHNSWFlat`` (M 16, efConstruction 40) over efSearch, and
``IndexIVFFlat`` (``--nlist`` cells) over nprobe. One thread, one query per call, all in one run, so the
latency ratios against exact search are side by side on the same (shared, noisy) machine.

Per setting: neighbour recall@10 of the 54 TREC queries with its 95% interval (relgrade's), the same on
``--extra`` passages used as queries (a tighter curve), nDCG@10 ANN - exact against the NIST grades with its
paired interval (``relgrade.compare``), and the median latency per query.

    python benchmarks/ann_sweep.py [--dim 128] [--nlist 128] [--extra 1000] [--data DIR]

Exits 2 with one line when the data directory is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from _trec_dl import DATA  # noqa: E402 - benchmarks/ is the script folder, first on sys.path

EF_SEARCH = (1, 2, 4, 8, 16, 32, 64, 128)
NPROBE = (1, 2, 4, 8, 16, 32)
K = 10


def load(data: Path):
    passages, queries, grades = {}, {}, {}
    with open(data / "pairs.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            passages[row["pid"]] = row["passage"]
            queries[row["qid"]] = row["query"]
            grades.setdefault(row["qid"], {})[row["pid"]] = int(row["label"])
    return passages, queries, grades


def vectors(passages, texts, dim: int):
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.preprocessing import normalize

    tfidf = TfidfVectorizer(sublinear_tf=True, stop_words="english", min_df=2)
    matrix = tfidf.fit_transform(list(passages.values()))
    svd = TruncatedSVD(n_components=dim, random_state=0).fit(matrix)
    unit = lambda m: np.ascontiguousarray(normalize(svd.transform(m)), dtype=np.float32)  # noqa: E731
    return unit(matrix), unit(tfidf.transform(texts))


def search(index, q: np.ndarray, pids: list[str], qids: list[str]):
    """One query per call; ``({qid: {pid: score}}, median seconds per query)``."""
    out, times = {}, []
    for i, qid in enumerate(qids):
        start = time.perf_counter()
        scores, idx = index.search(q[i:i + 1], K)
        times.append(time.perf_counter() - start)
        out[qid] = {pids[j]: float(s) for j, s in zip(idx[0], scores[0]) if j >= 0}
    return out, float(np.median(times))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--nlist", type=int, default=128)
    parser.add_argument("--extra", type=int, default=1000, help="passages also used as queries")
    args = parser.parse_args()
    if not (args.data / "pairs.jsonl").is_file():
        print(f"ann_sweep: error: {args.data}/pairs.jsonl not found; run benchmarks/fetch_trec_dl_2020.py or pass --data",
              file=sys.stderr)
        return 2
    import faiss

    from relgrade import ann_recall, compare, evaluate

    faiss.omp_set_num_threads(1)
    start = time.perf_counter()
    passages, queries, grades = load(args.data)
    pids = list(passages)
    rng = np.random.default_rng(0)
    extra = [pids[i] for i in rng.choice(len(pids), args.extra, replace=False)]
    qids = list(queries) + [f"p{p}" for p in extra]
    docs, q = vectors(passages, list(queries.values()) + [passages[p] for p in extra], args.dim)
    trec = list(queries)
    print(f"{len(pids)} passages, {len(queries)} TREC queries + {len(extra)} passage queries, {args.dim} dims "
          f"(TF-IDF + SVD in {time.perf_counter() - start:.0f} s); faiss {faiss.__version__}, 1 thread, k = {K}")

    flat = faiss.IndexFlatIP(args.dim)
    flat.add(docs)
    exact, exact_t = search(flat, q, pids, qids)
    ev_exact = evaluate(grades, {x: exact[x] for x in trec}, ["ndcg@10"])
    print(f"exact (IndexFlatIP): {exact_t * 1e6:.0f} µs per query; nDCG@10 {ev_exact.value('ndcg@10'):.4f}")

    hnsw = faiss.IndexHNSWFlat(args.dim, 16, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = 40
    hnsw.add(docs)
    ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(args.dim), args.dim, args.nlist, faiss.METRIC_INNER_PRODUCT)
    ivf.train(docs)
    ivf.add(docs)

    head = (f"{'index':<8}{'setting':<14}{'recall@10 TREC (95% CI)':<30}{'recall@10 passages':<20}"
            f"{'nDCG@10 ANN-exact (95% CI)':<32}{'µs/query':>9}{'× exact':>9}")
    print(head)
    settings = [("HNSW", f"efSearch {ef}", hnsw, ("ef", ef)) for ef in EF_SEARCH]
    settings += [("IVF", f"nprobe {n}", ivf, ("nprobe", n)) for n in NPROBE]
    for name, label, index, (knob, value) in settings:
        if knob == "ef":
            index.hnsw.efSearch = value
        else:
            index.nprobe = value
        ann, t = search(index, q, pids, qids)
        r_trec = ann_recall({x: ann[x] for x in trec}, {x: exact[x] for x in trec}, K)
        r_pass = ann_recall({x: ann[x] for x in qids[len(trec):]}, {x: exact[x] for x in qids[len(trec):]}, K)
        d = compare(ev_exact, evaluate(grades, {x: ann[x] for x in trec}, ["ndcg@10"])).differences["ndcg@10"]
        ci = r_trec.aggregate[r_trec.name].ci95
        print(f"{name:<8}{label:<14}{f'{r_trec.value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]':<30}{r_pass.value:<20.3f}"
              f"{f'{d.diff:+.4f} [{d.ci95[0]:+.4f}, {d.ci95[1]:+.4f}]':<32}{t * 1e6:>9.0f}{exact_t / t:>9.2f}")
    print(f"total {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
