"""The demo's two retriever configurations over the bundled product docs.

- ``bm25`` (the baseline): Okapi BM25 (Robertson & Zaragoza 2009; Lucene variant, k1=1.5, b=0.75)
  by `bm25s`, English stopwords removed, **with the tenant filter**: a query asked on behalf of a
  tenant sees the shared docs and that tenant's own docs only.
- ``tfidf`` (the candidate): scikit-learn TF-IDF (sublinear tf, unigrams and bigrams, l2-normalised)
  ranked by cosine similarity, **without the tenant filter**, so it can return another tenant's
  contract chunk: the kind of regression a gate must block.

Both implement the guide's retriever protocol: ``search(query, top_k=10, tenant=None)`` returns
:class:`Hit` objects (``.id``, ``.score``, ``.text``) best first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk."""

    id: str
    score: float
    text: str


def _documents(records: Sequence[Mapping]) -> tuple[list[str], list[str], list[str | None]]:
    ids = [str(r["doc_id"]) for r in records]
    texts = [f"{r['title']}\n{r['text']}" if r.get("title") else r["text"] for r in records]
    tenants = [r.get("tenant") for r in records]
    return ids, texts, tenants


class BM25Retriever:
    """BM25 via ``bm25s`` with a per-query tenant filter (shared docs + the asking tenant's)."""

    name = "bm25"

    def __init__(self, records: Sequence[Mapping], *, k1: float = 1.5, b: float = 0.75):
        import bm25s

        self._bm25s = bm25s
        self.ids, self.texts, self.tenants = _documents(records)
        self.index = bm25s.BM25(k1=k1, b=b)
        self.index.index(bm25s.tokenize(self.texts, stopwords="en", show_progress=False), show_progress=False)

    def _mask(self, tenant: str | None) -> np.ndarray:
        return np.array([t is None or t == tenant for t in self.tenants], dtype=np.float32)

    def search(self, query: str, top_k: int = 10, tenant: str | None = None) -> list[Hit]:
        mask = self._mask(tenant)
        k = int(min(top_k, mask.sum()))
        if k <= 0:
            return []
        tokens = self._bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:  # nothing left of the query after stopwords
            return []
        docs, scores = self.index.retrieve(tokens, k=k, show_progress=False, weight_mask=mask, n_threads=1)
        return [Hit(self.ids[i], float(s), self.texts[i]) for i, s in zip(docs[0], scores[0]) if s > 0]


class TfidfRetriever:
    """TF-IDF cosine via scikit-learn; ignores ``tenant`` (the leaky candidate)."""

    name = "tfidf"

    def __init__(self, records: Sequence[Mapping]):
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.ids, self.texts, self.tenants = _documents(records)
        self.vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True, ngram_range=(1, 2))
        self.matrix = self.vectorizer.fit_transform(self.texts)

    def search(self, query: str, top_k: int = 10, tenant: str | None = None) -> list[Hit]:
        scores = (self.matrix @ self.vectorizer.transform([query]).T).toarray().ravel()
        order = np.argsort(-scores, kind="stable")[:top_k]
        return [Hit(self.ids[i], float(scores[i]), self.texts[i]) for i in order if scores[i] > 0]


__all__ = ["BM25Retriever", "Hit", "TfidfRetriever"]
