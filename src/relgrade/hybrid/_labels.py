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
   document is gone from the corpus); a label without a recorded hash is *unchecked*, never fresh: it
   is kept and counted (its freshness cannot be known), and never stamped with the current text's hash
   (which would make a label whose chunk was rewritten look fresh);
2. among fresh labels, a human label beats a judge label of the same pair;
3. judge grades go through the calibrated mapping when one was adopted (``judge_grade`` keeps the raw
   grade, ``mapped`` says it was mapped).

The judge's calibration verdict (:class:`relgrade._verdict.JudgeVerdict`: κ with its CI, band, verdict, mapping),
when ``relgrade hybrid --mapping CAL.json`` was given one, travels in ``OUT.calibration.json`` beside the set, so
that ``evaluate``, ``compare`` and ``gate`` on these labels say what the judge is worth (issue 25).

:func:`relgrade.io.read_qrels` reads this file as plain qrels (it ignores the provenance keys).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade._verdict import JudgeVerdict, judge_block
from relgrade._words import plural
from relgrade.io import Qrels
from relgrade.io._labels import SOURCES, Label, read_labels, text_sha256, write_labels

__all__ = ["SOURCES", "HybridLabels", "Label", "Stale", "calibration_path_for", "is_hybrid", "is_hybrid_text",
           "merge_labels", "read_hybrid", "recheck", "stale_path_for", "text_sha256", "write_hybrid"]


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
    unstamped: int = 0  # labels without a recorded text hash (unchecked: never counted as fresh)
    unchecked: int = 0  # labels whose freshness could not be checked (no hash, or no current text known)
    source: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    calibration: JudgeVerdict | None = None  # the judge's verdict from relgrade calibrate (OUT.calibration.json)

    def judge(self) -> dict[str, Any] | None:
        """The ``"judge"`` block of reports on these labels (:func:`relgrade._verdict.judge_block`)."""
        return judge_block(self.counts()["judge"], self.calibration)

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
        text = f"{plural(c['labels'], 'label')} in use ({c['human']} human, {c['judge']} judge"
        text += f", {c['mapped']} judge grades mapped)" if c["mapped"] else ")"
        if c["overridden"]:
            text += f"; {c['overridden']} judge labels overridden by humans"
        if c["stale"]:
            text += f"; {c['stale']} stale labels not used (chunk text changed)"
        if c["unchecked"]:
            text += (f"; {c['unchecked']} labels unchecked for staleness ({c['unstamped']} without a recorded text "
                     f"hash, {c['unchecked'] - c['unstamped']} without a current text): not known to be fresh")
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
        return lab, None, now, True, True
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
    calibration: JudgeVerdict | None = None,
) -> HybridLabels:
    """Merge labels: stale ones set apart, then human beats judge on every pair (see module docstring).

    ``texts`` are the current chunk texts ``{doc_id: text}`` (a corpus, or a run's texts). With
    ``missing_is_stale`` (a full corpus) a label whose document is absent is stale; without it (a run,
    which only holds the texts of retrieved documents) such a label is kept and counted as unchecked.
    ``calibration``: the judge's verdict from ``relgrade calibrate``, carried with the set.
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
    return HybridLabels(tuple(chosen.values()), tuple(stale), overridden, unstamped, unchecked, source,
                        calibration=calibration)


def recheck(hybrid: HybridLabels, texts: Mapping[str, str], *, missing_is_stale: bool = False) -> HybridLabels:
    """Re-verify a loaded set against current texts (e.g. a run's chunk texts at evaluate time)."""
    human = [lab for lab in hybrid.labels if lab.source == "human"]
    judge = [lab for lab in hybrid.labels if lab.source == "judge"]
    merged = merge_labels(human, judge, texts=texts, missing_is_stale=missing_is_stale, source=hybrid.source,
                          calibration=hybrid.calibration)
    return replace(merged, stale=hybrid.stale + merged.stale, overridden=hybrid.overridden, notes=hybrid.notes)


def is_hybrid_text(path: str | Path, text: str) -> bool:
    """True when the first JSON object of ``text`` is a hybrid label (has ``source`` human/judge and ``doc_id``)."""
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
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


def _read_rows(path: str | Path, what: str) -> tuple[tuple[Label, ...], tuple[int, ...]]:
    labels = read_labels(path, scale=None, empty="error")
    seen: dict[tuple[str, str], int] = {}
    for lab, number in zip(labels.labels, labels.lines):
        key = (lab.query_id, lab.doc_id)
        if key in seen:
            raise InputError(f"pair {key} appears again (first on line {seen[key]}); a {what} has one label per pair",
                             path=path, line=number)
        seen[key] = number
    return labels.labels, labels.lines


def read_hybrid(path: str | Path) -> HybridLabels:
    """Read a hybrid label file (and its ``.stale.jsonl`` sibling when present) with :func:`relgrade.io.read_labels`."""
    labels, _ = _read_rows(path, "hybrid set")
    stale: list[Stale] = []
    stale_path = stale_path_for(path)
    if stale_path.is_file():
        import json as _json

        rows, lines = _read_rows(stale_path, "stale label file")
        raw = stale_path.read_text(encoding="utf-8").splitlines()
        for lab, number in zip(rows, lines):
            extra = _json.loads(raw[number - 1])
            stale.append(Stale(replace(lab, reason=None), str(extra.get("reason", "stale")), extra.get("current_sha256")))
    return HybridLabels(labels, tuple(stale), source=str(path), calibration=_read_calibration(path))


def stale_path_for(path: str | Path) -> Path:
    """``OUT.stale.jsonl`` beside ``OUT`` (:data:`relgrade.io._outputs.SIDE_FILES`)."""
    from relgrade.io._outputs import side_path

    return side_path(path, "hybrid", "its stale labels")


def calibration_path_for(path: str | Path) -> Path:
    """``OUT.calibration.json`` beside ``OUT``: the judge's calibration verdict."""
    from relgrade.io._outputs import side_path

    return side_path(path, "hybrid", "its judge calibration")


def _read_calibration(path: str | Path) -> JudgeVerdict | None:
    from relgrade.io._text import loads_json, read_text

    p = calibration_path_for(path)
    if not p.is_file():
        return None
    data = loads_json(read_text(p, what="calibration file"), path=p)
    if not isinstance(data, dict) or "band" not in data:
        raise InputError("not a judge calibration written by 'relgrade hybrid'; delete it or re-run relgrade hybrid "
                         "--mapping CAL.json", path=p)
    return JudgeVerdict.from_dict(data)


def write_hybrid(hybrid: HybridLabels, path: str | Path) -> Path:
    """Write the labels in use to ``path`` and the stale ones to ``path.stale.jsonl`` (removed when none)."""
    p = Path(path)
    write_labels(hybrid.labels, p)
    sp, cp = stale_path_for(p), calibration_path_for(p)
    if hybrid.stale:
        write_labels([s.to_dict() for s in hybrid.stale], sp)
    if hybrid.calibration is not None:
        cp.write_text(json.dumps(hybrid.calibration.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for side, keep in ((sp, bool(hybrid.stale)), (cp, hybrid.calibration is not None)):
        if not keep and side.exists():  # a sibling of an earlier set with the same name would be taken for this one's
            try:
                side.unlink()
            except OSError as exc:
                raise InputError(f"cannot remove ({exc.strerror})", path=side) from None
    return p
