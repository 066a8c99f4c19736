"""One interface over the retrievers people already have: :func:`adapt` picks the adapter.

Accepted (checked in this order; the libraries are never imported here, an object is recognised by
its classes when the library that made it is already loaded):

* a LangChain retriever (``langchain_core.retrievers.BaseRetriever``): ``invoke(query)`` -> ``Document``s, rank
  order = list order, no score; a ``VectorStoreRetriever`` is asked for ``k=top_k`` documents. Async: ``ainvoke``;
* a LangChain vector store (``langchain_core.vectorstores.VectorStore``): ``similarity_search_with_score(query,
  k=top_k)`` -> ``(Document, score)``; the score is kept as given (a similarity or a distance, the store decides;
  rank order is the store's list order). Async: ``asimilarity_search_with_score``;
* a LlamaIndex retriever (``llama_index.core.base.base_retriever.BaseRetriever``): ``retrieve(query)`` ->
  ``NodeWithScore``. Async: ``aretrieve``;
* the guide's protocol: an object with ``search(query, top_k)`` returning hits with ``.id`` (and ``.score``,
  ``.text`` if it has them). Async: ``asearch(query, top_k)`` when it has one;
* any callable ``query -> [(id, score), ...]`` (or ``[id, ...]``, or hits with ``.id``); an ``async def``
  function is awaited.

Ids: LangChain's ``Document.id`` and LlamaIndex's ``node.node_id`` by default; ``id_key="doc_id"`` reads that
metadata key instead (most loaders keep the source id there), and a callable ``id_key(document)`` returns it. A
document without an id is an :class:`~relgrade.InputError` naming the key to set. Every result list is cut to
``top_k``.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from relgrade._errors import InputError

ACCEPTED = ("a LangChain retriever or vector store, a LlamaIndex retriever, an object with search(query, top_k) "
            "returning hits with .id, or a callable query -> [(id, score), ...]")


@dataclass(frozen=True)
class Hit:
    """One retrieved document, as relgrade keeps it: ``id`` (a string), ``score`` (None when not given), ``text``."""

    id: str
    score: float | None = None
    text: str | None = None


class MissingId(Exception):
    """A retrieved document has no id under the configured key; :mod:`._retrieve` adds the query to the message."""


def _loaded_class(module: str, name: str) -> type | None:
    mod = sys.modules.get(module)
    return getattr(mod, name, None) if mod is not None else None


def _is(obj: Any, module: str, name: str) -> bool:
    cls = _loaded_class(module, name)
    return cls is not None and isinstance(obj, cls)


def _metadata_id(metadata: Any, id_key: str, what: str) -> Any:
    if not isinstance(metadata, Mapping) or metadata.get(id_key) in (None, ""):
        keys = ", ".join(sorted(map(str, metadata))) if isinstance(metadata, Mapping) and metadata else "none"
        raise MissingId(f"{what} has no metadata key {id_key!r} (its metadata keys: {keys}); pass id_key= the key "
                        "that holds your document id")
    return metadata[id_key]


def _id_of(doc: Any, id_key: Any, own_id: Any, metadata: Any, what: str, own_name: str) -> str:
    if callable(id_key):
        value = id_key(doc)
        if value in (None, ""):
            raise MissingId(f"id_key returned {value!r} for a {what}; return the document's id")
        return str(value)
    if id_key:
        return str(_metadata_id(metadata, id_key, what))
    if own_id in (None, ""):
        raise MissingId(f"{what} has no {own_name}; set {own_name} when you index it, or pass id_key= the metadata "
                        "key that holds your document id (e.g. id_key='doc_id')")
    return str(own_id)


def langchain_hit(doc: Any, score: Any, id_key: Any) -> Hit:
    doc_id = _id_of(doc, id_key, getattr(doc, "id", None), getattr(doc, "metadata", None), "LangChain Document",
                    "Document.id")
    return Hit(doc_id, None if score is None else float(score), getattr(doc, "page_content", None))


def llamaindex_hit(item: Any, id_key: Any) -> Hit:
    node = getattr(item, "node", item)
    doc_id = _id_of(node, id_key, getattr(node, "node_id", None), getattr(node, "metadata", None), "LlamaIndex node",
                    "node.node_id")
    text = node.get_content() if hasattr(node, "get_content") else getattr(node, "text", None)
    score = getattr(item, "score", None)
    return Hit(doc_id, None if score is None else float(score), text if isinstance(text, str) else None)


def plain_hit(hit: Any, id_key: Any) -> Hit:
    """A hit of the guide's protocol or of a callable: an id, ``(id, score)``, a mapping or an object with ``.id``."""
    if isinstance(hit, (str, int)) and not isinstance(hit, bool):
        return Hit(str(hit))
    if isinstance(hit, tuple) and len(hit) == 2 and not hasattr(hit, "_fields"):
        doc, score = hit
        if isinstance(doc, (str, int)) and not isinstance(doc, bool):
            return Hit(str(doc), None if score is None else float(score))
        if hasattr(doc, "page_content"):  # (Document, score) from a LangChain call wrapped in a function
            return langchain_hit(doc, score, id_key)
    if hasattr(hit, "page_content"):
        return langchain_hit(hit, None, id_key)
    get = hit.get if isinstance(hit, Mapping) else (lambda name, default=None: getattr(hit, name, default))
    doc = id_key(hit) if callable(id_key) else get(id_key) if id_key else get("id", get("doc_id"))
    if doc in (None, ""):
        name = f"{id_key!r}" if isinstance(id_key, str) else "'.id'"
        raise MissingId(f"hit {str(hit)[:80]} has no {name}; return (id, score) pairs or objects with .id")
    score = get("score")
    text = get("text", get("page_content"))
    return Hit(str(doc), None if score is None else float(score), text if isinstance(text, str) else None)


