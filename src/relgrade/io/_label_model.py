"""The one label model: every graded (query, doc) pair relgrade reads or writes, with its provenance.

A :class:`Label` is one row: ``query_id, doc_id, grade`` (None when the pair is pooled but not graded yet),
``source`` (``human`` or ``judge``), who made it (``annotator`` or ``model`` and ``prompt_hash``), the grade
``scale`` it was given on, ``text_sha256`` of the chunk text it was made on, ``time``, and the sampling design
that chose it (``design``, ``stratum`` and the inclusion ``weight`` = 1/pi; for the active design, ``weight`` =
1/(n q) with q the query's per-draw probability, ``draws`` its number of draws and ``pool`` the judged queries drawn
from: :mod:`relgrade.calibration._active`). A :class:`LabelSet` is the rows of
one file plus what the file declares (scale, design); ``to_frame()`` gives a pandas table with
:data:`COLUMNS`.

The readers and the writer are in :mod:`relgrade.io._labels`; grades and scales in :mod:`relgrade.io._grades`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from relgrade._errors import InputError
from relgrade.io._grades import SOURCES, lower_median, span
from relgrade.io._qrels import Qrels

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ("query_id", "doc_id", "grade", "source", "annotator", "model", "prompt_hash", "scale", "text_sha256",
           "time", "design", "stratum", "weight", "draws", "pool")
"""The columns of :meth:`LabelSet.to_frame` (further fields of :class:`Label` are added when any row has them)."""


def text_sha256(text: str) -> str:
    """Hex SHA-256 of ``text`` encoded as UTF-8 (no normalisation: any change makes a label stale)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Label:
    """One graded (query, doc) pair and where it came from (module docstring)."""

    query_id: str
    doc_id: str
    grade: int | None
    source: str  # "human" or "judge"
    annotator: str | None = None
    annotations: Mapping[str, int] | None = None  # several annotators: each one's grade
    model: str | None = None
    prompt_hash: str | None = None
    judge_grade: int | None = None  # the judge's own grade when a mapping changed it
    mapped: bool = False
    time: str | None = None
    text_sha256: str | None = None
    scale: tuple[int, ...] | None = None
    design: str | None = None
    stratum: str | None = None
    weight: float | None = None  # 1 / inclusion probability (design active: 1 / (n q), q the per-draw probability)
    draws: int | None = None  # design active: how many of the n draws chose the pair's query
    pool: int | None = None  # design active: the judged queries the draws were made from
    expected_grade: float | None = None
    distribution: Mapping[int, float] | None = None
    query: str | None = None
    text: str | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise InputError(f"label source must be one of {SOURCES}, got {self.source!r}")

    def to_dict(self, columns: Sequence[str] | None = None) -> dict[str, Any]:
        """The row as JSON-ready values; without ``columns`` the unset (None/False) fields are left out."""
        names = columns or [f.name for f in fields(self)]
        out: dict[str, Any] = {}
        for name in names:
            value = getattr(self, name, None)
            if columns is None and (value is None or value is False) and name != "grade":
                continue
            if name == "scale" and value is not None:
                value = list(value)
            elif name in ("annotations", "distribution") and value is not None:
                value = {str(k): v for k, v in value.items()}
            out[name] = value
        return out


