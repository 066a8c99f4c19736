"""Ids factorised once: one integer code per row, each distinct id stored once (pyarrow), for runs and qrels.

A run of 10M lines holds a few hundred thousand distinct ids; keeping codes (numpy) and the distinct names (a
pyarrow string array, first-seen order) instead of 10M Python strings is what lets the readers, the join and the
metrics work on arrays. Every :class:`Ids` obeys the id rule of :mod:`relgrade.io._ids`.

Arrays cross between numpy and pyarrow through their buffers (:func:`to_numpy`, :func:`from_numpy`, :func:`strings`,
:func:`take`): pyarrow's own conversions (``pa.array``, ``to_numpy``, Python scalars) import pandas, a third of a
second of every command's start-up.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relgrade.io._ids import EDGE_WHITESPACE_RE2, as_id

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa


class Ids:
    """``codes[i]`` is the index of row ``i``'s id in ``names`` (distinct ids, first-seen order)."""

    __slots__ = ("codes", "names", "rewritten", "_values", "_list")

    def __init__(self, codes: "np.ndarray", names: "pa.Array", *, rewritten: bool = False):
        self.codes = codes
        self.names = names
        self.rewritten = rewritten  # the id rule changed some ids (two may have become one)
        self._values: np.ndarray | None = None
        self._list: list[str] | None = None

    # -- construction -----------------------------------------------------------------------------------------
    @classmethod
    def encode(cls, column: "pa.Array | pa.ChunkedArray") -> "Ids":
        """From a pyarrow string column (no nulls), the ids taken as they are (see :meth:`from_arrow`)."""
        import numpy as np
        import pyarrow as pa

        encoded = column.dictionary_encode()
        chunks = encoded.chunks if isinstance(encoded, pa.ChunkedArray) else [encoded]
        if not chunks:
            return cls(np.zeros(0, np.int32), strings([]))
        names = chunks[-1].dictionary  # one dictionary for every chunk (insertion order)
        return cls(to_numpy(pa.chunked_array([c.indices for c in chunks], pa.int32())), names)

    @classmethod
    def from_arrow(cls, column: "pa.Array | pa.ChunkedArray", what: str = "id",
                   path: str | Path | None = None) -> "Ids":
        """From a pyarrow string column (no nulls), by the id rule (:mod:`relgrade.io._ids`)."""
        return cls.encode(column)._ruled(what, path)

    @classmethod
    def from_values(cls, values: Sequence[Any], what: str = "id", path: str | Path | None = None) -> "Ids":
        """From Python ids (strings, integers, ...) by the id rule; one :class:`InputError` for a bad one."""
        try:
            array = strings(values)
        except (TypeError, UnicodeEncodeError):  # integers, floats, None, lone surrogates: each through the rule
            array = strings([as_id(v, what, path=path) for v in values])
        return cls.from_arrow(array, what, path)

    def _ruled(self, what: str, path) -> "Ids":
        """Apply the id rule to the distinct names (surrounding whitespace, empty ids) and merge equal results."""
        import pyarrow.compute as pc

        bad = off_rule(self.names)
        if bad is None:
            return self
        fixed = self.names.to_pylist()
        for i in to_numpy(pc.indices_nonzero(bad)).tolist():
            fixed[i] = as_id(fixed[i], what, path=path)
        merged = strings(fixed).dictionary_encode()
        return Ids(to_numpy(merged.indices)[self.codes], merged.dictionary, rewritten=True)

    # -- views ------------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.codes)

    @property
    def n_names(self) -> int:
        return len(self.names)

    def name_list(self) -> list[str]:
        """The distinct ids as Python strings (cached)."""
        if self._list is None:
            self._list = self.names.to_pylist()
        return self._list

    def values(self) -> "np.ndarray":
        """One id per row as a numpy object array (cached; built on first use only)."""
        if self._values is None:
            import numpy as np

            names = np.array(self.name_list() or [""], dtype=object)
            self._values = names[self.codes] if len(self.codes) else np.zeros(0, dtype=object)
        return self._values

    def take(self, rows: "np.ndarray") -> "Ids":
        """The ids of ``rows`` (same names)."""
        return Ids(self.codes[rows], self.names)


def reader_pool() -> "pa.MemoryPool":
    """The pyarrow memory pool the readers parse into: jemalloc where pyarrow has it (it keeps the pages it frees
    for the next block; the default mimalloc pool cost a 10M-line run twice the system time here), else the
    default. Passed to each read, never set process-wide."""
    import pyarrow as pa

    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:
        return pa.default_memory_pool()


