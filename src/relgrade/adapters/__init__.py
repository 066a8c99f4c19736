"""Retriever adapters: LangChain, LlamaIndex, the guide's ``search(query, top_k)`` protocol and plain callables.

:func:`adapt` wraps a retriever in one interface; :func:`retrieve` / :func:`aretrieve` run it over a golden
set (bounded concurrency) into a :class:`~relgrade.io.Run`, which :func:`relgrade.evaluate_retriever` scores.
"""

from relgrade.adapters._adapt import ACCEPTED, Adapter, Hit, adapt
from relgrade.adapters._retrieve import aretrieve, retrieve

__all__ = ["ACCEPTED", "Adapter", "Hit", "adapt", "aretrieve", "retrieve"]