class Adapter:
    """``search(query, top_k) -> [Hit]`` and, when the retriever has an async API, ``asearch``."""

    kind = "retriever"

    def __init__(self, target: Any, id_key: Any = None):
        self.target = target
        self.id_key = id_key

    @property
    def has_async(self) -> bool:
        return False

    def search(self, query: str, top_k: int) -> list[Hit]:
        raise NotImplementedError

    async def asearch(self, query: str, top_k: int) -> list[Hit]:
        raise NotImplementedError

    @property
    def name(self) -> str:
        return str(getattr(self.target, "name", None) or getattr(self.target, "__name__", None)
                   or type(self.target).__name__)


class LangChainRetriever(Adapter):
    kind = "LangChain retriever"
    has_async = True

    def _kwargs(self, top_k: int) -> dict:
        # a VectorStoreRetriever passes extra kwargs to the store's search: ask for top_k instead of its default 4
        return {"k": top_k} if hasattr(self.target, "vectorstore") and hasattr(self.target, "search_kwargs") else {}

    def search(self, query, top_k):
        docs = self.target.invoke(query, **self._kwargs(top_k))
        return [langchain_hit(d, None, self.id_key) for d in list(docs)[:top_k]]

    async def asearch(self, query, top_k):
        docs = await self.target.ainvoke(query, **self._kwargs(top_k))
        return [langchain_hit(d, None, self.id_key) for d in list(docs)[:top_k]]


class LangChainVectorStore(Adapter):
    kind = "LangChain vector store"
    has_async = True

    def search(self, query, top_k):
        pairs = self.target.similarity_search_with_score(query, k=top_k)
        return [langchain_hit(d, s, self.id_key) for d, s in list(pairs)[:top_k]]

    async def asearch(self, query, top_k):
        pairs = await self.target.asimilarity_search_with_score(query, k=top_k)
        return [langchain_hit(d, s, self.id_key) for d, s in list(pairs)[:top_k]]


class LlamaIndexRetriever(Adapter):
    kind = "LlamaIndex retriever"
    has_async = True

    def search(self, query, top_k):
        return [llamaindex_hit(n, self.id_key) for n in list(self.target.retrieve(query))[:top_k]]

    async def asearch(self, query, top_k):
        return [llamaindex_hit(n, self.id_key) for n in list(await self.target.aretrieve(query))[:top_k]]


class SearchProtocol(Adapter):
    kind = "retriever with search(query, top_k)"

    @property
    def has_async(self) -> bool:
        return inspect.iscoroutinefunction(getattr(self.target, "asearch", None))

    def search(self, query, top_k):
        return [plain_hit(h, self.id_key) for h in list(self.target.search(query, top_k=top_k))[:top_k]]

    async def asearch(self, query, top_k):
        return [plain_hit(h, self.id_key) for h in list(await self.target.asearch(query, top_k=top_k))[:top_k]]


class CallableRetriever(Adapter):
    kind = "callable query -> [(id, score)]"

    @property
    def has_async(self) -> bool:
        return inspect.iscoroutinefunction(self.target) or inspect.iscoroutinefunction(
            getattr(self.target, "__call__", None))

    def search(self, query, top_k):
        return [plain_hit(h, self.id_key) for h in list(self.target(query))[:top_k]]

    async def asearch(self, query, top_k):
        return [plain_hit(h, self.id_key) for h in list(await self.target(query))[:top_k]]


def adapt(retriever: Any, *, id_key: Any = None) -> Adapter:
    """The :class:`Adapter` for ``retriever`` (module docstring), or InputError saying what is accepted."""
    if isinstance(retriever, Adapter):
        return retriever
    if id_key is not None and not (isinstance(id_key, str) and id_key or callable(id_key)):
        raise InputError(f"id_key must be a metadata key (a non-empty string) or a function document -> id, "
                         f"got {id_key!r}")
    if _is(retriever, "langchain_core.retrievers", "BaseRetriever"):
        return LangChainRetriever(retriever, id_key)
    if _is(retriever, "langchain_core.vectorstores.base", "VectorStore") or _is(
            retriever, "langchain_core.vectorstores", "VectorStore"):
        return LangChainVectorStore(retriever, id_key)
    if _is(retriever, "llama_index.core.base.base_retriever", "BaseRetriever"):
        return LlamaIndexRetriever(retriever, id_key)
    if callable(getattr(retriever, "search", None)):
        return SearchProtocol(retriever, id_key)
    if callable(retriever):
        return CallableRetriever(retriever, id_key)
    raise InputError(f"cannot retrieve with a {type(retriever).__name__}: pass {ACCEPTED}")


__all__ = ["ACCEPTED", "Adapter", "Hit", "MissingId", "adapt"]
