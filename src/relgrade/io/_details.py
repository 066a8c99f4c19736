"""A judge's details JSONL read as columns (issue 39.2): the fast path of :func:`relgrade.io.read_labels` for it.

``relgrade judge`` writes one JSON object per pair; at 20,000 queries x 20 pairs, decoding each line into a dict and
building a :class:`~relgrade.io.Label` from it was over half of ``relgrade estimate``. :func:`read_details_columns`
parses the whole file with pyarrow into typed columns instead (factorised ids, integer grades, expected grades) and
builds the ``Label`` rows only when someone asks for them (:meth:`DetailsColumns.labels`, the same rows as the plain
reader's).

It reads only the files whose reading is certain to be the plain reader's, and returns None for any other, which
then goes through :func:`relgrade.io.read_labels` line by line and gets its errors (file and line) and its rules:

* a ``.jsonl`` file (or one sniffed as JSONL) of objects, one per line, no blank line, no line separator but
  ``\\n`` (``str.splitlines`` also splits at ``\\r``, U+0085, U+2028 and U+2029), valid UTF-8, no lone surrogate
  escape;
* every key one of :data:`relgrade.io._labels._DETAILS` (the keys a details row is read by without aliases), the
  text keys strings or null, ``grade`` an integer or null, ``expected_grade`` a finite number or null (pyarrow
  refuses the rest: a grade ``2.0`` or ``"2"``, an id written as a number, a duplicate key);
* every id present and already by the id rule (no whitespace around it, not empty), no graded pair twice, every
  grade on the scale.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relgrade.io._columns import Ids, off_rule, paused_gc, to_numpy
from relgrade.io._text import read_bytes, read_text, sniff_bytes

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

_TEXT_KEYS = ("query_id", "doc_id", "model", "prompt_hash", "status", "query", "text", "text_sha256", "reason", "time")
_SEPARATORS = ("\r", "\x85", "\u2028", "\u2029")
r"""Line separators ``str.splitlines`` honours beside ``\n`` that JSON allows inside a string (or ``\r`` between
tokens): with one of them the plain reader's lines are not pyarrow's rows. (``\x0b``, ``\x0c``, ``\x1c``-``\x1e``
are refused by both inside strings and between tokens.)"""


@dataclass(frozen=True)
class DetailsColumns:
    """The rows of a details file: ids (factorised), ``grade`` (-1 where null), ``graded`` (the grade is not null),
    ``expected`` (NaN where null), the first model named, the count of null grades; ``table`` keeps every column for
    :meth:`labels` (texts included: a file's worth of memory, as the plain reader's rows hold)."""

    query: Ids
    doc: Ids
    grade: "np.ndarray"
    graded: "np.ndarray"
    expected: "np.ndarray"
    model: str | None
    n_empty: int
    table: "pa.Table" = field(repr=False)
    source: str | None = None

    def __len__(self) -> int:
        return int(self.graded.sum())

    def first(self, name: str) -> str | None:
        """The first graded row's ``name`` (a text key) that is a non-blank string, stripped: what the first such
        :class:`~relgrade.io.Label` of :meth:`labels` holds (``model``, ``prompt_hash``), without building them."""
        return _first_text(self.table.filter(self.graded), name)

    def labels(self) -> tuple:
        """The graded rows as the plain reader's :class:`~relgrade.io.Label` rows (``read_labels(path,
        source="judge")``: a key pyarrow filled with null reads as the key absent, as ``_details_label`` reads it)."""
        import numpy as np

        from relgrade.io._labels import _details_label

        names = [n for n in self.table.column_names if n != "runs"]
        keep = self.graded
        columns = [self.table.column(n).filter(keep).to_pylist() for n in names]
        lines = (np.flatnonzero(keep) + 1).tolist()
        with paused_gc():
            return tuple(_details_label(dict(zip(names, values)), self.source, line, "judge")
                         for values, line in zip(zip(*columns), lines))


def _fields(data) -> "pa.Table | None":
    import pyarrow as pa
    import pyarrow.json as pj

    from relgrade.io._labels import _DETAILS

    types = {name: pa.string() for name in _TEXT_KEYS}
    types.update(grade=pa.int64(), expected_grade=pa.float64())
    schema = pa.schema([(name, types[name]) for name in sorted(types)])
    try:
        table = pj.read_json(pa.BufferReader(pa.py_buffer(data)),
                             read_options=pj.ReadOptions(block_size=1 << 24),
                             parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer"))
    except (pa.ArrowException, ValueError, UnicodeError, OverflowError):
        return None
    if not set(table.column_names) <= _DETAILS:
        return None
    return table


def read_details_columns(path: str | Path, *, scale=None) -> DetailsColumns | None:
    """A details JSONL as :class:`DetailsColumns`, or None when the plain reader must read it (module docstring).
    ``scale``: every grade must be on it (None: no check)."""
    import numpy as np

    data = read_bytes(path, what="labels file")
    if sniff_bytes(path, data) != "jsonl" or data[:3] == b"\xef\xbb\xbf":
        return None
    text = read_text(path, what="labels file", data=data)  # valid UTF-8 (or the plain reader's error)
    if any(sep in text for sep in _SEPARATORS):
        return None
    if _too_deep(data):
        return None
    table = _fields(data)
    if table is None or not table.num_rows or table.num_rows != text.count("\n") + (not text.endswith("\n")):
        return None  # blank lines, or two objects on a line
    del text
    for name in ("query_id", "doc_id"):
        if table.column(name).null_count:
            return None
    query, doc = Ids.encode(table.column("query_id")), Ids.encode(table.column("doc_id"))
    if off_rule(query.names) is not None or off_rule(doc.names) is not None:
        return None
    graded = _valid(table.column("grade"))
    grade = np.where(graded, to_numpy(table.column("grade")), -1).astype(np.int64)
    given = _valid(table.column("expected_grade"))
    expected = np.where(given, to_numpy(table.column("expected_grade")), np.nan)
    if not np.isfinite(expected[given]).all():
        return None  # NaN or infinity written in the file (pyarrow reads them; the plain reader refuses them)
    rows = np.flatnonzero(graded)
    if _repeats(query.codes[rows], doc.codes[rows], query.n_names, doc.n_names):
        return None
    if scale is not None and not np.isin(grade[rows], list(scale)).all():
        return None
    return DetailsColumns(query, doc, grade, graded, expected, _first_text(table, "model"), int(len(graded) - len(rows)),
                          table, str(path))


MAX_OPENS = 64
"""At most this many ``{`` and ``[`` on one line for pyarrow to parse it (a details row has one object and one list):
pyarrow's JSON parser recurses per level and a deeply nested line overflows its stack (the process dies; the fuzz
tests' 100,000-deep line did), where the plain reader says "nested too deeply" with the line."""


def _too_deep(data) -> bool:
    """Whether some line holds more than :data:`MAX_OPENS` opening brackets (inside strings too: such a file just
    goes line by line)."""
    import numpy as np

    raw = np.frombuffer(data, np.uint8)
    opens = np.flatnonzero((raw | 0x20) == ord("{"))  # "{" or "[" (0x7B, 0x5B): no other byte
    if len(opens) <= MAX_OPENS:
        return False
    line = np.searchsorted(np.flatnonzero(raw == ord("\n")), opens)
    return bool(np.bincount(line).max() > MAX_OPENS)


def _valid(column) -> "np.ndarray":
    """Which rows of a pyarrow column are not null, as a numpy bool array (without pyarrow's scalar conversions,
    which import pandas: :mod:`relgrade.io._columns`)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not column.null_count:
        return np.ones(len(column), bool)
    return to_numpy(pc.cast(pc.is_valid(column), pa.uint8())).astype(bool)


def _repeats(query, doc, n_queries: int, n_docs: int) -> bool:
    from relgrade.io._trec import repeats_pair

    return bool(len(query)) and repeats_pair(query, doc, n_queries, n_docs)


def _first_text(table: "pa.Table", name: str) -> str | None:
    """The first row's ``name`` that is a non-blank string, stripped (the plain reader's ``model``: every row's)."""
    import numpy as np

    column = table.column(name)
    if column.null_count == len(column):
        return None
    encoded = column.combine_chunks().dictionary_encode()
    names = [_blank_none(v) for v in encoded.dictionary.to_pylist()]
    ok = np.array([v is not None for v in names] or [False])
    codes = np.where(_valid(encoded.indices), to_numpy(encoded.indices), -1)
    hit = np.flatnonzero((codes >= 0) & ok[np.maximum(codes, 0)])
    return names[int(codes[hit[0]])] if len(hit) else None


def _blank_none(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None
