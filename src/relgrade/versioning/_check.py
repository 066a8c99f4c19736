"""Golden sets versioned with the corpus (the guide: "a test case referencing a deleted document becomes invalid.
Version your test set alongside your corpus").

* :func:`corpus_fingerprint`: ``{"sha256", "n_docs", "path"}``, the SHA-256 of the sorted lines
  ``doc_id<TAB>sha256(text)``: the same corpus in another file or order hashes alike, any added, removed or
  edited document changes it. Reports record it (``settings.corpus``) and ``gate`` refuses two reports over
  different corpora.
* :func:`check_golden`: what in a golden set (and label files) no longer fits the corpus: relevant, graded
  or forbidden ids that are not in it (deleted documents), labels whose recorded ``text_sha256`` differs
  from the current text (changed documents), and duplicate queries (the same text, after case and
  whitespace folding, and the same tags, under two query ids: a query asked on behalf of two tenants,
  tagged ``tenant:a`` and ``tenant:b``, is two cases, not a duplicate).
* :func:`stamp_golden`: the golden set with the current text hash of every document it names that has
  none yet, so the next check sees a change; a hash already recorded is kept (a stale one stays stale
  until the case is re-labeled).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade.io import GoldenSet, read_corpus, read_golden, text_sha256


def _corpus(corpus: Mapping[str, str] | str | Path) -> tuple[Mapping[str, str], str | None]:
    if isinstance(corpus, (str, Path)):
        return read_corpus(corpus), str(corpus)
    if isinstance(corpus, Mapping):
        return corpus, None
    raise InputError(f"corpus must be a path or {{doc_id: text}}, got {type(corpus).__name__}")


def corpus_fingerprint(corpus: Mapping[str, str] | str | Path, *, path: str | None = None) -> dict[str, Any]:
    """``{"sha256", "n_docs", "path"}`` of a corpus (a file, or ``{doc_id: text}``; module docstring)."""
    docs, source = _corpus(corpus)
    h = hashlib.sha256()
    for doc in sorted(docs):
        h.update(f"{doc}\t{text_sha256(docs[doc])}\n".encode("utf-8"))
    return {"sha256": h.hexdigest(), "n_docs": len(docs), "path": path or source}


@dataclass(frozen=True)
class GoldenCheck:
    """What :func:`check_golden` found. ``ok`` when nothing is missing, stale or duplicated."""

    missing: list[dict[str, Any]] = field(default_factory=list)  # {file, query_id, doc_id, role}
    stale: list[dict[str, Any]] = field(default_factory=list)  # {file, query_id, doc_id, recorded, current}
    duplicates: list[dict[str, Any]] = field(default_factory=list)  # {file, query, query_ids}
    unchecked: int = 0  # labeled documents without a recorded text hash
    corpus: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.stale or self.duplicates)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "missing": self.missing, "stale": self.stale, "duplicates": self.duplicates,
                "unchecked": self.unchecked, "corpus": self.corpus}

    def lines(self, limit: int = 20) -> list[str]:
        """One line per problem (at most ``limit`` of each kind), then the summary."""
        out = []
        for title, rows, show in (
            ("missing from the corpus (deleted documents)", self.missing,
             lambda r: f"{r['file']}: {r['query_id']} {r['role']} {r['doc_id']}"),
            ("text changed since labeled (stale labels)", self.stale,
             lambda r: f"{r['file']}: {r['query_id']} {r['doc_id']} (labeled on {r['recorded'][:12]}, now "
                       f"{r['current'][:12]})"),
            ("duplicate queries", self.duplicates,
             lambda r: f"{r['file']}: {', '.join(r['query_ids'])}: {r['query']!r}"),
        ):
            if rows:
                out.append(f"{len(rows)} {title}:")
                out += [f"  {show(r)}" for r in rows[:limit]]
                if len(rows) > limit:
                    out.append(f"  ... and {len(rows) - limit} more")
        c = self.corpus
        summary = f"corpus {c.get('path') or ''} {c.get('n_docs')} docs, sha256 {str(c.get('sha256'))[:12]}".replace("  ", " ")
        out.append(f"{summary}: {'ok' if self.ok else 'FAIL'}"
                   + (f" ({self.unchecked} labeled documents carry no text hash: relgrade check --stamp records them)"
                      if self.unchecked else ""))
        return out


def _fold(query: str) -> str:
    return " ".join(query.casefold().split())


def check_golden(golden: GoldenSet | str | Path, corpus: Mapping[str, str] | str | Path, *,
                 labels: Iterable[Any] = ()) -> GoldenCheck:
    """Check ``golden`` (and ``labels``: label files or :class:`~relgrade.io.LabelSet`s) against ``corpus``."""
    from relgrade.io import read_labels

    if isinstance(golden, (str, Path)):
        golden = read_golden(golden)
    docs, source = _corpus(corpus)
    name = golden.source or "golden set"
    missing, stale, unchecked = [], [], 0
    hashes = {d: text_sha256(t) for d, t in docs.items()}
    folded: dict[tuple, list[str]] = {}
    for case in golden:
        folded.setdefault((_fold(case.query), tuple(sorted(case.tags))), []).append(case.query_id)
        roles = {d: "relevant" for d in case.relevant_doc_ids}
        for d in case.relevance_grades:
            roles.setdefault(d, "graded")
        for d in case.forbidden_doc_ids:
            roles.setdefault(d, "forbidden")
        for doc, role in roles.items():
            if doc not in docs:
                missing.append({"file": name, "query_id": case.query_id, "doc_id": doc, "role": role})
            elif doc in case.text_sha256:
                if case.text_sha256[doc] != hashes[doc]:
                    stale.append({"file": name, "query_id": case.query_id, "doc_id": doc,
                                  "recorded": case.text_sha256[doc], "current": hashes[doc]})
            elif role != "forbidden":
                unchecked += 1
    duplicates = [{"file": name, "query": q, "query_ids": ids} for (q, _), ids in folded.items() if len(ids) > 1]
    for item in labels:
        label_set = read_labels(item) if isinstance(item, (str, Path)) else item
        file = str(getattr(label_set, "source", None) or item)
        for row in label_set.labels:
            if row.doc_id not in docs:
                missing.append({"file": file, "query_id": row.query_id, "doc_id": row.doc_id, "role": "label"})
            elif row.text_sha256:
                if row.text_sha256 != hashes[row.doc_id]:
                    stale.append({"file": file, "query_id": row.query_id, "doc_id": row.doc_id,
                                  "recorded": row.text_sha256, "current": hashes[row.doc_id]})
            else:
                unchecked += 1
    return GoldenCheck(missing, stale, duplicates, unchecked, corpus_fingerprint(docs, path=source))


def stamp_golden(golden: GoldenSet | str | Path, corpus: Mapping[str, str] | str | Path) -> GoldenSet:
    """``golden`` with ``text_sha256`` recorded for every relevant or graded document the corpus holds and the case
    has no hash for yet (module docstring)."""
    if isinstance(golden, (str, Path)):
        golden = read_golden(golden)
    docs, _ = _corpus(corpus)
    cases = []
    for case in golden:
        named = [*case.relevant_doc_ids, *case.relevance_grades]
        hashes = dict(case.text_sha256)
        for doc in named:
            if doc in docs and doc not in hashes:
                hashes[doc] = text_sha256(docs[doc])
        cases.append(dataclasses.replace(case, text_sha256=hashes))
    return GoldenSet(tuple(cases), source=golden.source)


__all__ = ["GoldenCheck", "check_golden", "corpus_fingerprint", "stamp_golden"]
