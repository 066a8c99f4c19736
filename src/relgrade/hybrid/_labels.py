"""Hybrid label sets: human and judge labels merged with provenance, versioned by chunk text.

File format (JSONL, one object per (query_id, doc_id), every label in it is in use)::

    {"query_id": "q1", "doc_id": "d7", "grade": 2, "source": "human", "annotator": "alice",
     "time": "2024-05-01T12:00:00+00:00", "text_sha256": "9f86d0..."}
    {"query_id": "q1", "doc_id": "d9", "grade": 1, "source": "judge", "model": "openai/gpt-4o-mini",
     "prompt_hash": "ab12...", "judge_grade": 2, "mapped": true, "time": "...", "text_sha256": "..."}

``text_sha256`` is the SHA-256 of the chunk text (UTF-8, exactly as given, no normalisation) the label
was made on. When the corpus changes, a label whose chunk text now hashes differently is *stale*: it
is reported and not used. Stale labels are never thrown away: :func:`write_hybrid` puts them in
``OUT.stale.jsonl`` beside the set, with the reason. Rules of the merge (:func:`merge_labels`):

1. a label is stale when the current texts are known and its recorded text hash differs (or its
   document is gone from the corpus); a label without a recorded hash is stamped with the current
   text's hash (and counted, since its freshness could not be checked);
2. among fresh labels, a human label beats a judge label of the same pair;
3. judge grades go through the calibrated mapping when one was adopted (``judge_grade`` keeps the raw
   grade, ``mapped`` says it was mapped).

:func:`relgrade.io.read_qrels` reads this file as plain qrels (it ignores the provenance keys).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade.io import Qrels
from relgrade.io._text import iter_jsonl, read_text

SOURCES = ("human", "judge")
_OPTIONAL = ("annotator", "annotations", "model", "prompt_hash", "judge_grade", "mapped", "time", "text_sha256")


def text_sha256(text: str) -> str:
    """Hex SHA-256 of ``text`` encoded as UTF-8 (no normalisation: any change makes a label stale)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Label:
    """One graded (query, doc) pair and where it came from."""

    query_id: str
    doc_id: str
    grade: int
    source: str  # "human" or "judge"
    annotator: str | None = None
    annotations: Mapping[str, int] | None = None  # several annotators: each one's grade
    model: str | None = None
    prompt_hash: str | None = None
    judge_grade: int | None = None  # the judge's own grade when a mapping changed it
    mapped: bool = False
    time: str | None = None
    text_sha256: str | None = None

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise InputError(f"label source must be one of {SOURCES}, got {self.source!r}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query_id": self.query_id, "doc_id": self.doc_id, "grade": self.grade,
                               "source": self.source}
        for name in _OPTIONAL:
            value = getattr(self, name)
            if value is None or value is False:
                continue
            out[name] = dict(value) if name == "annotations" else value
        return out


@dataclass(frozen=True)
class Stale:
    """A label not used because its chunk text changed (or its document is gone)."""

    label: Label
    reason: str
    current_sha256: str | None

    def to_dict(self) -> dict[str, Any]:
        return {**self.label.to_dict(), "stale": True, "reason": self.reason, "current_sha256": self.current_sha256}


