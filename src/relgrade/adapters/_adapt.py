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
metadata key instead (most loaders keep the source id there), and a callable ``id_key(document)`` returns it.
Without ``id_key`` each hit also carries its *parent* ids, the document a chunk was cut from: LlamaIndex's
``node.ref_doc_id`` (``VectorStoreIndex.from_documents`` gives every node a new UUID and the document's id there),
LangChain's ``metadata["doc_id"]`` (the key a ``MultiVectorRetriever`` / ``ParentDocumentRetriever`` writes on its
child chunks, its own ``id_key`` when it has one) and, for the parents such a retriever returns, their key in its
``docstore``; :mod:`relgrade.adapters._retrieve` falls back to them when the own ids are not the golden set's
(:mod:`relgrade.adapters._ids`). A document without any id is an :class:`~relgrade.InputError` naming the key to
set. Every result list is cut to ``top_k``.

What a retriever returns is checked before it is used (:class:`BadResult`, which the caller turns into one error
naming the query): a list (not None, an int, a string or a mapping), items of the library's kind, scores that are
numbers.
"""

from __future__ import annotations

import inspect
import math
import numbers
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from relgrade._errors import InputError

ACCEPTED = ("a LangChain retriever or vector store, a LlamaIndex retriever, an object with search(query, top_k) "
            "returning hits with .id, or a callable query -> [(id, score), ...]")


@dataclass(frozen=True)
class Hit:
    """One retrieved document, as relgrade keeps it: ``id`` (a string; None when the document has no own id but
    ``parents``), ``score`` (None when not given), ``text``, and ``parents``: ``(where, id)`` of the document it
    is a chunk of, in the order they are tried (module docstring)."""

    id: str | None
    score: float | None = None
    text: str | None = None
    parents: tuple[tuple[str, str], ...] = ()


class MissingId(Exception):
    """A retrieved document has no id under the configured key; :mod:`._retrieve` adds the query to the message."""


class BadResult(Exception):
    """A retriever returned something that is not a list of hits (or a hit that is not one); :mod:`._retrieve`
    adds the query to the message."""


def _short(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def listed(value: Any, kind: str, what: str) -> list:
    """``value`` as a list, or :class:`BadResult`: None, a number, a string or a mapping is not a list of hits."""
    if value is None or isinstance(value, (str, bytes, Mapping, numbers.Number)) or not isinstance(value, Iterable):
        raise BadResult(f"the {kind} returned {type(value).__name__} {_short(value)}, not a list of {what}")
    return list(value)


def score_of(score: Any, position: int) -> float | None:
    """A hit's score as a float (None stays None), or :class:`BadResult` naming the hit."""
    if score is None:
        return None
    if isinstance(score, bool) or not isinstance(score, numbers.Real) or math.isnan(float(score)):
        raise BadResult(f"hit {position + 1} has the score {_short(score)} ({type(score).__name__}), not a number")
    return float(score)


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


def _id_of(doc: Any, id_key: Any, own_id: Any, metadata: Any, what: str, own_name: str,
           parents: tuple[tuple[str, str], ...] = ()) -> str | None:
    if callable(id_key):
        value = id_key(doc)
        if value in (None, ""):
            raise MissingId(f"id_key returned {value!r} for a {what}; return the document's id")
        return str(value)
    if id_key:
        return str(_metadata_id(metadata, id_key, what))
    if own_id in (None, ""):
        if parents:
            return None  # the parent's id stands in (relgrade.adapters._ids)
        raise MissingId(f"{what} has no {own_name}; set {own_name} when you index it, or pass id_key= the metadata "
                        "key that holds your document id (e.g. id_key='doc_id')")
    return str(own_id)


def _parent(where: str, value: Any) -> tuple[tuple[str, str], ...]:
    return () if value in (None, "") or not isinstance(value, (str, int)) or isinstance(value, bool) \
        else ((where, str(value)),)


def langchain_hit(doc: Any, score: Any, id_key: Any, position: int = 0, *, parent_key: str = "doc_id",
                  stored: str | None = None) -> Hit:
    """A LangChain ``Document`` as a hit; without ``id_key`` its parents are ``metadata[parent_key]`` and
    ``stored`` (its key in a multi-vector retriever's docstore)."""
    if not hasattr(doc, "page_content"):
        raise BadResult(f"hit {position + 1} is {_short(doc)}, not a LangChain Document")
    metadata = getattr(doc, "metadata", None)
    parents = () if id_key else (_parent(f"metadata {parent_key!r}", metadata.get(parent_key)
                                         if isinstance(metadata, Mapping) else None) + _parent("docstore key", stored))
    doc_id = _id_of(doc, id_key, getattr(doc, "id", None), metadata, "LangChain Document", "Document.id", parents)
    return Hit(doc_id, score_of(score, position), getattr(doc, "page_content", None), parents)


