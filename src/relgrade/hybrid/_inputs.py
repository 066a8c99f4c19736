"""Reading human labels, judge labels and a judge-to-human grade mapping, with provenance.

Human labels: TREC qrels (no annotator, no time), or CSV/JSONL with ``query_id, doc_id, grade`` and
optional ``annotator``, ``time`` (also ``timestamp``, ``labeled_at``), ``text`` or ``text_sha256``
(what ``relgrade label`` exports, or a ``relgrade sample`` file once graded: rows with an empty grade
are skipped). Several annotators of one pair give one label with their lower median grade (as
:meth:`relgrade.io.Qrels.from_records`), every annotator's grade in ``annotations`` and the latest time.

Judge labels: the details JSONL ``relgrade judge`` writes (``OUT.details.jsonl``: ``query_id, doc_id,
query, text, grade`` — null when unjudged, skipped and counted — ``expected_grade, model,
prompt_hash``...), or plain qrels (source ``judge``, no model). A judgment without a ``time`` key
gets the file's modification time.

Mapping (``--mapping``): the JSON ``relgrade calibrate --json`` writes (its ``"mapping"`` object, a
:class:`relgrade.calibration.GradeMapping`), or a simple ``{"adopted": true, "table": {"0": 0,
"1": 1, "2": 1, "3": 2}}`` for integer judge grades (top level or under ``"mapping"``). It is applied
only when ``adopted`` is true; a GradeMapping fitted on expected grades uses a judgment's
``expected_grade`` and falls back to its grade when it has none. A mapping to grades outside the scale is refused.

Every file is read by :func:`relgrade.io.read_labels` (one reader): grades outside the scale (default 0-3; a
judge's details declare their own, e.g. ``[0, 1]``) are refused as ``calibrate`` refuses them. A binary judge
beside graded humans is put on one scale by :func:`on_common_scale`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade._words import plural
from relgrade.io._labels import DEFAULT_SCALE, Label, on_judge_scale, read_labels, span
from relgrade.io._text import loads_json, read_text


def read_human_labels(path: str | Path, *, scale: Sequence[int] = DEFAULT_SCALE) -> list[Label]:
    """Human labels, one per pair (lower median of its annotators), with annotator, time, text hash and the
    sampling design when the file has them (see module docstring)."""
    labels = read_labels(path, source="human", scale=scale)
    if not labels.labels:
        raise InputError(f"no graded row ({plural(labels.n_empty, 'row')} with an empty grade); fill the 'grade' column first",
                         path=path)
    return list(labels.consensus())


def require_random_sample(human: Sequence[Label], path: str | Path | None = None) -> None:
    """Refuse human labels from a stratified sample: PPI needs whole random queries (``--design queries``)."""
    if any(lab.design == "strata" for lab in human):
        raise InputError("these human labels come from a stratified sample (design 'strata'), which PPI++ cannot use: "
                         "label a 'relgrade sample --design queries' file for estimate", path=path)


@dataclass(frozen=True)
class JudgeMapping:
    """A judge-to-human grade mapping as read from ``--mapping``; identity unless ``adopted``."""

    adopted: bool
    table: Mapping[int, int] | None = None
    grade_mapping: Any = None  # relgrade.calibration.GradeMapping
    message: str = ""
    calibration: Mapping[str, Any] | None = None  # the whole 'relgrade calibrate --json' file, when it was one
    source: str | None = None

    def verdict(self, model: str | None = None):
        """The judge's :class:`relgrade._verdict.JudgeVerdict` from the calibration file (None for a plain table);
        a calibration of another model than ``model`` is refused."""
        from relgrade._verdict import JudgeVerdict

        return JudgeVerdict.from_calibration(self.calibration, source=self.source, model=model)

    def audit(self, model: str | None = None, prompt_hash: str | None = None):
        """The judge's :class:`relgrade._verdict.AuditVerdict` that ``calibrate --audit`` recorded in the calibration
        file (None when it has none); an audit of another judge is refused."""
        block = (self.calibration or {}).get("audit")
        if not isinstance(block, Mapping):
            return None
        from relgrade._verdict import AuditVerdict

        return AuditVerdict.from_audit(block, source=self.source, model=model, prompt_hash=prompt_hash)

    @property
    def changes_grades(self) -> bool:
        """Whether applying it changes any judge grade: adopted, and not the identity (a fitted map of expected
        grades, ``input: expected_grade``, always may)."""
        if not self.adopted:
            return False
        if self.grade_mapping is not None:
            gm = self.grade_mapping
            return gm.input != "grade" or any(int(gm.apply(g)) != g for g in gm.scale)
        return any(k != v for k, v in (self.table or {}).items())

    def apply(self, grade: int, expected: float | None = None) -> int:
        if not self.adopted:
            return grade
        if self.grade_mapping is not None:
            use_expected = self.grade_mapping.input == "expected_grade" and expected is not None
            return int(self.grade_mapping.apply(expected if use_expected else grade))
        if grade not in self.table:
            raise InputError(f"the mapping's table has no entry for judge grade {grade}; "
                             f"it maps {sorted(self.table)}")
        return int(self.table[grade])


def read_audit(path: str | Path, *, model: str | None = None, prompt_hash: str | None = None):
    """``--audit AUDIT.json`` (``relgrade audit --json``): ``(its relgrade._verdict.AuditVerdict, the whole audit)``;
    an audit of another judge (``model``, ``prompt_hash``) than the labels' is refused."""
    from relgrade._verdict import AuditVerdict

    data = loads_json(read_text(path, what="audit file"), path=path)
    return AuditVerdict.from_audit(data, source=str(path), model=model, prompt_hash=prompt_hash), data