@contextmanager
def paused_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a reader makes many small objects at once (a :class:`Label`
    per row): none of them forms a cycle, and the collector's passes over them took 60% of ``read_labels`` on 500k
    rows. The previous state is restored, also on an error."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def off_rule(names: "pa.Array") -> "pa.Array | None":
    """Which ``names`` the id rule would change or refuse (whitespace around them, empty), None when none."""
    import pyarrow.compute as pc

    if not len(names):
        return None
    bad = pc.match_substring_regex(names, f"^$|{EDGE_WHITESPACE_RE2}")
    return bad if pc.any(bad).as_py() else None


def ramp(lengths: "np.ndarray") -> "np.ndarray":
    """``0, 1, ..., n - 1`` for each ``n`` of ``lengths``, concatenated."""
    import numpy as np

    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    return np.arange(int(lengths.sum())) - np.repeat(starts, lengths)


def positions(names: "pa.Array", within: "pa.Array") -> "np.ndarray":
    """For each id of ``names``, its position in ``within`` (both pyarrow string arrays), or -1."""
    import numpy as np
    import pyarrow.compute as pc

    if not len(names) or not len(within):
        return np.full(len(names), -1, np.int64)
    found = pc.index_in(names, value_set=within)
    out = to_numpy(found).astype(np.int64)
    if found.null_count:
        out[to_numpy(pc.indices_nonzero(pc.is_null(found)))] = -1
    return out


_NUMPY = {"int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8",
          "uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "float": "float32", "double": "float64"}


def to_numpy(array: "pa.Array | pa.ChunkedArray") -> "np.ndarray":
    """The values of a fixed-width pyarrow array as numpy, from its buffers (read-only when one chunk; the values
    under nulls are unspecified: the caller masks them)."""
    import numpy as np
    import pyarrow as pa

    chunks = array.chunks if isinstance(array, pa.ChunkedArray) else [array]
    dtype = np.dtype(_NUMPY[str(array.type)])
    parts = [np.frombuffer(c.buffers()[1], dtype=dtype, count=len(c), offset=c.offset * dtype.itemsize)
             for c in chunks if len(c)]
    if not parts:
        return np.zeros(0, dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def from_numpy(values: "np.ndarray") -> "pa.Array":
    """A pyarrow array over the buffer of a 1-d numeric numpy array."""
    import numpy as np
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    kind = {v: k for k, v in _NUMPY.items()}[values.dtype.name]
    return pa.Array.from_buffers(getattr(pa, kind)(), len(values), [None, pa.py_buffer(values)])


def strings(values: "Sequence[str]") -> "pa.Array":
    """A pyarrow string array of Python strings (TypeError for a non-string, UnicodeEncodeError for a lone
    surrogate). pyarrow's own converter is twice as fast but imports pandas (0.3 s) on its first use: it is taken
    when pandas is loaded already or the list is long enough (4M strings) to pay for the import."""
    import sys

    import numpy as np
    import pyarrow as pa

    if len(values) > 1 << 22 or "pandas" in sys.modules:
        try:
            array = pa.array(values, type=pa.string())
        except (pa.ArrowTypeError, pa.ArrowInvalid) as exc:
            raise TypeError(str(exc)) from None
        if array.null_count:
            raise TypeError("None is not a string")
        return array
    joined = "".join(values)
    data = joined.encode("utf-8")
    sizes = map(len, values) if len(data) == len(joined) else (len(v.encode("utf-8")) for v in values)
    offsets = np.zeros(len(values) + 1, np.int64)
    np.cumsum(np.fromiter(sizes, np.int64, len(values)), out=offsets[1:])
    if offsets[-1] < 2**31:
        return pa.StringArray.from_buffers(len(values), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data))
    return pa.LargeStringArray.from_buffers(len(values), pa.py_buffer(offsets), pa.py_buffer(data))


def repeat_string(text: str, n: int) -> "pa.Array":
    """``text`` ``n`` times, as a pyarrow string array."""
    import numpy as np
    import pyarrow as pa

    data = text.encode("utf-8")
    offsets = (np.arange(n + 1) * len(data)).astype(np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data * n))


def take(names: "pa.Array", codes: "np.ndarray") -> "pa.Array":
    """``names[codes]`` (a pyarrow array; ``codes`` a numpy integer array)."""
    import numpy as np

    return names.take(from_numpy(np.asarray(codes, dtype=np.int64)))
