"""Which id a retriever's run is scored by (issue 36 item 12) and the one duplicate rule (issue 34 item 7), against
the real libraries: llama-index-core's ``VectorStoreIndex.from_documents`` (every node a new UUID, the document's
id in ``ref_doc_id``), langchain-classic's ``ParentDocumentRetriever`` over langchain-core's ``InMemoryVectorStore``
and ``InMemoryStore`` (child chunks carry the parent's id in ``metadata["doc_id"]``, the parents none of their own).
Embeddings are test_adapters.py's deterministic bag-of-words vectors (nothing is downloaded); rankings are checked
against numpy."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from relgrade import InputError, evaluate, evaluate_retriever, read_run, retrieve

# the documents, queries, bag-of-words embeddings and numpy oracle of test_adapters.py, shared
_spec = importlib.util.spec_from_file_location("relgrade_test_adapters", Path(__file__).with_name("test_adapters.py"))
world = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(world)
DOCS, QUERIES, RELEVANT, GOLDEN, oracle = world.DOCS, world.QUERIES, world.RELEVANT, world.GOLDEN, world.oracle
BowEmbedding, BowEmbeddings = world.BowEmbedding, world.BowEmbeddings


# --------------------------------------------------------------------------------------------- LlamaIndex
li_core = pytest.importorskip("llama_index.core", reason="llama-index-core (the 'adapters' extra)")
from llama_index.core import Document as LIDocument  # noqa: E402
from llama_index.core import MockEmbedding, VectorStoreIndex  # noqa: E402
from llama_index.core.base.base_retriever import BaseRetriever as LIRetriever  # noqa: E402
from llama_index.core.schema import NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode  # noqa: E402


def test_llamaindex_from_documents_falls_back_to_ref_doc_id_and_says_so():
    index = VectorStoreIndex.from_documents([LIDocument(text=t, doc_id=d) for d, t in DOCS.items()],
                                            embed_model=BowEmbedding())
    node_ids = {n.node_id for n in index.as_retriever(similarity_top_k=5).retrieve("x")}
    assert not node_ids & set(DOCS)  # the nodes' own ids are new UUIDs
    report = evaluate_retriever(index.as_retriever(similarity_top_k=3), GOLDEN, ["recall@1", "mrr"])
    expected = evaluate(GOLDEN, {q: oracle(t, 3) for q, t in QUERIES.items()}, ["recall@1", "mrr"])
    assert report.per_query == expected.per_query
    said = report.settings["retriever"]
    assert said["ids"] == "ref_doc_id" and said["fallback"] and said["chunk_slots"] == 0
    line = report.table().splitlines()[-1]
    assert line.startswith("ids: ref_doc_id of the document each chunk was cut from (the node.node_id values, e.g. '")
    assert line.endswith("are not the golden set's documents)")
    # with MockEmbedding (every vector alike) the ids are still the documents'
    flat = VectorStoreIndex.from_documents([LIDocument(text=t, doc_id=d) for d, t in DOCS.items()],
                                           embed_model=MockEmbedding(embed_dim=8))
    run = retrieve(flat.as_retriever(similarity_top_k=len(DOCS)), GOLDEN, top_k=len(DOCS))
    assert set(run.doc_id.tolist()) == set(DOCS) and run.retrieval["ids"] == "ref_doc_id"


def test_llamaindex_nodes_that_are_the_golden_ids_are_kept():
    nodes = [TextNode(text=t, id_=d) for d, t in DOCS.items()]
    run = retrieve(VectorStoreIndex(nodes=nodes, embed_model=BowEmbedding()).as_retriever(similarity_top_k=2), GOLDEN,
                   top_k=2)
    assert run.retrieval["ids"] == "node.node_id" and not run.retrieval["fallback"]
    assert run.retrieval["line"] == "ids: node.node_id"


class Chunks(LIRetriever):
    """Real LlamaIndex nodes: chunks of documents (their SOURCE relationship), in a fixed order per query."""

    def __init__(self, order):
        super().__init__()
        self.order = order

    def _retrieve(self, query_bundle):
        return [NodeWithScore(node=TextNode(text=f"chunk {i} of {doc}", relationships={
            NodeRelationship.SOURCE: RelatedNodeInfo(node_id=doc)}), score=1.0 - i / 10)
            for i, doc in enumerate(self.order[query_bundle.query_str])]


def test_later_chunks_of_a_document_keep_their_place_so_no_rank_moves():
    # two chunks of another document before the relevant one (q1: 'rate', 'rate', 'refund'): it stays at rank 3
    other = {q: "sso" if RELEVANT[q] == "rate" else "rate" for q in QUERIES}
    last = {q: "export" if RELEVANT[q] != "export" else "webhook" for q in QUERIES}
    order = {text: [other[q], other[q], RELEVANT[q], other[q], last[q]] for q, text in QUERIES.items()}
    report = evaluate_retriever(Chunks(order), GOLDEN, ["recall@2", "recall@3", "mrr"], top_k=5)
    assert report.value("recall@2") == 0.0 and report.value("recall@3") == 1.0
    assert report.value("mrr") == pytest.approx(1 / 3)
    run = retrieve(Chunks(order), GOLDEN, top_k=5)
    assert run.ranked()["q1"] == ["rate", "rate#2", "refund", "rate#4", "export"]
    said = run.retrieval
    assert said["ids"] == "ref_doc_id" and said["chunk_slots"] == 2 * len(QUERIES)  # two later chunks per query
    assert said["line"].endswith(f"; {2 * len(QUERIES)} later chunks of a document already ranked kept as slots "
                                 "(<doc id>#<position>) that no label grades")


# --------------------------------------------------------------------------------------------- LangChain
pytest.importorskip("langchain_core", reason="langchain-core (the 'adapters' extra)")
from langchain_core.documents import Document  # noqa: E402
from langchain_core.stores import InMemoryStore  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402


def _parent_retriever():
    classic = pytest.importorskip("langchain_classic.retrievers", reason="langchain-classic (dev extra)")
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    children = InMemoryVectorStore(BowEmbeddings())
    retriever = classic.ParentDocumentRetriever(
        vectorstore=children, docstore=InMemoryStore(), search_kwargs={"k": 3},
        child_splitter=RecursiveCharacterTextSplitter(chunk_size=10_000, chunk_overlap=0))
    retriever.add_documents([Document(page_content=t, metadata={"source": "kb"}) for t in DOCS.values()],
                            ids=list(DOCS))
    return retriever, children


def test_parent_document_retriever_parents_are_scored_by_their_docstore_key():
    retriever, _ = _parent_retriever()
    got = retriever.invoke(QUERIES["q1"])
    assert got and all(d.id is None for d in got)  # the parents carry no id of their own
    report = evaluate_retriever(retriever, GOLDEN, ["recall@1", "mrr"], top_k=3)
    expected = evaluate(GOLDEN, {q: oracle(t, 3) for q, t in QUERIES.items()}, ["recall@1", "mrr"])
    assert report.per_query == expected.per_query
    assert report.settings["retriever"]["ids"] == "docstore key" and report.settings["retriever"]["fallback"]


def test_child_chunks_are_scored_by_their_parent_id_in_metadata():
    _, children = _parent_retriever()  # each child carries metadata['doc_id'] = its parent's id, and a uuid
    run = retrieve(children, GOLDEN, top_k=3)
    assert run.retrieval["ids"] == "metadata 'doc_id'" and run.retrieval["fallback"]
    assert run.ranked() == {q: oracle(t, 3) for q, t in QUERIES.items()}


def test_langchain_documents_without_any_usable_id_name_the_ids_tried():
    store = InMemoryVectorStore(BowEmbeddings())
    store.add_documents([Document(page_content=t, metadata={"doc_id": f"other-{d}"}) for d, t in DOCS.items()])
    with pytest.raises(InputError, match=r"\(nor their metadata 'doc_id'\) is a document of the golden set"):
        retrieve(store, GOLDEN)


# --------------------------------------------------------------------------------------------- one rule
def test_an_own_id_listed_twice_is_refused_as_a_run_file_is(tmp_path):
    hits = [("refund", 0.9), ("rate", 0.8), ("refund", 0.7)]
    with pytest.raises(InputError) as err:
        retrieve(lambda query: hits, GOLDEN, top_k=3)
    assert str(err.value) == ("query 'q1': document 'refund' appears twice in the callable query -> [(id, score)]'s "
                              "results (hits 1 and 3); each document once per query, as in a run file: fix the "
                              "retriever, or pass id_key= when its results are chunks of your documents")
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({"query_id": "q1", "results": [{"doc_id": d, "score": s} for d, s in hits]}) + "\n")
    with pytest.raises(InputError, match="appears twice"):
        read_run(path)
    with pytest.raises(InputError, match="appears twice"):  # the same refusal through the guide's run_from_hits
        from relgrade.io import run_from_hits

        run_from_hits([("q1", "query", [type("H", (), {"id": d})() for d, _ in hits])])


def test_ids_named_by_id_key_are_documents_of_chunks():
    hits = [{"id": "c1", "doc": "rate"}, {"id": "c2", "doc": "rate"}, {"id": "c3", "doc": "refund"}]
    run = retrieve(lambda query: hits, GOLDEN, top_k=3, id_key="doc")
    assert run.ranked()["q1"] == ["rate", "rate#2", "refund"] and run.retrieval["ids"] == "id_key 'doc'"
