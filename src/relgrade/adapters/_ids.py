"""Which id a retriever's hits are scored by, and the one duplicate rule.

Ids: ``id_key`` when given (a metadata key or a function: the document id of each chunk). Otherwise the hits' own
ids (``Document.id``, ``node.node_id``, the ids a callable or ``search()`` returns); when the golden set's documents
are known and none of the own ids is one of them (or the hits have none), the first *parent* id that is: the id
of the document a chunk was cut from (LlamaIndex's ``ref_doc_id``, LangChain's ``metadata["doc_id"]``, a
multi-vector retriever's docstore key; :mod:`relgrade.adapters._adapt`). The id used is said: :meth:`IdChoice.line`,
``settings["retriever"]`` of the report.

Duplicates, one rule with the run files (:mod:`relgrade.io`): a document appears once per query. Own ids repeated
in one result list are refused as a run file listing a document twice is ("appears twice", naming the query and
both positions). Ids that name the document of a chunk (``id_key``, a parent id) repeat whenever a document has
several chunks in the list: the document is ranked at its first chunk, and each later chunk keeps its place as
``<doc id>#<position>`` (a slot no label grades), so no document moves up past the chunks retrieved before it (a
relevant document behind two chunks of another stays at rank 3). How many chunks became slots is said.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from relgrade.adapters._adapt import Hit, MissingId

OWN = {"LangChain retriever": "Document.id", "LangChain vector store": "Document.id",
       "LlamaIndex retriever": "node.node_id"}


class Duplicate(Exception):
    """One result list names a document twice by its own id; :mod:`._retrieve` adds the query."""


@dataclass(frozen=True)
class IdChoice:
    """The id the run is scored by: ``source`` (``"node.node_id"``, ``"ref_doc_id"``, ``"id_key 'doc_id'"``...),
    whether it names the document of a chunk (``documents``: repeats are later chunks, kept as slots), whether
    it replaced own ids that are not the golden set's (``fallback``, with ``own``: what they were, e.g. one)."""

    source: str
    documents: bool = False
    fallback: bool = False
    own: str | None = None
    own_example: str | None = None

    def parent(self, hit: Hit) -> str | None:
        return next((pid for where, pid in hit.parents if where == self.source), None)

    def pick(self, hit: Hit) -> str | None:
        return self.parent(hit) if self.fallback else hit.id

    def line(self, slots: int = 0) -> str:
        """What the report says: ``ids: ref_doc_id (the node.node_id values, e.g. 'f3a9...', are not the golden
        set's documents); 4 later chunks of a document already ranked kept as slots``."""
        text = f"ids: {self.source}"
        if self.fallback:
            example = f", e.g. {self.own_example!r}," if self.own_example else ""
            text += (f" of the document each chunk was cut from (the {self.own} values{example} are not the golden "
                     "set's documents)")
        if slots:
            text += (f"; {slots} later {'chunk' if slots == 1 else 'chunks'} of a document already ranked kept as "
                     f"{'a slot' if slots == 1 else 'slots'} (<doc id>#<position>) that no label grades")
        return text


def choose(kind: str, id_key: Any, results: Sequence[Sequence[Hit]], labeled: set[str]) -> IdChoice:
    """The :class:`IdChoice` for the hits of every query (module docstring)."""
    own = OWN.get(kind, "hit id")
    if id_key:
        return IdChoice(f"id_key {id_key!r}" if isinstance(id_key, str) else "id_key (a function)", documents=True)
    hits = [h for hs in results for h in hs]
    own_ids = {h.id for h in hits if h.id is not None}
    parents = list(dict.fromkeys(where for h in hits for where, _ in h.parents))
    if labeled and not own_ids & labeled or not labeled and any(h.id is None for h in hits):
        for where in parents:
            ids = {pid for h in hits for w, pid in h.parents if w == where}
            if not labeled or ids & labeled:
                return IdChoice(where, documents=True, fallback=True, own=own,
                                own_example=next(iter(sorted(own_ids)), None))
    return IdChoice(own)


def assign(choice: IdChoice, hits: Sequence[Hit], kind: str) -> tuple[list[Hit], int]:
    """``hits`` with the chosen id, and how many later chunks became slots; :class:`MissingId` for a hit without
    it, :class:`Duplicate` for an own id listed twice (module docstring)."""
    out, seen, slots = [], {}, 0
    for position, hit in enumerate(hits, 1):
        doc = choice.pick(hit)
        if doc is None:
            what = "LangChain Document" if "LangChain" in kind else "LlamaIndex node" if "LlamaIndex" in kind else "hit"
            if not choice.fallback:
                raise MissingId(f"{what} has no {choice.source}; set {choice.source} when you index it, or pass id_key= "
                                "the metadata key that holds your document id (e.g. id_key='doc_id')")
            raise MissingId(f"{what} (hit {position}) has no {choice.source} while the other hits are scored by it; "
                            "give every document that id, or pass id_key= the metadata key that holds your document "
                            "id")
        if doc in seen:
            if not choice.documents:
                raise Duplicate(f"document {doc!r} appears twice in the {kind}'s results (hits {seen[doc]} and "
                                f"{position}); each document once per query, as in a run file: fix the retriever, "
                                "or pass id_key= when its results are chunks of your documents")
            doc, slots = f"{doc}#{position}", slots + 1
        else:
            seen[doc] = position
        out.append(replace(hit, id=doc))
    return out, slots


__all__ = ["Duplicate", "IdChoice", "assign", "choose"]