@dataclass(frozen=True)
class HybridLabels:
    """The labels in use (one per pair), the stale ones, and counts worth reporting."""

    labels: tuple[Label, ...]
    stale: tuple[Stale, ...] = ()
    overridden: int = 0  # judge labels replaced by a human label of the same pair
    unstamped: int = 0  # labels without a recorded text hash, stamped with the current text's
    unchecked: int = 0  # labels whose freshness could not be checked (no current text known)
    source: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_qrels(self) -> Qrels:
        labels: dict[str, dict[str, int]] = {}
        for lab in self.labels:
            labels.setdefault(lab.query_id, {})[lab.doc_id] = lab.grade
        return Qrels(labels, source=self.source)

    def sources(self) -> dict[tuple[str, str], str]:
        """``{(query_id, doc_id): "human" | "judge"}``."""
        return {(lab.query_id, lab.doc_id): lab.source for lab in self.labels}

    def counts(self) -> dict[str, int]:
        human = sum(lab.source == "human" for lab in self.labels)
        return {"labels": len(self.labels), "human": human, "judge": len(self.labels) - human,
                "stale": len(self.stale), "overridden": self.overridden, "unstamped": self.unstamped,
                "unchecked": self.unchecked, "mapped": sum(lab.mapped for lab in self.labels)}

    def summary(self) -> str:
        c = self.counts()
        text = f"{c['labels']} labels in use ({c['human']} human, {c['judge']} judge"
        text += f", {c['mapped']} judge grades mapped)" if c["mapped"] else ")"
        if c["overridden"]:
            text += f"; {c['overridden']} judge labels overridden by humans"
        if c["stale"]:
            text += f"; {c['stale']} stale labels not used (chunk text changed)"
        if c["unstamped"]:
            text += f"; {c['unstamped']} labels had no text hash and were stamped with the current text"
        if c["unchecked"]:
            text += f"; {c['unchecked']} labels could not be checked for staleness (no current text)"
        return text


def _freshness(lab: Label, texts: Mapping[str, str] | None, missing_is_stale: bool):
    """(label, stale reason or None, current hash, stamped?, unchecked?)."""
    if texts is None:
        return lab, None, None, False, True
    current = texts.get(lab.doc_id)
    if current is None:
        if missing_is_stale:
            return lab, "document not in the current corpus", None, False, False
        return lab, None, None, False, True
    now = text_sha256(current)
    if lab.text_sha256 is None:
        return replace(lab, text_sha256=now), None, now, True, False
    if lab.text_sha256 != now:
        return lab, "chunk text changed since it was labeled", now, False, False
    return lab, None, now, False, False


def merge_labels(
    human: Iterable[Label],
    judge: Iterable[Label] = (),
    *,
    texts: Mapping[str, str] | None = None,
    missing_is_stale: bool = True,
    source: str | None = None,
) -> HybridLabels:
    """Merge labels: stale ones set apart, then human beats judge on every pair (see module docstring).

    ``texts`` are the current chunk texts ``{doc_id: text}`` (a corpus, or a run's texts). With
    ``missing_is_stale`` (a full corpus) a label whose document is absent is stale; without it (a run,
    which only holds the texts of retrieved documents) such a label is kept and counted as unchecked.
    """
    stale: list[Stale] = []
    chosen: dict[tuple[str, str], Label] = {}
    unstamped = unchecked = overridden = 0
    for group, name in ((human, "human"), (judge, "judge")):
        seen: set[tuple[str, str]] = set()
        for lab in group:
            if lab.source != name:
                raise InputError(f"a {lab.source} label was passed among the {name} labels ({lab.query_id}, {lab.doc_id})")
            key = (lab.query_id, lab.doc_id)
            if key in seen:
                raise InputError(f"pair {key} has two {name} labels; keep one per pair")
            seen.add(key)
            lab, reason, now, stamped, not_checked = _freshness(lab, texts, missing_is_stale)
            if reason is not None:
                stale.append(Stale(lab, reason, now))
                continue
            unstamped += stamped
            unchecked += not_checked
            if key in chosen:  # a human label already holds this pair
                overridden += 1
                continue
            chosen[key] = lab
    return HybridLabels(tuple(chosen.values()), tuple(stale), overridden, unstamped, unchecked, source)


def recheck(hybrid: HybridLabels, texts: Mapping[str, str], *, missing_is_stale: bool = False) -> HybridLabels:
    """Re-verify a loaded set against current texts (e.g. a run's chunk texts at evaluate time)."""
    human = [lab for lab in hybrid.labels if lab.source == "human"]
    judge = [lab for lab in hybrid.labels if lab.source == "judge"]
    merged = merge_labels(human, judge, texts=texts, missing_is_stale=missing_is_stale, source=hybrid.source)
    return replace(merged, stale=hybrid.stale + merged.stale, overridden=hybrid.overridden, notes=hybrid.notes)