def read_mapping(path: str | Path, *, scale: Sequence[int] = DEFAULT_SCALE) -> JudgeMapping:
    """Read ``--mapping`` (see module docstring); a grade it maps to must be on ``scale``."""
    text = read_text(path, what="mapping file")
    data = loads_json(text, path=path)
    calibration = data if isinstance(data, dict) and isinstance(data.get("verdict"), dict) else None
    if calibration is not None and not isinstance(calibration.get("mapping"), dict):  # calibrate --no-mapping
        return JudgeMapping(False, message="no mapping fitted", calibration=calibration, source=str(path))
    if isinstance(data, dict) and isinstance(data.get("mapping"), dict):
        data = data["mapping"]
    if not isinstance(data, dict) or "adopted" not in data:
        raise InputError("no mapping found: expected {\"adopted\": true|false, \"table\": {\"0\": 0, ...}} or the "
                         "JSON of 'relgrade calibrate --json' (key \"mapping\")", path=path)
    adopted = data["adopted"]
    if not isinstance(adopted, bool):
        raise InputError(f"'adopted' must be true or false, got {adopted!r}", path=path)
    message = str(data.get("message", ""))
    if "points" in data and "input" in data and "scale" in data:
        from relgrade.calibration import GradeMapping

        try:
            gm = GradeMapping.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed calibration mapping ({exc}); re-run 'relgrade calibrate --json'", path=path) from None
        return JudgeMapping(adopted, grade_mapping=gm, message=message, calibration=calibration, source=str(path))
    table = data.get("table")
    if not isinstance(table, dict) or not table:
        raise InputError("the mapping needs a non-empty 'table' {\"judge grade\": human grade}", path=path)
    from relgrade.io import parse_grade

    try:
        parsed = {parse_grade(k, path=path, what="judge grade"): parse_grade(v, path=path, what="mapped grade")
                  for k, v in table.items()}
    except InputError:
        raise InputError("the mapping's 'table' must map integer grades to integer grades, e.g. {\"2\": 1}",
                         path=path) from None
    outside = sorted(v for v in parsed.values() if v is None or v not in set(scale))
    if outside or None in parsed:
        raise InputError(f"the mapping's 'table' maps to grade(s) {outside} outside the scale {span(scale)}; "
                         "map every judge grade to a grade of the scale", path=path)
    return JudgeMapping(adopted, table=parsed, message=message, calibration=calibration, source=str(path))


