"""trec_eval's order of a run, computed on arrays: by query, score descending in single precision, ties by doc id
descending (byte order), the file's rank column ignored (trec_eval 9, as exposed by pytrec_eval).

A run written in that order already (the usual TREC file, every JSONL run) is recognised in one pass and not
sorted; otherwise one integer sort orders the rows by (query, score) and only the rows that tie on both are sorted
again by doc id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa


def trec_score(score: "np.ndarray") -> "np.ndarray":
    """Scores as trec_eval compares them: rounded to float32 (its ``TEXT_RESULTS.sim`` is a C ``float``), so
    ``0.30000000000000004`` and ``0.3`` tie and the doc id decides, as in trec_eval and pytrec_eval; ``-0.0``
    and ``0.0`` tie too."""
    import numpy as np

    return np.asarray(score, dtype=np.float64).astype(np.float32) + np.float32(0.0)


def trec_order(group: "np.ndarray", score: "np.ndarray", doc: "np.ndarray",
               doc_names: "pa.Array | None") -> "np.ndarray | None":
    """The permutation putting rows in trec_eval order, or None when they are in it already.

    ``group``: the query code of each row (rows of one query end up together, queries by ascending code);
    ``score``: the scores (compared in float32, :func:`trec_score`); ``doc``: doc codes into ``doc_names``
    (None: the codes are in byte order of the ids already).
    """
    import numpy as np

    n = len(group)
    if n < 2:
        return None
    s = trec_score(score)
    same = group[1:] == group[:-1]
    if not (group[1:] < group[:-1]).any() and not ((s[1:] > s[:-1]) & same).any():
        tie = np.flatnonzero(same & (s[1:] == s[:-1]))
        if not len(tie) or (_doc_rank(doc_names, doc, tie, tie + 1) > 0).all():
            return None
    key = (group.astype(np.uint64) << np.uint64(32)) | _descending32(s)
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    tied = sorted_key[1:] == sorted_key[:-1]
    if tied.any():  # equal query and score: doc id descending
        member = np.zeros(n, bool)
        member[:-1] |= tied
        member[1:] |= tied
        rows = np.flatnonzero(member)
        run_id = np.cumsum(np.concatenate([[True], ~tied]))[rows]
        codes = doc[order[rows]]
        uniq, inverse = np.unique(codes, return_inverse=True)
        lex = _lex_ranks(doc_names, uniq)[inverse]
        sub = np.argsort(run_id.astype(np.int64) * len(uniq) + (len(uniq) - 1 - lex), kind="stable")
        order[rows] = order[rows][sub]
    return order


def _descending32(s: "np.ndarray") -> "np.ndarray":
    """uint64 keys that sort float32 scores descending (IEEE bits made monotone, then reversed)."""
    import numpy as np

    bits = s.view(np.uint32)
    monotone = np.where(bits & np.uint32(0x80000000), ~bits, bits | np.uint32(0x80000000))
    return (np.uint32(0xFFFFFFFF) - monotone).astype(np.uint64)


def _lex_ranks(names: "pa.Array | None", codes: "np.ndarray") -> "np.ndarray":
    """Rank of each of ``codes`` (distinct, ascending) among themselves in byte order of their names."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if names is None:
        return np.arange(len(codes))
    order = pc.sort_indices(names.take(pa.array(codes))).to_numpy(zero_copy_only=False)
    ranks = np.empty(len(codes), np.int64)
    ranks[order] = np.arange(len(codes))
    return ranks


def _doc_rank(names: "pa.Array | None", doc: "np.ndarray", a: "np.ndarray", b: "np.ndarray") -> "np.ndarray":
    """Sign of the byte-order comparison of the doc ids of rows ``a`` and ``b`` (-1, 0, 1)."""
    import numpy as np

    uniq, inverse = np.unique(np.concatenate([doc[a], doc[b]]), return_inverse=True)
    lex = _lex_ranks(names, uniq)[inverse]
    return np.sign(lex[: len(a)] - lex[len(a):])