def llamaindex_hit(item: Any, id_key: Any, position: int = 0) -> Hit:
    """A LlamaIndex ``NodeWithScore`` (or node) as a hit; without ``id_key`` its parent is ``node.ref_doc_id``."""
    node = getattr(item, "node", item)
    if not hasattr(node, "node_id"):
        raise BadResult(f"hit {position + 1} is {_short(item)}, not a LlamaIndex NodeWithScore")
    parents = () if id_key else _parent("ref_doc_id", getattr(node, "ref_doc_id", None))
    doc_id = _id_of(node, id_key, getattr(node, "node_id", None), getattr(node, "metadata", None), "LlamaIndex node",
                    "node.node_id", parents)
    text = node.get_content() if hasattr(node, "get_content") else getattr(node, "text", None)
    return Hit(doc_id, score_of(getattr(item, "score", None), position), text if isinstance(text, str) else None,
               parents)


def plain_hit(hit: Any, id_key: Any, position: int = 0) -> Hit:
    """A hit of the guide's protocol or of a callable: an id, ``(id, score)``, a mapping or an object with ``.id``."""
    if isinstance(hit, (str, int)) and not isinstance(hit, bool):
        return Hit(str(hit))
    if hit is None or isinstance(hit, (bool, float, bytes)):
        raise BadResult(f"hit {position + 1} is {_short(hit)}, not an id, an (id, score) pair or an object with .id")
    if isinstance(hit, tuple) and len(hit) == 2 and not hasattr(hit, "_fields"):
        doc, score = hit
        if isinstance(doc, (str, int)) and not isinstance(doc, bool):
            return Hit(str(doc), score_of(score, position))
        if hasattr(doc, "page_content"):  # (Document, score) from a LangChain call wrapped in a function
            return langchain_hit(doc, score, id_key, position)
    if hasattr(hit, "page_content"):
        return langchain_hit(hit, None, id_key, position)
    get = hit.get if isinstance(hit, Mapping) else (lambda name, default=None: getattr(hit, name, default))
    doc = id_key(hit) if callable(id_key) else get(id_key) if id_key else get("id", get("doc_id"))
    if doc in (None, ""):
        name = f"{id_key!r}" if isinstance(id_key, str) else "'.id'"
        raise MissingId(f"hit {_short(hit)} has no {name}; return (id, score) pairs or objects with .id")
    if not isinstance(doc, (str, int)) or isinstance(doc, bool):
        raise BadResult(f"hit {position + 1} has the id {_short(doc)} ({type(doc).__name__}), not a string")
    text = get("text", get("page_content"))
    return Hit(str(doc), score_of(get("score"), position), text if isinstance(text, str) else None)


class Adapter:
    """``search(query, top_k) -> [Hit]`` and, when the retriever has an async API, ``asearch``."""

    kind = "retriever"

    def __init__(self, target: Any, id_key: Any = None):
        self.target = target
        self.id_key = id_key

    @property
    def has_async(self) -> bool:
        return False

    @property
    def only_async(self) -> bool:
        """The retriever has an async API alone (an ``async def`` callable): even one query at a time is awaited."""
        return False

    def search(self, query: str, top_k: int) -> list[Hit]:
        raise NotImplementedError

    async def asearch(self, query: str, top_k: int) -> list[Hit]:
        raise NotImplementedError

    @property
    def name(self) -> str:
        return str(getattr(self.target, "name", None) or getattr(self.target, "__name__", None)
                   or type(self.target).__name__)


def _content(doc: Any) -> tuple[Any, str]:
    return getattr(doc, "page_content", None), repr(getattr(doc, "metadata", None))