class JudgeLabels(Sequence):
    """The :class:`Label` rows of a details file read as columns (:func:`relgrade.io._details.read_details_columns`),
    built on first use: their count, and the judge's pairs as dicts (:meth:`grades`, :meth:`expected`), come from the
    columns without them."""

    def __init__(self, columns, time: str):
        self.columns = columns
        self._time = time
        self._rows: tuple[Label, ...] | None = None
        self._cache: dict[str, Any] = {}

    def _built(self) -> tuple[Label, ...]:
        if self._rows is None:
            rows = self.columns.labels()
            for lab in rows:  # as read_judge_labels sets them on the plain reader's rows (no mapping adopted)
                lab.__dict__.update(source="judge", judge_grade=None, mapped=False, time=lab.time or self._time)
            self._rows = rows
        return self._rows

    def __len__(self) -> int:
        return len(self.columns)

    def __getitem__(self, index):
        return self._built()[index]

    def __iter__(self):
        return iter(self._built())

    def __eq__(self, other) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, (tuple, list, JudgeLabels)) else other)

    __hash__ = None

    def grades(self) -> dict[str, dict[str, int]]:
        """``{query_id: {doc_id: grade}}`` in file order, as ``JudgeInput.to_qrels`` builds it from the rows (built
        once: no one changes it)."""
        if "grades" not in self._cache:
            self._cache["grades"] = self._pairs(self.columns.grade)
        return self._cache["grades"]

    def qrels(self, source: str | None):
        """:meth:`grades` as :class:`~relgrade.io.Qrels` whose ``labels`` are that dict (built once)."""
        from relgrade.io import Qrels

        if "qrels" not in self._cache:
            self._cache["qrels"] = Qrels.keeping(self.grades(), source=source, columns=self._label_columns())
        return self._cache["qrels"]

    def _label_columns(self):
        """The graded rows as :class:`relgrade.io._qrels.LabelColumns` laid out as ``Qrels(self.grades())`` lays
        them out (rows grouped by query, each id numbered where the grouped rows first name it), from the codes read."""
        import numpy as np

        from relgrade.io._columns import Ids, take
        from relgrade.io._qrels import LabelColumns

        c = self.columns
        rows, q = self._grouped(np.flatnonzero(c.graded))

        def first_seen(codes, names):
            distinct, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
            order = np.argsort(first, kind="stable")
            renumber = np.empty(len(distinct), np.int64)
            renumber[order] = np.arange(len(distinct))
            return Ids(renumber[inverse.ravel()].astype(np.int32), take(names, distinct[order]))

        return LabelColumns(first_seen(q, c.query.names), first_seen(c.doc.codes[rows], c.doc.names),
                            c.grade[rows].astype(np.int64))

    def _grouped(self, rows):
        """``(rows, their query codes)``: ``rows`` grouped by query (queries in the order these rows first name
        them), each query's rows in file order."""
        import numpy as np

        q = self.columns.query.codes[rows]
        if not len(rows):
            return rows, q
        distinct, first = np.unique(q, return_index=True)
        rank = np.empty(self.columns.query.n_names, np.int64)
        rank[distinct] = np.argsort(np.argsort(first, kind="stable"), kind="stable")
        order = np.argsort(rank[q], kind="stable")
        return rows[order], q[order]

    def expected(self) -> dict[str, dict[str, float]]:
        """``{query_id: {doc_id: expected grade}}`` of the graded rows that give one (built once)."""
        import numpy as np

        if "expected" not in self._cache:
            self._cache["expected"] = self._pairs(self.columns.expected, ~np.isnan(self.columns.expected))
        return self._cache["expected"]

    def _pairs(self, values, mask=None) -> dict:
        import numpy as np

        from relgrade.io._columns import take

        c = self.columns
        rows = np.flatnonzero(c.graded if mask is None else c.graded & mask)
        out: dict = {}
        if not len(rows):
            return out
        rows, q = self._grouped(rows)
        docs = take(c.doc.names, c.doc.codes[rows]).to_pylist()
        vals = values[rows].tolist()
        starts = np.flatnonzero(np.concatenate([[True], q[1:] != q[:-1]]))
        ends = np.append(starts[1:], len(q)).tolist()
        names = c.query.name_list()
        for code, s, e in zip(q[starts].tolist(), starts.tolist(), ends):
            out[names[code]] = dict(zip(docs[s:e], vals[s:e]))
        return out


@dataclass(frozen=True)
class JudgeInput:
    labels: Sequence[Label]  # a tuple, or JudgeLabels (built on first use) from a details file read as columns
    n_unjudged: int
    model: str | None
    scale: tuple[int, ...] | None = None  # the judge's own scale when its details declare one
    source: str | None = None  # the file the labels came from

    def prompt_hash(self) -> str | None:
        """The first label's prompt hash that is set (the judge's prompt, for its audit)."""
        if isinstance(self.labels, JudgeLabels):
            return self.labels.columns.first("prompt_hash")
        return next((lab.prompt_hash for lab in self.labels if lab.prompt_hash), None)

    def to_qrels(self):
        """The grades in use (mapped when a mapping was adopted) as :class:`~relgrade.io.Qrels`."""
        from relgrade.io import Qrels

        if isinstance(self.labels, JudgeLabels):
            return self.labels.qrels(self.source)
        labels: dict[str, dict[str, int]] = {}
        for lab in self.labels:
            labels.setdefault(lab.query_id, {})[lab.doc_id] = lab.grade
        return Qrels(labels, source=self.source)