@dataclass(frozen=True)
class LabelSet:
    """The graded rows of one label file (one per pair and annotator) and what the file declares."""

    labels: tuple[Label, ...]
    source: str | None = None
    scale: tuple[int, ...] | None = None  # the scale the file declares (a judge's details 'scale'), else None
    design: str | None = None  # the sampling design the rows record ('queries' or 'strata'), else None
    n_empty: int = 0  # rows without a grade: unjudged (judge) or not labeled yet (a sample file)
    unjudged: tuple[tuple[str, str], ...] = ()  # the (query, doc) pairs of those rows
    model: str | None = None
    lines: tuple[int, ...] = field(default=(), repr=False, compare=False)  # file line of each row

    def __len__(self) -> int:
        return len(self.labels)

    def consensus(self) -> tuple[Label, ...]:
        """One label per pair: the :func:`lower_median` of its annotators' grades, every grade in ``annotations``,
        the latest time; a pair labeled on two different texts is an error (relabel it on the current text)."""
        if len({(lab.query_id, lab.doc_id) for lab in self.labels}) == len(self.labels) and \
                all(lab.annotations is None for lab in self.labels):
            return self.labels  # one row per pair: nothing to combine
        groups: dict[tuple[str, str], list[Label]] = {}
        for lab in self.labels:
            groups.setdefault((lab.query_id, lab.doc_id), []).append(lab)
        out = []
        for key, group in groups.items():
            if len(group) == 1 and group[0].annotations is None:
                out.append(group[0])
                continue
            hashes = {lab.text_sha256 for lab in group} - {None}
            if len(hashes) > 1:
                raise InputError(f"pair {key} was labeled on two different texts; relabel it on the current text",
                                 path=self.source)
            grades = {lab.annotator or "": lab.grade for lab in group}
            times = [lab.time for lab in group if lab.time]
            names = sorted(n for n in grades if n)
            first = group[0]
            out.append(Label(key[0], key[1], lower_median(grades.values()), first.source,
                             annotator=",".join(names) or None, annotations=grades if len(grades) > 1 else None,
                             model=first.model, prompt_hash=first.prompt_hash, time=max(times) if times else None,
                             text_sha256=hashes.pop() if hashes else None, scale=first.scale, design=first.design,
                             stratum=first.stratum, weight=first.weight, draws=first.draws,
                             pool=first.pool, query=first.query, text=first.text))
        return tuple(out)

    def grades(self) -> dict[str, dict[str, int]]:
        """``{query_id: {doc_id: grade}}`` of the consensus labels."""
        out: dict[str, dict[str, int]] = {}
        for lab in self.consensus():
            out.setdefault(lab.query_id, {})[lab.doc_id] = lab.grade
        return out

    def annotations(self) -> dict[tuple[str, str], dict[str, int]]:
        """``{(query_id, doc_id): {annotator: grade}}`` for pairs with a named annotator or several grades."""
        per: dict[tuple[str, str], dict[str, int]] = {}
        for lab in self.labels:
            per.setdefault((lab.query_id, lab.doc_id), {})[lab.annotator or ""] = lab.grade
        return {k: v for k, v in per.items() if len(v) > 1 or any(v)}

    def weights(self) -> dict[tuple[str, str], float] | None:
        """``{(query_id, doc_id): 1/pi}`` when the rows carry inclusion weights, else None (an active sample's row:
        its ``weight`` times its ``draws``, the query's expansion weight over all the draws)."""
        out = {(lab.query_id, lab.doc_id): lab.weight * (lab.draws or 1) for lab in self.labels
               if lab.weight is not None}
        return out or None

    def info(self) -> dict[tuple[str, str], dict[str, str]]:
        """``{(query_id, doc_id): {"query", "text", "reason"}}`` for the rows that carry texts."""
        out: dict[tuple[str, str], dict[str, str]] = {}
        for lab in self.labels:
            texts = {k: getattr(lab, k) for k in ("query", "text", "reason") if getattr(lab, k)}
            if texts:
                out.setdefault((lab.query_id, lab.doc_id), texts)
        return out

    def to_qrels(self) -> Qrels:
        plain = all(lab.annotator is None and lab.annotations is None for lab in self.labels)
        return Qrels(self.grades(), annotations={} if plain else self.annotations(), source=self.source)

    def to_frame(self) -> "pd.DataFrame":
        """A pandas table, one row per label, with :data:`COLUMNS` (plus any other field a row sets)."""
        import pandas as pd

        extra = [f.name for f in fields(Label) if f.name not in COLUMNS
                 and any(getattr(lab, f.name) not in (None, False) for lab in self.labels)]
        cols = list(COLUMNS) + extra
        return pd.DataFrame([lab.to_dict(cols) for lab in self.labels], columns=cols, dtype=object)


def check_in_scale(labels: LabelSet, scale: Sequence[int], *, text: str | None = None, option: str = "--scale") -> None:
    """Refuse labels outside ``scale``: one error with the count and the first offending line (never clipped)."""
    allowed = set(scale)
    bad = [i for i, lab in enumerate(labels.labels) if lab.grade not in allowed]
    if not bad:
        return
    i = bad[0]
    lab = labels.labels[i]
    line = labels.lines[i] if i < len(labels.lines) else None
    shown = f"({lab.query_id}, {lab.doc_id}) grade {lab.grade}"
    if text is not None and line is not None:
        raw = text.splitlines()[line - 1].strip() if line - 1 < len(text.splitlines()) else ""
        shown = repr(raw[:157] + "..." if len(raw) > 160 else raw)
    where = f"line {line}" if line else "for example"
    raise InputError(f"{len(bad)} label(s) outside the scale {list(scale)}; e.g. {where}: {shown}; "
                     f"fix the labels or declare the scale with {option} (nothing is clipped)", path=labels.source)


def on_judge_scale(human: Mapping[Any, Mapping[str, int]], judge_scale: Sequence[int] | None,
                   scale: Sequence[int], threshold: int) -> tuple[tuple[int, ...], dict[Any, dict[str, int]], bool]:
    """Put human grades on a judge's scale: ``(scale to compare on, human labels, binarized?)``.

    A binary judge (two grades, e.g. ``[0, 1]``) beside graded humans: the human grades are binarized at
    ``threshold`` (``>= threshold`` becomes the judge's high grade, below its low grade), as trec-style binary
    relevance does. A judge on the human scale, or on a narrower scale inside it, is compared grade for grade.
    Works on ``{query: {doc: grade}}`` and on ``{(query, doc): {annotator: grade}}`` alike.
    """
    scale = tuple(scale)
    j_scale = tuple(judge_scale) if judge_scale else scale
    if j_scale == scale or (set(j_scale) <= set(scale) and len(j_scale) != 2):
        return scale, {q: dict(d) for q, d in human.items()}, False
    if len(j_scale) == 2 and len(scale) > 2:
        if not scale[0] < threshold <= scale[-1]:
            raise InputError(f"threshold {threshold} must be in ({scale[0]}, {scale[-1]}] to binarize the scale "
                             f"{list(scale)}; e.g. --threshold 2")
        lo, hi = j_scale
        return j_scale, {q: {d: hi if g >= threshold else lo for d, g in docs.items()} for q, docs in human.items()}, True
    if set(j_scale) <= set(scale):
        return scale, {q: dict(d) for q, d in human.items()}, False
    raise InputError(f"the judge grades on {span(j_scale)}, which does not fit the human scale --scale {span(scale)}; "
                     "declare the human scale with --scale")
