"""TREC files (runs ``qid Q0 docid rank score tag``, qrels ``qid iter docid grade``) read as columns.

One fast parse: pyarrow's multi-threaded CSV reader with a single-character delimiter, no quoting, no missing
values (``NA`` is an id) and typed columns (the rank and the grade as int64, the score as float64). It accepts a
file only when the line-exact reader would read it the same way: a file with any other whitespace or control
character (which ``str.split()`` treats as a separator), a comment line, a malformed field, a non-finite score or a
repeated (query, doc) pair goes to the line-exact reader instead, which reads odd files right and names the file
and line of the first problem. So the strict checks and the one-line errors stay; only a valid, plain file is fast.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from relgrade._errors import InputError
from relgrade.io._columns import Ids, reader_pool, strings, to_numpy
from relgrade.io._text import iter_lines

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

RUN_FIELDS = ("query_id", "q0", "doc_id", "rank", "score", "tag")
QRELS_FIELDS = ("query_id", "iteration", "doc_id", "grade")
IDS = ("query_id", "doc_id")  # the columns read dictionary-encoded

# UTF-8 forms of the non-ASCII characters str.split() splits on (U+0085, U+00A0, U+1680, U+2000-U+200A,
# U+2028, U+2029, U+202F, U+205F, U+3000)
_WIDE_SPACE = re.compile(rb"\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80")


def fast_columns(data: bytes, fields: tuple[str, ...], types: dict[str, "pa.DataType"]) -> "pa.Table | None":
    """The typed columns ``types`` of a plain TREC file, or None when the line-exact reader must read it. The
    ``query_id`` and ``doc_id`` columns are read dictionary-encoded (each distinct id stored once per block, then
    one dictionary for the file)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as csv

    head = data[:4096].lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0]
    delimiter = "\t" if b"\t" in head and b" " not in head else " "
    if not _plain_bytes(data, delimiter):
        return None
    types = {**types, **dict.fromkeys(IDS, pa.dictionary(pa.int32(), pa.string()))}
    try:
        table = csv.read_csv(
            pa.BufferReader(data),
            read_options=csv.ReadOptions(column_names=list(fields), block_size=1 << 24),
            parse_options=csv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False,
                                           escape_char=False, newlines_in_values=False),
            convert_options=csv.ConvertOptions(column_types=types, include_columns=list(types), null_values=[],
                                               strings_can_be_null=False, quoted_strings_can_be_null=False),
            memory_pool=reader_pool(),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    return table.unify_dictionaries(memory_pool=reader_pool())


def _plain_bytes(data: bytes, delimiter: str) -> bool:
    """No control character but line ends (and the tab delimiter), valid UTF-8, no non-ASCII space: then the
    delimiter alone separates fields, as ``str.split()`` would. Scanned in 16 MB blocks (small temporaries)."""
    import numpy as np

    raw = np.frombuffer(data, np.uint8)
    wide = False
    for start in range(0, len(raw), 1 << 24):
        block = raw[start:start + (1 << 24)]
        controls = int(np.count_nonzero(block < 32))
        allowed = int(np.count_nonzero(block == 10)) + int(np.count_nonzero(block == 13))
        if delimiter == "\t":
            allowed += int(np.count_nonzero(block == 9))
            if np.count_nonzero(block == 32):
                return False
        if controls != allowed:
            return False
        wide = wide or int(block.max(initial=0)) >= 0x80
    if wide:
        try:
            codecs.utf_8_decode(data, "strict", True)
        except UnicodeDecodeError:
            return False
        return not _WIDE_SPACE.search(data)
    return True


def fast_ids(table: "pa.Table", field: str) -> "Ids | None":
    """The ids of a column of :func:`fast_columns`; None when one starts with ``#`` (a comment line)."""
    import pyarrow.compute as pc

    import pyarrow as pa

    chunks = table.column(field).chunks
    ids = Ids(to_numpy(pa.chunked_array([c.indices for c in chunks], pa.int32())),
              chunks[0].dictionary if chunks else strings([]))
    if len(ids.names) and pc.any(pc.starts_with(ids.names, "#")).as_py():
        return None
    return ids  # no whitespace (checked on the bytes) nor empty field (a wrong field count): the id rule holds


def repeats_pair(query: "np.ndarray", doc: "np.ndarray", n_queries: int, n_docs: int) -> bool:
    """Whether a (query code, doc code) pair occurs twice: one in-place sort of the pair keys (32-bit when they fit;
    as fast as a table of every pair here, with a tenth of the memory)."""
    import numpy as np

    width = np.int32 if max(n_queries, 1) * max(n_docs, 1) < 1 << 31 else np.int64
    key = query.astype(width)
    key *= max(n_docs, 1)
    key += doc
    key.sort()
    return bool((key[1:] == key[:-1]).any())


# -- the line-exact readers ------------------------------------------------------------------------------------
def run_lines(path: str | Path, text: str) -> Iterator[tuple[int, str, str, float]]:
    """``(line, query_id, doc_id, score)`` per line of a TREC run, every problem an :class:`InputError`."""
    seen: dict[tuple[str, str], int] = {}
    for number, line in iter_lines(text):
        fields = line.split()
        if len(fields) != 6:
            raise InputError(f"expected 6 fields 'query_id Q0 doc_id rank score tag' (TREC run), got {len(fields)}",
                             path=path, line=number)
        q, _, d, rank, score, _tag = fields
        try:
            int(rank)
        except ValueError:
            raise InputError(f"rank {rank!r} is not an integer; the 4th field is the rank (1, 2, ...)",
                             path=path, line=number) from None
        try:
            value = float(score)
        except ValueError:
            raise InputError(f"score {score!r} is not a number; the 5th field is the score",
                             path=path, line=number) from None
        if value != value or value in (float("inf"), float("-inf")):
            raise InputError(f"score {score!r} is not a finite number", path=path, line=number)
        first = seen.setdefault((q, d), number)
        if first != number:
            raise InputError(f"document {d!r} appears twice for query {q!r} (first on line {first}); keep one line",
                             path=path, line=number)
        yield number, q, d, value


def qrels_lines(path: str | Path, text: str) -> Iterator[tuple[int, list[str]]]:
    """``(line, [query_id, iteration, doc_id, grade])`` per line of TREC qrels (grades and pairs unchecked)."""
    for number, line in iter_lines(text):
        fields = line.split()
        if len(fields) != 4:
            raise InputError(f"expected 4 fields 'query_id iteration doc_id grade' (TREC qrels), got {len(fields)}",
                             path=path, line=number)
        yield number, fields
