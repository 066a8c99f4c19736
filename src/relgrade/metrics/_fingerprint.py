"""The content hash of a :class:`~relgrade.io.Qrels`, computed on its columns.

The hash is defined in :func:`relgrade.metrics._settings.labels_fingerprint`: SHA-256 over the sorted lines
``L<TAB>query<TAB>doc<TAB>grade``, ``F<TAB>query<TAB>doc`` (forbidden documents) and ``T<TAB>query`` (declared
queries), each followed by a newline. Sorting strings is byte order; the ``F``, ``L`` and ``T`` lines sort
apart by their first letter. When no id holds a character at or below TAB (code 9), ``L`` lines sort as the
(query, doc) pairs do, so the pairs are ordered by the byte-order ranks of the distinct ids (one integer sort,
no string per label); otherwise the lines are built and sorted one by one, as the definition says.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from relgrade.io._columns import repeat_string, strings, take
from relgrade.io._order import byte_ranks

def content_sha256(labels: Any, forbidden: Any, topics: Iterable[str]) -> str:
    """SHA-256 of the sorted content lines (module docstring) of a Qrels' ``labels`` mapping, or of its columns
    when ``labels`` is a :class:`relgrade.io._qrels.LabelColumns`."""
    h = hashlib.sha256()
    h.update("".join(sorted(f"F\t{q}\t{d}\n" for q, docs in forbidden.items() for d in docs)).encode("utf-8"))
    columnar = hasattr(labels, "grade")
    if not (columnar and _label_lines(labels, h)):
        mapping = labels.to_dict() if columnar else labels
        lines = sorted(f"L\t{q}\t{d}\t{int(g)}" for q, docs in mapping.items() for d, g in docs.items())
        h.update("".join(line + "\n" for line in lines).encode("utf-8"))
    h.update("".join(line + "\n" for line in sorted(f"T\t{q}" for q in topics)).encode("utf-8"))
    return h.hexdigest()


def _low_byte(names: Any) -> bool:
    """Whether an id holds a character at or below TAB (a byte <= 9 of its UTF-8: no multi-byte character has one)."""
    import numpy as np
    import pyarrow as pa

    if not len(names):
        return False
    width = np.int64 if pa.types.is_large_string(names.type) else np.int32
    offsets = np.frombuffer(names.buffers()[1], dtype=width)[names.offset: names.offset + len(names) + 1]
    data = np.frombuffer(names.buffers()[2], np.uint8)[int(offsets[0]): int(offsets[-1])]
    return bool((data <= 9).any())


def _label_lines(columns: Any, h: "hashlib._Hash") -> bool:
    """Hash the ``L`` lines from the columns; False (nothing hashed) when an id holds a character <= TAB."""
    import numpy as np
    import pyarrow.compute as pc

    query, doc = columns.query, columns.doc
    if not len(columns.grade):
        return True
    if _low_byte(query.names) or _low_byte(doc.names):
        return False
    q_rank = byte_ranks(query.names)[query.codes]
    d_rank = byte_ranks(doc.names)[doc.codes]
    order = np.argsort(q_rank * max(len(doc.names), 1) + d_rank)
    grade = columns.grade[order]
    low, high = int(grade.min()), int(grade.max())
    if high - low < 1 << 16:  # "2\n" made once per grade of the range
        ends, grade_of = strings([f"{g}\n" for g in range(low, high + 1)]), grade - low
    else:
        distinct, grade_of = np.unique(grade, return_inverse=True)
        ends = strings([f"{g}\n" for g in distinct.tolist()])
    n = len(order)
    lines = pc.binary_join_element_wise(repeat_string("L", n), take(query.names, query.codes[order]),
                                        take(doc.names, doc.codes[order]), take(ends, grade_of), repeat_string("\t", n))
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32)[lines.offset: lines.offset + len(lines) + 1]
    h.update(memoryview(lines.buffers()[2])[int(offsets[0]): int(offsets[-1])])
    return True
