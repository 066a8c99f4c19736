"""trec_eval's order of a run, computed on arrays: by query, score descending in single precision, ties by doc id
descending (byte order), the file's rank column ignored (trec_eval 9, as exposed by pytrec_eval).

A run written in that order already (the usual TREC file, every JSONL run) is recognised in one pass and not
sorted; otherwise one integer sort orders the rows by (query, score). In both cases only the rows that tie on both
are then ordered by doc id, on the byte-order ranks of their distinct ids.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from relgrade.io._columns import take, to_numpy

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa


def trec_score(score: "np.ndarray") -> "np.ndarray":
    """Scores as trec_eval compares them: rounded to float32 (its ``TEXT_RESULTS.sim`` is a C ``float``), so
    ``0.30000000000000004`` and ``0.3`` tie and the doc id decides, as in trec_eval and pytrec_eval; ``-0.0``
    and ``0.0`` tie too."""
    import numpy as np

    single = np.asarray(score, dtype=np.float64).astype(np.float32)
    single += np.float32(0.0)
    return single


def trec_order(group: "np.ndarray", score: "np.ndarray", doc: "np.ndarray", doc_names: "pa.Array | None", *,
               stable: bool = False) -> "np.ndarray | None":
    """The permutation putting rows in trec_eval order, or None when they are in it already.

    ``group``: the query code of each row (rows of one query end up together, queries by ascending code);
    ``score``: the scores (compared in float32, :func:`trec_score`); ``doc``: doc codes into ``doc_names``
    (None: the codes are in byte order of the ids already). Rows equal in all three (a document listed twice with
    one score, which a run cannot hold) keep their order only with ``stable`` (a sort twice as slow).
    """
    import numpy as np

    if len(group) < 2:
        return None
    s = trec_score(score)
    same = group[1:] == group[:-1]
    order = None
    if (group[1:] < group[:-1]).any() or ((s[1:] > s[:-1]) & same).any():
        key = group.astype(np.uint64)
        key <<= np.uint64(32)
        key |= _descending32(s)
        order = np.argsort(key, kind="stable" if stable else None)
        ordered = key[order]
        tied = ordered[1:] == ordered[:-1]
    else:  # by query and score already: only ties may need their doc order
        tied = same & (s[1:] == s[:-1])
    return _order_ties(order, tied, doc, doc_names) if tied.any() else order


def _order_ties(order: "np.ndarray | None", tied: "np.ndarray", doc: "np.ndarray",
                doc_names: "pa.Array | None") -> "np.ndarray | None":
    """``order`` (None: the rows as they are) with each run of rows tied on query and score put in doc id
    descending order; None when nothing moves. ``tied[i]``: position ``i + 1`` ties with position ``i``."""
    import numpy as np

    n = len(tied) + 1
    member = np.zeros(n, bool)
    member[:-1] |= tied
    member[1:] |= tied
    positions = np.flatnonzero(member)
    rows = positions if order is None else order[positions]
    distinct, inverse = np.unique(doc[rows], return_inverse=True)
    descending = len(distinct) - 1 - byte_ranks(doc_names, distinct)[inverse]
    same_run = (np.diff(positions) == 1) & tied[positions[:-1]]
    run = np.cumsum(np.concatenate([[1], ~same_run]), dtype=np.int64)
    moved = np.argsort(run * len(distinct) + descending, kind="stable")  # stable: equal rows keep the sort's order
    if order is None:
        if (moved == np.arange(len(moved))).all():
            return None
        order = np.arange(n)
    order[positions] = rows[moved]
    return order


def _descending32(s: "np.ndarray") -> "np.ndarray":
    """uint32 keys that sort float32 scores descending: the IEEE bits made monotone (negatives' bits inverted,
    positives' sign bit set), then inverted."""
    import numpy as np

    bits = s.view(np.uint32)
    key = ~bits
    key &= np.uint32(0x7FFFFFFF)  # a positive score: ~(bits | sign) = ~bits without the sign bit
    negative = np.flatnonzero(bits >= np.uint32(0x80000000))
    key[negative] = bits[negative]  # a negative score: ~(~bits) = bits
    return key


def byte_ranks(names: "pa.Array | None", codes: "np.ndarray | None" = None) -> "np.ndarray":
    """Rank of each of ``codes`` (distinct; default: every name) among themselves in byte order of their names
    (Python's string order; ``strcmp``'s, as in trec_eval). ``names`` None: the codes themselves are in byte order."""
    import numpy as np
    import pyarrow.compute as pc

    if names is None:
        ranks = np.empty(len(codes), np.int64)
        ranks[np.argsort(codes, kind="stable")] = np.arange(len(codes))
        return ranks
    if codes is None:
        codes = np.arange(len(names))
    order = to_numpy(pc.sort_indices(take(names, codes)))
    ranks = np.empty(len(codes), np.int64)
    ranks[order] = np.arange(len(codes))
    return ranks
