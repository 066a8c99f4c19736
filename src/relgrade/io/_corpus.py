"""Texts for TREC runs: a corpus (``doc_id``/``text`` as JSONL or TSV) and a queries file (``qid<TAB>query``).

Ids follow :mod:`relgrade.io._ids`."""

from __future__ import annotations

from pathlib import Path

from relgrade._errors import InputError
from relgrade.io._ids import as_id
from relgrade.io._text import iter_jsonl, iter_lines, pick, read_text, sniff_kind

DOC_ID_FIELDS = ("doc_id", "id", "_id", "docid", "pid")
TEXT_FIELDS = ("text", "passage", "contents", "content", "body")


def read_corpus(path: str | Path) -> dict[str, str]:
    """``{doc_id: text}`` from JSONL (``doc_id``, ``text``; ``title`` is prepended) or TSV ``doc_id<TAB>text``."""
    text = read_text(path, what="corpus file")
    out: dict[str, str] = {}
    if sniff_kind(path, text) in {"jsonl", "json"}:
        for number, obj in iter_jsonl(path, text, what="corpus file"):
            doc, body = pick(obj, DOC_ID_FIELDS), pick(obj, TEXT_FIELDS)
            if doc is None or doc == "" or not isinstance(body, str):
                raise InputError("each corpus line needs 'doc_id' and 'text'", path=path, line=number)
            title = obj.get("title")
            doc = as_id(doc, "doc_id", path=path, line=number)
            _put(out, doc, f"{title}\n{body}" if isinstance(title, str) and title else body, path, number)
        return out
    for number, line in iter_lines(text):
        doc, sep, body = line.partition("\t")
        if not sep:
            raise InputError("expected 'doc_id<TAB>text' (TSV corpus)", path=path, line=number)
        _put(out, as_id(doc, "doc_id", path=path, line=number), body, path, number)
    return out


def read_queries(path: str | Path) -> dict[str, str]:
    """``{query_id: query}`` from TSV ``qid<TAB>query`` or JSONL with ``query_id`` and ``query``."""
    text = read_text(path, what="queries file")
    out: dict[str, str] = {}
    if sniff_kind(path, text) in {"jsonl", "json"}:
        for number, obj in iter_jsonl(path, text, what="queries file"):
            qid, query = pick(obj, ("query_id", "qid", "_id", "id")), pick(obj, ("query", "text"))
            if qid is None or qid == "" or not isinstance(query, str):
                raise InputError("each queries line needs 'query_id' and 'query'", path=path, line=number)
            _put(out, as_id(qid, "query_id", path=path, line=number), query, path, number)
        return out
    for number, line in iter_lines(text):
        qid, sep, query = line.partition("\t")
        if not sep:
            raise InputError("expected 'query_id<TAB>query' (TSV queries file)", path=path, line=number)
        _put(out, as_id(qid, "query_id", path=path, line=number), query.strip(), path, number)
    return out


def _put(out: dict[str, str], key: str, value: str, path, number: int) -> None:
    if key in out:
        raise InputError(f"id {key!r} appears twice; keep one line per id", path=path, line=number)
    out[key] = value
