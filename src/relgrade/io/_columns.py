"""Ids factorised once: one integer code per row, each distinct id stored once (pyarrow), for runs and qrels.

A run of 10M lines holds a few hundred thousand distinct ids; keeping codes (numpy) and the distinct names (a
pyarrow string array, first-seen order) instead of 10M Python strings is what lets the readers, the join and the
metrics work on arrays. Every :class:`Ids` obeys the id rule of :mod:`relgrade.io._ids`.
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
            return cls(np.zeros(0, np.int32), pa.array([], pa.string()))
        names = chunks[-1].dictionary  # one dictionary for every chunk (insertion order)
        if len(chunks) == 1:
            codes = chunks[0].indices.to_numpy(zero_copy_only=False)
        else:
            codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in chunks])
        return cls(codes, names)

    @classmethod
    def from_arrow(cls, column: "pa.Array | pa.ChunkedArray", what: str = "id",
                   path: str | Path | None = None) -> "Ids":
        """From a pyarrow string column (no nulls), by the id rule (:mod:`relgrade.io._ids`)."""
        return cls.encode(column)._ruled(what, path)

    @classmethod
    def from_values(cls, values: Sequence[Any], what: str = "id", path: str | Path | None = None) -> "Ids":
        """From Python ids (strings, integers, ...) by the id rule; one :class:`InputError` for a bad one."""
        import pyarrow as pa

        try:
            array = pa.array(values, type=pa.string())
            if array.null_count:
                raise TypeError
        except Exception:  # integers, floats, None, lone surrogates, ...: each value through the rule
            array = pa.array([as_id(v, what, path=path) for v in values], type=pa.string())
        return cls.from_arrow(array, what, path)

    def _ruled(self, what: str, path) -> "Ids":
        """Apply the id rule to the distinct names (surrounding whitespace, empty ids) and merge equal results."""
        import numpy as np
        import pyarrow as pa

        bad = off_rule(self.names)
        if bad is None:
            return self
        fixed = self.names.to_pylist()
        for i in np.flatnonzero(bad.to_numpy(zero_copy_only=False)).tolist():
            fixed[i] = as_id(fixed[i], what, path=path)
        merged = pa.array(fixed, type=pa.string()).dictionary_encode()
        remap = merged.indices.to_numpy(zero_copy_only=False)
        return Ids(remap[self.codes], merged.dictionary, rewritten=True)

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
    bad = pc.or_(pc.equal(pc.utf8_length(names), 0), pc.match_substring_regex(names, EDGE_WHITESPACE_RE2))
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
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def arrow_strings(values: Sequence[str]) -> "pa.Array":
    """A pyarrow string array of ``values`` (already ids)."""
    import pyarrow as pa

    return pa.array(values, type=pa.string())
