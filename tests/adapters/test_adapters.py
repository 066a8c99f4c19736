"""Retriever adapters against the real libraries: langchain-core's InMemoryVectorStore and llama-index-core's
VectorStoreIndex, both with a deterministic bag-of-words embedding (nothing is downloaded). Every ranking is
checked against the cosine ranking numpy computes from the same vectors."""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time

import numpy as np
import pytest

from relgrade import GoldenCase, GoldenSet, InputError, aevaluate_retriever, evaluate, evaluate_retriever, retrieve

DOCS = {
    "refund": "refunds for annual plans are prorated within thirty days",
    "rate": "the api rate limit is one hundred requests per minute",
    "sso": "single sign on with okta uses saml metadata",
    "webhook": "verify the webhook signature with the hmac secret",
    "export": "export invoices as csv from the billing page",
    "delete": "delete a workspace from the admin settings page",
    "seats": "add seats to a plan from the billing page",
    "tokens": "api tokens expire after ninety days",
}
QUERIES = {"q1": "annual plan refunds", "q2": "api rate limit per minute", "q3": "okta sso saml",
           "q4": "webhook hmac signature", "q5": "billing page invoices csv", "q6": "api tokens expire"}
RELEVANT = {"q1": "refund", "q2": "rate", "q3": "sso", "q4": "webhook", "q5": "export", "q6": "tokens"}
GOLDEN = GoldenSet(tuple(GoldenCase(QUERIES[q], (RELEVANT[q],), q) for q in QUERIES))
DIM = 256


def bow(text: str) -> list[float]:
    v = np.zeros(DIM)
    for word in text.lower().split():
        v[int(hashlib.sha256(word.encode()).hexdigest(), 16) % (DIM - 1)] += 1.0
    v[DIM - 1] = len(text) / 40  # no two docs tie: every text has its own length
    return (v / (np.linalg.norm(v) or 1.0)).tolist()


def oracle(query: str, k: int) -> list[str]:
    """Exact cosine ranking (ties by doc id, descending, as the run orders equal scores)."""
    q = np.array(bow(query))
    scores = {d: float(np.dot(q, bow(t))) for d, t in DOCS.items()}
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (round(kv[1], 6), kv[0]), reverse=True)][:k]


def ranked_ids(run) -> dict[str, list[str]]:
    return run.ranked()


# --------------------------------------------------------------------------------------------- LangChain
lc_core = pytest.importorskip("langchain_core", reason="langchain-core (the 'adapters' extra)")
from langchain_core.callbacks import CallbackManagerForRetrieverRun  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402


class BowEmbeddings(Embeddings):
    def embed_documents(self, texts):
        return [bow(t) for t in texts]

    def embed_query(self, text):
        return bow(text)


def lc_store(*, with_ids: bool = True, key: str = "doc_id") -> InMemoryVectorStore:
    store = InMemoryVectorStore(BowEmbeddings())
    store.add_documents([Document(page_content=t, metadata={key: d}, **({"id": d} if with_ids else {}))
                         for d, t in DOCS.items()])
    return store


def test_langchain_vector_store_ranks_like_exact_cosine_and_keeps_scores_and_texts():
    run = retrieve(lc_store(), GOLDEN, top_k=3)
    assert ranked_ids(run) == {q: oracle(text, 3) for q, text in QUERIES.items()}
    rows = run.to_frame()
    first = rows[(rows.query_id == "q2") & (rows["rank"] == 1)].doc_id.item()
    given = run.given_score[(run.query_id == "q2") & (run.doc_id == first)][0]
    assert given == pytest.approx(np.dot(bow(QUERIES["q2"]), bow(DOCS[first])))
    assert run.texts["rate"] == DOCS["rate"]
    report = evaluate_retriever(lc_store(), GOLDEN, ["recall@1", "mrr"])
    expected = evaluate(GOLDEN, {q: oracle(t, 10) for q, t in QUERIES.items()}, ["recall@1", "mrr"])
    assert report.per_query == expected.per_query