class LangChainRetriever(Adapter):
    kind = "LangChain retriever"
    has_async = True

    def __init__(self, target: Any, id_key: Any = None):
        super().__init__(target, id_key)
        own = getattr(target, "id_key", None)  # a MultiVectorRetriever's key of the parent id on its chunks
        self.parent_key = own if isinstance(own, str) and own else "doc_id"
        self._stored: dict[Any, str] | None = None

    def _kwargs(self, top_k: int) -> dict:
        # a VectorStoreRetriever passes extra kwargs to the store's search: ask for top_k instead of its default 4
        return {"k": top_k} if hasattr(self.target, "vectorstore") and hasattr(self.target, "search_kwargs") else {}

    def _key(self, doc: Any) -> str | None:
        """A parent's key in a multi-vector retriever's docstore (the parents it returns carry no id of their own):
        the stored object itself (an in-memory store), else the stored document with the same text and metadata."""
        store = getattr(self.target, "docstore", None)
        if self.id_key or getattr(doc, "id", None) or not callable(getattr(store, "yield_keys", None)):
            return None
        if self._stored is None:
            keys = list(store.yield_keys())
            self._stored = {}
            for key, value in zip(keys, store.mget(keys)):
                if value is not None:
                    self._stored.setdefault(id(value), key)
                    self._stored.setdefault(_content(value), key)
        return self._stored.get(id(doc)) or self._stored.get(_content(doc))

    def _hits(self, docs: Any, top_k: int) -> list[Hit]:
        return [langchain_hit(d, None, self.id_key, i, parent_key=self.parent_key, stored=self._key(d))
                for i, d in enumerate(listed(docs, self.kind, "Documents")[:top_k])]

    def search(self, query, top_k):
        return self._hits(self.target.invoke(query, **self._kwargs(top_k)), top_k)

    async def asearch(self, query, top_k):
        return self._hits(await self.target.ainvoke(query, **self._kwargs(top_k)), top_k)


class LangChainVectorStore(Adapter):
    kind = "LangChain vector store"
    has_async = True

    def _hits(self, pairs: Any, top_k: int) -> list[Hit]:
        out = []
        for i, pair in enumerate(listed(pairs, self.kind, "(Document, score) pairs")[:top_k]):
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise BadResult(f"hit {i + 1} is {_short(pair)}, not a (Document, score) pair")
            out.append(langchain_hit(pair[0], pair[1], self.id_key, i))
        return out

    def search(self, query, top_k):
        return self._hits(self.target.similarity_search_with_score(query, k=top_k), top_k)

    async def asearch(self, query, top_k):
        return self._hits(await self.target.asimilarity_search_with_score(query, k=top_k), top_k)


def _choked(exc: Exception) -> Exception:
    """LlamaIndex's ``retrieve`` post-processes what ``_retrieve`` returned: when it fails there (not in the
    retriever's own code), the result was not a list of ``NodeWithScore``; else the error is the retriever's own."""
    tb, last = exc.__traceback__, None
    while tb is not None:
        last, tb = tb, tb.tb_next
    where = last.tb_frame.f_code.co_filename.replace("\\", "/") if last is not None else ""
    if "llama_index/core/base/base_retriever" in where:
        return BadResult(f"the LlamaIndex retriever's _retrieve returned something that is not a list of "
                         f"NodeWithScore (LlamaIndex failed on it: {type(exc).__name__}: {exc})")
    return exc


class LlamaIndexRetriever(Adapter):
    kind = "LlamaIndex retriever"
    has_async = True

    def _hits(self, items: Any, top_k: int) -> list[Hit]:
        return [llamaindex_hit(n, self.id_key, i) for i, n in enumerate(listed(items, self.kind, "nodes")[:top_k])]

    def search(self, query, top_k):
        try:
            return self._hits(self.target.retrieve(query), top_k)
        except (TypeError, AttributeError) as exc:
            raise _choked(exc) from None

    async def asearch(self, query, top_k):
        try:
            return self._hits(await self.target.aretrieve(query), top_k)
        except (TypeError, AttributeError) as exc:
            raise _choked(exc) from None


class SearchProtocol(Adapter):
    kind = "retriever with search(query, top_k)"

    @property
    def has_async(self) -> bool:
        return inspect.iscoroutinefunction(getattr(self.target, "asearch", None))

    def _hits(self, hits: Any, top_k: int) -> list[Hit]:
        return [plain_hit(h, self.id_key, i) for i, h in enumerate(listed(hits, self.kind, "hits")[:top_k])]

    def search(self, query, top_k):
        return self._hits(self.target.search(query, top_k=top_k), top_k)

    async def asearch(self, query, top_k):
        return self._hits(await self.target.asearch(query, top_k=top_k), top_k)


class CallableRetriever(Adapter):
    kind = "callable query -> [(id, score)]"

    @property
    def has_async(self) -> bool:
        return inspect.iscoroutinefunction(self.target) or inspect.iscoroutinefunction(
            getattr(self.target, "__call__", None))

    @property
    def only_async(self) -> bool:
        return self.has_async

    def _hits(self, hits: Any, top_k: int) -> list[Hit]:
        return [plain_hit(h, self.id_key, i) for i, h in enumerate(listed(hits, self.kind, "hits")[:top_k])]

    def search(self, query, top_k):
        return self._hits(self.target(query), top_k)

    async def asearch(self, query, top_k):
        return self._hits(await self.target(query), top_k)


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


__all__ = ["ACCEPTED", "Adapter", "BadResult", "Hit", "MissingId", "adapt", "listed", "score_of"]