def is_hybrid_text(path: str | Path, text: str) -> bool:
    """True when the first JSON object of ``text`` is a hybrid label (has ``source`` human/judge and ``doc_id``)."""
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            return False
        return isinstance(obj, dict) and obj.get("source") in SOURCES and "doc_id" in obj and "grade" in obj
    return False


def is_hybrid(path: str | Path) -> bool:
    """Sniff whether ``path`` is a hybrid label file (cheap: reads the file's start)."""
    p = Path(path)
    if not p.is_file():
        return False
    try:
        with open(p, encoding="utf-8") as fh:
            head = fh.read(65536)
    except (OSError, UnicodeDecodeError):
        return False
    first = head.lstrip("\ufeff").split("\n", 1)[0]
    return is_hybrid_text(p, first)


def _label_from(obj: dict[str, Any], path, number: int) -> Label:
    try:
        q, d, g, src = str(obj["query_id"]), str(obj["doc_id"]), obj["grade"], obj["source"]
    except KeyError as exc:
        raise InputError(f"hybrid label lacks {exc.args[0]!r}; each needs query_id, doc_id, grade, source",
                         path=path, line=number) from None
    if isinstance(g, bool) or not isinstance(g, (int, float)) or g != int(g):
        raise InputError(f"grade {g!r} is not an integer grade", path=path, line=number)
    if src not in SOURCES:
        raise InputError(f"source must be 'human' or 'judge', got {src!r}", path=path, line=number)
    ann = obj.get("annotations")
    return Label(q, d, int(g), src, obj.get("annotator"), dict(ann) if isinstance(ann, dict) else None,
                 obj.get("model"), obj.get("prompt_hash"), obj.get("judge_grade"), bool(obj.get("mapped", False)),
                 obj.get("time"), obj.get("text_sha256"))


def read_hybrid(path: str | Path) -> HybridLabels:
    """Read a hybrid label file (and its ``.stale.jsonl`` sibling when present)."""
    text = read_text(path, what="hybrid label file")
    labels, seen = [], {}
    for number, obj in iter_jsonl(path, text, what="hybrid label file"):
        lab = _label_from(obj, path, number)
        key = (lab.query_id, lab.doc_id)
        if key in seen:
            raise InputError(f"pair {key} appears again (first on line {seen[key]}); a hybrid set has one label per pair",
                             path=path, line=number)
        seen[key] = number
        labels.append(lab)
    stale: list[Stale] = []
    stale_path = stale_path_for(path)
    if stale_path.is_file():
        stale_text = read_text(stale_path, what="stale label file")
        for number, obj in iter_jsonl(stale_path, stale_text, what="stale label file"):
            stale.append(Stale(_label_from(obj, stale_path, number), str(obj.get("reason", "stale")),
                               obj.get("current_sha256")))
    return HybridLabels(tuple(labels), tuple(stale), source=str(path))


def stale_path_for(path: str | Path) -> Path:
    """``OUT.stale.jsonl`` beside ``OUT``."""
    return Path(f"{path}.stale.jsonl")


def write_hybrid(hybrid: HybridLabels, path: str | Path) -> Path:
    """Write the labels in use to ``path`` and the stale ones to ``path.stale.jsonl`` (removed when none)."""
    p = Path(path)
    try:
        with open(p, "w", encoding="utf-8") as fh:
            for lab in hybrid.labels:
                fh.write(json.dumps(lab.to_dict(), ensure_ascii=False) + "\n")
        sp = stale_path_for(p)
        if hybrid.stale:
            with open(sp, "w", encoding="utf-8") as fh:
                for s in hybrid.stale:
                    fh.write(json.dumps(s.to_dict(), ensure_ascii=False) + "\n")
        elif sp.exists():
            sp.unlink()
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror}); choose another --out path", path=p) from None
    return p
