"""Dense vectors of the bundled product docs, searched exactly and through a real ANN index (faiss), for the
ANN-against-exact check of the notebook and the README.

The vectors are made offline: TF-IDF of the chunk texts (sublinear tf, unigrams and bigrams) reduced by
truncated SVD to ``dim`` dimensions and L2-normalised (latent semantic analysis, Deerwester et al. 1990), the
queries projected alike. Both searches apply the demo's tenant filter (a query asked for a tenant sees the
shared chunks and that tenant's own). Exact search is numpy's inner product over every chunk; the ANN index
is faiss' ``IndexIVFFlat`` (inverted lists over ``nlist`` k-means cells, ``nprobe`` cells searched per query), which
misses neighbours that sit in cells it does not visit. Needs the ``ann`` extra (faiss-cpu).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Vectors:
    doc_ids: list[str]
    docs: np.ndarray  # chunks x dim, unit rows
    query_ids: list[str]
    queries: list[str]
    query_vectors: np.ndarray  # queries x dim, unit rows (a query with no known word: zeros)
    allowed: np.ndarray  # queries x chunks, bool: the chunks the query's tenant may see (shared + its own)


def ann_vectors(dim: int = 48, seed: int = 0) -> Vectors:
    """TF-IDF + SVD vectors of the demo chunks and golden queries (module docstring)."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.preprocessing import normalize

    from relgrade.demo._data import corpus_records, golden, tenant_of

    records = corpus_records()
    texts = [f"{r['title']}\n{r['text']}" if r.get("title") else r["text"] for r in records]
    cases = list(golden())
    tfidf = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), stop_words="english")
    matrix = tfidf.fit_transform(texts)
    svd = TruncatedSVD(n_components=dim, random_state=seed).fit(matrix)
    to_unit = lambda m: normalize(svd.transform(m)).astype(np.float32)  # noqa: E731
    allowed = np.array([[r.get("tenant") in (None, tenant_of(c)) for r in records] for c in cases])
    return Vectors([r["doc_id"] for r in records], to_unit(matrix), [c.query_id for c in cases],
                   [c.query for c in cases], to_unit(tfidf.transform([c.query for c in cases])), allowed)


def _keep(v: Vectors, i: int, pairs) -> dict[str, float]:
    """The query's hits among the chunks its tenant may see, with a positive score (a query with no known word
    retrieves nothing), best first."""
    return {v.doc_ids[j]: float(s) for j, s in pairs if j >= 0 and v.allowed[i, j] and s > 0}


def exact_search(v: Vectors, k: int) -> dict[str, dict[str, float]]:
    """``{query_id: {doc_id: inner product}}`` of the exact top k (brute force, with the tenant filter)."""
    scores = np.where(v.allowed, v.query_vectors @ v.docs.T, -np.inf)
    return {q: _keep(v, i, ((j, scores[i, j]) for j in np.argsort(-scores[i], kind="stable")[:k]))
            for i, q in enumerate(v.query_ids)}


def ivf_search(v: Vectors, k: int, *, nlist: int = 8, nprobe: int = 1, seed: int = 0) -> dict[str, dict[str, float]]:
    """The top k through faiss ``IndexIVFFlat`` (inner product) with ``nlist`` cells, ``nprobe`` searched, the tenant
    filter applied inside the search (an ``IDSelectorBatch`` per query)."""
    import faiss

    quantizer = faiss.IndexFlatIP(v.docs.shape[1])
    index = faiss.IndexIVFFlat(quantizer, v.docs.shape[1], nlist, faiss.METRIC_INNER_PRODUCT)
    index.cp.seed = seed
    index.cp.min_points_per_centroid = 1  # a small corpus: no "please provide more training points" warning
    index.train(v.docs)
    index.add(v.docs)
    out = {}
    for i, q in enumerate(v.query_ids):
        params = faiss.SearchParametersIVF(nprobe=nprobe, sel=faiss.IDSelectorBatch(np.flatnonzero(v.allowed[i])))
        scores, idx = index.search(v.query_vectors[i:i + 1], k, params=params)
        out[q] = _keep(v, i, zip(idx[0], scores[0]))
    return out


def write_ann_runs(out: str | Path, *, k: int = 10, nlist: int = 8, nprobes: tuple[int, ...] = (1, 2, 4, 8),
                   seeds: tuple[int, ...] = (0, 1, 2)) -> dict[str, Path]:
    """Write into ``out`` (RAG JSONL runs): ``exact.jsonl``, ``ivf_nprobe{n}.jsonl`` for each of ``nprobes``, and
    ``ivf_seed{s}.jsonl``: the index at nprobe 2 rebuilt with each of ``seeds`` (k-means seeds), i.e. repeats of
    one ANN configuration. Returns ``{name: path}``."""
    from relgrade.io import Run, write_run

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    v = ann_vectors()
    queries = dict(zip(v.query_ids, v.queries))
    runs = {"exact": exact_search(v, k)}
    runs.update({f"ivf_nprobe{n}": ivf_search(v, k, nlist=nlist, nprobe=n) for n in nprobes})
    runs.update({f"ivf_seed{s}": ivf_search(v, k, nlist=nlist, nprobe=2, seed=s) for s in seeds})
    return {name: write_run(Run.from_dict(r, name=name, queries=queries), out / f"{name}.jsonl") for name, r in runs.items()}


def write_loop_files(out: str | Path) -> Path:
    """The files the README's loop commands use, into ``out``: ``golden.jsonl`` and ``corpus.jsonl`` (the bundled
    data), ``runs/bm25.jsonl`` and ``runs/tfidf.jsonl`` (the demo's two retrievers) and ``ann/`` (see
    :func:`write_ann_runs`)."""
    import shutil

    from relgrade.demo._data import corpus_path, golden_path, write_runs

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(golden_path(), out / "golden.jsonl")
    shutil.copyfile(corpus_path(), out / "corpus.jsonl")
    write_runs(out / "runs", k=10)
    write_ann_runs(out / "ann")
    return out


__all__ = ["Vectors", "ann_vectors", "exact_search", "ivf_search", "write_ann_runs", "write_loop_files"]