def read_judge_labels(path: str | Path, *, mapping: JudgeMapping | None = None,
                      scale: Sequence[int] = DEFAULT_SCALE) -> JudgeInput:
    """Judge labels with model, prompt hash, time and text hash; the mapping applied when adopted.

    A judgment without a ``time`` gets the file's modification time. A details file that
    :func:`relgrade.io._details.read_details_columns` reads (no mapping adopted) keeps its columns and builds its
    ``Label`` rows on first use (:class:`JudgeLabels`); any other file, and any doubt, goes line by line.
    """
    mtime = datetime.fromtimestamp(Path(path).stat().st_mtime, timezone.utc).isoformat(timespec="seconds") \
        if Path(path).is_file() else None
    mapping = mapping or JudgeMapping(False)
    adopted = mapping.adopted
    if not adopted:
        from relgrade.io._details import read_details_columns

        columns = read_details_columns(path, scale=scale)
        if columns is not None:
            return JudgeInput(JudgeLabels(columns, mtime), columns.n_empty, columns.model, None, str(path))
    labels = read_labels(path, source="judge", scale=scale)
    for lab in labels.labels:  # replace(lab, ...) in place: these Labels were just read, no one else holds them
        lab.__dict__.update(source="judge", grade=mapping.apply(lab.grade, lab.expected_grade) if adopted else lab.grade,
                            judge_grade=lab.grade if adopted else None, mapped=adopted, time=lab.time or mtime)
    return JudgeInput(labels.labels, labels.n_empty, labels.model, labels.scale, str(path))


def crossfit_for_ppi(judge: JudgeInput, human: Mapping[str, Mapping[str, int]], mapping: JudgeMapping | None, *,
                     seed: int = 0, allow: bool = True) -> tuple[Any, str | None]:
    """``(CrossFit or None, note)``: PPI may not reuse the human labels an adopted mapping was fitted on.

    A mapping from ``relgrade calibrate`` records a fingerprint of its human labels. When it is adopted
    and was fitted on some of the queries in ``human`` (``{query_id: {doc_id: grade}}``), the judge's
    grades on those queries lean towards their human grades and a PPI interval built on them is too
    narrow (Angelopoulos et al. 2023). Then the judge's raw grades are mapped by cross-fitting
    (:func:`relgrade.calibration.crossfit_mapping`; pass the result as ``estimate(crossfit=...)``); with
    ``allow=False`` (a command that cannot cross-fit) it is an :class:`InputError`. A mapping that is not
    adopted, a hand-written table, or one fitted on other queries: ``(None, None)``.
    """
    gm = None if mapping is None or not mapping.adopted else mapping.grade_mapping
    if gm is None or gm.fingerprint is None:
        return None, None
    shared = gm.fingerprint.overlap(human)
    if not shared:
        return None, None
    if not allow:
        raise InputError(f"the mapping was fitted on {len(shared)} of these human-labeled queries (e.g. {shared[0]}); "
                         "PPI++ cannot reuse them here: pass a mapping fitted on other labels, or none")
    from relgrade.calibration import crossfit_mapping

    raw: dict[str, dict[str, int]] = {}
    expected: dict[str, dict[str, float]] = {}
    for lab in judge.labels:
        raw.setdefault(lab.query_id, {})[lab.doc_id] = lab.judge_grade if lab.judge_grade is not None else lab.grade
        if lab.expected_grade is not None:
            expected.setdefault(lab.query_id, {})[lab.doc_id] = lab.expected_grade
    cf = crossfit_mapping(raw, human, expected=expected if gm.input == "expected_grade" and expected else None,
                          scale=gm.scale, seed=seed)
    note = (f"the mapping was fitted on {len(shared)} of these human-labeled queries, which PPI++ also uses: the judge's "
            f"grades are mapped by cross-fitting instead ({len(cf.folds)} folds, {cf.n_adopted} fold mappings adopted)")
    return cf, note


def on_common_scale(human: Sequence[Label], judge: JudgeInput, *, threshold: int,
                    scale: Sequence[int] = DEFAULT_SCALE) -> tuple[list[Label], JudgeInput, str | None]:
    """Human and judge labels on one scale: ``(human, judge, note)``.

    A binary judge (details ``"scale": [0, 1]``) beside graded humans: the human grades are binarized at
    ``threshold`` (:func:`relgrade.io.on_judge_scale`, the rule ``calibrate`` uses), so 0/1 verdicts are never
    mixed with 0-3 grades. A judge on the human scale (or a narrower one inside it) is left as it is.
    """
    if judge.scale is None or judge.scale == tuple(scale):
        return list(human), judge, None
    grades = {(lab.query_id, lab.doc_id): {"": lab.grade} for lab in human}
    j_scale, on, binarized = on_judge_scale(grades, judge.scale, scale, threshold)
    if not binarized:
        return list(human), judge, None
    out = [replace(lab, grade=on[(lab.query_id, lab.doc_id)][""], scale=j_scale, annotations=None if lab.annotations
                   is None else {a: j_scale[1] if g >= threshold else j_scale[0] for a, g in lab.annotations.items()})
           for lab in human]
    note = (f"binary judge (scale {span(j_scale)}): human grades binarized at threshold {threshold} (grade >= "
            f"{threshold} counts as {j_scale[1]}, below as {j_scale[0]}); every label here is on {span(j_scale)}")
    return out, judge, note