def test_langchain_retriever_is_asked_for_top_k_not_its_default_4():
    retriever = lc_store().as_retriever()  # search_kwargs default k=4
    run = retrieve(retriever, GOLDEN, top_k=6)
    assert ranked_ids(run) == {q: oracle(text, 6) for q, text in QUERIES.items()}


def test_langchain_auto_ids_are_refused_and_id_key_reads_the_metadata():
    store = lc_store(with_ids=False, key="source")  # the store gives each document a random uuid
    with pytest.raises(InputError, match=r"not your doc ids: pass id_key= the metadata key .*id_key='doc_id'"):
        evaluate_retriever(store, GOLDEN, ["recall@1"])
    report = evaluate_retriever(store, GOLDEN, ["recall@1"], id_key="source")
    assert report.per_query == evaluate(GOLDEN, {q: oracle(t, 10) for q, t in QUERIES.items()}, ["recall@1"]).per_query
    assert report.settings["retriever"]["ids"] == "id_key 'source'" and not report.settings["retriever"]["fallback"]
    with pytest.raises(InputError, match=r"query 'q1': LangChain Document has no metadata key 'doc_id' "
                                         r"\(its metadata keys: source\); pass id_key="):
        retrieve(store, GOLDEN, id_key="doc_id")


class NoIdRetriever(BaseRetriever):
    """A custom LangChain retriever whose Documents carry no id at all."""

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun):
        return [Document(page_content=DOCS[d], metadata={"source": d}) for d in oracle(query, 3)]


def test_langchain_document_without_id_is_one_error_naming_the_key_to_set():
    with pytest.raises(InputError) as err:
        retrieve(NoIdRetriever(), GOLDEN)
    msg = str(err.value)
    assert msg.startswith("query 'q1': LangChain Document has no Document.id; set Document.id when you index it, "
                          "or pass id_key= the metadata key")
    assert "\n" not in msg
    run = retrieve(NoIdRetriever(), GOLDEN, id_key="source", top_k=3)
    assert ranked_ids(run) == {q: oracle(text, 3) for q, text in QUERIES.items()}


def test_langchain_async_path_gives_the_same_run_with_bounded_concurrency():
    sync = retrieve(lc_store(), GOLDEN, top_k=4)
    concurrent = retrieve(lc_store(), GOLDEN, top_k=4, concurrency=3)
    assert ranked_ids(concurrent) == ranked_ids(sync)
    report = asyncio.run(aevaluate_retriever(lc_store().as_retriever(), GOLDEN, ["mrr"], concurrency=2))
    assert report.per_query == evaluate(GOLDEN, sync, ["mrr"]).per_query


# --------------------------------------------------------------------------------------------- LlamaIndex
li_core = pytest.importorskip("llama_index.core", reason="llama-index-core (the 'adapters' extra)")
from llama_index.core import VectorStoreIndex  # noqa: E402
from llama_index.core.embeddings import BaseEmbedding  # noqa: E402
from llama_index.core.schema import MetadataMode, TextNode  # noqa: E402


class BowEmbedding(BaseEmbedding):
    def _get_query_embedding(self, query):
        return bow(query)

    async def _aget_query_embedding(self, query):
        return bow(query)

    def _get_text_embedding(self, text):
        return bow(text)


def li_index(**node_kwargs) -> VectorStoreIndex:
    # excluded_embed_metadata_keys: embed the text alone, so numpy's cosine of the same texts is the oracle
    nodes = [TextNode(text=t, metadata={"doc_id": d}, excluded_embed_metadata_keys=["doc_id"],
                      **({"id_": d} if node_kwargs.get("ids", True) else {})) for d, t in DOCS.items()]
    assert nodes[0].get_content(metadata_mode=MetadataMode.EMBED) == DOCS["refund"]
    return VectorStoreIndex(nodes=nodes, embed_model=BowEmbedding())


