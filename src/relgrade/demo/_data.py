"""The bundled demo data: the docs of a fictional SaaS product (Ledgerline), a golden set, human labels.

Everything here was written and labeled by the relgrade project authors (see ``data/README.md``);
it ships in the wheel so ``relgrade demo`` and the notebooks run offline.

- ``corpus.jsonl``: one chunk per line (``doc_id``, ``title``, ``section``, ``tenant``, ``text``);
  ``tenant`` is null for shared docs, else the only tenant allowed to see the chunk.
- ``golden.jsonl``: the golden set in the guide's shape; tenant cases carry the tag
  ``tenant:<name>`` and the other tenant's chunks as ``forbidden_doc_ids``.
- ``human_labels.csv``: graded 0-3 labels (``query_id,doc_id,grade,annotator``) of every chunk in
  the top 5 of both retrievers for a subset of the queries; a second annotator on some of them.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.resources import as_file, files
from pathlib import Path

from relgrade.io import GoldenCase, GoldenSet, Qrels, read_golden, read_qrels, run_from_hits, write_run

_TENANT_TAG = "tenant:"


def _path(name: str) -> Path:
    resource = files("relgrade.demo").joinpath("data", name)
    with as_file(resource) as path:  # a real file for an installed wheel or a source tree
        return Path(path)


def corpus_path() -> Path:
    return _path("corpus.jsonl")


def golden_path() -> Path:
    return _path("golden.jsonl")


def human_labels_path() -> Path:
    return _path("human_labels.csv")


@lru_cache(maxsize=1)
def _records() -> tuple[dict, ...]:
    with open(corpus_path(), encoding="utf-8") as fh:
        return tuple(json.loads(line) for line in fh if line.strip())


def corpus_records() -> list[dict]:
    """Every chunk as a dict: ``doc_id``, ``title``, ``section``, ``tenant``, ``text``."""
    return [dict(r) for r in _records()]


def corpus() -> dict[str, str]:
    """``{doc_id: "title\\ntext"}``: what the retrievers index and the judge reads."""
    return {r["doc_id"]: f"{r['title']}\n{r['text']}" if r.get("title") else r["text"] for r in _records()}


def golden() -> GoldenSet:
    return read_golden(golden_path())


def human_qrels() -> Qrels:
    """The human labels (the lower median where two annotators labeled a pair; both kept in ``annotations``)."""
    return read_qrels(human_labels_path())


def tenant_of(case: GoldenCase) -> str | None:
    """The tenant a query is asked on behalf of (its ``tenant:<name>`` tag), or None."""
    return next((t[len(_TENANT_TAG):] for t in case.tags if t.startswith(_TENANT_TAG)), None)


def retrievers() -> dict:
    """``{"bm25": baseline with the tenant filter, "tfidf": candidate without it}``."""
    from relgrade.demo._retrievers import BM25Retriever, TfidfRetriever

    records = _records()
    return {"bm25": BM25Retriever(records), "tfidf": TfidfRetriever(records)}


def write_runs(out_dir: str | Path, *, k: int = 10) -> dict[str, Path]:
    """Retrieve the top ``k`` for every golden query with both retrievers; write ``OUT/<name>.jsonl``.

    The runs are RAG JSONL with the chunk texts, as a pipeline would log them, so ``relgrade judge``
    needs no corpus file.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cases = golden().cases
    paths: dict[str, Path] = {}
    for name, retriever in retrievers().items():
        run = run_from_hits(((c.query_id, c.query, retriever.search(c.query, top_k=k, tenant=tenant_of(c)))
                             for c in cases), name=name)
        paths[name] = write_run(run, out / f"{name}.jsonl")
    return paths


__all__ = ["corpus", "corpus_path", "corpus_records", "golden", "golden_path", "human_labels_path", "human_qrels",
           "retrievers", "tenant_of", "write_runs"]