def test_llamaindex_retriever_ranks_like_exact_cosine_sync_and_async():
    retriever = li_index().as_retriever(similarity_top_k=3)
    run = retrieve(retriever, GOLDEN, top_k=3)
    assert ranked_ids(run) == {q: oracle(text, 3) for q, text in QUERIES.items()}
    given = run.given_score[(run.query_id == "q4") & (run.doc_id == "webhook")][0]
    assert given == pytest.approx(np.dot(bow(QUERIES["q4"]), bow(DOCS["webhook"])))
    report = asyncio.run(aevaluate_retriever(retriever, GOLDEN, ["recall@1", "mrr"], concurrency=4))
    assert report.per_query == evaluate(GOLDEN, run, ["recall@1", "mrr"]).per_query


def test_llamaindex_random_node_ids_are_refused_and_metadata_key_works():
    retriever = li_index(ids=False).as_retriever(similarity_top_k=2)
    with pytest.raises(InputError, match="id_key="):
        retrieve(retriever, GOLDEN)
    run = retrieve(retriever, GOLDEN, id_key="doc_id", top_k=2)
    assert ranked_ids(run) == {q: oracle(text, 2) for q, text in QUERIES.items()}
    run = retrieve(retriever, GOLDEN, id_key=lambda node: node.metadata["doc_id"], top_k=2)
    assert ranked_ids(run) == {q: oracle(text, 2) for q, text in QUERIES.items()}


# --------------------------------------------------------------------------------------------- callables
def exact_pairs(query: str) -> list[tuple[str, float]]:
    q = np.array(bow(query))
    return [(d, float(np.dot(q, bow(DOCS[d])))) for d in oracle(query, 5)]


def test_callable_pairs_and_plain_ids():
    run = retrieve(exact_pairs, GOLDEN, top_k=2)
    assert ranked_ids(run) == {q: oracle(text, 2) for q, text in QUERIES.items()}
    run = retrieve(lambda query: oracle(query, 5), GOLDEN, top_k=5)
    assert ranked_ids(run) == {q: oracle(text, 5) for q, text in QUERIES.items()}
    with pytest.raises(InputError, match=r"query 'q1': hit \{'name': 'x'\} has no '.id'"):
        retrieve(lambda query: [{"name": "x"}], GOLDEN)


def test_async_callable_runs_at_most_concurrency_queries_at_once():
    state = {"now": 0, "peak": 0, "joined": 0}
    lock = threading.Lock()

    async def search(query):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
            state["joined"] += state["now"] == 2  # this query started while another was in flight
        await asyncio.sleep(0.05)
        with lock:
            state["now"] -= 1
        return exact_pairs(query)

    run = retrieve(search, GOLDEN, top_k=3, concurrency=2)
    assert state["peak"] == 2
    # 6 queries, 2 at a time: most start beside another (about 3 rounds, not 6), counted, not timed
    assert state["joined"] >= 2, state
    assert ranked_ids(run) == {q: oracle(text, 3) for q, text in QUERIES.items()}


def test_sync_only_retriever_with_concurrency_uses_threads_and_works_inside_a_running_loop():
    peak, now, lock = [0], [0], threading.Lock()

    def search(query):
        with lock:
            now[0] += 1
            peak[0] = max(peak[0], now[0])
        time.sleep(0.05)
        with lock:
            now[0] -= 1
        return exact_pairs(query)

    async def in_a_notebook_cell():
        return retrieve(search, GOLDEN, top_k=3, concurrency=3), retrieve(lc_store(), GOLDEN, top_k=3, concurrency=3)

    threaded, lc = asyncio.run(in_a_notebook_cell())
    assert 1 < peak[0] <= 3
    assert ranked_ids(threaded) == ranked_ids(lc) == {q: oracle(text, 3) for q, text in QUERIES.items()}


def test_bad_retriever_and_options_are_one_line_errors():
    with pytest.raises(InputError, match="cannot retrieve with a int: pass a LangChain retriever"):
        retrieve(42, GOLDEN)
    with pytest.raises(InputError, match="concurrency must be a whole number >= 1, got 0"):
        retrieve(exact_pairs, GOLDEN, concurrency=0)
    with pytest.raises(InputError, match="id_key must be a metadata key"):
        retrieve(exact_pairs, GOLDEN, id_key=3)
